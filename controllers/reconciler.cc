#include "controllers/reconciler.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "controllers/arrays.h"
#include "controllers/job_object.h"
#include "controllers/job_request.h"
#include "controllers/rank_tracking.h"
#include "controllers/retention.h"
#include "controllers/will_run.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/kube/run_bounded.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {

namespace {

// bf_max_time for the core, which reads no clock.
class SteadyDeadline final : public core::Deadline {
 public:
  explicit SteadyDeadline(std::chrono::steady_clock::time_point at) : at_(at) {}
  bool passed() const override { return std::chrono::steady_clock::now() >= at_; }

 private:
  std::chrono::steady_clock::time_point at_;
};

using nlohmann::json;

// slurmctld refuses an array with a task id at or past MaxArraySize when it is submitted
// (ESLURM_INVALID_ARRAY), and so does the webhook. An array that reached the cluster without it
// (no webhook, or the limit lowered since) is handled as an object that does not decode: it gets
// its id and the decode's condition, and makes no task, instead of a meta record of up to
// 4,000,000 tasks that every cycle would read. (One that names more tasks than the limit does
// not decode at all: api::setDecodedArrayTaskLimit.)
void setAsideOversizedArrays(ReconcileInput& input, std::uint32_t maxArraySize) {
  input.objects.jobs.eraseIf([&](const api::SlurmJobObject& job) {
    if (!job.request.array || job.request.array->taskIds.empty() ||
        job.request.array->taskIds.back() < maxArraySize || !isArrayParent(job)) {
      return false;
    }
    UndecodableJob bad;
    bad.namespaceName = job.namespaceName;
    bad.name = job.name;
    bad.object = *job.raw;
    bad.message = api::invalidArrayProblem(job.request.arrayText);
    input.undecodable.push_back(std::move(bad));
    return true;
  });
}

// Runs write(i) for every i in [0, n), `parallelism` at a time, each on a worker where nothing
// a library throws (on what an object holds) may end the operator: its failure is the result.
// A result left empty was not sent, the fence being closed.
template <typename Result, typename Write>
std::vector<std::optional<Result>> writeInFlight(std::size_t n, std::size_t parallelism,
                                                 const std::function<bool()>& fenceOpen,
                                                 std::string_view what, Write write) {
  std::vector<std::optional<Result>> results(n);
  (void)kube::runBounded(n, parallelism, false, [&](std::size_t i) {
    if (!fenceOpen()) return Status::ok();
    try {
      results[i] = write(i);
    } catch (const std::exception& e) {
      results[i] = Result(Status(StatusCode::kInternal, std::string(what) + " threw: " + e.what()));
    }
    return Status::ok();
  });
  return results;
}

api::ObjectReference referenceOf(const api::SlurmJobObject& job) {
  const api::ObjectMeta meta = jobMetadata(job);
  return api::ObjectReference{std::string(api::kSlurmJobApiVersion),
                              std::string(api::kSlurmJobKind),
                              job.namespaceName,
                              job.name,
                              meta.uid,
                              meta.resourceVersion};
}

// The time limit TIMEOUT is measured against when the job asked for none (defaultTimeLimit).
// `gang`: the current attempt's ranks, whose partition is the one it runs in.
core::Duration unrequestedLimit(const api::SlurmJobObject& job,
                                const std::vector<api::Partition>& partitions,
                                const GangObservation& gang) {
  std::string name;
  const api::Partition* runsIn = runningPartition(job, gang.partition, partitions, name);
  return defaultTimeLimit(jobPartition(job.request, partitions, nullptr), runsIn);
}

// The partition a job counts in for the metrics (runningPartition's name); "" when it asked for
// none and there is no default.
std::string effectivePartition(const api::SlurmJobObject& job,
                               const std::vector<api::Partition>& partitions) {
  std::string name;
  runningPartition(job, "", partitions, name);
  return name;
}

std::string podJob(const api::Pod& pod) {
  auto it = pod.metadata.labels.find(std::string(podspec::kJobNameLabel));
  return it == pod.metadata.labels.end() ? std::string() : it->second;
}

// Each job's current attempt (status.restarts), for findPartialGangs.
CurrentAttempts currentAttempts(const SharedList<api::SlurmJobObject>& jobs) {
  CurrentAttempts current;
  for (const api::SlurmJobObject& job : jobs) {
    if (job.status && job.status->restarts) {
      current[{job.namespaceName, job.name}] = static_cast<std::uint32_t>(*job.status->restarts);
    }
  }
  return current;
}

// Gangs (namespace, job, attempt) of which no live pod is bound: created by an admission that
// never reached its binds.
std::vector<std::tuple<std::string, std::string, std::uint32_t>> unboundGangs(
    const std::vector<api::Pod>& pods) {
  std::map<std::tuple<std::string, std::string, std::uint32_t>, bool> anyBound;
  for (const api::Pod& pod : pods) {
    if (!isRankPod(pod) || pod.metadata.deletionTimestamp || api::podIsTerminal(pod)) continue;
    const auto attempt = podspec::bookkeepingNumber(pod.metadata.labels, podspec::kAttemptLabel);
    if (!attempt) continue;
    bool& bound = anyBound[{pod.metadata.namespaceName, podJob(pod), *attempt}];
    bound = bound || !pod.spec.nodeName.empty();
  }
  std::vector<std::tuple<std::string, std::string, std::uint32_t>> out;
  for (const auto& [gang, bound] : anyBound) {
    if (!bound) out.push_back(gang);
  }
  return out;
}

}  // namespace

