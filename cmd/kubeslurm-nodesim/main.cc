// kubeslurm-nodesim: plays the kubelets of simulated GPU nodes against a real API server.
//
//   kubeslurm-nodesim [--kubeconfig F] --nodes gpu-[001-008]|8x8-2leaf [shape flags] ...
//   kubeslurm-nodesim ctl --control-file F fail|recover NODE... | list
//   kubeslurm-nodesim run-container SPEC     (process mode's container helper, not for people)
//
// Flags are documented in usage() and docs/sandbox.md ("Node simulator").
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args.front() == "run-container") {
    return nodesim::runContainer(args[1]);
  }
  if (!args.empty() && args.front() == "ctl") {
    return runCtl(std::vector<std::string>(args.begin() + 1, args.end()));
  }

  // SIGINT/SIGTERM are taken by a thread of their own (sigwait), so that stopping is a plain
  // function call rather than work inside a signal handler, and the process runner's cleanup
  // runs. Blocked before any thread exists (the HTTP client starts a pool), as threads inherit
  // the mask: one thread left unblocked would take the signal's default action, death.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  nodesim::ShapeOptions shape;
  nodesim::SimulatorOptions options;
  std::string kubeconfig;
  std::string context;
  double qps = 1000;
  bool processMode = false;
  nodesim::ProcessRunnerOptions processOptions;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    double seconds = 0;
    if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (flag == "--fail-pods-on-node-failure") {
      options.model.failPodsOnNodeFailure = true;
      continue;
    }
    if (flag == "--process-mode") {
      processMode = true;
      continue;
    }
    if (!value(v)) return fail("flag " + flag + " needs a value (see --help)");
    if (flag == "--nodes") {
      shape.nodes = v;
    } else if (flag == "--shape") {
      if (!nodesim::applyNamedShape(v, shape)) return fail("--shape " + v + " is not NxG[-Lleaf]");
    } else if (flag == "--gpus" || flag == "--max-pods" || flag == "--leaf-switches") {
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0') return fail(flag + " needs an integer");
      (flag == "--gpus"       ? shape.gpus
       : flag == "--max-pods" ? shape.maxPods
                              : shape.leafSwitches) = n;
    } else if (flag == "--cpu") {
      shape.cpu = v;
    } else if (flag == "--memory") {
      shape.memory = v;
    } else if (flag == "--ephemeral-storage") {
      shape.ephemeralStorage = v;
    } else if (flag == "--gpu-product") {
      shape.gpuProduct = v;
    } else if (flag == "--label") {
      auto label = nodesim::parseLabel(v);
      if (!label.isOk()) return fail(label.status().message());
      shape.extraLabels[label->first] = label->second;
    } else if (flag == "--kubeconfig") {
      kubeconfig = v;
    } else if (flag == "--context") {
      context = v;
    } else if (flag == "--control-file") {
      options.controlFile = v;
    } else if (flag == "--state-dir") {
      processOptions.stateDir = v;
    } else if (flag == "--volume-root") {
      processOptions.volumeRoot = v;
    } else if (flag == "--image-content") {
      auto content = nodesim::parseImageContent(v);
      if (!content.isOk()) return fail(content.status().message());
      processOptions.imageContent.push_back(std::move(*content));
    } else if (flag == "--qps") {
      if (!parseSeconds(v, qps)) return fail("--qps needs a number");
    } else if (flag == "--log-level") {
      nodesim::LogLevel level{};
      if (!nodesim::parseLogLevel(v, level)) return fail("--log-level: debug|info|warning|error");
      nodesim::setLogLevel(level);
    } else if (flag == "--start-delay" || flag == "--heartbeat" || flag == "--lease-duration" ||
               flag == "--node-status-interval") {
      if (!parseSeconds(v, seconds)) return fail(flag + " needs seconds (a number >= 0)");
      const auto ms = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
      if (flag == "--start-delay") {
        options.model.startDelayMs = ms.count();
      } else if (flag == "--heartbeat") {
        if (ms.count() <= 0) return fail("--heartbeat must be > 0");
        options.leaseInterval = ms;
      } else if (flag == "--lease-duration") {
        options.leaseDurationSeconds = static_cast<std::int32_t>(seconds);
      } else {
        if (ms.count() <= 0) return fail("--node-status-interval must be > 0");
        options.statusInterval = ms;
      }
    } else {
      return fail("unknown flag " + flag + " (see --help)");
    }
  }

  auto nodes = nodesim::buildNodes(shape);
  if (!nodes.isOk()) return fail(nodes.status().message());
  if (nodes->empty()) return fail("no nodes: pass --nodes or --shape");
  options.nodes = std::move(*nodes);

  StatusOr<kube::ClientConfig> config = Status();
  if (kubeconfig.empty()) {
    config = kube::defaultClientConfig(kube::processEnv(), context);
  } else {
    auto files = kube::loadKubeconfigFiles(kubeconfig);
    if (!files.isOk()) return fail(files.status().toString());
    config = kube::resolveContext(*files, context);
  }
  if (!config.isOk()) return fail("kubeconfig: " + config.status().toString());
  kube::ClientOptions clientOptions;
  clientOptions.qps = qps;
  clientOptions.burst = static_cast<int>(std::max(1.0, qps * 2));
  clientOptions.userAgent = "kubeslurm-nodesim/0.1";
  auto client = kube::Client::create(*config, clientOptions);
  if (!client.isOk()) return fail("client: " + client.status().toString());

  nodesim::SimulatedRunner simulatedRunner;
  std::unique_ptr<nodesim::ProcessRunner> processRunner;
  if (processMode) {
    std::error_code error;
    processOptions.helperBinary = std::filesystem::read_symlink("/proc/self/exe", error).string();
    kube::Client& api = **client;
    processOptions.lookupKey = [&api](const std::string& resource, const std::string& ns,
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
    auto made = nodesim::ProcessRunner::create(std::move(processOptions));
    if (!made.isOk()) return fail(made.status().message());
    processRunner = std::move(*made);
  } else if (!processOptions.stateDir.empty() || !processOptions.imageContent.empty() ||
             !processOptions.volumeRoot.empty()) {
    return fail("--state-dir, --image-content and --volume-root belong to --process-mode");
  }
  nodesim::Runner& runner =
      processRunner ? static_cast<nodesim::Runner&>(*processRunner) : simulatedRunner;
  nodesim::Simulator simulator(**client, options, runner);
  std::thread signalThread([&] {
    int received = 0;
    sigwait(&signals, &received);
    nodesim::logLine(nodesim::LogLevel::kInfo, "signal " + std::to_string(received) + ": stopping");
    simulator.stop();
  });
  signalThread.detach();

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
