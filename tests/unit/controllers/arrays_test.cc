// Job arrays as SlurmJobs (controllers/arrays.h): the task objects the reconciler creates, how
// an array's status sums up its tasks, and how the snapshot plans them. Slurm's behaviour pinned
// here is in ../shared/reference/slurm-22.05.md, "Job arrays": tasks run under the %N throttle
// with reason JobArrayTaskLimit, and a dependency on the ArrayJobId waits for every task.
#include "controllers/arrays.h"

#include <map>

#include <gtest/gtest.h>

#include "controllers/cluster_view.h"
#include "controllers/snapshot.h"

namespace kubeslurm::controllers {
namespace {

using nlohmann::json;

constexpr core::Time kNow = 1795000000;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

json arrayObject(const std::string& array = "0-3%2") {
  return {{"apiVersion", "kubeslurm.io/v1alpha1"},
          {"kind", "SlurmJob"},
          {"metadata",
           {{"name", "sweep"},
            {"namespace", "team-a"},
            {"uid", "uid-sweep"},
            {"labels", {{"team", "nlp"}}},
            {"creationTimestamp", api::formatTimestamp(kNow - 600)}}},
          {"spec",
           {{"jobName", "sweep"},
            {"user", "alice"},
            {"script", "#!/bin/bash\necho $SLURM_ARRAY_TASK_ID\n"},
            {"array", array},
            {"nodes", 1},
            {"gpusPerNode", 8}}},
          {"status",
           {{"jobId", 6}, {"state", "PENDING"}, {"submitTime", api::formatTimestamp(kNow - 400)}}}};
}

// A task as the API server returns the object arrayTaskObject made, with a status.
api::SlurmJobObject task(std::uint32_t index, std::int64_t id, const std::string& state,
                         const json& status = json::object()) {
  json object = arrayTaskObject(ok(api::decodeSlurmJob(arrayObject())), index);
  object["metadata"]["uid"] = "uid-task-" + std::to_string(index);
  object["status"] = {{"jobId", id}, {"state", state}, {"arrayJobId", 6}, {"arrayTaskId", index}};
  object["status"].merge_patch(status);
  return ok(api::decodeSlurmJob(object));
}

// A task's spec: the array's without its script, which tasks share (a 1 MiB script in a
// 1,000-task array would otherwise be 1 GB in etcd), and with only the task's own index and the
// throttle as spec.array (a 10,000-task list is 40 KB of ids decoded, in every cached task).
json taskSpec(json spec, const std::string& array) {
  spec.erase("script");
  spec["array"] = array;
  return spec;
}

// The operator's cache holds an array decoded, with as JSON only what the codec does not model
// (holdSlurmJob): its tasks get the array's spec all the same.

TEST(ArrayTask, OfACachedArrayHasTheArraysSpecButTheScriptAndTheList) {
  const kube::ObjectPtr held = holdSlurmJob(arrayObject());
  const std::shared_ptr<api::SlurmJobObject> array = heldSlurmJob(held);
  ASSERT_NE(array, nullptr);
  EXPECT_FALSE(held->contains("spec"));
  const json object = arrayTaskObject(*array, 3);
  ASSERT_TRUE(arrayObject()["spec"].contains("script"));
  EXPECT_EQ(object["spec"], taskSpec(arrayObject()["spec"], "3%2"));
  EXPECT_EQ(object, arrayTaskObject(ok(api::decodeSlurmJob(arrayObject())), 3));

  // An array written without a job name makes tasks without one, not with an empty name (the
  // API server refused the chart test's tasks so: "spec.jobName ... must be of type string").
  json unnamed = arrayObject();
  unnamed["spec"].erase("jobName");
  const json task = arrayTaskObject(*heldSlurmJob(holdSlurmJob(json(unnamed))), 0);
  EXPECT_EQ(task["spec"], taskSpec(unnamed["spec"], "0%2"));
  // Without a throttle, the index alone.
  const json unthrottled = arrayTaskObject(ok(api::decodeSlurmJob(arrayObject("0-9999"))), 9998);
  EXPECT_EQ(unthrottled["spec"]["array"], "9998");
  EXPECT_EQ(ok(api::decodeSlurmJob(unthrottled)).request.array->taskIds,
            std::vector<std::uint32_t>{9998});
}

TEST(ArrayTask, IsTheArraysSpecForItsIndexOwnedByTheArrayAndNamedAfterTheIndex) {
  const api::SlurmJobObject array = ok(api::decodeSlurmJob(arrayObject()));
  EXPECT_TRUE(isArrayParent(array));
  EXPECT_FALSE(arrayTaskOf(array));
  const json object = arrayTaskObject(array, 3);
  EXPECT_EQ(object["metadata"]["name"], "sweep-3");
  EXPECT_EQ(object["metadata"]["namespace"], "team-a");
  EXPECT_EQ(object["metadata"]["labels"]["team"], "nlp");
  EXPECT_EQ(object["metadata"]["labels"]["kubeslurm.io/array-job"], "sweep");
  EXPECT_EQ(object["metadata"]["labels"]["kubeslurm.io/array-task"], "3");
  EXPECT_EQ(object["metadata"]["annotations"]["kubeslurm.io/array-job-id"], "6");
  EXPECT_EQ(object["metadata"]["annotations"]["kubeslurm.io/array-submit-time"],
            std::to_string(kNow - 400));  // the array's submitTime
  const json& owner = object["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "SlurmJob");
  EXPECT_EQ(owner["name"], "sweep");
  EXPECT_EQ(owner["uid"], "uid-sweep");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(object["spec"], taskSpec(arrayObject()["spec"], "3%2"));
  EXPECT_FALSE(object.contains("status"));

  const api::SlurmJobObject child = ok(api::decodeSlurmJob(object));
  EXPECT_FALSE(isArrayParent(child));
  const auto ref = arrayTaskOf(child);
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->arrayName, "sweep");
  EXPECT_EQ(ref->taskId, 3U);
  EXPECT_EQ(ref->arrayUid, "uid-sweep");
}

// Security review H2: labels and annotations alone made a job a task of any array, with its
// %N slots and a backdated submit time. Without the operator's controller reference to the
// array, a job with the labels is an ordinary job.
TEST(ArrayTask, LabelsWithoutTheArraysControllerReferenceMakeNoTask) {
  json forged = arrayTaskObject(ok(api::decodeSlurmJob(arrayObject())), 3);
  forged["metadata"].erase("ownerReferences");
  EXPECT_FALSE(arrayTaskOf(ok(api::decodeSlurmJob(forged))));
  json otherOwner = arrayTaskObject(ok(api::decodeSlurmJob(arrayObject())), 3);
  otherOwner["metadata"]["ownerReferences"][0]["name"] = "someone-elses";
  EXPECT_FALSE(arrayTaskOf(ok(api::decodeSlurmJob(otherOwner))));
  json notController = arrayTaskObject(ok(api::decodeSlurmJob(arrayObject())), 3);
  notController["metadata"]["ownerReferences"][0]["controller"] = false;
  EXPECT_FALSE(arrayTaskOf(ok(api::decodeSlurmJob(notController))));
}

TEST(ArrayTask, OrdinaryJobsAndMalformedLabelsAreNoTasks) {
  json plain = arrayObject();
  plain["spec"].erase("array");
  EXPECT_FALSE(isArrayParent(ok(api::decodeSlurmJob(plain))));
  EXPECT_FALSE(arrayTaskOf(ok(api::decodeSlurmJob(plain))));
  json bad = arrayTaskObject(ok(api::decodeSlurmJob(arrayObject())), 1);
  bad["metadata"]["labels"]["kubeslurm.io/array-task"] = "1x";
  EXPECT_FALSE(arrayTaskOf(ok(api::decodeSlurmJob(bad))));
}

TEST(ArrayFamilies, GroupTasksUnderTheirArrayAndListWhatIsMissing) {
  std::vector<api::SlurmJobObject> jobs;
  jobs.push_back(ok(api::decodeSlurmJob(arrayObject("0-7:2"))));
  jobs.push_back(task(2, 8, "RUNNING"));
  jobs.push_back(task(0, 7, "COMPLETED"));
  json orphan = arrayTaskObject(jobs[0], 1);
  orphan["metadata"]["labels"]["kubeslurm.io/array-job"] = "gone";
  orphan["metadata"]["ownerReferences"][0]["name"] = "gone";
  jobs.push_back(ok(api::decodeSlurmJob(orphan)));
  const auto families = arrayFamilies(jobs);
  ASSERT_EQ(families.size(), 1U);
  const ArrayFamily& family = families.at("team-a/sweep");
  EXPECT_EQ(family.array, &jobs[0]);
  ASSERT_EQ(family.tasks.size(), 2U);
  EXPECT_EQ(family.tasks.at(0), &jobs[2]);
  EXPECT_EQ(family.tasks.at(2), &jobs[1]);
  EXPECT_EQ(missingTasks(family), (std::vector<std::uint32_t>{4, 6}));
}

ArrayFamily familyOf(const api::SlurmJobObject& array, const std::vector<api::SlurmJobObject>& ts) {
  ArrayFamily family;
  family.array = &array;
  for (const api::SlurmJobObject& t : ts) family.tasks.emplace(arrayTaskOf(t)->taskId, &t);
  return family;
}

// At most `waitingLimit` made tasks wait (pending or without an id, not cancelled); the others
// wait in the array's record. Tasks scancel cancelled before they were made are made at once.
TEST(TasksToMake, FewWaitAsSlurmJobsAndCancelledOnesAreMadeAtOnce) {
  const api::SlurmJobObject array = ok(api::decodeSlurmJob(arrayObject("0-9")));
  json cancelling = arrayTaskObject(array, 2);
  cancelling["spec"]["cancel"] = true;
  cancelling["status"] = {
      {"jobId", 9}, {"state", "PENDING"}, {"arrayJobId", 6}, {"arrayTaskId", 2}};
  const std::vector<api::SlurmJobObject> made = {task(0, 7, "RUNNING"), task(1, 8, "PENDING"),
                                                 ok(api::decodeSlurmJob(cancelling)),
                                                 task(3, 10, "", {{"jobId", nullptr}})};
  const ArrayFamily family = familyOf(array, made);
  // 1 and 3 wait: room for two more under a limit of 4.
  EXPECT_EQ(tasksToMake(family, false, {}, {}, 4), (std::vector<std::uint32_t>{4, 5}));
  EXPECT_EQ(tasksToMake(family, false, {}, {}, 2), (std::vector<std::uint32_t>{}));
  EXPECT_EQ(tasksToMake(family, false, {7, 9}, {}, 2), (std::vector<std::uint32_t>{7, 9}));
  EXPECT_EQ(tasksToMake(family, false, {7}, {}, 3), (std::vector<std::uint32_t>{4, 7}));
  EXPECT_EQ(tasksToMake(family, true, {}, {}, 0), (std::vector<std::uint32_t>{4, 5, 6, 7, 8, 9}));
  // Tasks scontrol split off are made whatever the window; a made one is not made again.
  EXPECT_EQ(tasksToMake(family, false, {}, {1, 8}, 2), (std::vector<std::uint32_t>{8}));
  EXPECT_EQ(tasksToMake(family, false, {9}, {8}, 3), (std::vector<std::uint32_t>{4, 8, 9}));
}

// A split task is made held, so that no start comes before the command that asked for it; a
// cancelled one is cancelled, which a split does not undo.
TEST(TaskObjectFor, CancelledOrHeldAsAsked) {
  const api::SlurmJobObject array = ok(api::decodeSlurmJob(arrayObject("0-9")));
  EXPECT_FALSE(taskObjectFor(array, 4, false, {}, {}).at("spec").contains("hold"));
  EXPECT_FALSE(taskObjectFor(array, 4, false, {}, {}).at("spec").contains("cancel"));
  EXPECT_EQ(taskObjectFor(array, 4, false, {}, {4}).at("spec").at("hold"), true);
  EXPECT_EQ(taskObjectFor(array, 4, false, {4}, {4}).at("spec").at("cancel"), true);
  EXPECT_FALSE(taskObjectFor(array, 4, false, {4}, {4}).at("spec").contains("hold"));
  EXPECT_EQ(taskObjectFor(array, 4, true, {}, {}).at("spec").at("cancel"), true);
  EXPECT_EQ(taskObjectFor(array, 5, false, {}, {4}), arrayTaskObject(array, 5));
}

// The array controller's plan for a cycle (planArrayExpansions), case by case: what each array
// makes (and how each task object comes out) and which made tasks get spec.cancel.
struct ExpansionCase {
  std::string name;
  json arrayPatch;                         // merged into arrayObject("0-9")
  std::vector<std::uint32_t> madePending;  // tasks made, PENDING
  std::vector<std::uint32_t> madeDone;     // tasks made, COMPLETED
  std::size_t waiting = 3;                 // arrayWaitingTasks
  std::size_t budget = 256;                // arrayTasksPerCycle
  std::vector<std::uint32_t> creates;      // task ids made this cycle
  std::vector<std::string> marks;          // per create: "", "cancel" or "hold"
  std::vector<std::uint32_t> cancels;      // made tasks that get spec.cancel
  bool createsTasks = true;
};

TEST(PlanArrayExpansions, EachArraysCreatesAndCancels) {
  const json created = {
      {"status",
       {{"conditions", {{{"type", "TasksCreated"}, {"status", "True"}, {"reason", "x"}}}}}}};
  const std::vector<ExpansionCase> cases = {
      {"the window: 3 may wait, 1 waits", {}, {0}, {1}, 3, 256, {2, 3}, {"", ""}, {}},
      {"the cycle's budget", {}, {}, {}, 3, 1, {0}, {""}, {}},
      {"all created once: none again", created, {0}, {}, 3, 256, {}, {}, {}, false},
      {"being deleted: none",
       {{"metadata", {{"deletionTimestamp", "2026-11-29T00:00:00Z"}}}},
       {},
       {},
       3,
       256,
       {},
       {},
       {},
       false},
      {"a cancelled array: every task made cancelled, the waiting ones cancelled",
       {{"spec", {{"cancel", true}}}},
       {0},
       {1},
       0,
       256,
       {2, 3, 4, 5, 6, 7, 8, 9},
       {"cancel", "cancel", "cancel", "cancel", "cancel", "cancel", "cancel", "cancel"},
       {0}},
      {"scancel A_T: made ones cancelled, unmade ones made cancelled past the window",
       {{"spec", {{"cancelTasks", "0-1,8"}}}},
       {0},
       {1},
       1,
       256,
       {8},
       {"cancel"},
       {0}},
      {"scontrol A_T: made held past the window",
       {{"spec", {{"splitTasks", "7"}}}},
       {0},
       {},
       1,
       256,
       {7},
       {"hold"},
       {}},
  };
  for (const ExpansionCase& c : cases) {
    SCOPED_TRACE(c.name);
    json object = arrayObject("0-9");
    if (c.arrayPatch.is_object()) object.merge_patch(c.arrayPatch);
    const api::SlurmJobObject array = ok(api::decodeSlurmJob(object));
    std::vector<api::SlurmJobObject> made;
    std::int64_t id = 100;
    for (const std::uint32_t t : c.madePending) made.push_back(task(t, id++, "PENDING"));
    for (const std::uint32_t t : c.madeDone) made.push_back(task(t, id++, "COMPLETED"));
    const std::map<std::string, ArrayFamily> families = {{"team-a/sweep", familyOf(array, made)}};
    const std::vector<ArrayExpansion> plan = planArrayExpansions(families, {}, c.budget, c.waiting);
    ASSERT_EQ(plan.size(), 1U);
    const ArrayExpansion& e = plan[0];
    EXPECT_EQ(e.key, "team-a/sweep");
    EXPECT_EQ(e.createsTasks, c.createsTasks);
    std::vector<std::uint32_t> creates;
    std::vector<std::string> marks;
    for (const auto& [index, taskObject] : e.creates) {
      creates.push_back(index);
      EXPECT_EQ(taskObject["metadata"]["name"], "sweep-" + std::to_string(index));
      marks.push_back(taskObject["spec"].contains("cancel")     ? "cancel"
                      : taskObject["spec"].value("hold", false) ? "hold"
                                                                : "");
    }
    EXPECT_EQ(creates, c.creates);
    EXPECT_EQ(marks, c.marks);
    std::vector<std::uint32_t> cancels;
    for (const api::SlurmJobObject* t : e.cancels) cancels.push_back(arrayTaskOf(*t)->taskId);
    EXPECT_EQ(cancels, c.cancels);
  }
}

// Arrays without an id, and those written this cycle (stale in the cache), are left for the next
// cycle; the budget is shared in key order.
TEST(PlanArrayExpansions, SkipsWhatItCannotReadAndSharesTheBudget) {
  const api::SlurmJobObject first = ok(api::decodeSlurmJob(arrayObject("0-9")));
  json secondObject = arrayObject("0-9");
  secondObject["metadata"]["name"] = "sweep2";
  const api::SlurmJobObject second = ok(api::decodeSlurmJob(secondObject));
  json unnumbered = arrayObject("0-9");
  unnumbered["status"].erase("jobId");
  const api::SlurmJobObject noId = ok(api::decodeSlurmJob(unnumbered));
  const std::map<std::string, ArrayFamily> families = {{"team-a/a", familyOf(first, {})},
                                                       {"team-a/b", familyOf(second, {})},
                                                       {"team-a/c", familyOf(noId, {})}};
  const auto plan = planArrayExpansions(families, {}, 5, 3);
  ASSERT_EQ(plan.size(), 2U);
  EXPECT_EQ(plan[0].creates.size(), 3U);
  EXPECT_EQ(plan[1].creates.size(), 2U);
  EXPECT_EQ(plan[1].missing, 10U);
  const auto skipped = planArrayExpansions(families, {"team-a/a"}, 5, 3);
  ASSERT_EQ(skipped.size(), 1U);
  EXPECT_EQ(skipped[0].key, "team-a/b");
  EXPECT_EQ(skipped[0].creates.size(), 3U);
}

TEST(ArrayStatus, PendingTakesTheLowestPendingTasksReasonRunningTheEarliestStart) {
  const api::SlurmJobObject array = ok(api::decodeSlurmJob(arrayObject()));
  {
    const ArrayFamily none = familyOf(array, {});
    const api::SlurmJobStatus s = arrayStatus(none, false);
    EXPECT_EQ(s.state, "PENDING");
    EXPECT_EQ(s.stateCode, "PD");
    EXPECT_EQ(s.reason, "None");
    EXPECT_EQ(s.jobId, 6);
    EXPECT_EQ(s.arrayJobId, 6);
  }
  const std::vector<api::SlurmJobObject> pending = {
      task(0, 7, "PENDING", {{"reason", "Resources"}}),
      task(1, 8, "PENDING", {{"reason", "JobArrayTaskLimit"}})};
  EXPECT_EQ(arrayStatus(familyOf(array, pending), false).reason, "Resources");
  const std::vector<api::SlurmJobObject> running = {
      task(0, 7, "RUNNING", {{"startTime", api::formatTimestamp(kNow + 200)}}),
      task(1, 8, "RUNNING", {{"startTime", api::formatTimestamp(kNow + 140)}}),
      task(2, 9, "PENDING", {{"reason", "JobArrayTaskLimit"}})};
  const api::SlurmJobStatus s = arrayStatus(familyOf(array, running), false);
  EXPECT_EQ(s.state, "RUNNING");
  EXPECT_EQ(s.reason, "None");
  EXPECT_EQ(s.startTime, kNow + 140);
  EXPECT_FALSE(s.endTime);
}

TEST(ArrayStatus, EndsWhenEveryTaskEndedWithTheHighestExitCode) {
  const api::SlurmJobObject array = ok(api::decodeSlurmJob(arrayObject()));
  std::vector<api::SlurmJobObject> tasks = {
      task(0, 7, "COMPLETED", {{"exitCode", "0:0"}, {"endTime", api::formatTimestamp(kNow + 800)}}),
      task(1, 8, "COMPLETED",
           {{"exitCode", "0:0"}, {"endTime", api::formatTimestamp(kNow + 1400)}}),
      task(2, 9, "COMPLETED",
           {{"exitCode", "0:0"}, {"endTime", api::formatTimestamp(kNow + 1100)}})};
  // Three of four tasks ended: the array has not.
  EXPECT_EQ(arrayStatus(familyOf(array, tasks), false).state, "PENDING");
  tasks.push_back(task(3, 10, "COMPLETED",
                       {{"exitCode", "0:0"}, {"endTime", api::formatTimestamp(kNow + 860)}}));
  api::SlurmJobStatus s = arrayStatus(familyOf(array, tasks), false);
  EXPECT_EQ(s.state, "COMPLETED");
  EXPECT_EQ(s.stateCode, "CD");
  EXPECT_EQ(s.exitCode, "0:0");
  EXPECT_EQ(s.endTime, kNow + 1400);
  tasks[1] = task(1, 8, "FAILED", {{"exitCode", "3:0"}});
  tasks[2] = task(2, 9, "FAILED", {{"exitCode", "7:0"}});
  s = arrayStatus(familyOf(array, tasks), false);
  EXPECT_EQ(s.state, "FAILED");
  EXPECT_EQ(s.exitCode, "7:0");
}

// Once every task was created (TasksCreated), a task deleted by hand is not waited for: the
// array ends when the tasks left end. Before, a missing index keeps it from ending.
TEST(ArrayStatus, AfterAllWereCreatedTheTasksLeftAreTheWholeArray) {
  const api::SlurmJobObject array = ok(api::decodeSlurmJob(arrayObject()));
  const std::vector<api::SlurmJobObject> left = {task(0, 7, "COMPLETED", {{"exitCode", "0:0"}}),
                                                 task(1, 8, "COMPLETED", {{"exitCode", "0:0"}}),
                                                 task(3, 10, "COMPLETED", {{"exitCode", "0:0"}})};
  EXPECT_EQ(arrayStatus(familyOf(array, left), false).state, "PENDING");
  EXPECT_EQ(arrayStatus(familyOf(array, left), true).state, "COMPLETED");
  EXPECT_EQ(arrayStatus(familyOf(array, {}), true).state, "PENDING");
}

// The snapshot plans the tasks, never the array's own object; the throttle is the core's.
TEST(ArraySnapshot, TasksArePlannedUnderTheThrottleAndTheArrayIsNot) {
  ClusterObjects objects;
  for (int i = 1; i <= 4; ++i) {
    objects.nodes.push_back(ok(api::decodeNode(
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata", {{"name", "gpu-" + std::to_string(i)}}},
         {"status",
          {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}},
           {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}})));
  }
  objects.partitions.push_back(
      ok(api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                               {"kind", "Partition"},
                               {"metadata", {{"name", "gpu"}}},
                               {"spec", {{"nodes", "gpu-[1-4]"}, {"default", true}}}})));
  objects.jobs.push_back(ok(api::decodeSlurmJob(arrayObject())));
  for (std::uint32_t t = 0; t < 4; ++t) objects.jobs.push_back(task(t, 7 + t, "PENDING"));
  const SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.snapshot.jobs.size(), 4U);
  for (const core::Job& job : index.snapshot.jobs) {
    EXPECT_NE(job.id, 6U) << "the array's own object is never planned";
    EXPECT_EQ(job.arrayJobId, 6U);
    EXPECT_EQ(job.arrayMaxRunning, 2U);
  }
  EXPECT_TRUE(index.snapshot.unplanned.empty());
  const core::Plan plan = core::plan(index.snapshot, kNow, {});
  EXPECT_EQ(plan.starts.size(), 2U);
  std::map<core::JobId, slurm::PendingReason> reasons;
  for (const core::PendingDecision& p : plan.pending) reasons[p.jobId] = p.reason;
  EXPECT_EQ(reasons.at(9), slurm::PendingReason::kJobArrayTaskLimit);
  EXPECT_EQ(reasons.at(10), slurm::PendingReason::kJobArrayTaskLimit);
}

