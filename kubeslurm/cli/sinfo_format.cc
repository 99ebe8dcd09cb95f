#include "kubeslurm/cli/sinfo_format.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::cli {
namespace {

constexpr std::string_view kGpuResource = "nvidia.com/gpu";
constexpr std::string_view kFeaturesLabel = "kubeslurm.io/features";
constexpr int kMinPartitionWidth = 9;  // print.c MIN_PART_FIELD_SIZE
constexpr int kMinNodeListWidth = 9;   // print.c MIN_NODE_FIELD_SIZE
constexpr std::int64_t kMebibyte = std::int64_t{1024} * 1024;

std::int64_t quantity(const api::ResourceList& list, std::string_view name, bool milli) {
  const auto it = list.find(std::string(name));
  if (it == list.end()) return 0;
  auto value = milli ? api::parseQuantityMilli(it->second) : api::parseQuantityValue(it->second);
  return value.isOk() ? std::max<std::int64_t>(*value, 0) : 0;
}

std::string annotation(const api::Node& node, std::string_view key) {
  const auto it = node.metadata.annotations.find(std::string(key));
  return it == node.metadata.annotations.end() ? std::string() : it->second;
}

// ---- printing, as print.c's _print_str (cut_output is always set for values) ----

void printStr(std::string& out, std::string_view text, int width, bool right) {
  if (width == 0) {
    out += text;
    return;
  }
  const auto w = static_cast<std::size_t>(width);
  std::string piece;
  if (right) {
    piece = std::string(text.size() < w ? w - text.size() : 0, ' ') + std::string(text);
    piece.resize(w);
  } else {
    piece = std::string(text.substr(0, w));
    piece.append(w - piece.size(), ' ');
  }
  out += piece;
}

std::string secsText(std::int64_t time) {
  const std::int64_t days = time / 86400;
  const std::int64_t hours = (time / 3600) % 24;
  const std::int64_t minutes = (time / 60) % 60;
  const std::int64_t seconds = time % 60;
  auto two = [](std::int64_t value) { return (value < 10 ? "0" : "") + std::to_string(value); };
  if (days != 0) {
    return std::to_string(days) + "-" + two(hours) + ":" + two(minutes) + ":" + two(seconds);
  }
  if (hours != 0) return std::to_string(hours) + ":" + two(minutes) + ":" + two(seconds);
  return std::to_string(minutes) + ":" + two(seconds);
}

// One (partition, node) pair: what per-node fields print from.
struct Cell {
  const api::Partition* partition = nullptr;  // nullptr: a node in no partition
  std::size_t partitionRank = 0;
  const NodeFacts* node = nullptr;
};

// A printed row: cells whose per-node fields all print the same.
struct Row {
  std::vector<const Cell*> cells;
  std::set<std::string> nodeNames;  // a node in two matching cells counts once
  std::vector<std::string> nodeOrder;
};

struct Field {
  std::string_view header;
  // nullptr for the aggregate fields (node list, counts), printed from the whole row.
  std::function<std::string(const Cell&, const SinfoContext&)> value;
  std::function<std::string(const Row&)> aggregate;
  bool isPartition = false;
  bool isNodeList = false;
};

std::string partitionAvail(const Cell& c) {
  if (c.partition == nullptr) return "n/a";
  std::string state = lowercaseAscii(c.partition->spec.state);
  if (state.empty() || state == "up") return "up";
  if (state == "inactive") return "inactive";
  if (state == "down" || state == "drain") return state;
  return "unknown";
}

std::string timeLimitText(const Cell& c) {
  if (c.partition == nullptr) return "n/a";
  const auto minutes = slurm::timeLimitMinutes(api::partitionMaxTime(c.partition->spec));
  return minutes ? secsText(*minutes * 60) : "infinite";
}

std::string jobSizeText(const Cell& c) {
  if (c.partition == nullptr) return "n/a";
  const std::int32_t minNodes = std::max(c.partition->spec.minNodesPerJob.value_or(1), 1);
  if (!c.partition->spec.maxNodesPerJob) return std::to_string(minNodes) + "-infinite";
  const std::int32_t maxNodes = *c.partition->spec.maxNodesPerJob;
  if (maxNodes == minNodes) return std::to_string(maxNodes);
  return std::to_string(minNodes) + "-" + std::to_string(maxNodes);
}

std::string reasonTimeText(const NodeFacts& n, const SinfoContext& context) {
  return n.reasonTime ? slurm::formatTimestamp(*n.reasonTime, context.utcOffsetSeconds) : "Unknown";
}

std::string gresText(const NodeFacts& n) {
  return n.gpus > 0 ? "gpu:" + std::to_string(n.gpus) : "(null)";
}

std::map<char, Field> makeFields() {
  std::map<char, Field> f;
  auto cell = [](std::string_view header, auto fn) {
    Field field;
    field.header = header;
    field.value = fn;
    return field;
  };
  auto node = [&cell](std::string_view header,
                      const std::function<std::string(const NodeFacts&)>& fn) {
    return cell(header, [fn](const Cell& c, const SinfoContext&) { return fn(*c.node); });
  };
  f['P'] = cell("PARTITION", [](const Cell& c, const SinfoContext&) {
    if (c.partition == nullptr) return std::string("n/a");
    return c.partition->metadata.name;  // the '*' is added where the width is known
  });
  f['P'].isPartition = true;
  f['R'] = cell("PARTITION", [](const Cell& c, const SinfoContext&) {
    return c.partition == nullptr ? std::string("n/a") : c.partition->metadata.name;
  });
  f['a'] = cell("AVAIL", [](const Cell& c, const SinfoContext&) { return partitionAvail(c); });
  f['l'] = cell("TIMELIMIT", [](const Cell& c, const SinfoContext&) { return timeLimitText(c); });
  f['s'] = cell("JOB_SIZE", [](const Cell& c, const SinfoContext&) { return jobSizeText(c); });
  f['r'] = cell("ROOT", [](const Cell& c, const SinfoContext&) {
    return std::string(c.partition == nullptr ? "n/a" : "no");
  });
  f['h'] = cell("OVERSUBSCRIBE", [](const Cell& c, const SinfoContext&) {
    return std::string(c.partition == nullptr ? "n/a" : "NO");
  });
  f['g'] = cell("GROUPS", [](const Cell& c, const SinfoContext&) {
    return std::string(c.partition == nullptr ? "n/a" : "all");
  });
  f['t'] = node("STATE", [](const NodeFacts& n) { return nodeStateCompact(n); });
  f['T'] = node("STATE", [](const NodeFacts& n) { return nodeStateLong(n); });
  f['c'] = node("CPUS", [](const NodeFacts& n) { return std::to_string(n.cpus); });
  f['m'] = node("MEMORY", [](const NodeFacts& n) { return std::to_string(n.memoryMb); });
  f['G'] = node("GRES", [](const NodeFacts& n) { return gresText(n); });
  f['f'] = node("AVAIL_FEATURES", [](const NodeFacts& n) {
    return n.features.empty() ? std::string("(null)") : n.features;
  });
  f['b'] = node("ACTIVE_FEATURES", [](const NodeFacts& n) {
    return n.features.empty() ? std::string("(null)") : n.features;
  });
  f['E'] = node("REASON", [](const NodeFacts& n) {
    return n.reason.empty() ? std::string("none") : n.reason;
  });
  f['u'] = node("USER", [](const NodeFacts& n) {
    return n.reasonUser.empty() ? std::string("Unknown") : n.reasonUser;
  });
  f['U'] = f['u'];
  f['H'] = cell("TIMESTAMP", [](const Cell& c, const SinfoContext& context) {
    return reasonTimeText(*c.node, context);
  });
  f['z'] = node("S:C:T", [](const NodeFacts& n) { return std::to_string(n.cpus) + ":1:1"; });
  f['d'] = node("TMP_DISK", [](const NodeFacts&) { return std::string("0"); });
  f['w'] = node("WEIGHT", [](const NodeFacts&) { return std::string("1"); });
  f['C'] = node("CPUS(A/I/O/T)", [](const NodeFacts& n) {
    const bool other = n.base == NodeBaseState::kDown || n.drain;
    const std::int64_t alloc = other ? 0 : n.allocCpus;
    const std::int64_t idle = other ? 0 : n.cpus - n.allocCpus;
    return std::to_string(alloc) + "/" + std::to_string(std::max<std::int64_t>(idle, 0)) + "/" +
           std::to_string(other ? n.cpus : 0) + "/" + std::to_string(n.cpus);
  });
  Field nodes;
  nodes.header = "NODES";
  nodes.aggregate = [](const Row& r) { return std::to_string(r.nodeNames.size()); };
  f['D'] = nodes;
  Field aiot;
  aiot.header = "NODES(A/I/O/T)";
  aiot.aggregate = [](const Row& r) {
    std::int64_t a = 0;
    std::int64_t i = 0;
    std::int64_t o = 0;
    std::set<std::string> seen;
    for (const Cell* c : r.cells) {
      if (!seen.insert(c->node->name).second) continue;
      const NodeFacts& n = *c->node;
      if (n.base == NodeBaseState::kDown || (n.drain && n.base == NodeBaseState::kIdle)) {
        ++o;
      } else if (n.base == NodeBaseState::kIdle) {
        ++i;
      } else {
        ++a;
      }
    }
    return std::to_string(a) + "/" + std::to_string(i) + "/" + std::to_string(o) + "/" +
           std::to_string(a + i + o);
  };
  f['F'] = aiot;
  f['A'] = aiot;
  f['A'].header = "NODES(A/I)";
  f['A'].aggregate = [aiot](const Row& r) {
    const std::string full = aiot.aggregate(r);
    return full.substr(0, full.find('/', full.find('/') + 1));
  };
  Field list;
  list.header = "NODELIST";
  list.isNodeList = true;
  list.aggregate = [](const Row& r) { return slurm::compressHostlist(r.nodeOrder); };
  f['N'] = list;
  return f;
}

const std::map<char, Field>& fields() {
  static const std::map<char, Field> kFields = makeFields();
  return kFields;
}

// The long (opts.c default) format names we use for the defaults.
const std::map<std::string, char, std::less<>>& longNames() {
  static const std::map<std::string, char, std::less<>> kNames = {
      {"available", 'a'},     {"cpus", 'c'},
      {"cpusstate", 'C'},     {"features", 'f'},
      {"gres", 'G'},          {"groups", 'g'},
      {"memory", 'm'},        {"nodeaiot", 'F'},
      {"nodelist", 'N'},      {"nodes", 'D'},
      {"oversubscribe", 'h'}, {"partition", 'P'},
      {"reason", 'E'},        {"root", 'r'},
      {"size", 's'},          {"statecompact", 't'},
      {"statelong", 'T'},     {"time", 'l'},
      {"timestamp", 'H'},     {"user", 'u'},
      {"userlong", 'U'},      {"socketcorethread", 'z'},
      {"disk", 'd'},          {"weight", 'w'},
  };
  return kNames;
}

struct FormatItem {
  const Field* field = nullptr;
  char letter = '\0';
  int width = 0;
  bool right = false;
  std::string suffix;
};

// -o: opts.c _parse_format. Text before the first '%' is a prefix; each "%[.][width]letter"
// may be followed by literal text. Unknown letters are an error.
std::optional<std::vector<FormatItem>> parseShortFormat(const std::string& format,
                                                        std::string& err) {
  std::vector<FormatItem> items;
  const std::size_t percent = format.find('%');
  if (percent != 0) items.push_back(FormatItem{nullptr, '\0', 0, false, format.substr(0, percent)});
  std::size_t pos = percent;
  while (pos != std::string::npos && pos < format.size()) {
    while (pos < format.size() && format[pos] == '%') ++pos;
    if (pos >= format.size()) break;
    const std::size_t end = std::min(format.find('%', pos), format.size());
    const std::string token = format.substr(pos, end - pos);
    pos = end;
    FormatItem item;
    std::size_t i = 0;
    if (token[i] == '.') {
      item.right = true;
      ++i;
    }
    item.width = consumeFieldWidth(token, i);
    if (i >= token.size()) break;
    item.letter = token[i];
    item.suffix = token.substr(i + 1);
    const auto it = fields().find(item.letter);
    if (it == fields().end()) {
      err += std::string("sinfo: error: Invalid node format specification: ") + item.letter + "\n";
      return std::nullopt;
    }
    item.field = &it->second;
    items.push_back(std::move(item));
  }
  return items;
}

// The defaults of opts.c in its long form: "name:[.]width suffix" separated by ','.
std::vector<FormatItem> parseLongFormat(std::string_view format) {
  std::vector<FormatItem> items;
  while (!format.empty()) {
    const std::size_t comma = format.find(',');
    std::string_view token = format.substr(0, comma);
    format = comma == std::string_view::npos ? std::string_view() : format.substr(comma + 1);
    const std::size_t colon = token.find(':');
    FormatItem item;
    item.letter = longNames().find(token.substr(0, colon))->second;
    item.field = &fields().at(item.letter);
    std::size_t i = colon + 1;
    if (i < token.size() && token[i] == '.') {
      item.right = true;
      ++i;
    }
    item.width = consumeFieldWidth(token, i);
    item.suffix = std::string(token.substr(i));
    items.push_back(std::move(item));
  }
  return items;
}

std::string_view defaultFormat(const SinfoOptions& o) {
  if (o.summarize) return "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0";
  if (o.nodeOriented) {
    return o.longOutput ? "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,memory:.6 "
                          ",features:.8 ,reason:20"
                        : "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6";
  }
  if (o.listReasons) {
    return o.longOutput ? "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0"
                        : "reason:20 ,user:9 ,timestamp:19 ,nodelist:0";
  }
  // 22.05 has no RESERVATION column in -l (newer releases add it).
  return o.longOutput
             ? "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 "
               ",oversubscribe:.8 ,groups:.10 ,nodes:.6 ,statelong:.11 ,nodelist:0"
             : "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0";
}

// node_state numbers, for sort.c's "-t" (descending) key: base state plus the DRAIN (0x200)
// and NO_RESPOND (0x800) flags.
int stateKey(const NodeFacts& n) {
  int base = 2;
  switch (n.base) {
    case NodeBaseState::kDown:
      base = 1;
      break;
    case NodeBaseState::kIdle:
      base = 2;
      break;
    case NodeBaseState::kAllocated:
      base = 3;
      break;
    case NodeBaseState::kMixed:
      base = 5;
      break;
  }
  return base + (n.drain ? 0x200 : 0) + (n.notResponding ? 0x800 : 0);
}

bool stateSelected(const NodeFacts& n, const SinfoOptions& o) {
  if (o.responding && n.notResponding) return false;
  if (o.dead && !n.notResponding) return false;
  if (o.states.empty()) {
    // -R lists down, fail and drain nodes only (opts.c).
    return !o.listReasons || n.base == NodeBaseState::kDown || n.drain;
  }
  const std::string compact = nodeStateCompact(n);
  const std::string bare = compact.substr(0, compact.find('*'));
  const std::string longName = nodeStateLong(n);
  return std::ranges::any_of(o.states, [&](const std::string& s) {
    if (s == "all" || s == bare || s == longName.substr(0, longName.find('*'))) return true;
    if ((s == "drain" || s == "drained" || s == "draining") && n.drain) return true;
    if ((s == "alloc" || s == "allocated") && n.base == NodeBaseState::kAllocated && !n.drain) {
      return true;
    }
    if ((s == "mix" || s == "mixed") && n.base == NodeBaseState::kMixed && !n.drain) return true;
    if (s == "down" && n.base == NodeBaseState::kDown) return true;
    return (s == "no_respond" || s == "not_responding") && n.notResponding;
  });
}

std::string ctimeLine(slurm::EpochSeconds now, std::int32_t offset) {
  const auto t = static_cast<std::time_t>(now + offset);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 64> buffer{};
  const std::size_t length =
      std::strftime(buffer.data(), buffer.size(), "%a %b %e %H:%M:%S %Y", &tm);
  return std::string(buffer.data(), length) + "\n";
}

}  // namespace

