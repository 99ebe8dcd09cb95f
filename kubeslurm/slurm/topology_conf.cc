#include "kubeslurm/slurm/topology_conf.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <unordered_set>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::slurm {
namespace {

// Slurm's topology/tree resolves levels in passes and gives up after this many.
constexpr int kMaxLevelPasses = 21;
// topology/block: BlockSizes are the base size times 2^0 .. 2^15.
constexpr int kMaxBlockLevel = 15;
// Names expanded from all Nodes= and Switches= together. Slurm bounds these by its node table;
// we hold them as strings, so a file that expands past this is refused rather than exhausting
// memory.
constexpr std::size_t kMaxExpandedNames = std::size_t{1} << 22;

bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool isKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

bool isBlank(std::string_view s) { return std::all_of(s.begin(), s.end(), isSpace); }

// One logical line of the file: comments cut, continuations joined, escapes removed.
struct LogicalLine {
  std::size_t number = 0;  // of its first physical line
  std::string text;
};

// Where a '#' preceded by an even number of backslashes starts a comment.
void stripComment(std::string& line) {
  int backslashes = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && backslashes % 2 == 0) {
      line.resize(i);
      return;
    }
    backslashes = line[i] == '\\' ? backslashes + 1 : 0;
  }
}

// An odd run of backslashes at the end (before trailing white space) continues the line; the
// last backslash and what follows it go.
bool stripContinuation(std::string& line) {
  std::size_t end = line.size();
  while (end > 0 && isSpace(line[end - 1])) --end;
  std::size_t run = 0;
  while (run < end && line[end - 1 - run] == '\\') ++run;
  if (run % 2 == 0) return false;
  line.resize(end - 1);
  return true;
}

// "\x" becomes "x" ("\\" a single backslash, "\#" a '#').
std::string stripEscapes(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\') {
      if (++i == line.size()) break;
    }
    out.push_back(line[i]);
  }
  return out;
}

std::vector<LogicalLine> logicalLines(std::string_view text) {
  std::vector<LogicalLine> lines;
  std::size_t pos = 0;
  std::size_t number = 1;
  while (pos < text.size()) {
    LogicalLine line{number, {}};
    std::string joined;
    while (pos < text.size()) {
      const std::size_t newline = text.find('\n', pos);
      const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
      std::string physical(text.substr(pos, end - pos));
      pos = end;
      ++number;
      stripComment(physical);
      const bool continued = stripContinuation(physical);
      joined += physical;
      if (!continued) break;
    }
    line.text = stripEscapes(joined);
    lines.push_back(std::move(line));
  }
  return lines;
}

// One key=value of Slurm's parser: ^\s*([[:alnum:]_.]+)\s*([-*+/]?)=\s*("([^"]*)"|\S+)(\s|$).
struct KeyValue {
  std::string key;
  std::string value;
  std::size_t end = 0;  // just past the value
};

std::optional<KeyValue> nextKeyValue(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && isSpace(s[i])) ++i;
  const std::size_t keyStart = i;
  while (i < s.size() && isKeyChar(s[i])) ++i;
  if (i == keyStart) return std::nullopt;
  KeyValue kv;
  kv.key = std::string(s.substr(keyStart, i - keyStart));
  while (i < s.size() && isSpace(s[i])) ++i;
  if (i < s.size() && std::string_view("-*+/").find(s[i]) != std::string_view::npos) ++i;
  if (i >= s.size() || s[i] != '=') return std::nullopt;
  ++i;
  while (i < s.size() && isSpace(s[i])) ++i;
  if (i < s.size() && s[i] == '"') {
    const std::size_t close = s.find('"', i + 1);
    if (close != std::string_view::npos && (close + 1 == s.size() || isSpace(s[close + 1]))) {
      kv.value = std::string(s.substr(i + 1, close - i - 1));
      kv.end = close + 1;
      return kv;
    }
  }
  const std::size_t valueStart = i;
  while (i < s.size() && !isSpace(s[i])) ++i;
  if (i == valueStart) return std::nullopt;
  kv.value = std::string(s.substr(valueStart, i - valueStart));
  kv.end = i;
  return kv;
}

