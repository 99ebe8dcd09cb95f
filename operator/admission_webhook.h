// The admission webhook as the operator serves it: the controllers' submission rules
// (controllers/submission_rules.h) over the informers' caches, asking RBAC and the API server's
// dry run through a client of their own. sbatch --test-only goes through the same gate, so a
// what-if never answers for a job the submission itself would refuse.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "controllers/admission.h"
#include "controllers/submission_rules.h"
#include "kubeslurm/access/access_review.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/informer.h"
#include "kubeslurm/webhook/admission_review.h"
#include "kubeslurm/webhook/server.h"

namespace kubeslurm::op {

struct WebhookSources {
  kube::Informer& nodes;
  kube::Informer& partitions;
  kube::Informer& accounts;
  access::Authorizer& rbac;  // SubjectAccessReviews
  kube::DryRunner& dryRun;   // the rank pods' dry run
  // Whether the caches hold the cluster yet: until then a SlurmJob review is refused with
  // "try again" (503) rather than decided on empty lists. Partitions and Accounts need no cache.
  std::function<bool()> synced;
};

class SubmissionGate {
 public:
  SubmissionGate(WebhookSources sources, std::string operatorUsername,
                 controllers::AdmissionOptions admission, std::uint32_t maxArraySize);

  webhook::AdmissionResponse mutateSlurmJob(const webhook::AdmissionRequest& request) const;
  webhook::AdmissionResponse validateSlurmJob(const webhook::AdmissionRequest& request) const;
  // A pod carrying one of a rank pod's labels (controllers::kOperatorPodLabels): only the
  // operator may set or change them. Reads no cache, so it answers before the caches sync.
  webhook::AdmissionResponse validateLabelledPod(const webhook::AdmissionRequest& request) const;

  // A SlurmJob `caller` would submit in `ns`, as the API server would store it: stamped with the
  // caller's identity, then checked. kInvalidArgument with the webhook's words (Slurm's) when it
  // would be refused; kUnavailable while the caches are not synced.
  StatusOr<nlohmann::json> admitWhatIf(const access::Identity& caller, const std::string& ns,
                                       nlohmann::json object) const;

 private:
  template <typename Decide>
  webhook::AdmissionResponse withContext(const webhook::AdmissionRequest& request,
                                         Decide decide) const;

  WebhookSources sources_;
  std::string operatorUsername_;
  controllers::AdmissionOptions admission_;
  std::uint32_t maxArraySize_;
  std::shared_ptr<controllers::SubmissionChecks> checks_;
};

// Serves /mutate/slurmjobs, /validate/slurmjobs, /validate/partitions, /validate/accounts and
// /validate/pods.
StatusOr<std::unique_ptr<webhook::Server>> startAdmissionWebhook(
    const webhook::ServerOptions& options, const std::shared_ptr<const SubmissionGate>& gate);

}  // namespace kubeslurm::op