NodeFacts nodeFacts(const api::Node& node, const std::vector<api::Pod>& boundPods) {
  NodeFacts n;
  n.name = node.metadata.name;
  n.cpus = quantity(node.allocatable, "cpu", false);
  n.gpus = quantity(node.allocatable, kGpuResource, false);
  n.memoryMb = quantity(node.allocatable, "memory", false) / kMebibyte;
  std::int64_t cpuMillis = 0;
  std::int64_t memoryBytes = 0;
  bool anyPod = false;
  for (const api::Pod& pod : boundPods) {
    if (pod.spec.nodeName != node.metadata.name || api::podIsTerminal(pod)) continue;
    anyPod = true;
    auto gpus = api::podRequest(pod, kGpuResource);
    if (gpus.isOk()) n.allocGpus += std::max<std::int64_t>(*gpus, 0);
    auto cpu = api::podRequestMilli(pod, "cpu");
    if (cpu.isOk()) cpuMillis += std::max<std::int64_t>(*cpu, 0);
    auto memory = api::podRequest(pod, "memory");
    if (memory.isOk()) memoryBytes += std::max<std::int64_t>(*memory, 0);
  }
  n.allocCpus = std::min(n.cpus, (cpuMillis + 999) / 1000);
  n.allocGpus = std::min(n.gpus, n.allocGpus);
  n.allocMemoryMb = std::min(n.memoryMb, memoryBytes / kMebibyte);
  if (n.gpus > 0) {
    n.base = n.allocGpus >= n.gpus       ? NodeBaseState::kAllocated
             : n.allocGpus > 0 || anyPod ? NodeBaseState::kMixed
                                         : NodeBaseState::kIdle;
  } else {
    n.base = n.cpus > 0 && n.allocCpus >= n.cpus ? NodeBaseState::kAllocated
             : anyPod                            ? NodeBaseState::kMixed
                                                 : NodeBaseState::kIdle;
  }
  n.drain = node.unschedulable;
  if (api::nodeReadyStatus(node) != "True") {
    n.base = NodeBaseState::kDown;
    n.notResponding = true;
  }
  if (auto it = node.metadata.labels.find(std::string(kFeaturesLabel));
      it != node.metadata.labels.end()) {
    n.features = it->second;
  }
  n.bootTime = node.metadata.creationTimestamp;
  n.reason = annotation(node, kNodeReasonAnnotation);
  n.reasonUser = annotation(node, kNodeReasonUserAnnotation);
  if (const std::string when = annotation(node, kNodeReasonTimeAnnotation); !when.empty()) {
    auto parsed = api::parseTimestamp(when);
    if (parsed.isOk()) n.reasonTime = *parsed;
  }
  if (n.base == NodeBaseState::kDown) {
    if (n.reason.empty()) n.reason = "Not responding";
    for (const api::Condition& c : node.conditions) {
      if (c.type == "Ready" && c.lastTransitionTime) n.reasonTime = c.lastTransitionTime;
    }
  } else if (n.drain && n.reason.empty()) {
    n.reason = "Cordoned";
  }
  if (!n.reason.empty() && n.reasonUser.empty()) n.reasonUser = "root";
  if (n.reason.empty()) n.reasonTime.reset();
  return n;
}

