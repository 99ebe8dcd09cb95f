// `scancel`: ends jobs by setting spec.cancel on their SlurmJob (a JSON merge patch); the
// operator stops the pods (SIGTERM, then SIGKILL after KillWait) and marks the job CANCELLED.
// Cancelling an array's own object cancels every task; one task is cancelled on its object.
//
// Sources of truth (Slurm 22.05.8): src/scancel/opt.c (options, job id syntax, the "no job
// identification" check), src/scancel/scancel.c (ids alone go to slurmctld as strings; with a
// filter or a step the job list is loaded, ids verified, then filtered; which errors are quiet
// and which set the exit code), src/slurmctld/job_mgr.c (job_str_signal, job_signal: the codes
// an id gets back), and ../shared/reference/slurm-22.05.md ("scancel 99999 is silent, rc=0").
#include <algorithm>
#include <cstdlib>
#include <istream>
#include <map>
#include <ostream>
#include <set>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/array_task_lists.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::cli {
namespace {

using slurm::JobState;

// slurm_errno.h; scancel exits with the code, which the process status keeps modulo 256.
constexpr int kInvalidJobId = 2017;
constexpr int kAlreadyDone = 2021;
constexpr int kSigInt = 2;
constexpr int kSigKill = 9;
constexpr int kSigTerm = 15;

const auto kScancelLongOptions = std::to_array<LongOptionSpec>({
    {"account", 1, 'A'},     {"batch", 0, 'b'},      {"ctld", 0, '\x01'},     {"full", 0, 'f'},
    {"help", 0, '\x02'},     {"hurry", 0, 'H'},      {"interactive", 0, 'i'}, {"cluster", 1, 'M'},
    {"clusters", 1, 'M'},    {"jobname", 1, 'n'},    {"me", 0, '\x03'},       {"name", 1, 'n'},
    {"nodelist", 1, 'w'},    {"partition", 1, 'p'},  {"qos", 1, 'q'},         {"quiet", 0, 'Q'},
    {"reservation", 1, 'R'}, {"sibling", 1, '\x04'}, {"signal", 1, 's'},      {"state", 1, 't'},
    {"usage", 0, '\x05'},    {"user", 1, 'u'},       {"verbose", 0, 'v'},     {"version", 0, 'V'},
    {"wckey", 1, '\x06'},
});

// One job id argument (opt.c _xlate_job_step_ids).
struct JobSpec {
  std::string text;  // as sent to slurmctld: "5", "5_3", "5_[1-3]", "5_*"
  std::int64_t jobId = 0;
  bool allTasks = false;             // "N_*"
  std::vector<std::int64_t> tasks;   // "N_T", "N_[...]"
  std::optional<std::int64_t> step;  // "N.S"
};

struct ScancelOptions {
  std::optional<std::string> account, name, partition, qos, reservation, user, wckey, nodelist;
  std::optional<JobState> state;
  std::optional<int> signal;
  bool batch = false;
  bool full = false;
  bool interactive = false;
  int verbose = 0;
  std::vector<JobSpec> jobs;
  bool hasFilter() const {
    return account || name || partition || qos || reservation || user || wckey || nodelist || state;
  }
};

// Returns an error line when an argument is not a job id.
std::optional<std::string> addJobSpecs(const std::string& arg, std::vector<JobSpec>& jobs) {
  std::string rest = arg;
  while (true) {
    const std::string bad = "scancel: error: Invalid job id " + rest + "\n";
    JobSpec spec;
    char* end = nullptr;
    spec.jobId = std::strtol(rest.c_str(), &end, 10);
    if (spec.jobId <= 0) return bad;
    std::string tail = end;
    if (tail.starts_with("_[")) {
      const std::size_t close = tail.find(']');
      if (close == std::string::npos || close + 1 != tail.size()) return bad;
      // The cluster's MaxArraySize is the operator's; an id past it names no task there.
      auto tasks = slurm::parseArraySpec(tail.substr(2, close - 2), slurm::kMaxMaxArraySize);
      if (!tasks.isOk()) return bad;
      for (const std::uint32_t t : tasks->taskIds) spec.tasks.push_back(t);
      spec.text = rest;
      jobs.push_back(std::move(spec));
      return std::nullopt;
    }
    if (tail.starts_with("_*")) {
      spec.allTasks = true;
      tail.erase(0, 2);
    } else if (tail.starts_with("_")) {
      const long task = std::strtol(tail.c_str() + 1, &end, 10);
      if (task < 0) return bad;
      spec.tasks.push_back(task);
      tail = end;
    }
    if (tail.starts_with(".")) {
      const long step = std::strtol(tail.c_str() + 1, &end, 10);
      if (step < 0) return bad;
      spec.step = step;
      tail = end;
    }
    spec.text = rest.substr(0, rest.size() - tail.size());
    jobs.push_back(std::move(spec));
    if (tail.empty()) return std::nullopt;
    // "5,6" is two ids; Slurm shifts the rest into the next argument.
    if (tail.front() != ',') return bad;
    rest = tail.substr(1);
    if (rest.empty()) return std::nullopt;
  }
}

JobState stateOf(const api::SlurmJobObject& job) { return api::jobStateOf(*job.status); }

bool finished(const api::SlurmJobObject& job) { return slurm::isFinished(stateOf(job)); }

// The jobs as slurmctld's job list holds them: every job and started task, and the record of
// an array whose tasks do not exist yet (its pending "meta" record).
struct Record {
  const api::SlurmJobObject* job = nullptr;
  std::int64_t jobId = 0;
  std::int64_t arrayJobId = 0;
  std::optional<std::int64_t> taskId;
  bool meta = false;  // an array's own object standing for its tasks
  std::string idText;
};

std::vector<Record> recordsOf(const std::vector<api::SlurmJobObject>& jobs) {
  std::set<std::int64_t> arraysWithTasks;
  for (const api::SlurmJobObject& job : jobs) {
    if (job.status && job.status->arrayJobId && !isArrayParent(job)) {
      arraysWithTasks.insert(*job.status->arrayJobId);
    }
  }
  std::vector<Record> records;
  for (const api::SlurmJobObject& job : jobs) {
    if (!job.status || !job.status->jobId) continue;
    Record r;
    r.job = &job;
    r.jobId = *job.status->jobId;
    r.idText = std::to_string(r.jobId);
    if (isArrayParent(job)) {
      if (arraysWithTasks.contains(r.jobId)) continue;
      r.meta = true;
      r.arrayJobId = r.jobId;
      r.idText += "_[" + slurm::formatArrayTasks(job.request.array->taskIds, std::nullopt, 0) + "]";
    } else if (job.status->arrayJobId && job.status->arrayTaskId) {
      r.arrayJobId = *job.status->arrayJobId;
      r.taskId = *job.status->arrayTaskId;
      r.idText = std::to_string(r.arrayJobId) + "_" + std::to_string(*r.taskId);
    }
    records.push_back(r);
  }
  std::ranges::sort(records, {}, &Record::jobId);
  return records;
}

// scancel.c _verify_job_ids / _cancel_jobid_by_state: whether a record is one the id names.
bool names(const JobSpec& spec, const Record& r) {
  if (spec.allTasks) return r.arrayJobId == spec.jobId;
  if (spec.tasks.empty()) {
    return r.jobId == spec.jobId || (r.arrayJobId == spec.jobId && !spec.step);
  }
  if (r.arrayJobId != spec.jobId) return false;
  return std::ranges::any_of(spec.tasks, [&r](std::int64_t t) {
    if (r.taskId) return *r.taskId == t;
    return r.meta && std::ranges::find(r.job->request.array->taskIds, t) !=
                         r.job->request.array->taskIds.end();
  });
}

bool intersects(const std::string& nodes, const std::string& wanted) {
  auto a = slurm::Hostlist::parse(nodes);
  auto b = slurm::Hostlist::parse(wanted);
  if (!a.isOk() || !b.isOk()) return false;
  std::set<std::string> hosts;
  a->forEachHost([&hosts](std::string_view h) {
    hosts.emplace(h);
    return true;
  });
  bool found = false;
  b->forEachHost([&](std::string_view h) {
    found = hosts.contains(std::string(h));
    return !found;
  });
  return found;
}

// scancel.c _filter_job_records: only active jobs, every filter must match.
bool passesFilters(const Record& r, const ScancelOptions& o) {
  const JobState state = stateOf(*r.job);
  if (state != JobState::kPending && state != JobState::kRunning && state != JobState::kSuspended) {
    return false;
  }
  const slurm::JobRequest& q = r.job->request;
  if (o.account && q.account != *o.account) return false;
  if (o.name && q.jobName != *o.name) return false;
  if (o.partition && q.partition != *o.partition) return false;
  if (o.qos && q.qos != *o.qos) return false;
  // kubeslurm has no reservations or wckeys: a job has none, which matches no name.
  if (o.reservation || o.wckey) return false;
  if (o.state && state != *o.state) return false;
  if (o.user && r.job->user != *o.user) return false;
  if (o.nodelist && !intersects(r.job->status->nodeList, *o.nodelist)) return false;
  return true;
}

class Canceller {
 public:
  Canceller(const ScancelOptions& options, CliIo& io, ClusterSession& session)
      : o_(options), io_(io), session_(session) {}

