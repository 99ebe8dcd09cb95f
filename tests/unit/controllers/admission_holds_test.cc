// The jobs the controllers hold out of the plan (admission_holds.h): a pod check per spec, a
// refusal as written until the spec changes (also after a leadership change), and a backoff for
// the rest. Security review C2 and H6: one job's objects never crash the operator, and a job the
// API server refuses is not rolled back onto the whole partition every cycle.
#include "controllers/admission_holds.h"

#include <gtest/gtest.h>

#include "controllers/admission.h"
#include "controllers/job_object.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

constexpr core::Time kNow = 1795000000;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

api::Partition partition(const std::string& resourceVersion = "1") {
  return ok(
      api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                            {"kind", "Partition"},
                            {"metadata", {{"name", "train"}, {"resourceVersion", resourceVersion}}},
                            {"spec", {{"nodes", "gpu-[1-3]"}, {"default", true}}}}));
}

api::SlurmJobObject job(std::int64_t generation, const Json& spec = Json::object(),
                        const Json& conditions = Json::array()) {
  Json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                 {"kind", "SlurmJob"},
                 {"metadata",
                  {{"name", "train-abcde"},
                   {"namespace", "team-a"},
                   {"uid", "uid-1"},
                   {"generation", generation}}},
                 {"spec",
                  {{"jobName", "train"},
                   {"user", "alice"},
                   {"script", "#!/bin/bash\nsrun true\n"},
                   {"nodes", 1}}},
                 {"status", {{"jobId", 42}, {"state", "PENDING"}, {"conditions", conditions}}}};
  object["spec"].merge_patch(spec);
  return ok(api::decodeSlurmJob(object));
}

ClusterObjects cluster(api::SlurmJobObject j, const std::string& partitionVersion = "1") {
  ClusterObjects objects;
  objects.partitions.push_back(partition(partitionVersion));
  objects.jobs.push_back(std::move(j));
  return objects;
}

// A check that counts its calls and answers as told.
struct CountingCheck {
  int calls = 0;
  Status answer;
  AdmissionHolds::PodCheck fn() {
    return [this](const api::SlurmJobObject&, const api::Partition&) {
      ++calls;
      return answer;
    };
  }
};

TEST(AdmissionHolds, AJobWhosePodsCannotBeMadeIsHeldAndCheckedOncePerSpecAndPartition) {
  AdmissionHolds holds;
  CountingCheck check;
  check.answer = invalidArgument("spec.podTemplate: the template has no container to run");
  JobHolds h = holds.holdsFor(cluster(job(1)), kNow, check.fn());
  ASSERT_EQ(h.invalid.count("team-a/train-abcde"), 1U);
  EXPECT_EQ(h.invalid.at("team-a/train-abcde").reason, "InvalidPodSpec");
  EXPECT_EQ(h.invalid.at("team-a/train-abcde").message,
            "spec.podTemplate: the template has no container to run");
  (void)holds.holdsFor(cluster(job(1)), kNow + 1, check.fn());
  EXPECT_EQ(check.calls, 1);  // same spec, same partition: the answer is cached
  check.answer = Status::ok();
  EXPECT_TRUE(holds.holdsFor(cluster(job(2)), kNow + 2, check.fn()).invalid.empty());
  EXPECT_EQ(check.calls, 2);  // the spec changed
  (void)holds.holdsFor(cluster(job(2), "7"), kNow + 3, check.fn());
  EXPECT_EQ(check.calls, 3);  // the partition changed
}

TEST(AdmissionHolds, ARefusalAsWrittenHoldsUntilTheSpecChanges) {
  AdmissionHolds holds;
  CountingCheck check;
  const auto problem =
      holds.failed(job(3), Status(StatusCode::kInvalidArgument, "Pod \"x\" is invalid"), kNow);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->reason, "InvalidPodSpec");
  EXPECT_EQ(problem->message, "Pod \"x\" is invalid");
  EXPECT_EQ(holds.holdsFor(cluster(job(3)), kNow + 3600, check.fn()).invalid.size(), 1U);
  EXPECT_TRUE(holds.holdsFor(cluster(job(4)), kNow + 3600, check.fn()).invalid.empty());
}

