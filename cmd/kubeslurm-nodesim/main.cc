// kubeslurm-nodesim: plays the kubelets of simulated GPU nodes against a real API server.
//
//   kubeslurm-nodesim [--kubeconfig F] --nodes gpu-[001-008]|8x8-2leaf [shape flags] ...
//   kubeslurm-nodesim ctl --control-file F fail|recover NODE... | list
//   kubeslurm-nodesim run-container SPEC     (process mode's container helper, not for people)
//
// Flags are documented in usage() and docs/sandbox.md ("Node simulator").
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <pthread.h>

#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/kubeconfig.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/nodesim/container_exec.h"
#include "kubeslurm/nodesim/control.h"
#include "kubeslurm/nodesim/process_runner.h"
#include "kubeslurm/nodesim/runner.h"
#include "kubeslurm/nodesim/shape.h"
#include "kubeslurm/nodesim/simulator.h"

namespace {

using kubeslurm::Status;
using kubeslurm::StatusOr;
namespace nodesim = kubeslurm::nodesim;
namespace kube = kubeslurm::kube;

constexpr std::string_view kUsage = R"(usage:
  kubeslurm-nodesim [flags]
  kubeslurm-nodesim ctl --control-file FILE fail|recover NODE... | list

Shape:
  --nodes EXPR             a hostlist (gpu-[001-008]) or a shape NxG[-Lleaf] (8x8-2leaf)
  --shape NxG[-Lleaf]      the same as a named shape
  --gpus N                 GPUs per node (8)
  --cpu Q  --memory Q      per node (64, 512Gi)
  --ephemeral-storage Q    per node (1Ti)
  --max-pods N             pods per node (110)
  --leaf-switches N        leaf switches, nodes split evenly (1)
  --gpu-product NAME       nvidia.com/gpu.product (NVIDIA-H100-80GB-HBM3)
  --label K=V              an extra node label (repeatable)
Behaviour:
  --kubeconfig FILE        default: $KUBECONFIG, else ~/.kube/config
  --context NAME           kubeconfig context (default: current)
  --start-delay SECONDS    admitted -> running (1; 0 allowed)
  --heartbeat SECONDS      Lease renewal interval (10)
  --lease-duration SECONDS leaseDurationSeconds (40)
  --node-status-interval SECONDS  Ready heartbeat refresh (40)
  --fail-pods-on-node-failure     a failed node's pods become Failed (NodeLost)
  --control-file FILE      failure injection: one failed node per line (see ctl)
  --qps N                  client-side request rate limit (1000; 0 = none)
  --process-mode           run containers as processes, each pod in namespaces of its own
                           (needs root; docs/sandbox.md "Process mode")
  --state-dir DIR          process mode: pods' directories and logs (required with it)
  --image-content IMAGE=HOSTPATH:PATH  process mode: HOSTPATH (a directory or file) is PATH in IMAGE's
                           containers (repeatable)
  --volume-root DIR        process mode: persistentVolumeClaim C of namespace N is DIR/N/C
                           (default STATE_DIR/volumes)
  --log-level LEVEL        debug, info, warning, error (info)
)";

bool parseSeconds(std::string_view text, double& out) {
  char* end = nullptr;
  const std::string copy(text);
  out = std::strtod(copy.c_str(), &end);
  return end != copy.c_str() && *end == '\0' && out >= 0;
}

int fail(const std::string& message) {
  std::cerr << "kubeslurm-nodesim: " << message << "\n";
  return 2;
}

int runCtl(const std::vector<std::string>& args) {
  std::string controlFile;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--control-file" && i + 1 < args.size()) {
      controlFile = args[++i];
    } else {
      rest.push_back(args[i]);
    }
  }
  if (controlFile.empty() || rest.empty()) return fail("ctl needs --control-file and a command");
  const std::string& verb = rest.front();
  if (verb == "list") {
    auto nodes = nodesim::readFailedNodes(controlFile);
    if (!nodes.isOk()) return fail(nodes.status().toString());
    for (const auto& node : *nodes) std::cout << node << "\n";
    return 0;
  }
  if (verb != "fail" && verb != "recover") return fail("unknown ctl command: " + verb);
  const std::vector<std::string> names(rest.begin() + 1, rest.end());
  if (names.empty()) return fail("ctl " + verb + " needs node names");
  auto nodes = nodesim::updateFailedNodes(controlFile, names, verb == "fail");
  if (!nodes.isOk()) return fail(nodes.status().toString());
  return 0;
}

