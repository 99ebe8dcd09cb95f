#include "kubeslurm/step/step_layout.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <set>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/repeated_counts.h"

namespace kubeslurm::step {

namespace {

// MaxTasksPerNode's default (MAX_TASKS_PER_NODE in slurm.h): slurmctld refuses a step with
// more tasks than this per node.
constexpr std::int64_t kMaxTasksPerNode = 512;

// strtok_r's view of `text`: the non-empty pieces between `separator`s.
std::vector<std::string> tokens(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// strtol over the whole text, as _parse_plane_dist takes a plane size: leading blanks and a
// sign are allowed, nothing may follow the digits.
std::optional<long> wholeNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  if (errno == ERANGE) return std::nullopt;
  return value;
}

Status distributionError(bool planeSize) {
  std::string message;
  if (planeSize) message = "Invalid plane size or size not specified\n";
  return invalidArgument(message + "Invalid --distribution specification");
}

// The three levels srun knows (node, socket, core), each "block", "cyclic" or "fcyclic" where
// Slurm has a name for the combination.
bool knownLevels(const std::string& levels) {
  static const std::set<std::string> kKnown = {
      "cyclic",
      "block",
      "cyclic:cyclic",
      "cyclic:block",
      "block:block",
      "block:cyclic",
      "block:fcyclic",
      "cyclic:fcyclic",
      "cyclic:cyclic:cyclic",
      "cyclic:cyclic:block",
      "cyclic:cyclic:fcyclic",
      "cyclic:block:cyclic",
      "cyclic:block:block",
      "cyclic:block:fcyclic",
      "cyclic:fcyclic:cyclic",
      "cyclic:fcyclic:block",
      "cyclic:fcyclic:fcyclic",
      "block:cyclic:cyclic",
      "block:cyclic:block",
      "block:cyclic:fcyclic",
      "block:block:cyclic",
      "block:block:block",
      "block:block:fcyclic",
      "block:fcyclic:cyclic",
      "block:fcyclic:block",
      "block:fcyclic:fcyclic",
  };
  return kKnown.contains(levels);
}

bool applyFlag(std::string_view flag, TaskDistribution& dist) {
  if (equalsIgnoreCase(flag, "nopack")) {
    dist.noPack = true;
  } else if (equalsIgnoreCase(flag, "pack")) {
    dist.pack = true;
  } else {
    return false;
  }
  return true;
}

// Slurm's hostlist_uniq(): sorted in Slurm's host order, duplicates dropped.
std::vector<std::string> uniqueSorted(const std::vector<std::string>& hosts) {
  slurm::Hostlist list;
  for (const std::string& host : hosts) list.pushHost(host);
  list.sort();
  std::vector<std::string> out;
  list.forEachHost([&out](std::string_view host) {
    if (out.empty() || out.back() != host) out.emplace_back(host);
    return true;
  });
  return out;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += "\nsrun: error: ";
    out += line;
  }
  return out;
}

// srun's option state (slurm_opt_t) for the fields a step's shape depends on, with Slurm's
// int arithmetic: its checks (ntasks <= 0 ...) only make sense on signed values.
struct Options {
  std::int64_t ntasks = 1;
  bool ntasksSet = false;
  std::int64_t minNodes = 1;
  std::int64_t maxNodes = 0;  // 0: no maximum
  bool nodesSet = false;
  bool nodesFromEnvironment = false;
  std::optional<std::int64_t> ntasksPerNode;
  std::int64_t cpusPerTask = 0;
  bool cpusSet = false;
  std::vector<std::string> nodelist;
  std::vector<std::string> exclude;
};

Options optionsFrom(const StepRequest& request) {
  Options opt;
  if (request.ntasks) {
    opt.ntasks = *request.ntasks;
    opt.ntasksSet = true;
  }
  if (request.nodes) {
    opt.minNodes = *request.nodes;
    opt.maxNodes = request.maxNodes.value_or(*request.nodes);
    opt.nodesSet = true;
    opt.nodesFromEnvironment = request.nodesFromEnvironment;
  }
  if (request.ntasksPerNode) opt.ntasksPerNode = *request.ntasksPerNode;
  if (request.cpusPerTask) {
    opt.cpusPerTask = *request.cpusPerTask;
    opt.cpusSet = true;
  }
  opt.nodelist = request.nodelist;
  opt.exclude = request.exclude;
  return opt;
}

std::string unableToCreateStep(std::int64_t jobId, std::string_view reason) {
  return "Unable to create step for job " + std::to_string(jobId) + ": " + std::string(reason);
}

constexpr std::string_view kNodeConfigUnavailable = "Requested node configuration is not available";
constexpr std::string_view kTooManyCpus = "More processors requested than permitted";

// The tasks of each node, laid out as slurm_step_layout.c does for a node-level `dist` with
// `cpus[i]` task slots on node i (already divided by cpus per task).
std::vector<std::vector<std::uint32_t>> distributeTasks(const std::vector<std::int64_t>& cpus,
                                                        std::int64_t ntasks,
                                                        const TaskDistribution& dist) {
  const std::size_t nodes = cpus.size();
  std::vector<std::vector<std::uint32_t>> tids(nodes);
  std::vector<std::int64_t> counts(nodes, 0);
  std::int64_t task = 0;

  if (dist.nodeLevel == TaskDistribution::NodeLevel::kCyclic) {
    // _task_layout_cyclic: round-robin over the nodes with free slots, then over-subscribe
    // evenly once every slot is taken.
    std::int64_t totalCpus = 0;
    for (std::int64_t c : cpus) totalCpus += c;
    bool overSubscribe = false;
    std::int64_t maxOverSubscribe = 0;
    if (totalCpus < ntasks) {
      overSubscribe = true;
      maxOverSubscribe = (ntasks - totalCpus + static_cast<std::int64_t>(nodes) - 1) /
                         static_cast<std::int64_t>(nodes);
    }
    for (std::int64_t round = 0; task < ntasks; ++round) {
      bool spaceRemaining = false;
      for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
        if (round < cpus[i] || (overSubscribe && round < cpus[i] + maxOverSubscribe)) {
          tids[i].push_back(static_cast<std::uint32_t>(task++));
          if (round + 1 < cpus[i]) spaceRemaining = true;
        }
      }
      if (!spaceRemaining) overSubscribe = true;
    }
    return tids;
  }

