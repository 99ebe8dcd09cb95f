// The SlurmJob codec (kubeslurm/api/slurmjob.h): names, every field both ways, errors, and the
// round-trip rule over objects the API server returns.
#include "kubeslurm/api/slurmjob.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kubeslurm/api/core_v1.h"
#include "tests/unit/api/slurmjob_fixtures.h"

namespace kubeslurm::api {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using testing::richJob;

struct NameCase {
  std::string jobName;
  std::string base;
};

class GenerateNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(GenerateNameTest, MakesDnsLabelBase) {
  EXPECT_EQ(generateNameBase(GetParam().jobName), GetParam().base);
}

INSTANTIATE_TEST_SUITE_P(
    Names, GenerateNameTest,
    ::testing::Values(NameCase{"x", "x"}, NameCase{"wrap", "wrap"},
                      NameCase{"x.sbatch", "x-sbatch"}, NameCase{"My Job_2", "my-job-2"},
                      NameCase{"123", "job-123"}, NameCase{"--a--b--", "a-b"}, NameCase{"", "job"},
                      NameCase{"???", "job"}, NameCase{std::string(80, 'a'), std::string(46, 'a')},
                      NameCase{std::string(45, 'a') + "-b", std::string(45, 'a')}));

TEST(SlurmJobCodec, RoundTripsEveryField) {
  const SlurmJobObject job = richJob();
  const json object = encodeSlurmJob(job);
  EXPECT_EQ(object["spec"]["gpus"], "a100:16");
  EXPECT_EQ(object["spec"]["gpusPerNode"], 8);
  EXPECT_EQ(object["spec"]["memory"], "64G");
  EXPECT_EQ(object["spec"]["memoryPerGpu"], "2T");
  EXPECT_EQ(object["spec"]["timeMin"], "UNLIMITED");
  EXPECT_EQ(object["spec"]["switches"], (json{{"count", 1}, {"maxWait", "00:05:00"}}));
  EXPECT_EQ(object["spec"]["begin"], "2026-11-21T04:35:12Z");
  EXPECT_EQ(object["spec"]["signal"], "B:USR1@90");
  EXPECT_EQ(object["spec"]["mailType"], "BEGIN,END");
  EXPECT_EQ(object["status"]["startTime"], "2026-11-21T04:35:13Z");
  StatusOr<SlurmJobObject> decoded = decodeSlurmJob(object);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(*decoded, job);
}

TEST(SlurmJobCodec, DecodeAcceptsIntegersAndSlurmText) {
  const json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                       {"kind", "SlurmJob"},
                       {"metadata", {{"name", "j"}}},
                       {"spec",
                        {{"jobName", "j"},
                         {"gpusPerNode", "a100:4"},
                         {"memory", 4096},
                         {"timeLimit", "1-0"},
                         {"exclusiveMode", "user"},
                         {"script", "#!/bin/sh\n"}}}};
  StatusOr<SlurmJobObject> job = decodeSlurmJob(object);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_THAT(job->request.gpusPerNode, ElementsAre(slurm::GresRequest{"gpu", "a100", 4}));
  EXPECT_EQ(job->request.memPerNodeMb, 4096U);
  EXPECT_EQ(job->request.timeLimit, slurm::TimeLimit{86400});
  EXPECT_EQ(job->request.shared, slurm::SharedMode::kExclusiveUser);
}