// Everything the flags set.
struct Flags {
  nodesim::ShapeOptions shape;
  nodesim::SimulatorOptions simulator;
  std::string kubeconfig;
  std::string context;
  double qps = 1000;
  bool processMode = false;
  nodesim::ProcessRunnerOptions process;
};

// One flag: whether it takes a value, and what it does with it ("" when the value is good, else
// the complaint).
struct FlagRule {
  std::string_view name;
  bool takesValue;
  std::function<std::string(Flags&, const std::string&)> apply;
};

std::string setInteger(const std::string& flag, const std::string& v, std::int64_t& out) {
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0') return flag + " needs an integer";
  out = n;
  return "";
}

// --start-delay, --heartbeat...: seconds (a number >= 0) as milliseconds; `positive` refuses 0.
std::string setMillis(const std::string& flag, const std::string& v, bool positive,
                      const std::function<void(std::int64_t)>& set) {
  double seconds = 0;
  if (!parseSeconds(v, seconds)) return flag + " needs seconds (a number >= 0)";
  const auto ms = static_cast<std::int64_t>(seconds * 1000);
  if (positive && ms <= 0) return flag + " must be > 0";
  set(ms);
  return "";
}

const std::vector<FlagRule>& flagRules() {
  static const std::vector<FlagRule> kRules = {
      {"--nodes", true,
       [](Flags& f, const std::string& v) {
         f.shape.nodes = v;
         return std::string();
       }},
      {"--shape", true,
       [](Flags& f, const std::string& v) {
         return nodesim::applyNamedShape(v, f.shape) ? std::string()
                                                     : "--shape " + v + " is not NxG[-Lleaf]";
       }},
      {"--gpus", true,
       [](Flags& f, const std::string& v) { return setInteger("--gpus", v, f.shape.gpus); }},
      {"--max-pods", true,
       [](Flags& f, const std::string& v) { return setInteger("--max-pods", v, f.shape.maxPods); }},
      {"--leaf-switches", true,
       [](Flags& f, const std::string& v) {
         return setInteger("--leaf-switches", v, f.shape.leafSwitches);
       }},
      {"--cpu", true,
       [](Flags& f, const std::string& v) {
         f.shape.cpu = v;
         return std::string();
       }},
      {"--memory", true,
       [](Flags& f, const std::string& v) {
         f.shape.memory = v;
         return std::string();
       }},
      {"--ephemeral-storage", true,
       [](Flags& f, const std::string& v) {
         f.shape.ephemeralStorage = v;
         return std::string();
       }},
      {"--gpu-product", true,
       [](Flags& f, const std::string& v) {
         f.shape.gpuProduct = v;
         return std::string();
       }},
      {"--label", true,
       [](Flags& f, const std::string& v) {
         auto label = nodesim::parseLabel(v);
         if (!label.isOk()) return label.status().message();
         f.shape.extraLabels[label->first] = label->second;
         return std::string();
       }},
      {"--kubeconfig", true,
       [](Flags& f, const std::string& v) {
         f.kubeconfig = v;
         return std::string();
       }},
      {"--context", true,
       [](Flags& f, const std::string& v) {
         f.context = v;
         return std::string();
       }},
      {"--control-file", true,
       [](Flags& f, const std::string& v) {
         f.simulator.controlFile = v;
         return std::string();
       }},
      {"--state-dir", true,
       [](Flags& f, const std::string& v) {
         f.process.stateDir = v;
         return std::string();
       }},
      {"--volume-root", true,
       [](Flags& f, const std::string& v) {
         f.process.volumeRoot = v;
         return std::string();
       }},
      {"--image-content", true,
       [](Flags& f, const std::string& v) {
         auto content = nodesim::parseImageContent(v);
         if (!content.isOk()) return content.status().message();
         f.process.imageContent.push_back(std::move(*content));
         return std::string();
       }},
      {"--qps", true,
       [](Flags& f, const std::string& v) {
         return parseSeconds(v, f.qps) ? std::string() : std::string("--qps needs a number");
       }},
      {"--log-level", true,
       [](Flags& /*f*/, const std::string& v) {
         nodesim::LogLevel level{};
         if (!nodesim::parseLogLevel(v, level))
           return std::string("--log-level: debug|info|warning|error");
         nodesim::setLogLevel(level);
         return std::string();
       }},
      {"--start-delay", true,
       [](Flags& f, const std::string& v) {
         return setMillis("--start-delay", v, false,
                          [&f](std::int64_t ms) { f.simulator.model.startDelayMs = ms; });
       }},
      {"--heartbeat", true,
       [](Flags& f, const std::string& v) {
         return setMillis("--heartbeat", v, true, [&f](std::int64_t ms) {
           f.simulator.leaseInterval = std::chrono::milliseconds(ms);
         });
       }},
      {"--lease-duration", true,
       [](Flags& f, const std::string& v) {
         return setMillis("--lease-duration", v, false, [&f](std::int64_t ms) {
           f.simulator.leaseDurationSeconds = static_cast<std::int32_t>(ms / 1000);
         });
       }},
      {"--node-status-interval", true,
       [](Flags& f, const std::string& v) {
         return setMillis("--node-status-interval", v, true, [&f](std::int64_t ms) {
           f.simulator.statusInterval = std::chrono::milliseconds(ms);
         });
       }},
      {"--fail-pods-on-node-failure", false,
       [](Flags& f, const std::string&) {
         f.simulator.model.failPodsOnNodeFailure = true;
         return std::string();
       }},
      {"--process-mode", false,
       [](Flags& f, const std::string&) {
         f.processMode = true;
         return std::string();
       }},
  };
  return kRules;
}

