#include "operator/admission_webhook.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controllers/cluster_view.h"
#include "controllers/snapshot.h"
#include "controllers/submission_rules.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/meta_v1.h"
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

// The nodes the cache holds, by name and feature (held decoded, as the cluster view reads them).
controllers::NodeCatalog nodeCatalog(const kube::Informer& nodes) {
  controllers::NodeCatalog catalog;
  for (const kube::ObjectPtr& object : nodes.store().list()) {
    std::shared_ptr<api::Node> held = controllers::heldNode(object);
    if (held == nullptr) {
      auto decoded = api::decodeNode(*object);
      if (!decoded.isOk()) continue;
      held = std::make_shared<api::Node>(std::move(decoded).value());
    }
    catalog.names.insert(held->metadata.name);
    for (std::string& feature : controllers::nodeFeatures(*held)) {
      catalog.features.insert(std::move(feature));
    }
  }
  return catalog;
}

}  // namespace

SubmissionGate::SubmissionGate(WebhookSources sources, std::string operatorUsername,
                               controllers::AdmissionOptions admission, std::uint32_t maxArraySize)
    : sources_(std::move(sources)),
      operatorUsername_(std::move(operatorUsername)),
      admission_(std::move(admission)),
      maxArraySize_(maxArraySize),
      checks_(std::make_shared<KubeSubmissionChecks>(sources_.rbac, sources_.dryRun)) {}

// The cluster as the caches hold it at the time of each review: a Partition or Account made a
// moment ago may not be there yet, and the job is refused with the reason; it can be sent again.
template <typename Decide>
webhook::AdmissionResponse SubmissionGate::withContext(const webhook::AdmissionRequest& request,
                                                       Decide decide) const {
  if (sources_.synced && !sources_.synced()) {
    return webhook::refuse("the kubeslurm operator is starting: try again", 503,
                           "ServiceUnavailable");
  }
  const std::vector<api::Partition> partitions =
      decodeAll<api::Partition>(sources_.partitions, api::decodePartition);
  const std::vector<api::Account> accounts =
      decodeAll<api::Account>(sources_.accounts, api::decodeAccount);
  const controllers::SubmissionContext context{partitions,
                                               accounts,
                                               sources_.nodes.store().size(),
                                               operatorUsername_,
                                               admission_,
                                               {},
                                               [this] { return nodeCatalog(sources_.nodes); },
                                               maxArraySize_};
  return decide(request, context);
}

webhook::AdmissionResponse SubmissionGate::mutateSlurmJob(
    const webhook::AdmissionRequest& request) const {
  return withContext(request, [](const webhook::AdmissionRequest& r,
                                 const controllers::SubmissionContext& context) {
    return controllers::mutateSlurmJob(r, context);
  });
}

webhook::AdmissionResponse SubmissionGate::validateSlurmJob(
    const webhook::AdmissionRequest& request) const {
  return withContext(request, [this](const webhook::AdmissionRequest& r,
                                     const controllers::SubmissionContext& context) {
    return controllers::validateSlurmJob(r, context, *checks_);
  });
}

webhook::AdmissionResponse SubmissionGate::validateLabelledPod(
    const webhook::AdmissionRequest& request) const {
  return controllers::validateLabelledPod(request, operatorUsername_);
}

StatusOr<nlohmann::json> SubmissionGate::admitWhatIf(const access::Identity& caller,
                                                     const std::string& ns,
                                                     nlohmann::json object) const {
  webhook::AdmissionRequest request;
  request.uid = "test-only";
  request.group = "kubeslurm.io";
  request.kind = "SlurmJob";
  request.resource = "slurmjobs";
  request.operation = "CREATE";
  request.namespaceName = ns;
  request.user = caller;
  request.dryRun = true;
  if (object.is_object() && (!object.contains("metadata") || object["metadata"].is_object())) {
    object["metadata"]["namespace"] = ns;
    request.name = api::stringMember(object["metadata"], "name");
  }
  request.object = std::move(object);
  const webhook::AdmissionResponse stamped = mutateSlurmJob(request);
  if (!stamped.allowed) return Status(StatusCode::kUnavailable, stamped.message);
  if (!stamped.patch.empty()) request.object = request.object.patch(stamped.patch);
  const webhook::AdmissionResponse verdict = validateSlurmJob(request);
  if (!verdict.allowed) {
    return Status(verdict.code == 503 ? StatusCode::kUnavailable : StatusCode::kInvalidArgument,
                  verdict.message);
  }
  return std::move(request.object);
}

StatusOr<std::unique_ptr<webhook::Server>> startAdmissionWebhook(
    const webhook::ServerOptions& options, const std::shared_ptr<const SubmissionGate>& gate) {
  std::map<std::string, webhook::Handler> handlers;
  handlers["/mutate/slurmjobs"] = [gate](const webhook::AdmissionRequest& request) {
    return gate->mutateSlurmJob(request);
  };
  handlers["/validate/slurmjobs"] = [gate](const webhook::AdmissionRequest& request) {
    return gate->validateSlurmJob(request);
  };
  handlers["/validate/pods"] = [gate](const webhook::AdmissionRequest& request) {
    return gate->validateLabelledPod(request);
  };
  handlers["/validate/partitions"] = [](const webhook::AdmissionRequest& request) {
    return controllers::validatePartition(request);
  };
  handlers["/validate/accounts"] = [](const webhook::AdmissionRequest& request) {
    return controllers::validateAccount(request);
  };
  return webhook::startServer(options, std::move(handlers));
}

}  // namespace kubeslurm::op
