// srun and the step agents end to end on this host: real agents (gRPC on 127.0.0.1), real task
// processes, srun run in-process against them. What is pinned and where Slurm says so:
//  - task output relayed, `-l` labels "%*d: " with the width of the largest task id
//    (src/api/step_io.c _wid, src/common/write_labelled_message.c);
//  - srun's exit status: the highest signal (128 + n) over any exit code, else the highest code,
//    and "srun: error: <host>: task <n>: Exited with exit code <c>"
//    (src/plugins/launch/slurm/launch_slurm.c, src/srun/libsrun/srun_job.c fini_srun);
//  - an unexecutable command: "slurmstepd: error: execve(): <cmd>: <strerror>" and exit errno;
//  - SIGTERM to srun: "srun: forcing job termination" and SIGKILL to the tasks
//    (src/srun/libsrun/srun_job.c _srun_signal_mgr);
//  - step ids count from 0 per job; a step never outlives its srun.
#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "kubeslurm/inpod/agent.h"
#include "kubeslurm/inpod/srun.h"
#include "kubeslurm/step/step.grpc.pb.h"

namespace kubeslurm::inpod {
namespace {

constexpr std::string_view kToken = "s3cret-token";

std::vector<std::string> sortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

class StepRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      auto agent = startAgent(AgentOptions{.listenAddress = "127.0.0.1:0",
                                           .token = std::string(kToken),
                                           .killWait = std::chrono::milliseconds(300)});
      ASSERT_TRUE(agent.isOk()) << agent.status().toString();
      agents_.push_back(std::move(*agent));
    }
    scratch_ = std::filesystem::temp_directory_path() /
               ("step-runtime-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override {
    for (auto& agent : agents_) agent->stop();
    std::filesystem::remove_all(scratch_);
  }

  // The batch environment of a 2-node job, 1 task per node, with the agents on this host.
  std::map<std::string, std::string> jobEnvironment(
      const std::string& token = std::string(kToken)) const {
    const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): read-only here
    return {
        {"PATH", path != nullptr ? path : "/usr/bin:/bin"},
        {"SLURM_JOB_ID", "7"},
        {"SLURM_JOB_NODELIST", "train-[0-1]"},
        {"SLURM_JOB_NUM_NODES", "2"},
        {"SLURM_NNODES", "2"},
        {"SLURM_NTASKS", "2"},
        {"SLURM_CPUS_ON_NODE", "4"},
        {std::string(kTokenVariable), token},
        {std::string(kAgentsVariable), "127.0.0.1:" + std::to_string(agents_[0]->port()) +
                                           ",127.0.0.1:" + std::to_string(agents_[1]->port())},
    };
  }

  struct Result {
    int code = 0;
    std::string out;
    std::string err;
  };
  Result srun(const std::vector<std::string>& args,
              std::map<std::string, std::string> environment = {}) {
    if (environment.empty()) environment = jobEnvironment();
    std::ostringstream out;
    std::ostringstream err;
    Srun command(environment,
                 SrunSettings{.connectTimeout = std::chrono::seconds(5),
                              .workingDirectory = scratch_.string(),
                              .umask = "0022"},
                 out, err);
    const int code = command.run(args);
    return {code, out.str(), err.str()};
  }

  // srun with its stdin on `inputFd` and --pty's terminal on `terminalFd`; `during` runs beside
  // the step (on another thread) and may signal it.
  Result srunWithInput(const std::vector<std::string>& args, int inputFd, int terminalFd = -1,
                       const std::function<void(Srun&)>& during = {}) {
    std::ostringstream out;
    std::ostringstream err;
    Srun command(jobEnvironment(),
                 SrunSettings{.connectTimeout = std::chrono::seconds(5),
                              .workingDirectory = scratch_.string(),
                              .umask = "0022",
                              .inputFd = inputFd,
                              .terminalFd = terminalFd},
                 out, err);
    std::thread beside;
    if (during) beside = std::thread([&] { during(command); });
    const int code = command.run(args);
    if (beside.joinable()) beside.join();
    return {code, out.str(), err.str()};
  }

  // Waits up to 10 s for a file a task makes to say it is ready.
  static bool waitFor(const std::filesystem::path& marker) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!std::filesystem::exists(marker)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  std::vector<std::unique_ptr<Agent>> agents_;
  std::filesystem::path scratch_;
};