// Slurm's s_p_handle_uint32: strtoul base 0 (so 0x.. and 0.. too), an optional k/K for 1024,
// UNLIMITED/INFINITE for 0xffffffff.
std::optional<std::string> parseUint32(std::string_view key, const std::string& value,
                                       std::uint32_t& out) {
  std::size_t i = 0;
  while (i < value.size() && isSpace(value[i])) ++i;
  bool negative = false;
  if (i < value.size() && (value[i] == '+' || value[i] == '-')) negative = value[i++] == '-';
  unsigned base = 10;
  if (i + 1 < value.size() && value[i] == '0' && (value[i + 1] == 'x' || value[i + 1] == 'X')) {
    base = 16;
    i += 2;
  } else if (i < value.size() && value[i] == '0') {
    base = 8;
  }
  std::uint64_t number = 0;
  bool overflow = false;
  const std::size_t digitsStart = i;
  for (; i < value.size(); ++i) {
    const char c = value[i];
    unsigned digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      break;
    }
    if (digit >= base) break;
    if (number > (UINT64_MAX - digit) / base) overflow = true;
    number = number * base + digit;
  }
  const bool converted = i > digitsStart || base == 8;
  if (i < value.size() && (value[i] == 'k' || value[i] == 'K')) {
    number *= 1024;
    ++i;
  }
  const std::string name(key);
  if ((!converted && !value.empty()) || i != value.size()) {
    if (equalsIgnoreCase(value, "UNLIMITED") || equalsIgnoreCase(value, "INFINITE")) {
      out = 0xffffffffU;
      return std::nullopt;
    }
    return name + " value (" + value + ") is not a valid number";
  }
  if (overflow) return name + " value (" + value + ") is out of range";
  if (negative) return name + " value (" + value + ") is less than zero";
  if (number > 0xffffffffU) return name + " value (" + value + ") is greater than 4294967295";
  out = static_cast<std::uint32_t>(number);
  return std::nullopt;
}

// C's atoi() on one BlockSizes element.
long long atoiLike(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && isSpace(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  long long value = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && value < (1LL << 40); ++i) {
    value = value * 10 + (s[i] - '0');
  }
  return negative ? -value : value;
}

Status lineError(std::size_t line, const std::string& message) {
  return invalidArgument("topology.conf line " + std::to_string(line) + ": " + message);
}

StatusOr<TopologyLayout> layoutOf(const TopologyConf& conf, bool withAddresses,
                                  std::size_t& culprit);

enum class Family { kNone, kTree, kBlock };

struct SwitchRecord {
  std::size_t line = 0;
  std::optional<std::string> nodes;
  std::optional<std::string> switches;
};

class Parser {
 public:
  StatusOr<TopologyConf> parse(std::string_view text) {
    for (const LogicalLine& line : logicalLines(text)) {
      if (line.text.empty()) continue;
      if (Status status = parseLine(line); !status.isOk()) return status;
    }
    if (family_ == Family::kTree) {
      if (Status status = validateTree(); !status.isOk()) return status;
    } else if (family_ == Family::kBlock) {
      if (Status status = validateBlocks(); !status.isOk()) return status;
    }
    return std::move(conf_);
  }

 private:
  Status useFamily(Family family, std::string_view key, std::size_t line) {
    if (family_ == Family::kNone) {
      family_ = family;
      familyLine_ = line;
      return Status::ok();
    }
    if (family_ == family) return Status::ok();
    return lineError(line, std::string(key) + " cannot be mixed with " +
                               (family_ == Family::kTree ? "SwitchName" : "BlockName") +
                               " records (line " + std::to_string(familyLine_) +
                               "): topology/tree and topology/block are different plugins");
  }

  Status parseLine(const LogicalLine& line) {
    std::string_view rest = line.text;
    std::optional<KeyValue> kv = nextKeyValue(rest);
    if (kv) {
      rest.remove_prefix(kv->end);
      if (equalsIgnoreCase(kv->key, "SwitchName")) {
        if (Status s = useFamily(Family::kTree, kv->key, line.number); !s.isOk()) return s;
        if (Status s = parseSwitch(kv->value, rest, line.number); !s.isOk()) return s;
      } else if (equalsIgnoreCase(kv->key, "BlockName")) {
        if (Status s = useFamily(Family::kBlock, kv->key, line.number); !s.isOk()) return s;
        if (Status s = parseBlock(kv->value, rest, line.number); !s.isOk()) return s;
      } else if (equalsIgnoreCase(kv->key, "BlockSizes")) {
        if (Status s = useFamily(Family::kBlock, kv->key, line.number); !s.isOk()) return s;
        blockSizes_ = kv->value;  // a later BlockSizes= wins, as in Slurm
        blockSizesLine_ = line.number;
      } else {
        return lineError(line.number, "Parsing error at unrecognized key: " + kv->key);
      }
    }
    if (!isBlank(rest)) {
      std::string leftover(rest);
      while (!leftover.empty() && (leftover.back() == '\n' || leftover.back() == '\r')) {
        leftover.pop_back();
      }
      return lineError(line.number, "Parse error: \"" + leftover + "\"");
    }
    return Status::ok();
  }

