// The admission webhook's decisions (controllers/submission_rules.h) as a table: an admission
// request in, a verdict and Slurm's message out. Each row cites the rule it follows: slurmctld's
// (job_mgr.c's checks before a job is accepted, slurm_errno.c's messages), Kubernetes' (RBAC,
// Pod Security), or the security review's finding it closes.
#include "controllers/submission_rules.h"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

using api::Json;
using webhook::AdmissionRequest;
using webhook::AdmissionResponse;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

const access::Identity kAlice{
    "oidc:alice@example.com", "u-alice", {"team-a", "system:authenticated"}, {}};
const access::Identity kMallory{"oidc:mallory@example.com", "u-mallory", {"team-b"}, {}};
const access::Identity kOperator{"system:serviceaccount:kubeslurm-system:kubeslurm", "", {}, {}};

// RBAC as the tests want it: who may create pods, who is an admin; and what a dry run answers.
struct FakeChecks final : SubmissionChecks {
  std::set<std::string> podCreators = {"oidc:alice@example.com"};
  std::set<std::string> admins;
  Status dryRun;
  int dryRuns = 0;
  Status mayCreatePods(const access::Identity& user, const std::string& /*ns*/) override {
    return podCreators.contains(user.user) ? Status::ok()
                                           : Status(StatusCode::kPermissionDenied, "RBAC: no");
  }
  Status isAdmin(const access::Identity& user, const std::string& /*ns*/) override {
    return admins.contains(user.user) ? Status::ok()
                                      : Status(StatusCode::kPermissionDenied, "RBAC: no");
  }
  Status dryRunPod(const api::Pod& /*pod*/) override {
    ++dryRuns;
    return dryRun;
  }
};

class SubmissionRules : public ::testing::Test {
 protected:
  SubmissionRules() {
    partitions.push_back(
        ok(api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                                 {"kind", "Partition"},
                                 {"metadata", {{"name", "gpu"}}},
                                 {"spec", {{"nodes", "gpu-[1-8]"}, {"default", true}}}})));
    partitions.push_back(ok(api::decodePartition(
        {{"apiVersion", "kubeslurm.io/v1alpha1"},
         {"kind", "Partition"},
         {"metadata", {{"name", "urgent"}}},
         {"spec", {{"nodes", "gpu-[1-8]"}, {"allowedAccounts", {"vision"}}}}})));
    accounts.push_back(ok(api::decodeAccount(
        {{"apiVersion", "kubeslurm.io/v1alpha1"},
         {"kind", "Account"},
         {"metadata", {{"name", "nlp"}}},
         {"spec", {{"namespaces", {"team-a"}}, {"allowedQos", {"normal", "long"}}}}})));
    accounts.push_back(ok(api::decodeAccount(
        {{"apiVersion", "kubeslurm.io/v1alpha1"},
         {"kind", "Account"},
         {"metadata", {{"name", "vision"}}},
         {"spec",
          {{"namespaces", {"team-v"}}, {"users", {"bob"}}, {"groups", {"vision-leads"}}}}})));
    context.admission.defaultImage = "busybox:1.36";
  }

  // A SlurmJob as the API server hands it to the validating webhook, spec merged over a plain
  // one, stamped for `user` unless `stamp` is false.
  AdmissionRequest create(const Json& spec, const access::Identity& user = kAlice,
                          bool stamp = true, const Json& metadata = Json::object()) {
    Json object = {
        {"apiVersion", "kubeslurm.io/v1alpha1"},
        {"kind", "SlurmJob"},
        {"metadata", {{"name", "train-abcde"}, {"namespace", "team-a"}, {"uid", "u1"}}},
        {"spec", {{"jobName", "train"}, {"script", "#!/bin/bash\nsrun true\n"}, {"nodes", 1}}}};
    object["metadata"].merge_patch(metadata);
    if (spec.is_object()) object["spec"].merge_patch(spec);
    AdmissionRequest request;
    request.uid = "r1";
    request.operation = "CREATE";
    request.resource = "slurmjobs";
    request.namespaceName = "team-a";
    request.user = user;
    request.object = object;
    if (stamp) applyMutation(request);
    return request;
  }

  // What the mutating webhook's patch does to the object.
  void applyMutation(AdmissionRequest& request) {
    const AdmissionResponse mutated = mutateSlurmJob(request, context);
    request.object = request.object.patch(mutated.patch);
  }

  AdmissionResponse validate(const AdmissionRequest& request) {
    return validateSlurmJob(request, context, checks);
  }

  std::vector<api::Partition> partitions;
  std::vector<api::Account> accounts;
  SubmissionContext context{partitions, accounts, 8, kOperator.user, {}, {}, {}};
  FakeChecks checks;
};

