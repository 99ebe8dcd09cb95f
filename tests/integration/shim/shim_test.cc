// The CLI as a researcher runs it: the real `kubeslurm` binary (and its `squeue` symlink) with
// the sandbox's kubeconfig, against the real control plane, the real kubeslurm-operator and two
// simulated 8-GPU nodes (its own sandbox).
//
// Pinned here (docs/cli.md; reference "sbatch and squeue" in ../shared/reference/slurm-22.05.md):
// sbatch prints "Submitted batch job N" with the operator's id; squeue shows the job R on its
// node and, once it completed, no more; --partition=nope prints sbatch's two error lines, rc=1,
// and leaves no SlurmJob; squeue -j 99999 prints "slurm_load_jobs error: Invalid job id
// specified", rc=1.
#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/support/operator_process.h"
#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm {
namespace {

using testing_support::CommandResult;
using testing_support::kubectl;
using testing_support::OperatorProcess;
using testing_support::runCommand;
using testing_support::SandboxEnvironment;
using testing_support::shellQuote;
using testing_support::waitUntil;
using namespace std::chrono_literals;

const ::testing::Environment* const kSandbox = ::testing::AddGlobalTestEnvironment(
    new SandboxEnvironment("--nodes 2x8 --nodesim-binary " NODESIM_BINARY
                           " --nodesim-args '--heartbeat 2 --start-delay 0.2'"));

// The CRDs, a default Partition over both nodes and the operator, once for the binary.
class ShimEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    ASSERT_EQ(testing_support::installCrdsAndOperatorNamespace(KUBESLURM_SOURCE_DIR), "");
    CommandResult partition = kubectl(R"(apply -f - <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: batch
spec:
  nodes: gpu-[001-002]
  default: true
  maxTime: "1-00:00:00"
EOF
)");
    ASSERT_EQ(partition.exitCode, 0) << partition.output;
    operator_ = std::make_unique<OperatorProcess>(KUBESLURM_OPERATOR_BINARY, "shim-it",
                                                  SandboxEnvironment::dir() + "/logs/operator.log");
    ASSERT_TRUE(operator_->start()) << "cannot start " << KUBESLURM_OPERATOR_BINARY;
    ASSERT_TRUE(operator_->waitForLeadership(30s)) << "the operator did not become leader:\n"
                                                   << operator_->log();
    // Pods need the namespace's service-account token (ServiceAccount admission).
    ASSERT_TRUE(testing_support::waitForServiceAccountToken("default", 20s));
  }

  void TearDown() override {
    if (!operator_) return;
    operator_->stop(SIGTERM);
    if (::testing::UnitTest::GetInstance()->Failed()) {
      std::printf("---- operator log (tail) ----\n%s\n", operator_->logTail().c_str());
    }
    operator_.reset();
  }

 private:
  std::unique_ptr<OperatorProcess> operator_;
};

const ::testing::Environment* const kShim =
    ::testing::AddGlobalTestEnvironment(new ShimEnvironment());

struct Cli {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the CLI as a user would: `binary` is "kubeslurm" or a symlink beside it ("squeue").
Cli cli(const std::string& binary, const std::string& arguments, const std::string& cwd = "/") {
  const std::string dir = KUBESLURM_CLI_DIR;
  const CommandResult got = runCommand("cd " + shellQuote(cwd) + " && env KUBECONFIG=" +
                                       shellQuote(SandboxEnvironment::env()["KUBECONFIG"]) + " " +
                                       shellQuote(dir + "/" + binary) + " " + arguments);
  return Cli{WIFEXITED(got.exitCode) ? WEXITSTATUS(got.exitCode) : -1, got.output};
}

class ShimIT : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    dir_ = SandboxEnvironment::dir() + "/jobs";
    ::mkdir(dir_.c_str(), 0755);
    std::ofstream(dir_ + "/it.sbatch") << "#!/bin/sh\n#SBATCH --job-name=it\n#SBATCH --nodes=1\n"
                                          "#SBATCH --gres=gpu:8\nsleep 3\n";
  }
  std::string dir_;
};

