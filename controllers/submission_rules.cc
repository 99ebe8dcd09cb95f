#include "controllers/submission_rules.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include "controllers/job_object.h"
#include "controllers/job_request.h"
#include "kubeslurm/access/identity.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/podspec/pod_policy.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;
using webhook::AdmissionRequest;
using webhook::AdmissionResponse;
using webhook::allow;
using webhook::refuse;

// slurmctld's words (slurm_errno.c, 22.05), as sbatch prints them after "Batch job submission
// failed: ".
constexpr std::string_view kAccessDenied = "Access/permission denied";
constexpr std::string_view kInvalidAccount =
    "Invalid account or account/partition combination specified";
constexpr std::string_view kInvalidQos = "Invalid qos specification";
constexpr std::string_view kTooLong = "Pathname of a file, directory or other parameter too long";
constexpr std::string_view kInvalidNodeCount = "Node count specification invalid";
constexpr std::string_view kInvalidArray = "Invalid job array specification";
constexpr std::string_view kDependencyProblem = "Job dependency problem";

// Labels and annotations by which the operator's array tasks are known; only the operator may
// write them (security review H2: a forged task joined another array and backdated itself).
constexpr std::array<std::string_view, 2> kTaskLabels = {"kubeslurm.io/array-job",
                                                         "kubeslurm.io/array-task"};
constexpr std::array<std::string_view, 2> kTaskAnnotations = {"kubeslurm.io/array-job-id",
                                                              "kubeslurm.io/array-submit-time"};

std::string what(std::string_view message, std::string_view detail = {}) {
  std::string out(message);
  if (!detail.empty()) out += " (" + std::string(detail) + ")";
  return out;
}

api::Submitter submitterOf(const access::Identity& user) {
  return api::Submitter{user.user, user.uid, user.groups};
}

// The job's bookkeeping as an array task: task labels, annotations, or a SlurmJob owner.
std::optional<std::string> taskBookkeeping(const api::ObjectMeta& meta) {
  for (const std::string_view label : kTaskLabels) {
    if (meta.labels.contains(std::string(label))) return "label " + std::string(label);
  }
  for (const std::string_view annotation : kTaskAnnotations) {
    if (meta.annotations.contains(std::string(annotation))) {
      return "annotation " + std::string(annotation);
    }
  }
  for (const api::OwnerReference& owner : meta.ownerReferences) {
    if (owner.kind == api::kSlurmJobKind) return "an owner of kind SlurmJob";
  }
  return std::nullopt;
}

std::size_t environmentBytes(const slurm::JobRequest& request) {
  std::size_t bytes = 0;
  for (const auto& [name, value] : request.environment) bytes += name.size() + value.size();
  return bytes;
}

// Whether `user` may name `account`: a job of one of its namespaces, or a user or group it lists
// (by the Kubernetes name or its Slurm short name).
bool accountAdmits(const api::Account& account, const access::Identity& user,
                   const std::string& ns) {
  const auto listed = [](const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
  };
  if (listed(account.spec.namespaces, ns)) return true;
  if (listed(account.spec.users, user.user) ||
      listed(account.spec.users, access::slurmUserName(user.user))) {
    return true;
  }
  return std::any_of(user.groups.begin(), user.groups.end(),
                     [&](const std::string& group) { return listed(account.spec.groups, group); });
}

const api::Account* findAccount(const std::vector<api::Account>& accounts,
                                const std::string& name) {
  for (const api::Account& account : accounts) {
    if (account.metadata.name == name) return &account;
  }
  return nullptr;
}