std::string boundedText(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t cut = limit > 3 ? limit - 3 : 0;
  // Not inside a UTF-8 sequence: the API server refuses invalid UTF-8.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

bool setCondition(json& conditions, std::string_view type, std::string_view status,
                  std::string_view reason, std::string_view boundlessMessage, core::Time now,
                  std::optional<std::int64_t> observedGeneration) {
  const std::string message = boundedText(boundlessMessage, kMaxConditionMessage);
  if (!conditions.is_array()) conditions = json::array();
  for (json& c : conditions) {
    if (api::stringMember(c, "type") != type) continue;
    bool changed = false;
    if (observedGeneration) {
      const auto observed = c.find("observedGeneration");
      if (observed == c.end() || *observed != *observedGeneration) {
        c["observedGeneration"] = *observedGeneration;
        changed = true;
      }
    }
    if (api::stringMember(c, "status") != status) {
      c["status"] = std::string(status);
      c["lastTransitionTime"] = api::formatTimestamp(now);
      changed = true;
    }
    if (api::stringMember(c, "reason") != reason) {
      c["reason"] = std::string(reason);
      changed = true;
    }
    if (api::stringMember(c, "message") != message) {
      c["message"] = std::string(message);
      changed = true;
    }
    return changed;
  }
  json condition = {{"type", std::string(type)},
                    {"status", std::string(status)},
                    {"reason", std::string(reason)},
                    {"message", std::string(message)},
                    {"lastTransitionTime", api::formatTimestamp(now)}};
  if (observedGeneration) condition["observedGeneration"] = *observedGeneration;
  conditions.push_back(std::move(condition));
  return true;
}

Reconciler::Reconciler(kube::Reader& reader, kube::Writer& writer, kube::StatusWriter& statusWriter,
                       kube::Binder& binder, JobIdAllocator& ids, kube::EventRecorder* events,
                       ReconcilerOptions options)
    : reader_(reader),
      writer_(writer),
      statusWriter_(statusWriter),
      ids_(ids),
      events_(events),
      options_(std::move(options)),
      binder_(reader, writer, binder,
              [this] {
                GangBinderOptions binderOptions = options_.binder;
                if (!binderOptions.canWrite) binderOptions.canWrite = options_.canWrite;
                return binderOptions;
              }()),
      assumed_(options_.admissionParallelism,
               options_.admitInBackground ? options_.admissionEnded : std::function<void()>()) {}

bool Reconciler::fenceOpen() const { return !options_.canWrite || options_.canWrite(); }

void Reconciler::reset() {
  assumed_.clear();
  usage_.reset();
  holds_.reset();
}

StatusOr<std::uint32_t> Reconciler::recover(const SharedList<api::SlurmJobObject>& jobs) {
  kube::ListOptions list;
  list.labelSelector = std::string(podspec::kJobNameLabel);
  auto listed = kube::listAll(reader_, kube::resources::pods(), "", list);
  if (!listed.isOk()) return listed.status();
  std::vector<api::Pod> pods;
  for (const json& item : (*listed)["items"]) {
    auto pod = api::decodePod(item);
    if (pod.isOk()) pods.push_back(std::move(pod).value());
  }
  std::uint32_t removed = 0;
  std::set<std::tuple<std::string, std::string, std::uint32_t>> gone;
  for (const PartialGang& gang : findPartialGangs(pods, currentAttempts(jobs))) {
    if (!fenceOpen()) return Status(StatusCode::kAborted, "leadership lost during recovery");
    Status done = binder_.removeGang(gang);
    if (!done.isOk()) return done;
    gone.emplace(gang.namespaceName, gang.jobName, gang.attempt);
    ++removed;
  }
  // A gang created whole but never bound is no partial gang to findPartialGangs (admit's retry
  // would bind it), but no admission retries it: its job is "in flight" and out of every plan.
  // At the start of a term nothing of ours is being admitted, so it is an orphan: roll it back.
  for (const auto& [ns, job, attempt] : unboundGangs(pods)) {
    if (gone.contains({ns, job, attempt})) continue;  // removed above, from the same list
    if (!fenceOpen()) return Status(StatusCode::kAborted, "leadership lost during recovery");
    Status done = binder_.rollback(ns, job, attempt);
    if (!done.isOk()) return done;
    ++removed;
  }
  return removed;
}

const api::SlurmJobObject* Reconciler::findJob(const std::string& key) const {
  auto it = jobsByKey_.find(key);
  return it == jobsByKey_.end() ? nullptr : it->second;
}

Reconciler::StatusWrite Reconciler::statusWrite(
    const api::SlurmJobObject& job, const api::SlurmJobStatus& status,
    const std::function<void(json& conditions)>& conditions) {
  StatusWrite write;
  write.job = &job;
  write.toState = status.state;
  api::SlurmJobObject next = job;
  next.status = status;
  write.object = api::encodeSlurmJob(next);
  if (conditions) {
    json& list = write.object["status"]["conditions"];
    if (!list.is_array()) list = json::array();
    conditions(list);
    if (list.empty()) write.object["status"].erase("conditions");
  }
  return write;
}

void Reconciler::sendStatusWrites(std::span<StatusWrite> writes, CycleReport& report) {
  // A patch is what changes on the server: for a job numbered this cycle, from the status the
  // server holds, without the id.
  std::vector<std::string> keys;
  std::vector<json> patches;
  keys.reserve(writes.size());
  patches.reserve(writes.size());
  for (const StatusWrite& write : writes) {
    keys.push_back(jobKey(*write.job));
    const auto unsent = unsentIds_.find(keys.back());
    if (unsent == unsentIds_.end()) {
      patches.push_back(statusPatch(*write.job, write.object));
      continue;
    }
    api::SlurmJobObject held = *write.job;
    held.status = unsent->second.serverStatus;
    patches.push_back(statusPatch(held, write.object));
  }
  std::vector<std::optional<StatusOr<json>>> results = writeInFlight<StatusOr<json>>(
      writes.size(), options_.statusWriteParallelism, [this] { return fenceOpen(); },
      "status write",
      [&](std::size_t i) {
        const api::SlurmJobObject& job = *writes[i].job;
        return statusWriter_.patchStatus(kube::resources::slurmJobs(), job.namespaceName, job.name,
                                         patches[i]);
      });
  for (std::size_t i = 0; i < writes.size(); ++i) {
    StatusWrite& write = writes[i];
    const api::SlurmJobObject& job = *write.job;
    if (!results[i]) {
      report.fenceClosed = true;
      continue;
    }
    const std::string& key = keys[i];
    const auto unsent = unsentIds_.find(key);
    if (!results[i]->isOk()) {
      if (unsent != unsentIds_.end()) {
        // Its id is lost (a gap, as a refused submission leaves in Slurm): the job sits out the
        // rest of the cycle, whose plan counted it numbered, and is numbered again next cycle.
        unsentIds_.erase(unsent);
        lostIds_.insert(key);
        written_.insert(key);
      }
      if (results[i]->status().code() == StatusCode::kAborted) {
        ++report.writeConflicts;
      } else {
        report.errors.push_back("status of " + jobKey(job) + ": " +
                                results[i]->status().toString());
      }
      continue;
    }
    write.written = true;
    write.response = std::move(*results[i]).value();
    written_.insert(key);
    ++report.statusWrites;
    const std::optional<api::SlurmJobStatus>& was =
        unsent == unsentIds_.end() ? job.status : unsent->second.serverStatus;
    if (!was || was->state != write.toState) report.transitions.push_back(write.toState);
    if (unsent != unsentIds_.end()) {
      ++report.idsAssigned;
      recordEvent(job, JobEvent{"Normal", "Submitted",
                                "Submitted batch job " + std::to_string(unsent->second.id)});
      unsentIds_.erase(unsent);
    }
  }
}

bool Reconciler::writeStatus(const api::SlurmJobObject& job, const api::SlurmJobStatus& status,
                             const std::function<void(json& conditions)>& conditions,
                             CycleReport& report) {
  StatusWrite write = statusWrite(job, status, conditions);
  sendStatusWrites({&write, 1}, report);
  return write.written;
}

void Reconciler::deletePods(const std::string& ns, const std::vector<std::string>& names,
                            std::int64_t gracePeriodSeconds, CycleReport& report) {
  for (const std::string& name : names) {
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    kube::DeleteOptions options;
    options.gracePeriodSeconds = gracePeriodSeconds;
    options.propagationPolicy = "Background";
    const Status done = writer_.remove(kube::resources::pods(), ns, name, options);
    if (done.isOk() || done.code() == StatusCode::kNotFound) {
      ++report.podsDeleted;
    } else {
      std::string line = "delete pod ";
      line.append(ns).append("/").append(name).append(": ").append(done.toString());
      report.errors.push_back(std::move(line));
    }
  }
}

void Reconciler::recordEvent(const api::SlurmJobObject& job, const JobEvent& event) {
  if (events_ != nullptr)
    events_->record(referenceOf(job), event.type, event.reason, event.message);
}

void Reconciler::assignIds(ReconcileInput& input, core::Time now, CycleReport& report) {
  // Ids are handed out in order. A job that decodes is numbered in the cycle's input alone
  // (`numbered`): this cycle plans it with its id (instead of a cycle's worth of queue wait for
  // the informer to bring it back), and its first write of the cycle carries the id with what
  // the cycle decided of it (unsentIds_). Written now, together (sendStatusWrites), each outcome
  // then taken in the same order: a job that does not decode (never planned: its id comes with
  // Valid=False), and an array's own record, whose tasks are made with its id later in this
  // cycle and whose id sbatch waits for, not for them.
  struct Numbered {
    const api::SlurmJobObject* job = nullptr;
    std::size_t slot = 0;  // in input.objects.jobs
    std::int64_t id = 0;
    api::SlurmJobStatus status;
  };
  std::vector<Numbered> numbered;
  std::vector<StatusWrite> writes;
  std::vector<const api::SlurmJobObject*> targets;  // writes[i]'s job
  // Where in input.objects.jobs the written job is, for its response to replace it; none for an
  // undecodable job, which is not there (and whose response would not decode either).
  std::vector<std::optional<std::size_t>> slots;
  std::vector<std::int64_t> assigned;
  const auto assign = [&](const api::SlurmJobObject& job, std::optional<std::size_t> slot,
                          const std::string* invalid) {
    if (!fenceOpen()) {  // a new block of ids is a write too
      report.fenceClosed = true;
      return;
    }
    auto id = ids_.next();
    if (!id.isOk()) {
      report.errors.push_back("job id for " + jobKey(job) + ": " + id.status().toString());
      return;
    }
    const api::ObjectMeta meta = jobMetadata(job);
    api::SlurmJobStatus status = submittedStatus(*id, meta.creationTimestamp, now);
    status.partition = submittedPartition(job.request, input.objects.partitions);
    if (const std::optional<ArrayTaskRef> task = arrayTaskOf(job)) {
      // A task was submitted with its array (the age factor counts from then): the array's own
      // status says when, and which ArrayJobId, never what the task's object claims.
      const api::SlurmJobObject* array = findJob(job.namespaceName + "/" + task->arrayName);
      status.arrayJobId = array->status->jobId;
      status.arrayTaskId = task->taskId;
      if (array->status->submitTime) status.submitTime = array->status->submitTime;
    } else if (job.request.array) {
      status.arrayJobId = *id;
    }
    if (slot && !isArrayParent(job)) {
      numbered.push_back({&job, *slot, *id, std::move(status)});
      return;
    }
    writes.push_back(statusWrite(job, status, [&](json& list) {
      if (invalid != nullptr) {
        setCondition(list, kValidCondition, "False", "InvalidSpec", *invalid, now);
      }
    }));
    targets.push_back(&job);
    slots.push_back(slot);
    assigned.push_back(*id);
  };
  // Ids in submission order, whatever order the informer listed the jobs in: Slurm's ids grow
  // with submission, and equal-priority jobs start lowest id first. An array's tasks, created
  // together, are numbered in index order, so that task 0 is the first to run.
  struct Candidate {
    core::Time created = 0;
    std::string group;  // the array's name for a task, else the job's own name
    std::uint32_t task = 0;
    const api::SlurmJobObject* job = nullptr;
    std::size_t slot = 0;  // in input.objects.jobs
  };
  std::vector<Candidate> fresh;
  jobsByKey_.clear();
  const SharedList<api::SlurmJobObject>& jobs = input.objects.jobs;
  for (const api::SlurmJobObject& job : jobs) jobsByKey_.emplace(jobKey(job), &job);
  for (std::size_t slot = 0; slot < jobs.size(); ++slot) {
    const api::SlurmJobObject& job = jobs[slot];
    if (job.status && job.status->jobId) continue;
    Candidate c{jobMetadata(job).creationTimestamp.value_or(now), job.name, 0, &job, slot};
    if (const std::optional<ArrayTaskRef> task = arrayTaskOf(job)) {
      // A task waits for its array: that array object, with its id (the owner's uid, so that
      // a namesake made after a delete is not taken for it).
      const api::SlurmJobObject* array = findJob(job.namespaceName + "/" + task->arrayName);
      if (array == nullptr || !array->status || !array->status->jobId ||
          jobMetadata(*array).uid != task->arrayUid) {
        continue;
      }
      c.group = task->arrayName;
      c.task = task->taskId;
    }
    fresh.push_back(std::move(c));
  }
  std::sort(fresh.begin(), fresh.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.created, a.job->namespaceName, a.group, a.task, a.job->name) <
           std::tie(b.created, b.job->namespaceName, b.group, b.task, b.job->name);
  });
  for (const Candidate& c : fresh) assign(*c.job, c.slot, nullptr);
  // An undecodable job's object lives in `input.undecodable`; the write points at this copy.
  std::vector<std::unique_ptr<api::SlurmJobObject>> undecodable;
  // A job that does not decode still gets an id (it is a job the user submitted: scancel and
  // squeue must reach it) and a condition that says which field is wrong.
  for (UndecodableJob& bad : input.undecodable) {
    auto job = std::make_unique<api::SlurmJobObject>();
    job->name = bad.name;
    job->namespaceName = bad.namespaceName;
    job->raw = bad.object;
    const json& status = bad.object.contains("status") ? bad.object.at("status") : json();
    if (status.is_object() && status.contains("jobId")) {
      json conditions = api::conditionsOf(bad.object);
      if (setCondition(conditions, kValidCondition, "False", "InvalidSpec", bad.message, now) &&
          fenceOpen()) {
        json object = bad.object;
        object["status"]["conditions"] = conditions;
        auto written =
            statusWriter_.updateStatus(kube::resources::slurmJobs(), job->namespaceName, object);
        if (written.isOk()) ++report.statusWrites;
      }
      continue;
    }
    assign(*job, std::nullopt, &bad.message);
    undecodable.push_back(std::move(job));
  }

  // After the loops above, which hold pointers to the jobs these replace (the view keeps its own
  // record until the informer brings the written one).
  for (Numbered& n : numbered) {
    api::SlurmJobObject job = *n.job;
    unsentIds_[jobKey(job)] = UnsentId{job.status, n.id};
    job.status = std::move(n.status);
    input.objects.jobs.replace(n.slot, std::move(job));
  }
  sendStatusWrites(writes, report);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (!writes[i].written) continue;
    ++report.idsAssigned;
    recordEvent(*targets[i], JobEvent{"Normal", "Submitted",
                                      "Submitted batch job " + std::to_string(assigned[i])});
    // The server's copy is current: the array makes its tasks in this cycle.
    if (!slots[i]) continue;
    auto decoded = api::decodeSlurmJob(writes[i].response);
    if (decoded.isOk()) {
      written_.erase(jobKey(*decoded));
      input.objects.jobs.replace(*slots[i], std::move(decoded).value());
    }
  }
}

