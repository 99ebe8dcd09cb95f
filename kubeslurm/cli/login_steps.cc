#include "kubeslurm/cli/login_steps.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/allocation.h"
#include "kubeslurm/cli/sattach_options.h"
#include "kubeslurm/cli/scheduler_access.h"
#include "kubeslurm/inpod/entry.h"
#include "kubeslurm/inpod/local_input.h"
#include "kubeslurm/inpod/srun_options.h"
#include "kubeslurm/inpod/task_output.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/rpc/step_proxy.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/step/step.grpc.pb.h"

namespace kubeslurm::cli {

namespace {

namespace v1 = kubeslurm::step::v1;

// Every call to the job's ranks goes to the operator's step proxy on one TLS channel, with the
// caller's token and the job and rank it is for.
inpod::StepTransport proxyTransport(const LoginAllocation& allocation) {
  // A connection per rank: a step's output streams last as long as it runs, and the operator
  // serves at most 16 streams on one connection (a 17th rank would wait for the first to end).
  struct Channels {
    std::mutex mutex;
    std::map<std::uint32_t, std::shared_ptr<grpc::Channel>> byRank;
  };
  auto channels = std::make_shared<Channels>();
  const std::string job = allocation.namespaceName + "/" + allocation.jobName;
  const std::string token = allocation.endpoint.bearerToken;
  inpod::StepTransport transport;
  transport.connect = [channels, endpoint = allocation.endpoint](std::uint32_t rank) {
    const std::lock_guard lock(channels->mutex);
    std::shared_ptr<grpc::Channel>& channel = channels->byRank[rank];
    if (!channel) channel = rpc::openOperatorChannel(endpoint, /*ownConnection=*/true);
    return channel;
  };
  transport.authorize = [job, token](grpc::ClientContext& context, std::uint32_t rank) {
    context.AddMetadata("authorization", "Bearer " + token);
    context.AddMetadata(std::string(rpc::kStepJobMetadata), job);
    context.AddMetadata(std::string(rpc::kStepRankMetadata), std::to_string(rank));
  };
  return transport;
}

// Ends the allocation with `exitCode`: rank 0's holder exits with it, and the job with that.
// An operator that does not answer yet (a failover: another replica, or the one restarting) is
// waited for a while, so that the job ends with srun's code; when rank 0 cannot be told within
// it, the job is cancelled instead, so that no allocation outlives its srun.
void release(const LoginAllocation& allocation, int exitCode, std::string_view program) {
  const inpod::StepTransport transport = proxyTransport(allocation);
  grpc::ClientContext context;
  transport.authorize(context, 0);
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
  v1::ReleaseRequest request;
  request.set_exit_code(exitCode);
  v1::ReleaseReply reply;
  const grpc::Status released =
      v1::StepAgent::NewStub(transport.connect(0))->Release(&context, request, &reply);
  if (released.ok()) return;
  std::cerr << program << ": error: Unable to release job allocation " << allocation.jobId << ": "
            << released.error_message() << "; cancelling it\n";
  if (Status revoked = revokeAllocation(allocation); !revoked.isOk()) {
    std::cerr << program << ": error: Unable to clean up job allocation " << allocation.jobId
              << ": " << revoked.message() << "\n";
  }
}

// The user's login shell, as salloc runs it without a command (opt.c _get_shell).
std::string userShell(const std::map<std::string, std::string>& environment) {
  std::string shell;
  passwd entry{};
  passwd* user = nullptr;
  std::array<char, 4096> buffer{};
  if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &user) == 0 &&
      user != nullptr && user->pw_shell != nullptr) {
    shell = user->pw_shell;
  }
  if (shell.empty()) {
    const auto found = environment.find("SHELL");
    shell = found != environment.end() && !found->second.empty() ? found->second : "/bin/sh";
  }
  return shell;
}