// A hostlist of more hosts than the cluster has names a node that does not exist. Bounded: the
// parse does no more work than the cluster's size allows.
std::optional<std::string> hostlistTooLarge(const std::string& hostlist, std::size_t nodes) {
  if (hostlist.empty()) return std::nullopt;
  const std::size_t limit = std::max<std::size_t>(nodes, 1);
  auto parsed = slurm::Hostlist::parse(hostlist, nullptr, limit);
  if (!parsed.isOk()) {
    if (parsed.status().code() == StatusCode::kOutOfRange) return std::string(kInvalidNodeName);
    return std::nullopt;  // a malformed list: the operator reports it with Slurm's diagnostic
  }
  if (parsed->count() < 0 || static_cast<std::size_t>(parsed->count()) > limit) {
    return std::string(kInvalidNodeName);
  }
  return std::nullopt;
}

// Size and shape: what is wrong with the object whoever wrote it.
std::optional<AdmissionResponse> checkShape(const api::SlurmJobObject& job,
                                            const SubmissionContext& context) {
  const SubmissionLimits& limits = context.limits;
  if (job.script.size() > limits.maxScriptBytes) {
    return refuse(what(kTooLong, "spec.script: " + std::to_string(job.script.size()) +
                                     " bytes, at most " + std::to_string(limits.maxScriptBytes)));
  }
  if (environmentBytes(job.request) > limits.maxEnvironmentBytes) {
    return refuse(what(kTooLong, "spec.environment: at most " +
                                     std::to_string(limits.maxEnvironmentBytes) + " bytes"));
  }
  if (const auto spec = job.raw->find("spec"); spec != job.raw->end() && spec->is_object()) {
    if (const auto tmpl = spec->find("podTemplate"); tmpl != spec->end()) {
      const std::size_t bytes = tmpl->dump().size();
      if (bytes > limits.maxTemplateBytes) {
        return refuse(what(kTooLong, "spec.podTemplate: " + std::to_string(bytes) +
                                         " bytes, at most " +
                                         std::to_string(limits.maxTemplateBytes)));
      }
    }
  }
  // An allocation for a login host's srun or salloc holds nodes for steps: it runs no script of
  // its own, has no pods of the submitter's design and is never an array (salloc has no
  // --array).
  if (job.request.interactive) {
    const bool hasTemplate = job.raw->contains("spec") && (*job.raw)["spec"].is_object() &&
                             (*job.raw)["spec"].contains("podTemplate");
    if (!job.script.empty() || hasTemplate || job.request.array) {
      return refuse(
          "an interactive allocation (spec.interactive) runs steps only: it takes no script, "
          "pod template or array");
    }
  }
  // job_mgr.c _valid_job_part: zero nodes only for a single batch job (slurmctld lets burst
  // buffer staging use it; kubeslurm runs such a job on one node); never for an array.
  if (job.request.nodes && job.request.nodes->min == 0 && job.request.array) {
    return refuse(what(kInvalidNodeCount, "spec.nodes 0 in a job array"));
  }
  for (const auto& [list, field] : {std::pair{&job.request.nodeList, "--nodelist"},
                                    std::pair{&job.request.excludeList, "--exclude"}}) {
    if (auto problem = hostlistTooLarge(*list, context.clusterNodes)) {
      return refuse(what(*problem, std::string(field) + " names more hosts than the cluster has"));
    }
  }
  return std::nullopt;
}

std::optional<AdmissionResponse> checkNamedNodes(const api::SlurmJobObject& job,
                                                 const SubmissionContext& context) {
  const slurm::JobRequest& r = job.request;
  if (r.nodeList.empty() && r.excludeList.empty() && r.constraint.empty()) return std::nullopt;
  if (!context.nodes) {
    // Without the node cache only the form is checked (namedNodesProblem reads it first).
    const ConstraintTerms terms = constraintTerms(r.constraint);
    if (terms.clauses && terms.matching.size() <= kMaxMatchingFeatures) return std::nullopt;
    return refuse(namedNodesProblem(r, NodeCatalog{}).value_or(std::string(kInvalidFeature)));
  }
  if (auto problem = namedNodesProblem(r, context.nodes())) return refuse(*problem);
  return std::nullopt;
}

