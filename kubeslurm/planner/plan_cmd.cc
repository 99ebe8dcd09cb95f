// `kubeslurm plan --scenario FILE.yaml [-o text|json]`: what the scheduler would do now with the
// cluster and queue a scenario file declares. One line per pending job, in the file's order:
//
//   JOBID start NODELIST [backfill] [partition=NAME]   (NAME: for a job of several partitions)
//   JOBID pending REASON [(DETAIL)] [est. start TIME on NODELIST]
//   JOBID preempted by JOBID REQUEUE|CANCEL        (running jobs the plan would preempt)
//
// NODELIST is a Slurm hostlist in node-table order, as scontrol's NodeList shows it; TIME is
// Slurm's timestamp in local time. docs/plan-and-simulate.md documents both formats.
#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/core/model.h"
#include "kubeslurm/planner/planner.h"
#include "kubeslurm/planner/scenario.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::planner {
namespace {

constexpr std::string_view kUsage =
    "Usage: kubeslurm plan --scenario FILE.yaml [-o text|json]\n"
    "\n"
    "Loads a what-if scenario (nodes, topology, partitions, accounts, QOS, running and pending\n"
    "jobs) and prints what the scheduler would decide now, one line per pending job:\n"
    "  JOBID start NODELIST [backfill] [partition=NAME]\n"
    "  JOBID pending REASON [(DETAIL)] [est. start TIME on NODELIST]\n"
    "  JOBID preempted by JOBID REQUEUE|CANCEL\n"
    "Format: docs/plan-and-simulate.md; examples: deploy/examples/scenario.yaml,\n"
    "deploy/examples/scenario-limits.yaml (QOS, limits, jobs of several partitions)\n";

struct PlanArgs {
  std::string scenario;
  bool json = false;
  bool help = false;
};

// Returns an error message, or "" when the arguments are good.
std::string parseArgs(const std::vector<std::string>& args, PlanArgs& out) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto value = [&](std::string_view name, std::string& into) -> std::string {
      if (arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=') {
        into = arg.substr(name.size() + 1);
        return "";
      }
      if (i + 1 >= args.size()) return std::string(name) + " needs a value";
      into = args[++i];
      return "";
    };
    std::string output;
    std::string problem;
    if (arg == "-h" || arg == "--help") {
      out.help = true;
    } else if (arg == "--scenario" || arg.starts_with("--scenario=")) {
      problem = value("--scenario", out.scenario);
    } else if (arg == "-o" || arg == "--output" || arg.starts_with("--output=")) {
      problem = value(arg == "-o" ? "-o" : "--output", output);
      if (problem.empty() && output != "json" && output != "text") {
        problem = "unknown output format \"" + output + "\" (json or text)";
      }
      out.json = output == "json";
    } else if (arg.starts_with("-o") && arg.size() > 2) {
      output = arg.substr(2);
      if (output != "json" && output != "text") {
        problem = "unknown output format \"" + output + "\" (json or text)";
      }
      out.json = output == "json";
    } else {
      problem = "unexpected argument \"" + arg + "\"";
    }
    if (!problem.empty()) return problem;
  }
  if (!out.help && out.scenario.empty()) return "--scenario FILE is required";
  return "";
}

std::string hostlist(const core::Snapshot& snapshot, std::vector<core::NodeIndex> nodes) {
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (core::NodeIndex index : nodes) {
    names.push_back(index < snapshot.nodes.size() ? snapshot.nodes[index].name
                                                  : "#" + std::to_string(index));
  }
  return slurm::compressHostlist(names);
}

std::vector<std::string> rankNames(const core::Snapshot& snapshot,
                                   const std::vector<core::NodeIndex>& nodes) {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (core::NodeIndex index : nodes) {
    names.push_back(index < snapshot.nodes.size() ? snapshot.nodes[index].name
                                                  : "#" + std::to_string(index));
  }
  return names;
}

std::string_view preemptModeName(core::PreemptMode mode) {
  switch (mode) {
    case core::PreemptMode::kOff:
      return "OFF";
    case core::PreemptMode::kRequeue:
      return "REQUEUE";
    case core::PreemptMode::kCancel:
      return "CANCEL";
  }
  return "OFF";
}

struct Decisions {
  std::map<core::JobId, const core::Start*> starts;
  std::map<core::JobId, const core::PendingDecision*> pending;
  std::set<core::JobId> severalPartitions;  // sbatch -p a,b
};

Decisions indexDecisions(const core::Snapshot& snapshot, const core::Plan& plan) {
  Decisions d;
  for (const core::Start& start : plan.starts) d.starts[start.jobId] = &start;
  for (const core::PendingDecision& pending : plan.pending) d.pending[pending.jobId] = &pending;
  for (const core::Job& job : snapshot.jobs) {
    if (!job.otherPartitions.empty()) d.severalPartitions.insert(job.id);
  }
  return d;
}

