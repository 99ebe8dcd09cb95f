// Which finished jobs retention deletes (retention.h): past --job-retention, and only once the
// accounting store holds their ended records; an array with its tasks, never a task alone.
#include "controllers/retention.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "controllers/arrays.h"
#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/api/slurmjob.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

constexpr core::Time kNow = 1795000000;
constexpr core::Duration kRetention = 300;

api::SlurmJobObject job(const std::string& name, const std::string& state,
                        std::optional<core::Time> end, const Json& spec = Json::object()) {
  Json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                 {"kind", "SlurmJob"},
                 {"metadata", {{"name", name}, {"namespace", "team-a"}, {"uid", "uid-" + name}}},
                 {"spec", {{"jobName", name}, {"script", "#!/bin/sh\ntrue\n"}}},
                 {"status", {{"jobId", 7}, {"state", state}}}};
  object["spec"].merge_patch(spec);
  if (end) object["status"]["endTime"] = api::formatTimestamp(*end);
  return api::decodeSlurmJob(object).value();
}

// Task `index` of array `sweep`, as the operator makes it (arrayTaskObject), ended at `end`.
api::SlurmJobObject task(const api::SlurmJobObject& array, std::uint32_t index, core::Time end) {
  Json object = arrayTaskObject(array, index);
  object["metadata"]["uid"] = "uid-task-" + std::to_string(index);
  object["status"] = {
      {"jobId", 20 + index}, {"state", "COMPLETED"}, {"endTime", api::formatTimestamp(end)}};
  return api::decodeSlurmJob(object).value();
}

std::vector<std::string> names(const std::vector<const api::SlurmJobObject*>& jobs) {
  std::vector<std::string> out;
  for (const api::SlurmJobObject* j : jobs) out.push_back(j->name);
  return out;
}

// Records committed for the jobs named.
EndedRecordWritten committed(std::set<std::string> names) {
  return
      [names = std::move(names)](const api::SlurmJobObject& j) { return names.contains(j.name); };
}

struct Case {
  std::string name;
  api::SlurmJobObject job;
  EndedRecordWritten recorded;
  core::Duration retention = kRetention;
  bool deleted = false;
};

class Retention : public ::testing::TestWithParam<Case> {};

TEST_P(Retention, DeletesAFinishedJobOnlyPastItsRetentionWithItsRecordKept) {
  const Case& c = GetParam();
  const SharedList<api::SlurmJobObject> jobs = {c.job};
  const auto expired = expiredJobs(jobs, kNow, c.retention, c.recorded);
  EXPECT_EQ(expired.size(), c.deleted ? 1U : 0U) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, Retention,
    ::testing::Values(
        Case{"past retention, recorded", job("a", "COMPLETED", kNow - kRetention), committed({"a"}),
             kRetention, true},
        Case{"not yet", job("a", "COMPLETED", kNow - kRetention + 1), committed({"a"})},
        Case{"failed and cancelled alike", job("a", "CANCELLED", kNow - 1000), committed({"a"}),
             kRetention, true},
        // The store has not committed its ended record: kept, whatever its age.
        Case{"record not committed", job("a", "COMPLETED", kNow - 100000), committed({})},
        Case{"no store", job("a", "FAILED", kNow - 1000), {}, kRetention, true},
        Case{"retention 0: kept for good", job("a", "COMPLETED", kNow - 100000), {}, 0},
        // An end time on a job that is not finished (a requeue under way) does not count.
        Case{"running", job("a", "RUNNING", kNow - 1000), committed({"a"})},
        Case{"unknown state", job("a", "DONE-ISH", kNow - 1000), committed({"a"})},
        Case{"no end time", job("a", "COMPLETED", std::nullopt), committed({"a"})}),
    [](const ::testing::TestParamInfo<Case>& param) {
      std::string name;
      for (char ch : param.param.name)
        name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

// An array goes with its tasks (owner references delete them): never a task alone, and the
// array only once every task's record is committed, so that sacct lists them all.
TEST(RetentionOfArrays, AnArrayWaitsForEveryTasksRecordAndATaskNeverGoesAlone) {
  const api::SlurmJobObject array =
      job("sweep", "COMPLETED", kNow - 1000, {{"array", "0-1"}, {"nodes", 1}});
  const SharedList<api::SlurmJobObject> jobs = {array, task(array, 0, kNow - 2000),
                                                task(array, 1, kNow - 1000)};
  EXPECT_TRUE(expiredJobs(jobs, kNow, kRetention, committed({"sweep", "sweep-0"})).empty());
  EXPECT_EQ(names(expiredJobs(jobs, kNow, kRetention, committed({"sweep", "sweep-0", "sweep-1"}))),
            std::vector<std::string>{"sweep"});
  EXPECT_EQ(names(expiredJobs(jobs, kNow, kRetention, {})), std::vector<std::string>{"sweep"});
}

}  // namespace
}  // namespace kubeslurm::controllers