// The signals superviseCommand takes, blocked in every thread of salloc.
sigset_t commandSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : {SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2}) {
    sigaddset(&set, sig);
  }
  return set;
}

// Starts `command` on this host with `environment`, in a process group of its own that takes the
// terminal's foreground when salloc has one (salloc.c _fork_command and its tcsetpgrp: a Ctrl-C
// typed then is the command's), with the signals salloc blocked unblocked; -1 when the fork
// fails.
pid_t startCommand(const std::vector<std::string>& command,
                   const std::map<std::string, std::string>& environment) {
  std::vector<std::string> entries;
  entries.reserve(environment.size());
  for (const auto& [name, value] : environment) {
    std::string entry = name;
    entry += '=';
    entry += value;
    entries.push_back(std::move(entry));
  }
  std::vector<char*> envp;
  envp.reserve(entries.size() + 1);
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = command;
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  // Written before the fork: the child of a threaded process may only make async-signal-safe
  // calls until it execs.
  const std::string cannotExec = "salloc: error: Unable to exec command \"" + words[0] + "\": ";
  // Only a salloc in the terminal's foreground hands it over: one run in the background leaves
  // the user's shell where it is.
  const bool interactive = ::isatty(STDIN_FILENO) != 0 && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    // SIGTTOU is still blocked here, so a background salloc may hand the terminal over.
    if (interactive) ::tcsetpgrp(STDIN_FILENO, ::getpid());
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
    ::execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    const char* why = strerrordesc_np(error);
    (void)!::write(STDERR_FILENO, cannotExec.data(), cannotExec.size());
    if (why != nullptr) (void)!::write(STDERR_FILENO, why, std::strlen(why));
    (void)!::write(STDERR_FILENO, "\n", 1);
    ::_exit(error == ENOENT ? 127 : 126);
  }
  if (child > 0) {
    // Both sides: whichever runs first, the group and the foreground are set before the command.
    ::setpgid(child, child);
    if (interactive) ::tcsetpgrp(STDIN_FILENO, child);
  }
  return child;
}

// srun --jobid=N: a step in a running job of the caller's (batch or interactive), through the
// step proxy; the job stays as it is. Steps share the job's resources (--overlap or not: the
// agents keep no count of what steps hold).
int runStepInJob(const std::vector<std::string>& args, std::int64_t jobId,
                 std::map<std::string, std::string> environment, CliIo& io) {
  auto job = runningJob(jobId, io);
  if (!job.isOk()) {
    if (job.status().code() == StatusCode::kNotFound ||
        job.status().code() == StatusCode::kFailedPrecondition) {
      // allocate.c existing_allocation
      io.err << "srun: error: Unable to confirm allocation for job " << jobId << ": "
             << job.status().message() << "\n"
             << "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job " << jobId
             << "\n";
    } else {
      io.err << "srun: error: " << describeQueryFailure(job.status()) << "\n";
    }
    return 1;
  }
  for (const auto& [name, value] : job->environment) environment[name] = value;
  return inpod::srunThrough(args, std::move(environment), proxyTransport(*job));
}

// salloc's view of its allocation while the command runs: slurmctld tells salloc when the job
// completes (_job_complete_handler); here a watch of the SlurmJob does, on a thread of its own,
// costing the API server nothing while the job runs on.
class AllocationWatch {
 public:
  explicit AllocationWatch(const LoginAllocation& allocation)
      : thread_([this, &allocation] { run(allocation); }) {}
  ~AllocationWatch() {
    leaving_ = true;
    stop_.stop();
    thread_.join();
  }
  AllocationWatch(const AllocationWatch&) = delete;
  AllocationWatch& operator=(const AllocationWatch&) = delete;

  bool ended() const { return ended_; }
  bool timedOut() const { return timedOut_; }

