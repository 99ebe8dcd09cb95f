#include "kubeslurm/planner/scenario.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <yaml-cpp/yaml.h>

#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/dependency.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/time_format.h"
#include "kubeslurm/slurm/topology_conf.h"

namespace kubeslurm::planner {
namespace {

// Bounds that keep a typo ("node[1-9999999]") from exhausting memory: far above any real
// what-if question, and checked before anything is expanded.
constexpr std::uint64_t kMaxNodes = 100000;
constexpr std::size_t kMaxJobs = 100000;
constexpr std::int64_t kMaxSeconds = std::int64_t{100} * 365 * 86400;  // 100 years
constexpr std::string_view kDefaultQos = "normal";  // the QOS every Slurm database has

#define RETURN_IF_ERROR(expr)                                     \
  do {                                                            \
    if (Status _status = (expr); !_status.isOk()) return _status; \
  } while (false)

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return out;
}

std::string quoted(std::string_view text) { return quoteForDiagnostic(text, 60); }

// An upper bound on how many hosts `expr` expands to, from its brackets alone, so that a huge
// expression is refused before it is expanded. Saturates; malformed text yields a small count
// and is left for expandHostlist to diagnose.
std::uint64_t hostlistUpperBound(std::string_view expr) {
  const auto saturatingAdd = [](std::uint64_t a, std::uint64_t b) {
    return a > kMaxNodes * 4 - b ? kMaxNodes * 4 : a + b;
  };
  const auto saturatingMul = [](std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > kMaxNodes * 4 / b ? kMaxNodes * 4 : a * b;
  };
  std::uint64_t total = 0;
  std::uint64_t term = 1;
  std::size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == ',') {
      total = saturatingAdd(total, term);
      term = 1;
      ++i;
      continue;
    }
    if (c != '[') {
      ++i;
      continue;
    }
    const std::size_t close = expr.find(']', i);
    if (close == std::string_view::npos) break;
    std::uint64_t group = 0;
    std::string_view inside = expr.substr(i + 1, close - i - 1);
    while (!inside.empty()) {
      const std::size_t comma = inside.find(',');
      const std::string_view item = inside.substr(0, comma);
      inside = comma == std::string_view::npos ? std::string_view() : inside.substr(comma + 1);
      const std::size_t dash = item.find('-');
      std::uint64_t count = 1;
      if (dash != std::string_view::npos) {
        const auto lo = kubeslurm::parseInteger<std::uint64_t>(item.substr(0, dash));
        const auto hi = kubeslurm::parseInteger<std::uint64_t>(item.substr(dash + 1));
        if (lo && hi && *hi >= *lo) count = std::min<std::uint64_t>(*hi - *lo, kMaxNodes * 4) + 1;
      }
      group = saturatingAdd(group, count);
    }
    term = saturatingMul(term, std::max<std::uint64_t>(group, 1));
    i = close + 1;
  }
  return saturatingAdd(total, term);
}

// One loader per file: knows the file's name for errors and the names seen so far.
class Loader {
 public:
  Loader(std::string_view source, core::Time defaultNow, std::int32_t utcOffset)
      : source_(source), utcOffset_(utcOffset) {
    scenario_.now = defaultNow;
  }

  StatusOr<Scenario> load(const YAML::Node& root) {
    if (root.IsNull()) return error(root, "", "the scenario is empty");
    if (!root.IsMap()) return error(root, "", "expected a mapping at the top level");
    RETURN_IF_ERROR(checkKeys(root, "",
                              {"now", "nodes", "topology", "partitions", "accounts", "qos",
                               "running", "pending", "finished", "config", "budget"}));
    RETURN_IF_ERROR(loadNow(root));
    RETURN_IF_ERROR(loadNodes(root));
    RETURN_IF_ERROR(loadTopology(root));
    RETURN_IF_ERROR(loadPartitions(root));
    RETURN_IF_ERROR(loadAccounts(root));
    RETURN_IF_ERROR(loadQos(root));
    RETURN_IF_ERROR(loadConfig(root));
    RETURN_IF_ERROR(loadBudget(root));
    RETURN_IF_ERROR(loadFinished(root));
    RETURN_IF_ERROR(loadJobs(root, "running"));
    RETURN_IF_ERROR(loadJobs(root, "pending"));
    scenario_.snapshot.usageTime = scenario_.now;
    return std::move(scenario_);
  }

 private:
  // ---- errors and shapes -------------------------------------------------------------------