  // The rest of a record's line: its own parameters, until one does not parse.
  template <typename Handle>
  static Status parseParameters(std::string_view& rest, std::size_t line, Handle handle) {
    while (std::optional<KeyValue> kv = nextKeyValue(rest)) {
      std::optional<std::string> error = handle(*kv);
      if (error) return lineError(line, *error);
      rest.remove_prefix(kv->end);
    }
    return Status::ok();
  }

  Status parseSwitch(const std::string& name, std::string_view& rest, std::size_t line) {
    TopologySwitch sw;
    sw.name = name;
    SwitchRecord record{line, std::nullopt, std::nullopt};
    Status status =
        parseParameters(rest, line, [&](const KeyValue& kv) -> std::optional<std::string> {
          if (equalsIgnoreCase(kv.key, "LinkSpeed"))
            return parseUint32("LinkSpeed", kv.value, sw.linkSpeed);
          if (equalsIgnoreCase(kv.key, "Nodes")) {
            record.nodes = kv.value;
          } else if (equalsIgnoreCase(kv.key, "Switches")) {
            record.switches = kv.value;
          } else {
            return "Parsing error at unrecognized key: " + kv.key;
          }
          return std::nullopt;
        });
    if (!status.isOk()) return status;
    if (record.nodes && record.switches) {
      return lineError(line, "switch " + name + " has both child switches and nodes");
    }
    if (!record.nodes && !record.switches) {
      return lineError(line, "switch " + name + " has neither child switches nor nodes");
    }
    conf_.switches.push_back(std::move(sw));
    switchRecords_.push_back(std::move(record));
    return Status::ok();
  }

  Status parseBlock(const std::string& name, std::string_view& rest, std::size_t line) {
    std::optional<std::string> nodes;
    Status status =
        parseParameters(rest, line, [&](const KeyValue& kv) -> std::optional<std::string> {
          if (!equalsIgnoreCase(kv.key, "Nodes"))
            return "Parsing error at unrecognized key: " + kv.key;
          nodes = kv.value;
          return std::nullopt;
        });
    if (!status.isOk()) return status;
    if (!nodes) return lineError(line, "block " + name + " hasn't got nodes");
    conf_.blocks.push_back(TopologyBlock{name, {}});
    blockRecords_.emplace_back(line, std::move(nodes));
    return Status::ok();
  }

  Status validateTree() {
    std::unordered_map<std::string, std::size_t> byName;
    for (std::size_t i = 0; i < conf_.switches.size(); ++i) {
      TopologySwitch& sw = conf_.switches[i];
      const SwitchRecord& record = switchRecords_[i];
      if (!byName.emplace(sw.name, i).second) {
        return lineError(record.line, "Switch (" + sw.name + ") has already been defined");
      }
      if (record.nodes) {
        StatusOr<std::vector<std::string>> nodes = expandNames(*record.nodes, record.line);
        if (nodes.status().code() == StatusCode::kResourceExhausted) return nodes.status();
        if (!nodes.isOk()) {
          return lineError(record.line, "Invalid node name (" + *record.nodes +
                                            ") in switch config (" + sw.name + ")");
        }
        sw.nodes = std::move(*nodes);
      } else {
        StatusOr<std::vector<std::string>> children = expandNames(*record.switches, record.line);
        if (children.status().code() == StatusCode::kResourceExhausted) return children.status();
        if (!children.isOk()) {
          return lineError(record.line, "Invalid switches: " + *record.switches);
        }
        sw.children = std::move(*children);
      }
    }
    std::size_t culprit = 0;
    StatusOr<TopologyLayout> layout = layoutOf(conf_, /*withAddresses=*/false, culprit);
    if (!layout.isOk()) return lineError(switchRecords_[culprit].line, layout.status().message());
    return Status::ok();
  }