std::string nodeStateCompact(const NodeFacts& n) {
  std::string s;
  if (n.base == NodeBaseState::kDown) {
    s = n.drain ? "drain" : "down";
  } else if (n.drain) {
    s = n.base == NodeBaseState::kIdle ? "drain" : "drng";
  } else {
    s = n.base == NodeBaseState::kIdle ? "idle" : n.base == NodeBaseState::kMixed ? "mix" : "alloc";
  }
  return n.notResponding ? s + "*" : s;
}

std::string nodeStateLong(const NodeFacts& n) {
  std::string s;
  if (n.base == NodeBaseState::kDown) {
    s = n.drain ? "drained" : "down";
  } else if (n.drain) {
    s = n.base == NodeBaseState::kIdle ? "drained" : "draining";
  } else {
    s = n.base == NodeBaseState::kIdle    ? "idle"
        : n.base == NodeBaseState::kMixed ? "mixed"
                                          : "allocated";
  }
  return n.notResponding ? s + "*" : s;
}

std::string nodeStateScontrol(const NodeFacts& n) {
  std::string s = n.base == NodeBaseState::kDown    ? "DOWN"
                  : n.base == NodeBaseState::kIdle  ? "IDLE"
                  : n.base == NodeBaseState::kMixed ? "MIXED"
                                                    : "ALLOCATED";
  if (n.drain) s += "+DRAIN";
  if (n.notResponding) s += "+NOT_RESPONDING";
  return s;
}