// The partition, account and QOS the job names, against who submits it.
std::optional<AdmissionResponse> checkPlacementRights(const api::SlurmJobObject& job,
                                                      const AdmissionRequest& request,
                                                      const SubmissionContext& context) {
  std::string message;
  const std::vector<const api::Partition*> partitions =
      jobPartitions(job.request, context.partitions, &message);
  if (partitions.empty()) return refuse(message);
  const std::string& ns = request.namespaceName;
  std::string account = job.request.account;
  if (account.empty()) {
    account = defaultAccountFor(context.accounts, ns);
  } else {
    const api::Account* named = findAccount(context.accounts, account);
    if (named == nullptr) return refuse(what(kInvalidAccount, "no Account " + account));
    if (!accountAdmits(*named, request.user, ns)) {
      return refuse(what(kInvalidAccount, "Account " + account + " does not admit user " +
                                              access::slurmUserName(request.user.user) +
                                              " from namespace " + ns));
    }
  }
  // A job that names several partitions (sbatch -p a,b) is refused only when none allows the
  // account: under the default EnforcePartLimits=NO slurmctld accepts such a list and the
  // scheduler leaves out the partitions that deny it (job_mgr.c _valid_job_part), as the core
  // does. A job of one partition is refused when it denies (the same function).
  const auto allows = [&](const api::Partition* partition) {
    const std::vector<std::string>& allowed = partition->spec.allowedAccounts;
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), account) != allowed.end();
  };
  if (std::ranges::none_of(partitions, allows)) {
    return refuse(what(kInvalidAccount, "partition " + partitions.front()->metadata.name +
                                            " does not allow account " + account));
  }
  if (!job.request.qos.empty()) {
    const api::Account* charged = findAccount(context.accounts, account);
    if (charged != nullptr && !charged->spec.allowedQos.empty() &&
        std::find(charged->spec.allowedQos.begin(), charged->spec.allowedQos.end(),
                  job.request.qos) == charged->spec.allowedQos.end()) {
      return refuse(
          what(kInvalidQos, "account " + account + " does not allow QOS " + job.request.qos));
    }
  }
  return std::nullopt;
}

