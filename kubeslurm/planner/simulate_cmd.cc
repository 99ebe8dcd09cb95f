// `kubeslurm simulate --trace FILE ...`: replays a workload trace through the real scheduler in
// simulated time and reports waits, slowdown, utilization and fairness per policy.
// docs/plan-and-simulate.md documents the options, the mapping rules and the output.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/planner/planner.h"
#include "kubeslurm/sim/alibaba.h"
#include "kubeslurm/sim/simulator.h"
#include "kubeslurm/sim/swf.h"
#include "kubeslurm/sim/workload.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/topology_conf.h"

namespace kubeslurm::planner {
namespace {

constexpr std::string_view kUsage =
    "Usage: kubeslurm simulate --trace FILE [options]\n"
    "\n"
    "Replays a workload trace through the scheduler in simulated time.\n"
    "\n"
    "  --trace FILE             SWF log (.swf) or Alibaba GPU v2023 pod list (.csv)\n"
    "  --format swf|alibaba     trace format (default: from the file's extension)\n"
    "  --node-list FILE         Alibaba node list (default: the trace's sibling\n"
    "                           *_node_list_gpu_node.csv)\n"
    "  --nodes N|HOSTLIST       cluster nodes (SWF default: the header's MaxProcs/MaxNodes)\n"
    "  --gpus-per-node G        GPUs per node; one SWF processor is one GPU (default 1)\n"
    "  --topology FILE          topology.conf for the nodes (name them with --nodes HOSTLIST)\n"
    "  --policy P[,P...]        fifo, priority, backfill or all (default backfill)\n"
    "  --accounts RULE          none, user, group, queue, partition, qos, FIELD%N[@SEED],\n"
    "                           job%N[@SEED] (default none)\n"
    "  --time-limit-factor F    limit = run time x F where the trace has none (default 1)\n"
    "  --max-jobs N             replay only the first N records\n"
    "  --interval SECONDS       also schedule every SECONDS while jobs wait (default 0: off)\n"
    "  --bf-max-job-test N      backfill budget: jobs tested per pass (default 500)\n"
    "  --bf-window SECONDS      backfill window (default 86400)\n"
    "  --bf-resolution SECONDS  backfill time resolution (default 60)\n"
    "  -o, --output text|json   report format (default text)\n"
    "  --no-progress            no progress line on a terminal\n";

struct SimArgs {
  std::string trace;
  std::string format;
  std::string nodeList;
  std::string nodes;
  std::string gpusPerNode;
  std::string topology;
  std::string policies = "backfill";
  std::string accounts = "none";
  std::string timeLimitFactor;
  std::string maxJobs;
  std::string interval;
  std::string bfMaxJobTest;
  std::string bfWindow;
  std::string bfResolution;
  bool json = false;
  bool progress = true;
  bool help = false;
};

struct Flag {
  std::string_view name;
  std::string SimArgs::*field;
};

constexpr std::array<Flag, 14> kFlags = {{
    {"--trace", &SimArgs::trace},
    {"--format", &SimArgs::format},
    {"--node-list", &SimArgs::nodeList},
    {"--nodes", &SimArgs::nodes},
    {"--gpus-per-node", &SimArgs::gpusPerNode},
    {"--topology", &SimArgs::topology},
    {"--policy", &SimArgs::policies},
    {"--accounts", &SimArgs::accounts},
    {"--time-limit-factor", &SimArgs::timeLimitFactor},
    {"--max-jobs", &SimArgs::maxJobs},
    {"--interval", &SimArgs::interval},
    {"--bf-max-job-test", &SimArgs::bfMaxJobTest},
    {"--bf-window", &SimArgs::bfWindow},
    {"--bf-resolution", &SimArgs::bfResolution},
}};

std::string parseArgs(const std::vector<std::string>& args, SimArgs& out) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (arg == "--no-progress") {
      out.progress = false;
      continue;
    }
    std::string output;
    bool isOutput = false;
    if (arg == "-o" || arg == "--output") {
      if (i + 1 >= args.size()) return arg + " needs a value";
      output = args[++i];
      isOutput = true;
    } else if (arg.starts_with("--output=")) {
      output = arg.substr(9);
      isOutput = true;
    } else if (arg.starts_with("-o") && !arg.starts_with("--")) {
      output = arg.substr(2);
      isOutput = true;
    }
    if (isOutput) {
      if (output != "json" && output != "text") {
        return "unknown output format \"" + output + "\" (json or text)";
      }
      out.json = output == "json";
      continue;
    }
    bool matched = false;
    for (const Flag& flag : kFlags) {
      if (arg == flag.name) {
        if (i + 1 >= args.size()) return std::string(flag.name) + " needs a value";
        out.*flag.field = args[++i];
        matched = true;
      } else if (arg.size() > flag.name.size() && arg.starts_with(flag.name) &&
                 arg[flag.name.size()] == '=') {
        out.*flag.field = arg.substr(flag.name.size() + 1);
        matched = true;
      }
      if (matched) break;
    }
    if (!matched) return "unexpected argument \"" + arg + "\"";
  }
  if (!out.help && out.trace.empty()) return "--trace FILE is required";
  return "";
}