  int rc = 0;

  // _cancel_job_id's report: quiet for a job that is gone or done unless -v; a kill (the
  // default signal) ignores those two.
  void report(const std::string& idText, int code, const std::string& message) {
    if (code == 0) return;
    if (o_.verbose > 0 || (code != kInvalidJobId && code != kAlreadyDone)) {
      io_.err << "scancel: error: Kill job error on job id " << idText << ": " << message << "\n";
    }
    if ((code == kInvalidJobId || code == kAlreadyDone) &&
        o_.signal.value_or(kSigKill) == kSigKill) {
      return;
    }
    rc = std::max(rc, code > 255 ? code % 256 : code);
  }

  void announce(const std::string& idText) {
    if (o_.verbose <= 0) return;
    const std::string type = o_.full ? "full " : (o_.batch ? "batch " : "");
    if (o_.signal) {
      io_.err << "scancel: Signal " << *o_.signal << " to " << type << "job " << idText << "\n";
    } else {
      io_.err << "scancel: Terminating " << type << "job " << idText << "\n";
    }
  }

  // -i: scancel.c _confirmation. End of input declines (Slurm would ask forever).
  bool confirm(const Record& r) {
    if (!o_.interactive) return true;
    while (true) {
      io_.out << "Cancel job_id=" << r.idText << " name=" << r.job->request.jobName
              << " partition=" << r.job->request.partition << " [y/n]? " << std::flush;
      std::string line;
      if (!std::getline(io_.in, line)) return false;
      if (!line.empty() && (line[0] == 'y' || line[0] == 'Y')) return true;
      if (!line.empty() && (line[0] == 'n' || line[0] == 'N')) return false;
    }
  }