// Until every task has a job of its own, `afterok:<ArrayJobId>` and `afterok:<id>_<task>` wait:
// a half-created array is not the whole of it, and a task not yet created is not one that is
// gone (which would lift the dependency).
TEST(ArraySnapshot, DependencyOnAnArrayWaitsForTasksNotYetCreated) {
  ClusterObjects objects;
  objects.nodes.push_back(ok(api::decodeNode(
      {{"apiVersion", "v1"},
       {"kind", "Node"},
       {"metadata", {{"name", "gpu-1"}}},
       {"status",
        {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}},
         {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}})));
  objects.partitions.push_back(ok(api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                                                        {"kind", "Partition"},
                                                        {"metadata", {{"name", "gpu"}}},
                                                        {"spec", {{"nodes", "gpu-1"}}}})));
  objects.jobs.push_back(ok(api::decodeSlurmJob(arrayObject("0-1"))));
  objects.jobs.push_back(task(0, 7, "COMPLETED", {{"exitCode", "0:0"}}));
  json after = arrayObject();
  after["metadata"]["name"] = "after";
  after["spec"].erase("array");
  after["spec"]["dependency"] = "afterok:6";
  after["status"]["jobId"] = 20;
  objects.jobs.push_back(ok(api::decodeSlurmJob(after)));
  after["metadata"]["name"] = "after-task";
  after["spec"]["dependency"] = "afterok:6_1";
  after["status"]["jobId"] = 21;
  objects.jobs.push_back(ok(api::decodeSlurmJob(after)));

  SnapshotIndex index = buildSnapshot(objects, {}, kNow);
  ASSERT_EQ(index.snapshot.unplanned.size(), 1U);
  EXPECT_EQ(index.snapshot.unplanned[0].arrayTaskId, 1U);
  core::Plan plan = core::plan(index.snapshot, kNow, {});
  EXPECT_TRUE(plan.starts.empty());
  std::map<core::JobId, slurm::PendingReason> reasons;
  for (const core::PendingDecision& p : plan.pending) reasons[p.jobId] = p.reason;
  EXPECT_EQ(reasons.at(20), slurm::PendingReason::kDependency);
  EXPECT_EQ(reasons.at(21), slurm::PendingReason::kDependency);

  // Task 1 exists and completed: both dependencies are satisfied.
  objects.jobs.push_back(task(1, 8, "COMPLETED", {{"exitCode", "0:0"}}));
  index = buildSnapshot(objects, {}, kNow);
  EXPECT_TRUE(index.snapshot.unplanned.empty());
  plan = core::plan(index.snapshot, kNow, {});
  ASSERT_EQ(plan.starts.size(), 1U);  // one node: the other waits for Resources
  EXPECT_TRUE(plan.starts[0].jobId == 20 || plan.starts[0].jobId == 21);
}

}  // namespace
}  // namespace kubeslurm::controllers