// Returns 0 when parsed, -1 after --help, else the exit code of a usage error.
int parseFlags(const std::vector<std::string>& args, Flags& flags) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      return -1;
    }
    const auto& rules = flagRules();
    const auto rule =
        std::find_if(rules.begin(), rules.end(), [&](const FlagRule& r) { return r.name == flag; });
    if (rule == rules.end()) {
      // An unknown flag is reported as such only once it has its value, as before: a value-less
      // unknown flag at the end says so too.
      if (i + 1 >= args.size()) return fail("flag " + flag + " needs a value (see --help)");
      return fail("unknown flag " + flag + " (see --help)");
    }
    std::string value;
    if (rule->takesValue) {
      if (i + 1 >= args.size()) return fail("flag " + flag + " needs a value (see --help)");
      value = args[++i];
    }
    if (const std::string problem = rule->apply(flags, value); !problem.empty()) {
      return fail(problem);
    }
  }
  if (!flags.processMode &&
      (!flags.process.stateDir.empty() || !flags.process.imageContent.empty() ||
       !flags.process.volumeRoot.empty())) {
    return fail("--state-dir, --image-content and --volume-root belong to --process-mode");
  }
  return 0;
}

// The API server, from --kubeconfig or the default chain.
StatusOr<std::unique_ptr<kube::Client>> connect(const Flags& f) {
  StatusOr<kube::ClientConfig> config = Status();
  if (f.kubeconfig.empty()) {
    config = kube::defaultClientConfig(kube::processEnv(), f.context);
  } else {
    auto files = kube::loadKubeconfigFiles(f.kubeconfig);
    if (!files.isOk()) return files.status();
    config = kube::resolveContext(*files, f.context);
  }
  if (!config.isOk()) {
    return Status(config.status().code(), "kubeconfig: " + config.status().toString());
  }
  // Before any thread: a new connection must not parse the system CA bundle.
  kube::skipSystemCaFile(*config);
  kube::ClientOptions clientOptions;
  clientOptions.qps = f.qps;
  clientOptions.burst = static_cast<int>(std::max(1.0, f.qps * 2));
  clientOptions.userAgent = "kubeslurm-nodesim/0.1";
  auto client = kube::Client::create(*config, clientOptions);
  if (!client.isOk())
    return Status(client.status().code(), "client: " + client.status().toString());
  return client;
}

