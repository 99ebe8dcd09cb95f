#include "kubeslurm/nodesim/runner.h"

#include <gtest/gtest.h>

namespace kubeslurm::nodesim {
namespace {

RunPlan plan(std::vector<std::string> command, std::vector<std::string> args = {},
             std::map<std::string, std::string> annotations = {}) {
  api::Pod pod;
  pod.metadata.annotations = std::move(annotations);
  api::Container c;
  c.command = std::move(command);
  c.args = std::move(args);
  return planFromCommand(pod, c);
}

TEST(RunPlanTest, SleepRunsItsOperands) {
  EXPECT_EQ(plan({"sleep", "5"}).runMs, 5000);
  EXPECT_EQ(plan({"sleep"}, {"1.5"}).runMs, 1500);
  EXPECT_EQ(plan({"/bin/sleep", "1m", "30s"}).runMs, std::nullopt);  // not `sleep`: unknown
  EXPECT_EQ(plan({"sleep", "1m", "30s"}).runMs, 90'000);
  EXPECT_EQ(plan({"sleep", "infinity"}).runMs, std::nullopt);
  EXPECT_EQ(plan({"sleep", "5"}).exitCode, 0);
}

TEST(RunPlanTest, ShellScriptsSumSleepsUpToExit) {
  RunPlan p = plan({"sh", "-c", "echo start; sleep 2 && sleep 1; exit 3; sleep 100"});
  EXPECT_EQ(p.runMs, 3000);
  EXPECT_EQ(p.exitCode, 3);
  p = plan({"/bin/bash"}, {"-ec", "exit 7"});
  EXPECT_EQ(p.runMs, 0);
  EXPECT_EQ(p.exitCode, 7);
  EXPECT_EQ(plan({"sh", "-c", "sleep 1; false"}).exitCode, 1);
  EXPECT_EQ(plan({"sh", "-c", "exit 300"}).exitCode, 44);  // modulo 256, as waitpid reports
  EXPECT_EQ(plan({"sh", "-c", "echo 'a; exit 9'; exit 2"}).exitCode, 2);  // quotes respected
}

TEST(RunPlanTest, UnrecognisedCommandsRunUntilStopped) {
  EXPECT_EQ(plan({}).runMs, std::nullopt);
  EXPECT_EQ(plan({"python", "train.py"}).runMs, std::nullopt);
  EXPECT_EQ(plan({"sh", "-c", "python train.py"}).runMs, std::nullopt);
}

TEST(RunPlanTest, AnnotationsOverride) {
  RunPlan p =
      plan({"python", "train.py"}, {},
           {{std::string(kAnnotationRunSeconds), "12"}, {std::string(kAnnotationExitCode), "4"}});
  EXPECT_EQ(p.runMs, 12'000);
  EXPECT_EQ(p.exitCode, 4);
  p = plan({"sleep", "100"}, {}, {{std::string(kAnnotationExitCode), "1"}});
  EXPECT_EQ(p.runMs, 100'000);
  EXPECT_EQ(p.exitCode, 1);
  p = plan({"server"}, {}, {{std::string(kAnnotationExitCode), "5"}});
  EXPECT_EQ(p.runMs, 0);
}

TEST(SimulatedRunnerTest, StopIsSigtermUnlessIgnored) {
  SimulatedRunner runner;
  api::Pod pod;
  api::Container c;
  c.command = {"sleep", "infinity"};
  const ContainerRef ref{pod, c, 0, {}};
  RunStatus s = runner.stop(ref, 0, 30'000, 1000);
  EXPECT_TRUE(s.exited);
  EXPECT_EQ(s.exitCode, kExitSigterm);
  EXPECT_EQ(s.finishedAtMs, 1000);
  pod.metadata.annotations[std::string(kAnnotationIgnoreSigterm)] = "true";
  s = runner.stop(ref, 0, 30'000, 1000);
  EXPECT_FALSE(s.exited);
  EXPECT_EQ(s.checkAtMs, 30'000);
  s = runner.stop(ref, 0, 30'000, 30'000);
  EXPECT_TRUE(s.exited);
  EXPECT_EQ(s.exitCode, kExitSigkill);
  // A container that had already finished on its own keeps its own exit.
  c.command = {"sleep", "2"};
  s = runner.stop(ref, 0, 30'000, 5000);
  EXPECT_EQ(s.exitCode, 0);
  EXPECT_EQ(s.finishedAtMs, 2000);
}

}  // namespace
}  // namespace kubeslurm::nodesim

namespace kubeslurm::nodesim {
namespace {

// The operator's rank 0 (kubeslurm/podspec/rank_pods.cc): a launcher shell that execs the batch
// script from KUBESLURM_BATCH_SCRIPT. The script decides the run, comments and #SBATCH ignored.
TEST(RunPlanTest, KubeslurmBatchScriptRunsFromTheEnvironment) {
  api::Pod pod;
  api::Container c;
  c.command = {"/bin/sh", "-c", "f=/tmp/s && printf '%s' \"$KUBESLURM_BATCH_SCRIPT\" > \"$f\""};
  c.args = {"slurm_script"};
  api::EnvVar script;
  script.name = "KUBESLURM_BATCH_SCRIPT";
  script.value = "#!/bin/bash\n#SBATCH -N 2\n# sleep 100\nsrun hostname\nsleep 4\nexit 5\n";
  c.env.push_back(script);
  const RunPlan p = planFromCommand(pod, c);
  EXPECT_EQ(p.runMs, 4000);
  EXPECT_EQ(p.exitCode, 5);
}

}  // namespace
}  // namespace kubeslurm::nodesim