void expectRefused(const AdmissionResponse& response, const std::string& message) {
  EXPECT_FALSE(response.allowed);
  EXPECT_NE(response.message.find(message), std::string::npos) << response.message;
}

TEST_F(SubmissionRules, AnOrdinaryJobIsStampedWithItsSubmitterAndAdmitted) {
  AdmissionRequest request = create({{"user", "root"}}, kAlice, /*stamp=*/false);
  const AdmissionResponse mutated = mutateSlurmJob(request, context);
  ASSERT_EQ(mutated.patch.size(), 4U);
  request.object = request.object.patch(mutated.patch);
  // No -p: the default partition, recorded at submission as Slurm does.
  EXPECT_EQ(request.object["spec"]["partition"], "gpu");
  // No -A: its namespace's account, recorded at submission too.
  EXPECT_EQ(request.object["spec"]["account"], "nlp");
  // The short name, whatever the object said (security review H1: spec.user was taken as given).
  EXPECT_EQ(request.object["spec"]["user"], "alice");
  EXPECT_EQ(request.object["spec"]["submitter"],
            Json({{"username", "oidc:alice@example.com"},
                  {"uid", "u-alice"},
                  {"groups", {"team-a", "system:authenticated"}}}));
  const AdmissionResponse verdict = validate(request);
  EXPECT_TRUE(verdict.allowed) << verdict.message;
  EXPECT_EQ(checks.dryRuns, 1);  // the rank pod went through the API server's admission
}

// srun or salloc from a login host: an allocation runs steps only, never a script, a pod
// template or an array of its own.
TEST_F(SubmissionRules, AnInteractiveAllocationRunsNoScriptTemplateOrArray) {
  // Without the in-pod runtime no rank could serve its steps: its dry-run pods say so.
  expectRefused(validate(create({{"interactive", true}, {"script", nullptr}})),
                "needs the in-pod runtime");
  context.admission.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  const AdmissionResponse allocation =
      validate(create({{"interactive", true}, {"script", nullptr}}));
  EXPECT_TRUE(allocation.allowed) << allocation.message;
  expectRefused(validate(create({{"interactive", true}})), "runs steps only");
  expectRefused(validate(create({{"interactive", true}, {"script", nullptr}, {"array", "0-3"}})),
                "runs steps only");
  expectRefused(validate(create({{"interactive", true},
                                 {"script", nullptr},
                                 {"podTemplate", {{"spec", {{"containers", Json::array()}}}}}})),
                "runs steps only");
}

TEST_F(SubmissionRules, ANamedPartitionIsKept) {
  AdmissionRequest request = create({{"partition", "urgent"}}, kAlice, /*stamp=*/false);
  request.object = request.object.patch(mutateSlurmJob(request, context).patch);
  EXPECT_EQ(request.object["spec"]["partition"], "urgent");
}

TEST_F(SubmissionRules, ANamedAccountIsKeptAndNoneIsStampedWithoutAccounts) {
  AdmissionRequest named = create({{"account", "vision"}}, kAlice, /*stamp=*/false);
  named.object = named.object.patch(mutateSlurmJob(named, context).patch);
  EXPECT_EQ(named.object["spec"]["account"], "vision");
  accounts.clear();  // a cluster without Accounts: no account to record
  AdmissionRequest none = create(Json::object(), kAlice, /*stamp=*/false);
  none.object = none.object.patch(mutateSlurmJob(none, context).patch);
  EXPECT_FALSE(none.object["spec"].contains("account"));
}

TEST_F(SubmissionRules, AJobThatSkippedTheStampIsRefused) {
  // Without the mutating webhook (a misconfigured cluster) no one passes as someone else.
  AdmissionRequest request = create({{"user", "bob"}}, kAlice, /*stamp=*/false);
  expectRefused(validate(request), "Access/permission denied");
}