// A pipe srun reads its stdin from; the test writes and closes the other end.
class InputPipe {
 public:
  InputPipe() { EXPECT_EQ(::pipe2(fds_.data(), O_CLOEXEC), 0); }
  ~InputPipe() {
    for (const int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  InputPipe(const InputPipe&) = delete;
  InputPipe& operator=(const InputPipe&) = delete;
  int readFd() const { return fds_[0]; }
  void write(std::string_view data) const {
    EXPECT_EQ(::write(fds_[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  void close() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  std::array<int, 2> fds_ = {-1, -1};
};

// A pseudo-terminal standing in for the terminal srun runs in (--pty reads its size there).
class LocalTerminal {
 public:
  LocalTerminal(unsigned short rows, unsigned short columns) {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(master_, 0);
    EXPECT_EQ(::grantpt(master_), 0);
    EXPECT_EQ(::unlockpt(master_), 0);
    std::array<char, 64> name{};
    EXPECT_EQ(::ptsname_r(master_, name.data(), name.size()), 0);
    slave_ = ::open(name.data(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(slave_, 0);
    resize(rows, columns);
  }
  ~LocalTerminal() {
    ::close(slave_);
    ::close(master_);
  }
  LocalTerminal(const LocalTerminal&) = delete;
  LocalTerminal& operator=(const LocalTerminal&) = delete;
  int fd() const { return slave_; }
  void resize(unsigned short rows, unsigned short columns) const {
    winsize size{};
    size.ws_row = rows;
    size.ws_col = columns;
    EXPECT_EQ(::ioctl(master_, TIOCSWINSZ, &size), 0);
  }

 private:
  int master_ = -1;
  int slave_ = -1;
};

TEST_F(StepRuntimeTest, EveryRankRunsItsTaskWithLabelsAndStepVariables) {
  const auto result = srun({"-l", "sh", "-c",
                            "echo proc=$SLURM_PROCID step=$SLURM_STEP_ID node=$SLURM_NODEID "
                            "pid_ok=$([ \"$SLURM_TASK_PID\" = \"$$\" ] && echo yes) "
                            "label=$SLURM_LABELIO umask=$SLURM_UMASK; pwd"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(
      sortedLines(result.out),
      (std::vector<std::string>{
          "0: " + scratch_.string(), "0: proc=0 step=0 node=0 pid_ok=yes label=1 umask=0022",
          "1: " + scratch_.string(), "1: proc=1 step=0 node=1 pid_ok=yes label=1 umask=0022"}));
  EXPECT_EQ(result.err, "");
}

// srun --export (launch_slurm.c _build_user_env, 22.05), seen by a real task through the agents.
TEST_F(StepRuntimeTest, ExportDecidesWhatTheTasksInherit) {
  auto env = jobEnvironment();
  env["EDITOR"] = "vi";
  env["SECRET"] = "s";
  auto lines = [&](const std::string& exportOption) {
    std::vector<std::string> args;
    if (!exportOption.empty()) args.push_back(exportOption);
    for (const char* arg : {"-N1", "-n1", "/usr/bin/env"}) args.emplace_back(arg);
    const auto result = srun(args, env);
    EXPECT_EQ(result.code, 0) << result.err;
    std::set<std::string> set;
    std::istringstream in(result.out);
    for (std::string line; std::getline(in, line);) set.insert(line);
    return set;
  };
  // NONE: srun's SLURM* variables only; no PATH (Slurm: "use absolute path to the binary").
  auto none = lines("--export=NONE");
  EXPECT_TRUE(none.contains("SLURM_JOB_ID=7"));
  EXPECT_TRUE(none.contains("SLURM_STEP_ID=0"));
  EXPECT_FALSE(none.contains("EDITOR=vi"));
  EXPECT_TRUE(std::none_of(none.begin(), none.end(),
                           [](const std::string& l) { return l.starts_with("PATH="); }));
  // Names copy srun's values, NAME=VALUE sets one; the rest of srun's environment stays out.
  auto listed = lines("--export=EDITOR,FOO=bar");
  EXPECT_TRUE(listed.contains("EDITOR=vi"));
  EXPECT_TRUE(listed.contains("FOO=bar"));
  EXPECT_FALSE(listed.contains("SECRET=s"));
  EXPECT_TRUE(listed.contains("SLURM_NNODES=1"));
  // ALL: everything, and srun's own value wins over a listed one (env_array_merge overwrites).
  auto all = lines("--export=ALL,EDITOR=emacs,FOO=bar");
  EXPECT_TRUE(all.contains("EDITOR=vi"));
  EXPECT_TRUE(all.contains("FOO=bar"));
  EXPECT_TRUE(all.contains("SECRET=s"));
  EXPECT_TRUE(lines("").contains("SECRET=s"));
}

// Every step srun ran is reported to rank 0's agent, for sacct (step/step_records.h).
TEST_F(StepRuntimeTest, RankZerosAgentKeepsTheStepsRecords) {
  EXPECT_EQ(srun({"-J", "first", "true"}).code, 0);
  EXPECT_EQ(srun({"-N1", "-n1", "sh", "-c", "exit 4"}).code, 4);
  EXPECT_EQ(srun({"sh", "-c", "kill -9 $$"}).code, 137);
  const auto steps = agents_[0]->steps();
  ASSERT_EQ(steps.size(), 3U);
  EXPECT_EQ(steps[0].stepId, 0U);
  EXPECT_EQ(steps[0].name, "first");
  EXPECT_EQ(steps[0].nodelist, "train-[0-1]");
  EXPECT_EQ(steps[0].nnodes, 2U);
  EXPECT_EQ(steps[0].ntasks, 2U);
  EXPECT_EQ(steps[0].cpus, 8U);  // SLURM_CPUS_ON_NODE=4 on each of the 2 nodes
  EXPECT_EQ(steps[0].state, "COMPLETED");
  EXPECT_LE(steps[0].startTime, steps[0].endTime);
  EXPECT_EQ(steps[1].name, "sh");
  EXPECT_EQ(steps[1].nodelist, "train-0");
  EXPECT_EQ(steps[1].exitCode, 4);
  EXPECT_EQ(steps[1].state, "FAILED");
  EXPECT_EQ(steps[2].exitCode, 0);
  EXPECT_EQ(steps[2].signal, 9);
  EXPECT_EQ(steps[2].state, "FAILED");
  EXPECT_TRUE(agents_[1]->steps().empty());
}

TEST_F(StepRuntimeTest, StepIdsCountUpWithinTheJob) {
  EXPECT_EQ(srun({"-N1", "-n1", "sh", "-c", "echo $SLURM_STEP_ID"}).out, "0\n");
  EXPECT_EQ(srun({"-N1", "-n1", "sh", "-c", "echo $SLURM_STEP_ID"}).out, "1\n");
}

TEST_F(StepRuntimeTest, LabelledPartialLinesEndWithANewlineAndStderrIsKeptApart) {
  const auto result =
      srun({"-l", "-N", "1", "-n", "1", "sh", "-c", "printf 'a\\nb'; printf oops >&2"});
  EXPECT_EQ(result.code, 0);
  EXPECT_EQ(result.out, "0: a\n0: b\n");
  EXPECT_EQ(result.err, "0: oops\n");
}

TEST_F(StepRuntimeTest, ExitStatusIsTheHighestTaskCodeAndEachFailureIsReported) {
  const auto result = srun({"sh", "-c", "exit $((SLURM_PROCID + 3))"});
  EXPECT_EQ(result.code, 4);
  EXPECT_EQ(sortedLines(result.err),
            (std::vector<std::string>{"srun: error: train-0: task 0: Exited with exit code 3",
                                      "srun: error: train-1: task 1: Exited with exit code 4"}));
}

TEST_F(StepRuntimeTest, ASignalledTaskBeatsAnyExitCode) {
  const auto result =
      srun({"sh", "-c", "if [ $SLURM_PROCID = 1 ]; then kill -9 $$; else exit 100; fi"});
  EXPECT_EQ(result.code, 128 + SIGKILL);
  EXPECT_NE(result.err.find("srun: error: train-1: task 1: Killed"), std::string::npos)
      << result.err;
}

TEST_F(StepRuntimeTest, ACommandThatCannotRunFailsAsSlurmstepdReportsIt) {
  const auto result = srun({"-N", "1", "-n", "1", "no-such-command-kubeslurm"});
  EXPECT_EQ(result.code, 2);  // ENOENT
  EXPECT_EQ(result.err,
            "slurmstepd: error: execve(): no-such-command-kubeslurm: No such file or directory\n"
            "srun: error: train-0: task 0: Exited with exit code 2\n");
}

TEST_F(StepRuntimeTest, AWrongTokenIsRefused) {
  const auto result = srun({"true"}, jobEnvironment("not-the-token"));
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.err,
            "srun: error: Unable to create step for job 7: the step token is not "
            "this job's\n");
}

TEST_F(StepRuntimeTest, SigtermToSrunKillsTheStepOnEveryRank) {
  std::ostringstream out;
  std::ostringstream err;
  Srun command(jobEnvironment(),
               SrunSettings{.connectTimeout = std::chrono::seconds(5),
                            .workingDirectory = scratch_.string(),
                            .umask = "0022"},
               out, err);
  const auto marker = scratch_ / "started";
  auto running = std::async(std::launch::async, [&] {
    return command.run({"sh", "-c", "touch " + marker.string() + ".$SLURM_PROCID; sleep 60"});
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(std::filesystem::exists(marker.string() + ".0") &&
           std::filesystem::exists(marker.string() + ".1")) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  command.onSignal(SIGTERM);
  ASSERT_EQ(running.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(running.get(), 128 + SIGKILL);
  EXPECT_EQ(err.str(), "srun: forcing job termination\n");
}

TEST_F(StepRuntimeTest, AStepDoesNotOutliveItsSrun) {
  namespace v1 = kubeslurm::step::v1;
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(agents_[0]->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::StepAgent::NewStub(channel);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + std::string(kToken));
  v1::LaunchRequest request;
  const auto pidFile = scratch_ / "pid";
  request.add_argv("sh");
  request.add_argv("-c");
  request.add_argv("echo $$ > " + pidFile.string() + "; echo up; exec sleep 60");
  (*request.mutable_environment())["PATH"] = "/usr/bin:/bin";
  request.add_tasks()->set_task_id(0);
  auto reader = stub->Launch(&context);
  ASSERT_TRUE(reader->Write(request));
  ASSERT_TRUE(reader->WritesDone());
  v1::TaskEvent event;
  ASSERT_TRUE(reader->Read(&event));  // the agent's "started"
  ASSERT_TRUE(event.has_attached());
  ASSERT_TRUE(reader->Read(&event));  // "up": the task runs
  ASSERT_EQ(event.stdout(), "up\n");
  std::ifstream in(pidFile);
  pid_t pid = 0;
  in >> pid;
  ASSERT_GT(pid, 0);
  context.TryCancel();  // srun killed, its connection gone
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(::kill(pid, 0), 0) << "the task outlived its srun";
}

TEST_F(StepRuntimeTest, CallsWithoutTheTokenAreUnauthenticated) {
  namespace v1 = kubeslurm::step::v1;
  auto stub = v1::StepAgent::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(agents_[0]->port()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::NextStepIdReply reply;
  const auto status = stub->NextStepId(&context, v1::NextStepIdRequest{}, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// srun's stdin (srun(1) "IO Redirection"; src/srun/libsrun/fname.c fname_create,
// src/srun/libsrun/launch.c _init_stdio): broadcast to every task by default.
TEST_F(StepRuntimeTest, StdinGoesToEveryTaskByDefault) {
  InputPipe input;
  input.write("hello\n");
  input.close();
  const auto result = srunWithInput({"-l", "cat"}, input.readFd());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(sortedLines(result.out), (std::vector<std::string>{"0: hello", "1: hello"}));
}

TEST_F(StepRuntimeTest, InputOfOneTaskIdGoesToThatTaskOnly) {
  InputPipe input;
  input.write("only one\n");
  input.close();
  const auto result =
      srunWithInput({"-l", "--input=1", "sh", "-c", "cat; echo done"}, input.readFd());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(sortedLines(result.out),
            (std::vector<std::string>{"0: done", "1: done", "1: only one"}));
}

// "none": no task reads srun's stdin, so none waits for it even while it stays open.
TEST_F(StepRuntimeTest, InputNoneClosesEveryTasksStdin) {
  const InputPipe input;
  const auto result = srunWithInput({"-i", "none", "sh", "-c", "cat; echo eof"}, input.readFd());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "eof\neof\n");
}

// A task id not below the task count is a file name (fname_create), read on srun's host.
TEST_F(StepRuntimeTest, InputFromAFileIsBroadcastAndAMissingOneIsAnError) {
  const auto file = scratch_ / "input";
  std::ofstream(file) << "from a file\n";
  auto result = srunWithInput({"-l", "--input=" + file.string(), "cat"}, -1);
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(sortedLines(result.out),
            (std::vector<std::string>{"0: from a file", "1: from a file"}));
  result = srunWithInput({"--input=5", "cat"}, -1);
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.err, "srun: error: Could not open stdin file: No such file or directory\n");
}

// A terminal srun's user never types into must not keep a finished step open.
TEST_F(StepRuntimeTest, AnOpenStdinDoesNotHoldAFinishedStep) {
  const InputPipe input;
  const auto started = std::chrono::steady_clock::now();
  const auto result = srunWithInput({"sh", "-c", "exit 0"}, input.readFd());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(3));
}

// --pty: task 0 alone runs on a terminal of srun's size; the other tasks' output goes nowhere.
TEST_F(StepRuntimeTest, PtyGivesTaskZeroATerminalOfSrunsSize) {
  const InputPipe input;
  const LocalTerminal terminal(33, 101);
  const auto result =
      srunWithInput({"--pty", "sh", "-c", "tty; stty size; echo task=$SLURM_PROCID"},
                    input.readFd(), terminal.fd());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("/dev/pts/"), std::string::npos) << result.out;
  // The task's terminal turns its newlines into CR LF, as any terminal does.
  EXPECT_NE(result.out.find("33 101\r\ntask=0\r\n"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("task=1"), std::string::npos) << result.out;
  EXPECT_EQ(result.err, "");
}

TEST_F(StepRuntimeTest, PtyWithoutATerminalIsDisregarded) {
  const auto result = srunWithInput({"--pty", "-N1", "-n1", "sh", "-c", "tty || true"}, -1, -1);
  EXPECT_EQ(result.code, 0);
  EXPECT_EQ(result.out, "not a tty\n");
  EXPECT_EQ(result.err,
            "srun: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device\n"
            "srun: error: Not using a pseudo-terminal, disregarding --pty option\n");
}

// Keystrokes are the task's terminal's: a typed command runs, Ctrl-C (a byte, the local terminal
// being raw) becomes SIGINT there, and srun exits with the task's code.
TEST_F(StepRuntimeTest, PtyKeystrokesReachTheTasksTerminal) {
  InputPipe input;
  const LocalTerminal terminal(24, 80);
  const auto ready = scratch_ / "ready";
  const auto result = srunWithInput(
      {"--pty", "-N1", "-n1", "sh", "-c",
       "read line; echo \"read: $line\"; trap 'echo interrupted; exit 7' INT; touch " +
           ready.string() + "; while :; do sleep 0.05; done"},
      input.readFd(), terminal.fd(), [&](Srun&) {
        input.write("typed\n");
        ASSERT_TRUE(waitFor(ready));
        input.write("\x03");
      });
  EXPECT_EQ(result.code, 7) << result.err;
  EXPECT_NE(result.out.find("read: typed\r\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("interrupted"), std::string::npos) << result.out;
}

// SIGWINCH at srun sends the new size; the task's terminal signals its foreground job.
TEST_F(StepRuntimeTest, PtyWindowSizeFollowsSrunsTerminal) {
  const InputPipe input;
  const LocalTerminal terminal(24, 80);
  const auto ready = scratch_ / "ready";
  const auto result = srunWithInput({"--pty", "-N1", "-n1", "sh", "-c",
                                     "trap 'stty size; exit 0' WINCH; touch " + ready.string() +
                                         "; while :; do sleep 0.05; done"},
                                    input.readFd(), terminal.fd(), [&](Srun& srun) {
                                      ASSERT_TRUE(waitFor(ready));
                                      terminal.resize(40, 120);
                                      srun.onSignal(SIGWINCH);
                                    });
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("40 120"), std::string::npos) << result.out;
}

// sattach's view: a running step's output from the moment of attaching, which of its tasks run on
// the rank, their ends; an unknown step is NOT_FOUND; an attacher that reads nothing loses output
// (told how much) and never holds the step back.
class StepAttachTest : public StepRuntimeTest {
 protected:
  // An Attach to step 0 on one agent, its first event read. One that does not write input
  // half-closes at once, as a one-message call does.
  struct Attachment {
    std::unique_ptr<kubeslurm::step::v1::StepAgent::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<kubeslurm::step::v1::AttachRequest,
                                             kubeslurm::step::v1::TaskEvent>>
        reader;
    kubeslurm::step::v1::TaskEvent first;
    bool answered = false;
  };
  std::unique_ptr<Attachment> attach(std::size_t agent, bool writesInput = false,
                                     std::optional<std::uint32_t> inputTask = {}) const {
    auto a = std::make_unique<Attachment>();
    a->stub = kubeslurm::step::v1::StepAgent::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(agents_[agent]->port()), grpc::InsecureChannelCredentials()));
    a->context.AddMetadata("authorization", "Bearer " + std::string(kToken));
    kubeslurm::step::v1::AttachRequest request;
    request.set_step_id(0);
    request.set_writes_input(writesInput);
    if (inputTask) request.set_input_task(*inputTask);
    a->reader = a->stub->Attach(&a->context);
    a->reader->Write(request);
    if (!writesInput) a->reader->WritesDone();
    a->answered = a->reader->Read(&a->first);
    return a;
  }
};

TEST_F(StepAttachTest, AnAttacherSeesTheStepsOutputAndEndsWithIt) {
  namespace v1 = kubeslurm::step::v1;
  const auto go = scratch_ / "go";
  const auto ready = scratch_ / "ready";
  auto running = std::async(std::launch::async, [&] {
    return srun({"sh", "-c",
                 "echo before; : > " + ready.string() + ".$SLURM_PROCID; while [ ! -e " +
                     go.string() + " ]; do sleep 0.02; done; echo after $SLURM_PROCID; exit 5"});
  });
  ASSERT_TRUE(waitFor(ready.string() + ".0") && waitFor(ready.string() + ".1"));
  const auto attached = attach(1);
  ASSERT_TRUE(attached->answered && attached->first.has_attached());
  EXPECT_EQ(attached->first.attached().step_tasks(), 2U);
  EXPECT_EQ(std::vector<std::uint32_t>(attached->first.attached().task_ids().begin(),
                                       attached->first.attached().task_ids().end()),
            std::vector<std::uint32_t>{1});
  std::ofstream(go.string()) << "";
  std::string out;
  int exitCode = -1;
  v1::TaskEvent event;
  while (attached->reader->Read(&event)) {
    if (event.event_case() == v1::TaskEvent::kStdout) out += event.stdout();
    if (event.has_exit()) exitCode = event.exit().exit_code();
  }
  EXPECT_TRUE(attached->reader->Finish().ok());
  EXPECT_EQ(out, "after 1\n");  // from the moment it attached: not "before"
  EXPECT_EQ(exitCode, 5);
  EXPECT_EQ(running.get().code, 5);

  const auto gone = attach(1);
  EXPECT_FALSE(gone->answered);
  EXPECT_EQ(gone->reader->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(StepAttachTest, AnAttacherThatDoesNotReadLosesOutputNotTheStep) {
  namespace v1 = kubeslurm::step::v1;
  const auto go = scratch_ / "go";
  const auto ready = scratch_ / "ready";
  auto running = std::async(std::launch::async, [&] {
    return srun({"-N1", "-n1", "sh", "-c",
                 ": > " + ready.string() + "; while [ ! -e " + go.string() +
                     " ]; do sleep 0.02; done; head -c 64000000 /dev/zero"});
  });
  ASSERT_TRUE(waitFor(ready));
  const auto attached = attach(0);
  ASSERT_TRUE(attached->answered && attached->first.has_attached());
  std::ofstream(go.string()) << "";
  // The step ends while nobody reads the attachment: srun got every byte. (More than the
  // attacher's queue and the stream's flow-control windows, which gRPC grows to a few MiB, hold.)
  const auto result = running.get();
  EXPECT_EQ(result.code, 0);
  EXPECT_EQ(result.out.size(), 64000000U);
  std::uint64_t received = 0;
  std::uint64_t dropped = 0;
  v1::TaskEvent event;
  while (attached->reader->Read(&event)) {
    received += event.stdout().size();
    dropped += event.dropped();
  }
  EXPECT_TRUE(attached->reader->Finish().ok());
  EXPECT_GT(dropped, 0U);
  EXPECT_EQ(received + dropped, 64000000U);
}

// sattach's stdin (sattach.c: the same client_io as srun's; slurmstepd io.c): to the tasks that
// read stdin, or --input-filter's task only; its end (input_ended) closes their stdin as srun's
// would, and an attacher that leaves without it closes nothing. srun's own stdin, still open,
// is not needed for either.
TEST_F(StepAttachTest, AnAttachersStdinReachesTheTasksAndItsEndClosesTheirs) {
  namespace v1 = kubeslurm::step::v1;
  const InputPipe input;
  const auto ready = scratch_ / "ready";
  auto running = std::async(std::launch::async, [&] {
    return srunWithInput(
        {"-l", "sh", "-c", ": > " + ready.string() + ".$SLURM_PROCID; cat; echo eof"},
        input.readFd());
  });
  ASSERT_TRUE(waitFor(ready.string() + ".0") && waitFor(ready.string() + ".1"));
  v1::AttachRequest typed;
  // Task 1 only, from an attacher on its rank.
  const auto one = attach(1, true, 1);
  ASSERT_TRUE(one->answered && one->first.has_attached());
  typed.set_input("to one\n");
  ASSERT_TRUE(one->reader->Write(typed));
  v1::AttachRequest ended;
  ended.set_input_ended(true);
  ASSERT_TRUE(one->reader->Write(ended));
  one->reader->WritesDone();
  // Every task that reads stdin on rank 0 (task 0 alone there).
  const auto every = attach(0, true);
  ASSERT_TRUE(every->answered && every->first.has_attached());
  // One that detaches without ending its input (its stream's end alone) closes nothing.
  {
    const auto detached = attach(0, true);
    ASSERT_TRUE(detached->answered && detached->first.has_attached());
    detached->reader->WritesDone();
    v1::TaskEvent event;
    detached->context.TryCancel();
    while (detached->reader->Read(&event)) {
    }
  }
  typed.set_input("to zero\n");
  ASSERT_TRUE(every->reader->Write(typed));
  ASSERT_TRUE(every->reader->Write(ended));
  every->reader->WritesDone();
  for (const auto* a : {one.get(), every.get()}) {
    v1::TaskEvent event;
    while (a->reader->Read(&event)) {
    }
  }
  EXPECT_TRUE(one->reader->Finish().ok());
  EXPECT_TRUE(every->reader->Finish().ok());
  const auto result = running.get();
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(sortedLines(result.out),
            (std::vector<std::string>{"0: eof", "0: to zero", "1: eof", "1: to one"}));
}

// An agent is the job's own process and may say anything: one that ends a task twice is heard
// once (one message, one exit code), and srun does not take the second end for a lost step.
class TwiceEndingAgent final : public kubeslurm::step::v1::StepAgent::Service {
 public:
  grpc::Status NextStepId(grpc::ServerContext* /*context*/,
                          const kubeslurm::step::v1::NextStepIdRequest* /*request*/,
                          kubeslurm::step::v1::NextStepIdReply* reply) override {
    reply->set_step_id(0);
    return grpc::Status::OK;
  }
  grpc::Status Launch(
      grpc::ServerContext* /*context*/,
      grpc::ServerReaderWriter<kubeslurm::step::v1::TaskEvent, kubeslurm::step::v1::LaunchRequest>*
          stream) override {
    kubeslurm::step::v1::LaunchRequest request;
    while (stream->Read(&request)) {
      if (!request.argv().empty()) break;
    }
    kubeslurm::step::v1::TaskEvent event;
    event.mutable_attached()->add_task_ids(0);
    stream->Write(event);
    event.Clear();
    event.mutable_exit()->set_exit_code(3);
    stream->Write(event);
    stream->Write(event);
    return {grpc::StatusCode::UNAVAILABLE, "gone after the end"};
  }
};

TEST(StepRuntimeAgainstAnAgent, ATaskEndedTwiceIsHeardOnce) {
  TwiceEndingAgent service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  const auto server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  std::ostringstream out;
  std::ostringstream err;
  Srun command({{"PATH", "/usr/bin:/bin"},
                {"SLURM_JOB_ID", "7"},
                {"SLURM_JOB_NODELIST", "train-0"},
                {"SLURM_JOB_NUM_NODES", "1"},
                {"SLURM_NTASKS", "1"},
                {std::string(kTokenVariable), std::string(kToken)},
                {std::string(kAgentsVariable), "127.0.0.1:" + std::to_string(port)}},
               SrunSettings{.connectTimeout = std::chrono::seconds(5),
                            .workingDirectory = "/",
                            .umask = "",
                            .inputFd = -1,
                            .terminalFd = -1},
               out, err);
  EXPECT_EQ(command.run({"true"}), 3);
  EXPECT_EQ(err.str(), "srun: error: train-0: task 0: Exited with exit code 3\n");
  server->Shutdown();
}

TEST(StepAgentTest, RefusesToStartWithoutAToken) {
  auto agent = startAgent(AgentOptions{.listenAddress = "127.0.0.1:0", .token = ""});
  EXPECT_FALSE(agent.isOk());
}

}  // namespace
}  // namespace kubeslurm::inpod