 private:
  void run(const LoginAllocation& allocation) {
    kube::Watcher* watcher = allocation.session.watcher;
    if (watcher == nullptr) return;
    kube::WatchOptions options;
    options.fieldSelector = "metadata.name=" + allocation.jobName;
    while (!leaving_ && !ended_) {
      const kube::WatchResult result = watcher->watch(
          kube::resources::slurmJobs(), allocation.namespaceName, options,
          [this](const kube::WatchEvent& event) {
            if (event.type == kube::WatchEventType::kDeleted) {
              ended_ = true;
              return false;
            }
            if (event.type == kube::WatchEventType::kError) return false;
            const auto job = api::decodeSlurmJob(event.object);
            if (!job.isOk() || !job->status) return true;
            const std::string& state = job->status->state;
            if (state.empty() || state == "PENDING" || state == "RUNNING") return true;
            timedOut_ = state == "TIMEOUT";
            ended_ = true;
            return false;
          },
          &stop_);
      if (ended_ || result.status.code() == StatusCode::kCancelled) return;
      // A watch the server ended resumes where it was; one too old for it starts over, with
      // the job as it is now; a failure is tried again a second later.
      options.resourceVersion =
          result.status.code() == StatusCode::kOutOfRange ? "" : result.resourceVersion;
      if (!result.status.isOk()) {
        for (int i = 0; i < 10 && !leaving_; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
    }
  }

  std::atomic<bool> ended_{false};
  std::atomic<bool> timedOut_{false};
  std::atomic<bool> leaving_{false};
  kube::WatchStop stop_;
  std::thread thread_;
};

// salloc.c _ring_terminal_bell.
void ringTerminalBell(CliIo& io) {
  if (::isatty(STDOUT_FILENO) != 0) io.out << '\a' << std::flush;
}

}  // namespace

int runSalloc(const std::vector<std::string>& args, CliIo& io) {
  // Before any thread: a Ctrl-C while the job waits revokes it; later ones are the command's.
  inpod::blockSrunSignals();
  // Taken by superviseCommand; SIGTTOU and SIGTTIN blocked as salloc.c blocks them, so that
  // salloc may hand the terminal to its command and take it back from the background.
  sigset_t more = commandSignals();
  sigaddset(&more, SIGTTOU);
  sigaddset(&more, SIGTTIN);
  pthread_sigmask(SIG_BLOCK, &more, nullptr);
  std::map<std::string, std::string> environment = inpod::processEnvironment();
  const auto parsed = inpod::parseSallocArguments(args, environment);
  if (!parsed.isOk()) {
    std::string message = parsed.status().message();
    io.err << (message.starts_with("salloc") ? message : "salloc: " + message) << "\n";
    if (inpod::srunPrintsTryHelp(parsed.status())) {
      io.err << "Try \"salloc --help\" for more information\n";
    }
    return inpod::srunExitStatus(parsed.status());
  }
  const inpod::SrunInvocation& invocation = parsed->allocation;
  if (invocation.version) {
    io.out << "slurm 22.05.8\n";
    return 0;
  }
  if (invocation.help || invocation.usage) {
    io.out << "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]\n";
    return 0;
  }
  const auto asked = std::chrono::steady_clock::now();
  AllocationOutcome outcome =
      allocateInteractive("salloc", invocation.options, {}, io, inpod::takePendingInterrupt);
  if (!outcome.allocation) return outcome.exitCode;
  const LoginAllocation& allocation = *outcome.allocation;
  io.err << "salloc: Granted job allocation " << allocation.jobId << "\n" << std::flush;
  // salloc.c: the bell once granted, by default only after a wait of more than
  // DEFAULT_BELL_DELAY (10 s).
  using Bell = inpod::SallocInvocation::Bell;
  if (parsed->bell == Bell::kAlways ||
      (parsed->bell == Bell::kAfterDelay &&
       std::chrono::steady_clock::now() - asked > std::chrono::seconds(10))) {
    ringTerminalBell(io);
  }
  // --no-shell: the allocation stays for `srun --jobid`, sattach, or scancel.
  if (parsed->noShell) return 0;
  for (const auto& [name, value] : allocation.environment) environment[name] = value;
  environment[std::string(kAllocationVariable)] =
      allocation.namespaceName + "/" + allocation.jobName;
  std::vector<std::string> command = invocation.command;
  if (command.empty()) command = {userShell(environment)};
  const pid_t child = startCommand(command, environment);
  if (child < 0) {
    io.err << "salloc: error: _fork_command: fork failed: " << errnoText(errno) << "\n";
    release(allocation, 1, "salloc");
    return 1;
  }
  const bool foreground = ::isatty(STDIN_FILENO) != 0 && ::tcgetpgrp(STDIN_FILENO) == child;
  CommandEnd end;
  {
    const AllocationWatch watch(allocation);
    AllocationEnd allocationEnd;
    allocationEnd.ended = [&watch] { return watch.ended(); };
    allocationEnd.said = [&] {
      if (watch.timedOut()) {
        io.err << "salloc: Job " << allocation.jobId
               << " has exceeded its time limit and its allocation has been revoked.\n";
      } else {
        io.err << "salloc: Job allocation " << allocation.jobId << " has been revoked.\n";
      }
      io.err << std::flush;
    };
    allocationEnd.killCommandSignal = parsed->killCommandSignal;
    end = superviseCommand(
        child,
        [&] {
          (void)revokeAllocation(allocation);
          io.err << "salloc: Job allocation " << allocation.jobId << " has been revoked.\n"
                 << std::flush;
        },
        allocationEnd);
  }
  // The terminal back to salloc's group (SIGTTOU blocked: allowed from the background).
  if (foreground) ::tcsetpgrp(STDIN_FILENO, ::getpgrp());
  const int code = sallocExitStatus(end);
  // An allocation already ended (revoked here or elsewhere) is not relinquished.
  if (!end.revoked && !end.allocationEnded) {
    io.err << "salloc: Relinquishing job allocation " << allocation.jobId << "\n" << std::flush;
    // The job's exit code: the command's, or 128 + the signal that ended it (Slurm records the
    // signal apart, which a released code cannot carry); 0 when salloc stopped waiting, as
    // salloc.c completes the job with the status it has then.
    int released = 0;
    if (end.exited && WIFEXITED(end.waitStatus)) released = WEXITSTATUS(end.waitStatus);
    if (end.exited && WIFSIGNALED(end.waitStatus)) released = 128 + WTERMSIG(end.waitStatus);
    release(allocation, released, "salloc");
  }
  return code;
}

CommandEnd superviseCommand(pid_t command, const std::function<void()>& revoke,
                            const AllocationEnd& allocationEnd) {
  const sigset_t waitFor = commandSignals();
  CommandEnd end;
  while (true) {
    int status = 0;
    const pid_t done = ::waitpid(command, &status, WNOHANG);
    if (done == command || (done < 0 && errno == ECHILD)) {
      end.exited = done == command;
      end.waitStatus = status;
      return end;
    }
    if (!end.allocationEnded && allocationEnd.ended && allocationEnd.ended()) {
      end.allocationEnded = true;
      if (!end.revoked && allocationEnd.said) allocationEnd.said();
      // A job of the command's shell in the terminal's foreground hears of it (salloc.c:
      // SALLOC_KILL_CMD or not).
      if (::isatty(STDIN_FILENO) != 0) {
        const pid_t foreground = ::tcgetpgrp(STDIN_FILENO);
        if (foreground > 0 && foreground != command && foreground != ::getpgrp()) {
          ::killpg(foreground, SIGHUP);
        }
      }
      if (allocationEnd.killCommandSignal != 0) {
        ::killpg(command, allocationEnd.killCommandSignal);
      }
    }
    // SIGCHLD wakes this at once; the timeout covers one taken by another thread.
    const timespec timeout{0, 200'000'000};
    const int sig = ::sigtimedwait(&waitFor, nullptr, &timeout);
    if (sig == SIGHUP) {
      ::killpg(command, SIGHUP);
      end.hungUp = true;
      return end;
    }
    if (sig == SIGINT || sig == SIGQUIT || sig == SIGTERM || sig == SIGUSR1 || sig == SIGUSR2) {
      if (!end.revoked) revoke();
      end.revoked = true;
    }
  }
}

int sallocExitStatus(const CommandEnd& end) {
  if (!end.exited) return 1;
  if (WIFEXITED(end.waitStatus)) return WEXITSTATUS(end.waitStatus);
  if (WIFSIGNALED(end.waitStatus)) {
    switch (WTERMSIG(end.waitStatus)) {
      case SIGHUP:
      case SIGINT:
      case SIGQUIT:
      case SIGKILL:
        return 0;
      default:
        break;
    }
  }
  return 1;
}

int runSrunInAllocation(const std::vector<std::string>& args, CliIo& io) {
  inpod::blockSrunSignals();
  std::map<std::string, std::string> environment = inpod::processEnvironment();
  const std::string job = environment[std::string(kAllocationVariable)];
  const std::int64_t jobId = parseInteger<std::int64_t>(environment["SLURM_JOB_ID"]).value_or(0);
  // srun --jobid of another job, from salloc's shell: that job's, as from any login shell.
  if (const auto parsed = inpod::parseSrunArguments(args, environment);
      parsed.isOk() && parsed->jobId && *parsed->jobId != jobId) {
    return runStepInJob(args, *parsed->jobId, std::move(environment), io);
  }
  auto allocation = joinAllocation(job, jobId, io);
  if (!allocation.isOk()) {
    io.err << "srun: error: " << describeQueryFailure(allocation.status()) << "\n";
    return 1;
  }
  return inpod::srunThrough(args, std::move(environment), proxyTransport(*allocation));
}

int runLoginSrun(const std::vector<std::string>& args, CliIo& io) {
  // Before any thread: a Ctrl-C while the job waits revokes it, one during the step is srun's.
  inpod::blockSrunSignals();
  std::map<std::string, std::string> environment = inpod::processEnvironment();
  const auto parsed = inpod::parseSrunArguments(args, environment);
  // What srun answers without an allocation (errors, --help, --version) it answers as ever.
  if (!parsed.isOk() || parsed->help || parsed->usage || parsed->version) {
    return inpod::srunMain(args);
  }
  if (parsed->jobId) return runStepInJob(args, *parsed->jobId, std::move(environment), io);
  // The option warnings are srun's to print, once, when it parses again for the step.
  AllocationOutcome outcome = allocateInteractive("srun", parsed->options, parsed->command, io,
                                                  inpod::takePendingInterrupt);
  if (!outcome.allocation) return outcome.exitCode;
  const LoginAllocation& allocation = *outcome.allocation;
  for (const auto& [name, value] : allocation.environment) environment[name] = value;
  const int code = inpod::srunThrough(args, std::move(environment), proxyTransport(allocation));
  release(allocation, code, "srun");
  return code;
}

namespace {

// One rank's Attach stream, while sattach reads it and writes its stdin into it.
struct RankAttachment {
  std::uint32_t rank = 0;
  std::string host;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AttachRequest, v1::TaskEvent>> stream;
  std::optional<v1::Attached> attached;  // the step runs here
  grpc::Status refusal;                  // why not, when it does not
  std::mutex inputMutex;
  bool inputOpen = false;  // under inputMutex: sattach's stdin still goes here