// A pod template makes the operator create pods for the submitter: they must be allowed to
// create pods themselves (AppWrapper's userRBACAdmissionCheck), and the template must meet the
// partition's pod policy. Then the rank pod, as the operator would create it, goes through the
// API server's admission as a dry run.
std::optional<AdmissionResponse> checkPods(const api::SlurmJobObject& job,
                                           const AdmissionRequest& request,
                                           const SubmissionContext& context,
                                           SubmissionChecks& checks, bool templateChanged) {
  std::string message;
  const std::vector<const api::Partition*> partitions =
      jobPartitions(job.request, context.partitions, &message);
  if (partitions.empty()) return refuse(message);
  const bool hasTemplate = job.raw->contains("spec") && (*job.raw)["spec"].is_object() &&
                           (*job.raw)["spec"].contains("podTemplate");
  if (hasTemplate && templateChanged) {
    if (Status may = checks.mayCreatePods(request.user, request.namespaceName); !may.isOk()) {
      return refuse(what(kAccessDenied, "a pod template needs `create pods` in namespace " +
                                            request.namespaceName + ": " +
                                            std::string(may.message())));
    }
  }
  api::SlurmJobObject named = job;
  if (named.name.empty()) named.name = "dry-run";  // generateName: not resolved before admission
  Json& object = named.raw.edit();
  if (!object.is_object()) object = Json::object();
  Json& meta = object["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (!meta.contains("uid")) meta["uid"] = "dry-run";
  const GangIdentity who{0, 0, named.user, named.request.account, named.request.qos};
  // Each partition makes its own pods (policy, tolerations, volumes): a job that names several
  // must be one each of them can run, since the plan may start it in any.
  for (const api::Partition* partition : partitions) {
    auto pod = checkPod(named, *partition, who, context.admission);
    if (!pod.isOk()) return refuse(std::string(pod.status().message()));
    // The owner does not exist yet (nor the node): a dry run checks the pod, not its references.
    pod->metadata.ownerReferences.clear();
    pod->spec.nodeName.clear();
    if (Status dry = checks.dryRunPod(*pod); !dry.isOk()) {
      return refuse("the job's pods would be refused: " + std::string(dry.message()));
    }
  }
  return std::nullopt;
}

// The time limit a job runs with: its own, else its partition's default (as coreJob applies
// it); -1 for UNLIMITED.
std::int64_t effectiveTimeLimit(const slurm::JobRequest& request,
                                const std::vector<api::Partition>& partitions) {
  std::optional<slurm::TimeLimit> limit = request.timeLimit;
  if (!limit) {
    const api::Partition* partition = jobPartition(request, partitions, nullptr);
    if (partition != nullptr) limit = api::partitionDefaultTime(partition->spec);
  }
  if (!limit || !limit->seconds) return -1;
  return *limit->seconds;
}

// What only an administrator may change once a job exists (Slurm: operators and admins).
std::optional<std::string> adminChange(const api::SlurmJobObject& before,
                                       const api::SlurmJobObject& after,
                                       const std::vector<api::Partition>& partitions) {
  if (after.request.priority != before.request.priority) return "--priority";
  if (after.request.nice.value_or(0) < 0 && after.request.nice != before.request.nice) {
    return "a negative --nice";
  }
  // Slurm lets a user lower a limit, never raise one (scontrol update TimeLimit=, as a user).
  const std::int64_t was = effectiveTimeLimit(before.request, partitions);
  const std::int64_t now = effectiveTimeLimit(after.request, partitions);
  if (was >= 0 && (now < 0 || now > was)) return "a longer time limit";
  const bool pending = !before.status || before.status->state.empty() ||
                       before.status->state == slurm::jobStateName(slurm::JobState::kPending);
  if (!pending) {
    if (after.request.partition != before.request.partition)
      return "the partition of a started job";
    if (after.request.account != before.request.account) return "the account of a started job";
    if (after.request.qos != before.request.qos) return "the QOS of a started job";
  }
  return std::nullopt;
}

const Json* templateOf(const Json& object) {
  if (!object.is_object()) return nullptr;
  const auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object()) return nullptr;
  const auto tmpl = spec->find("podTemplate");
  return tmpl == spec->end() ? nullptr : &*tmpl;
}

// spec.array and spec.dependency as written: checked against the cluster's MaxArraySize before
// the object is decoded, on a submission and on an update that changes either. The codec reads
// task lists up to the largest MaxArraySize, 4,000,001 ids for spec.array and as many for each
// bracketed term of a dependency (a 4 KiB dependency could name hundreds of millions of tasks);
// parsed here under the cluster's limit, a text costs no more than the ids it may name.
std::optional<AdmissionResponse> checkArraySize(const AdmissionRequest& request,
                                                const SubmissionContext& context) {
  const auto written = [](const Json& object, const char* key) -> std::string_view {
    const Json* spec = object.is_object() && object.contains("spec") ? &object["spec"] : nullptr;
    if (spec == nullptr || !spec->is_object() || !spec->contains(key)) return {};
    const Json& value = (*spec)[key];
    return value.is_string() ? std::string_view(value.get_ref<const std::string&>())
                             : std::string_view();
  };
  const std::string_view array = written(request.object, "array");
  const std::string_view dependency = written(request.object, "dependency");
  if (request.operation != "CREATE" && array == written(request.oldObject, "array") &&
      dependency == written(request.oldObject, "dependency")) {
    return std::nullopt;
  }
  if (auto problem = arraySizeProblem(array, dependency, context.maxArraySize)) {
    return refuse(*problem);
  }
  return std::nullopt;
}

