#include "operator/admission_webhook.h"

#include <utility>
#include <vector>

#include "controllers/submission_rules.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::op {
namespace {

class KubeSubmissionChecks final : public controllers::SubmissionChecks {
 public:
  KubeSubmissionChecks(access::Authorizer& rbac, kube::DryRunner& dryRun)
      : rbac_(rbac), dryRun_(dryRun) {}

  Status mayCreatePods(const access::Identity& user, const std::string& ns) override {
    return rbac_.authorize(user, {"create", "", "pods", ns});
  }
  Status isAdmin(const access::Identity& user, const std::string& ns) override {
    return rbac_.authorize(user,
                           {std::string(controllers::kAdminVerb), "kubeslurm.io", "slurmjobs", ns});
  }
  Status dryRunPod(const api::Pod& pod) override {
    auto created = dryRun_.createDryRun(kube::resources::pods(), pod.metadata.namespaceName,
                                        api::encodePod(pod));
    return created.isOk() ? Status::ok() : created.status();
  }

 private:
  access::Authorizer& rbac_;
  kube::DryRunner& dryRun_;
};

template <typename T, typename Decode>
std::vector<T> decodeAll(const kube::Informer& informer, Decode decode) {
  std::vector<T> out;
  for (const kube::ObjectPtr& object : informer.store().list()) {
    if (auto decoded = decode(*object); decoded.isOk()) out.push_back(std::move(decoded).value());
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<webhook::Server>> startAdmissionWebhook(const WebhookSettings& settings,
                                                                 WebhookSources sources) {
  auto checks = std::make_shared<KubeSubmissionChecks>(sources.rbac, sources.dryRun);
  // The cluster as the caches hold it at the time of each review: a Partition or Account made
  // a moment ago may not be there yet, and the job is refused with the reason; it can be sent
  // again.
  auto withContext = [settings, sources](auto decide) {
    return [settings, sources, decide](const webhook::AdmissionRequest& request) {
      if (sources.synced && !sources.synced()) {
        return webhook::refuse("the kubeslurm operator is starting: try again", 503,
                               "ServiceUnavailable");
      }
      const std::vector<api::Partition> partitions =
          decodeAll<api::Partition>(sources.partitions, api::decodePartition);
      const std::vector<api::Account> accounts =
          decodeAll<api::Account>(sources.accounts, api::decodeAccount);
      const controllers::SubmissionContext context{
          partitions,         accounts, sources.nodes.store().size(), settings.operatorUsername,
          settings.admission, {}};
      return decide(request, context);
    };
  };
  std::map<std::string, webhook::Handler> handlers;
  handlers["/mutate/slurmjobs"] = withContext(
      [](const webhook::AdmissionRequest& request, const controllers::SubmissionContext& context) {
        return controllers::mutateSlurmJob(request, context);
      });
  handlers["/validate/slurmjobs"] =
      withContext([checks](const webhook::AdmissionRequest& request,
                           const controllers::SubmissionContext& context) {
        return controllers::validateSlurmJob(request, context, *checks);
      });
  handlers["/validate/partitions"] = [](const webhook::AdmissionRequest& request) {
    return controllers::validatePartition(request);
  };
  handlers["/validate/accounts"] = [](const webhook::AdmissionRequest& request) {
    return controllers::validateAccount(request);
  };
  return webhook::startServer(settings.server, std::move(handlers));
}

}  // namespace kubeslurm::op