  Status error(const YAML::Node& node, const std::string& path, const std::string& what) const {
    std::string where = source_;
    // A node that is not there (a missing key) has no mark; the message still names the key.
    if (node.IsDefined()) {
      const YAML::Mark mark = node.Mark();
      if (!mark.is_null()) {
        where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
      }
    }
    return invalidArgument(where + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  Status checkKeys(const YAML::Node& map, const std::string& path,
                   std::initializer_list<std::string_view> allowed) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) return error(it->first, path, "keys must be plain names");
      const std::string& key = it->first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string known;
        for (std::string_view name : allowed)
          known += (known.empty() ? "" : ", ") + std::string(name);
        return error(it->first, join(path, key), "unknown key (expected one of: " + known + ")");
      }
    }
    return Status::ok();
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string item(std::string_view list, std::size_t index) {
    return std::string(list) + "[" + std::to_string(index) + "]";
  }

  // The scalar at map[key], or nullopt when the key is absent (or null).
  StatusOr<std::optional<std::string>> scalar(const YAML::Node& map, std::string_view key,
                                              const std::string& path) const {
    const YAML::Node node = map[std::string(key)];
    if (!node.IsDefined() || node.IsNull()) return std::optional<std::string>();
    if (!node.IsScalar()) return error(node, join(path, key), "expected a single value");
    return std::optional<std::string>(node.Scalar());
  }

  Status getString(const YAML::Node& map, std::string_view key, const std::string& path,
                   std::string& out) const {
    auto value = scalar(map, key, path);
    if (!value.isOk()) return value.status();
    if (*value) out = **value;
    return Status::ok();
  }

  template <typename T>
  Status getInteger(const YAML::Node& map, std::string_view key, const std::string& path, T& out,
                    T min = std::numeric_limits<T>::min(),
                    T max = std::numeric_limits<T>::max()) const {
    auto value = scalar(map, key, path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    const auto parsed = kubeslurm::parseInteger<T>(**value);
    if (!parsed || *parsed < min || *parsed > max) {
      return error(map[std::string(key)], join(path, key),
                   "expected a whole number from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", got " + quoted(**value));
    }
    out = *parsed;
    return Status::ok();
  }

  Status getSeconds(const YAML::Node& map, std::string_view key, const std::string& path,
                    std::int64_t& out) const {
    return getInteger<std::int64_t>(map, key, path, out, 0, kMaxSeconds);
  }

  Status getBool(const YAML::Node& map, std::string_view key, const std::string& path,
                 bool& out) const {
    auto value = scalar(map, key, path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    const std::string text = lower(**value);
    if (text == "true" || text == "yes" || text == "on") {
      out = true;
    } else if (text == "false" || text == "no" || text == "off") {
      out = false;
    } else {
      return error(map[std::string(key)], join(path, key),
                   "expected true or false, got " + quoted(**value));
    }
    return Status::ok();
  }

  // A Slurm duration ("1:00:00", "7-0", "30" = 30 minutes, "UNLIMITED").
  Status getSlurmDuration(const YAML::Node& map, std::string_view key, const std::string& path,
                          std::optional<core::Duration>& out) const {
    auto value = scalar(map, key, path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    auto limit = slurm::parseTimeLimit(**value);
    if (!limit.isOk()) {
      return error(
          map[std::string(key)], join(path, key),
          "invalid time " + quoted(**value) +
              (limit.status().message().empty() ? "" : " (" + limit.status().message() + ")"));
    }
    out = limit->isUnlimited() ? core::kUnlimited : std::min(*limit->seconds, core::kUnlimited);
    return Status::ok();
  }

  // ---- limits (the Account CRD's spec.limits vocabulary) ---------------------------------

  template <typename T>
  Status getOptionalInteger(const YAML::Node& map, std::string_view key, const std::string& path,
                            std::optional<T>& out) const {
    auto value = scalar(map, key, path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    T parsed{};
    RETURN_IF_ERROR(getInteger<T>(map, key, path, parsed, 0));
    out = parsed;
    return Status::ok();
  }

  // A TRES map ({gres/gpu: 16, node: 2}), sacctmgr's GrpTRES=/MaxTRES* by TRES name. The core
  // counts node and gres/gpu; the CRD's cpu and mem are refused rather than silently ignored.
  Status getTres(const YAML::Node& map, std::string_view key, const std::string& path,
                 core::TresLimit& out) const {
    const YAML::Node node = map[std::string(key)];
    if (!node.IsDefined() || node.IsNull()) return Status::ok();
    const std::string tresPath = join(path, key);
    if (!node.IsMap()) {
      return error(node, tresPath, "expected a map of TRES name to count, such as {gres/gpu: 16}");
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) return error(it->first, tresPath, "keys must be TRES names");
      const std::string& name = it->first.Scalar();
      std::optional<std::uint64_t>* slot = nullptr;
      if (name == "gres/gpu") {
        slot = &out.gpus;
      } else if (name == "node") {
        slot = &out.nodes;
      } else if (name == "cpu" || name == "mem") {
        return error(it->first, join(tresPath, name),
                     "TRES " + quoted(name) +
                         " is not modelled by plan, which counts only gres/gpu and node");
      } else {
        return error(it->first, join(tresPath, name),
                     "unknown TRES " + quoted(name) + " (expected gres/gpu or node)");
      }
      RETURN_IF_ERROR(getOptionalInteger<std::uint64_t>(node, name, tresPath, *slot));
    }
    return Status::ok();
  }

  // maxWallDurationPerJob: Slurm's time format; UNLIMITED is no limit.
  Status getWallLimit(const YAML::Node& limits, const std::string& path,
                      std::optional<core::Duration>& out) const {
    std::optional<core::Duration> wall;
    RETURN_IF_ERROR(getSlurmDuration(limits, "maxWallDurationPerJob", path, wall));
    if (wall && *wall < core::kUnlimited) out = wall;
    return Status::ok();
  }

  // maxTresPerJob, and maxNodesPerJob: sacctmgr's MaxNodes= is MaxTRES=node.
  Status getPerJobTres(const YAML::Node& limits, const std::string& path,
                       core::TresLimit& out) const {
    RETURN_IF_ERROR(getTres(limits, "maxTresPerJob", path, out));
    std::optional<std::uint64_t> maxNodes;
    RETURN_IF_ERROR(getOptionalInteger<std::uint64_t>(limits, "maxNodesPerJob", path, maxNodes));
    if (!maxNodes) return Status::ok();
    if (out.nodes && *out.nodes != *maxNodes) {
      return error(limits["maxNodesPerJob"], join(path, "maxNodesPerJob"),
                   "disagrees with maxTresPerJob.node (MaxNodes= is MaxTRES=node); give one");
    }
    out.nodes = maxNodes;
    return Status::ok();
  }

  // An account's limits: the Account CRD's spec.limits keys.
  Status getAccountLimits(const YAML::Node& entry, const std::string& entryPath,
                          core::AssociationLimits& out) const {
    const YAML::Node limits = entry["limits"];
    if (!limits.IsDefined() || limits.IsNull()) return Status::ok();
    const std::string path = join(entryPath, "limits");
    RETURN_IF_ERROR(expectMap(limits, path));
    if (const YAML::Node submit = limits["maxSubmitJobs"]; submit.IsDefined()) {
      return error(submit, join(path, "maxSubmitJobs"),
                   "a submit-time limit (sbatch is refused beyond it), which a plan of jobs "
                   "already queued cannot apply; leave it out of the scenario");
    }
    RETURN_IF_ERROR(checkKeys(limits, path,
                              {"maxJobs", "maxNodesPerJob", "maxWallDurationPerJob", "grpJobs",
                               "grpTres", "maxTresPerJob"}));
    RETURN_IF_ERROR(getOptionalInteger<std::uint32_t>(limits, "maxJobs", path, out.maxJobs));
    RETURN_IF_ERROR(getOptionalInteger<std::uint32_t>(limits, "grpJobs", path, out.grpJobs));
    RETURN_IF_ERROR(getTres(limits, "grpTres", path, out.grpTres));
    RETURN_IF_ERROR(getPerJobTres(limits, path, out.maxTresPerJob));
    RETURN_IF_ERROR(getWallLimit(limits, path, out.maxWallPerJob));
    return Status::ok();
  }

  // A list of names: a YAML sequence, or one comma-separated string.
  Status getNameList(const YAML::Node& map, std::string_view key, const std::string& path,
                     std::vector<std::string>& out) const {
    const YAML::Node node = map[std::string(key)];
    if (!node.IsDefined() || node.IsNull()) return Status::ok();
    out.clear();
    if (node.IsScalar()) {
      std::string_view text = node.Scalar();
      while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view name = text.substr(0, comma);
        if (!name.empty()) out.emplace_back(name);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
      }
      return Status::ok();
    }
    if (!node.IsSequence()) return error(node, join(path, key), "expected a list of names");
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (!node[i].IsScalar()) return error(node[i], item(join(path, key), i), "expected a name");
      out.push_back(node[i].Scalar());
    }
    return Status::ok();
  }

  StatusOr<std::vector<std::string>> expand(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) return error(node, path, "expected a hostlist expression");
    const std::string& expr = node.Scalar();
    if (hostlistUpperBound(expr) > kMaxNodes) {
      return error(
          node, path,
          "hostlist " + quoted(expr) + " names more than " + std::to_string(kMaxNodes) + " hosts");
    }
    auto hosts = slurm::expandHostlist(expr);
    if (!hosts.isOk()) {
      return error(
          node, path,
          "invalid hostlist " + quoted(expr) +
              (hosts.status().message().empty() ? "" : " (" + hosts.status().message() + ")"));
    }
    if (hosts->empty()) return error(node, path, "hostlist " + quoted(expr) + " names no host");
    return std::move(*hosts);
  }

  // Node indexes for a hostlist of declared nodes.
  StatusOr<std::vector<core::NodeIndex>> nodeIndexes(const YAML::Node& node,
                                                     const std::string& path) const {
    auto names = expand(node, path);
    if (!names.isOk()) return names.status();
    std::vector<core::NodeIndex> indexes;
    indexes.reserve(names->size());
    for (const std::string& name : *names) {
      const auto it = nodeIndex_.find(name);
      if (it == nodeIndex_.end()) return error(node, path, "no node named " + quoted(name));
      indexes.push_back(it->second);
    }
    return indexes;
  }

  // A sequence under `key`, or an empty one when the key is absent.
  StatusOr<YAML::Node> sequence(const YAML::Node& map, std::string_view key) const {
    const YAML::Node node = map[std::string(key)];
    if (!node.IsDefined() || node.IsNull()) return YAML::Node(YAML::NodeType::Sequence);
    if (!node.IsSequence()) return error(node, std::string(key), "expected a list");
    return node;
  }

  Status expectMap(const YAML::Node& node, const std::string& path) const {
    if (!node.IsMap()) return error(node, path, "expected a mapping");
    return Status::ok();
  }

  // ---- sections ----------------------------------------------------------------------------

  Status loadNow(const YAML::Node& root) {
    auto value = scalar(root, "now", "");
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    if (auto epoch = kubeslurm::parseInteger<std::int64_t>(**value)) {
      if (*epoch < 0 || *epoch > kMaxSeconds * 100)
        return error(root["now"], "now", "out of range");
      scenario_.now = *epoch;
      return Status::ok();
    }
    auto parsed = slurm::parseTimestamp(**value, utcOffset_);
    if (!parsed.isOk()) {
      return error(root["now"], "now",
                   "expected epoch seconds or a timestamp such as 2026-11-21T04:29:29, got " +
                       quoted(**value));
    }
    scenario_.now = *parsed;
    return Status::ok();
  }

  Status loadNodes(const YAML::Node& root) {
    auto list = sequence(root, "nodes");
    if (!list.isOk()) return list.status();
    if (list->size() == 0) return error(root, "nodes", "at least one node entry is required");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node entry = (*list)[i];
      const std::string path = item("nodes", i);
      RETURN_IF_ERROR(expectMap(entry, path));
      RETURN_IF_ERROR(
          checkKeys(entry, path,
                    {"names", "gpus", "cpus", "memory", "labels", "features", "state", "foreign"}));
      if (!entry["names"].IsDefined()) return error(entry, path, "names is required");
      auto names = expand(entry["names"], join(path, "names"));
      if (!names.isOk()) return names.status();
      core::Node node;
      node.allocatable = {0, 64000, 512000ULL * 1024 * 1024};
      RETURN_IF_ERROR(getResources(entry, path, node.allocatable));
      RETURN_IF_ERROR(getNameList(entry, "features", path, node.features));
      RETURN_IF_ERROR(getNodeState(entry, path, node.state));
      RETURN_IF_ERROR(getLabels(entry, path, node.labels));
      if (const YAML::Node foreign = entry["foreign"]; foreign.IsDefined() && !foreign.IsNull()) {
        const std::string foreignPath = join(path, "foreign");
        RETURN_IF_ERROR(expectMap(foreign, foreignPath));
        RETURN_IF_ERROR(checkKeys(foreign, foreignPath, {"gpus", "cpus", "memory"}));
        RETURN_IF_ERROR(getResources(foreign, foreignPath, node.foreignUsed));
      }
      for (const std::string& name : *names) {
        if (scenario_.snapshot.nodes.size() >= kMaxNodes) {
          return error(entry, path, "more than " + std::to_string(kMaxNodes) + " nodes");
        }
        const auto index = static_cast<core::NodeIndex>(scenario_.snapshot.nodes.size());
        if (!nodeIndex_.emplace(name, index).second) {
          return error(entry["names"], join(path, "names"),
                       "node " + quoted(name) + " is declared twice");
        }
        node.name = name;
        scenario_.snapshot.nodes.push_back(node);
      }
    }
    return Status::ok();
  }

  Status getResources(const YAML::Node& map, const std::string& path, core::Resources& out) const {
    RETURN_IF_ERROR(getInteger<std::uint32_t>(map, "gpus", path, out.gpus, 0, 1024));
    auto cpus = scalar(map, "cpus", path);
    if (!cpus.isOk()) return cpus.status();
    if (*cpus) {
      auto millis = parseCpuMillis(**cpus);
      if (!millis) {
        return error(map["cpus"], join(path, "cpus"),
                     "expected a CPU count such as 64, 0.5 or 500m, got " + quoted(**cpus));
      }
      out.cpuMillis = *millis;
    }
    auto memory = scalar(map, "memory", path);
    if (!memory.isOk()) return memory.status();
    if (*memory) {
      auto bytes = parseMemoryQuantity(**memory);
      if (!bytes.isOk())
        return error(map["memory"], join(path, "memory"), bytes.status().message());
      out.memoryBytes = *bytes;
    }
    return Status::ok();
  }

  static std::optional<std::uint64_t> parseCpuMillis(std::string_view text) {
    if (!text.empty() && text.back() == 'm') {
      const auto millis = kubeslurm::parseInteger<std::uint64_t>(text.substr(0, text.size() - 1));
      if (!millis || *millis > (1ULL << 40U)) return std::nullopt;
      return millis;
    }
    double cpus = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), cpus);
    if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !(cpus >= 0) ||
        cpus > 1e9) {
      return std::nullopt;
    }
    return static_cast<std::uint64_t>(std::llround(cpus * 1000));
  }

  Status getNodeState(const YAML::Node& map, const std::string& path, core::NodeState& out) const {
    auto value = scalar(map, "state", path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    static const std::map<std::string, core::NodeState, std::less<>> kStates = {
        {"up", core::NodeState::kUp},
        {"idle", core::NodeState::kUp},
        {"drain", core::NodeState::kDrain},
        {"down", core::NodeState::kDown},
        {"notready", core::NodeState::kNotReady}};
    const auto it = kStates.find(lower(**value));
    if (it == kStates.end()) {
      return error(map["state"], join(path, "state"),
                   "expected up, drain, down or notready, got " + quoted(**value));
    }
    out = it->second;
    return Status::ok();
  }

  Status getLabels(const YAML::Node& map, const std::string& path,
                   std::map<std::string, std::string, std::less<>>& out) const {
    const YAML::Node labels = map["labels"];
    if (!labels.IsDefined() || labels.IsNull()) return Status::ok();
    const std::string labelsPath = join(path, "labels");
    RETURN_IF_ERROR(expectMap(labels, labelsPath));
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (!it->first.IsScalar() || !it->second.IsScalar()) {
        return error(it->first, labelsPath, "labels map names to single values");
      }
      out[it->first.Scalar()] = it->second.Scalar();
    }
    return Status::ok();
  }

  Status loadTopology(const YAML::Node& root) {
    auto text = scalar(root, "topology", "");
    if (!text.isOk()) return text.status();
    if (!*text) return Status::ok();
    auto topology = slurm::parseTopologyConf(**text);
    if (!topology.isOk()) return error(root["topology"], "topology", topology.status().message());
    scenario_.snapshot.topology = std::move(*topology);
    return Status::ok();
  }

  Status loadPartitions(const YAML::Node& root) {
    auto list = sequence(root, "partitions");
    if (!list.isOk()) return list.status();
    std::vector<core::Partition>& partitions = scenario_.snapshot.partitions;
    if (list->size() == 0) {
      core::Partition partition;
      partition.name = "batch";
      partition.isDefault = true;
      for (std::size_t i = 0; i < scenario_.snapshot.nodes.size(); ++i) {
        partition.nodes.push_back(static_cast<core::NodeIndex>(i));
      }
      partitions.push_back(std::move(partition));
      return Status::ok();
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node entry = (*list)[i];
      const std::string path = item("partitions", i);
      RETURN_IF_ERROR(expectMap(entry, path));
      RETURN_IF_ERROR(
          checkKeys(entry, path,
                    {"name", "nodes", "default", "maxTime", "defaultTime", "priorityTier",
                     "priorityJobFactor", "preemptMode", "maxNodes", "state", "accounts"}));
      core::Partition partition;
      RETURN_IF_ERROR(getString(entry, "name", path, partition.name));
      if (partition.name.empty()) return error(entry, path, "name is required");
      for (const core::Partition& other : partitions) {
        if (other.name == partition.name) {
          return error(entry["name"], join(path, "name"),
                       "partition " + quoted(partition.name) + " is declared twice");
        }
      }
      if (const YAML::Node nodes = entry["nodes"]; nodes.IsDefined() && !nodes.IsNull()) {
        auto indexes = nodeIndexes(nodes, join(path, "nodes"));
        if (!indexes.isOk()) return indexes.status();
        partition.nodes = std::move(*indexes);
      } else {
        for (std::size_t n = 0; n < scenario_.snapshot.nodes.size(); ++n) {
          partition.nodes.push_back(static_cast<core::NodeIndex>(n));
        }
      }
      RETURN_IF_ERROR(getBool(entry, "default", path, partition.isDefault));
      std::optional<core::Duration> maxTime;
      RETURN_IF_ERROR(getSlurmDuration(entry, "maxTime", path, maxTime));
      if (maxTime) partition.maxTime = *maxTime;
      RETURN_IF_ERROR(getSlurmDuration(entry, "defaultTime", path, partition.defaultTime));
      RETURN_IF_ERROR(
          getInteger<std::uint32_t>(entry, "priorityTier", path, partition.priorityTier, 0, 65533));
      RETURN_IF_ERROR(getInteger<std::uint32_t>(entry, "priorityJobFactor", path,
                                                partition.priorityJobFactor, 0, 65533));
      RETURN_IF_ERROR(getPreemptMode(entry, path, partition.preemptMode));
      std::uint32_t maxNodes = 0;
      RETURN_IF_ERROR(getInteger<std::uint32_t>(entry, "maxNodes", path, maxNodes, 1));
      if (maxNodes != 0) partition.maxNodesPerJob = maxNodes;
      RETURN_IF_ERROR(getPartitionState(entry, path, partition.state));
      RETURN_IF_ERROR(getNameList(entry, "accounts", path, partition.allowedAccounts));
      partitions.push_back(std::move(partition));
    }
    return Status::ok();
  }

  Status getPreemptMode(const YAML::Node& map, const std::string& path,
                        core::PreemptMode& out) const {
    auto value = scalar(map, "preemptMode", path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    const std::string text = lower(**value);
    if (text == "off") {
      out = core::PreemptMode::kOff;
    } else if (text == "requeue") {
      out = core::PreemptMode::kRequeue;
    } else if (text == "cancel") {
      out = core::PreemptMode::kCancel;
    } else {
      return error(map["preemptMode"], join(path, "preemptMode"),
                   "expected OFF, REQUEUE or CANCEL, got " + quoted(**value));
    }
    return Status::ok();
  }

  Status getPartitionState(const YAML::Node& map, const std::string& path,
                           core::PartitionState& out) const {
    auto value = scalar(map, "state", path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    static const std::map<std::string, core::PartitionState, std::less<>> kStates = {
        {"up", core::PartitionState::kUp},
        {"down", core::PartitionState::kDown},
        {"drain", core::PartitionState::kDrain},
        {"inactive", core::PartitionState::kInactive}};
    const auto it = kStates.find(lower(**value));
    if (it == kStates.end()) {
      return error(map["state"], join(path, "state"),
                   "expected UP, DOWN, DRAIN or INACTIVE, got " + quoted(**value));
    }
    out = it->second;
    return Status::ok();
  }

  Status loadAccounts(const YAML::Node& root) {
    auto list = sequence(root, "accounts");
    if (!list.isOk()) return list.status();
    std::vector<core::Account>& accounts = scenario_.snapshot.accounts;
    core::Account rootAccount;
    rootAccount.name = "root";
    accounts.push_back(std::move(rootAccount));
    std::vector<std::pair<std::string, YAML::Node>> parents;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node entry = (*list)[i];
      const std::string path = item("accounts", i);
      RETURN_IF_ERROR(expectMap(entry, path));
      RETURN_IF_ERROR(checkKeys(entry, path, {"name", "parent", "shares", "usage", "limits"}));
      core::Account account;
      RETURN_IF_ERROR(getString(entry, "name", path, account.name));
      if (account.name.empty()) return error(entry, path, "name is required");
      account.parent = "root";
      RETURN_IF_ERROR(getString(entry, "parent", path, account.parent));
      RETURN_IF_ERROR(getInteger<std::uint32_t>(entry, "shares", path, account.shares));
      auto usage = scalar(entry, "usage", path);
      if (!usage.isOk()) return usage.status();
      if (*usage) {
        double value = 0;
        const std::string& text = **usage;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || ptr != text.data() + text.size() || !(value >= 0) ||
            !std::isfinite(value)) {
          return error(entry["usage"], join(path, "usage"),
                       "expected non-negative GPU-seconds, got " + quoted(text));
        }
        account.rawUsage = value;
      }
      RETURN_IF_ERROR(getAccountLimits(entry, path, account.limits));
      if (account.name == "root") {
        if (entry["parent"].IsDefined()) return error(entry, path, "root has no parent");
        accounts[0].shares = account.shares;
        accounts[0].rawUsage = account.rawUsage;
        accounts[0].limits = account.limits;
        continue;
      }
      for (const core::Account& other : accounts) {
        if (other.name == account.name) {
          return error(entry["name"], join(path, "name"),
                       "account " + quoted(account.name) + " is declared twice");
        }
      }
      parents.emplace_back(join(path, "parent"),
                           entry["parent"].IsDefined() ? entry["parent"] : entry);
      accounts.push_back(std::move(account));
    }
    for (std::size_t i = 1; i < accounts.size(); ++i) {
      const std::string& parent = accounts[i].parent;
      const bool known = std::any_of(accounts.begin(), accounts.end(),
                                     [&](const core::Account& a) { return a.name == parent; });
      if (!known) {
        return error(parents[i - 1].second, parents[i - 1].first,
                     "no account named " + quoted(parent));
      }
    }
    // Parents are declared; a cycle among them would never reach root.
    for (const core::Account& account : accounts) {
      std::string current = account.name;
      for (std::size_t steps = 0; current != "root"; ++steps) {
        if (steps > accounts.size()) {
          return error(root["accounts"], "accounts",
                       "the parent of " + quoted(account.name) + " loops without reaching root");
        }
        current = std::find_if(accounts.begin(), accounts.end(), [&](const core::Account& a) {
                    return a.name == current;
                  })->parent;
      }
    }
    return Status::ok();
  }

  // QOS definitions (sacctmgr add qos). When there are any, a QOS "normal" exists as in every
  // Slurm database (added when the list lacks it), and jobs that name no QOS get it.
  Status loadQos(const YAML::Node& root) {
    auto list = sequence(root, "qos");
    if (!list.isOk()) return list.status();
    std::vector<core::Qos>& out = scenario_.snapshot.qos;
    std::vector<std::pair<YAML::Node, std::string>> preemptPaths;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node entry = (*list)[i];
      const std::string path = item("qos", i);
      RETURN_IF_ERROR(expectMap(entry, path));
      RETURN_IF_ERROR(
          checkKeys(entry, path, {"name", "priority", "preempt", "preemptMode", "limits"}));
      core::Qos qos;
      RETURN_IF_ERROR(getString(entry, "name", path, qos.name));
      if (qos.name.empty()) return error(entry, path, "name is required");
      if (std::any_of(out.begin(), out.end(),
                      [&](const core::Qos& other) { return other.name == qos.name; })) {
        return error(entry["name"], join(path, "name"),
                     "qos " + quoted(qos.name) + " is declared twice");
      }
      RETURN_IF_ERROR(getInteger<std::uint32_t>(entry, "priority", path, qos.priority));
      RETURN_IF_ERROR(getNameList(entry, "preempt", path, qos.preempt));
      preemptPaths.emplace_back(entry["preempt"], join(path, "preempt"));
      if (const YAML::Node mode = entry["preemptMode"]; mode.IsDefined() && !mode.IsNull()) {
        core::PreemptMode parsed = core::PreemptMode::kOff;
        RETURN_IF_ERROR(getPreemptMode(entry, path, parsed));
        qos.preemptMode = parsed;
      }
      RETURN_IF_ERROR(getQosLimits(entry, path, qos));
      out.push_back(std::move(qos));
    }
    // sacctmgr refuses a Preempt= naming a QOS it does not know, or the QOS itself.
    for (std::size_t i = 0; i < out.size(); ++i) {
      for (const std::string& name : out[i].preempt) {
        const auto& [node, path] = preemptPaths[i];
        if (name == out[i].name) return error(node, path, "a qos cannot preempt itself");
        if (std::none_of(out.begin(), out.end(),
                         [&](const core::Qos& q) { return q.name == name; })) {
          return error(node, path, "no qos named " + quoted(name));
        }
      }
    }
    if (!out.empty() && std::none_of(out.begin(), out.end(),
                                     [](const core::Qos& q) { return q.name == kDefaultQos; })) {
      core::Qos normal;
      normal.name = kDefaultQos;
      out.push_back(std::move(normal));
    }
    return Status::ok();
  }

  // A QOS's limits: the Account CRD's keys where they overlap, and the per-user ones.
  Status getQosLimits(const YAML::Node& entry, const std::string& entryPath, core::Qos& out) const {
    const YAML::Node limits = entry["limits"];
    if (!limits.IsDefined() || limits.IsNull()) return Status::ok();
    const std::string path = join(entryPath, "limits");
    RETURN_IF_ERROR(expectMap(limits, path));
    RETURN_IF_ERROR(checkKeys(limits, path,
                              {"grpJobs", "grpTres", "maxJobsPerUser", "maxTresPerUser",
                               "maxTresPerJob", "maxNodesPerJob", "maxWallDurationPerJob"}));
    RETURN_IF_ERROR(getOptionalInteger<std::uint32_t>(limits, "grpJobs", path, out.grpJobs));
    RETURN_IF_ERROR(getTres(limits, "grpTres", path, out.grpTres));
    RETURN_IF_ERROR(
        getOptionalInteger<std::uint32_t>(limits, "maxJobsPerUser", path, out.maxJobsPerUser));
    RETURN_IF_ERROR(getTres(limits, "maxTresPerUser", path, out.maxTresPerUser));
    RETURN_IF_ERROR(getPerJobTres(limits, path, out.maxTresPerJob));
    RETURN_IF_ERROR(getWallLimit(limits, path, out.maxWallPerJob));
    return Status::ok();
  }

  Status loadConfig(const YAML::Node& root) {
    const YAML::Node config = root["config"];
    if (!config.IsDefined() || config.IsNull()) return Status::ok();
    RETURN_IF_ERROR(expectMap(config, "config"));
    RETURN_IF_ERROR(checkKeys(config, "config",
                              {"policy", "preemption", "preemptType", "preemptMode", "priority"}));
    core::SchedulerConfig& out = scenario_.snapshot.config;
    auto policy = scalar(config, "policy", "config");
    if (!policy.isOk()) return policy.status();
    if (*policy) {
      const std::string text = lower(**policy);
      if (text == "fifo") {
        out.policy = core::SchedulingPolicy::kFifo;
      } else if (text == "priority") {
        out.policy = core::SchedulingPolicy::kPriority;
      } else if (text == "backfill") {
        out.policy = core::SchedulingPolicy::kBackfill;
      } else {
        return error(config["policy"], "config.policy",
                     "expected fifo, priority or backfill, got " + quoted(**policy));
      }
    }
    RETURN_IF_ERROR(getBool(config, "preemption", "config", out.preemption));
    RETURN_IF_ERROR(getPreemptType(config, out.preemptType));
    if (const YAML::Node mode = config["preemptMode"]; mode.IsDefined() && !mode.IsNull()) {
      core::PreemptMode parsed = core::PreemptMode::kRequeue;
      RETURN_IF_ERROR(getPreemptMode(config, "config", parsed));
      if (parsed == core::PreemptMode::kOff) {
        return error(mode, "config.preemptMode",
                     "expected REQUEUE or CANCEL (to turn preemption off: preemption: false)");
      }
      out.preemptMode = parsed;
    }
    const YAML::Node priority = config["priority"];
    if (!priority.IsDefined() || priority.IsNull()) return Status::ok();
    const std::string path = "config.priority";
    RETURN_IF_ERROR(expectMap(priority, path));
    RETURN_IF_ERROR(
        checkKeys(priority, path,
                  {"weightAge", "weightFairshare", "weightJobSize", "weightPartition", "weightQos",
                   "weightTresGpu", "maxAge", "decayHalfLife", "favorSmall", "fairTree"}));
    core::PriorityConfig& p = out.priority;
    RETURN_IF_ERROR(getInteger<std::uint32_t>(priority, "weightAge", path, p.weightAge));
    RETURN_IF_ERROR(
        getInteger<std::uint32_t>(priority, "weightFairshare", path, p.weightFairshare));
    RETURN_IF_ERROR(getInteger<std::uint32_t>(priority, "weightJobSize", path, p.weightJobSize));
    RETURN_IF_ERROR(
        getInteger<std::uint32_t>(priority, "weightPartition", path, p.weightPartition));
    RETURN_IF_ERROR(getInteger<std::uint32_t>(priority, "weightQos", path, p.weightQos));
    RETURN_IF_ERROR(getInteger<std::uint32_t>(priority, "weightTresGpu", path, p.weightTresGpu));
    std::optional<core::Duration> duration;
    RETURN_IF_ERROR(getSlurmDuration(priority, "maxAge", path, duration));
    if (duration) p.maxAge = std::max<core::Duration>(1, *duration);
    duration.reset();
    RETURN_IF_ERROR(getSlurmDuration(priority, "decayHalfLife", path, duration));
    if (duration) p.decayHalfLife = std::max<core::Duration>(1, *duration);
    RETURN_IF_ERROR(getBool(priority, "favorSmall", path, p.favorSmall));
    RETURN_IF_ERROR(getBool(priority, "fairTree", path, p.fairTree));
    return Status::ok();
  }

  // slurm.conf PreemptType without its "preempt/" prefix (which is accepted too).
  Status getPreemptType(const YAML::Node& config, core::PreemptType& out) const {
    auto value = scalar(config, "preemptType", "config");
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    std::string text = lower(**value);
    if (text.starts_with("preempt/")) text.erase(0, std::string_view("preempt/").size());
    if (text == "partition_prio") {
      out = core::PreemptType::kPartitionPriority;
    } else if (text == "qos") {
      out = core::PreemptType::kQos;
    } else {
      return error(config["preemptType"], "config.preemptType",
                   "expected partition_prio or qos, got " + quoted(**value));
    }
    return Status::ok();
  }

  Status loadBudget(const YAML::Node& root) {
    const YAML::Node budget = root["budget"];
    if (!budget.IsDefined() || budget.IsNull()) return Status::ok();
    RETURN_IF_ERROR(expectMap(budget, "budget"));
    RETURN_IF_ERROR(
        checkKeys(budget, "budget", {"maxJobsTested", "window", "resolution", "maxReservations"}));
    core::Budget& out = scenario_.budget;
    RETURN_IF_ERROR(
        getInteger<std::uint32_t>(budget, "maxJobsTested", "budget", out.maxJobsTested, 1));
    RETURN_IF_ERROR(
        getInteger<std::uint32_t>(budget, "maxReservations", "budget", out.maxReservations));
    // bf_window and bf_resolution are seconds here, as in the core's Budget.
    RETURN_IF_ERROR(
        getInteger<core::Duration>(budget, "window", "budget", out.window, 1, kMaxSeconds));
    RETURN_IF_ERROR(
        getInteger<core::Duration>(budget, "resolution", "budget", out.resolution, 1, 86400));
    return Status::ok();
  }

  Status loadFinished(const YAML::Node& root) {
    auto list = sequence(root, "finished");
    if (!list.isOk()) return list.status();
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node entry = (*list)[i];
      const std::string path = item("finished", i);
      RETURN_IF_ERROR(expectMap(entry, path));
      RETURN_IF_ERROR(
          checkKeys(entry, path, {"id", "name", "user", "state", "exitCode", "endedAgo"}));
      core::FinishedJob job;
      RETURN_IF_ERROR(getJobId(entry, path, job.id));
      RETURN_IF_ERROR(getString(entry, "name", path, job.name));
      job.user = "root";
      RETURN_IF_ERROR(getString(entry, "user", path, job.user));
      auto state = scalar(entry, "state", path);
      if (!state.isOk()) return state.status();
      if (*state) {
        const auto parsed = slurm::parseJobState(**state);
        if (!parsed || !slurm::isFinished(*parsed)) {
          return error(
              entry["state"], join(path, "state"),
              "expected a finished state such as COMPLETED or FAILED, got " + quoted(**state));
        }
        job.state = *parsed;
      }
      RETURN_IF_ERROR(getInteger<std::int32_t>(entry, "exitCode", path, job.exitCode, 0, 255));
      std::int64_t ago = 0;
      RETURN_IF_ERROR(getSeconds(entry, "endedAgo", path, ago));
      job.endTime = scenario_.now - ago;
      scenario_.snapshot.finished.push_back(std::move(job));
    }
    return Status::ok();
  }

  Status getJobId(const YAML::Node& map, const std::string& path, core::JobId& out) {
    if (!map["id"].IsDefined()) return error(map, path, "id is required");
    RETURN_IF_ERROR(getInteger<core::JobId>(map, "id", path, out, 1, (core::JobId{1} << 53U)));
    if (!jobIds_.insert(out).second) {
      return error(map["id"], join(path, "id"), "job id " + std::to_string(out) + " is used twice");
    }
    if (jobIds_.size() > kMaxJobs) return error(map, path, "too many jobs");
    return Status::ok();
  }

  Status loadJobs(const YAML::Node& root, std::string_view section) {
    auto list = sequence(root, section);
    if (!list.isOk()) return list.status();
    const bool running = section == "running";
    for (std::size_t i = 0; i < list->size(); ++i) {
      const YAML::Node entry = (*list)[i];
      const std::string path = item(section, i);
      RETURN_IF_ERROR(expectMap(entry, path));
      if (running) {
        RETURN_IF_ERROR(checkKeys(
            entry, path,
            {"id", "name", "user", "account", "partition", "qos", "nodes", "gpusPerNode",
             "ntasksPerNode", "cpusPerTask", "memory", "exclusive", "endsIn", "elapsed"}));
      } else {
        RETURN_IF_ERROR(checkKeys(
            entry, path, {"id",         "name",        "user",          "account",     "partition",
                          "nodes",      "gpusPerNode", "ntasksPerNode", "cpusPerTask", "memory",
                          "timeLimit",  "exclusive",   "priority",      "submit",      "nice",
                          "dependency", "switches",    "nodelist",      "exclude",     "constraint",
                          "begin",      "hold",        "qos",           "contiguous"}));
      }
      core::Job job;
      RETURN_IF_ERROR(getJobId(entry, path, job.id));
      RETURN_IF_ERROR(loadCommonJobFields(entry, path, job));
      if (running) {
        RETURN_IF_ERROR(loadRunning(entry, path, job));
      } else {
        RETURN_IF_ERROR(loadPending(entry, path, job));
        scenario_.pendingOrder.push_back(job.id);
      }
      scenario_.snapshot.jobs.push_back(std::move(job));
    }
    return Status::ok();
  }

  const core::Partition* findPartition(const std::string& name) const {
    for (const core::Partition& partition : scenario_.snapshot.partitions) {
      if (partition.name == name) return &partition;
    }
    return nullptr;
  }

  // partition: one name, or several as sbatch -p a,b (a list or a comma string): the first is
  // Job::partition, the rest Job::otherPartitions. Absent: the default partition.
  Status getJobPartitions(const YAML::Node& entry, const std::string& path, core::Job& job) const {
    std::vector<std::string> names;
    RETURN_IF_ERROR(getNameList(entry, "partition", path, names));
    if (names.empty()) {
      const auto& partitions = scenario_.snapshot.partitions;
      const auto it = std::find_if(partitions.begin(), partitions.end(),
                                   [](const core::Partition& p) { return p.isDefault; });
      if (it == partitions.end()) {
        return error(entry, path, "no partition given and no partition is the default");
      }
      job.partition = it->name;
      return Status::ok();
    }
    const YAML::Node node = entry["partition"];
    const std::string partitionPath = join(path, "partition");
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (findPartition(names[i]) == nullptr) {
        return error(node, partitionPath, "no partition named " + quoted(names[i]));
      }
      if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
          names.begin() + static_cast<std::ptrdiff_t>(i)) {
        return error(node, partitionPath, "partition " + quoted(names[i]) + " is named twice");
      }
    }
    job.partition = names.front();
    job.otherPartitions.assign(names.begin() + 1, names.end());
    return Status::ok();
  }

  Status loadCommonJobFields(const YAML::Node& entry, const std::string& path, core::Job& job) {
    job.name = "job" + std::to_string(job.id);
    RETURN_IF_ERROR(getString(entry, "name", path, job.name));
    job.user = "root";
    RETURN_IF_ERROR(getString(entry, "user", path, job.user));
    job.account = "root";
    RETURN_IF_ERROR(getString(entry, "account", path, job.account));
    RETURN_IF_ERROR(getJobPartitions(entry, path, job));
    // Slurm gives a job that names no QOS its association's default, "normal" unless set.
    if (!scenario_.snapshot.qos.empty()) job.qos = kDefaultQos;
    RETURN_IF_ERROR(getString(entry, "qos", path, job.qos));
    RETURN_IF_ERROR(
        getInteger<std::uint32_t>(entry, "gpusPerNode", path, job.gpusPerNode, 0, 1024));
    RETURN_IF_ERROR(
        getInteger<std::uint32_t>(entry, "ntasksPerNode", path, job.tasksPerNode, 1, 4096));
    std::uint32_t cpusPerTask = 1;
    RETURN_IF_ERROR(getInteger<std::uint32_t>(entry, "cpusPerTask", path, cpusPerTask, 1, 4096));
    job.cpuMillisPerNode = std::uint64_t{job.tasksPerNode} * cpusPerTask * 1000;
    auto memory = scalar(entry, "memory", path);
    if (!memory.isOk()) return memory.status();
    if (*memory) {
      auto bytes = parseMemoryQuantity(**memory);
      if (!bytes.isOk())
        return error(entry["memory"], join(path, "memory"), bytes.status().message());
      job.memoryBytesPerNode = *bytes;
    }
    RETURN_IF_ERROR(getBool(entry, "exclusive", path, job.exclusive));
    return Status::ok();
  }

  // Running jobs: placed on the named nodes, or on the first nodes of their partition with room.
  Status loadRunning(const YAML::Node& entry, const std::string& path, core::Job& job) {
    job.phase = core::JobPhase::kRunning;
    if (!job.otherPartitions.empty()) {
      return error(entry["partition"], join(path, "partition"),
                   "a running job runs in one partition; name only that one");
    }
    if (!entry["endsIn"].IsDefined()) return error(entry, path, "endsIn (seconds) is required");
    std::int64_t endsIn = 0;
    std::int64_t elapsed = 0;
    RETURN_IF_ERROR(getSeconds(entry, "endsIn", path, endsIn));
    RETURN_IF_ERROR(getSeconds(entry, "elapsed", path, elapsed));
    job.startTime = scenario_.now - elapsed;
    job.submitTime = job.startTime;
    job.eligibleTime = job.startTime;
    job.timeLimit = std::max<core::Duration>(1, elapsed + endsIn);
    const YAML::Node nodes = entry["nodes"];
    const std::string nodesPath = join(path, "nodes");
    if (!nodes.IsDefined() || nodes.IsNull()) return error(entry, path, "nodes is required");
    if (!nodes.IsScalar()) return error(nodes, nodesPath, "expected a hostlist or a node count");
    if (auto count = kubeslurm::parseInteger<std::uint32_t>(nodes.Scalar())) {
      if (*count == 0) return error(nodes, nodesPath, "a running job holds at least one node");
      auto placed = placeByCount(job, *count);
      if (!placed) {
        return error(nodes, nodesPath,
                     "no " + std::to_string(*count) + " nodes of partition " + job.partition +
                         " have room for this job");
      }
      job.allocatedNodes = std::move(*placed);
    } else {
      auto indexes = nodeIndexes(nodes, nodesPath);
      if (!indexes.isOk()) return indexes.status();
      std::set<core::NodeIndex> distinct(indexes->begin(), indexes->end());
      if (distinct.size() != indexes->size())
        return error(nodes, nodesPath, "a node is named twice");
      for (core::NodeIndex index : *indexes) {
        if (!hasRoom(index, job, /*named=*/true)) {
          return error(nodes, nodesPath,
                       "node " + scenario_.snapshot.nodes[index].name +
                           " is not up or has no room for this job beside "
                           "the running jobs listed before it");
        }
      }
      job.allocatedNodes = std::move(*indexes);
    }
    job.minNodes = job.maxNodes = static_cast<std::uint32_t>(job.allocatedNodes.size());
    for (core::NodeIndex node : job.allocatedNodes) reserve(node, job);
    return Status::ok();
  }

  core::Resources request(const core::Job& job, core::NodeIndex node) const {
    if (job.exclusive) return scenario_.snapshot.nodes[node].allocatable;
    return {job.gpusPerNode, job.cpuMillisPerNode, job.memoryBytesPerNode};
  }

  // A node the file names for a running job may be draining (jobs run on until they end);
  // one picked by count must be up.
  bool hasRoom(core::NodeIndex index, const core::Job& job, bool named = false) const {
    const core::Node& node = scenario_.snapshot.nodes[index];
    if (node.state != core::NodeState::kUp && !(named && node.state == core::NodeState::kDrain)) {
      return false;
    }
    const auto it = used_.find(index);
    const core::Resources used = it == used_.end() ? core::Resources{} : it->second.first;
    const bool exclusiveHeld = it != used_.end() && it->second.second;
    if (exclusiveHeld || (job.exclusive && it != used_.end())) return false;
    const core::Resources want = request(job, index);
    const core::Resources& cap = node.allocatable;
    const core::Resources& foreign = node.foreignUsed;
    return std::uint64_t{used.gpus} + want.gpus + foreign.gpus <= cap.gpus &&
           used.cpuMillis + want.cpuMillis + foreign.cpuMillis <= cap.cpuMillis &&
           used.memoryBytes + want.memoryBytes + foreign.memoryBytes <= cap.memoryBytes;
  }

  void reserve(core::NodeIndex index, const core::Job& job) {
    auto& [used, exclusive] = used_[index];
    const core::Resources want = request(job, index);
    used.gpus += want.gpus;
    used.cpuMillis += want.cpuMillis;
    used.memoryBytes += want.memoryBytes;
    exclusive = exclusive || job.exclusive;
  }

  std::optional<std::vector<core::NodeIndex>> placeByCount(const core::Job& job,
                                                           std::uint32_t count) const {
    const core::Partition* partition = findPartition(job.partition);
    if (partition == nullptr) return std::nullopt;
    std::vector<core::NodeIndex> chosen;
    for (core::NodeIndex index : partition->nodes) {
      if (chosen.size() == count) break;
      if (hasRoom(index, job)) chosen.push_back(index);
    }
    if (chosen.size() != count) return std::nullopt;
    return chosen;
  }

  Status loadPending(const YAML::Node& entry, const std::string& path, core::Job& job) {
    job.phase = core::JobPhase::kPending;
    RETURN_IF_ERROR(getNodeRange(entry, path, job));
    const core::Partition* partition = findPartition(job.partition);
    if (partition == nullptr) return error(entry, path, "no partition " + quoted(job.partition));
    std::optional<core::Duration> limit;
    RETURN_IF_ERROR(getSlurmDuration(entry, "timeLimit", path, limit));
    job.timeLimit = limit.value_or(partition->defaultTime.value_or(partition->maxTime));
    std::int64_t submitAgo = 0;
    RETURN_IF_ERROR(getSeconds(entry, "submit", path, submitAgo));
    job.submitTime = scenario_.now - submitAgo;
    job.eligibleTime = job.submitTime;
    std::uint32_t priority = 0;
    RETURN_IF_ERROR(getInteger<std::uint32_t>(entry, "priority", path, priority, 1));
    if (priority != 0) job.adminPriority = priority;
    RETURN_IF_ERROR(
        getInteger<std::int32_t>(entry, "nice", path, job.nice, -2147483645, 2147483645));
    auto dependency = scalar(entry, "dependency", path);
    if (!dependency.isOk()) return dependency.status();
    if (*dependency) {
      auto spec = slurm::parseDependency(**dependency);
      if (!spec.isOk()) {
        return error(
            entry["dependency"], join(path, "dependency"),
            "invalid dependency " + quoted(**dependency) +
                (spec.status().message().empty() ? "" : " (" + spec.status().message() + ")"));
      }
      job.dependency = std::move(*spec);
    }
    RETURN_IF_ERROR(getSwitches(entry, path, job));
    for (auto [key, list] :
         {std::pair{"nodelist", &job.requiredNodes}, std::pair{"exclude", &job.excludedNodes}}) {
      const YAML::Node node = entry[key];
      if (!node.IsDefined() || node.IsNull()) continue;
      // Slurm refuses a job naming a node it does not know ("Invalid node name specified").
      auto indexes = nodeIndexes(node, join(path, key));
      if (!indexes.isOk()) return indexes.status();
      list->clear();
      for (core::NodeIndex index : *indexes) list->push_back(scenario_.snapshot.nodes[index].name);
    }
    RETURN_IF_ERROR(getNameList(entry, "constraint", path, job.constraints));
    std::int64_t begin = 0;
    RETURN_IF_ERROR(getSeconds(entry, "begin", path, begin));
    if (begin > 0) job.beginTime = scenario_.now + begin;
    RETURN_IF_ERROR(getBool(entry, "hold", path, job.held));
    RETURN_IF_ERROR(getBool(entry, "contiguous", path, job.contiguous));
    return Status::ok();
  }

  // nodes: N or "N-M" (sbatch --nodes); default 1.
  Status getNodeRange(const YAML::Node& entry, const std::string& path, core::Job& job) const {
    auto value = scalar(entry, "nodes", path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    const std::string& text = **value;
    const std::size_t dash = text.find('-');
    const auto lo = kubeslurm::parseInteger<std::uint32_t>(text.substr(0, dash));
    const auto hi = dash == std::string::npos
                        ? lo
                        : kubeslurm::parseInteger<std::uint32_t>(text.substr(dash + 1));
    if (!lo || !hi || *lo == 0 || *hi < *lo || *hi > kMaxNodes) {
      return error(entry["nodes"], join(path, "nodes"),
                   "expected a node count N or a range N-M, got " + quoted(text));
    }
    job.minNodes = *lo;
    job.maxNodes = *hi;
    return Status::ok();
  }

  // switches: "N" or "N@TIME" (sbatch --switches, TIME in Slurm's duration format).
  Status getSwitches(const YAML::Node& entry, const std::string& path, core::Job& job) const {
    auto value = scalar(entry, "switches", path);
    if (!value.isOk()) return value.status();
    if (!*value) return Status::ok();
    const std::string& text = **value;
    const std::size_t at = text.find('@');
    const auto count = kubeslurm::parseInteger<std::uint32_t>(text.substr(0, at));
    if (!count) {
      return error(entry["switches"], join(path, "switches"),
                   "expected N or N@TIME such as 1@00:05:00, got " + quoted(text));
    }
    job.maxSwitches = *count;
    if (at != std::string::npos) {
      auto wait = slurm::parseTimeLimit(text.substr(at + 1));
      if (!wait.isOk() || wait->isUnlimited()) {
        return error(entry["switches"], join(path, "switches"),
                     "invalid wait time in " + quoted(text));
      }
      job.switchesWait = *wait->seconds;
    }
    return Status::ok();
  }

  std::string source_;
  std::int32_t utcOffset_ = 0;
  Scenario scenario_;
  std::unordered_map<std::string, core::NodeIndex> nodeIndex_;
  std::set<core::JobId> jobIds_;
  std::map<core::NodeIndex, std::pair<core::Resources, bool>> used_;  // running jobs' holdings
};

}  // namespace