AdmissionResponse validateCreate(const api::SlurmJobObject& job, const AdmissionRequest& request,
                                 const SubmissionContext& context, SubmissionChecks& checks) {
  // The mutating webhook stamped these; a request that skipped it must not pass as someone else.
  const std::string shortName = access::slurmUserName(request.user.user);
  if (job.user != shortName || !job.submitter || *job.submitter != submitterOf(request.user)) {
    return refuse(what(kAccessDenied,
                       "spec.user and spec.submitter must be the submitting "
                       "identity (" +
                           request.user.user + ")"));
  }
  const api::ObjectMeta meta = jobMetadata(job);
  if (auto task = taskBookkeeping(meta)) {
    return refuse(what(kAccessDenied, "only the operator creates array tasks (" + *task + ")"));
  }
  if (job.request.priority || job.request.nice.value_or(0) < 0) {
    if (Status admin = checks.isAdmin(request.user, request.namespaceName); !admin.isOk()) {
      return refuse(what(kAccessDenied,
                         std::string(job.request.priority ? "--priority" : "a negative --nice") +
                             " is for administrators"));
    }
  }
  if (auto refused = checkNamedNodes(job, context)) return *refused;
  if (auto refused = checkPlacementRights(job, request, context)) return *refused;
  if (auto refused = checkPods(job, request, context, checks, /*templateChanged=*/true)) {
    return *refused;
  }
  return allow();
}

AdmissionResponse validateUpdate(const api::SlurmJobObject& job, const AdmissionRequest& request,
                                 const SubmissionContext& context, SubmissionChecks& checks) {
  auto before = api::decodeSlurmJob(request.oldObject);
  if (!before.isOk()) return allow();  // an object that never decoded: nothing to protect
  if (job.user != before->user || job.submitter != before->submitter) {
    return refuse(what(kAccessDenied, "spec.user and spec.submitter are set at submission"));
  }
  const auto task = taskBookkeeping(jobMetadata(job));
  if (task && task != taskBookkeeping(jobMetadata(*before))) {
    return refuse(what(kAccessDenied, "only the operator writes array tasks' " + *task));
  }
  if (auto change = adminChange(*before, job, context.partitions)) {
    if (Status admin = checks.isAdmin(request.user, request.namespaceName); !admin.isOk()) {
      return refuse(what(kAccessDenied, *change + " is for administrators"));
    }
  }
  const bool placementChanged = job.request.partition != before->request.partition ||
                                job.request.account != before->request.account ||
                                job.request.qos != before->request.qos;
  if (placementChanged) {
    if (auto refused = checkPlacementRights(job, request, context)) return *refused;
  }
  const Json* now = templateOf(*job.raw);
  const Json* was = templateOf(request.oldObject);
  const bool templateChanged = now != nullptr && (was == nullptr || *now != *was);
  if (templateChanged) {
    if (auto refused = checkPods(job, request, context, checks, true)) return *refused;
  }
  return allow();
}

}  // namespace

std::optional<std::string> arraySizeProblem(std::string_view array, std::string_view dependency,
                                            std::uint32_t maxArraySize) {
  if (!array.empty() && !slurm::parseArraySpec(array, maxArraySize).isOk()) {
    return std::string(kInvalidArray);
  }
  if (!dependency.empty() && !slurm::parseDependency(dependency, maxArraySize).isOk()) {
    return std::string(kDependencyProblem);
  }
  return std::nullopt;
}

