#include "kubeslurm/inpod/srun.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <thread>

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kubeslurm/base/text.h"
#include "kubeslurm/inpod/agent.h"
#include "kubeslurm/inpod/agent_address.h"
#include "kubeslurm/inpod/local_input.h"
#include "kubeslurm/inpod/srun_options.h"
#include "kubeslurm/inpod/task_output.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/step/step.grpc.pb.h"
#include "kubeslurm/step/step_layout.h"

namespace kubeslurm::inpod {
namespace {

namespace v1 = kubeslurm::step::v1;

std::optional<std::uint32_t> number(const std::map<std::string, std::string>& env,
                                    const std::string& name) {
  const auto found = env.find(name);
  if (found == env.end()) return std::nullopt;
  return parseInteger<std::uint32_t>(found->second);
}

std::string lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  const auto found = env.find(name);
  return found == env.end() ? "" : found->second;
}

// "0-3,5": the task ids as srun lists them in its messages.
std::string taskRanges(const std::vector<std::uint32_t>& ids) {
  std::string text;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(ids[i]);
    if (j > i) text += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return text;
}

struct TaskResult {
  bool ended = false;
  int exitCode = 0;
  int signal = 0;
  bool coreDumped = false;
};

// What rank 0 keeps of a step that ended, for sacct.
v1::StepRecord stepRecord(std::uint32_t stepId, bool cancelled, const SrunInvocation& invocation,
                          const step::StepLayout& layout, const step::StepAllocation& allocation,
                          std::chrono::system_clock::time_point started, int exitCode, int signal) {
  v1::StepRecord record;
  record.set_step_id(stepId);
  if (invocation.jobName) {
    record.set_name(*invocation.jobName);
  } else if (!invocation.command.empty()) {
    const std::string& command = invocation.command.front();
    record.set_name(command.substr(command.rfind('/') + 1));
  }
  std::vector<std::string> hosts;
  for (const auto& node : layout.nodes) hosts.push_back(node.hostname);
  record.set_nodelist(slurm::compressHostlist(hosts));
  record.set_nnodes(static_cast<std::uint32_t>(layout.nodes.size()));
  record.set_ntasks(layout.ntasks);
  // 22.05 without --exact: a step has all of the job's CPUs on its nodes.
  record.set_cpus(static_cast<std::uint32_t>(layout.nodes.size()) * allocation.cpusPerNode);
  const auto seconds = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  };
  record.set_start_time(seconds(started));
  record.set_end_time(seconds(std::chrono::system_clock::now()));
  record.set_exit_code(signal != 0 ? 0 : exitCode);
  record.set_signal(signal);
  record.set_state(cancelled ? "CANCELLED" : exitCode != 0 || signal != 0 ? "FAILED" : "COMPLETED");
  return record;
}

// What the step's tasks read (srun --input, --pty; launch.c _init_stdio): which tasks, and from
// where. A file is srun's to open and close.
struct InputPlan {
  std::set<std::uint32_t> tasks;
  int fd = -1;
  bool ownsFd = false;
  InputPlan() = default;
  InputPlan(const InputPlan&) = delete;
  InputPlan& operator=(const InputPlan&) = delete;
  ~InputPlan() {
    if (ownsFd && fd >= 0) ::close(fd);
  }
};

}  // namespace

// What a running step shares between srun's reader threads and its signal handling.
struct Srun::Step {
  std::int64_t jobId = 0;
  std::uint32_t stepId = 0;
  StepTransport transport;
  std::vector<std::shared_ptr<grpc::Channel>> channels;  // one per step node
  std::vector<std::uint32_t> ranks;                      // each channel's rank
  std::atomic<bool> cancelled{false};
  std::atomic<bool> killSent{false};
  std::mutex stateMutex;
  std::vector<char> taskState;  // 'r' running, 'e' exited, 'a' exited abnormally