TEST_F(SubmissionRules, TheOperatorsArrayTasksAreTrustedAsWritten) {
  AdmissionRequest request = create({{"user", "alice"}}, kOperator, /*stamp=*/false,
                                    {{"labels", {{"kubeslurm.io/array-job", "train-abcde"}}}});
  EXPECT_TRUE(mutateSlurmJob(request, context).patch.empty());
  EXPECT_TRUE(validate(request).allowed);
}

// Security review H2: a forged task joined any array, consumed its %N slots, backdated itself.
TEST_F(SubmissionRules, OnlyTheOperatorCreatesArrayTasks) {
  expectRefused(
      validate(create({}, kAlice, true, {{"labels", {{"kubeslurm.io/array-task", "3"}}}})),
      "only the operator creates array tasks (label kubeslurm.io/array-task)");
  expectRefused(validate(create({}, kAlice, true,
                                {{"annotations", {{"kubeslurm.io/array-submit-time", "1"}}}})),
                "annotation kubeslurm.io/array-submit-time");
  expectRefused(validate(create({}, kAlice, true,
                                {{"ownerReferences",
                                  {{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                    {"kind", "SlurmJob"},
                                    {"name", "other"},
                                    {"uid", "u9"}}}}})),
                "an owner of kind SlurmJob");
}

// Slurm: --priority and a negative --nice are for operators and administrators
// (ESLURM_ACCESS_DENIED); here the RBAC verb `admin` on slurmjobs.
TEST_F(SubmissionRules, PriorityAndNegativeNiceNeedTheAdminVerb) {
  expectRefused(validate(create({{"priority", 4294967293}})),
                "Access/permission denied (--priority is for administrators)");
  expectRefused(validate(create({{"nice", -2147483645}})),
                "Access/permission denied (a negative --nice is for administrators)");
  EXPECT_TRUE(validate(create({{"nice", 100}})).allowed);
  checks.admins.insert(kAlice.user);
  EXPECT_TRUE(validate(create({{"priority", 4294967293}})).allowed);
}

// ESLURM_INVALID_ACCOUNT: an account the user has no association with, or a partition whose
// AllowAccounts leaves it out.
TEST_F(SubmissionRules, AccountsAdmitTheirNamespacesUsersAndGroups) {
  EXPECT_TRUE(validate(create({{"account", "nlp"}})).allowed);  // team-a's
  expectRefused(validate(create({{"account", "vision"}})),
                "Invalid account or account/partition combination specified (Account vision "
                "does not admit user alice from namespace team-a)");
  expectRefused(validate(create({{"account", "nope"}})),
                "Invalid account or account/partition combination specified (no Account nope)");
  const access::Identity bob{"bob", "", {}, {}};
  checks.podCreators.insert("bob");
  EXPECT_TRUE(validate(create({{"account", "vision"}}, bob)).allowed);  // listed by name
  const access::Identity lead{"carol", "", {"vision-leads"}, {}};
  EXPECT_TRUE(validate(create({{"account", "vision"}}, lead)).allowed);  // by group
  // The partition's allowedAccounts: team-a's default account is nlp.
  expectRefused(validate(create({{"partition", "urgent"}})),
                "partition urgent does not allow account nlp");
  expectRefused(validate(create({{"partition", "nowhere"}})), "Invalid partition name specified");
}

// sbatch -p a,b: one unknown name refuses the list (get_part_list); a partition that denies the
// account does not, while another allows it (_valid_job_part under the default
// EnforcePartLimits=NO: the scheduler leaves that partition out); all denying refuses. Each
// partition's pods go through the API server's dry run, since the job may start in any.
TEST_F(SubmissionRules, AJobOfSeveralPartitionsIsCheckedInEach) {
  checks.dryRuns = 0;
  EXPECT_TRUE(validate(create({{"partition", "urgent,gpu"}})).allowed);
  EXPECT_EQ(checks.dryRuns, 2);
  expectRefused(validate(create({{"partition", "gpu,nowhere"}})),
                "Invalid partition name specified: nowhere");
  expectRefused(validate(create({{"partition", "urgent,urgent"}})),
                "partition urgent does not allow account nlp");
}