void printText(const Scenario& scenario, const core::Plan& plan, const PlannerIo& io) {
  const core::Snapshot& snapshot = scenario.snapshot;
  const Decisions decisions = indexDecisions(snapshot, plan);
  for (core::JobId id : scenario.pendingOrder) {
    io.out << id;
    if (auto start = decisions.starts.find(id); start != decisions.starts.end()) {
      io.out << " start " << hostlist(snapshot, start->second->nodes)
             << (start->second->backfilled ? " backfill" : "");
      if (decisions.severalPartitions.contains(id)) {
        io.out << " partition=" << start->second->partition;
      }
      io.out << "\n";
      continue;
    }
    const auto pending = decisions.pending.find(id);
    if (pending == decisions.pending.end()) {
      io.out << " pending None\n";  // the core said nothing about it
      continue;
    }
    const core::PendingDecision& d = *pending->second;
    io.out << " pending " << slurm::pendingReasonName(d.reason);
    if (!d.reasonDetail.empty()) io.out << " (" << d.reasonDetail << ")";
    if (d.estimatedStart) {
      io.out << " est. start " << slurm::formatTimestamp(*d.estimatedStart, io.utcOffsetSeconds);
      if (!d.estimatedNodes.empty()) io.out << " on " << hostlist(snapshot, d.estimatedNodes);
    }
    io.out << "\n";
  }
  for (const core::Preemption& preemption : plan.preemptions) {
    io.out << preemption.victim << " preempted by " << preemption.preemptor << " "
           << preemptModeName(preemption.mode) << "\n";
  }
}

nlohmann::json factorsJson(const core::PriorityFactors& f) {
  return {{"priority", f.priority},   {"age", f.age},
          {"fairshare", f.fairshare}, {"jobSize", f.jobSize},
          {"partition", f.partition}, {"qos", f.qos},
          {"tresGpu", f.tresGpu},     {"nice", f.nice}};
}

void printJson(const Scenario& scenario, const core::Plan& plan, const PlannerIo& io) {
  const core::Snapshot& snapshot = scenario.snapshot;
  const Decisions decisions = indexDecisions(snapshot, plan);
  nlohmann::json jobs = nlohmann::json::array();
  for (core::JobId id : scenario.pendingOrder) {
    nlohmann::json job = {{"id", id}};
    if (auto start = decisions.starts.find(id); start != decisions.starts.end()) {
      job["action"] = "start";
      job["nodes"] = hostlist(snapshot, start->second->nodes);
      job["nodeList"] = rankNames(snapshot, start->second->nodes);
      job["backfilled"] = start->second->backfilled;
      job["partition"] = start->second->partition;
    } else if (auto pending = decisions.pending.find(id); pending != decisions.pending.end()) {
      const core::PendingDecision& d = *pending->second;
      job["action"] = "pending";
      job["reason"] = slurm::pendingReasonName(d.reason);
      job["reasonDetail"] = d.reasonDetail;
      if (d.estimatedStart) {
        job["estimatedStart"] = *d.estimatedStart;
        job["estimatedStartText"] = slurm::formatTimestamp(*d.estimatedStart, io.utcOffsetSeconds);
        job["estimatedNodes"] = hostlist(snapshot, d.estimatedNodes);
      }
    } else {
      job["action"] = "pending";
      job["reason"] = "None";
      job["reasonDetail"] = "";
    }
    if (auto factors = plan.priorities.find(id); factors != plan.priorities.end()) {
      job["priority"] = factorsJson(factors->second);
    }
    jobs.push_back(std::move(job));
  }
  nlohmann::json preemptions = nlohmann::json::array();
  for (const core::Preemption& p : plan.preemptions) {
    preemptions.push_back(
        {{"victim", p.victim}, {"preemptor", p.preemptor}, {"mode", preemptModeName(p.mode)}});
  }
  nlohmann::json fairShare = nlohmann::json::array();
  for (const core::FairShareRow& row : plan.fairShare) {
    fairShare.push_back({{"account", row.account},
                         {"parent", row.parent},
                         {"rawShares", row.rawShares},
                         {"normShares", row.normShares},
                         {"rawUsage", row.rawUsage},
                         {"effectiveUsage", row.effectiveUsage},
                         {"fairShare", row.fairShare}});
  }
  const core::CycleStats& s = plan.stats;
  const nlohmann::json out = {
      {"now", scenario.now},
      {"nowText", slurm::formatTimestamp(scenario.now, io.utcOffsetSeconds)},
      {"jobs", std::move(jobs)},
      {"preemptions", std::move(preemptions)},
      {"fairShare", std::move(fairShare)},
      {"stats",
       {{"jobsConsidered", s.jobsConsidered},
        {"jobsStarted", s.jobsStarted},
        {"jobsBackfilled", s.jobsBackfilled},
        {"reservations", s.reservations},
        {"backfillDepth", s.backfillDepth},
        {"budgetExhausted", s.budgetExhausted}}},
  };
  io.out << out.dump(2) << "\n";
}

}  // namespace

int runPlan(const std::vector<std::string>& args, PlannerIo& io) {
  PlanArgs parsed;
  if (std::string problem = parseArgs(args, parsed); !problem.empty()) {
    io.err << "kubeslurm plan: error: " << problem << "\n" << kUsage;
    return 2;
  }
  if (parsed.help) {
    io.out << kUsage;
    return 0;
  }
  auto text = io.readFile(parsed.scenario);
  if (!text.isOk()) {
    io.err << "kubeslurm plan: error: " << text.status().message() << "\n";
    return 1;
  }
  auto scenario = loadScenario(*text, parsed.scenario, io.now, io.utcOffsetSeconds);
  if (!scenario.isOk()) {
    io.err << "kubeslurm plan: error: " << scenario.status().message() << "\n";
    return 1;
  }
  const core::Plan plan = core::plan(scenario->snapshot, scenario->now, scenario->budget);
  if (parsed.json) {
    printJson(*scenario, plan, io);
  } else {
    printText(*scenario, plan, io);
  }
  return 0;
}

}  // namespace kubeslurm::planner