std::set<std::string> Reconciler::sendIds(const std::vector<std::string>& keys,
                                          CycleReport& report) {
  std::vector<StatusWrite> writes;
  for (const std::string& key : keys) {
    if (!unsentIds_.contains(key) || written_.contains(key)) continue;
    const api::SlurmJobObject* job = findJob(key);
    if (job == nullptr || !job->status) continue;
    writes.push_back(statusWrite(*job, *job->status, nullptr));
  }
  sendStatusWrites(writes, report);
  std::set<std::string> sent;
  for (const StatusWrite& write : writes) {
    if (write.written) sent.insert(jobKey(*write.job));
  }
  return sent;
}

void Reconciler::reconcileStatuses(const ClusterObjects& objects, core::Time now,
                                   CycleReport& report) {
  std::map<std::string, std::vector<api::Pod>> podsByJob;
  for (const api::Pod& pod : objects.pods) {
    if (isRankPod(pod)) podsByJob[pod.metadata.namespaceName + "/" + podJob(pod)].push_back(pod);
  }
  NodeHealth health;
  for (const api::Node& node : objects.nodes) {
    health[node.metadata.name] = api::nodeReadyStatus(node) == "True";
  }
  // Each job's decision first; the status writes go out together (sendStatusWrites), and what
  // follows a write (its event, the pods to delete) is done in job order once it landed.
  struct Outcome {
    const api::SlurmJobObject* job = nullptr;
    StatusDecision decision;
    std::vector<std::string> graceful;
    std::vector<std::string> forced;
    std::optional<std::size_t> write;  // index in `writes` when the status changed
  };
  std::vector<Outcome> outcomes;
  std::vector<StatusWrite> writes;
  for (const api::SlurmJobObject& job : objects.jobs) {
    if (!job.status || !job.status->jobId || written_.contains(jobKey(job))) continue;
    if (job.request.array && isArrayParent(job)) continue;  // expandArrays keeps its status
    // Its pods stand in for a gang still being written: what they show decides nothing yet.
    if (assumed_.admitting(jobKey(job))) continue;
    const std::vector<api::Pod>& pods = podsByJob[jobKey(job)];
    const GangObservation gang = observeGang(job, pods, health);
    JobStatusPolicy policy;
    policy.defaultTimeLimit = unrequestedLimit(job, objects.partitions, gang);
    policy.gracePeriodSeconds = options_.admission.killWaitSeconds;
    policy.requeueOnNodeFail = options_.requeueOnNodeFail;
    policy.gangStartTimeout = options_.gangStartTimeout;
    policy.gangStartRetries = options_.gangStartRetries;
    Outcome outcome{&job, decideStatus(job, gang, now, policy), {}, {}, std::nullopt};
    const StatusDecision& decision = outcome.decision;
    // A pod on a node that is NotReady or gone is deleted at once: no kubelet will confirm a
    // graceful delete, and the pod would hold its name, which the job's next attempt needs. The
    // node lifecycle controller taints such a node, so nothing is placed there meanwhile, and a
    // kubelet that comes back kills containers whose pods no longer exist.
    for (const std::string& name : decision.deletePods) {
      const auto pod = std::find_if(gang.all.begin(), gang.all.end(),
                                    [&](const ObservedPod& p) { return p.name == name; });
      const bool lostNode = pod != gang.all.end() && !pod->nodeName.empty() &&
                            (!health.contains(pod->nodeName) || !health.at(pod->nodeName));
      (lostNode ? outcome.forced : outcome.graceful).push_back(name);
    }
    for (const ObservedPod& pod : gang.all) {
      // Deleted gracefully before its node was lost: it would stay Terminating for good.
      if (pod.deleting && !pod.nodeName.empty() &&
          (!health.contains(pod.nodeName) || !health.at(pod.nodeName))) {
        outcome.forced.push_back(pod.name);
      }
    }
    if (!decision.changed && outcome.graceful.empty() && outcome.forced.empty()) continue;
    if (decision.changed) {
      outcome.write = writes.size();
      writes.push_back(statusWrite(job, decision.status, nullptr));
    }
    outcomes.push_back(std::move(outcome));
  }

  sendStatusWrites(writes, report);
  for (const Outcome& outcome : outcomes) {
    const api::SlurmJobObject& job = *outcome.job;
    const StatusDecision& decision = outcome.decision;
    if (outcome.write) {
      if (!writes[*outcome.write].written) continue;  // nothing follows a status not written
      if (job.status->state == slurm::jobStateName(slurm::JobState::kRunning)) {
        leftRunning_.insert(jobKey(job));
      }
      if (decision.event) recordEvent(job, *decision.event);
      assumed_.forget(jobKey(job));
    }
    if (report.fenceClosed) return;
    deletePods(job.namespaceName, outcome.graceful, decision.gracePeriodSeconds, report);
    deletePods(job.namespaceName, outcome.forced, 0, report);
  }
}