  if (dist.nodeLevel == TaskDistribution::NodeLevel::kPlane) {
    // _task_layout_plane: one task on every node first, then blocks of plane size per node
    // while slots last; the ids go out plane by plane.
    const auto plane = static_cast<std::int64_t>(dist.planeSize);
    bool overSubscribe = false;
    for (std::int64_t round = 0; task < ntasks; ++round) {
      bool spaceRemaining = false;
      if (round == 0) {
        for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
          ++task;
          ++counts[i];
        }
      }
      for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
        for (std::int64_t k = round == 0 ? 1 : 0; k < plane && task < ntasks; ++k) {
          if (cpus[i] - counts[i] != 0 || overSubscribe) {
            ++task;
            ++counts[i];
            if (cpus[i] - (counts[i] + 1) >= 0) spaceRemaining = true;
          }
        }
      }
      if (!spaceRemaining) overSubscribe = true;
    }
    task = 0;
    while (task < ntasks) {
      for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
        for (std::int64_t k = 0;
             k < plane && static_cast<std::int64_t>(tids[i].size()) < counts[i] && task < ntasks;
             ++k) {
          tids[i].push_back(static_cast<std::uint32_t>(task++));
        }
      }
    }
    return tids;
  }

  // _task_layout_block: the counts per node come from a cyclic pass (or from filling node
  // after node when packing), the ids are then handed out node after node.
  const bool pack = dist.pack;
  if (pack) {
    for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
      if (counts[i] < cpus[i]) {
        ++counts[i];
        ++task;
      }
    }
    for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
      while (counts[i] < cpus[i] && task < ntasks) {
        ++counts[i];
        ++task;
      }
    }
    while (task < ntasks) {
      for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
        ++counts[i];
        ++task;
      }
    }
  } else {
    bool overSubscribe = false;
    for (std::int64_t round = 0; task < ntasks; ++round) {
      bool spaceRemaining = false;
      for (std::size_t i = 0; i < nodes && task < ntasks; ++i) {
        if (round < cpus[i] || overSubscribe) {
          ++counts[i];
          ++task;
          if (round + 1 < cpus[i]) spaceRemaining = true;
        }
      }
      if (!spaceRemaining) overSubscribe = true;
    }
  }
  std::uint32_t id = 0;
  for (std::size_t i = 0; i < nodes; ++i) {
    for (std::int64_t k = 0; k < counts[i]; ++k) tids[i].push_back(id++);
  }
  return tids;
}

}  // namespace

