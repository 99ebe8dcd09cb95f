// salloc's watch over its command after the grant (src/salloc/salloc.c, 22.05): SIGHUP goes on to
// the command's process group and ends the wait; SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2
// revoke the allocation once and the wait goes on; salloc's exit status is the command's exit
// code, 0 for a command SIGHUP, SIGINT, SIGQUIT or SIGKILL ended, 1 otherwise. Real child
// processes; the signals come to this thread, as they would to salloc's.
#include <csignal>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/cli/login_steps.h"

namespace kubeslurm::cli {
namespace {

class SupervisedCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    sigset_t block;
    sigemptyset(&block);
    for (const int sig : {SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2}) {
      sigaddset(&block, sig);
    }
    pthread_sigmask(SIG_BLOCK, &block, &saved_);
  }
  void TearDown() override {
    // Nothing of the test's may still be pending when the mask goes back.
    sigset_t all;
    sigfillset(&all);
    const timespec now{};
    while (sigtimedwait(&all, nullptr, &now) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }

  // `sh -c script` in a process group of its own, as salloc starts its command.
  static pid_t start(const std::string& script) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::setpgid(0, 0);
      sigset_t all;
      sigfillset(&all);
      pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
      ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::setpgid(child, child);
    return child;
  }

  sigset_t saved_{};
};

TEST_F(SupervisedCommand, TheCommandsExitCodeIsSallocs) {
  int revoked = 0;
  const CommandEnd end = superviseCommand(start("exit 4"), [&] { ++revoked; });
  ASSERT_TRUE(end.exited);
  EXPECT_EQ(sallocExitStatus(end), 4);
  EXPECT_EQ(revoked, 0);
}

TEST_F(SupervisedCommand, ACommandEndedBySignalExitsZeroForTheUsersOnesAndOneOtherwise) {
  EXPECT_EQ(sallocExitStatus(superviseCommand(start("kill -INT $$; sleep 5"), [] {})), 0);
  EXPECT_EQ(sallocExitStatus(superviseCommand(start("kill -KILL $$"), [] {})), 0);
  EXPECT_EQ(sallocExitStatus(superviseCommand(start("kill -TERM $$; sleep 5"), [] {})), 1);
  EXPECT_EQ(sallocExitStatus(CommandEnd{.hungUp = true}), 1);
}

TEST_F(SupervisedCommand, SigtermRevokesTheAllocationOnceAndTheCommandRunsOn) {
  int revoked = 0;
  const pid_t command = start("sleep 0.5; exit 2");
  ::pthread_kill(::pthread_self(), SIGTERM);
  ::pthread_kill(::pthread_self(), SIGUSR1);
  const CommandEnd end = superviseCommand(command, [&] { ++revoked; });
  EXPECT_EQ(revoked, 1);
  EXPECT_TRUE(end.revoked);
  ASSERT_TRUE(end.exited);
  EXPECT_EQ(sallocExitStatus(end), 2);
}

TEST_F(SupervisedCommand, SighupGoesToTheCommandAndEndsTheWait) {
  const std::string ready = ::testing::TempDir() + "salloc-trap-" + std::to_string(::getpid());
  ::unlink(ready.c_str());
  const pid_t command = start("trap 'exit 9' HUP; : > " + ready + "; while :; do sleep 0.05; done");
  for (int i = 0; i < 500 && ::access(ready.c_str(), F_OK) != 0; ++i) ::usleep(10'000);
  ASSERT_EQ(::access(ready.c_str(), F_OK), 0) << "the command never set its trap";
  ::unlink(ready.c_str());
  ::pthread_kill(::pthread_self(), SIGHUP);
  int revoked = 0;
  const CommandEnd end = superviseCommand(command, [&] { ++revoked; });
  EXPECT_TRUE(end.hungUp);
  EXPECT_FALSE(end.exited);
  EXPECT_EQ(revoked, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(command, &status, 0), command);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 9);  // its trap ran: the SIGHUP reached it
}

// An allocation ended under the command (scancel, its time limit; salloc.c _job_complete_handler):
// said once, -K's signal to the command, which salloc still waits for; its code is salloc's.
TEST_F(SupervisedCommand, AnAllocationEndedElsewhereIsSaidAndKillCommandSignalsTheCommand) {
  const std::string ready = ::testing::TempDir() + "salloc-end-" + std::to_string(::getpid());
  ::unlink(ready.c_str());
  const pid_t command =
      start("trap 'exit 6' TERM; : > " + ready + "; while :; do sleep 0.05; done");
  int said = 0;
  AllocationEnd allocationEnd;
  allocationEnd.ended = [&] { return ::access(ready.c_str(), F_OK) == 0; };
  allocationEnd.said = [&] { ++said; };
  allocationEnd.killCommandSignal = SIGTERM;
  int revoked = 0;
  const CommandEnd end = superviseCommand(
      command, [&] { ++revoked; }, allocationEnd);
  ::unlink(ready.c_str());
  EXPECT_TRUE(end.allocationEnded);
  EXPECT_EQ(said, 1);
  EXPECT_EQ(revoked, 0);
  ASSERT_TRUE(end.exited);
  EXPECT_EQ(sallocExitStatus(end), 6);
}

// Without -K the command runs on to its own end.
TEST_F(SupervisedCommand, WithoutKillCommandTheCommandRunsOn) {
  AllocationEnd allocationEnd;
  allocationEnd.ended = [] { return true; };
  int said = 0;
  allocationEnd.said = [&] { ++said; };
  const CommandEnd end = superviseCommand(
      start("sleep 0.4; exit 3"), [] {}, allocationEnd);
  EXPECT_EQ(said, 1);
  ASSERT_TRUE(end.exited);
  EXPECT_EQ(sallocExitStatus(end), 3);
}

}  // namespace
}  // namespace kubeslurm::cli