TEST(SlurmJobCodec, DecodeErrorsNameTheField) {
  auto error = [](json spec) {
    spec["jobName"] = "j";
    const json object = {
        {"apiVersion", "kubeslurm.io/v1alpha1"}, {"kind", "SlurmJob"}, {"spec", spec}};
    StatusOr<SlurmJobObject> job = decodeSlurmJob(object);
    return job.isOk() ? std::string("ok") : job.status().message();
  };
  EXPECT_EQ(error({{"timeLimit", "xx"}}), "spec.timeLimit: invalid time limit \"xx\"");
  EXPECT_EQ(error({{"nodes", "4"}}), "spec.nodes: must be an integer");
  EXPECT_EQ(error({{"ntasks", 0}}), "spec.ntasks: out of range");
  EXPECT_EQ(error({{"gres", "foo:1"}}), "spec.gres: invalid GPU request \"foo:1\"");
  // A hostile list (a megabyte of GPU types) is refused at once, and the error quotes only the
  // start of it: the message travels on into a condition and the webhook's answer.
  std::string hostile;
  for (int i = 0; i < 100000; ++i) hostile += "gpu:h100:1,";
  const std::string refused = error({{"gres", hostile}});
  EXPECT_TRUE(refused.starts_with("spec.gres: invalid GPU request \"gpu:h100:1,")) << refused;
  EXPECT_LT(refused.size(), 400U);
  EXPECT_TRUE(refused.ends_with("..."));
  EXPECT_EQ(error({{"begin", "tomorrow"}}),
            "spec.begin: must be an RFC 3339 time in UTC (2026-11-21T04:35:12Z)");
  EXPECT_EQ(error({{"openMode", "x"}}), "spec.openMode: must be append or truncate");
  EXPECT_EQ(error({{"environment", {{"1X", "a"}}}}),
            "spec.environment: \"1X\" is not a variable name the API server accepts");
  EXPECT_EQ(error({{"environment", {{"A", 1}}}}),
            "spec.environment: the value of A must be a string");
  EXPECT_EQ(error({{"environment", "A=1"}}),
            "spec.environment: must be a map of variable names to strings");
  EXPECT_EQ(error({{"container", {{"mounts", "x"}}}}),
            "spec.container: spec.container.mounts: must be a list of strings");
  EXPECT_FALSE(decodeSlurmJob(json{{"kind", "Pod"}}).isOk());
}

// As `kubectl get sj -o json` shows a job a user applied by hand and the operator started:
// text the codec would write differently ("60", 4096), fields it does not model (podTemplate,
// rendezvous, status.conditions) and the server's metadata.
constexpr std::string_view kServerJob = R"json({
  "apiVersion": "kubeslurm.io/v1alpha1",
  "kind": "SlurmJob",
  "metadata": {
    "name": "train-x7k2p", "generateName": "train-", "namespace": "ml",
    "uid": "0b9d8c7e-6f5a-4e3d-8c2b-1a0f9e8d7c6b", "resourceVersion": "48100", "generation": 1,
    "creationTimestamp": "2026-11-21T04:35:12Z",
    "labels": {"team": "nlp"},
    "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update",
                       "apiVersion": "kubeslurm.io/v1alpha1", "time": "2026-11-21T04:35:12Z",
                       "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:timeLimit": {}}}}]
  },
  "spec": {
    "jobName": "train", "user": "alice", "nodes": 2, "gpusPerNode": 8,
    "timeLimit": "60", "memory": 4096, "partition": "gpu",
    "script": "#!/bin/bash\nsrun python train.py\n",
    "rendezvous": {"port": 29500, "backend": "c10d"},
    "podTemplate": {"spec": {"containers": [{"name": "rank", "image": "pytorch:2.1"}]}}
  },
  "status": {
    "jobId": 1042, "state": "RUNNING", "stateCode": "R", "reason": "None",
    "nodeList": "gpu-node-[001-002]", "submitTime": "2026-11-21T04:35:12Z",
    "startTime": "2026-11-21T04:35:20Z",
    "conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "",
                    "lastTransitionTime": "2026-11-21T04:35:13Z"}]
  }
})json";

std::vector<std::string> changedPaths(const json& before, const json& after) {
  std::vector<std::string> paths;
  for (const json& op : json::diff(before, after)) paths.push_back(op["path"].get<std::string>());
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(SlurmJobRoundTrip, ServerObjectComesBackExactly) {
  const json in = json::parse(kServerJob);
  const StatusOr<SlurmJobObject> job = decodeSlurmJob(in);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->request.timeLimit, slurm::TimeLimit{3600});
  EXPECT_EQ(job->request.memPerNodeMb, 4096U);
  EXPECT_EQ(encodeSlurmJob(*job), in) << json::diff(in, encodeSlurmJob(*job)).dump(1);
  // Metadata the struct does not carry is there for decodeObjectMeta.
  const StatusOr<ObjectMeta> meta = decodeObjectMeta((*job->raw)["metadata"]);
  ASSERT_TRUE(meta.isOk());
  EXPECT_EQ(meta->resourceVersion, "48100");
  EXPECT_EQ(meta->labels.at("team"), "nlp");
}

