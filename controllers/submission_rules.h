// What a tenant may submit, and as whom: the admission webhook's decisions on SlurmJobs,
// Partitions and Accounts (DESIGN.md invariant 6, security review C1, H1, H2, H4, H8, M9).
// PURE but for the three questions it asks through SubmissionChecks: RBAC (a
// SubjectAccessReview), whether the submitter is an administrator, and the API server's verdict
// on the job's pods (a server-side dry run, so Pod Security admission and validation answer at
// submission, as sbatch would print them).
//
// SlurmJob, CREATE (by anyone but the operator, whose array tasks copy a checked parent):
//   mutate    spec.user := the Slurm short name of the authenticated user; spec.submitter :=
//             the whole identity. Whatever the object said. An empty spec.partition := the
//             default partition, and an empty spec.account := the namespace's account
//             (defaultAccountFor), as Slurm records both at submission.
//   validate  the object decodes; sizes within Slurm's limits (script, template, environment:
//             "Pathname of a file, directory or other parameter too long"); hostlists no larger
//             than the cluster ("Invalid node name specified"); every host of --nodelist and
//             --exclude is a node of the cluster ("Invalid node name specified") and every
//             feature of --constraint one some node has, in a form the core plans (a&b, a|b,
//             (a|b)&c: ConstraintTerms) ("Invalid feature specification"); spec.user/submitter are
//             the stamped identity; no array-task labels, annotations or SlurmJob owners (only the
//             operator makes tasks); --priority and a negative --nice need the admin verb
//             ("Access/permission denied"); the partition exists; the account exists and admits
//             the submitter, and the partition admits the account ("Invalid account or
//             account/partition combination specified"); the QOS is the account's ("Invalid qos
//             specification"); a pod template needs `create pods` in the namespace and meets the
//             partition's pod policy; the rank pods pass a dry run.
// SlurmJob, UPDATE: identity and task bookkeeping never change; --priority, a negative --nice,
//             a longer time limit, and a new partition, account or QOS once the job left
//             PENDING need the admin verb (as only Slurm operators may); a changed template is
//             checked as at CREATE.
// Partition, Account: the object decodes and its policy is well formed.
// Pod, CREATE and UPDATE, as the chart sends them (those carrying one of kOperatorPodLabels):
//             only the operator sets or changes a `kubeslurm.io/` label. The operator finds a
//             job's ranks by them (and reads their phases, mounts and step Secret); a pod
//             someone else labels so would be a rank the operator trusts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controllers/admission.h"
#include "kubeslurm/access/access_review.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/sbatch_options.h"
#include "kubeslurm/webhook/admission_review.h"

namespace kubeslurm::controllers {

// The cluster's nodes as --nodelist, --exclude and --constraint name them.
struct NodeCatalog {
  std::set<std::string> names;
  std::set<std::string> features;  // every node's (nodeFeatures)
};

struct SubmissionLimits {
  std::size_t maxScriptBytes = std::size_t{1} << 20;  // fits etcd's 1.5 MiB with room to spare
  std::size_t maxTemplateBytes = std::size_t{256} << 10;
  std::size_t maxEnvironmentBytes = std::size_t{256} << 10;
};

// What the rules read of the cluster: the informers' objects at the time of the review.
struct SubmissionContext {
  const std::vector<api::Partition>& partitions;
  const std::vector<api::Account>& accounts;
  std::size_t clusterNodes = 0;
  std::string operatorUser;  // the operator's own user name: its writes are trusted
  AdmissionOptions admission;
  SubmissionLimits limits;
  // Asked only for a job that names nodes or features: at 5,000 nodes a catalog costs a walk of
  // the node cache. Unset: names and features are not checked.
  std::function<NodeCatalog()> nodes;
  // slurm.conf's MaxArraySize (the operator's --max-array-size): array task ids, and the tasks
  // a dependency names in brackets, must be below it.
  std::uint32_t maxArraySize = slurm::kDefaultMaxArraySize;
};

// The questions only the API server can answer.
class SubmissionChecks {
 public:
  virtual ~SubmissionChecks() = default;
  // RBAC: `create pods` in `ns` (a template would otherwise be a way around it).
  virtual Status mayCreatePods(const access::Identity& user, const std::string& ns) = 0;
  // RBAC: the custom verb `admin` on kubeslurm.io slurmjobs in `ns` (the chart's admin role).
  virtual Status isAdmin(const access::Identity& user, const std::string& ns) = 0;
  // Would the API server create this pod (dryRun=All)? Its refusal, in its words, otherwise.
  virtual Status dryRunPod(const api::Pod& pod) = 0;
};

// The RBAC verb on slurmjobs that makes an administrator, and the group.
inline constexpr std::string_view kAdminVerb = "admin";

webhook::AdmissionResponse mutateSlurmJob(const webhook::AdmissionRequest& request,
                                          const SubmissionContext& context);
// What slurmctld says of a job whose --nodelist or --exclude names a host `catalog` does not
// have, or whose --constraint it cannot read or names a feature no node has (job_mgr.c
// _valid_node_list, job_scheduler.c build_feature_list); or of a --constraint in a form the core
// does not plan (matching OR, counts, & and | mixed outside parentheses). nullopt when there is
// nothing to say.
std::optional<std::string> namedNodesProblem(const slurm::JobRequest& request,
                                             const NodeCatalog& catalog);
// What slurmctld says of a job whose --array (`array`, as written) names a task id at or past
// MaxArraySize (job_mgr.c _valid_array_inx), or whose --dependency names such a task in brackets
// (job_scheduler.c _xlate_array_dep); a text that does not parse gets the same words, as sbatch
// gives them. The job's objects decode up to the largest MaxArraySize, and the cluster's is the
// operator's --max-array-size. nullopt when there is nothing to say ("" is no array, no
// dependency).
std::optional<std::string> arraySizeProblem(std::string_view array, std::string_view dependency,
                                            std::uint32_t maxArraySize);
webhook::AdmissionResponse validateSlurmJob(const webhook::AdmissionRequest& request,
                                            const SubmissionContext& context,
                                            SubmissionChecks& checks);
webhook::AdmissionResponse validatePartition(const webhook::AdmissionRequest& request);
webhook::AdmissionResponse validateAccount(const webhook::AdmissionRequest& request);

// The pod labels a job's rank pods carry, one webhook (objectSelector: the key exists) each in
// the chart, so that no other pod in the cluster waits on the operator's webhook. The operator's
// own kubeslurm.io/leader label is not among them: it is on pods in the operator's namespace,
// which only administrators write, and the operator must be able to set it while no replica is
// ready to answer a webhook.
inline constexpr std::array<std::string_view, 4> kOperatorPodLabels = {
    "kubeslurm.io/job-name", "kubeslurm.io/job-id", "kubeslurm.io/rank", "kubeslurm.io/attempt"};
webhook::AdmissionResponse validateLabelledPod(const webhook::AdmissionRequest& request,
                                               std::string_view operatorUser);

}  // namespace kubeslurm::controllers