  void writeInput(const v1::AttachRequest& message) {
    const std::lock_guard lock(inputMutex);
    if (inputOpen) inputOpen = stream->Write(message);
  }
  // No more input from sattach: `ended` when its stdin ended, which ends the tasks' here too
  // (else the tasks here have ended, or the step is not here).
  void closeInput(bool ended = false) {
    const std::lock_guard lock(inputMutex);
    if (!inputOpen) return;
    if (ended) {
      v1::AttachRequest eof;
      eof.set_input_ended(true);
      (void)stream->Write(eof);
    }
    inputOpen = false;
    (void)stream->WritesDone();
  }
};

}  // namespace

int runSattach(const std::vector<std::string>& args, CliIo& io) {
  const SattachParse parse = parseSattachArguments(args);
  io.out << parse.out << std::flush;
  io.err << parse.err << std::flush;
  if (!parse.options) return parse.exitCode;
  const SattachOptions& options = *parse.options;
  auto job = runningJob(options.jobId, io);
  if (!job.isOk()) {
    io.err << "sattach: error: Could not get job step info: " << job.status().message() << "\n";
    return 1;
  }
  auto hosts = slurm::expandHostlist(job->environment["SLURM_JOB_NODELIST"]);
  if (!hosts.isOk() || hosts->empty()) {
    io.err << "sattach: error: Could not get job step info: the job has no nodes\n";
    return 1;
  }
  const inpod::StepTransport transport = proxyTransport(*job);

  // Every rank at once: each says whether the step runs there, and which of its tasks.
  std::vector<std::unique_ptr<RankAttachment>> ranks;
  for (std::uint32_t rank = 0; rank < hosts->size(); ++rank) {
    auto attachment = std::make_unique<RankAttachment>();
    attachment->rank = rank;
    attachment->host = (*hosts)[rank];
    ranks.push_back(std::move(attachment));
  }
  {
    std::vector<std::thread> opening;
    opening.reserve(ranks.size());
    for (auto& attachment : ranks) {
      opening.emplace_back([&transport, &options, a = attachment.get()] {
        transport.authorize(a->context, a->rank);
        a->stream = v1::StepAgent::NewStub(transport.connect(a->rank))->Attach(&a->context);
        v1::AttachRequest request;
        request.set_step_id(options.stepId);
        // sattach's stdin goes to the step (sattach.c client_io_handler_create, as srun's):
        // every task that reads it, or --input-filter's.
        request.set_writes_input(!options.layout);
        if (options.inputFilter) request.set_input_task(*options.inputFilter);
        a->inputOpen = a->stream->Write(request);
        v1::TaskEvent first;
        if (a->stream->Read(&first) && first.has_attached()) {
          a->attached = first.attached();
          const auto& ids = a->attached->task_ids();
          if (options.inputFilter &&
              std::find(ids.begin(), ids.end(), *options.inputFilter) == ids.end()) {
            a->closeInput();  // the task stdin goes to is not here
          }
        } else {
          a->closeInput();
          a->refusal = a->stream->Finish();
          a->stream.reset();
        }
      });
    }
    for (auto& thread : opening) thread.join();
  }
  std::uint32_t stepTasks = 0;
  std::vector<std::string> stepHosts;
  for (const auto& a : ranks) {
    if (!a->attached) continue;
    stepTasks = std::max(stepTasks, a->attached->step_tasks());
    stepHosts.push_back(a->host);
  }
  if (stepHosts.empty()) {
    // A step that runs nowhere does not exist; another refusal (the proxy's) is said as it is.
    std::string why = "Invalid job id specified";
    for (const auto& a : ranks) {
      if (a->refusal.error_code() != grpc::StatusCode::NOT_FOUND) {
        why = a->refusal.error_message();
        break;
      }
    }
    io.err << "sattach: error: Could not get job step info: " << why << "\n";
    return 1;
  }
  // A rank that did not say the step is elsewhere but refused (the per-user bound of the step
  // proxy, an agent that does not answer) may run some of its tasks: said, never passed over.
  bool unreached = false;
  for (const auto& a : ranks) {
    if (a->attached || a->refusal.error_code() == grpc::StatusCode::NOT_FOUND) continue;
    io.err << "sattach: error: Node " << a->host
           << ": unable to attach: " << a->refusal.error_message() << "\n";
    unreached = true;
  }
  if (options.layout) {
    // sattach.c print_layout_info, from what the ranks report.
    io.out << "Job step layout:\n\t" << stepTasks << " tasks, " << stepHosts.size() << " nodes ("
           << slurm::compressHostlist(stepHosts) << ")\n\n";
    std::uint32_t node = 0;
    for (const auto& a : ranks) {
      if (!a->attached) continue;
      io.out << "\tNode " << node++ << " (" << a->host << "), " << a->attached->task_ids_size()
             << " task(s): ";
      for (const std::uint32_t id : a->attached->task_ids()) io.out << id << " ";
      io.out << "\n";
    }
    io.out << std::flush;
    for (auto& a : ranks) {
      if (!a->stream) continue;
      a->closeInput();
      a->context.TryCancel();
      (void)a->stream->Finish();
    }
    return unreached ? 1 : 0;
  }

  inpod::LocalInput input(STDIN_FILENO);
  input.start(
      [&ranks](std::string_view data) {
        v1::AttachRequest message;
        message.set_input(data.data(), data.size());
        for (auto& a : ranks) {
          if (a->stream) a->writeInput(message);
        }
      },
      [&ranks] {
        for (auto& a : ranks) {
          if (a->stream) a->closeInput(true);
        }
      });
  std::optional<inpod::RawTerminal> rawTerminal;
  if (options.pty) rawTerminal.emplace(STDIN_FILENO);

  std::mutex outputMutex;
  inpod::TaskOutput output(io.out, io.err, outputMutex, options.label, stepTasks);
  int exitCode = 0;
  std::vector<std::thread> reading;
  for (auto& attachment : ranks) {
    if (!attachment->stream) continue;
    reading.emplace_back([&, a = attachment.get()] {
      // Only this rank's tasks: an agent cannot speak for another rank's.
      const auto& ids = a->attached->task_ids();
      std::set<std::uint32_t> running(ids.begin(), ids.end());
      v1::TaskEvent event;
      while (a->stream->Read(&event)) {
        const bool own = std::find(ids.begin(), ids.end(), event.task_id()) != ids.end();
        switch (event.event_case()) {
          case v1::TaskEvent::kStdout:
            if (own && (!options.outputFilter || *options.outputFilter == event.task_id())) {
              output.write(event.task_id(), true, event.stdout());
            }
            break;
          case v1::TaskEvent::kStderr:
            if (own && (!options.errorFilter || *options.errorFilter == event.task_id())) {
              output.write(event.task_id(), false, event.stderr());
            }
            break;
          case v1::TaskEvent::kExit:
            if (!own) break;
            output.taskEnded(event.task_id());
            running.erase(event.task_id());
            // The agent ends the stream once it has this half-close, or a few seconds later.
            if (running.empty()) a->closeInput();
            // sattach.c _exit_handler: each failed task's code said; signals only with -v.
            if (event.exit().signal() == 0 && event.exit().exit_code() != 0) {
              const std::lock_guard lock(outputMutex);
              io.err << "sattach: error: task " << event.task_id() << " exited with exit code "
                     << event.exit().exit_code() << "\n"
                     << std::flush;
              exitCode = std::max(exitCode, event.exit().exit_code());
            }
            break;
          case v1::TaskEvent::kDropped: {
            const std::lock_guard lock(outputMutex);
            io.err << "sattach: error: " << event.dropped() << " bytes of output from " << a->host
                   << " were dropped: sattach did not keep up with the tasks\n"
                   << std::flush;
            break;
          }
          default:
            break;
        }
      }
      a->closeInput();
      (void)a->stream->Finish();
    });
  }
  for (auto& thread : reading) thread.join();
  rawTerminal.reset();
  input.stop();
  return unreached ? std::max(exitCode, 1) : exitCode;
}

}  // namespace kubeslurm::cli