template <typename T>
std::optional<T> parseNumberArg(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  T value{};
  // std::sto* accept leading spaces and trailing junk; insist on the whole text instead.
  if constexpr (std::is_floating_point_v<T>) {
    char* end = nullptr;
    value = static_cast<T>(std::strtod(text.c_str(), &end));
    used = static_cast<std::size_t>(end - text.c_str());
  } else {
    char* end = nullptr;
    if (text.front() == '-') return std::nullopt;
    const unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
    used = static_cast<std::size_t>(end - text.c_str());
    if (parsed > std::numeric_limits<T>::max()) return std::nullopt;
    value = static_cast<T>(parsed);
  }
  if (used != text.size()) return std::nullopt;
  return value;
}

std::string_view policyName(core::SchedulingPolicy policy) {
  switch (policy) {
    case core::SchedulingPolicy::kFifo:
      return "fifo";
    case core::SchedulingPolicy::kPriority:
      return "priority";
    case core::SchedulingPolicy::kBackfill:
      return "backfill";
  }
  return "backfill";
}

std::optional<std::vector<core::SchedulingPolicy>> parsePolicies(std::string_view text) {
  std::vector<core::SchedulingPolicy> policies;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    if (name == "all") {
      policies.insert(policies.end(),
                      {core::SchedulingPolicy::kFifo, core::SchedulingPolicy::kPriority,
                       core::SchedulingPolicy::kBackfill});
    } else if (name == "fifo") {
      policies.push_back(core::SchedulingPolicy::kFifo);
    } else if (name == "priority") {
      policies.push_back(core::SchedulingPolicy::kPriority);
    } else if (name == "backfill") {
      policies.push_back(core::SchedulingPolicy::kBackfill);
    } else {
      return std::nullopt;
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return policies;
}

std::string baseName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// ".../alibaba-gpu-v2023-openb_pod_list_default.csv" ->
// ".../alibaba-gpu-v2023-openb_node_list_gpu_node.csv"
std::optional<std::string> siblingNodeList(const std::string& podList) {
  const std::size_t slash = podList.rfind('/');
  const std::size_t nameStart = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t at = podList.find("pod_list_", nameStart);
  if (at == std::string::npos) return std::nullopt;
  return podList.substr(0, at) + "node_list_gpu_node.csv";
}

// Everything the replays share, read and checked once.
struct Setup {
  sim::Trace trace;
  sim::WorkloadOptions workload;
  sim::SimulationOptions simulation;
  std::vector<core::SchedulingPolicy> policies;
  std::string format;
  std::string nodeListPath;
  std::string topologyPath;
};

class Command {
 public:
  Command(const SimArgs& args, PlannerIo& io) : args_(args), io_(io) {}

  int run() {
    if (!prepare()) return exitCode_;
    nlohmann::json results = nlohmann::json::array();
    bool first = true;
    for (core::SchedulingPolicy policy : setup_.policies) {
      sim::WorkloadOptions options = setup_.workload;
      options.config.policy = policy;
      auto workload = sim::buildWorkload(setup_.trace, options);
      if (!workload.isOk()) return fail(workload.status().message());
      if (first && !args_.json) printHeader(*workload);
      first = false;
      sim::SimulationOptions simulation = setup_.simulation;
      if (args_.progress && io_.errIsTerminal) simulation.progress = progressPrinter(policy);
      const auto begin = std::chrono::steady_clock::now();
      auto result = sim::simulate(*workload, simulation);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (simulation.progress) io_.err << "\r\033[K" << std::flush;
      if (!result.isOk()) return fail(result.status().message());
      if (result->rejectedStarts > 0) {
        io_.err << "kubeslurm simulate: warning: " << policyName(policy) << ": the scheduler "
                << "returned " << result->rejectedStarts << " invalid starts (refused):\n";
        for (const std::string& line : result->diagnostics) io_.err << "  " << line << "\n";
      }
      if (args_.json) {
        results.push_back(resultJson(policy, *workload, *result, wall));
      } else {
        rows_.push_back({policy, result->metrics, result->planCalls, wall});
      }
    }
    if (args_.json) {
      printJson(results);
    } else {
      printTable();
    }
    return 0;
  }

 private:
  struct Row {
    core::SchedulingPolicy policy;
    sim::Metrics metrics;
    std::uint64_t planCalls;
    double wall;
  };

  int fail(const std::string& message, int code = 1) {
    io_.err << "kubeslurm simulate: error: " << message << "\n";
    exitCode_ = code;
    return code;
  }

  StatusOr<std::string> read(const std::string& path) const {
    auto text = io_.readFile(path);
    if (!text.isOk()) return text.status();
    return std::move(*text);
  }

  bool prepare() {
    setup_.format = args_.format;
    if (setup_.format.empty()) {
      if (args_.trace.ends_with(".swf")) {
        setup_.format = "swf";
      } else if (args_.trace.ends_with(".csv")) {
        setup_.format = "alibaba";
      } else {
        fail("cannot tell the trace's format from its name: give --format swf|alibaba", 2);
        return false;
      }
    }
    if (setup_.format != "swf" && setup_.format != "alibaba") {
      fail("unknown --format \"" + setup_.format + "\" (swf or alibaba)", 2);
      return false;
    }
    return prepareNumbers() && prepareTrace() && prepareCluster();
  }

  bool prepareNumbers() {
    auto policies = parsePolicies(args_.policies);
    if (!policies) {
      fail("unknown --policy \"" + args_.policies + "\" (fifo, priority, backfill, all)", 2);
      return false;
    }
    setup_.policies = *policies;
    auto rule = sim::parseAccountRule(args_.accounts);
    if (!rule.isOk()) {
      fail(rule.status().message(), 2);
      return false;
    }
    setup_.workload.accounts = *rule;
    struct Number {
      const std::string& text;
      std::string_view flag;
      std::function<bool(const std::string&)> apply;
    };
    core::Budget& budget = setup_.simulation.budget;
    const std::array<Number, 6> numbers = {{
        {args_.timeLimitFactor, "--time-limit-factor",
         [&](const std::string& t) {
           auto v = parseNumberArg<double>(t);
           if (!v || !(*v > 0) || !std::isfinite(*v)) return false;
           setup_.workload.timeLimitFactor = *v;
           return true;
         }},
        {args_.gpusPerNode, "--gpus-per-node",
         [&](const std::string& t) {
           auto v = parseNumberArg<std::uint32_t>(t);
           if (!v || *v == 0 || *v > 1024) return false;
           setup_.workload.cluster.gpusPerNode = *v;
           return true;
         }},
        {args_.interval, "--interval",
         [&](const std::string& t) {
           auto v = parseNumberArg<std::uint32_t>(t);
           if (!v) return false;
           setup_.simulation.scheduleInterval = *v;
           return true;
         }},
        {args_.bfMaxJobTest, "--bf-max-job-test",
         [&](const std::string& t) {
           auto v = parseNumberArg<std::uint32_t>(t);
           if (!v || *v == 0) return false;
           budget.maxJobsTested = *v;
           return true;
         }},
        {args_.bfWindow, "--bf-window",
         [&](const std::string& t) {
           auto v = parseNumberArg<std::uint32_t>(t);
           if (!v || *v == 0) return false;
           budget.window = *v;
           return true;
         }},
        {args_.bfResolution, "--bf-resolution",
         [&](const std::string& t) {
           auto v = parseNumberArg<std::uint32_t>(t);
           if (!v || *v == 0) return false;
           budget.resolution = *v;
           return true;
         }},
    }};
    const auto* bad = std::find_if(numbers.begin(), numbers.end(), [](const Number& number) {
      return !number.text.empty() && !number.apply(number.text);
    });
    if (bad != numbers.end()) {
      fail("invalid " + std::string(bad->flag) + " \"" + bad->text + "\"", 2);
      return false;
    }
    return true;
  }

  bool prepareTrace() {
    std::size_t maxRecords = 0;
    if (!args_.maxJobs.empty()) {
      auto v = parseNumberArg<std::size_t>(args_.maxJobs);
      if (!v || *v == 0) {
        fail("invalid --max-jobs \"" + args_.maxJobs + "\"", 2);
        return false;
      }
      maxRecords = *v;
    }
    auto text = read(args_.trace);
    if (!text.isOk()) {
      fail(text.status().message());
      return false;
    }
    auto trace = setup_.format == "swf" ? sim::parseSwf(*text, {.maxRecords = maxRecords})
                                        : sim::parseAlibabaPods(*text, {.maxRecords = maxRecords});
    if (!trace.isOk()) {
      fail(args_.trace + ": " + trace.status().message());
      return false;
    }
    setup_.trace = std::move(*trace);
    if (setup_.format == "alibaba" && args_.nodes.empty()) {
      std::optional<std::string> path = args_.nodeList.empty()
                                            ? siblingNodeList(args_.trace)
                                            : std::optional<std::string>(args_.nodeList);
      if (!path) {
        fail("an Alibaba pod list needs --node-list FILE (or --nodes)", 2);
        return false;
      }
      auto nodesText = read(*path);
      if (!nodesText.isOk()) {
        fail(nodesText.status().message() +
             (args_.nodeList.empty() ? " (give the node list with --node-list FILE)" : ""));
        return false;
      }
      auto nodes = sim::parseAlibabaNodes(*nodesText);
      if (!nodes.isOk()) {
        fail(*path + ": " + nodes.status().message());
        return false;
      }
      setup_.trace.nodes = std::move(*nodes);
      setup_.nodeListPath = *path;
    }
    return true;
  }

  bool prepareCluster() {
    sim::ClusterShape& shape = setup_.workload.cluster;
    if (!args_.nodes.empty()) {
      shape.useTraceNodes = false;
      if (auto count = parseNumberArg<std::uint32_t>(args_.nodes)) {
        if (*count == 0 || *count > 1000000) {
          fail("invalid --nodes \"" + args_.nodes + "\"", 2);
          return false;
        }
        shape.nodeCount = *count;
      } else {
        auto names = slurm::expandHostlist(args_.nodes);
        if (!names.isOk() || names->empty()) {
          fail("invalid --nodes \"" + args_.nodes + "\" (a count or a hostlist)", 2);
          return false;
        }
        shape.nodeNames = std::move(*names);
      }
    }
    if (!args_.topology.empty()) {
      auto text = read(args_.topology);
      if (!text.isOk()) {
        fail(text.status().message());
        return false;
      }
      auto topology = slurm::parseTopologyConf(*text);
      if (!topology.isOk()) {
        fail(args_.topology + ": " + topology.status().message());
        return false;
      }
      shape.topology = std::move(*topology);
      setup_.topologyPath = args_.topology;
    }
    return true;
  }

  std::function<void(const sim::Progress&)> progressPrinter(core::SchedulingPolicy policy) {
    return [this, policy, last = -1](const sim::Progress& p) mutable {
      const int percent = p.total == 0 ? 100
                                       : static_cast<int>(100.0 * static_cast<double>(p.finished) /
                                                          static_cast<double>(p.total));
      if (percent == last) return;
      last = percent;
      io_.err << "\r\033[K" << policyName(policy) << ": " << percent << "% (" << p.finished << "/"
              << p.total << " jobs done, " << p.pending << " waiting, day " << p.elapsed / 86400
              << ")" << std::flush;
    };
  }

  void printHeader(const sim::Workload& workload) {
    std::uint64_t gpus = 0;
    for (const core::Node& node : workload.cluster.nodes) gpus += node.allocatable.gpus;
    const std::size_t accounts = workload.cluster.accounts.size() - 1;  // less root
    io_.out << "trace:       " << baseName(args_.trace) << " (" << setup_.format << "), "
            << workload.jobs.size() << " jobs replayed";
    if (setup_.trace.skipped + workload.dropped > 0) {
      io_.out << ", " << setup_.trace.skipped + workload.dropped << " left out (see notes)";
    }
    io_.out << "\ncluster:     " << workload.cluster.nodes.size() << " nodes, " << gpus << " GPUs";
    if (!setup_.nodeListPath.empty()) io_.out << " (" << baseName(setup_.nodeListPath) << ")";
    if (!setup_.topologyPath.empty()) io_.out << ", topology " << baseName(setup_.topologyPath);
    io_.out << "\ntime limits: the trace's requested time, else run time x "
            << setup_.workload.timeLimitFactor << "\naccounts:    " << workload.accountRule << " ("
            << accounts << (accounts == 1 ? " account" : " accounts") << ")\n";
    for (const std::string& note : workload.notes) io_.out << "note:        " << note << "\n";
    io_.out << "\n";
  }

  static std::string fixed(double value, int decimals) {
    std::array<char, 64> buffer{};
    const int written = std::snprintf(buffer.data(), buffer.size(), "%.*f", decimals, value);
    if (written < 0) return "?";
    return buffer.data();
  }

  static std::string pad(const std::string& text, std::size_t width) {
    return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
  }

  void printTable() {
    io_.out << "policy     jobs  mean wait   p50 wait   p95 wait   p99 wait  mean bsld  "
               "GPU util  node util    makespan  backfilled  plan calls   wall s\n";
    for (const Row& row : rows_) {
      const sim::Metrics& m = row.metrics;
      std::string name(policyName(row.policy));
      name.resize(8, ' ');
      io_.out << name << pad(std::to_string(m.jobs), 6) << pad(fixed(m.wait.mean, 0), 11)
              << pad(fixed(m.wait.p50, 0), 11) << pad(fixed(m.wait.p95, 0), 11)
              << pad(fixed(m.wait.p99, 0), 11) << pad(fixed(m.boundedSlowdown.mean, 2), 11)
              << pad(fixed(100 * m.gpuUtilization, 1) + "%", 10)
              << pad(fixed(100 * m.nodeUtilization, 1) + "%", 11)
              << pad(std::to_string(m.makespan), 12) << pad(std::to_string(m.backfilled), 12)
              << pad(std::to_string(row.planCalls), 12) << pad(fixed(row.wall, 2), 9) << "\n";
    }
    io_.out << "(waits and makespan in seconds; bsld: bounded slowdown, 10 s bound)\n";
    for (const Row& row : rows_) {
      const sim::Metrics& m = row.metrics;
      if (m.neverStarted > 0 || m.timedOut > 0) {
        io_.out << policyName(row.policy) << ": " << m.timedOut << " jobs killed at their limit, "
                << m.neverStarted << " never started\n";
      }
      if (m.accounts.size() < 2) continue;
      io_.out << "\n"
              << policyName(row.policy) << ": fair share vs usage (Jain's index over usage/share: "
              << fixed(m.jainFairness, 4) << ")\n"
              << "account              jobs   share   usage  mean wait\n";
      for (const sim::AccountUsage& a : m.accounts) {
        std::string name = a.account;
        if (name.size() < 16) name.resize(16, ' ');
        io_.out << name << pad(std::to_string(a.jobs), 9) << pad(fixed(a.share, 4), 8)
                << pad(fixed(a.usage, 4), 8) << pad(fixed(a.meanWait, 0), 11) << "\n";
      }
    }
  }

  static nlohmann::json distributionJson(const sim::Distribution& d) {
    return {{"mean", d.mean}, {"p50", d.p50}, {"p95", d.p95}, {"p99", d.p99}, {"max", d.max}};
  }

  nlohmann::json resultJson(core::SchedulingPolicy policy, const sim::Workload& workload,
                            const sim::SimulationResult& result, double wall) {
    const sim::Metrics& m = result.metrics;
    nlohmann::json accounts = nlohmann::json::array();
    for (const sim::AccountUsage& a : m.accounts) {
      accounts.push_back({{"account", a.account},
                          {"jobs", a.jobs},
                          {"share", a.share},
                          {"usage", a.usage},
                          {"gpuSeconds", a.gpuSeconds},
                          {"meanWait", a.meanWait}});
    }
    if (header_.is_null()) {
      std::uint64_t gpus = 0;
      for (const core::Node& node : workload.cluster.nodes) gpus += node.allocatable.gpus;
      header_ = {{"trace", args_.trace},
                 {"format", setup_.format},
                 {"jobs", workload.jobs.size()},
                 {"skipped", setup_.trace.skipped},
                 {"dropped", workload.dropped},
                 {"notes", workload.notes},
                 {"nodes", workload.cluster.nodes.size()},
                 {"gpus", gpus},
                 {"timeLimitFactor", setup_.workload.timeLimitFactor},
                 {"accountRule", workload.accountRule}};
    }
    return {{"policy", policyName(policy)},
            {"jobs", m.jobs},
            {"started", m.started},
            {"completed", m.completed},
            {"timedOut", m.timedOut},
            {"cancelled", m.cancelled},
            {"neverStarted", m.neverStarted},
            {"backfilled", m.backfilled},
            {"requeues", m.requeues},
            {"makespan", m.makespan},
            {"gpuSeconds", m.gpuSeconds},
            {"gpuUtilization", m.gpuUtilization},
            {"nodeUtilization", m.nodeUtilization},
            {"wait", distributionJson(m.wait)},
            {"boundedSlowdown", distributionJson(m.boundedSlowdown)},
            {"accounts", std::move(accounts)},
            {"jainFairness", m.jainFairness},
            {"planCalls", result.planCalls},
            {"preemptions", result.preemptions},
            {"rejectedStarts", result.rejectedStarts},
            {"wallSeconds", wall}};
  }

  void printJson(nlohmann::json results) {
    nlohmann::json out = header_.is_null() ? nlohmann::json::object() : header_;
    out["results"] = std::move(results);
    io_.out << out.dump(2) << "\n";
  }

  const SimArgs& args_;
  PlannerIo& io_;
  Setup setup_;
  std::vector<Row> rows_;
  nlohmann::json header_;
  int exitCode_ = 0;
};

}  // namespace

int runSimulate(const std::vector<std::string>& args, PlannerIo& io) {
  SimArgs parsed;
  if (std::string problem = parseArgs(args, parsed); !problem.empty()) {
    io.err << "kubeslurm simulate: error: " << problem << "\n" << kUsage;
    return 2;
  }
  if (parsed.help) {
    io.out << kUsage;
    return 0;
  }
  Command command(parsed, io);
  return command.run();
}

}  // namespace kubeslurm::planner
