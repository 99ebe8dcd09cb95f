// The scheduling loop's assume cache (assumed_gangs.h): a started gang holds its nodes from the
// moment it is assumed, through its admission on a worker, until the caches show its pods; its
// outcome reaches the loop once; admissions run side by side. Issue 18: the scheduling loop does
// no blocking I/O.
#include "controllers/assumed_gangs.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "kubeslurm/podspec/rank_pods.h"

namespace kubeslurm::controllers {
namespace {

constexpr core::Time kNow = 1795000000;
constexpr core::Duration kTimeout = 60;

api::Pod rankPod(const std::string& job, int rank, const std::string& node,
                 const std::string& note = "") {
  api::Pod pod;
  pod.metadata.namespaceName = "team-a";
  pod.metadata.name = job + "-" + std::to_string(rank);
  pod.metadata.labels[std::string(podspec::kJobNameLabel)] = job;
  if (!note.empty()) pod.metadata.annotations["note"] = note;
  pod.spec.nodeName = node;
  return pod;
}

std::vector<api::Pod> gangPods(const std::string& job, const std::string& note = "planned") {
  return {rankPod(job, 0, "gpu-1", note), rankPod(job, 1, "gpu-2", note)};
}

StartedGang started(const std::string& job) {
  return StartedGang{"team-a/" + job, {"gpu-1", "gpu-2"}, "train", false};
}

// An admission that ends when the test says so.
class Gate {
 public:
  AssumedGangs::Admission admission(const Status& result,
                                    const std::vector<api::Pod>& written = {}) {
    return [this, result, written](std::vector<api::Pod>* admitted) {
      gate_.wait();
      *admitted = written;
      return result;
    };
  }
  void open() { opened_.set_value(); }