void Reconciler::reportProblems(const ClusterObjects& objects, const SnapshotIndex& index,
                                core::Time now, CycleReport& report) {
  std::map<std::string, const JobProblem*> problems;
  for (const JobProblem& p : index.problems) problems.emplace(p.key, &p);
  for (const api::SlurmJobObject& job : objects.jobs) {
    if (report.fenceClosed) return;
    if (!job.status || !job.status->jobId || written_.contains(jobKey(job))) continue;
    const json& current = api::conditionsOf(*job.raw);
    const json* valid = api::findCondition(current, kValidCondition);
    auto problem = problems.find(jobKey(job));
    json next = current;
    api::SlurmJobStatus status = *job.status;
    bool changed = false;
    if (problem != problems.end()) {
      changed = setCondition(next, kValidCondition, "False", problem->second->reason,
                             problem->second->message, now, jobMetadata(job).generation);
      // squeue's REASON column is where a user looks first.
      if (status.state == slurm::jobStateName(slurm::JobState::kPending) &&
          status.reason != problem->second->reason) {
        status.reason = problem->second->reason;
        status.reasonDetail.clear();
        changed = true;
      }
    } else if (valid != nullptr && valid->value("status", "") == "False") {
      // A non-empty message: v1.20's CRD validation reads an empty string here as null, which
      // metav1.Condition's schema refuses (HTTP 422).
      changed = setCondition(next, kValidCondition, "True", "Valid",
                             "the job can be scheduled as written", now);
    }
    if (changed)
      writeStatus(
          job, status, [&](json& list) { list = next; }, report);
  }
}

