// The CLI as a researcher runs it: the real `kubeslurm` binary (and its `squeue` symlink) with
// the sandbox's kubeconfig, against the real control plane, the real kubeslurm-operator and two
// simulated 8-GPU nodes (its own sandbox).
//
// Pinned here (docs/cli.md; reference "sbatch and squeue" in ../shared/reference/slurm-22.05.md):
// sbatch prints "Submitted batch job N" with the operator's id; squeue shows the job R on its
// node and, once it completed, no more; --partition=nope prints sbatch's two error lines, rc=1,
// and leaves no SlurmJob; squeue -j 99999 prints "slurm_load_jobs error: Invalid job id
// specified", rc=1. sprio and sshare reach the operator's gRPC query API over TLS with the
// kubeconfig's bearer token, found by flags or by the kubeslurm-scheduler ConfigMap; a call
// without a token, or with one the API server rejects, is UNAUTHENTICATED, and a caller RBAC
// does not let list SlurmJobs is PERMISSION_DENIED until a RoleBinding grants it. sdiag prints
// the operator's statistics in sdiag.c's layout.
#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/rpc/client.h"
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

// A port nothing listens on now, for the operator's gRPC server.
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  ::close(fd);
  return ntohs(address.sin_port);
}

// The query API's serving certificate, self-signed for the in-cluster name the Helm chart's
// Service has and for 127.0.0.1.
constexpr const char* kSchedulerName = "kubeslurm-scheduler.kubeslurm-system.svc";

// The CRDs, a default Partition over both nodes and the operator, once for the binary.
class ShimEnvironment : public ::testing::Environment {
 public:
  static int grpcPort() { return grpcPort_; }
  static std::string certificate() { return SandboxEnvironment::dir() + "/scheduler/tls.crt"; }

  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    const std::string tls = SandboxEnvironment::dir() + "/scheduler";
    const CommandResult made = runCommand(
        "mkdir -p " + shellQuote(tls) + " && openssl req -x509 -newkey ec -pkeyopt " +
        "ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=kubeslurm-scheduler -addext " +
        shellQuote(std::string("subjectAltName=DNS:") + kSchedulerName + ",IP:127.0.0.1") +
        " -keyout " + shellQuote(tls + "/tls.key") + " -out " + shellQuote(tls + "/tls.crt") +
        " 2>&1");
    ASSERT_EQ(made.exitCode, 0) << made.output;
    grpcPort_ = freePort();
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
    operator_ = std::make_unique<OperatorProcess>(
        KUBESLURM_OPERATOR_BINARY, "shim-it", SandboxEnvironment::dir() + "/logs/operator.log",
        std::vector<std::string>{"--grpc-bind-address=127.0.0.1:" + std::to_string(grpcPort_),
                                 "--grpc-tls-cert=" + tls + "/tls.crt",
                                 "--grpc-tls-key=" + tls + "/tls.key"});
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
  static inline int grpcPort_ = 0;
};

const ::testing::Environment* const kShim =
    ::testing::AddGlobalTestEnvironment(new ShimEnvironment());