// ESLURM_INVALID_QOS: a QOS the account's association does not allow.
TEST_F(SubmissionRules, TheQosMustBeTheAccounts) {
  EXPECT_TRUE(validate(create({{"qos", "long"}})).allowed);
  expectRefused(validate(create({{"qos", "preempting"}})),
                "Invalid qos specification (account nlp does not allow QOS preempting)");
}

// Security review C1: a template is a way to create pods; the submitter must be allowed to, and
// the partition's pod policy holds.
TEST_F(SubmissionRules, APodTemplateNeedsCreatePodsAndMeetsThePolicy) {
  const Json tmpl = {
      {"podTemplate", {{"spec", {{"containers", {{{"name", "m"}, {"image", "pytorch:2"}}}}}}}}};
  EXPECT_TRUE(validate(create(tmpl)).allowed);
  checks.podCreators.clear();
  expectRefused(validate(create(tmpl)), "a pod template needs `create pods` in namespace team-a");
  checks.podCreators.insert(kAlice.user);
  Json privileged = tmpl;
  privileged["podTemplate"]["spec"]["hostPID"] = true;
  expectRefused(validate(create(privileged)),
                "spec.podTemplate.spec.hostPID: host namespaces are not allowed in partition gpu");
  Json account = tmpl;
  account["podTemplate"]["spec"]["serviceAccountName"] = "ci-deployer";
  expectRefused(validate(create(account)), "ServiceAccount \"ci-deployer\"");
}

// The API server's verdict at submission (security review H6): Pod Security admission and
// validation answer now, in their words, rather than after the job held nodes.
TEST_F(SubmissionRules, TheDryRunsRefusalReachesTheSubmitter) {
  checks.dryRun =
      Status(StatusCode::kPermissionDenied,
             "pods \"train-0\" is forbidden: violates PodSecurity \"restricted:latest\"");
  expectRefused(validate(create({})),
                "the job's pods would be refused: pods \"train-0\" is forbidden: violates "
                "PodSecurity");
}

// ESLURM_PATHNAME_TOO_LONG for a parameter beyond its limit; ESLURM_INVALID_NODE_NAME for a
// hostlist naming nodes the cluster does not have (security review C3: 17 bytes, 4 M hosts).
TEST_F(SubmissionRules, SizesAreBounded) {
  expectRefused(validate(create({{"script", std::string(context.limits.maxScriptBytes + 1, 'x')}})),
                "Pathname of a file, directory or other parameter too long (spec.script");
  Json env = Json::object();
  for (int i = 0; i < 8; ++i) env["V" + std::to_string(i)] = std::string(40000, 'v');
  expectRefused(validate(create({{"environment", env}})), "spec.environment");
  expectRefused(validate(create({{"nodeList", "a[0-65535]b[0-63]"}})),
                "Invalid node name specified (--nodelist names more hosts than the cluster has)");
  expectRefused(validate(create({{"exclude", "gpu-[1-9]"}})), "--exclude");
  Json big = {
      {"podTemplate", {{"metadata", {{"annotations", {{"x", std::string(300000, 'a')}}}}}}}};
  expectRefused(validate(create(big)), "spec.podTemplate: ");
}

// sbatch -N0: slurmctld (job_mgr.c _valid_job_part) takes zero nodes for a batch job, which
// kubeslurm runs on one node, and refuses it for an array (ESLURM_INVALID_NODE_COUNT).
TEST_F(SubmissionRules, ZeroNodesAreForASingleBatchJobOnly) {
  EXPECT_TRUE(validate(create({{"nodes", 0}})).allowed);
  expectRefused(validate(create({{"nodes", 0}, {"array", "0-3"}})),
                "Node count specification invalid (spec.nodes 0 in a job array)");
}