  // One step node's Launch stream: its reader thread reads it; srun's input thread and the
  // window-size handler write into it, under `mutex`, while `open`.
  struct NodeStream {
    std::mutex mutex;
    std::unique_ptr<grpc::ClientReaderWriter<v1::LaunchRequest, v1::TaskEvent>> stream;
    bool open = false;
    bool wantsInput = false;  // some task of it reads srun's stdin
    bool hasPty = false;      // task 0 of a --pty step runs there
  };
  std::vector<std::unique_ptr<NodeStream>> streams;  // as `channels`
  int terminalFd = -1;                               // --pty's: where the window size is read

  bool writeInput(std::size_t node, const v1::LaunchRequest& message) {
    NodeStream& target = *streams[node];
    std::lock_guard lock(target.mutex);
    if (!target.open) return false;
    target.open = target.stream->Write(message);
    return target.open;
  }
  // srun's stdin ended, or the node's tasks have: the agent closes their stdin.
  void closeInput(std::size_t node) {
    NodeStream& target = *streams[node];
    std::lock_guard lock(target.mutex);
    if (!target.open) return;
    target.open = false;
    (void)target.stream->WritesDone();
  }
  void sendWindowSize() {
    winsize size{};
    if (terminalFd < 0 || ioctl(terminalFd, TIOCGWINSZ, &size) != 0) return;
    v1::LaunchRequest message;
    message.mutable_window()->set_rows(size.ws_row);
    message.mutable_window()->set_columns(size.ws_col);
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (streams[i]->hasPty) (void)writeInput(i, message);
    }
  }

  // srun's answer to a first Ctrl-C (task_state_print): the tasks grouped by state.
  std::vector<std::string> statusLines() {
    std::lock_guard lock(stateMutex);
    std::vector<std::string> lines;
    for (const auto& [state, label] : {std::pair{'r', "running"}, std::pair{'e', "exited"},
                                       std::pair{'a', "exited abnormally"}}) {
      std::vector<std::uint32_t> ids;
      for (std::uint32_t i = 0; i < taskState.size(); ++i) {
        if (taskState[i] == state) ids.push_back(i);
      }
      if (ids.empty()) continue;
      lines.push_back(name() + (ids.size() == 1 ? " task " : " tasks ") + taskRanges(ids) + ": " +
                      label);
    }
    return lines;
  }

  std::string name() const {
    return "StepId=" + std::to_string(jobId) + "." + std::to_string(stepId);
  }

  void signalAll(int signal) {
    for (std::size_t i = 0; i < channels.size(); ++i) {
      auto stub = v1::StepAgent::NewStub(channels[i]);
      grpc::ClientContext context;
      transport.authorize(context, ranks[i]);
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::SignalRequest request;
      request.set_step_id(stepId);
      request.set_signal(signal);
      v1::SignalReply reply;
      (void)stub->Signal(&context, request, &reply);
    }
  }
};

Srun::Srun(std::map<std::string, std::string> environment, SrunSettings settings, std::ostream& out,
           std::ostream& err)
    : environment_(std::move(environment)), settings_(std::move(settings)), out_(out), err_(err) {}

Srun::~Srun() = default;

void Srun::message(const std::string& line) {
  std::lock_guard lock(outputMutex_);
  err_ << "srun: " << line << '\n' << std::flush;
}

void Srun::onSignal(int signal) {
  std::shared_ptr<Step> step;
  {
    std::lock_guard lock(stepMutex_);
    step = step_;
  }
  if (!step) return;
  auto forceTermination = [&] {
    if (step->killSent.exchange(true)) {
      message("job abort in progress");
      return;
    }
    message("forcing job termination");
    step->cancelled = true;
    step->signalAll(SIGKILL);
  };
  switch (signal) {
    case SIGINT: {
      const auto now = std::chrono::steady_clock::now();
      if (now - lastInterrupt_ < std::chrono::seconds(1)) {
        message("sending Ctrl-C to " + step->name());
        step->signalAll(SIGINT);
        forceTermination();
      } else {
        message("interrupt (one more within 1 sec to abort)");
        for (const auto& line : step->statusLines()) message(line);
        lastInterrupt_ = now;
      }
      break;
    }
    case SIGQUIT:
      message("Quit");
      forceTermination();
      break;
    case SIGTERM:
    case SIGHUP:
      forceTermination();
      break;
    case SIGCONT:
      message("got SIGCONT");
      break;
    case SIGWINCH:
      step->sendWindowSize();
      break;
    default:
      step->signalAll(signal);
  }
}

