// The admission webhook as the operator serves it: the controllers' submission rules
// (controllers/submission_rules.h) over the informers' caches, asking RBAC and the API server's
// dry run through a client of their own.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "controllers/admission.h"
#include "kubeslurm/access/access_review.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/informer.h"
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

struct WebhookSettings {
  webhook::ServerOptions server;
  std::string operatorUsername;
  controllers::AdmissionOptions admission;
};

// Serves /mutate/slurmjobs, /validate/slurmjobs, /validate/partitions and /validate/accounts.
StatusOr<std::unique_ptr<webhook::Server>> startAdmissionWebhook(const WebhookSettings& settings,
                                                                 WebhookSources sources);

}  // namespace kubeslurm::op