// --nodelist and --exclude name nodes of the cluster, and --constraint features some node has,
// in the form the core plans (job_mgr.c _valid_node_list and job_scheduler.c build_feature_list
// refuse the rest at submission; the slurmctld differential test pins the words).
std::optional<std::string> namedNodesProblem(const slurm::JobRequest& request,
                                             const NodeCatalog& catalog) {
  const ConstraintTerms terms = constraintTerms(request.constraint);
  if (!terms.wellFormed) {
    return what(kInvalidFeature, "--constraint " + quoteForDiagnostic(request.constraint, 64));
  }
  if (!terms.clauses) return what(kInvalidFeature, kUnplannedConstraint);
  if (terms.matching.size() > kMaxMatchingFeatures) {
    return what(kInvalidFeature,
                "more than " + std::to_string(kMaxMatchingFeatures) + " features in [...]");
  }
  for (const auto& [list, field] :
       {std::pair{&request.nodeList, "--nodelist"}, std::pair{&request.excludeList, "--exclude"}}) {
    if (list->empty()) continue;
    // A list of more hosts than the catalog has names one it does not have; it is not expanded.
    if (hostlistTooLarge(*list, catalog.names.size())) {
      return what(kInvalidNodeName, std::string(field) + " names more hosts than the cluster has");
    }
    auto hosts = slurm::expandHostlist(*list);
    if (!hosts.isOk()) continue;  // a malformed list: the operator reports Slurm's diagnostic
    for (const std::string& host : *hosts) {
      if (!catalog.names.contains(host)) {
        return what(kInvalidNodeName,
                    std::string(field) + ": no node " + quoteForDiagnostic(host, 64));
      }
    }
  }
  for (const std::string& feature : terms.features) {
    if (!catalog.features.contains(feature)) {
      return what(kInvalidFeature, "no node has feature " + quoteForDiagnostic(feature, 64));
    }
  }
  return std::nullopt;
}

AdmissionResponse mutateSlurmJob(const AdmissionRequest& request,
                                 const SubmissionContext& context) {
  if (request.operation != "CREATE" || request.user.user == context.operatorUser) return allow();
  if (!request.object.is_object() || !request.object.contains("spec") ||
      !request.object["spec"].is_object()) {
    return allow();  // the validating webhook refuses it with the decoder's words
  }
  AdmissionResponse response = allow();
  Json submitter = {{"username", request.user.user}};
  if (!request.user.uid.empty()) submitter["uid"] = request.user.uid;
  if (!request.user.groups.empty()) submitter["groups"] = request.user.groups;
  // "add" replaces a member that exists (RFC 6902 4.1): whatever the object said is overwritten.
  response.patch.push_back(
      {{"op", "add"}, {"path", "/spec/user"}, {"value", access::slurmUserName(request.user.user)}});
  response.patch.push_back({{"op", "add"}, {"path", "/spec/submitter"}, {"value", submitter}});
  // A job that names no partition runs in the default one, and says so from then on, as Slurm
  // records it at submission (scontrol show job: Partition=<default>; squeue, kubectl get sj).
  const Json& partition =
      request.object["spec"].contains("partition") ? request.object["spec"]["partition"] : Json();
  if (partition.is_null() || (partition.is_string() && partition.get<std::string>().empty())) {
    if (const api::Partition* chosen = jobPartition({}, context.partitions, nullptr)) {
      response.patch.push_back(
          {{"op", "add"}, {"path", "/spec/partition"}, {"value", chosen->metadata.name}});
    }
  }
  // Likewise the account: a job that names none is charged to its namespace's default, recorded
  // at submission as slurmctld records the association's account (scontrol show job Account=,
  // sacct, sreport), not resolved again each time something reads it.
  const Json& account =
      request.object["spec"].contains("account") ? request.object["spec"]["account"] : Json();
  if (account.is_null() || (account.is_string() && account.get<std::string>().empty())) {
    const std::string chosen = defaultAccountFor(context.accounts, request.namespaceName);
    if (!chosen.empty()) {
      response.patch.push_back({{"op", "add"}, {"path", "/spec/account"}, {"value", chosen}});
    }
  }
  return response;
}