// Inside a job: each rank's agent by its hostname (or KUBESLURM_STEP_AGENTS) and the job's step
// token from the pod's environment.
StatusOr<StepTransport> Srun::directTransport(const step::StepAllocation& allocation,
                                              const step::StepLayout& layout) const {
  std::string token = lookup(environment_, std::string(kTokenVariable));
  if (token.empty()) {
    return failedPrecondition("no step token (" + std::string(kTokenVariable) +
                              "): this pod was not started by kubeslurm");
  }
  // Where each rank's agent listens.
  std::vector<std::string> agents;
  if (const auto listed = lookup(environment_, std::string(kAgentsVariable)); !listed.empty()) {
    std::string_view rest = listed;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      agents.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    }
  } else {
    const auto port = agentPort(environment_);
    if (!port.isOk()) return port.status();
    for (const auto& host : allocation.nodes) agents.push_back(host + ":" + std::to_string(*port));
  }
  if (agents.size() != allocation.nodes.size()) {
    return invalidArgument(std::string(kAgentsVariable) + " names " +
                           std::to_string(agents.size()) + " agents for " +
                           std::to_string(allocation.nodes.size()) + " nodes");
  }

  // By address, for the ranks this step talks to (rank 0 and the step's nodes): a rank whose name
  // does not resolve yet is asked again within the connect timeout.
  const auto resolveBy = std::chrono::steady_clock::now() + settings_.connectTimeout;
  std::vector<bool> used(agents.size(), false);
  used[0] = true;
  for (const auto& node : layout.nodes) used[node.rank] = true;
  for (std::size_t rank = 0; rank < agents.size(); ++rank) {
    if (!used[rank]) continue;
    StatusOr<std::string> target = resolveAgentAddress(agents[rank], resolveBy);
    if (!target.isOk()) return target.status();
    agents[rank] = std::move(target).value();
  }
  StepTransport transport;
  transport.connect = [agents = std::move(agents)](std::uint32_t rank) {
    return grpc::CreateChannel(agents.at(rank), grpc::InsecureChannelCredentials());
  };
  transport.authorize = [token = std::move(token)](grpc::ClientContext& context,
                                                   std::uint32_t /*rank*/) {
    context.AddMetadata("authorization", "Bearer " + token);
  };
  return transport;
}