// Process mode's runner: pods' containers as processes in namespaces of their own, reading
// ConfigMap and Secret keys through the API server.
StatusOr<std::unique_ptr<nodesim::ProcessRunner>> makeProcessRunner(
    kube::Client& api, nodesim::ProcessRunnerOptions options) {
  std::error_code error;
  options.helperBinary = std::filesystem::read_symlink("/proc/self/exe", error).string();
  options.lookupKey = [&api](const std::string& resource, const std::string& ns,
                             const std::string& name,
                             const std::string& key) -> StatusOr<std::string> {
    const bool secret = resource == "secrets";
    auto object =
        api.get(secret ? kube::resources::secrets() : kube::resources::configMaps(), ns, name);
    if (!object.isOk()) return object.status();
    const auto data = object->find("data");
    if (data == object->end() || !data->contains(key) || !(*data)[key].is_string()) {
      return kubeslurm::notFound(resource + " " + ns + "/" + name + " has no key " + key);
    }
    const std::string value = (*data)[key];
    if (!secret) return value;
    return kube::decodeBase64(value);
  };
  return nodesim::ProcessRunner::create(std::move(options));
}

// SIGINT/SIGTERM are taken by a thread of their own (sigwait), so that stopping is a plain
// function call rather than work inside a signal handler, and the process runner's cleanup
// runs. Blocked before any thread exists (the HTTP client starts a pool), as threads inherit
// the mask: one thread left unblocked would take the signal's default action, death.
sigset_t blockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

void stopOnSignal(sigset_t signals, nodesim::Simulator& simulator) {
  std::thread([signals, &simulator] {
    int received = 0;
    sigwait(&signals, &received);
    nodesim::logLine(nodesim::LogLevel::kInfo, "signal " + std::to_string(received) + ": stopping");
    simulator.stop();
  }).detach();
}

int runSimulator(nodesim::Simulator& simulator) {
  const Status registered = simulator.registerNodes();
  if (!registered.isOk()) return fail(registered.toString());
  const Status ran = simulator.run();
  const auto stats = simulator.stats();
  nodesim::logLine(nodesim::LogLevel::kInfo,
                   "stopped: " + std::to_string(stats.statusWrites) + " pod status writes, " +
                       std::to_string(stats.deletes) + " deletes, " +
                       std::to_string(stats.leaseRenewals) + " lease renewals, " +
                       std::to_string(stats.errors) + " errors");
  if (!ran.isOk()) return fail(ran.toString());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args.front() == "run-container") {
    return nodesim::runContainer(args[1]);
  }
  if (!args.empty() && args.front() == "ctl") {
    return runCtl(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  const sigset_t signals = blockStopSignals();

  Flags flags;
  if (const int parsed = parseFlags(args, flags); parsed != 0) return parsed < 0 ? 0 : parsed;
  auto nodes = nodesim::buildNodes(flags.shape);
  if (!nodes.isOk()) return fail(nodes.status().message());
  if (nodes->empty()) return fail("no nodes: pass --nodes or --shape");
  flags.simulator.nodes = std::move(*nodes);

  auto client = connect(flags);
  if (!client.isOk()) return fail(client.status().message());

  nodesim::SimulatedRunner simulatedRunner;
  std::unique_ptr<nodesim::ProcessRunner> processRunner;
  if (flags.processMode) {
    auto made = makeProcessRunner(**client, std::move(flags.process));
    if (!made.isOk()) return fail(made.status().message());
    processRunner = std::move(*made);
  }
  nodesim::Runner& runner =
      processRunner ? static_cast<nodesim::Runner&>(*processRunner) : simulatedRunner;
  nodesim::Simulator simulator(**client, flags.simulator, runner);
  stopOnSignal(signals, simulator);
  return runSimulator(simulator);
}