  // Sets spec.cancel; 0, or 1 after an API error (reported here).
  int patch(const api::SlurmJobObject& job, const std::string& idText) {
    auto patched = session_.writer->patch(kube::resources::slurmJobs(), job.namespaceName, job.name,
                                          nlohmann::json{{"spec", {{"cancel", true}}}});
    if (patched.isOk()) return 0;
    io_.err << "scancel: error: Kill job error on job id " << idText << ": "
            << patched.status().message() << "\n";
    rc = std::max(rc, 1);
    return 1;
  }

  // Tasks of `array` it has not made yet: added to its spec.cancelTasks, which the operator
  // makes cancelled (addArrayTasks). 0, or 1 after an API error (reported here).
  int cancelUnmade(const api::SlurmJobObject& array, const std::vector<std::uint32_t>& tasks,
                   const std::string& idText) {
    const Status added = addArrayTasks(session_, array, api::kCancelTasksField, tasks);
    if (added.isOk()) return 0;
    io_.err << "scancel: error: Kill job error on job id " << idText << ": " << added.message()
            << "\n";
    rc = std::max(rc, 1);
    return 1;
  }

  // The slurmctld outcome of one record: already done, or cancelled now.
  int cancel(const api::SlurmJobObject& job, const std::string& idText) {
    if (finished(job)) return kAlreadyDone;
    if (patch(job, idText) != 0) return -1;
    return 0;
  }