StatusOr<std::uint64_t> parseMemoryQuantity(std::string_view text) {
  struct Suffix {
    std::string_view name;
    double factor;
  };
  static constexpr std::array<Suffix, 12> kSuffixes = {{{"Ki", 1024.0},
                                                        {"Mi", 1048576.0},
                                                        {"Gi", 1073741824.0},
                                                        {"Ti", 1099511627776.0},
                                                        {"Pi", 1125899906842624.0},
                                                        {"Ei", 1152921504606846976.0},
                                                        {"k", 1e3},
                                                        {"M", 1e6},
                                                        {"G", 1e9},
                                                        {"T", 1e12},
                                                        {"P", 1e15},
                                                        {"E", 1e18}}};
  double factor = 1;
  std::string_view number = text;
  for (const Suffix& suffix : kSuffixes) {
    if (text.size() > suffix.name.size() && text.ends_with(suffix.name)) {
      factor = suffix.factor;
      number = text.substr(0, text.size() - suffix.name.size());
      break;
    }
  }
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double bytes = value * factor;
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size() ||
      !(value >= 0) || !(bytes < 1.8e19)) {
    return invalidArgument("expected a memory quantity such as 512Gi or 512000Mi, got " +
                           quoted(text));
  }
  return static_cast<std::uint64_t>(std::llround(bytes));
}

StatusOr<Scenario> loadScenario(std::string_view yaml, std::string_view sourceName,
                                core::Time defaultNow, std::int32_t utcOffsetSeconds) {
  // yaml-cpp reports failures by throwing; this is the edge where they become a Status.
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    Loader loader(sourceName, defaultNow, utcOffsetSeconds);
    return loader.load(root);
  } catch (const YAML::Exception& e) {
    std::string where(sourceName);
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return invalidArgument(where + ": " + e.msg);
  } catch (const std::exception& e) {
    return invalidArgument(std::string(sourceName) + ": " + e.what());
  }
}

}  // namespace kubeslurm::planner