  Status validateBlocks() {
    std::uint64_t base = 0;
    std::vector<std::uint32_t> sizes;
    if (blockSizes_) {
      // Each size is base * 2^k (k <= 15); the first sets the base.
      std::size_t start = 0;
      const std::string& text = *blockSizes_;
      bool any = false;
      while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view piece = std::string_view(text).substr(
            start, comma == std::string::npos ? comma : comma - start);
        if (!piece.empty()) {
          any = true;
          const long long size = atoiLike(piece);
          bool valid = size > 0 && size <= 0xffffffffLL;
          if (valid && base == 0) base = static_cast<std::uint64_t>(size);
          if (valid) {
            const auto usize = static_cast<std::uint64_t>(size);
            const std::uint64_t ratio = usize / base;
            valid = usize % base == 0 && (ratio & (ratio - 1)) == 0 &&
                    ratio <= (std::uint64_t{1} << kMaxBlockLevel);
            if (valid) sizes.push_back(static_cast<std::uint32_t>(usize));
          }
          if (!valid) {
            return lineError(blockSizesLine_, "Invalid BlockSizes value: " + std::string(piece));
          }
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (!any) return lineError(blockSizesLine_, "Invalid BlockSizes value: (null)");
      std::sort(sizes.begin(), sizes.end());
      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    }
    std::unordered_set<std::string> names;
    for (std::size_t i = 0; i < conf_.blocks.size(); ++i) {
      TopologyBlock& block = conf_.blocks[i];
      const auto& [line, nodesText] = blockRecords_[i];
      if (!names.insert(block.name).second) {
        return lineError(line, "Block (" + block.name + ") has already been defined");
      }
      StatusOr<std::vector<std::string>> nodes = expandNames(*nodesText, line);
      if (nodes.status().code() == StatusCode::kResourceExhausted) return nodes.status();
      if (!nodes.isOk()) {
        return lineError(
            line, "Invalid node name (" + *nodesText + ") in block config (" + block.name + ")");
      }
      block.nodes = std::move(*nodes);
      const std::unordered_set<std::string> distinct(block.nodes.begin(), block.nodes.end());
      if (base == 0) {
        base = distinct.size();
      } else if (distinct.size() < base) {
        return lineError(line, "Block configuration (" + block.name +
                                   ") children count lower than bblock_node_cnt");
      }
    }
    if (!conf_.blocks.empty() && base == 0) {
      return lineError(blockRecords_.front().first, "Block not contains any nodes");
    }
    conf_.blockSizes = std::move(sizes);
    return Status::ok();
  }

  // Nodes= and Switches= are hostlist expressions.
  StatusOr<std::vector<std::string>> expandNames(const std::string& expr, std::size_t line) {
    StatusOr<std::vector<std::string>> names = expandHostlist(expr);
    if (!names.isOk() && names.status().code() != StatusCode::kResourceExhausted) return names;
    expanded_ += names.isOk() ? names->size() : kMaxExpandedNames + 1;
    if (expanded_ > kMaxExpandedNames) {
      return Status(StatusCode::kResourceExhausted,
                    "topology.conf line " + std::to_string(line) + ": more than " +
                        std::to_string(kMaxExpandedNames) + " node and switch names in the file");
    }
    return names;
  }

  TopologyConf conf_;
  std::size_t expanded_ = 0;
  Family family_ = Family::kNone;
  std::size_t familyLine_ = 0;
  std::vector<SwitchRecord> switchRecords_;
  std::vector<std::pair<std::size_t, std::optional<std::string>>> blockRecords_;
  std::optional<std::string> blockSizes_;
  std::size_t blockSizesLine_ = 0;
};

}  // namespace

StatusOr<TopologyConf> parseTopologyConf(std::string_view text) { return Parser().parse(text); }