 private:
  const ScancelOptions& o_;
  CliIo& io_;
  ClusterSession& session_;
};

// scancel.c _signal_job_by_str: each id as a string, as slurmctld's job_str_signal takes it.
void cancelByIds(const std::vector<api::SlurmJobObject>& jobs, const ScancelOptions& o,
                 Canceller& canceller) {
  const std::map<std::int64_t, UnmadeTasks> unmade = unmadeArrayTasks(jobs);
  // The tasks not made yet that the ids name, per array: one patch each, after the others.
  struct UnmadeCancel {
    std::string idText;  // the first id that named one, for an error
    std::vector<std::uint32_t> tasks;
  };
  std::map<std::int64_t, UnmadeCancel> unmadeCancels;
  for (const JobSpec& spec : o.jobs) {
    canceller.announce(spec.text);
    int code = 0;
    if (spec.tasks.empty()) {
      // A job, or an array as a whole: its own object if it is there.
      const api::SlurmJobObject* own = nullptr;
      for (const api::SlurmJobObject& job : jobs) {
        if (job.status && job.status->jobId == spec.jobId &&
            (!spec.allTasks || isArrayParent(job))) {
          own = &job;
        }
      }
      if (own != nullptr && (!spec.allTasks || isArrayParent(*own))) {
        code = canceller.cancel(*own, spec.text);
      } else {
        int signalled = 0;
        int done = 0;
        for (const api::SlurmJobObject& job : jobs) {
          if (!job.status || job.status->arrayJobId != spec.jobId || isArrayParent(job)) continue;
          ++signalled;
          const int c = canceller.cancel(job, spec.text);
          if (c == kAlreadyDone) ++done;
        }
        code = signalled == 0 ? kInvalidJobId : (done == signalled ? kAlreadyDone : 0);
      }
    } else {
      // job_str_signal's task list: each task on its own, the worst outcome kept. A task the
      // operator has not made yet is in the array's record, as in Slurm's meta record: the array
      // is told to make it cancelled (one patch for all of them).
      const auto notMade = unmade.find(spec.jobId);
      std::vector<std::uint32_t> unmadeNamed;
      for (const std::int64_t t : spec.tasks) {
        const api::SlurmJobObject* task = nullptr;
        for (const api::SlurmJobObject& job : jobs) {
          if (job.status && job.status->arrayJobId == spec.jobId && job.status->arrayTaskId == t &&
              !isArrayParent(job)) {
            task = &job;
          }
        }
        if (task == nullptr && notMade != unmade.end() &&
            std::ranges::binary_search(notMade->second.taskIds, t)) {
          unmadeNamed.push_back(static_cast<std::uint32_t>(t));
          continue;
        }
        const int c = task == nullptr ? kInvalidJobId : canceller.cancel(*task, spec.text);
        code = std::max(code, c);
      }
      if (!unmadeNamed.empty()) {
        UnmadeCancel& pending = unmadeCancels[spec.jobId];
        if (pending.idText.empty()) pending.idText = spec.text;
        pending.tasks.insert(pending.tasks.end(), unmadeNamed.begin(), unmadeNamed.end());
      }
    }
    if (code > 0) {
      canceller.report(spec.text, code,
                       code == kAlreadyDone ? "Job/step already completing or completed"
                                            : "Invalid job id specified");
    }
  }
  for (const auto& [arrayId, cancel] : unmadeCancels) {
    const auto array = unmade.find(arrayId);
    // The stand-in is the array's object (its raw spec and resourceVersion) with a pending
    // status. An API error is reported there, as a task's is by cancel().
    if (array != unmade.end()) {
      (void)canceller.cancelUnmade(array->second.standIn, cancel.tasks, cancel.idText);
    }
  }
}

// scancel.c's path with filters: load, verify the ids, filter, cancel pending jobs first.
void cancelFiltered(const std::vector<api::SlurmJobObject>& jobs, const ScancelOptions& o,
                    CliIo& io, Canceller& canceller) {
  std::vector<Record> records = recordsOf(jobs);
  std::erase_if(records, [](const Record& r) { return finished(*r.job); });
  std::vector<bool> referenced(records.size(), o.jobs.empty());
  for (const JobSpec& spec : o.jobs) {
    bool found = false;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (names(spec, records[i])) {
        found = true;
        referenced[i] = true;
      }
    }
    if (found) continue;
    canceller.rc = std::max(canceller.rc, 1);
    if (o.verbose < 0) continue;
    if (spec.step) {
      io.err << "scancel: error: Kill job error on job step id " << spec.text
             << ": Invalid job id specified\n";
    } else {
      io.err << "scancel: error: Kill job error on job id " << spec.text
             << ": Invalid job id specified\n";
    }
  }
  std::vector<const Record*> selected;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (referenced[i] && passesFilters(records[i], o)) selected.push_back(&records[i]);
  }
  if (selected.empty() && o.verbose > 0 && o.hasFilter()) {
    std::string what;
    if (o.account) what += "account=" + *o.account + " ";
    if (o.name) what += "job_name=" + *o.name + " ";
    if (o.nodelist) what += "nodelist=" + *o.nodelist + " ";
    if (o.partition) what += "partition=" + *o.partition + " ";
    if (o.qos) what += "qos=" + *o.qos + " ";
    if (o.reservation) what += "reservation=" + *o.reservation + " ";
    if (o.state) what += "state=" + std::string(slurm::jobStateName(*o.state)) + " ";
    if (o.user) what += "user_name=" + *o.user + " ";
    if (o.wckey) what += "wckey=" + *o.wckey + " ";
    io.err << "scancel: error: No active jobs match ALL job filters, including: " << what << "\n";
  }
  // kubeslurm records no job steps, so there is no step to signal: say so rather than cancel
  // the whole job the user did not name.
  for (const JobSpec& spec : o.jobs) {
    if (!spec.step) continue;
    if (std::ranges::any_of(selected, [&spec](const Record* r) { return names(spec, *r); })) {
      io.err << "scancel: error: Kill job error on job step id " << spec.text
             << ": kubeslurm does not track job steps; cancel the job instead\n";
      canceller.rc = std::max(canceller.rc, 1);
    }
  }
  for (const bool pendingPass : {true, false}) {
    for (const Record* r : selected) {
      if ((stateOf(*r->job) == JobState::kPending) != pendingPass) continue;
      if (!o.jobs.empty() &&
          std::ranges::none_of(o.jobs, [r](const JobSpec& s) { return !s.step && names(s, *r); })) {
        continue;
      }
      if (!canceller.confirm(*r)) continue;
      canceller.announce(r->idText);
      const int code = canceller.cancel(*r->job, r->idText);
      if (code > 0) canceller.report(r->idText, code, "Job/step already completing or completed");
    }
  }
}

