#include "kubeslurm/step/step_records.h"

#include <gtest/gtest.h>

namespace kubeslurm::step {
namespace {

StepRecord record(std::uint32_t id, std::string name = "torchrun") {
  StepRecord r;
  r.stepId = id;
  r.name = std::move(name);
  r.nodelist = "train-[0-1]";
  r.nnodes = 2;
  r.ntasks = 2;
  r.cpus = 16;
  r.startTime = 1795235712;
  r.endTime = 1795235790;
  r.exitCode = 0;
  r.signal = 0;
  r.state = "COMPLETED";
  return r;
}

TEST(StepRecords, RoundTrip) {
  std::vector<StepRecord> steps = {record(0), record(1, "sleep")};
  steps[1].state = "CANCELLED";
  steps[1].signal = 15;
  auto decoded = decodeStepRecords(encodeStepRecords(steps));
  ASSERT_TRUE(decoded.isOk()) << decoded.status().message();
  EXPECT_EQ(decoded->steps, steps);
  EXPECT_EQ(decoded->dropped, 0U);
}

// The kubelet keeps 4096 bytes of a termination message: the first steps that fit are kept and
// the rest counted.
TEST(StepRecords, StaysWithinTheLimit) {
  std::vector<StepRecord> steps;
  for (std::uint32_t i = 0; i < 100; ++i) steps.push_back(record(i));
  const std::string text = encodeStepRecords(steps);
  EXPECT_LE(text.size(), kTerminationMessageLimit);
  auto decoded = decodeStepRecords(text);
  ASSERT_TRUE(decoded.isOk());
  ASSERT_FALSE(decoded->steps.empty());
  EXPECT_LT(decoded->steps.size(), 100U);
  EXPECT_EQ(decoded->steps.front().stepId, 0U);
  EXPECT_EQ(decoded->steps.size() + decoded->dropped, 100U);
  EXPECT_EQ(decodeStepRecords(encodeStepRecords(steps, 10))->dropped, 100U);
}

// The message comes from the user's container: anything but the launcher's report is refused.
TEST(StepRecords, RefusesWhatTheLauncherDoesNotWrite) {
  for (const char* bad : {
           "",
           "oops: segfault",
           "[]",
           R"({"steps": 3})",
           R"({"steps": [1]})",
           R"({"steps": [{"id": 0}]})",
           R"({"steps": [{"id": -1, "name": "a", "nodes": "n", "nnodes": 1, "ntasks": 1,
              "cpus": 1, "start": 0, "end": 0, "exit": 0, "signal": 0, "state": "COMPLETED"}]})",
           R"({"steps": [{"id": 0, "name": "a", "nodes": "n", "nnodes": 1, "ntasks": 1,
              "cpus": 1, "start": 0, "end": 0, "exit": 0, "signal": 0, "state": "RUNNING"}]})",
           R"({"steps": [{"id": 0, "name": 5, "nodes": "n", "nnodes": 1, "ntasks": 1,
              "cpus": 1, "start": 0, "end": 0, "exit": 0, "signal": 0, "state": "FAILED"}]})",
           R"({"steps": [], "dropped": -2})",
       }) {
    EXPECT_FALSE(decodeStepRecords(bad).isOk()) << bad;
  }
  EXPECT_TRUE(decodeStepRecords(R"({"steps": []})").isOk());
}

}  // namespace
}  // namespace kubeslurm::step