StatusOr<TaskDistribution> parseDistribution(std::string_view text,
                                             std::optional<std::string_view> planeSizeEnvironment) {
  TaskDistribution dist;
  if (text.empty()) return dist;

  if (startsWithIgnoreCase(text, "plane")) {
    // Everything after "plane" up to '=' is ignored, as _parse_plane_dist only looks for '='.
    std::optional<std::string> size;
    if (const std::size_t eq = text.find('='); eq != std::string_view::npos) {
      size = std::string(text.substr(eq + 1));
    } else if (planeSizeEnvironment && !planeSizeEnvironment->empty()) {
      size = std::string(*planeSizeEnvironment);
    }
    if (!size) return distributionError(true);
    const std::optional<long> value = wholeNumber(*size);
    if (!value || *value <= 0 || *value > INT_MAX) return distributionError(true);
    dist.nodeLevel = TaskDistribution::NodeLevel::kPlane;
    dist.name = "plane";
    dist.planeSize = static_cast<std::uint32_t>(*value);
    return dist;
  }

  if (text.front() == ',') return distributionError(false);
  const std::size_t comma = text.find(',');
  const std::string_view levelsText = text.substr(0, comma);
  const std::string_view flags =
      comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);

  const std::vector<std::string> levels = tokens(levelsText, ':');
  if (levels.size() > 3) return distributionError(false);
  std::string expanded;
  std::string socketLevel;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    std::string level = levels[i];
    // '*' takes the level's default: block for nodes, cyclic for sockets, the socket's for
    // cores.
    if (level == "*") level = i == 0 ? "block" : (i == 1 ? "cyclic" : socketLevel);
    if (i == 1) socketLevel = level;
    if (i > 0) expanded += ':';
    expanded += level;
  }

  const std::string name = lowercaseAscii(expanded);
  if (knownLevels(name)) {
    dist.name = name;
    dist.nodeLevel = name.starts_with("cyclic") ? TaskDistribution::NodeLevel::kCyclic
                                                : TaskDistribution::NodeLevel::kBlock;
  } else if (name == "arbitrary" || name == "hostfile") {
    dist.name = "arbitrary";
    dist.nodeLevel = TaskDistribution::NodeLevel::kArbitrary;
  } else if (!applyFlag(expanded, dist)) {
    // A lone "pack"/"nopack" leaves the node level to srun's default.
    return distributionError(false);
  }
  if (!flags.empty() && !applyFlag(flags, dist)) return distributionError(false);
  return dist;
}