struct Cli {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the CLI as a user would: `binary` is "kubeslurm" or a symlink beside it ("squeue").
// `environment`: more NAME=VALUE words for env(1), for a command that takes no flags of ours.
Cli cli(const std::string& binary, const std::string& arguments, const std::string& cwd = "/",
        const std::string& environment = "") {
  const std::string dir = KUBESLURM_CLI_DIR;
  const CommandResult got =
      runCommand("cd " + shellQuote(cwd) +
                 " && env KUBECONFIG=" + shellQuote(SandboxEnvironment::env()["KUBECONFIG"]) + " " +
                 environment + " " + shellQuote(dir + "/" + binary) + " " + arguments);
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

// sbatch -N0: slurmctld accepts zero nodes for a batch job (job_mgr.c _valid_job_part); the API
// server takes it too (it answered a raw 422 before) and the job runs on one node.
TEST_F(ShimIT, ZeroNodesRunOnOneNode) {
  const Cli submitted = cli("kubeslurm", "sbatch --parsable -N0 --time=5 it.sbatch", dir_);
  ASSERT_EQ(submitted.code, 0) << submitted.output;
  const std::string id = submitted.output.substr(0, submitted.output.find('\n'));
  Cli ran;
  EXPECT_TRUE(waitUntil(
      [&] {
        ran = cli("squeue", "-h -t all -j " + id + " -o '%T %D'");
        return ran.output == "RUNNING 1\n" || ran.output == "COMPLETED 1\n";
      },
      20s))
      << ran.output;
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

// scontrol requeuehold, requeue and release through the real binary and operator (Slurm 22.05
// src/scontrol/update_job.c scontrol_requeue_hold; src/slurmctld/job_mgr.c _job_requeue_op):
// a running job goes back to the queue as its next attempt (Restarts=1) and stays held
// (JobHeldUser); requeue of that pending job is refused as slurmctld refuses it
// (ESLURM_JOB_PENDING); release runs it again to COMPLETED.
TEST_F(ShimIT, ScontrolRequeueHoldThenReleaseRunsTheJobAgain) {
  std::ofstream(dir_ + "/rq.sbatch") << "#!/bin/sh\n#SBATCH --job-name=rq\n#SBATCH --nodes=1\n"
                                        "#SBATCH --gres=gpu:8\nsleep 4\n";
  const Cli submitted = cli("kubeslurm", "sbatch --parsable rq.sbatch", dir_);
  ASSERT_EQ(submitted.code, 0) << submitted.output;
  const std::string id = submitted.output.substr(0, submitted.output.find('\n'));
  Cli row;
  ASSERT_TRUE(waitUntil(
      [&] {
        row = cli("squeue", "-h -j " + id + " -o '%t'");
        return row.output == "R\n";
      },
      15s))
      << row.output;

  const Cli hold = cli("scontrol", "requeuehold " + id);
  EXPECT_EQ(hold.code, 0) << hold.output;
  EXPECT_EQ(hold.output, "");
  EXPECT_TRUE(waitUntil(
      [&] {
        row = cli("squeue", "-h -j " + id + " -o '%t %r'");
        return row.output == "PD JobHeldUser\n";
      },
      45s))
      << row.output;
  const Cli shown = cli("scontrol", "show job " + id);
  EXPECT_NE(shown.output.find(" Restarts=1 "), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("JobState=PENDING Reason=JobHeldUser"), std::string::npos)
      << shown.output;

  const Cli pending = cli("scontrol", "requeue " + id);
  EXPECT_EQ(pending.code, 1);
  EXPECT_EQ(pending.output, "Job is pending execution for job " + id + "\n");

  EXPECT_EQ(cli("scontrol", "release " + id).code, 0);
  EXPECT_TRUE(waitUntil(
      [&] {
        row = cli("squeue", "-h -t all -j " + id + " -o '%T'");
        return row.output == "COMPLETED\n";
      },
      30s))
      << row.output;
  EXPECT_NE(cli("scontrol", "show job " + id).output.find(" Restarts=1 "), std::string::npos);
}

// scontrol release of a task still in its held array's record (256 of the 300 are made, the rest
// wait in the record): as slurmctld splits a task off its meta record, the task is made (held,
// through the array's spec.splitTasks), released, and runs on its own; the others stay held.
TEST_F(ShimIT, ReleasingATaskNotMadeYetSplitsItOffItsArray) {
  std::ofstream(dir_ + "/wide.sbatch") << "#!/bin/sh\n#SBATCH --job-name=wide\nsleep 1\n";
  const Cli submitted =
      cli("kubeslurm", "sbatch --parsable --hold --array=0-299 wide.sbatch", dir_);
  ASSERT_EQ(submitted.code, 0) << submitted.output;
  const std::string id = submitted.output.substr(0, submitted.output.find('\n'));
  const Cli released = cli("scontrol", "release " + id + "_290");
  EXPECT_EQ(released.code, 0) << released.output;
  EXPECT_EQ(released.output, "");
  Cli row;
  EXPECT_TRUE(waitUntil(
      [&] {
        row = cli("squeue", "-h -t all -j " + id + "_290 -o '%i %T'");
        return row.output == id + "_290 COMPLETED\n";
      },
      45s))
      << row.output;
  row = cli("squeue", "-h -r -j " + id + "_5," + id + "_299 -o '%i %t %r'");
  EXPECT_EQ(row.output, id + "_5 PD JobHeldUser\n" + id + "_299 PD JobHeldUser\n");
  EXPECT_EQ(cli("scancel", id).code, 0);
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

// The query API's flags: the sandbox's token context (the default one authenticates with a
// client certificate, which the query API cannot check).
std::string queryFlags() {
  return "--context kubeslurm-sandbox-token --scheduler 127.0.0.1:" +
         std::to_string(ShimEnvironment::grpcPort()) + " --scheduler-ca " +
         shellQuote(ShimEnvironment::certificate()) + " --scheduler-server-name " + kSchedulerName;
}

// The same, as the environment srun reads (it takes no flags of ours).
std::string queryEnvironment() {
  return "KUBESLURM_CONTEXT=kubeslurm-sandbox-token KUBESLURM_SCHEDULER=127.0.0.1:" +
         std::to_string(ShimEnvironment::grpcPort()) +
         " KUBESLURM_SCHEDULER_CA=" + shellQuote(ShimEnvironment::certificate()) +
         " KUBESLURM_SCHEDULER_SERVER_NAME=" + kSchedulerName;
}

// Reference "sprio, sshare, sdiag": a job that waits for Resources shows its factors in sprio's
// default columns (the operator's weights: age, fair-share, job size, partition, GPU TRES), and
// sshare shows the root of the association tree.
TEST_F(ShimIT, SprioAndSshareReadTheSchedulersLiveState) {
  // Reference "sbatch and squeue": --test-only answers on stderr, rc=0, and submits nothing.
  const Cli willRun =
      cli("kubeslurm", "sbatch --test-only " + queryFlags() + " --nodes=2 it.sbatch", dir_);
  EXPECT_EQ(willRun.code, 0) << willRun.output;
  EXPECT_TRUE(std::regex_match(willRun.output,
                               std::regex("sbatch: Job \\d+ to start at \\d{4}-\\d\\d-\\d\\dT"
                                          "\\d\\d:\\d\\d:\\d\\d using 2 processors on nodes "
                                          "gpu-\\[001-002\\] in partition batch\n")))
      << willRun.output;
  const Cli tooWide =
      cli("kubeslurm", "sbatch --test-only " + queryFlags() + " --nodes=3 it.sbatch", dir_);
  EXPECT_EQ(tooWide.code, 1);
  EXPECT_EQ(tooWide.output, "allocation failure: Requested node configuration is not available\n");
  // srun --test-only from a login shell asks the same question (srun_job.c allocate_test), of
  // its allocation options; its step options (-l) beside them change nothing.
  const Cli srunWillRun = cli("srun", "-N 2 -l --test-only hostname", dir_, queryEnvironment());
  EXPECT_EQ(srunWillRun.code, 0) << srunWillRun.output;
  EXPECT_TRUE(std::regex_match(srunWillRun.output,
                               std::regex("srun: Job \\d+ to start at \\d{4}-\\d\\d-\\d\\dT"
                                          "\\d\\d:\\d\\d:\\d\\d using 2 processors on nodes "
                                          "gpu-\\[001-002\\] in partition batch\n")))
      << srunWillRun.output;
  const Cli srunTooWide = cli("srun", "-N3 --test-only hostname", dir_, queryEnvironment());
  EXPECT_EQ(srunTooWide.code, 1);
  EXPECT_EQ(srunTooWide.output,
            "allocation failure: Requested node configuration is not available\n");

  std::ofstream(dir_ + "/wide.sbatch") << "#!/bin/sh\n#SBATCH --job-name=wide\n#SBATCH --nodes=2\n"
                                          "#SBATCH --gres=gpu:8\nsleep 60\n";
  const Cli wide = cli("kubeslurm", "sbatch --parsable wide.sbatch", dir_);
  ASSERT_EQ(wide.code, 0) << wide.output;
  const std::string wideId = wide.output.substr(0, wide.output.find('\n'));
  // A what-if uses up no id (security review C3): the job submitted next gets the id it showed.
  EXPECT_EQ(willRun.output.substr(0, willRun.output.find(" to start")), "sbatch: Job " + wideId);
  const Cli waiting = cli("kubeslurm", "sbatch --parsable it.sbatch", dir_);
  ASSERT_EQ(waiting.code, 0) << waiting.output;
  const std::string waitingId = waiting.output.substr(0, waiting.output.find('\n'));

  Cli sprio;
  EXPECT_TRUE(waitUntil(
      [&] {
        sprio = cli("sprio", queryFlags());
        return sprio.output.find("\n" + std::string(15 - waitingId.size(), ' ') + waitingId +
                                 " batch ") != std::string::npos;
      },
      20s))
      << sprio.output;
  EXPECT_EQ(sprio.code, 0);
  EXPECT_EQ(sprio.output.substr(0, sprio.output.find('\n')),
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
            "PARTITION                 TRES");
  EXPECT_NE(sprio.output.find("gres/gpu="), std::string::npos) << sprio.output;
  const Cli one = cli("sprio", queryFlags() + " -h -j " + waitingId + " -o '%i %r %u'");
  EXPECT_EQ(one.output, waitingId + " batch admin\n");
  // squeue --start: SCHEDNODES from the same plan.
  Cli start;
  EXPECT_TRUE(waitUntil(
      [&] {
        start = cli("squeue", "--start -h -j " + waitingId + " -o '%i %Y' " + queryFlags());
        return std::regex_match(start.output, std::regex(waitingId + " gpu-00[12]\n"));
      },
      15s))
      << start.output;

  // sshare: found through the ConfigMap the Helm chart writes, without flags.
  const std::string pem = testing_support::readFile(ShimEnvironment::certificate());
  std::ofstream(dir_ + "/ca.crt") << pem;
  const CommandResult configMap = kubectl(
      "-n kubeslurm-system create configmap kubeslurm-scheduler --from-literal=address=127.0.0.1:" +
      std::to_string(ShimEnvironment::grpcPort()) + " --from-literal=serverName=" + kSchedulerName +
      " --from-file=ca.crt=" + shellQuote(dir_ + "/ca.crt"));
  ASSERT_EQ(configMap.exitCode, 0) << configMap.output;
  // An account beside root: the tree sshare prints, once a cycle has seen it.
  ASSERT_EQ(kubectl(R"(apply -f - <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Account
metadata:
  name: research
spec:
  shares: 40
EOF
)")
                .exitCode,
            0);
  Cli sshare;
  EXPECT_TRUE(waitUntil(
      [&] {
        sshare = cli("sshare", "--context kubeslurm-sandbox-token -a");
        return sshare.output.find("\n research ") != std::string::npos;
      },
      20s))
      << sshare.output;
  EXPECT_EQ(sshare.code, 0) << sshare.output;
  EXPECT_EQ(sshare.output.substr(0, sshare.output.find('\n')),
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
            "FairShare ");
  EXPECT_NE(sshare.output.find("\nroot                 "), std::string::npos) << sshare.output;

  for (const std::string& id : {wideId, waitingId}) {
    const std::string name =
        kubectl("-n default get sj -o jsonpath='{.items[?(@.status.jobId==" + id +
                ")].metadata.name}'")
            .output;
    kubectl("-n default patch sj " + shellQuote(name) +
            " --type merge -p '{\"spec\":{\"cancel\":true}}'");
  }
}

// sdiag (the `sdiag` symlink) reads GetStatistics: sdiag.c's banner, the job counters, the main
// scheduler's cycles in microseconds and the backfill block, from the operator's own counters.
TEST_F(ShimIT, SdiagReadsTheSchedulersStatistics) {
  Cli sdiag;
  EXPECT_TRUE(waitUntil(
      [&] {
        sdiag = cli("sdiag", queryFlags());
        return sdiag.code == 0 && sdiag.output.find("\tTotal cycles: 0\n") == std::string::npos;
      },
      20s))
      << sdiag.output;
  EXPECT_TRUE(std::regex_match(
      sdiag.output,
      std::regex("\\*{55}\n"
                 "sdiag output at \\w{3} \\w{3} \\d\\d \\d\\d:\\d\\d:\\d\\d \\d{4} \\(\\d+\\)\n"
                 "Data since      \\w{3} \\w{3} \\d\\d \\d\\d:\\d\\d:\\d\\d \\d{4} \\(\\d+\\)\n"
                 "\\*{55}\n"
                 "Jobs started:   \\d+\n\n"
                 "Job states ts:  [^\n]+ \\(\\d+\\)\n"
                 "Jobs pending:   \\d+\n"
                 "Jobs running:   \\d+\n\n"
                 "Main schedule statistics \\(microseconds\\):\n"
                 "\tLast cycle:   \\d+\n"
                 "\tMax cycle:    \\d+\n"
                 "\tTotal cycles: [1-9]\\d*\n"
                 "\tMean cycle:   \\d+\n"
                 "(\tCycles per minute: \\d+\n)?\n"
                 "Backfilling stats\n"
                 "\tTotal backfilled jobs \\(since last slurm start\\): \\d+\n"
                 "\tTotal backfilled jobs \\(since last stats cycle start\\): \\d+\n"
                 "\tLast depth cycle: \\d+\n")))
      << sdiag.output;
  const Cli reset = cli("sdiag", queryFlags() + " --reset");
  EXPECT_EQ(reset.code, 1);
  EXPECT_EQ(reset.output,
            "sdiag: error: -r/--reset is not supported by kubeslurm: the statistics count from "
            "the operator's start\n");
}

// Tokens and RBAC decide, through TokenReview and SubjectAccessReview.
TEST_F(ShimIT, QueryApiAuthenticatesAndAuthorizesWithTheApiServer) {
  const std::string pem = testing_support::readFile(ShimEnvironment::certificate());
  const auto query = [&](const std::string& token) {
    rpc::ClientOptions options;
    options.address = "127.0.0.1:" + std::to_string(ShimEnvironment::grpcPort());
    options.caPem = pem;
    options.serverNameOverride = kSchedulerName;
    options.bearerToken = token;
    return rpc::connectQueryClient(options)->listPendingJobs("default");
  };
  EXPECT_EQ(query("").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(query("not-a-token").status().code(), StatusCode::kUnauthenticated);

  // The namespace's default service account may do nothing until a Role says so.
  const std::string secret =
      kubectl("-n default get sa default -o jsonpath='{.secrets[0].name}'").output;
  const CommandResult token = kubectl("-n default get secret " + shellQuote(secret) +
                                      " -o jsonpath='{.data.token}' | base64 -d");
  ASSERT_EQ(token.exitCode, 0) << token.output;
  const auto denied = query(token.output);
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied) << denied.status().message();
  EXPECT_NE(denied.status().message().find("list slurmjobs.kubeslurm.io in namespace default"),
            std::string::npos)
      << denied.status().message();
  ASSERT_EQ(
      kubectl("-n default create role sj-reader --verb=list --resource=slurmjobs.kubeslurm.io")
          .exitCode,
      0);
  ASSERT_EQ(kubectl("-n default create rolebinding sj-reader --role=sj-reader "
                    "--serviceaccount=default:default")
                .exitCode,
            0);
  // A refusal is remembered for 2 s; then the new RoleBinding counts.
  EXPECT_TRUE(waitUntil([&] { return query(token.output).isOk(); }, 10s));
}

// sacctmgr's changes against the real API server: the Account CRD's schema takes what add and
// modify write (organization, limits, QOS, a merge patch's nulls clearing a limit, the
// resourceVersion a list patch carries), and show reads the objects back as Slurm prints them.
TEST_F(ShimIT, SacctmgrChangesAccountsOnTheApiServer) {
  const Cli added = cli("sacctmgr",
                        "-i add account it-team Description=\"IT team\" "
                        "Organization=research fairshare=3");
  ASSERT_EQ(added.code, 0) << added.output;
  EXPECT_EQ(added.output,
            " Adding Account(s)\n  it-team\n Settings\n  Description     = it team\n"
            "  Organization    = research\n Associations\n  A = it-team    C = kubeslurm \n"
            " Settings\n  Fairshare     = 3\n  Parent        = root\n");
  ASSERT_EQ(cli("sacctmgr", "-i add account it-sub parent=it-team").code, 0);
  const Cli modified = cli("sacctmgr",
                           "-i modify account it-team set GrpTRES=gres/gpu=16,node=4 "
                           "MaxJobs=4 MaxWall=1-00:00:00 QOS=normal,high");
  ASSERT_EQ(modified.code, 0) << modified.output;
  ASSERT_EQ(cli("sacctmgr", "-i modify account it-team set MaxJobs=-1 GrpTRES=node=-1").code, 0);
  const Cli user = cli("sacctmgr", "-i add user alice Account=it-team,it-sub");
  ASSERT_EQ(user.code, 0) << user.output;

  const Cli assoc = cli("sacctmgr",
                        "-n -P show assoc account=it-team,it-sub "
                        "format=account,user,parentname,share,grptres,maxjobs,maxwall,qos");
  EXPECT_EQ(assoc.output,
            "it-team||root|3|gres/gpu=16||1-00:00:00|high,normal\n"
            "it-team|alice||1|||1-00:00:00|high,normal\n"
            "it-sub||it-team|1|||1-00:00:00|high,normal\n"
            "it-sub|alice||1|||1-00:00:00|high,normal\n");
  EXPECT_EQ(cli("sacctmgr", "-n -P show account it-team,it-sub").output,
            "it-sub|it-sub|it-team\nit-team|it team|research\n");

  // A parent with sub-accounts stays until they go; then both go.
  EXPECT_EQ(cli("sacctmgr", "-i delete account it-team").code, 1);
  const Cli deleted = cli("sacctmgr", "-i delete account it-sub,it-team");
  EXPECT_EQ(deleted.code, 0) << deleted.output;
  EXPECT_EQ(deleted.output, " Deleting accounts...\n  it-sub\n  it-team\n");
  EXPECT_EQ(cli("sacctmgr", "-n -P show account it-team,it-sub").output, "");
}

}  // namespace
}  // namespace kubeslurm