void Reconciler::applyPreemptions(const core::Plan& plan, const SnapshotIndex& index,
                                  core::Time now, CycleReport& report) {
  for (const core::Preemption& preemption : plan.preemptions) {
    if (report.fenceClosed) return;
    auto key = index.jobKeys.find(preemption.victim);
    if (key == index.jobKeys.end() || written_.contains(key->second)) continue;
    const api::SlurmJobObject* job = findJob(key->second);
    if (job == nullptr) continue;
    const StatusDecision decision = preemptStatus(*job, preemption.mode, now);
    if (!decision.changed || !writeStatus(*job, decision.status, nullptr, report)) continue;
    leftRunning_.insert(key->second);
    ++report.preemptions;
    if (decision.event) recordEvent(*job, *decision.event);
  }
}

void Reconciler::applyStarts(const core::Plan& plan, const ClusterObjects& objects,
                             const SnapshotIndex& index, core::Time now, CycleReport& report) {
  if (plan.starts.empty()) return;
  // What the caches show of each job's pods (the assumed gangs included: they were added to the
  // input): a gang none of whose pods or names appear is admitted without a list.
  std::unordered_set<std::string> podNames;
  std::unordered_set<std::string> jobsWithPods;
  for (const api::Pod& pod : objects.pods) {
    podNames.insert(pod.metadata.namespaceName + "/" + pod.metadata.name);
    if (const auto label = pod.metadata.labels.find(std::string(podspec::kJobNameLabel));
        label != pod.metadata.labels.end()) {
      jobsWithPods.insert(pod.metadata.namespaceName + "/" + label->second);
    }
  }
  const auto knownPods = [&](const podspec::GangInput& gang) {
    if (jobsWithPods.contains(gang.namespaceName + "/" + gang.jobName)) return KnownPods::kUnknown;
    for (std::uint32_t rank = 0; rank < gang.nodes.size(); ++rank) {
      if (podNames.contains(gang.namespaceName + "/" + podspec::rankPodName(gang.jobName, rank))) {
        return KnownPods::kUnknown;
      }
    }
    return KnownPods::kNone;
  };
  const auto refused = [&](const api::SlurmJobObject& job, const std::string& key,
                           const Status& why) {
    ++report.admissionFailures;
    if (why.code() == StatusCode::kInvalidArgument) {
      // The job cannot run as written (no image, a template that sets our variables...).
      admissionFailed(job, why, now, report);
    } else {
      report.errors.push_back("start of " + key + ": " + why.toString());
    }
  };
  // A job numbered this cycle starts once its id is written: its pods carry the id.
  std::vector<std::string> numbered;
  for (const core::Start& start : plan.starts) {
    const auto key = index.jobKeys.find(start.jobId);
    if (key != index.jobKeys.end() && unsentIds_.contains(key->second)) {
      numbered.push_back(key->second);
    }
  }
  const std::set<std::string> idsWritten = sendIds(numbered, report);
  // The plan's gangs hold disjoint capacity, so they are admitted side by side: one at a time,
  // a cycle that starts 200 gangs would take 200 admissions' round trips while the first jobs'
  // nodes sit bound and idle. Each admission is still all or nothing.
  for (const core::Start& start : plan.starts) {
    auto key = index.jobKeys.find(start.jobId);
    if (key == index.jobKeys.end() ||
        (written_.contains(key->second) && !idsWritten.contains(key->second)) ||
        unsentIds_.contains(key->second) || assumed_.admitting(key->second)) {
      continue;
    }
    const api::SlurmJobObject* job = findJob(key->second);
    if (job == nullptr) continue;
    auto gang = gangForStart(start, index, objects, options_.admission);
    if (!gang.isOk()) {
      refused(*job, key->second, gang.status());
      continue;
    }
    auto pods = GangBinder::plannedPods(*gang);
    if (!pods.isOk()) {
      refused(*job, key->second, pods.status());
      continue;
    }
    const KnownPods known = knownPods(*gang);
    ++report.gangsAssumed;
    StartedGang started{key->second, gang->nodes, gang->environment.partition, start.backfilled};
    assumed_.assume(std::move(started), std::move(pods).value(),
                    [this, gang = std::move(gang).value(), known](std::vector<api::Pod>* admitted) {
                      if (!fenceOpen()) {
                        return Status(StatusCode::kAborted, "leadership lost before admission");
                      }
                      return binder_.admit(gang, known, admitted);
                    });
  }
  if (!options_.admitInBackground) {
    assumed_.waitIdle();
    admissionsEnded(assumed_.finished(), now, report);
  }
}

void Reconciler::admissionsEnded(std::vector<FinishedAdmission> ended, core::Time now,
                                 CycleReport& report) {
  for (FinishedAdmission& a : ended) {
    report.admissions.push_back({a.result.isOk(), a.seconds});
    const std::string& key = a.gang.key;
    // Gone since (scancel, retention): its pods go with it, by owner reference.
    const api::SlurmJobObject* job = findJob(key);
    if (!a.result.isOk()) {
      ++report.admissionFailures;
      if (a.result.code() == StatusCode::kAborted && !fenceOpen()) {
        report.fenceClosed = true;
        continue;
      }
      report.errors.push_back("gang of " + key + " rolled back: " + a.result.toString());
      if (job != nullptr) admissionFailed(*job, a.result, now, report);
      continue;
    }
    holds_.succeeded(key);
    ++report.starts;
    if (a.gang.backfilled) ++report.backfilled;
    if (job == nullptr) continue;
    if (job->status && job->status->submitTime) {
      report.queueWaits.push_back({a.gang.partition, static_cast<double>(std::max<core::Time>(
                                                         now - *job->status->submitTime, 0))});
    }
    recordEvent(*job, JobEvent{"Normal", "Scheduled",
                               "allocated " + std::to_string(a.gang.nodes.size()) +
                                   " node(s): " + slurm::compressHostlist(a.gang.nodes) +
                                   (a.gang.backfilled ? " (backfill)" : "")});
  }
}