// Slurm refuses a host or a feature the cluster does not have at submission (job_mgr.c
// _valid_node_list, job_scheduler.c build_feature_list; the words are pinned against a real
// slurmctld by the slurmctld differential test), and reads ',' as '&'.
TEST_F(SubmissionRules, NodesAndFeaturesMustBeTheClusters) {
  context.nodes = [] { return NodeCatalog{{"gpu-1", "gpu-2"}, {"a100", "ib"}}; };
  EXPECT_TRUE(validate(create({{"nodeList", "gpu-[1-2]"}, {"exclude", "gpu-1"}})).allowed);
  EXPECT_TRUE(validate(create({{"constraint", "a100&ib"}})).allowed);
  EXPECT_TRUE(validate(create({{"constraint", "a100,ib"}})).allowed);
  expectRefused(validate(create({{"nodeList", "gpu-[2-3]"}})),
                "Invalid node name specified (--nodelist: no node \"gpu-3\")");
  expectRefused(validate(create({{"exclude", "nosuch"}})),
                "Invalid node name specified (--exclude: no node \"nosuch\")");
  expectRefused(validate(create({{"constraint", "a100&A100"}})),
                "Invalid feature specification (no node has feature \"A100\")");
  expectRefused(validate(create({{"constraint", "!a100"}})), "no node has feature \"!a100\"");
  expectRefused(validate(create({{"constraint", "&a100"}})),
                "Invalid feature specification (--constraint \"&a100\")");
  EXPECT_TRUE(validate(create({{"constraint", "a100|ib"}})).allowed);
  EXPECT_TRUE(validate(create({{"constraint", "(a100|ib)&ib"}})).allowed);
  expectRefused(validate(create({{"constraint", "a100|A100"}})), "no node has feature \"A100\"");
  // A matching OR of features nodes have is planned; one of a feature no node has is not.
  EXPECT_TRUE(validate(create({{"constraint", "[a100|ib]"}})).allowed);
  expectRefused(validate(create({{"constraint", "ib&[a100|A100]"}})),
                "no node has feature \"A100\"");
  // Slurm plans these; the core does not yet, and a job must not wait for a node it cannot see.
  expectRefused(validate(create({{"constraint", "[a100|ib]*2"}})),
                "Invalid feature specification (kubeslurm does not plan a*N, [...] beyond [a|b] "
                "joined by &, or & and | mixed outside parentheses)");
  expectRefused(validate(create({{"constraint", "a100&ib|a100"}})), "kubeslurm does not plan");

  // Without the node cache the form is still checked, and the names are the operator's to find.
  context.nodes = nullptr;
  EXPECT_TRUE(validate(create({{"nodeList", "gpu-9"}, {"constraint", "x&y"}})).allowed);
  expectRefused(validate(create({{"constraint", "a100*2"}})), "kubeslurm does not plan");
}

// slurmctld checks task ids against its MaxArraySize at submission (job_mgr.c _valid_array_inx:
// ESLURM_INVALID_ARRAY), and bracketed tasks of a dependency too (job_scheduler.c
// _xlate_array_dep); sbatch prints the words after "Batch job submission failed: ".
TEST_F(SubmissionRules, ArraysAndTheirDependenciesStayBelowMaxArraySize) {
  EXPECT_TRUE(validate(create({{"array", "0-1000"}})).allowed);  // the default, 1001
  const AdmissionResponse big = validate(create({{"array", "0-1001"}}));
  EXPECT_FALSE(big.allowed);
  EXPECT_EQ(big.message, "Invalid job array specification");
  expectRefused(validate(create({{"array", "1,5000%2"}})), "Invalid job array specification");
  expectRefused(validate(create({{"dependency", "afterok:5_[1001]"}})), "Job dependency problem");
  EXPECT_TRUE(validate(create({{"dependency", "afterok:5_1001"}})).allowed);  // no brackets
  // Refused before the object is decoded, where each bracket of a dependency could expand to
  // 4,000,001 terms: a 4 KiB dependency of such brackets would have been a billion terms.
  std::string greedy = "afterok:5_[0-3999999]";
  while (greedy.size() < 4000) greedy += ",afterok:5_[0-3999999]";
  expectRefused(validate(create({{"dependency", greedy}})), "Job dependency problem");
  expectRefused(validate(create({{"array", "0-3999999"}})), "Invalid job array specification");

  context.maxArraySize = 100001;  // --max-array-size
  EXPECT_TRUE(validate(create({{"array", "0-99999%50"}})).allowed);
  EXPECT_TRUE(validate(create({{"dependency", "afterok:5_[1001-1002]"}})).allowed);
  expectRefused(validate(create({{"array", "100001"}})), "Invalid job array specification");

  context.maxArraySize = 0;  // slurm.conf: no arrays at all
  expectRefused(validate(create({{"array", "0"}})), "Invalid job array specification");
  EXPECT_TRUE(validate(create({})).allowed);

  // The operator's own task writes carry their array's spec as it was admitted.
  AdmissionRequest task = create({{"user", "alice"}, {"array", "0-5"}}, kOperator,
                                 /*stamp=*/false, {{"labels", {{"kubeslurm.io/array-job", "a"}}}});
  EXPECT_TRUE(validate(task).allowed);
}