TEST_F(ShimIT, SbatchThenSqueueShowsItRunningThenGone) {
  const Cli submitted = cli("kubeslurm", "sbatch --time=5 it.sbatch", dir_);
  ASSERT_EQ(submitted.code, 0) << submitted.output;
  std::smatch match;
  ASSERT_TRUE(std::regex_match(submitted.output, match, std::regex("Submitted batch job (\\d+)\n")))
      << submitted.output;
  const std::string id = match[1];

  // Running, as the default format prints it; NODELIST holds the rank pods' hostnames.
  Cli running;
  EXPECT_TRUE(waitUntil(
      [&] {
        running = cli("squeue", "-j " + id);
        return running.output.find(" R ") != std::string::npos;
      },
      15s))
      << running.output;
  EXPECT_EQ(running.code, 0);
  const std::regex row(
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES "
      "NODELIST\\(REASON\\)\n"
      " {8,17}" +
      id +
      "     batch       it    admin  R       \\d:\\d\\d      1 "
      "it-[a-z0-9]{5}-0\n");
  EXPECT_TRUE(std::regex_match(running.output, row)) << running.output;
  const Cli fields = cli("kubeslurm", "squeue -h -j " + id + " -o '%i|%j|%u|%T|%D|%P|%b|%l'");
  EXPECT_EQ(fields.output, id + "|it|admin|RUNNING|1|batch|gres:gpu:8|5:00\n");

  // COMPLETED jobs leave squeue's default view; -t CD still finds it.
  Cli gone;
  EXPECT_TRUE(waitUntil(
      [&] {
        gone = cli("squeue", "-h -j " + id);
        return gone.code == 0 && gone.output.empty();
      },
      20s))
      << gone.output;
  EXPECT_EQ(cli("squeue", "-h -t CD -j " + id + " -o '%i %T'").output, id + " COMPLETED\n");
}

// Reference "Job arrays": the running task as A_T, the pending ones as one row A_[1-2%1].
TEST_F(ShimIT, ArrayTasksCollapseWhilePending) {
  std::ofstream(dir_ + "/arr.sbatch") << "#!/bin/sh\n#SBATCH --job-name=arr\nsleep 2\n";
  const Cli submitted = cli("kubeslurm", "sbatch --parsable --array=0-2%1 arr.sbatch", dir_);
  ASSERT_EQ(submitted.code, 0) << submitted.output;
  const std::string id = submitted.output.substr(0, submitted.output.find('\n'));
  // One task runs (the throttle), the other two pend as one row; which one runs first is the
  // scheduler's choice.
  const std::regex collapsed(id + "_\\[(\\d)[-,](\\d)%1\\] PD\n" + id + "_(\\d) R\n");
  Cli rows;
  std::smatch match;
  std::string seen;
  EXPECT_TRUE(waitUntil(
      [&] {
        rows = cli("squeue", "-h -j " + id + " -o '%i %t'");
        if (seen.find(rows.output) == std::string::npos) seen += rows.output + "--\n";
        return std::regex_match(rows.output, match, collapsed);
      },
      15s))
      << seen;
  EXPECT_TRUE(waitUntil(
      [&] {
        rows = cli("squeue", "-h -j " + id);
        return rows.code == 0 && rows.output.empty();
      },
      20s))
      << rows.output;
}

// Reference "sbatch and squeue": --partition=nope and squeue -j 99999.
TEST_F(ShimIT, RefusedSubmissionAndUnknownJob) {
  const Cli refused =
      cli("kubeslurm", "sbatch --job-name=refused --partition=nope it.sbatch", dir_);
  EXPECT_EQ(refused.code, 1);
  EXPECT_EQ(refused.output,
            "sbatch: error: invalid partition specified: nope\n"
            "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
  // Slurm keeps no job it refused.
  EXPECT_EQ(
      kubectl("-n default get sj -o jsonpath={.items[*].spec.jobName}").output.find("refused"),
      std::string::npos);

  const Cli unknown = cli("squeue", "-j 99999");
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(unknown.output, "slurm_load_jobs error: Invalid job id specified\n");
}

}  // namespace
}  // namespace kubeslurm