void Reconciler::admissionFailed(const api::SlurmJobObject& job, const Status& cause,
                                 core::Time now, CycleReport& report) {
  const std::optional<JobProblem> problem = holds_.failed(job, cause, now);
  if (!problem) {
    recordEvent(job, JobEvent{"Warning", "GangRolledBack",
                              "gang admission failed and was rolled back (retried after a "
                              "backoff): " +
                                  std::string(cause.message())});
    return;
  }
  recordEvent(job, JobEvent{"Warning", std::string(kInvalidPodSpecReason), problem->message});
  if (!job.status) return;
  json next = api::conditionsOf(*job.raw);
  if (setCondition(next, kValidCondition, "False", problem->reason, problem->message, now,
                   jobMetadata(job).generation)) {
    api::SlurmJobStatus status = *job.status;
    status.reason = problem->reason;
    status.reasonDetail.clear();
    writeStatus(
        job, status, [&](json& list) { list = next; }, report);
  }
}

std::vector<CycleReport::PendingJob> pendingJobsOf(const core::Plan& plan,
                                                   const SnapshotIndex& index) {
  std::map<core::JobId, const core::Job*> jobs;
  for (const core::Job& job : index.snapshot.jobs) jobs.emplace(job.id, &job);
  std::vector<CycleReport::PendingJob> out;
  out.reserve(plan.pending.size());
  for (const core::PendingDecision& pending : plan.pending) {
    const auto job = jobs.find(pending.jobId);
    const auto key = index.jobKeys.find(pending.jobId);
    if (job == jobs.end() || key == index.jobKeys.end()) continue;
    CycleReport::PendingJob view;
    view.jobId = pending.jobId;
    const std::size_t slash = key->second.find('/');
    view.namespaceName = key->second.substr(0, slash);
    view.name = slash == std::string::npos ? std::string() : key->second.substr(slash + 1);
    view.partition = job->second->partition;
    view.user = job->second->user;
    view.account = job->second->account;
    view.qos = job->second->qos;
    view.reason = std::string(slurm::pendingReasonName(pending.reason));
    if (auto priority = plan.priorities.find(pending.jobId); priority != plan.priorities.end()) {
      view.priority = priority->second;
    }
    if (auto each = plan.partitionPriorities.find(pending.jobId);
        each != plan.partitionPriorities.end()) {
      view.partitionPriorities = each->second;
    }
    view.estimatedStart = pending.estimatedStart;
    std::vector<std::string> nodes;
    for (const core::NodeIndex node : pending.estimatedNodes) {
      if (node < index.nodeNames.size()) nodes.push_back(index.nodeNames[node]);
    }
    view.estimatedNodes = slurm::compressHostlist(nodes);
    view.arrayJobId = job->second->arrayJobId;
    view.arrayTaskId = job->second->arrayTaskId;
    out.push_back(std::move(view));
  }
  return out;
}

void Reconciler::applyPending(const core::Plan& plan, const SnapshotIndex& index,
                              CycleReport& report) {
  // The partition each planned job was planned in (jobPartition's, as buildSnapshot resolved it).
  std::unordered_map<core::JobId, const std::string*> partitionOf;
  for (const core::Job& job : index.snapshot.jobs) partitionOf.emplace(job.id, &job.partition);
  std::vector<StatusWrite> writes;
  for (const core::PendingDecision& pending : plan.pending) {
    const std::string reason(slurm::pendingReasonName(pending.reason));
    const auto partition = partitionOf.find(pending.jobId);
    ++report.pendingByReason[partition == partitionOf.end() ? std::string() : *partition->second]
                            [reason];
    auto key = index.jobKeys.find(pending.jobId);
    if (key == index.jobKeys.end() || written_.contains(key->second)) continue;
    const api::SlurmJobObject* job = findJob(key->second);
    if (job == nullptr || !job->status) continue;
    std::optional<std::int64_t> priority;
    if (auto found = plan.priorities.find(pending.jobId); found != plan.priorities.end()) {
      priority = found->second.priority;
    }
    auto status = pendingStatusToWrite(*job->status, reason,
                                       boundedText(pending.reasonDetail, kMaxReasonDetail),
                                       pending.estimatedStart, priority);
    if (status) writes.push_back(statusWrite(*job, *status, nullptr));
  }
  sendStatusWrites(writes, report);
}

void Reconciler::summarize(const ClusterObjects& objects, const SnapshotIndex& index,
                           CycleReport& report) const {
  for (const api::SlurmJobObject& job : objects.jobs) {
    if (job.request.array && isArrayParent(job)) continue;
    if (job.status && job.status->jobId) {
      ++report.jobsByState[effectivePartition(job, objects.partitions)]
                          [job.status->state.empty() ? "PENDING" : job.status->state];
    }
  }
  const core::Snapshot& snapshot = index.snapshot;
  const NodeLoad load = nodeLoad(snapshot);
  for (std::size_t i = 0; i < snapshot.nodes.size(); ++i) {
    const core::Node& node = snapshot.nodes[i];
    const std::int64_t gpus = node.allocatable.gpus;
    if (node.state != core::NodeState::kUp) {
      report.gpusUnavailable += gpus;
    } else {
      report.gpusTotal += gpus;
      report.gpusAllocated += load.jobGpus[i];
      report.gpusForeign += load.foreignGpus[i];
    }
    ++report.nodesByState[nodeStateName(node, load.jobGpus[i], load.foreignGpus[i])];
  }
}

void Reconciler::persistUsage(const ClusterObjects& objects, const SnapshotIndex& index,
                              const core::Plan& plan, core::Time now, CycleReport& report) {
  if (objects.accounts.empty()) return;
  if (leftRunning_.empty() && now - lastUsageWrite_ < options_.usagePersistPeriod) return;
  bool allWritten = true;
  for (const api::Account& next :
       accountStatuses(objects.accounts, index, plan.fairShare, leftRunning_, now)) {
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    auto written =
        statusWriter_.updateStatus(kube::resources::accounts(), "", api::encodeAccount(next));
    if (!written.isOk()) {
      allWritten = false;
      if (written.status().code() == StatusCode::kAborted) {
        ++report.writeConflicts;
      } else {
        report.errors.push_back("status of account " + next.metadata.name + ": " +
                                written.status().toString());
      }
    }
  }
  // A failed write is retried next cycle, from the usage the ledger keeps.
  if (allWritten) lastUsageWrite_ = now;
}