StatusOr<StepLayout> layoutStep(const StepAllocation& allocation, const StepRequest& request) {
  StatusOr<TaskDistribution> parsed = parseDistribution(request.distribution, std::nullopt);
  if (!parsed) return parsed.status();
  TaskDistribution dist = *parsed;
  if (dist.nodeLevel == TaskDistribution::NodeLevel::kArbitrary) {
    return Status(StatusCode::kUnimplemented,
                  "kubeslurm does not support --distribution=arbitrary (it needs SLURM_HOSTFILE)");
  }
  if (allocation.nodes.empty()) return invalidArgument("No nodes in allocation, can't run job");

  StepLayout layout;
  Options opt = optionsFrom(request);
  const auto allocNodes = static_cast<std::int64_t>(allocation.nodes.size());
  const auto cpusPerNode = static_cast<std::int64_t>(allocation.cpusPerNode);
  const auto warn = [&layout](std::string line) { layout.warnings.push_back(std::move(line)); };

  // --- srun's _opt_verify (src/srun/libsrun/opt.c) ---
  if (dist.pack && opt.nodesFromEnvironment) opt.minNodes = 1;
  if (opt.maxNodes != 0 && static_cast<std::int64_t>(opt.nodelist.size()) > opt.maxNodes) {
    warn("srun: error: Required nodelist includes more nodes than permitted by max-node count (" +
         std::to_string(opt.nodelist.size()) + " > " + std::to_string(opt.maxNodes) +
         "). Eliminating nodes from the nodelist.");
    opt.nodelist.resize(static_cast<std::size_t>(opt.maxNodes));
  }
  std::vector<std::string> errors;
  if (opt.ntasks <= 0)
    errors.push_back("invalid number of tasks (-n " + std::to_string(opt.ntasks) + ")");
  if (opt.cpusSet && opt.cpusPerTask <= 0) {
    errors.push_back("invalid number of cpus per task (-c " + std::to_string(opt.cpusPerTask) +
                     ")");
  }
  if (opt.minNodes < 0 || opt.maxNodes < 0 || (opt.maxNodes != 0 && opt.minNodes > opt.maxNodes)) {
    errors.push_back("invalid number of nodes (-N " + std::to_string(opt.minNodes) + "-" +
                     std::to_string(opt.maxNodes) + ")");
  }
  if (opt.ntasksPerNode && *opt.ntasksPerNode == 0) errors.emplace_back("ntasks-per-node is 0");
  if (!errors.empty()) return invalidArgument(joinLines(errors));

  std::vector<std::string> requiredNodes;  // the -w list once srun has hostlist_uniq'd it
  if (!opt.nodelist.empty()) {
    requiredNodes = uniqueSorted(opt.nodelist);
    const auto count = static_cast<std::int64_t>(requiredNodes.size());
    opt.minNodes = opt.nodesSet ? std::max(count, opt.minNodes) : count;
    opt.nodesSet = true;
  }
  if (opt.nodesSet && (opt.minNodes == opt.maxNodes || opt.maxNodes == 0) && !opt.ntasksSet) {
    opt.ntasks = opt.minNodes;
    if (opt.ntasksPerNode) {
      opt.ntasks *= *opt.ntasksPerNode;
      opt.ntasksSet = true;
    }
  } else if (opt.nodesSet && opt.ntasksSet) {
    if (opt.ntasks < opt.maxNodes) opt.maxNodes = opt.ntasks;
    if (opt.ntasks < opt.minNodes && opt.ntasks > 0) {
      warn("srun: Warning: can't run " + std::to_string(opt.ntasks) + " processes on " +
           std::to_string(opt.minNodes) + " nodes, setting nnodes to " +
           std::to_string(opt.ntasks));
      // srun re-applies -N with the task count, which also makes it a command-line value.
      opt.minNodes = opt.ntasks;
      opt.maxNodes = opt.ntasks;
      opt.nodesFromEnvironment = false;
      if (static_cast<std::int64_t>(requiredNodes.size()) > opt.minNodes) {
        requiredNodes.resize(static_cast<std::size_t>(opt.minNodes));
      }
    }
    if (opt.ntasksPerNode && opt.minNodes != 0 && *opt.ntasksPerNode != opt.ntasks / opt.minNodes) {
      if (opt.ntasks > *opt.ntasksPerNode) {
        warn("srun: Warning: can't honor --ntasks-per-node set to " +
             std::to_string(*opt.ntasksPerNode) + " which doesn't match the requested tasks " +
             std::to_string(opt.ntasks) + " with the number of requested nodes " +
             std::to_string(opt.minNodes) + ". Ignoring --ntasks-per-node.");
      }
      opt.ntasksPerNode.reset();
    }
  }
  if (opt.ntasksPerNode && !opt.ntasksSet) {
    opt.ntasks = opt.minNodes * *opt.ntasksPerNode;
    opt.ntasksSet = true;
  }

  // --- create_srun_job inside an allocation (src/srun/libsrun/srun_job.c) ---
  if (opt.nodesFromEnvironment && opt.minNodes > allocNodes) {
    warn(
        "srun: error: SLURM_JOB_NUM_NODES environment variable conflicts with allocated node "
        "count (" +
        std::to_string(opt.minNodes) + " != " + std::to_string(allocNodes) + ").");
    opt.minNodes = allocNodes;
    if (!opt.ntasksSet) opt.ntasks = opt.minNodes;
  }

  // job_step_create_allocation: -x trims the allocation srun works from; rank order stands for
  // Slurm's node order throughout (rank hostnames sort in rank order).
  std::int64_t hosts = allocNodes;
  if (!opt.exclude.empty()) {
    std::vector<std::string> remaining = allocation.nodes;
    for (const std::string& name : opt.exclude) {
      const auto it = std::find(remaining.begin(), remaining.end(), name);
      if (it != remaining.end()) {
        remaining.erase(it);
        --hosts;
      }
      if (std::find(requiredNodes.begin(), requiredNodes.end(), name) != requiredNodes.end()) {
        return invalidArgument("Requested node " + name +
                               " is also in the excluded list.\nsrun: error: Job not submitted.");
      }
    }
    if (!opt.nodesSet) {
      opt.minNodes = (opt.ntasksSet && opt.ntasks < hosts) ? opt.ntasks : hosts;
      opt.nodesSet = true;
    }
    if (opt.maxNodes == 0) opt.maxNodes = opt.minNodes;
    if (opt.maxNodes > 0 && opt.maxNodes < hosts) hosts = opt.maxNodes;
    if (remaining.empty()) return invalidArgument("Hostlist is empty!  Can't run job.");
    if (!requiredNodes.empty()) {
      // Too few required nodes: srun tops the list up with the first nodes left.
      for (const std::string& node : remaining) {
        if (static_cast<std::int64_t>(requiredNodes.size()) >= hosts) break;
        if (std::find(requiredNodes.begin(), requiredNodes.end(), node) == requiredNodes.end()) {
          requiredNodes.push_back(node);
        }
      }
    } else {
      if (static_cast<std::int64_t>(remaining.size()) > hosts) {
        remaining.resize(static_cast<std::size_t>(std::max<std::int64_t>(hosts, 0)));
      }
      requiredNodes = remaining;
    }
  } else {
    if (!opt.nodesSet) {
      opt.nodesSet = true;
      opt.minNodes = (opt.ntasksSet && opt.ntasks < hosts) ? opt.ntasks : hosts;
    }
    if (opt.maxNodes == 0) opt.maxNodes = opt.minNodes;
    if (opt.maxNodes > 0 && opt.maxNodes < hosts) hosts = opt.maxNodes;
  }
  if (hosts <= 0) return invalidArgument("No nodes in allocation, can't run job");

  // _job_create_structure / _set_ntasks: without -n the step gets a task per node, or as many
  // as --ntasks-per-node or -c make room for.
  if (!opt.ntasksSet) {
    std::int64_t count = 0;
    if (opt.ntasksPerNode) {
      count = hosts * *opt.ntasksPerNode;
    } else if (opt.cpusSet) {
      count = allocNodes * (cpusPerNode / opt.cpusPerTask);
    }
    opt.ntasks = count < hosts ? hosts : count;
  }
  if (opt.minNodes > hosts) {
    std::string message = "Only allocated " + std::to_string(hosts) + " nodes asked for " +
                          std::to_string(opt.minNodes);
    if (!opt.exclude.empty()) message += "\nsrun: error: Are required nodes explicitly excluded?";
    return invalidArgument(message);
  }

  // --- launch_common_create_job_step (src/srun/libsrun/launch.c) ---
  if (opt.minNodes != 0 && opt.maxNodes != 0 && opt.minNodes > opt.maxNodes) {
    return invalidArgument("Minimum node count > maximum node count (" +
                           std::to_string(opt.minNodes) + " > " + std::to_string(opt.maxNodes) +
                           ")");
  }
  std::int64_t stepMax = hosts;
  if (opt.maxNodes != 0 && opt.maxNodes < stepMax) stepMax = opt.maxNodes;
  std::int64_t stepMin = hosts;
  if (opt.minNodes != 0 && opt.minNodes < stepMin) stepMin = opt.minNodes;
  const std::int64_t cpuCount = opt.cpusSet ? opt.ntasks * opt.cpusPerTask : opt.ntasks;
  const std::int64_t ntasks = opt.ntasks;
  if (dist.nodeLevel == TaskDistribution::NodeLevel::kDefault) {
    // srun's default: cyclic while there is at most one task per node, block otherwise. This
    // is why the reference's 4 tasks on 4 nodes show SLURM_DISTRIBUTION=cyclic.
    dist.nodeLevel = ntasks <= stepMin ? TaskDistribution::NodeLevel::kCyclic
                                       : TaskDistribution::NodeLevel::kBlock;
    dist.name = ntasks <= stepMin ? "cyclic" : "block";
  }

  // --- slurmctld: step_create / _pick_step_nodes (src/slurmctld/step_mgr.c) ---
  const std::int64_t jobId = allocation.jobId;
  const auto refuse = [jobId](std::string_view reason) {
    return Status(StatusCode::kResourceExhausted, unableToCreateStep(jobId, reason));
  };
  const auto busy = [jobId]() {
    return Status(StatusCode::kUnavailable,
                  "Job " + std::to_string(jobId) +
                      " step creation temporarily disabled, retrying (Requested nodes are busy)");
  };
  const auto inAllocation = [&allocation](const std::string& name) {
    return std::find(allocation.nodes.begin(), allocation.nodes.end(), name) !=
           allocation.nodes.end();
  };
  if (stepMax < stepMin) return refuse("Node count specification invalid");

  std::vector<bool> available(allocation.nodes.size(), true);
  for (const std::string& name : opt.exclude) {
    // slurmctld knows no node by a name outside the job: kubeslurm's nodes are the job's pods.
    if (!inAllocation(name)) return refuse("Invalid node name specified");
    for (std::size_t i = 0; i < allocation.nodes.size(); ++i) {
      if (allocation.nodes[i] == name) available[i] = false;
    }
  }
  if (cpusPerNode > 0) {
    // Every node has the same CPUs, so a CPU count is a node count.
    stepMin = std::max((cpuCount + cpusPerNode - 1) / cpusPerNode, stepMin);
    if (dist.pack) stepMax = stepMin;
    if (stepMax < stepMin) return refuse(kTooManyCpus);
  }

  std::vector<bool> picked(allocation.nodes.size(), false);
  const auto countOf = [](const std::vector<bool>& set) {
    return static_cast<std::int64_t>(std::count(set.begin(), set.end(), true));
  };
  if (!requiredNodes.empty()) {
    std::vector<bool> selected(allocation.nodes.size(), false);
    for (const std::string& name : requiredNodes) {
      if (!inAllocation(name)) return refuse(kNodeConfigUnavailable);
      for (std::size_t i = 0; i < allocation.nodes.size(); ++i) {
        if (allocation.nodes[i] == name) selected[i] = true;
      }
    }
    const std::int64_t selectedCount = countOf(selected);
    if (selectedCount > stepMax) return refuse(kNodeConfigUnavailable);
    if (stepMin != 0 && selectedCount > stepMin) {
      // More nodes named than needed: the step picks among them.
      available = selected;
    } else {
      picked = selected;
      for (std::size_t i = 0; i < available.size(); ++i) {
        if (selected[i]) available[i] = false;
      }
    }
  }
  const auto pickFirst = [&](std::int64_t count) {
    for (std::size_t i = 0; i < available.size() && count > 0; ++i) {
      if (!available[i]) continue;
      available[i] = false;
      picked[i] = true;
      --count;
    }
  };
  if (stepMin != 0) {
    const std::int64_t pickedCount = countOf(picked);
    const std::int64_t availableCount = countOf(available);
    if (availableCount + pickedCount < stepMin) return busy();
    if (stepMin - pickedCount > 0) {
      // _opt_node_cnt aims at the maximum when a range was given; _pick_step_nodes_cpus then
      // takes the first nodes, which on equal nodes always cover the CPUs still needed.
      std::int64_t target = stepMax > stepMin ? stepMax : stepMin;
      target = std::min(target - pickedCount, availableCount);
      const std::int64_t cpusNeeded =
          std::max<std::int64_t>(cpuCount - pickedCount * cpusPerNode, 0);
      if (cpusNeeded > target && (cpusNeeded + target - 1) / target <= 1024 &&
          cpusNeeded > target * cpusPerNode) {
        if (stepMax <= availableCount + pickedCount) return refuse(kTooManyCpus);
        return busy();
      }
      pickFirst(target);
    }
  }
  if (cpuCount > countOf(picked) * cpusPerNode && stepMax > countOf(picked)) {
    while (cpuCount > countOf(picked) * cpusPerNode && countOf(available) > 0 &&
           countOf(picked) < stepMax) {
      pickFirst(1);
    }
  }
  if (cpuCount > countOf(picked) * cpusPerNode) return refuse(kNodeConfigUnavailable);
  const std::int64_t nodeCount = countOf(picked);
  if (ntasks > nodeCount * kMaxTasksPerNode) return refuse("Task count specification invalid");

  // _calc_cpus_per_task: the CPUs each task gets, when every task can have them.
  std::int64_t cpusPerTask = 0;
  if (cpuCount != 0 && cpuCount % ntasks == 0) {
    cpusPerTask = std::max<std::int64_t>(cpuCount / ntasks, 1);
    if (cpusPerTask > cpusPerNode || ntasks - (cpusPerNode / cpusPerTask) * allocNodes > 0) {
      cpusPerTask = 0;
    }
  }
  if (cpusPerTask == 0) cpusPerTask = 1;

  // --- step_layout_create / slurm_step_layout_create ---
  std::vector<std::int64_t> slots;
  std::vector<std::size_t> stepRanks;
  for (std::size_t i = 0; i < picked.size(); ++i) {
    if (!picked[i]) continue;
    std::int64_t taskSlots = std::max<std::int64_t>(cpusPerNode / cpusPerTask, 1);
    // srun passes --ntasks-per-node as the plane size of a non-plane distribution, which caps
    // the tasks each node takes before it over-subscribes.
    if (opt.ntasksPerNode && dist.nodeLevel != TaskDistribution::NodeLevel::kPlane) {
      taskSlots = std::min(taskSlots, *opt.ntasksPerNode * cpusPerTask);
    }
    slots.push_back(taskSlots);
    stepRanks.push_back(i);
  }
  std::vector<std::vector<std::uint32_t>> tids = distributeTasks(slots, ntasks, dist);
  for (std::size_t n = 0; n < stepRanks.size(); ++n) {
    if (tids[n].empty()) continue;
    StepNode node;
    node.rank = static_cast<std::uint32_t>(stepRanks[n]);
    node.hostname = allocation.nodes[stepRanks[n]];
    node.tasks = std::move(tids[n]);
    layout.nodes.push_back(std::move(node));
  }
  layout.ntasks = static_cast<std::uint32_t>(ntasks);
  layout.distribution = dist.name;
  if (dist.pack != dist.noPack) layout.distribution += dist.pack ? ",pack" : ",nopack";
  if (dist.nodeLevel == TaskDistribution::NodeLevel::kPlane) layout.planeSize = dist.planeSize;
  if (opt.ntasksPerNode) layout.ntasksPerNode = static_cast<std::uint32_t>(*opt.ntasksPerNode);
  return layout;
}