// The operator's view decodes each stored job once and must not hold a second copy of its
// JSON (shared_json.h): the decoded job reads the stored object, and copies of the job share it
// until one is changed.
TEST(SlurmJobRoundTrip, JobDecodedFromAStoredObjectSharesIt) {
  const auto stored = std::make_shared<const json>(json::parse(kServerJob));
  const StatusOr<SlurmJobObject> job = decodeSlurmJob(stored);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(&*job->raw, stored.get());
  EXPECT_EQ(encodeSlurmJob(*job), *stored);

  SlurmJobObject copy = *job;
  EXPECT_TRUE(copy.raw.sharesWith(job->raw));
  copy.raw.edit()["metadata"]["labels"]["team"] = "vision";
  EXPECT_FALSE(copy.raw.sharesWith(job->raw));
  EXPECT_EQ((*stored)["metadata"]["labels"]["team"], "nlp");
  EXPECT_EQ((*copy.raw)["metadata"]["labels"]["team"], "vision");

  EXPECT_FALSE(decodeSlurmJob(std::shared_ptr<const json>()).isOk());
}

TEST(SharedJson, CopiesOnlyWhatIsSharedWhenChanged) {
  SharedJson fresh;
  EXPECT_EQ(*fresh, json::object());
  fresh.edit()["a"] = 1;  // nothing shared: made here
  const json* made = &*fresh;
  fresh.edit()["b"] = 2;  // its only holder changes it in place
  EXPECT_EQ(&*fresh, made);

  SharedJson other = fresh;
  other.edit()["c"] = 3;  // shared: copied first
  EXPECT_EQ(*fresh, json({{"a", 1}, {"b", 2}}));
  EXPECT_EQ(*other, json({{"a", 1}, {"b", 2}, {"c", 3}}));

  // A document shared from outside is never changed in place, even by its last holder here.
  auto outside = std::make_shared<const json>(json{{"x", 1}});
  SharedJson held(outside);
  outside.reset();
  const json* before = &*held;
  held.edit()["y"] = 2;
  EXPECT_NE(&*held, before);
  EXPECT_EQ(*held, json({{"x", 1}, {"y", 2}}));
}

TEST(SlurmJobRoundTrip, StatusUpdateTouchesOnlyStatus) {
  const json in = json::parse(kServerJob);
  SlurmJobObject job = *decodeSlurmJob(in);
  job.status->state = "COMPLETED";
  job.status->stateCode = "CD";
  job.status->endTime = 1795239312;
  job.status->exitCode = "0:0";
  const json out = encodeSlurmJob(job);
  EXPECT_EQ(changedPaths(in, out),
            (std::vector<std::string>{"/status/endTime", "/status/exitCode", "/status/state",
                                      "/status/stateCode"}));
  EXPECT_EQ(out["status"]["endTime"], "2026-11-21T05:35:12Z");
  EXPECT_EQ(out["status"]["conditions"], in["status"]["conditions"]);
}

TEST(SlurmJobRoundTrip, ChangedSpecFieldIsRewrittenAndClearedOneRemoved) {
  const json in = json::parse(kServerJob);
  SlurmJobObject job = *decodeSlurmJob(in);
  job.request.timeLimit = slurm::TimeLimit{7200};
  job.request.partition.clear();
  job.status.reset();
  const json out = encodeSlurmJob(job);
  EXPECT_EQ(changedPaths(in, out),
            (std::vector<std::string>{"/spec/partition", "/spec/timeLimit", "/status"}));
  EXPECT_EQ(out["spec"]["timeLimit"], "02:00:00");
  EXPECT_EQ(out["spec"]["rendezvous"], in["spec"]["rendezvous"]);
}

// scontrol requeue's counter and the operator's record of the requests it handled: both ways,
// absent when unset, and a status write keeps the spec's count (it is the CLI's).
TEST(SlurmJobCodec, RequeueRequestsAndRequeuesHandled) {
  SlurmJobObject job = richJob();
  EXPECT_FALSE(encodeSlurmJob(job)["spec"].contains("requeueRequests"));
  EXPECT_FALSE(encodeSlurmJob(job)["status"].contains("requeuesHandled"));
  job.requeueRequests = 2;
  job.status->requeuesHandled = 1;
  const json object = encodeSlurmJob(job);
  EXPECT_EQ(object["spec"]["requeueRequests"], 2);
  EXPECT_EQ(object["status"]["requeuesHandled"], 1);
  StatusOr<SlurmJobObject> decoded = decodeSlurmJob(object);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(*decoded, job);
  EXPECT_EQ(decoded->requeueRequests, 2);
  EXPECT_EQ(decoded->status->requeuesHandled, 1);

  SlurmJobObject written = *decoded;
  written.status->requeuesHandled = 2;
  EXPECT_EQ(changedPaths(object, encodeSlurmJob(written)),
            (std::vector<std::string>{"/status/requeuesHandled"}));

  json negative = object;
  negative["spec"]["requeueRequests"] = -1;
  EXPECT_EQ(decodeSlurmJob(negative).status().message(), "spec.requeueRequests: out of range");
  negative["spec"]["requeueRequests"] = "1";
  EXPECT_EQ(decodeSlurmJob(negative).status().message(),
            "spec.requeueRequests: must be an integer");
}