std::vector<std::string> partitionNodeNames(const api::PartitionSpec& spec,
                                            const std::vector<api::Node>& nodes) {
  std::optional<std::set<std::string>> listed;
  if (!spec.nodes.empty()) {
    auto hosts = slurm::expandHostlist(spec.nodes);
    // A Nodes= that does not parse gives no nodes, as the operator's snapshot decides.
    listed.emplace();
    if (hosts.isOk()) listed->insert(hosts->begin(), hosts->end());
  }
  std::vector<std::string> out;
  for (const api::Node& node : nodes) {
    if (listed && listed->count(node.metadata.name) == 0) continue;
    if (spec.nodeSelector && !api::labelSelectorMatches(*spec.nodeSelector, node.metadata.labels))
      continue;
    if (!listed && !spec.nodeSelector) continue;
    out.push_back(node.metadata.name);
  }
  return out;
}

std::vector<const api::Partition*> orderedPartitions(const std::vector<api::Partition>& all) {
  std::vector<const api::Partition*> out;
  out.reserve(all.size());
  for (const api::Partition& p : all) out.push_back(&p);
  std::ranges::sort(out, [](const api::Partition* a, const api::Partition* b) {
    if (a->spec.isDefault != b->spec.isDefault) return a->spec.isDefault;
    return a->metadata.name < b->metadata.name;
  });
  return out;
}