std::map<std::string, std::string> taskEnvironment(const StepAllocation& allocation,
                                                   const StepRequest& request,
                                                   const StepLayout& layout, std::uint32_t stepId,
                                                   std::uint32_t stepNodeIndex,
                                                   std::uint32_t localId) {
  std::map<std::string, std::string> env;
  const StepNode& node = layout.nodes.at(stepNodeIndex);
  std::vector<std::string> hostnames;
  std::vector<std::uint32_t> tasksPerNode;
  for (const StepNode& stepNode : layout.nodes) {
    hostnames.push_back(stepNode.hostname);
    tasksPerNode.push_back(static_cast<std::uint32_t>(stepNode.tasks.size()));
  }
  const std::string nodes = std::to_string(layout.nodes.size());
  const std::string ntasks = std::to_string(layout.ntasks);
  const std::string tasksText = slurm::formatRepeatedCounts(tasksPerNode);

  // env_array_for_step (srun, before the launch).
  env["SLURM_STEP_ID"] = std::to_string(stepId);
  env["SLURM_STEPID"] = std::to_string(stepId);
  env["SLURM_STEP_NODELIST"] = slurm::compressHostlist(hostnames);
  env["SLURM_STEP_NUM_NODES"] = nodes;
  env["SLURM_STEP_NUM_TASKS"] = ntasks;
  env["SLURM_STEP_TASKS_PER_NODE"] = tasksText;
  env["SLURM_NNODES"] = nodes;
  env["SLURM_NTASKS"] = ntasks;
  env["SLURM_NPROCS"] = ntasks;
  env["SLURM_TASKS_PER_NODE"] = tasksText;
  // _set_env_vars: the old hetjob spelling of the job's CPUs, set when srun finds it unset.
  const std::vector<std::uint32_t> jobCpus(allocation.nodes.size(), allocation.cpusPerNode);
  env["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"] = slurm::formatRepeatedCounts(jobCpus);

  // srun's setup_env, from its options.
  if (!layout.distribution.empty()) env["SLURM_DISTRIBUTION"] = layout.distribution;
  if (layout.distribution == "plane")
    env["SLURM_DIST_PLANESIZE"] = std::to_string(layout.planeSize);
  if (request.cpusPerTask) env["SLURM_CPUS_PER_TASK"] = std::to_string(*request.cpusPerTask);
  if (layout.ntasksPerNode) env["SLURM_NTASKS_PER_NODE"] = std::to_string(*layout.ntasksPerNode);

  // slurmstepd's exec_task, on the task's own node.
  env["SLURMD_NODENAME"] = node.hostname;
  env["SLURM_NODEID"] = std::to_string(stepNodeIndex);
  env["SLURM_PROCID"] = std::to_string(node.tasks.at(localId));
  env["SLURM_LOCALID"] = std::to_string(localId);
  std::string gtids;
  for (std::uint32_t task : node.tasks) {
    if (!gtids.empty()) gtids += ',';
    gtids += std::to_string(task);
  }
  env["SLURM_GTIDS"] = gtids;
  // A step without -c takes the whole node's CPUs; with -c srun implies --exact and the step
  // gets only what its tasks here need.
  std::uint64_t cpusOnNode = allocation.cpusPerNode;
  if (request.cpusPerTask) {
    cpusOnNode = std::min<std::uint64_t>(
        cpusOnNode, static_cast<std::uint64_t>(node.tasks.size()) * *request.cpusPerTask);
  }
  env["SLURM_CPUS_ON_NODE"] = std::to_string(cpusOnNode);
  if (allocation.gpusPerNode > 0) {
    // A step asking for no GPUs gets all of the job's on its nodes (the reference's step saw
    // CUDA_VISIBLE_DEVICES=0,...,7).
    const std::string ordinals = gpuOrdinals(allocation.gpusPerNode);
    env["CUDA_VISIBLE_DEVICES"] = ordinals;
    env["GPU_DEVICE_ORDINAL"] = ordinals;
    env["SLURM_STEP_GPUS"] = ordinals;
  }
  return env;
}

std::vector<std::string> taskEnvironmentRemovals() { return {"ROCR_VISIBLE_DEVICES"}; }

std::map<std::string, std::string> exportedEnvironment(
    const std::map<std::string, std::string>& environment,
    const std::vector<std::string>& exportTokens) {
  if (exportTokens.empty()) return environment;
  std::map<std::string, std::string> exported;
  bool all = false;
  for (const std::string& token : exportTokens) {
    if (equalsIgnoreCase(token, "ALL")) all = true;
    if (equalsIgnoreCase(token, "NONE")) break;
    if (const auto equals = token.find('='); equals != std::string::npos) {
      exported[token.substr(0, equals)] = token.substr(equals + 1);
    } else if (const auto it = environment.find(token); it != environment.end()) {
      exported[token] = it->second;
    }
  }
  for (const auto& [name, value] : environment) {
    if (all || name.starts_with("SLURM")) exported[name] = value;
  }
  return exported;
}

std::string gpuOrdinals(std::uint32_t count) {
  std::string text;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (i > 0) text += ',';
    text += std::to_string(i);
  }
  return text;
}

}  // namespace kubeslurm::step