namespace {

// The layout, or an error about the switch at *culprit.
StatusOr<TopologyLayout> layoutOf(const TopologyConf& conf, bool withAddresses,
                                  std::size_t& culprit) {
  TopologyLayout layout;
  const std::size_t n = conf.switches.size();
  if (n == 0) return layout;

  std::unordered_map<std::string_view, std::size_t> byName;
  for (std::size_t i = 0; i < n; ++i) {
    if (!byName.emplace(conf.switches[i].name, i).second) {
      culprit = i;
      return invalidArgument("Switch (" + conf.switches[i].name + ") has already been defined");
    }
  }
  // Every node reached by each switch, as indexes into `nodeNames` (first-seen order).
  std::vector<std::string_view> nodeNames;
  std::unordered_map<std::string_view, std::size_t> nodeIndex;
  std::vector<std::vector<bool>> reach(n);
  std::vector<int> level(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const TopologySwitch& sw = conf.switches[i];
    if (sw.nodes.empty()) continue;
    level[i] = 0;  // a switch with nodes is a leaf
    if (!withAddresses) continue;
    for (const std::string& node : sw.nodes) {
      auto [it, added] = nodeIndex.emplace(node, nodeNames.size());
      if (added) nodeNames.push_back(node);
      if (reach[i].size() <= it->second) reach[i].resize(it->second + 1, false);
      reach[i][it->second] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (conf.switches[i].children.empty()) level[i] = 0;  // a leaf, if one without nodes
  }
  // Slurm's passes: in file order, a switch gets its level once all its children have one
  // (children taken last to first); more than 21 passes means it is not a tree.
  for (int pass = 1;; ++pass) {
    bool resolved = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (level[i] != -1) continue;
      const std::vector<std::string>& children = conf.switches[i].children;
      int candidate = -1;
      std::vector<bool> merged;
      for (std::size_t c = children.size(); c-- > 0;) {  // last to first, as hostlist_pop()
        const std::string& child = children[c];
        auto it = byName.find(child);
        if (it == byName.end() || it->second == i) {
          culprit = i;
          return invalidArgument("Switch configuration " + conf.switches[i].name +
                                 " has invalid child (" + child + ")");
        }
        const std::size_t j = it->second;
        if (level[j] == -1) {
          resolved = false;
          candidate = -1;
          break;
        }
        candidate = std::max(candidate, level[j] + 1);
        if (!withAddresses) continue;
        if (merged.size() < reach[j].size()) merged.resize(reach[j].size(), false);
        for (std::size_t k = 0; k < reach[j].size(); ++k) {
          if (reach[j][k]) merged[k] = true;
        }
      }
      if (candidate != -1) {
        level[i] = candidate;
        reach[i] = std::move(merged);
      }
    }
    if (resolved) break;
    if (pass >= kMaxLevelPasses) {
      culprit = static_cast<std::size_t>(std::find(level.begin(), level.end(), -1) - level.begin());
      return invalidArgument("Switch configuration is not a tree");
    }
  }

  layout.switchLevels.reserve(n);
  for (int l : level) {
    layout.switchLevels.push_back(static_cast<std::uint32_t>(l));
    layout.maxLevel = std::max(layout.maxLevel, static_cast<std::uint32_t>(l));
  }
  layout.pattern.clear();
  for (std::uint32_t l = 0; l <= layout.maxLevel; ++l) layout.pattern += "switch.";
  layout.pattern += "node";

  // Per node: from the top level down, the switches of that level reaching it.
  for (std::size_t k = 0; k < nodeNames.size(); ++k) {
    std::string address;
    for (std::int64_t l = layout.maxLevel; l >= 0; --l) {
      std::optional<Hostlist> names;
      for (std::size_t i = 0; i < n; ++i) {
        if (level[i] != l || k >= reach[i].size() || !reach[i][k]) continue;
        if (!names) {
          // Slurm starts the list by parsing the first name as an expression.
          StatusOr<Hostlist> parsed = Hostlist::parse(conf.switches[i].name);
          if (parsed.isOk()) names = std::move(*parsed);
        } else {
          names->pushHost(conf.switches[i].name);
        }
      }
      if (names) address += names->ranged();
      address += '.';
    }
    address += nodeNames[k];
    layout.addresses.emplace(std::string(nodeNames[k]), std::move(address));
  }
  return layout;
}

}  // namespace

StatusOr<TopologyLayout> computeTopologyLayout(const TopologyConf& conf) {
  std::size_t culprit = 0;
  return layoutOf(conf, /*withAddresses=*/true, culprit);
}

std::string topologyAddress(const TopologyLayout& layout, std::string_view node) {
  if (auto it = layout.addresses.find(std::string(node)); it != layout.addresses.end()) {
    return it->second;
  }
  if (layout.switchLevels.empty()) return std::string(node);
  return std::string(layout.maxLevel + 1, '.') + std::string(node);
}

}  // namespace kubeslurm::slurm