void Reconciler::updatePartitions(const ClusterObjects& objects, const SnapshotIndex& index,
                                  core::Time now, CycleReport& report) {
  const NodeLoad load = nodeLoad(index.snapshot);
  for (const api::Partition& partition : objects.partitions) {
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    PartitionFigures figures = partitionFigures(partition, index.snapshot, load);
    report.partitions[partition.metadata.name] = figures.load;
    std::string reason;
    std::string message;
    for (const JobProblem& problem : index.partitionProblems) {
      if (problem.key != partition.metadata.name) continue;
      if (reason.empty()) reason = problem.reason;
      message += (message.empty() ? "" : "; ") + problem.message;
    }
    const bool validity = setValidCondition(figures.status.conditions, reason, message, now);
    if (!validity && sameFigures(figures.status, partition.status)) continue;
    api::Partition next = partition;
    next.status = std::move(figures.status);
    auto written =
        statusWriter_.updateStatus(kube::resources::partitions(), "", api::encodePartition(next));
    if (!written.isOk() && written.status().code() != StatusCode::kAborted) {
      report.errors.push_back("status of partition " + partition.metadata.name + ": " +
                              written.status().toString());
    }
  }
}

void Reconciler::removeExpired(const ClusterObjects& objects, core::Time now, CycleReport& report) {
  EndedRecordWritten recorded;
  if (options_.accounting != nullptr) {
    recorded = [writer = options_.accounting](const api::SlurmJobObject& job) {
      return writer->endedRecordWritten(job);
    };
  }
  for (const api::SlurmJobObject* job :
       expiredJobs(objects.jobs, now, options_.jobRetention, recorded)) {
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    kube::DeleteOptions options;
    options.uid = jobMetadata(*job).uid;  // not a new job that took the name meanwhile
    options.propagationPolicy = "Background";
    const Status done =
        writer_.remove(kube::resources::slurmJobs(), job->namespaceName, job->name, options);
    if (done.isOk() || done.code() == StatusCode::kNotFound) {
      ++report.jobsRemoved;
    } else if (done.code() != StatusCode::kAborted) {
      report.errors.push_back("remove expired " + jobKey(*job) + ": " + done.toString());
    }
  }
}

void Reconciler::expandArrays(const ClusterObjects& objects, core::Time now, CycleReport& report) {
  // What each array needs this cycle (planArrayExpansions, pure), then its task creates and cancel
  // patches, many in flight at once (256 creates one after another held the loop for as many
  // round trips), then its status.
  const std::map<std::string, ArrayFamily> families = arrayFamilies(objects.jobs);
  const std::vector<ArrayExpansion> expansions = planArrayExpansions(
      families, written_, options_.arrayTasksPerCycle, options_.arrayWaitingTasks);
  struct Write {
    std::size_t expansion = 0;
    std::size_t item = 0;  // in its creates or cancels
  };
  std::vector<Write> creates;
  std::vector<Write> cancels;
  for (std::size_t e = 0; e < expansions.size(); ++e) {
    for (std::size_t i = 0; i < expansions[e].creates.size(); ++i) creates.push_back({e, i});
    for (std::size_t i = 0; i < expansions[e].cancels.size(); ++i) cancels.push_back({e, i});
  }
  const auto fence = [this] { return fenceOpen(); };
  const std::vector<std::optional<Status>> created = writeInFlight<Status>(
      creates.size(), options_.statusWriteParallelism, fence, "task create", [&](std::size_t i) {
        const ArrayExpansion& e = expansions[creates[i].expansion];
        return writer_
            .create(kube::resources::slurmJobs(), e.family->array->namespaceName,
                    e.creates[creates[i].item].second)
            .status();
      });
  const std::vector<std::optional<Status>> patched = writeInFlight<Status>(
      cancels.size(), options_.statusWriteParallelism, fence, "cancel", [&](std::size_t i) {
        const api::SlurmJobObject& task =
            *expansions[cancels[i].expansion].cancels[cancels[i].item];
        return writer_
            .patch(kube::resources::slurmJobs(), task.namespaceName, task.name,
                   json{{"spec", {{"cancel", true}}}})
            .status();
      });
  std::vector<std::size_t> made(expansions.size(), 0);  // created now, or found made already
  for (std::size_t i = 0; i < creates.size(); ++i) {
    const ArrayExpansion& e = expansions[creates[i].expansion];
    if (!created[i]) {
      report.fenceClosed = true;
    } else if (created[i]->isOk()) {
      ++report.arrayTasksCreated;
      ++made[creates[i].expansion];
    } else if (created[i]->code() == StatusCode::kAlreadyExists) {
      ++made[creates[i].expansion];
    } else {
      report.errors.push_back("task " + std::to_string(e.creates[creates[i].item].first) +
                              " of array " + e.key + ": " + created[i]->toString());
    }
  }
  for (std::size_t i = 0; i < cancels.size(); ++i) {
    const api::SlurmJobObject& task = *expansions[cancels[i].expansion].cancels[cancels[i].item];
    if (!patched[i]) {
      report.fenceClosed = true;
    } else if (!patched[i]->isOk() && patched[i]->code() != StatusCode::kNotFound) {
      report.errors.push_back("cancel " + jobKey(task) + ": " + patched[i]->toString());
    }
  }
  if (report.fenceClosed) return;

  for (std::size_t i = 0; i < expansions.size(); ++i) {
    if (report.fenceClosed) return;
    const ArrayExpansion& e = expansions[i];
    const api::SlurmJobObject& array = *e.family->array;
    // The cached tasks are all there will be only if the condition was already True as read:
    // tasks created this cycle are not in the cache yet.
    const api::SlurmJobStatus next = arrayStatus(*e.family, e.allCreated);
    const bool markCreated = e.createsTasks && made[i] == e.missing;
    if (next != *array.status || markCreated) {
      const std::size_t count =
          array.request.array ? array.request.array->taskIds.size() : e.family->tasks.size();
      const auto conditions = [&](json& list) {
        if (markCreated) {
          setCondition(list, kTasksCreatedCondition, "True", "TasksCreated",
                       "all " + std::to_string(count) + " tasks were created", now);
        }
      };
      // The tasks' transitions are the jobs' (metrics count them); the array's would be twice.
      const std::size_t transitions = report.transitions.size();
      writeStatus(array, next, conditions, report);
      report.transitions.resize(transitions);
    }
  }
}