std::string usage() {
  return "Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]\n"
         "               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]\n"
         "               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]\n"
         "               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]\n"
         "               [job_id[_array_id][.step_id]]\n";
}

}  // namespace

int runScancelWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect) {
  std::vector<std::string> scancelArgs = args;
  auto flags = takeKubeFlags(scancelArgs, /*allowAllNamespaces=*/false);
  if (!flags.isOk()) {
    io.err << "scancel: error: " << flags.status().message() << "\n";
    return 1;
  }
  const GetoptResult got =
      getoptLong("scancel", scancelArgs, "A:bfHiM:n:p:Qq:R:s:t:u:vVw:", kScancelLongOptions);
  if (got.error) {
    io.err << *got.error << "\nTry \"scancel --help\" for more information\n";
    return 1;
  }
  ScancelOptions o;
  bool me = false;
  for (const ParsedOption& option : got.options) {
    const std::string value = option.value.value_or("");
    switch (option.key) {
      case 'A':
        o.account = lowercaseAscii(value);
        break;
      case 'b':
        o.batch = true;
        break;
      case 'f':
        o.full = true;
        break;
      case 'H':
      case '\x01':
        break;
      case 'i':
        o.interactive = true;
        break;
      case 'n':
        o.name = value;
        break;
      case 'p':
        o.partition = value;
        break;
      case 'Q':
        o.verbose = -1;
        break;
      case 'q':
        o.qos = lowercaseAscii(value);
        break;
      case 'R':
        o.reservation = value;
        break;
      case 's': {
        const int signal = slurm::signalNumber(value);
        if (signal == 0) {
          io.err << "Unknown job signal: " << value << "\n";
          return 1;
        }
        // The operator ends a job's pods (SIGTERM, then SIGKILL); it cannot deliver any other
        // signal to the processes yet.
        if (signal != kSigKill && signal != kSigTerm && signal != kSigInt) {
          io.err << "scancel: error: --signal=" << value
                 << " is not supported by kubeslurm: it can only end a job (KILL, TERM, INT)\n";
          return 1;
        }
        o.signal = signal;
        break;
      }
      case 't': {
        const auto state = slurm::parseJobState(value);
        if (!state) {
          io.err << "Invalid job state specified: " << value
                 << "\nValid job states are PENDING, RUNNING, and SUSPENDED\n";
          return 1;
        }
        o.state = state;
        break;
      }
      case 'u':
        o.user = value;
        break;
      case '\x03':
        me = true;
        break;
      case 'v':
        ++o.verbose;
        break;
      case 'V':
        io.out << "slurm 22.05.8\n";
        return 0;
      case 'w':
        o.nodelist = value;
        break;
      case '\x06':
        o.wckey = value;
        break;
      case '\x02':
      case '\x05':
        io.out << usage();
        return 0;
      default: {
        const std::string shown = option.longName.empty() ? "-" + std::string(1, option.key)
                                                          : "--" + std::string(option.longName);
        io.err << "scancel: error: " << shown << " is not supported by kubeslurm\n";
        return 1;
      }
    }
  }
  for (const std::string& operand : got.operands) {
    if (auto bad = addJobSpecs(operand, o.jobs)) {
      io.err << *bad;
      return 1;
    }
  }
  if (o.jobs.empty() && !o.hasFilter() && !me) {
    io.err << "scancel: error: No job identification provided\n";
    return 1;
  }
  auto session = connect(*flags, io);
  if (!session.isOk()) {
    io.err << "scancel: error: " << session.status().message() << "\n";
    return 1;
  }
  // --me: the caller, which for kubeslurm is the kubeconfig user.
  if (me) o.user = session->user;

  auto list = kube::listAll(*session->reader, kube::resources::slurmJobs(), session->namespaceName,
                            kube::ListOptions{});
  if (!list.isOk()) {
    io.err << "scancel: error: " << list.status().message() << "\n";
    return 1;
  }
  std::vector<api::SlurmJobObject> jobs = decodeJobList(*list);
  // A job that named no partition runs in the default one, and -p and -i see that one (as
  // squeue shows it). Only spec.cancel is ever written back, so this stays local.
  auto partitions =
      kube::listAll(*session->reader, kube::resources::partitions(), "", kube::ListOptions{});
  if (partitions.isOk()) {
    const std::string fallback = partitionDefaults(*partitions).defaultPartition;
    for (api::SlurmJobObject& job : jobs) {
      if (job.request.partition.empty()) job.request.partition = fallback;
    }
  }
  Canceller canceller(o, io, *session);
  const bool steps =
      std::ranges::any_of(o.jobs, [](const JobSpec& s) { return s.step.has_value(); });
  // opt.c has_default_opt: ids alone (no filter, -b, -i or -s) go to slurmctld as strings,
  // which is why an unknown id is silent there and an error otherwise.
  if (!o.hasFilter() && !o.batch && !o.interactive && !o.signal && !steps) {
    cancelByIds(jobs, o, canceller);
  } else {
    cancelFiltered(jobs, o, io, canceller);
  }
  return canceller.rc;
}

int runScancel(const std::vector<std::string>& args, CliIo& io) {
  return runScancelWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::cli