 private:
  std::promise<void> opened_;
  std::shared_future<void> gate_ = opened_.get_future().share();
};

// What a cycle's input holds once the cache has added what the caches do not show.
std::vector<std::string> podsAfterLook(AssumedGangs& gangs, const SharedList<api::Pod>& cached,
                                       core::Time now) {
  SharedList<api::Pod> pods = cached;
  gangs.addUnseen(pods, now, kTimeout);
  std::vector<std::string> out;
  for (const api::Pod& pod : pods) {
    const auto note = pod.metadata.annotations.find("note");
    out.push_back(pod.metadata.name +
                  (note == pod.metadata.annotations.end() ? "" : ":" + note->second));
  }
  return out;
}

TEST(AssumedGangsTest, AnAssumedGangHoldsItsNodesUntilItsAdmissionEndsAndIsCollected) {
  AssumedGangs gangs(2);
  Gate gate;
  gangs.assume(started("train"), gangPods("train"), gate.admission(Status::ok()));
  EXPECT_TRUE(gangs.contains("team-a/train"));
  EXPECT_TRUE(gangs.admitting("team-a/train"));
  EXPECT_EQ(podsAfterLook(gangs, {}, kNow),
            (std::vector<std::string>{"train-0:planned", "train-1:planned"}));
  // The informer shows one pod of the gang already: only the other one stands in.
  EXPECT_EQ(podsAfterLook(gangs, {rankPod("train", 0, "gpu-1", "cached")}, kNow),
            (std::vector<std::string>{"train-0:cached", "train-1:planned"}));
  // However long it takes: an Assumed gang has no timeout.
  EXPECT_EQ(
      podsAfterLook(gangs, {rankPod("train", 0, "gpu-1", "cached")}, kNow + 10 * kTimeout).size(),
      2U);
  EXPECT_TRUE(gangs.finished().empty());
  gate.open();
  gangs.waitIdle();
  // Ended, not collected: still admitting, as far as the loop knows.
  EXPECT_TRUE(gangs.admitting("team-a/train"));
  const std::vector<FinishedAdmission> ended = gangs.finished();
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_TRUE(ended[0].result.isOk());
  EXPECT_EQ(ended[0].gang.key, "team-a/train");
  EXPECT_EQ(ended[0].gang.nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));
  EXPECT_FALSE(gangs.admitting("team-a/train"));
  EXPECT_TRUE(gangs.contains("team-a/train"));
  EXPECT_TRUE(gangs.finished().empty()) << "an outcome is handed over once";
}

TEST(AssumedGangsTest, AnAdmittedGangStandsInWithThePodsAsWrittenUntilTheCachesShowThemAll) {
  AssumedGangs gangs(1);
  Gate gate;
  gangs.assume(started("train"), gangPods("train"),
               gate.admission(Status::ok(), gangPods("train", "written")));
  gate.open();
  gangs.waitIdle();
  ASSERT_EQ(gangs.finished().size(), 1U);
  EXPECT_EQ(podsAfterLook(gangs, {}, kNow),
            (std::vector<std::string>{"train-0:written", "train-1:written"}));
  EXPECT_EQ(podsAfterLook(gangs, {rankPod("train", 1, "gpu-2", "cached")}, kNow + 1),
            (std::vector<std::string>{"train-1:cached", "train-0:written"}));
  EXPECT_TRUE(gangs.contains("team-a/train"));
  SharedList<api::Pod> whole = {rankPod("train", 0, "gpu-1", "cached"),
                                rankPod("train", 1, "gpu-2", "cached")};
  EXPECT_EQ(podsAfterLook(gangs, whole, kNow + 2).size(), 2U);
  EXPECT_FALSE(gangs.contains("team-a/train")) << "seen whole: no longer expected";
  EXPECT_EQ(podsAfterLook(gangs, {}, kNow + 3).size(), 0U);
}

TEST(AssumedGangsTest, AnAdmittedGangIsForgottenAfterTheTimeoutFromItsFirstLook) {
  AssumedGangs gangs(1);
  Gate gate;
  gangs.assume(started("train"), gangPods("train"), gate.admission(Status::ok()));
  gate.open();
  gangs.waitIdle();
  ASSERT_EQ(gangs.finished().size(), 1U);
  // The timeout runs from the first look after the admission, not from its start: a long
  // admission must not age it before the informer had a chance to deliver the pods.
  const core::Time firstLook = kNow + 10 * kTimeout;
  EXPECT_EQ(podsAfterLook(gangs, {}, firstLook).size(), 2U)
      << "planned pods, as none were returned";
  EXPECT_EQ(podsAfterLook(gangs, {}, firstLook + kTimeout).size(), 2U);
  EXPECT_EQ(podsAfterLook(gangs, {}, firstLook + kTimeout + 1).size(), 0U);
  EXPECT_FALSE(gangs.contains("team-a/train"));
}

TEST(AssumedGangsTest, AFailedAdmissionIsReportedOnceAndReleasesTheNodes) {
  AssumedGangs gangs(1);
  Gate gate;
  gangs.assume(started("train"), gangPods("train"),
               gate.admission(Status(StatusCode::kAlreadyExists, "pod train-1 exists")));
  gate.open();
  gangs.waitIdle();
  const std::vector<FinishedAdmission> ended = gangs.finished();
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(ended[0].result.code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(gangs.contains("team-a/train"));
  EXPECT_EQ(podsAfterLook(gangs, {}, kNow).size(), 0U);
}

TEST(AssumedGangsTest, AnAdmissionThatThrowsFailsWithoutEndingTheOperator) {
  AssumedGangs gangs(1);
  gangs.assume(started("train"), gangPods("train"), [](std::vector<api::Pod>*) -> Status {
    throw std::runtime_error("type_error.302: type must be string");
  });
  gangs.waitIdle();
  const std::vector<FinishedAdmission> ended = gangs.finished();
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(ended[0].result.code(), StatusCode::kInternal);
  EXPECT_NE(ended[0].result.toString().find("type must be string"), std::string::npos);
}

TEST(AssumedGangsTest, ForgetDropsAnAdmittedGangButNotOneBeingAdmitted) {
  AssumedGangs gangs(2);
  Gate first;
  Gate second;
  gangs.assume(started("a"), gangPods("a"), first.admission(Status::ok()));
  gangs.assume(started("b"), gangPods("b"), second.admission(Status::ok()));
  first.open();
  std::vector<FinishedAdmission> ended;
  for (int i = 0; i < 2000 && ended.empty(); ++i) {
    ended = gangs.finished();
    if (ended.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(ended[0].gang.key, "team-a/a");
  // A status write for either job (the loop decided it): b's pods are still being written.
  gangs.forget("team-a/a");
  gangs.forget("team-a/b");
  EXPECT_FALSE(gangs.contains("team-a/a"));
  EXPECT_TRUE(gangs.admitting("team-a/b"));
  EXPECT_EQ(podsAfterLook(gangs, {}, kNow),
            (std::vector<std::string>{"b-0:planned", "b-1:planned"}));
  second.open();
  gangs.waitIdle();
  ended = gangs.finished();
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(ended[0].gang.key, "team-a/b");
}

TEST(AssumedGangsTest, AdmissionsRunSideBySideAndEndInTheOrderTheyWereAssumed) {
  constexpr int kGangs = 4;
  AssumedGangs gangs(kGangs);
  std::mutex mutex;
  std::condition_variable all;
  int arrived = 0;
  // Each admission waits for every other to have begun: with fewer than kGangs running at
  // once, none would see all of them, and each fails after its wait instead of hanging.
  const auto together = [&](std::vector<api::Pod>*) {
    std::unique_lock<std::mutex> lock(mutex);
    ++arrived;
    all.notify_all();
    if (!all.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == kGangs; })) {
      return Status(StatusCode::kDeadlineExceeded, "admissions ran one after another");
    }
    return Status::ok();
  };
  for (int i = 0; i < kGangs; ++i) {
    gangs.assume(started("job" + std::to_string(i)), gangPods("job" + std::to_string(i)), together);
  }
  gangs.waitIdle();
  const std::vector<FinishedAdmission> ended = gangs.finished();
  ASSERT_EQ(ended.size(), static_cast<std::size_t>(kGangs));
  for (std::size_t i = 0; i < ended.size(); ++i) {
    EXPECT_EQ(ended[i].gang.key, "team-a/job" + std::to_string(i));
    EXPECT_TRUE(ended[i].result.isOk()) << ended[i].result.toString();
  }
}

TEST(AssumedGangsTest, TheLoopIsWokenWhenAnAdmissionEnds) {
  std::atomic<int> woken{0};
  AssumedGangs gangs(1, [&woken] { ++woken; });
  gangs.assume(started("train"), gangPods("train"), [](std::vector<api::Pod>*) {
    return Status(StatusCode::kUnavailable, "the API server is down");
  });
  gangs.waitIdle();
  EXPECT_EQ(woken.load(), 1);
}

TEST(AssumedGangsTest, FinishRunningLetsTheRunningAdmissionEndAndStartsNoQueuedOne) {
  AssumedGangs gangs(1);
  Gate gate;
  std::promise<void> running;
  const AssumedGangs::Admission gated = gate.admission(Status::ok());
  std::atomic<int> queuedRan{0};
  gangs.assume(started("a"), gangPods("a"), [&running, gated](std::vector<api::Pod>* admitted) {
    running.set_value();
    return gated(admitted);
  });
  gangs.assume(started("b"), gangPods("b"), [&queuedRan](std::vector<api::Pod>*) {
    ++queuedRan;
    return Status::ok();
  });
  running.get_future().wait();  // a runs (on the only worker); b is queued behind it
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open();
  });
  gangs.finishRunning();
  opener.join();
  EXPECT_EQ(queuedRan.load(), 0);
  const std::vector<FinishedAdmission> ended = gangs.finished();
  ASSERT_EQ(ended.size(), 2U);
  EXPECT_TRUE(ended[0].result.isOk()) << "a ran to its end";
  EXPECT_EQ(ended[1].result.code(), StatusCode::kAborted);
  EXPECT_FALSE(gangs.contains("team-a/b")) << "nothing of b was written";
}

TEST(AssumedGangsTest, ClearWaitsForRunningAdmissionsAndForgetsEverything) {
  AssumedGangs gangs(1);
  Gate gate;
  gangs.assume(started("train"), gangPods("train"), gate.admission(Status::ok()));
  std::thread opener([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open();
  });
  gangs.clear();
  opener.join();
  EXPECT_FALSE(gangs.contains("team-a/train"));
  EXPECT_TRUE(gangs.finished().empty()) << "a cleared outcome belongs to no one";
  EXPECT_EQ(podsAfterLook(gangs, {}, kNow).size(), 0U);
}

}  // namespace
}  // namespace kubeslurm::controllers