void Reconciler::sweepStuckGangs(const ClusterObjects& objects, const SnapshotIndex& index,
                                 core::Time now, CycleReport& report) {
  if (index.gangsInFlight.empty()) return;
  std::vector<api::Pod> pods;
  for (const api::Pod& pod : objects.pods) {
    if (!isRankPod(pod)) continue;
    const std::string key = pod.metadata.namespaceName + "/" + podJob(pod);
    if (index.gangsInFlight.contains(key) && !assumed_.contains(key)) pods.push_back(pod);
  }
  // Young gangs may be a cache that lags an admission: only the newest pod's age tells.
  const auto youngerThanStuck = [&](const std::string& ns, const std::string& job) {
    core::Time newest = 0;
    for (const api::Pod& pod : pods) {
      if (pod.metadata.namespaceName != ns || podJob(pod) != job) continue;
      newest = std::max(newest, pod.metadata.creationTimestamp.value_or(now));
    }
    return now - newest < options_.stuckGangAge;
  };
  for (const PartialGang& gang : findPartialGangs(pods, currentAttempts(objects.jobs))) {
    if (youngerThanStuck(gang.namespaceName, gang.jobName)) continue;
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    const Status removed = binder_.removeGang(gang);
    if (removed.isOk()) {
      ++report.stuckGangsRemoved;
      report.podsDeleted += static_cast<std::uint32_t>(gang.pods.size());
    } else {
      report.errors.push_back("stuck gang " + gang.describe() + ": " + removed.toString());
    }
  }
  for (const auto& [ns, job, attempt] : unboundGangs(pods)) {
    if (youngerThanStuck(ns, job)) continue;
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    const Status removed = binder_.rollback(ns, job, attempt);
    if (removed.isOk()) {
      ++report.stuckGangsRemoved;
    } else {
      std::string line = "stuck unbound gang ";
      line.append(ns).append("/").append(job).append(": ").append(removed.toString());
      report.errors.push_back(std::move(line));
    }
  }
}

void Reconciler::releaseTracking(const ClusterObjects& objects, CycleReport& report) {
  for (const TrackingRelease& release : rankPodsToRelease(objects.pods, objects.jobs)) {
    if (!fenceOpen()) {
      report.fenceClosed = true;
      return;
    }
    auto patched = writer_.patch(kube::resources::pods(), release.namespaceName, release.name,
                                 releasePatch(release));
    if (patched.isOk()) {
      ++report.trackingReleased;
    } else if (patched.status().code() != StatusCode::kNotFound &&
               patched.status().code() != StatusCode::kAborted) {
      // 409: the pod changed since the cache saw it; the next cycle sees it again.
      report.errors.push_back("release pod " + release.namespaceName + "/" + release.name + ": " +
                              patched.status().toString());
    }
  }
}

CycleReport Reconciler::cycle(ReconcileInput input, core::Time now) {
  CycleReport report;
  written_.clear();
  unsentIds_.clear();
  lostIds_.clear();
  leftRunning_.clear();
  if (!fenceOpen()) {
    report.fenceClosed = true;
    return report;
  }
  std::vector<FinishedAdmission> ended = assumed_.finished();
  assumed_.addUnseen(input.objects.pods, now, options_.expectationTimeout);
  setAsideOversizedArrays(input, options_.maxArraySize);
  assignIds(input, now, report);
  // One lookup per start, preemption and pending decision: a scan each was O(jobs x decisions).
  jobsByKey_.clear();
  for (const api::SlurmJobObject& job : input.objects.jobs) jobsByKey_.emplace(jobKey(job), &job);
  // Before the holds are read: a failed admission's backoff applies to this cycle's plan.
  admissionsEnded(std::move(ended), now, report);
  expandArrays(input.objects, now, report);

  const auto began = std::chrono::steady_clock::now();
  const JobHolds holds = holds_.holdsFor(
      input.objects, now, [&](const api::SlurmJobObject& job, const api::Partition& partition) {
        const GangIdentity who{
            job.status && job.status->jobId ? *job.status->jobId : 0,
            static_cast<std::uint32_t>(job.status ? job.status->restarts.value_or(0) : 0),
            job.user.empty() ? options_.snapshot.defaultUser : job.user, job.request.account,
            job.request.qos};
        return checkJobPods(job, partition, who, options_.admission);
      });
  SnapshotIndex index = buildSnapshot(input.objects, options_.snapshot, now, holds, &snapshotMemo_);
  usage_.advance(index.snapshot, now);
  report.gpuSeconds = usage_.lastGpuSeconds();
  core::Budget budget = options_.budget;
  std::optional<SteadyDeadline> deadline;
  if (options_.backfillMaxTime.count() > 0) {
    deadline.emplace(began + options_.backfillMaxTime);
    budget.deadline = &*deadline;
  }
  core::Plan plan = core::plan(index.snapshot, now, budget);
  report.planSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  report.stats = plan.stats;
  report.fairShare = plan.fairShare;
  report.pendingJobs = pendingJobsOf(plan, index);

  reconcileStatuses(input.objects, now, report);
  sweepStuckGangs(input.objects, index, now, report);
  reportProblems(input.objects, index, now, report);
  applyPreemptions(plan, index, now, report);
  applyStarts(plan, input.objects, index, now, report);
  applyPending(plan, index, report);
  // The ids no write of the cycle carried (a job whose judgement did not change its status).
  std::vector<std::string> unsent;
  for (const auto& [key, id] : unsentIds_) unsent.push_back(key);
  (void)sendIds(unsent, report);
  persistUsage(input.objects, index, plan, now, report);
  updatePartitions(input.objects, index, now, report);
  if (options_.accounting != nullptr) {
    std::map<std::string, std::uint64_t> nodeMemoryMb;
    for (const core::Partition& p : index.snapshot.partitions) {
      if (p.nodes.empty()) continue;  // nodes in natural order: the first is slurm.conf's
      nodeMemoryMb[p.name] = index.snapshot.nodes[p.nodes.front()].allocatable.memoryBytes >> 20;
    }
    // A job whose id was not written is no job of that id: it gets no record.
    if (lostIds_.empty() && unsentIds_.empty()) {
      options_.accounting->offer(input.objects.jobs, input.objects.partitions, nodeMemoryMb);
    } else {
      SharedList<api::SlurmJobObject> numbered = input.objects.jobs;
      numbered.eraseIf([this](const api::SlurmJobObject& job) {
        const std::string key = jobKey(job);
        return lostIds_.contains(key) || unsentIds_.contains(key);
      });
      options_.accounting->offer(numbered, input.objects.partitions, nodeMemoryMb);
    }
  }
  removeExpired(input.objects, now, report);
  releaseTracking(input.objects, report);
  summarize(input.objects, index, report);
  jobsByKey_.clear();  // it points into this cycle's input
  applyPlan(index.snapshot, plan, now);
  report.plannedCluster = std::make_shared<const SnapshotIndex>(std::move(index));
  report.partitionObjects = std::move(input.objects.partitions);
  report.accountObjects = std::move(input.objects.accounts);
  return report;
}

}  // namespace kubeslurm::controllers