TEST(SlurmJobRoundTrip, WrongTypesAreErrorsNotExceptions) {
  EXPECT_FALSE(decodeSlurmJob(json::parse(R"({"apiVersion": 1, "kind": "SlurmJob"})")).isOk());
  EXPECT_EQ(decodeSlurmJob(json::parse(R"({"apiVersion": "kubeslurm.io/v1alpha1",
      "kind": "SlurmJob", "metadata": {"name": 5}, "spec": {}})"))
                .status()
                .message(),
            "metadata.name: must be a string");
  EXPECT_EQ(decodeSlurmJob(json::parse(R"({"apiVersion": "kubeslurm.io/v1alpha1",
      "kind": "SlurmJob", "spec": {"nice": 18446744073709551615}})"))
                .status()
                .message(),
            "spec.nice: out of range");
  EXPECT_TRUE(decodeSlurmJob(json::parse(R"({"apiVersion": "kubeslurm.io/v1alpha1",
      "kind": "SlurmJob", "spec": {}, "status": {"jobId": "x", "state": 3}})"))
                  .isOk());
}

// A tenant's memory figure times its CPUs is held at the largest figure, never wrapped into a
// small one that would look like a modest job.
TEST(RecordedMemory, HugeFiguresSaturate) {
  slurm::JobRequest request;
  request.memPerCpuMb = std::uint64_t{1} << 62;
  const RecordedMemory memory =
      recordedMemory(request, PartitionMemory{}, false, 1, 1024, 0, std::nullopt);
  EXPECT_EQ(memory.perCpuMb, std::uint64_t{1} << 62);
  EXPECT_EQ(memory.tresMb, UINT64_MAX);
}

}  // namespace
// spec.cancelTasks (scancel of tasks not made yet): the ids, ascending; nothing for a missing,
// malformed or out-of-range list, or on a job that is no array.
TEST(CancelledArrayTasks, ReadsTheIndexListOfTheArraysTasks) {
  const auto withCancelTasks = [](const nlohmann::json& text, const char* array) {
    nlohmann::json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                             {"kind", "SlurmJob"},
                             {"metadata", {{"name", "arr"}, {"namespace", "default"}}},
                             {"spec", {{"script", "#!/bin/sh\ntrue\n"}}}};
    if (array != nullptr) object["spec"]["array"] = array;
    if (!text.is_null()) object["spec"]["cancelTasks"] = text;
    return *decodeSlurmJob(object);
  };
  EXPECT_EQ(cancelledArrayTasks(withCancelTasks("9,2-3", "0-9")),
            (std::vector<std::uint32_t>{2, 3, 9}));
  EXPECT_TRUE(cancelledArrayTasks(withCancelTasks(nullptr, "0-9")).empty());
  EXPECT_TRUE(cancelledArrayTasks(withCancelTasks("x", "0-9")).empty());
  EXPECT_TRUE(cancelledArrayTasks(withCancelTasks("10", "0-9")).empty());
  EXPECT_TRUE(cancelledArrayTasks(withCancelTasks(5, "0-9")).empty());
  EXPECT_TRUE(cancelledArrayTasks(withCancelTasks("1", nullptr)).empty());
  // spec.splitTasks reads the same way, its own list.
  nlohmann::json both = *withCancelTasks("1", "0-9").raw;
  both["spec"]["splitTasks"] = "4-5";
  const SlurmJobObject split = *decodeSlurmJob(both);
  EXPECT_EQ(arrayTaskList(split, kSplitTasksField), (std::vector<std::uint32_t>{4, 5}));
  EXPECT_EQ(cancelledArrayTasks(split), (std::vector<std::uint32_t>{1}));
}

