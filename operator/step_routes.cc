#include "operator/step_routes.h"

#include <algorithm>
#include <string>

#include "controllers/cluster_view.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/step/pod_contract.h"

namespace kubeslurm::op {

namespace {

std::string labelOf(const api::ObjectMeta& meta, std::string_view key) {
  const auto found = meta.labels.find(std::string(key));
  return found == meta.labels.end() ? std::string() : found->second;
}

bool controlledBy(const api::ObjectMeta& meta, const std::string& uid) {
  return std::ranges::any_of(meta.ownerReferences, [&uid](const api::OwnerReference& owner) {
    return owner.uid == uid && owner.controller.value_or(false);
  });
}

// Where `rank` of the running `job` serves steps, into `target`; why not, otherwise.
Status reach(const api::SlurmJobObject& job, const std::string& jobName, std::uint32_t rank,
             const kube::Informer& pods, const controllers::StepTokens& tokens,
             rpc::StepTarget& target) {
  const std::string id = std::to_string(*job.status->jobId);
  if (job.status->state != "RUNNING") {
    return failedPrecondition("Job " + id + " is " + job.status->state +
                              ": steps run only in a running job");
  }
  std::string uid;
  if (const auto meta = job.raw->find("metadata"); meta != job.raw->end()) {
    uid = api::stringMember(*meta, "uid");
  }
  const std::string podName = podspec::rankPodName(jobName, rank);
  const std::shared_ptr<api::Pod> pod =
      controllers::heldPod(pods.store().get(job.namespaceName + "/" + podName));
  if (!pod || uid.empty() || labelOf(pod->metadata, podspec::kJobNameLabel) != jobName ||
      labelOf(pod->metadata, podspec::kJobIdLabel) != id || !controlledBy(pod->metadata, uid)) {
    return failedPrecondition("Job " + id + " has no rank " + std::to_string(rank));
  }
  const auto attempt = parseInteger<std::uint32_t>(labelOf(pod->metadata, podspec::kAttemptLabel));
  if (!attempt || pod->status.podIP.empty() || pod->status.phase != "Running") {
    return failedPrecondition("rank " + std::to_string(rank) + " of job " + id +
                              " is not running yet");
  }
  const bool ipv6 = pod->status.podIP.find(':') != std::string::npos;
  target.address = (ipv6 ? "[" + pod->status.podIP + "]" : pod->status.podIP) + ":" +
                   std::to_string(step::kDefaultStepAgentPort);
  target.token = tokens.tokenFor(job.namespaceName, uid, *attempt);
  return Status::ok();
}

}  // namespace

rpc::StepRouter stepRouter(const kube::Informer& jobs, const kube::Informer& pods,
                           const controllers::StepTokens& tokens) {
  return [&jobs, &pods, &tokens](const std::string& namespaceName, const std::string& jobName,
                                 std::uint32_t rank) -> StatusOr<rpc::StepTarget> {
    const std::shared_ptr<api::SlurmJobObject> job =
        controllers::heldSlurmJob(jobs.store().get(namespaceName + "/" + jobName));
    if (!job || !job->status || !job->status->jobId) {
      return notFound("Invalid job id specified");
    }
    const std::string id = std::to_string(*job->status->jobId);
    rpc::StepTarget target;
    if (job->submitter) target.submitter = job->submitter->username;
    target.reachable = reach(*job, jobName, rank, pods, tokens, target);
    return target;
  };
}

}  // namespace kubeslurm::op