SinfoParse parseSinfoArgs(const std::vector<std::string>& args) {
  static constexpr std::array<LongOptionSpec, 14> kLong = {{
      {"dead", 0, 'd'},
      {"exact", 0, 'e'},
      {"noheader", 0, 'h'},
      {"long", 0, 'l'},
      {"Node", 0, 'N'},
      {"nodes", 1, 'n'},
      {"format", 1, 'o'},
      {"partition", 1, 'p'},
      {"responding", 0, 'r'},
      {"list-reasons", 0, 'R'},
      {"summarize", 0, 's'},
      {"states", 1, 't'},
      {"help", 0, '\x01'},
      {"usage", 0, '\x02'},
  }};
  SinfoParse parse;
  const GetoptResult result = getoptLong("sinfo", args, "dehlNn:o:p:rRst:V", kLong);
  auto fail = [&parse](std::string err) {
    parse.exit = CommandOutput{"", std::move(err), 1};
    return parse;
  };
  if (result.error) return fail(*result.error + "\nTry \"sinfo --help\" for more information\n");
  SinfoOptions& o = parse.options;
  for (const ParsedOption& option : result.options) {
    const std::string value = option.value.value_or("");
    switch (option.key) {
      case 'd':
        o.dead = true;
        break;
      case 'e':
        o.exact = true;
        break;
      case 'h':
        o.noHeader = true;
        break;
      case 'l':
        o.longOutput = true;
        break;
      case 'N':
        o.nodeOriented = true;
        break;
      case 'n': {
        auto hosts = slurm::expandHostlist(value);
        if (!hosts.isOk())
          return fail("sinfo: error: Invalid node name specification: " + value + "\n");
        o.nodes.insert(o.nodes.end(), hosts->begin(), hosts->end());
        break;
      }
      case 'o':
        o.format = value;
        break;
      case 'p':
        for (std::string& p : splitCommaList(value)) o.partitions.push_back(std::move(p));
        break;
      case 'r':
        o.responding = true;
        break;
      case 'R':
        o.listReasons = true;
        break;
      case 's':
        o.summarize = true;
        break;
      case 't':
        for (const std::string& s : splitCommaList(value)) o.states.push_back(lowercaseAscii(s));
        break;
      case 'V':
        parse.exit = CommandOutput{"slurm-wlm 22.05.8\n", "", 0};
        return parse;
      default:
        // --help/--usage: our own short text, as Slurm's usage prose is GPL.
        parse.exit = CommandOutput{
            "Usage: sinfo [-dehlNrRsV] [-n NODES] [-o FORMAT] [-p PARTITION] [-t STATES]\n", "", 0};
        return parse;
    }
  }
  if (!result.operands.empty()) {
    return fail("sinfo: error: Unrecognized option: " + result.operands.front() +
                "\nTry \"sinfo --help\" for more information\n");
  }
  static const std::set<std::string> kStates = {
      "all",     "alloc",      "allocated",      "down",   "drain",
      "drained", "draining",   "drng",           "idle",   "mix",
      "mixed",   "no_respond", "not_responding", "resv",   "fail",
      "maint",   "comp",       "completing",     "future", "unk",
      "unknown", "planned"};
  for (const std::string& s : o.states) {
    if (!kStates.contains(s)) {
      return fail("sinfo: error: Bad state string: \"" + s + "\"\n");
    }
  }
  return parse;
}