// The operator decodes with the cluster's MaxArraySize as a count of tasks: an array that names
// more does not decode to its ids (the webhook's words, the field named); a task's own one id
// always does, and so does an array past the limit that names fewer (the cycle sets it aside).
TEST(DecodedArrayTaskLimitTest, ArraysNamingMoreTasksDoNotDecode) {
  struct Restore {
    std::uint32_t before = decodedArrayTaskLimit();
    ~Restore() { setDecodedArrayTaskLimit(before); }
  } restore;
  const auto withArray = [](const char* array) {
    nlohmann::json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                             {"kind", "SlurmJob"},
                             {"metadata", {{"name", "arr"}, {"namespace", "default"}}},
                             {"spec", {{"script", "#!/bin/sh\ntrue\n"}, {"array", array}}}};
    return decodeSlurmJob(object);
  };
  EXPECT_EQ(withArray("0-3999999")->request.array->taskIds.size(), 4000000U);
  setDecodedArrayTaskLimit(1001);
  EXPECT_EQ(decodedArrayTaskLimit(), 1001U);
  const auto refused = withArray("0-3999999");
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().message(), invalidArrayProblem("0-3999999"));
  EXPECT_EQ(invalidArrayProblem("0-3999999"),
            "spec.array: invalid job array specification \"0-3999999\"");
  EXPECT_EQ(withArray("0-1000")->request.array->taskIds.size(), 1001U);
  EXPECT_EQ(withArray("3000-3010")->request.array->taskIds.size(), 11U);
  setDecodedArrayTaskLimit(0);
  EXPECT_EQ(decodedArrayTaskLimit(), 1U);
  EXPECT_TRUE(withArray("3999999%2").isOk());
  EXPECT_FALSE(withArray("0-1").isOk());
  // The problem quotes a few hundred bytes of what the tenant wrote, never a megabyte.
  EXPECT_LT(invalidArrayProblem(std::string(1 << 20, '9')).size(), 400U);
}

// An array task's bookkeeping is read from its metadata once, at decode (SlurmJobObject::
// arrayTask): both labels, a decimal index, and a controller reference named as the array label
// says; only on a job with spec.array.
TEST(ArrayTaskOwnerTest, ReadOnceFromTheMetadata) {
  nlohmann::json object = {
      {"apiVersion", "kubeslurm.io/v1alpha1"},
      {"kind", "SlurmJob"},
      {"metadata",
       {{"name", "arr-3"},
        {"namespace", "default"},
        {"labels", {{"kubeslurm.io/array-job", "arr"}, {"kubeslurm.io/array-task", "3"}}},
        {"ownerReferences",
         {{{"kind", "SlurmJob"}, {"name", "other"}, {"uid", "u0"}, {"controller", true}},
          {{"kind", "SlurmJob"}, {"name", "arr"}, {"uid", "u1"}, {"controller", true}}}}}},
      {"spec", {{"script", "#!/bin/sh\ntrue\n"}, {"array", "3%2"}}}};
  EXPECT_EQ(decodeSlurmJob(object)->arrayTask, (ArrayTaskOwner{"arr", "u1", 3}));
  const auto without = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json copy = object;
    change(copy);
    return decodeSlurmJob(copy)->arrayTask;
  };
  EXPECT_FALSE(without([](nlohmann::json& o) { o["spec"].erase("array"); }));
  EXPECT_FALSE(without(
      [](nlohmann::json& o) { o["metadata"]["labels"]["kubeslurm.io/array-task"] = "3x"; }));
  EXPECT_FALSE(without(
      [](nlohmann::json& o) { o["metadata"]["labels"]["kubeslurm.io/array-task"] = "-3"; }));
  EXPECT_FALSE(
      without([](nlohmann::json& o) { o["metadata"]["labels"].erase("kubeslurm.io/array-job"); }));
  EXPECT_FALSE(without(
      [](nlohmann::json& o) { o["metadata"]["ownerReferences"][1]["controller"] = false; }));
  EXPECT_FALSE(
      without([](nlohmann::json& o) { o["metadata"]["ownerReferences"][1]["kind"] = "Job"; }));
  EXPECT_FALSE(without([](nlohmann::json& o) { o["metadata"].erase("ownerReferences"); }));
}

}  // namespace kubeslurm::api