AdmissionResponse validateSlurmJob(const AdmissionRequest& request,
                                   const SubmissionContext& context, SubmissionChecks& checks) {
  if (request.operation != "CREATE" && request.operation != "UPDATE") return allow();
  if (!request.subResource.empty()) return allow();  // status: the operator's own writes
  // Its own writes (array tasks) carry their array's spec as it was admitted.
  if (request.user.user != context.operatorUser) {
    if (auto refused = checkArraySize(request, context)) return *refused;
  }
  auto job = api::decodeSlurmJob(request.object);
  if (!job.isOk()) return refuse(std::string(job.status().message()), 422, "Invalid");
  if (auto shape = checkShape(*job, context)) return *shape;
  if (request.user.user == context.operatorUser) return allow();
  return request.operation == "CREATE" ? validateCreate(*job, request, context, checks)
                                       : validateUpdate(*job, request, context, checks);
}

AdmissionResponse validatePartition(const AdmissionRequest& request) {
  if (request.operation != "CREATE" && request.operation != "UPDATE") return allow();
  if (!request.subResource.empty()) return allow();
  auto partition = api::decodePartition(request.object);
  if (!partition.isOk()) return refuse(std::string(partition.status().message()), 422, "Invalid");
  if (auto policy = podspec::podPolicyOf(*partition); !policy.isOk()) {
    return refuse(std::string(policy.status().message()), 422, "Invalid");
  }
  return allow();
}

AdmissionResponse validateAccount(const AdmissionRequest& request) {
  if (request.operation != "CREATE" && request.operation != "UPDATE") return allow();
  if (!request.subResource.empty()) return allow();
  auto account = api::decodeAccount(request.object);
  if (!account.isOk()) return refuse(std::string(account.status().message()), 422, "Invalid");
  if (account->spec.parent == account->metadata.name) {
    return refuse("spec.parent: an account cannot be its own parent", 422, "Invalid");
  }
  return allow();
}

namespace {

static_assert(kOperatorPodLabels[0] == podspec::kJobNameLabel &&
              kOperatorPodLabels[1] == podspec::kJobIdLabel &&
              kOperatorPodLabels[2] == podspec::kRankLabel &&
              kOperatorPodLabels[3] == podspec::kAttemptLabel);

// The object's labels under the operator's prefix, as JSON values (a label that is not a string
// is compared as written: the API server refuses it anyway).
std::map<std::string, Json> operatorLabelsOf(const Json& object) {
  std::map<std::string, Json> out;
  if (!object.is_object()) return out;
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return out;
  const auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return out;
  for (const auto& [key, value] : labels->items()) {
    if (key.starts_with("kubeslurm.io/")) out.emplace(key, value);
  }
  return out;
}

}  // namespace

AdmissionResponse validateLabelledPod(const AdmissionRequest& request,
                                      std::string_view operatorUser) {
  if (request.operation != "CREATE" && request.operation != "UPDATE") return allow();
  if (!request.subResource.empty()) return allow();
  if (!operatorUser.empty() && request.user.user == operatorUser) return allow();
  const std::map<std::string, Json> now = operatorLabelsOf(request.object);
  const std::map<std::string, Json> before = request.operation == "UPDATE"
                                                 ? operatorLabelsOf(request.oldObject)
                                                 : std::map<std::string, Json>{};
  if (now == before) return allow();
  // Name one label that differs: the first key of either map whose value is not the other's.
  std::string key;
  for (const auto* side : {&now, &before}) {
    const auto* other = side == &now ? &before : &now;
    for (const auto& [name, value] : *side) {
      const auto found = other->find(name);
      if (found == other->end() || found->second != value) {
        key = name;
        break;
      }
    }
    if (!key.empty()) break;
  }
  const std::string pod = request.name.empty() ? "a pod" : "pods \"" + request.name + "\"";
  return refuse(pod + ": label " + key +
                    " is the kubeslurm operator's: only it makes and labels a job's pods",
                403, "Forbidden");
}

}  // namespace kubeslurm::controllers