CommandOutput formatSinfo(const std::vector<api::Partition>& partitions,
                          const std::vector<api::Node>& nodes, const std::vector<NodeFacts>& facts,
                          const SinfoOptions& options, const SinfoContext& context) {
  CommandOutput output;
  std::vector<FormatItem> items;
  if (options.format) {
    auto parsed = parseShortFormat(*options.format, output.err);
    if (!parsed) {
      output.exitCode = 1;
      return output;
    }
    items = std::move(*parsed);
  } else {
    items = parseLongFormat(defaultFormat(options));
  }
  const bool hasPartitionField = std::ranges::any_of(
      items, [](const FormatItem& i) { return i.letter == 'P' || i.letter == 'R'; });

  // The cells: every (partition, node) pair that passes the filters; a partition without
  // nodes still has its row (NODES 0, STATE n/a), unless nodes or states are filtered.
  std::vector<Cell> cells;
  std::vector<const api::Partition*> emptyPartitions;
  std::size_t rank = 0;
  for (const api::Partition* p : orderedPartitions(partitions)) {
    ++rank;
    if (!options.partitions.empty() &&
        std::ranges::find(options.partitions, p->metadata.name) == options.partitions.end()) {
      continue;
    }
    const std::vector<std::string> names = partitionNodeNames(p->spec, nodes);
    bool any = false;
    for (const std::string& name : names) {
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].metadata.name != name) continue;
        if (!options.nodes.empty() &&
            std::ranges::find(options.nodes, name) == options.nodes.end()) {
          continue;
        }
        if (!stateSelected(facts[i], options)) continue;
        cells.push_back(Cell{p, rank, &facts[i]});
        any = true;
      }
    }
    if (!any && names.empty() && options.nodes.empty() && options.states.empty() &&
        !options.listReasons && !options.dead) {
      emptyPartitions.push_back(p);
    }
  }

  // Rows: cells that print the same per-node fields (and, with -N, the same node).
  std::vector<Row> rows;
  std::vector<std::string> keys;
  std::vector<std::pair<std::size_t, int>> sortKeys;  // partition rank, state key
  for (const Cell& c : cells) {
    std::string key;
    if (options.nodeOriented) key = c.node->name + '\x1f';
    if (hasPartitionField) key += c.partition->metadata.name + '\x1f';
    for (const FormatItem& item : items) {
      if (item.field != nullptr && item.field->value) {
        key += item.field->value(c, context) + '\x1f';
      }
    }
    auto it = std::ranges::find(keys, key);
    std::size_t index = static_cast<std::size_t>(it - keys.begin());
    if (it == keys.end()) {
      keys.push_back(key);
      rows.emplace_back();
      sortKeys.emplace_back(c.partitionRank, stateKey(*c.node));
    }
    Row& row = rows[index];
    row.cells.push_back(&c);
    if (row.nodeNames.insert(c.node->name).second) row.nodeOrder.push_back(c.node->name);
  }
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (options.nodeOriented) {
    std::ranges::stable_sort(order, [&](std::size_t a, std::size_t b) {
      return slurm::naturalCompare(rows[a].nodeOrder.front(), rows[b].nodeOrder.front()) < 0;
    });
  } else {
    // "#P,-t": partition order, then state descending.
    std::ranges::stable_sort(order, [&](std::size_t a, std::size_t b) {
      if (sortKeys[a].first != sortKeys[b].first) return sortKeys[a].first < sortKeys[b].first;
      return sortKeys[a].second > sortKeys[b].second;
    });
  }

  // print.c computes the partition and node list widths of the default formats from the data.
  int partitionWidth = kMinPartitionWidth;
  int nodeListWidth = kMinNodeListWidth;
  for (const Row& row : rows) {
    const api::Partition* p = row.cells.front()->partition;
    partitionWidth = std::max(
        partitionWidth, static_cast<int>(p->metadata.name.size()) + (p->spec.isDefault ? 1 : 0));
    nodeListWidth =
        std::max(nodeListWidth, static_cast<int>(slurm::compressHostlist(row.nodeOrder).size()));
  }
  for (const api::Partition* p : emptyPartitions) {
    partitionWidth = std::max(
        partitionWidth, static_cast<int>(p->metadata.name.size()) + (p->spec.isDefault ? 1 : 0));
  }
  const bool computedPartition = !options.format;
  const bool computedNodeList = !options.format && options.nodeOriented;

  auto widthOf = [&](const FormatItem& item) {
    if (item.letter == 'P' && computedPartition) return partitionWidth;
    if (item.letter == 'N' && computedNodeList) return nodeListWidth;
    return item.width;
  };
  auto printPartition = [&](std::string& out, const api::Partition* p, int width, bool right) {
    std::string name = p->metadata.name;
    if (p->spec.isDefault) {
      if (static_cast<int>(name.size()) < width || width == 0) {
        name += "*";
      } else {
        name[static_cast<std::size_t>(width) - 1] = '*';
      }
    }
    printStr(out, name, width, right);
  };

  if (options.longOutput && !options.noHeader) {
    output.out += ctimeLine(context.now, context.utcOffsetSeconds);
  }
  if (!options.noHeader) {
    for (const FormatItem& item : items) {
      if (item.field != nullptr)
        printStr(output.out, item.field->header, widthOf(item), item.right);
      output.out += item.suffix;
    }
    output.out += "\n";
  }
  auto printRow = [&](const Row* row, const api::Partition* empty) {
    for (const FormatItem& item : items) {
      if (item.field != nullptr) {
        const int width = widthOf(item);
        const Cell* cell = row != nullptr ? row->cells.front() : nullptr;
        const api::Partition* p = cell != nullptr ? cell->partition : empty;
        if (item.letter == 'P') {
          printPartition(output.out, p, width, item.right);
        } else if (item.field->aggregate) {
          printStr(output.out,
                   row != nullptr ? item.field->aggregate(*row) : item.field->aggregate(Row{}),
                   width, item.right);
        } else if (cell != nullptr) {
          printStr(output.out, item.field->value(*cell, context), width, item.right);
        } else {
          // A partition without nodes: its own fields print, per-node ones "n/a".
          const Cell partitionOnly{p, 0, nullptr};
          const bool partitionField =
              std::string_view("Ralshrg").find(item.letter) != std::string_view::npos;
          printStr(output.out, partitionField ? item.field->value(partitionOnly, context) : "n/a",
                   width, item.right);
        }
      }
      output.out += item.suffix;
    }
    output.out += "\n";
  };
  // Empty partitions take their place in partition order.
  std::size_t e = 0;
  auto emptyRank = [&](const api::Partition* p) {
    std::size_t r = 0;
    for (const api::Partition* q : orderedPartitions(partitions)) {
      ++r;
      if (q == p) return r;
    }
    return r;
  };
  for (std::size_t index : order) {
    while (!options.nodeOriented && e < emptyPartitions.size() &&
           emptyRank(emptyPartitions[e]) < sortKeys[index].first) {
      printRow(nullptr, emptyPartitions[e++]);
    }
    printRow(&rows[index], nullptr);
  }
  if (!options.nodeOriented) {
    while (e < emptyPartitions.size()) printRow(nullptr, emptyPartitions[e++]);
  }
  return output;
}

}  // namespace kubeslurm::cli