int Srun::run(const std::vector<std::string>& args) {
  auto parsed = parseSrunArguments(args, environment_);
  if (!parsed.isOk()) {
    message(parsed.status().message());
    if (srunPrintsTryHelp(parsed.status())) {
      std::lock_guard lock(outputMutex_);
      err_ << "Try \"srun --help\" for more information\n";
    }
    return srunExitStatus(parsed.status());
  }
  const SrunInvocation& invocation = *parsed;
  if (invocation.version) {
    std::lock_guard lock(outputMutex_);
    out_ << "slurm 22.05.8\n";
    return 0;
  }
  if (invocation.help || invocation.usage) {
    std::lock_guard lock(outputMutex_);
    out_ << "Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]]\n"
            "inside a kubeslurm job: -N, -n, --ntasks-per-node, -c, -w, -x, -m, -l, -K, -J, "
            "-D, --export\n";
    return 0;
  }

  // Slurm's srun asks slurmctld whether a new job of these options would run, also inside an
  // allocation; the in-pod tool has no way to the operator's query API, the login CLI has.
  if (invocation.testOnly) {
    message("error: --test-only is answered outside a job: run it from a login shell");
    return 1;
  }

  step::StepAllocation allocation;
  const auto jobId = lookup(environment_, "SLURM_JOB_ID");
  // Another job's agents are out of reach from a rank pod (they take their own job's token).
  if (invocation.jobId && !transport_.connect && std::to_string(*invocation.jobId) != jobId) {
    message("error: --jobid of another job is answered outside a job: run it from a login shell");
    return 1;
  }
  const auto nodelist = lookup(environment_, "SLURM_JOB_NODELIST");
  auto nodes = slurm::expandHostlist(nodelist);
  const auto parsedJobId = parseInteger<std::int64_t>(jobId);
  if (!parsedJobId || nodelist.empty() || !nodes.isOk() || nodes->empty()) {
    message(
        "error: this srun runs steps inside a kubeslurm job (SLURM_JOB_ID and "
        "SLURM_JOB_NODELIST are not set, or not valid)");
    return 1;
  }
  allocation.jobId = *parsedJobId;
  allocation.nodes = std::move(*nodes);
  allocation.ntasks = number(environment_, "SLURM_NTASKS").value_or(0);
  allocation.cpusPerNode = number(environment_, "SLURM_CPUS_ON_NODE").value_or(1);
  allocation.gpusPerNode = number(environment_, "SLURM_GPUS_ON_NODE").value_or(0);

  auto layout = step::layoutStep(allocation, invocation.request);
  if (!layout.isOk()) {
    message("error: " + layout.status().message());
    return 1;
  }
  {
    std::lock_guard lock(outputMutex_);
    for (const auto& warning : invocation.warnings) err_ << warning << '\n';
    for (const auto& warning : layout->warnings) err_ << warning << '\n';
  }

  // --pty sizes task 0's terminal by srun's own (srun.c create_srun_job; srun_pty.c set_winsize).
  bool pty = invocation.pty;
  winsize window{};
  if (pty && (settings_.terminalFd < 0 || ioctl(settings_.terminalFd, TIOCGWINSZ, &window) != 0)) {
    message("error: ioctl(TIOCGWINSZ): " + errnoText(settings_.terminalFd < 0 ? ENOTTY : errno));
    message("error: Not using a pseudo-terminal, disregarding --pty option");
    pty = false;
  }
  InputPlan input;
  {
    // fname.c fname_create: "all" (any case, as a prefix) or "-", "none", a task id below the
    // task count ("" is 0), else a file on this host.
    const std::string mode = invocation.input.value_or("all");
    const bool digits =
        std::all_of(mode.begin(), mode.end(), [](char c) { return c >= '0' && c <= '9'; });
    constexpr auto kNoTask = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t taskId = kNoTask;
    if (mode.empty()) {
      taskId = 0;
    } else if (digits) {
      taskId = parseInteger<std::uint64_t>(mode).value_or(kNoTask);
    }
    input.fd = settings_.inputFd;
    if (pty) {
      input.tasks = {0};
    } else if (equalsIgnoreCase(mode.substr(0, 3), "all") || mode.starts_with('-')) {
      for (std::uint32_t id = 0; id < layout->ntasks; ++id) input.tasks.insert(id);
    } else if (equalsIgnoreCase(mode, "none")) {
      input.fd = -1;
    } else if (taskId < layout->ntasks) {
      input.tasks = {static_cast<std::uint32_t>(taskId)};
    } else if (mode.find('%') != std::string::npos) {
      message("error: kubeslurm's srun does not support --input file name patterns");
      return 1;
    } else {
      input.fd = ::open(mode.c_str(), O_RDONLY | O_CLOEXEC);
      if (input.fd < 0) {
        message("error: Could not open stdin file: " + errnoText(errno));  // launch.c
        return 1;
      }
      input.ownsFd = true;
      for (std::uint32_t id = 0; id < layout->ntasks; ++id) input.tasks.insert(id);
    }
    if (input.fd < 0) input.tasks.clear();
  }
  LocalInput localInput(input.tasks.empty() ? -1 : input.fd);
  // Without a way to stop reading it, no task reads srun's stdin.
  if (!localInput.usable()) input.tasks.clear();

  auto step = std::make_shared<Step>();
  step->jobId = allocation.jobId;
  step->taskState.assign(layout->ntasks, 'r');
  if (pty) step->terminalFd = settings_.terminalFd;
  if (transport_.connect) {
    step->transport = transport_;
  } else {
    auto direct = directTransport(allocation, *layout);
    if (!direct.isOk()) {
      message("error: " + direct.status().message());
      return 1;
    }
    step->transport = std::move(direct).value();
  }
  const auto authorize = [&step](grpc::ClientContext& context, std::uint32_t rank) {
    step->transport.authorize(context, rank);
  };
  const auto connect = [&step](std::uint32_t rank) { return step->transport.connect(rank); };

  // Step ids come from rank 0, where the batch script (and so every srun of the job) runs.
  {
    auto stub = v1::StepAgent::NewStub(connect(0));
    grpc::ClientContext context;
    authorize(context, 0);
    context.set_wait_for_ready(true);
    context.set_deadline(std::chrono::system_clock::now() + settings_.connectTimeout);
    v1::NextStepIdReply reply;
    const auto status = stub->NextStepId(&context, v1::NextStepIdRequest{}, &reply);
    if (!status.ok()) {
      message("error: Unable to create step for job " + jobId + ": " + status.error_message());
      return 1;
    }
    step->stepId = reply.step_id();
  }

  // What every task inherits beyond its own variables (src/common/env.c setup_env).
  std::map<std::string, std::string> stepEnvironment =
      step::exportedEnvironment(environment_, invocation.exportVars);
  for (const auto& name : step::taskEnvironmentRemovals()) stepEnvironment.erase(name);
  if (invocation.jobName) stepEnvironment["SLURM_JOB_NAME"] = *invocation.jobName;
  if (invocation.label) stepEnvironment["SLURM_LABELIO"] = "1";
  if (!settings_.umask.empty()) stepEnvironment["SLURM_UMASK"] = settings_.umask;
  // -D relative to srun's own directory, which is where the tasks start otherwise.
  std::string workingDirectory = settings_.workingDirectory;
  if (invocation.chdir && invocation.chdir->starts_with('/')) {
    workingDirectory = *invocation.chdir;
  } else if (invocation.chdir) {
    workingDirectory += "/" + *invocation.chdir;
  }

  const auto stepStart = std::chrono::system_clock::now();
  std::vector<TaskResult> results(layout->ntasks);
  TaskOutput output(out_, err_, outputMutex_, invocation.label, layout->ntasks);
  std::map<std::uint32_t, std::string> taskHost;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  for (const auto& node : layout->nodes) {
    step->channels.push_back(connect(node.rank));
    step->ranks.push_back(node.rank);
    auto stream = std::make_unique<Step::NodeStream>();
    for (const auto id : node.tasks) {
      taskHost[id] = node.hostname;
      stream->wantsInput = stream->wantsInput || input.tasks.contains(id);
      stream->hasPty = stream->hasPty || (pty && id == 0);
    }
    step->streams.push_back(std::move(stream));
    contexts.push_back(std::make_unique<grpc::ClientContext>());
  }
  {
    std::lock_guard lock(stepMutex_);
    step_ = step;
  }

  auto writeOutput = [&](std::uint32_t task, bool isStdout, const std::string& data) {
    // --pty: every other task's output goes to /dev/null (srun --pty, opt.c).
    if (!pty || task == 0) output.write(task, isStdout, data);
  };
  std::atomic<bool> abnormalSeen{false};
  auto recordExit = [&](std::uint32_t task, const v1::TaskExit& exit) {
    TaskResult& result = results.at(task);
    result.ended = true;
    result.exitCode = exit.exit_code();
    result.signal = exit.signal();
    result.coreDumped = exit.core_dumped();
    {
      std::lock_guard lock(step->stateMutex);
      step->taskState.at(task) = result.signal != 0 || result.exitCode != 0 ? 'a' : 'e';
    }
    const std::string where = taskHost.at(task) + ": task " + std::to_string(task) + ": ";
    if (result.signal != 0) {
      if (!step->cancelled) {
        const char* description = sigdescr_np(result.signal);  // strsignal, thread-safe
        message("error: " + where + (description != nullptr ? description : "Unknown signal") +
                (result.coreDumped ? " (core dumped)" : ""));
      }
    } else if (result.exitCode != 0) {
      message("error: " + where + "Exited with exit code " + std::to_string(result.exitCode));
    }
    if ((result.signal != 0 || result.exitCode != 0) && invocation.killOnBadExit &&
        !abnormalSeen.exchange(true)) {
      step->cancelled = true;
      step->signalAll(SIGKILL);
    }
  };

  // Launch streams set up (or given up on): srun's stdin is read only once all are, so that no
  // rank misses the first bytes.
  std::mutex startedMutex;
  std::condition_variable startedChanged;
  std::size_t streamsStarted = 0;
  auto streamStarted = [&] {
    const std::lock_guard lock(startedMutex);
    ++streamsStarted;
    startedChanged.notify_all();
  };
  // Every stream open before srun's stdin goes anywhere; its end closes every task's stdin.
  auto waitForStreams = [&] {
    std::unique_lock lock(startedMutex);
    startedChanged.wait(lock, [&] { return streamsStarted == layout->nodes.size(); });
  };
  if (!input.tasks.empty()) {
    localInput.start(
        [&](std::string_view data) {
          waitForStreams();
          v1::LaunchRequest message;
          message.set_input(data.data(), data.size());
          for (std::size_t i = 0; i < step->streams.size(); ++i) {
            if (step->streams[i]->wantsInput) (void)step->writeInput(i, message);
          }
        },
        [&] {
          waitForStreams();
          for (std::size_t i = 0; i < step->streams.size(); ++i) step->closeInput(i);
        });
  }
  std::optional<RawTerminal> rawTerminal;
  if (pty) rawTerminal.emplace(settings_.inputFd);

  std::vector<std::thread> readers;
  std::vector<std::string> launchFailures(layout->nodes.size());
  // A rank whose stream broke after its tasks started (the login host's connection, the
  // operator's proxy, the pod network): why.
  std::vector<std::string> lostConnections(layout->nodes.size());
  for (std::size_t i = 0; i < layout->nodes.size(); ++i) {
    readers.emplace_back([&, i] {
      const auto& node = layout->nodes[i];
      v1::LaunchRequest request;
      request.set_step_id(step->stepId);
      for (const auto& arg : invocation.command) request.add_argv(arg);
      for (const auto& [name, value] : stepEnvironment)
        (*request.mutable_environment())[name] = value;
      request.set_working_directory(workingDirectory);
      for (std::uint32_t local = 0; local < node.tasks.size(); ++local) {
        auto* task = request.add_tasks();
        task->set_task_id(node.tasks[local]);
        for (const auto& [name, value] :
             step::taskEnvironment(allocation, invocation.request, *layout, step->stepId,
                                   static_cast<std::uint32_t>(i), local)) {
          (*task->mutable_environment())[name] = value;
        }
        task->set_reads_input(input.tasks.contains(node.tasks[local]));
        task->set_pty(pty && node.tasks[local] == 0);
      }
      Step::NodeStream& nodeStream = *step->streams[i];
      if (nodeStream.hasPty) {
        request.mutable_window()->set_rows(window.ws_row);
        request.mutable_window()->set_columns(window.ws_col);
      }
      auto& context = *contexts[i];
      authorize(context, node.rank);
      if (!step->channels[i]->WaitForConnected(std::chrono::system_clock::now() +
                                               settings_.connectTimeout)) {
        launchFailures[i] = "Communication connection failure";
        streamStarted();
        return;
      }
      auto stub = v1::StepAgent::NewStub(step->channels[i]);
      {
        const std::lock_guard lock(nodeStream.mutex);
        nodeStream.stream = stub->Launch(&context);
        nodeStream.open = nodeStream.stream->Write(request);
      }
      if (!nodeStream.wantsInput) step->closeInput(i);
      streamStarted();
      auto& reader = nodeStream.stream;
      std::size_t running = node.tasks.size();
      bool started = false;  // the agent said it started the tasks (its first event)
      v1::TaskEvent event;
      while (reader->Read(&event)) {
        if (event.has_attached()) {
          started = true;
          continue;
        }
        // Only this node's tasks: an agent cannot write into another rank's output or results.
        if (std::find(node.tasks.begin(), node.tasks.end(), event.task_id()) == node.tasks.end()) {
          continue;
        }
        switch (event.event_case()) {
          case v1::TaskEvent::kStdout:
            writeOutput(event.task_id(), true, event.stdout());
            break;
          case v1::TaskEvent::kStderr:
            writeOutput(event.task_id(), false, event.stderr());
            break;
          case v1::TaskEvent::kExit:
            // A task ends once: a second end from an agent (its own doing) changes nothing.
            if (results.at(event.task_id()).ended) break;
            output.taskEnded(event.task_id());
            recordExit(event.task_id(), event.exit());
            // The node's tasks have all ended: nothing more to read from srun's stdin for them.
            if (--running == 0) step->closeInput(i);
            break;
          default:
            break;
        }
      }
      {
        // No write may be under way while the stream finishes.
        const std::lock_guard lock(nodeStream.mutex);
        nodeStream.open = false;
      }
      const auto status = reader->Finish();
      if (!status.ok() && status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
        launchFailures[i] = "Invalid job credential";
      } else if (!status.ok() && !step->cancelled && started && running > 0) {
        lostConnections[i] = status.error_message();
      } else if (!status.ok() && !step->cancelled && !started) {
        launchFailures[i] = status.error_message();
      }
    });
  }
  for (auto& reader : readers) reader.join();
  rawTerminal.reset();
  localInput.stop();
  {
    std::lock_guard lock(stepMutex_);
    step_.reset();
  }

  // A rank that never ran its tasks: srun's "Task launch ... failed" (launch_slurm.c).
  bool launchFailed = false;
  for (std::size_t i = 0; i < launchFailures.size(); ++i) {
    if (launchFailures[i].empty()) continue;
    launchFailed = true;
    message("error: Task launch for " + step->name() + " failed on node " +
            layout->nodes[i].hostname + ": " + launchFailures[i]);
  }
  if (launchFailed) {
    step->signalAll(SIGKILL);
    message("error: Application launch failed: Communication connection failure");
    message("Job step aborted");
    return 1;
  }

  // The tasks of a rank srun lost touch with are killed there (an agent whose srun goes away
  // kills its tasks after KillWait): they count as killed, and srun says why.
  for (std::size_t i = 0; i < lostConnections.size(); ++i) {
    if (lostConnections[i].empty()) continue;
    std::vector<std::uint32_t> lost;
    for (const std::uint32_t task : layout->nodes[i].tasks) {
      if (results.at(task).ended) continue;
      results.at(task) = TaskResult{.ended = true, .exitCode = 0, .signal = SIGKILL};
      lost.push_back(task);
    }
    message("error: " + layout->nodes[i].hostname + ": " + (lost.size() == 1 ? "task " : "tasks ") +
            taskRanges(lost) + ": lost the connection to the step (" + lostConnections[i] +
            "); its tasks there are killed");
  }

  // Slurm's rule: a signal beats any exit code, the highest signal wins, else the highest code.
  int signal = 0;
  int code = 0;
  for (const auto& result : results) {
    if (!result.ended) continue;
    signal = std::max(signal, result.signal);
    code = std::max(code, result.exitCode);
  }
  {
    // Best effort, as accounting is to srun: a step whose record does not reach rank 0 still ran.
    grpc::ClientContext context;
    authorize(context, 0);
    context.set_deadline(std::chrono::system_clock::now() + settings_.connectTimeout);
    v1::RecordStepReply reply;
    (void)v1::StepAgent::NewStub(connect(0))
        ->RecordStep(&context,
                     stepRecord(step->stepId, step->cancelled, invocation, *layout, allocation,
                                stepStart, code, signal),
                     &reply);
  }
  if (signal != 0) return 128 + signal;
  return code;
}

}  // namespace kubeslurm::inpod
