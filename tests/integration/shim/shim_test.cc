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
#include <functional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/support/sandbox_env.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): for posix_spawn

namespace kubeslurm {
namespace {

using testing_support::CommandResult;
using testing_support::kubectl;
using testing_support::runCommand;
using testing_support::SandboxEnvironment;
using testing_support::shellQuote;
using namespace std::chrono_literals;

const ::testing::Environment* const kSandbox = ::testing::AddGlobalTestEnvironment(
    new SandboxEnvironment("--nodes 2x8 --nodesim-binary " NODESIM_BINARY
                           " --nodesim-args '--heartbeat 2 --start-delay 0.2'"));

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return done();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CRDs, a default Partition over both nodes and the operator, once for the binary.
class ShimEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    const std::string source = KUBESLURM_SOURCE_DIR;
    CommandResult crds = kubectl("apply -f " + source + "/crds/");
    ASSERT_EQ(crds.exitCode, 0) << crds.output;
    CommandResult established = kubectl("wait --for condition=established --timeout=30s crd --all");
    ASSERT_EQ(established.exitCode, 0) << established.output;
    ASSERT_EQ(kubectl("create namespace kubeslurm-system").exitCode, 0);
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
    logFile_ = SandboxEnvironment::dir() + "/logs/operator.log";
    std::vector<std::string> args = {KUBESLURM_OPERATOR_BINARY,
                                     "--kubeconfig",
                                     SandboxEnvironment::env()["KUBECONFIG"],
                                     "--namespace",
                                     "kubeslurm-system",
                                     "--identity",
                                     "shim-it",
                                     "--scheduling-interval",
                                     "1",
                                     "--min-cycle-interval",
                                     "0.1",
                                     "--kill-wait",
                                     "2",
                                     "--metrics-bind-address",
                                     "127.0.0.1:0",
                                     "--health-probe-bind-address",
                                     "127.0.0.1:0"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logFile_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(spawned, 0) << "cannot start " << KUBESLURM_OPERATOR_BINARY;
    ASSERT_TRUE(
        waitUntil([&] { return readFile(logFile_).find("recovery:") != std::string::npos; }, 30s))
        << "the operator did not become leader:\n"
        << readFile(logFile_);
    // Pods need the namespace's service-account token (ServiceAccount admission).
    ASSERT_TRUE(waitUntil(
        [] {
          CommandResult token = kubectl("-n default get sa default -o jsonpath={.secrets[0].name}");
          return token.exitCode == 0 && !token.output.empty();
        },
        20s));
  }

  void TearDown() override {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    if (::testing::UnitTest::GetInstance()->Failed()) {
      const std::string text = readFile(logFile_);
      std::printf("---- operator log (tail) ----\n%s\n",
                  text.substr(text.size() > 6000 ? text.size() - 6000 : 0).c_str());
    }
  }

 private:
  std::string logFile_;
  pid_t pid_ = 0;
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