TEST_F(SubmissionRules, WhatDoesNotDecodeIsRefusedWithTheDecodersWords) {
  const AdmissionResponse verdict = validate(create({{"nodes", "many"}}));
  EXPECT_FALSE(verdict.allowed);
  EXPECT_EQ(verdict.code, 422);
}

class SubmissionUpdates : public SubmissionRules {
 protected:
  AdmissionRequest update(const Json& before, const Json& after, const std::string& state) {
    AdmissionRequest old = create(before);
    AdmissionRequest request = create(after);
    request.operation = "UPDATE";
    request.oldObject = old.object;
    request.oldObject["status"] = {{"jobId", 7}, {"state", state}};
    request.object["status"] = request.oldObject["status"];
    return request;
  }
};

// Slurm: users may lower a time limit, only operators raise it; a running job's partition and
// account are the administrator's (security review M9).
TEST_F(SubmissionUpdates, WhatOnlyAnAdministratorMayChange) {
  EXPECT_TRUE(
      validate(update({{"timeLimit", "2:00:00"}}, {{"timeLimit", "1:00:00"}}, "RUNNING")).allowed);
  expectRefused(
      validate(update({{"timeLimit", "1:00:00"}}, {{"timeLimit", "UNLIMITED"}}, "RUNNING")),
      "a longer time limit is for administrators");
  expectRefused(validate(update({{"timeLimit", "1:00:00"}}, {{"timeLimit", "1:00:01"}}, "PENDING")),
                "a longer time limit");
  expectRefused(validate(update({{"account", "vision"}}, {{"account", "nlp"}}, "RUNNING")),
                "the account of a started job is for administrators");
  EXPECT_TRUE(validate(update({{"account", "vision"}}, {{"account", "nlp"}}, "PENDING")).allowed);
  expectRefused(validate(update({}, {{"priority", 10}}, "PENDING")), "--priority");
  checks.admins.insert(kAlice.user);
  EXPECT_TRUE(validate(update({{"timeLimit", "1:00:00"}}, {{"timeLimit", "UNLIMITED"}}, "RUNNING"))
                  .allowed);
}

// A job that names no limit runs with its partition's default: raising it from there is a raise.
TEST_F(SubmissionUpdates, TheDefaultLimitCountsAsTheJobsOwn) {
  partitions[0] = ok(api::decodePartition(
      {{"apiVersion", "kubeslurm.io/v1alpha1"},
       {"kind", "Partition"},
       {"metadata", {{"name", "gpu"}}},
       {"spec", {{"nodes", "gpu-[1-8]"}, {"default", true}, {"defaultTime", "1:00:00"}}}}));
  expectRefused(validate(update({}, {{"timeLimit", "UNLIMITED"}}, "PENDING")),
                "a longer time limit is for administrators");
  EXPECT_TRUE(validate(update({}, {{"timeLimit", "30:00"}}, "PENDING")).allowed);
}

// scontrol update Dependency= is held to MaxArraySize as a submission is; a job whose
// dependency does not change is not held to a limit lowered since it was submitted.
TEST_F(SubmissionUpdates, ANewDependencyStaysBelowMaxArraySize) {
  expectRefused(validate(update({}, {{"dependency", "afterok:5_[2000]"}}, "PENDING")),
                "Job dependency problem");
  context.maxArraySize = 4001;
  const AdmissionRequest raised = update({}, {{"dependency", "afterok:5_[2000]"}}, "PENDING");
  EXPECT_TRUE(validate(raised).allowed);
  context.maxArraySize = 10;
  AdmissionRequest unchanged =
      update({{"dependency", "afterok:5_[2000]"}},
             {{"dependency", "afterok:5_[2000]"}, {"comment", "x"}}, "PENDING");
  EXPECT_TRUE(validate(unchanged).allowed);
}