// A new leader knows nothing of the last one's refusals but what the job's Valid condition says.
TEST(AdmissionHolds, ARefusalOnRecordAtTheCurrentGenerationHoldsForANewLeader) {
  const Json refused = Json::array({{{"type", "Valid"},
                                     {"status", "False"},
                                     {"reason", "InvalidPodSpec"},
                                     {"message", "violates PodSecurity \"baseline:latest\""},
                                     {"observedGeneration", 5},
                                     {"lastTransitionTime", "2026-11-21T04:30:00Z"}}});
  AdmissionHolds fresh;
  CountingCheck check;
  JobHolds h = fresh.holdsFor(cluster(job(5, Json::object(), refused)), kNow, check.fn());
  ASSERT_EQ(h.invalid.size(), 1U);
  EXPECT_EQ(h.invalid.begin()->second.message, "violates PodSecurity \"baseline:latest\"");
  EXPECT_EQ(check.calls, 0);
  // Edited since: the record speaks of an older spec.
  EXPECT_TRUE(
      fresh.holdsFor(cluster(job(6, Json::object(), refused)), kNow, check.fn()).invalid.empty());
}

TEST(AdmissionHolds, OtherFailuresBackOffDoublingToFiveMinutesAndASuccessClearsThem) {
  AdmissionHolds holds;
  CountingCheck check;
  const api::SlurmJobObject j = job(1);
  std::vector<core::Duration> waits;
  for (int i = 0; i < 8; ++i) {
    EXPECT_FALSE(holds.failed(j, Status(StatusCode::kUnavailable, "etcdserver: timeout"), kNow));
    waits.push_back(holds.holdsFor(cluster(j), kNow, check.fn()).retryAfter.at(jobKey(j)) - kNow);
  }
  EXPECT_EQ(waits, (std::vector<core::Duration>{10, 20, 40, 80, 160, 300, 300, 300}));
  // Past the retry time the job is planned as any other.
  EXPECT_TRUE(holds.holdsFor(cluster(j), kNow + 301, check.fn()).retryAfter.empty());
  holds.succeeded(jobKey(j));
  EXPECT_FALSE(holds.failed(j, Status(StatusCode::kAborted, "conflict"), kNow));
  EXPECT_EQ(holds.holdsFor(cluster(j), kNow, check.fn()).retryAfter.at(jobKey(j)), kNow + 10);
}

TEST(AdmissionHolds, WhatCountsAsARefusalAsWritten) {
  struct Row {
    Status cause;
    bool asWritten;
  };
  const std::vector<Row> rows = {
      {Status(StatusCode::kInvalidArgument, "spec.containers[0].name: Invalid value"), true},
      {Status(StatusCode::kPermissionDenied,
              "pods \"x-0\" is forbidden: violates PodSecurity \"baseline:latest\": privileged"),
       true},
      // Our own RBAC, or a quota: an administrator can fix it without the job changing.
      {Status(StatusCode::kPermissionDenied, "pods is forbidden: User \"op\" cannot create"),
       false},
      {Status(StatusCode::kPermissionDenied, "exceeded quota: compute"), false},
      {Status(StatusCode::kUnavailable, "connection refused"), false},
      {Status(StatusCode::kAlreadyExists, "pods \"x-0\" already exists"), false},
  };
  for (const Row& row : rows)
    EXPECT_EQ(refusedAsWritten(row.cause), row.asWritten) << row.cause.toString();
}

TEST(AdmissionHolds, ForgetsJobsThatAreGone) {
  AdmissionHolds holds;
  CountingCheck check;
  (void)holds.failed(job(1), Status(StatusCode::kUnavailable, "x"), kNow);
  (void)holds.holdsFor(ClusterObjects{}, kNow, check.fn());  // the job was deleted
  EXPECT_TRUE(holds.holdsFor(cluster(job(1)), kNow, check.fn()).retryAfter.empty());
}

// Security review C2: a template field of the wrong JSON type with a Pyxis tmpfs mount made
// nlohmann throw type_error out of an admission thread. The check builds the pods: the job gets
// an error, the operator goes on.
TEST(CheckJobPods, ATemplateOfTheWrongShapeIsAnErrorNotAThrow) {
  const Json poison = {
      {"container", {{"mounts", {"tmpfs:/scratch"}}}},
      {"podTemplate",
       {{"spec",
         {{"containers",
           {{{"name", "main"},
             {"image", "busybox"},
             {"volumeMounts", {{{"name", 7}, {"mountPath", 5}}, "not an object"}}}}},
          {"volumes", {{{"name", 7}}, 3}}}}}}};
  const api::SlurmJobObject j = job(1, poison);
  const GangIdentity who{42, 0, "alice", "", ""};
  AdmissionOptions options;
  options.defaultImage = "busybox";
  EXPECT_NO_THROW({
    const Status checked = checkJobPods(j, partition(), who, options);
    (void)checked;
  });
  // A template without a container: refused with the reason, before it can hold nodes.
  const Status empty =
      checkJobPods(job(1, {{"podTemplate", {{"spec", {{"containers", Json::array()}}}}}}),
                   partition(), who, options);
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(empty.message()).find("no container"), std::string::npos)
      << empty.toString();
}

}  // namespace
}  // namespace kubeslurm::controllers