TEST_F(SubmissionUpdates, IdentityNeverChanges) {
  AdmissionRequest request = update({}, {}, "PENDING");
  request.object["spec"]["user"] = "bob";
  expectRefused(validate(request), "spec.user and spec.submitter are set at submission");
  request = update({}, {}, "PENDING");
  request.object["spec"]["submitter"]["username"] = "oidc:bob@example.com";
  expectRefused(validate(request), "set at submission");
}

TEST(SubmissionObjects, PartitionsAndAccountsMustDecodeAndMakeSense) {
  AdmissionRequest request;
  request.operation = "CREATE";
  request.object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                    {"kind", "Partition"},
                    {"metadata", {{"name", "p"}}},
                    {"spec", {{"nodes", "n[1-2]"}, {"podPolicy", {{"podSecurity", "lenient"}}}}}};
  const AdmissionResponse partition = validatePartition(request);
  EXPECT_FALSE(partition.allowed);
  EXPECT_EQ(partition.message,
            "spec.podPolicy.podSecurity: \"lenient\" is not baseline, restricted or privileged");
  request.object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                    {"kind", "Account"},
                    {"metadata", {{"name", "a"}}},
                    {"spec", {{"parent", "a"}}}};
  EXPECT_FALSE(validateAccount(request).allowed);
}

// A pod's request as the chart's pod webhooks send it (the pod carries an operator label).
AdmissionRequest podRequest(const std::string& operation, const access::Identity& user, Json labels,
                            Json oldLabels = nullptr) {
  AdmissionRequest request;
  request.operation = operation;
  request.kind = "Pod";
  request.resource = "pods";
  request.namespaceName = "team-a";
  request.name = "job-x-0";
  request.user = user;
  request.object = {{"metadata", {{"name", "job-x-0"}, {"labels", std::move(labels)}}}};
  if (!oldLabels.is_null()) {
    request.oldObject = {{"metadata", {{"name", "job-x-0"}, {"labels", std::move(oldLabels)}}}};
  }
  return request;
}

TEST(LabelledPods, OnlyTheOperatorMakesAPodWithAJobsLabels) {
  const Json rank = {{"kubeslurm.io/job-name", "job-x"}, {"kubeslurm.io/attempt", "0"}};
  const AdmissionResponse planted =
      validateLabelledPod(podRequest("CREATE", kMallory, rank), kOperator.user);
  EXPECT_FALSE(planted.allowed);
  EXPECT_EQ(planted.code, 403);
  EXPECT_EQ(planted.message,
            "pods \"job-x-0\": label kubeslurm.io/attempt is the kubeslurm operator's: only it "
            "makes and labels a job's pods");
  EXPECT_TRUE(validateLabelledPod(podRequest("CREATE", kOperator, rank), kOperator.user).allowed);
  // With no operator name configured, nobody is the operator.
  EXPECT_FALSE(validateLabelledPod(podRequest("CREATE", access::Identity{}, rank), "").allowed);
}

TEST(LabelledPods, OthersMayChangeAPodButNotItsOperatorLabels) {
  const Json rank = {{"kubeslurm.io/job-name", "job-x"}, {"kubeslurm.io/rank", "0"}};
  Json relabelled = rank;
  relabelled["team"] = "vision";
  EXPECT_TRUE(
      validateLabelledPod(podRequest("UPDATE", kAlice, relabelled, rank), kOperator.user).allowed);
  Json moved = rank;
  moved["kubeslurm.io/job-name"] = "job-y";
  EXPECT_FALSE(
      validateLabelledPod(podRequest("UPDATE", kAlice, moved, rank), kOperator.user).allowed);
  Json stripped = rank;
  stripped.erase("kubeslurm.io/rank");
  const AdmissionResponse strip =
      validateLabelledPod(podRequest("UPDATE", kAlice, stripped, rank), kOperator.user);
  EXPECT_FALSE(strip.allowed);
  EXPECT_NE(strip.message.find("kubeslurm.io/rank"), std::string::npos) << strip.message;
  // Status writes and deletions are not this rule's.
  AdmissionRequest status = podRequest("UPDATE", kMallory, moved, rank);
  status.subResource = "status";
  EXPECT_TRUE(validateLabelledPod(status, kOperator.user).allowed);
  EXPECT_TRUE(validateLabelledPod(podRequest("DELETE", kMallory, rank), kOperator.user).allowed);
}

}  // namespace
}  // namespace kubeslurm::controllers
