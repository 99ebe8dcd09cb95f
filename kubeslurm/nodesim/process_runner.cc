#include "kubeslurm/nodesim/process_runner.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/nodesim/container_exec.h"
#include "kubeslurm/nodesim/simulator.h"

namespace kubeslurm::nodesim {

namespace {

namespace fs = std::filesystem;

// A container's exit code when it could not be started, or when its process was lost (the
// simulator restarted): what CRI runtimes report (128, 137).
constexpr std::int32_t kStartFailure = 128;
constexpr std::int32_t kLost = 137;
// What the kubelet keeps of a container's termination message
// (kubecontainer.MaxContainerTerminationMessageLength, for a pod of one container).
constexpr std::size_t kTerminationMessageLimit = 4096;
// The image's PATH where the pod sets none (the host is every image).
constexpr std::string_view kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

void appendToFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

// Spawns `argv` with stdin from /dev/null, stdout and stderr appended to `log`, a session of its
// own and the signal mask and dispositions of a fresh process (the simulator blocks SIGTERM).
StatusOr<pid_t> spawnLogged(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0640);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  std::vector<std::string> copy = argv;
  std::vector<char*> cArgv;
  cArgv.reserve(copy.size() + 1);
  for (auto& a : copy) cArgv.push_back(a.data());
  cArgv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cArgv[0], &actions, &attr, cArgv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return internalError("spawn " + argv.front() + ": " + std::generic_category().message(rc));
  }
  return pid;
}

std::int32_t exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kLost;
}

// Runs a network tool to completion; its output goes to `log`.
Status runTool(const std::vector<std::string>& argv, const std::string& log) {
  appendToFile(log, "+");
  for (const auto& a : argv) appendToFile(log, " " + a);
  appendToFile(log, "\n");
  auto pid = spawnLogged(argv, log);
  if (!pid.isOk()) return pid.status();
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exitCodeOf(status) != 0) {
    std::string command;
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
    return internalError(command + " failed (exit " + std::to_string(exitCodeOf(status)) +
                         "; see " + log + ")");
  }
  return Status::ok();
}

std::string jsonString(const api::Json& json, std::string_view key) {
  const auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The member's elements; none when it is absent or not an array. (operator[] on a const json
// must not be given a missing key.)
const api::Json& jsonArray(const api::Json& json, std::string_view key) {
  static const api::Json kNone = api::Json::array();
  const auto it = json.find(key);
  return it != json.end() && it->is_array() ? *it : kNone;
}

// fieldRef paths the downward API serves as environment variables.
StatusOr<std::string> fieldValue(const api::Pod& pod, std::string_view podIP,
                                 const std::string& path) {
  auto keyed = [&](std::string_view prefix,
                   const std::map<std::string, std::string>& values) -> std::optional<std::string> {
    if (!path.starts_with(prefix) || !path.ends_with("']")) return std::nullopt;
    const std::string key = path.substr(prefix.size(), path.size() - prefix.size() - 2);
    const auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
  };
  if (path == "metadata.name") return pod.metadata.name;
  if (path == "metadata.namespace") return pod.metadata.namespaceName;
  if (path == "metadata.uid") return pod.metadata.uid;
  if (path == "spec.nodeName") return pod.spec.nodeName;
  if (path == "spec.serviceAccountName") {
    const auto spec = pod.raw.find("spec");
    return spec == pod.raw.end() ? std::string() : jsonString(*spec, "serviceAccountName");
  }
  if (path == "status.podIP") return std::string(podIP);
  if (auto v = keyed("metadata.labels['", pod.metadata.labels)) return *v;
  if (auto v = keyed("metadata.annotations['", pod.metadata.annotations)) return *v;
  return invalidArgument("fieldRef " + path + " is not served in process mode");
}

}  // namespace

StatusOr<ImageContent> parseImageContent(std::string_view text) {
  const auto equals = text.rfind('=');
  const auto colon = equals == std::string_view::npos ? equals : text.find(':', equals);
  if (equals == std::string_view::npos || equals == 0 || colon == std::string_view::npos) {
    return invalidArgument("--image-content " + std::string(text) + " is not IMAGE=HOSTPATH:PATH");
  }
  ImageContent content{std::string(text.substr(0, equals)),
                       std::string(text.substr(equals + 1, colon - equals - 1)),
                       std::string(text.substr(colon + 1))};
  if (content.hostDir.empty() || !content.path.starts_with('/')) {
    return invalidArgument("--image-content " + std::string(text) +
                           ": HOSTPATH must be given and PATH absolute");
  }
  return content;
}

std::string expandReferences(const std::string& text,
                             const std::map<std::string, std::string>& defined) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    const std::size_t close = text[i + 1] == '(' ? text.find(')', i + 2) : std::string::npos;
    if (close != std::string::npos) {
      const auto it = defined.find(text.substr(i + 2, close - i - 2));
      if (it != defined.end()) {
        out += it->second;
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

struct ProcessRunner::PodSandbox {
  std::string uid;
  std::string ns;
  std::string name;
  std::string hostname;
  std::string subdomain;
  std::string ip;
  std::vector<std::string> searches;
  std::string dir;
  std::string netns;                           // its name under /run/netns; "" until made
  std::map<std::string, std::string> volumes;  // volume name -> host source
  std::string error;  // the pod could not be set up: its containers fail with failCode
  std::int32_t failCode = kStartFailure;
};

namespace {
constexpr std::string_view kHostAddress = "10.255.255.254";
}  // namespace

ProcessRunner::ProcessRunner(ProcessRunnerOptions options)
    : options_(std::move(options)),
      netnsPrefix_("ksim-" + hexId(options_.stateDir, 8) + "-"),
      bridge_("ksbr" + hexId(options_.stateDir, 8)),
      networkLog_(options_.stateDir + "/network.log") {}

StatusOr<std::unique_ptr<ProcessRunner>> ProcessRunner::create(ProcessRunnerOptions options) {
  if (geteuid() != 0) {
    return failedPrecondition(
        "--process-mode needs root: it makes network namespaces, veth pairs, a bridge and mounts");
  }
  if (options.stateDir.empty()) return invalidArgument("--process-mode needs --state-dir");
  std::error_code error;
  fs::create_directories(options.stateDir + "/pods", error);
  if (error) return internalError("create " + options.stateDir + ": " + error.message());
  options.stateDir = fs::canonical(options.stateDir).string();
  if (options.volumeRoot.empty()) options.volumeRoot = options.stateDir + "/volumes";
  std::unique_ptr<ProcessRunner> runner(new ProcessRunner(std::move(options)));
  if (Status bridge = runner->setUpBridge(); !bridge.isOk()) return bridge;
  return runner;
}

Status ProcessRunner::setUpBridge() {
  // What a killed simulator of the same state directory left behind.
  if (DIR* dir = opendir("/run/netns")) {
    std::vector<std::string> stale;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the stream is this call's own
    while (const dirent* entry = readdir(dir)) {
      if (std::string_view(entry->d_name).starts_with(netnsPrefix_)) {
        stale.emplace_back(entry->d_name);
      }
    }
    closedir(dir);
    for (const auto& name : stale) (void)runTool({"ip", "netns", "del", name}, networkLog_);
  }
  (void)runTool({"ip", "link", "del", bridge_}, networkLog_);
  if (Status made = runTool({"ip", "link", "add", bridge_, "type", "bridge"}, networkLog_);
      !made.isOk()) {
    return made;
  }
  if (Status up = runTool({"ip", "link", "set", bridge_, "up"}, networkLog_); !up.isOk()) {
    return up;
  }
  // The node's own address on its pods' bridge, as a CNI bridge's gateway gives the host a way
  // to its pods (kubelet probes, host-network daemons; in the sandbox, the operator's step proxy
  // runs on the host). A /32: no route to the rest of 10/8 is taken from the host, only a route
  // per pod (setUpNetwork).
  return runTool({"ip", "addr", "add", std::string(kHostAddress) + "/32", "dev", bridge_},
                 networkLog_);
}

ProcessRunner::~ProcessRunner() {
  for (auto& [key, process] : processes_) {
    if (process.pid > 0 && !process.exited) kill(process.pid, SIGKILL);
    reap(process, 0, /*block=*/true);
  }
  for (const auto& [uid, pod] : pods_) {
    if (!pod->netns.empty()) (void)runTool({"ip", "netns", "del", pod->netns}, networkLog_);
  }
  (void)runTool({"ip", "link", "del", bridge_}, networkLog_);
}

Status ProcessRunner::setUpNetwork(PodSandbox& pod) {
  // The kubelet model gives a new pod the IP of a pod that has ended (as a CNI plugin's IPAM
  // does once the kubelet tore the ended pod's sandbox down): that pod's network goes now, so
  // that one address answers from one place.
  for (auto& [uid, other] : pods_) {
    if (other.get() == &pod || other->ip != pod.ip || other->netns.empty()) continue;
    (void)runTool({"ip", "netns", "del", other->netns}, networkLog_);
    other->netns.clear();
  }
  const std::string netns = netnsPrefix_ + hexId(pod.uid, 12);
  const std::string veth = "kv" + hexId(options_.stateDir + "/" + pod.uid, 12);
  if (Status made = runTool({"ip", "netns", "add", netns}, networkLog_); !made.isOk()) return made;
  pod.netns = netns;
  const std::vector<std::vector<std::string>> steps = {
      {"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns},
      {"ip", "link", "set", veth, "master", bridge_, "up"},
      {"ip", "-n", netns, "addr", "add", pod.ip + "/8", "dev", "eth0"},
      {"ip", "-n", netns, "link", "set", "eth0", "up"},
      {"ip", "-n", netns, "link", "set", "lo", "up"},
      {"ip", "route", "replace", pod.ip + "/32", "dev", bridge_, "src", std::string(kHostAddress)}};
  for (const auto& step : steps) {
    if (Status done = runTool(step, networkLog_); !done.isOk()) return done;
  }
  // The host may still know the ended pod's hardware address for this IP.
  (void)runTool({"ip", "neigh", "flush", "to", pod.ip, "dev", bridge_}, networkLog_);
  return Status::ok();
}

ProcessRunner::PodSandbox& ProcessRunner::sandboxFor(const ContainerRef& ref) {
  const api::Pod& pod = ref.pod;
  if (auto it = pods_.find(pod.metadata.uid); it != pods_.end()) return *it->second;
  auto sandbox = std::make_unique<PodSandbox>();
  PodSandbox& s = *sandbox;
  pods_.emplace(pod.metadata.uid, std::move(sandbox));
  s.uid = pod.metadata.uid;
  s.ns = pod.metadata.namespaceName;
  s.name = pod.metadata.name;
  s.hostname = pod.spec.hostname.empty() ? pod.metadata.name : pod.spec.hostname;
  s.subdomain = pod.spec.subdomain;
  s.ip = std::string(ref.podIP);
  s.searches = pod.spec.dnsSearches;
  s.dir = options_.stateDir + "/pods/" + s.ns + "_" + s.name + "_" + s.uid;
  std::error_code error;
  fs::create_directories(s.dir + "/volumes", error);
  if (error) {
    s.error = "create " + s.dir + ": " + error.message();
    return s;
  }
  if (s.ip.empty()) {
    s.error = "the pod has no IP";
    return s;
  }
  if (Status network = setUpNetwork(s); !network.isOk()) {
    s.error = network.message();
    return s;
  }
  const auto spec = pod.raw.find("spec");
  for (const auto& volume :
       spec == pod.raw.end() ? api::Json::array() : jsonArray(*spec, "volumes")) {
    const std::string name = jsonString(volume, "name");
    std::string source = s.dir + "/volumes/" + name;
    if (volume.contains("persistentVolumeClaim")) {
      source = options_.volumeRoot + "/" + s.ns + "/" +
               jsonString(volume["persistentVolumeClaim"], "claimName");
    } else if (volume.contains("hostPath")) {
      source = jsonString(volume["hostPath"], "path");
    } else if (!volume.contains("emptyDir")) {
      // Every pod has one: the service account token's (secret, or projected from 1.21).
      logLine(LogLevel::kDebug, "pod " + s.ns + "/" + s.name + ": volume " + name +
                                    " is of a kind process mode does not fill: empty");
    }
    fs::create_directories(source, error);
    s.volumes[name] = source;
  }
  std::ofstream(s.dir + "/resolv.conf") << [&] {
    std::string search = s.ns + ".svc." + options_.clusterDomain + " svc." +
                         options_.clusterDomain + " " + options_.clusterDomain;
    for (const auto& domain : s.searches) search += " " + domain;
    return "search " + search + "\nnameserver 127.0.0.1\noptions ndots:5\n";
  }();
  writeHostsFiles(s.ns);
  runInitContainers(pod, s);
  return s;
}

void ProcessRunner::writeHostsFiles(const std::string& ns) {
  std::vector<const PodSandbox*> members;
  for (const auto& [uid, pod] : pods_) {
    if (pod->ns == ns && !pod->ip.empty() && pod->error.empty()) members.push_back(pod.get());
  }
  const std::string serviceSuffix = "." + ns + ".svc." + options_.clusterDomain;
  for (const PodSandbox* pod : members) {
    std::string text =
        "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"
        "::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n"
        "fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";
    if (!pod->subdomain.empty()) {
      text += pod->ip + "\t" + pod->hostname + "." + pod->subdomain + serviceSuffix + "\t" +
              pod->hostname + "\n";
    } else {
      text += pod->ip + "\t" + pod->hostname + "\n";
    }
    text += "# kubeslurm-nodesim: the cluster DNS's records of the namespace's pods\n";
    for (const PodSandbox* other : members) {
      if (other == pod || other->subdomain.empty()) continue;
      const std::string domain = other->subdomain + serviceSuffix;
      text += other->ip + "\t" + other->hostname + "." + domain + "\t" + other->hostname + "." +
              other->subdomain;
      if (std::find(pod->searches.begin(), pod->searches.end(), domain) != pod->searches.end()) {
        text += "\t" + other->hostname;
      }
      text += "\n";
    }
    // In place: the file is bind-mounted into the pod's containers.
    std::ofstream(pod->dir + "/hosts", std::ios::trunc) << text;
  }
}

std::string ProcessRunner::containerFiles(const PodSandbox& sandbox, const std::string& container,
                                          std::int32_t restartCount) {
  return sandbox.dir + "/" + container + "/" + std::to_string(restartCount);
}

StatusOr<pid_t> ProcessRunner::spawn(const api::Pod& pod, const api::Container& container,
                                     std::int32_t restartCount, PodSandbox& sandbox) {
  const std::string base = containerFiles(sandbox, container.name, restartCount);
  std::error_code error;
  fs::create_directories(base + ".root", error);
  if (error) return internalError("create " + base + ".root: " + error.message());
  const std::string log = base + ".log";

  ContainerSpec spec;
  spec.hostname = sandbox.hostname;
  spec.netns = "/run/netns/" + sandbox.netns;
  spec.rootfs = base + ".root";
  spec.workingDir = container.workingDir;

  std::map<std::string, std::string> defined;
  std::vector<std::string> order;
  auto define = [&](const std::string& name, std::string value) {
    if (!defined.contains(name)) order.push_back(name);
    defined[name] = std::move(value);
  };
  for (const api::EnvVar& var : container.env) {
    const auto from = var.raw.find("valueFrom");
    if (from == var.raw.end()) {
      define(var.name, expandReferences(var.value, defined));
      continue;
    }
    StatusOr<std::string> value = invalidArgument("env " + var.name + ": unsupported valueFrom");
    for (const auto& [kind, resource] :
         {std::pair{"secretKeyRef", "secrets"}, std::pair{"configMapKeyRef", "configmaps"}}) {
      if (!from->contains(kind)) continue;
      const api::Json& ref = (*from)[kind];
      value = options_.lookupKey ? options_.lookupKey(resource, sandbox.ns, jsonString(ref, "name"),
                                                      jsonString(ref, "key"))
                                 : failedPrecondition("no API access");
      if (!value.isOk() && ref.value("optional", false)) value = std::string();
    }
    if (from->contains("fieldRef")) {
      value = fieldValue(pod, sandbox.ip, jsonString((*from)["fieldRef"], "fieldPath"));
    }
    if (!value.isOk()) {
      return failedPrecondition("env " + var.name + ": " + std::string(value.status().message()));
    }
    define(var.name, *value);
  }
  if (!defined.contains("PATH")) define("PATH", std::string(kDefaultPath));
  if (!defined.contains("HOSTNAME")) define("HOSTNAME", sandbox.hostname);
  if (!defined.contains("HOME")) define("HOME", "/root");
  for (const auto& name : order) spec.env.push_back(name + "=" + defined[name]);

  for (const auto& part : {container.command, container.args}) {
    for (const auto& word : part) spec.argv.push_back(expandReferences(word, defined));
  }
  if (container.command.empty()) {
    return failedPrecondition(
        "the container has no command: process mode runs the host as every image and knows no "
        "image's entrypoint");
  }

  for (const auto& content : options_.imageContent) {
    if (content.image == container.image) {
      spec.mounts.push_back({content.hostDir, content.path, /*readOnly=*/true});
    }
  }
  for (const auto& mount : jsonArray(container.raw, "volumeMounts")) {
    const auto source = sandbox.volumes.find(jsonString(mount, "name"));
    if (source == sandbox.volumes.end()) {
      return failedPrecondition("volumeMount " + jsonString(mount, "name") + ": no such volume");
    }
    std::string path = source->second;
    if (const std::string sub = jsonString(mount, "subPath"); !sub.empty()) {
      path += "/" + sub;
      fs::create_directories(path, error);
    }
    spec.mounts.push_back({path, jsonString(mount, "mountPath"), mount.value("readOnly", false)});
  }
  // The kubelet's termination message file: empty, writable, read back when the container ends.
  std::string terminationPath = jsonString(container.raw, "terminationMessagePath");
  if (terminationPath.empty()) terminationPath = "/dev/termination-log";
  std::ofstream(base + ".termination-log", std::ios::trunc).flush();
  spec.mounts.push_back({base + ".termination-log", terminationPath, false});
  spec.mounts.push_back({sandbox.dir + "/hosts", "/etc/hosts", false});
  spec.mounts.push_back({sandbox.dir + "/resolv.conf", "/etc/resolv.conf", false});

  const std::string specPath = base + ".spec.json";
  std::ofstream(specPath) << encodeContainerSpec(spec).dump(2) << '\n';
  return spawnLogged({options_.helperBinary, "run-container", specPath}, log);
}

void ProcessRunner::runInitContainers(const api::Pod& pod, PodSandbox& sandbox) {
  for (const api::Container& init : pod.spec.initContainers) {
    auto pid = spawn(pod, init, 0, sandbox);
    if (!pid.isOk()) {
      sandbox.error = "init container " + init.name + ": " + std::string(pid.status().message());
      return;
    }
    int status = 0;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.initTimeoutMs);
    while (waitpid(*pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(*pid, SIGKILL);
        waitpid(*pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (const std::int32_t code = exitCodeOf(status); code != 0) {
      sandbox.error = "init container " + init.name + " exited with " + std::to_string(code) +
                      " (its log: " + containerFiles(sandbox, init.name, 0) + ".log)";
      sandbox.failCode = code;
      return;
    }
  }
}

void ProcessRunner::start(const ContainerRef& ref, std::int64_t nowMs) {
  PodSandbox& sandbox = sandboxFor(ref);
  Process& process = processes_[ProcessKey{sandbox.uid, ref.container.name, ref.restartCount}];
  process = Process{};
  const std::string files = containerFiles(sandbox, ref.container.name, ref.restartCount);
  process.terminationLog = files + ".termination-log";
  std::string error = sandbox.error;
  std::int32_t code = sandbox.failCode;
  if (error.empty()) {
    auto pid = spawn(ref.pod, ref.container, ref.restartCount, sandbox);
    if (pid.isOk()) {
      process.pid = *pid;
      return;
    }
    error = pid.status().message();
    code = kStartFailure;
  }
  appendToFile(files + ".log", "kubeslurm-nodesim: the container could not start: " + error + "\n");
  process.exited = true;
  process.exitCode = code;
  process.finishedAtMs = nowMs;
}

void ProcessRunner::reap(Process& process, std::int64_t nowMs, bool block) {
  if (process.exited || process.pid <= 0) return;
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(process.pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (done != process.pid) return;
  process.exited = true;
  process.exitCode = exitCodeOf(status);
  process.finishedAtMs = nowMs;
  // The kubelet reads at most kTerminationMessageLimit bytes of it.
  std::ifstream in(process.terminationLog, std::ios::binary);
  process.message.resize(kTerminationMessageLimit);
  in.read(process.message.data(), static_cast<std::streamsize>(process.message.size()));
  process.message.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
}

RunStatus ProcessRunner::exited(const Process& process) {
  return {true, process.exitCode, process.finishedAtMs, process.message, std::nullopt};
}

ProcessRunner::Process* ProcessRunner::reaped(const ContainerRef& ref, std::int64_t nowMs) {
  const auto it =
      processes_.find(ProcessKey{ref.pod.metadata.uid, ref.container.name, ref.restartCount});
  if (it == processes_.end()) return nullptr;
  reap(it->second, nowMs, /*block=*/false);
  return &it->second;
}

RunStatus ProcessRunner::poll(const ContainerRef& ref, std::int64_t /*startedAtMs*/,
                              std::int64_t nowMs) {
  const Process* process = reaped(ref, nowMs);
  if (process == nullptr) return {true, kLost, nowMs, {}, std::nullopt};
  if (process->exited) return exited(*process);
  return {false, 0, 0, {}, nowMs + options_.pollIntervalMs};
}

RunStatus ProcessRunner::stop(const ContainerRef& ref, std::int64_t /*startedAtMs*/,
                              std::int64_t killAtMs, std::int64_t nowMs) {
  Process* found = reaped(ref, nowMs);
  if (found == nullptr) return {true, kLost, nowMs, {}, std::nullopt};
  Process& process = *found;
  if (process.exited) return exited(process);
  if (!process.terminated) {
    kill(process.pid, SIGTERM);
    process.terminated = true;
  }
  if (nowMs >= killAtMs && !process.killed) {
    kill(process.pid, SIGKILL);
    process.killed = true;
  }
  reap(process, nowMs, /*block=*/false);
  if (process.exited) return exited(process);
  const std::int64_t next = nowMs + options_.pollIntervalMs;
  return {false, 0, 0, {}, process.killed ? next : std::min(next, killAtMs)};
}

void ProcessRunner::forget(std::string_view podUid) {
  for (auto it = processes_.begin(); it != processes_.end();) {
    if (std::get<0>(it->first) != podUid) {
      ++it;
      continue;
    }
    if (it->second.pid > 0 && !it->second.exited) kill(it->second.pid, SIGKILL);
    reap(it->second, 0, /*block=*/true);
    it = processes_.erase(it);
  }
  const auto pod = pods_.find(podUid);
  if (pod == pods_.end()) return;
  const std::string ns = pod->second->ns;
  const std::string ip = pod->second->ip;
  const bool hadNetwork = !pod->second->netns.empty();
  if (hadNetwork) (void)runTool({"ip", "netns", "del", pod->second->netns}, networkLog_);
  pods_.erase(pod);
  // A pod IP is free again once its pod has ended, and the kubelet model may already have given
  // it to a new pod: the route stays while a pod's network holds it.
  const bool held = std::any_of(pods_.begin(), pods_.end(), [&ip](const auto& other) {
    return other.second->ip == ip && !other.second->netns.empty();
  });
  if (hadNetwork && !held) {
    (void)runTool({"ip", "route", "del", ip + "/32", "dev", bridge_}, networkLog_);
  }
  writeHostsFiles(ns);
}

}  // namespace kubeslurm::nodesim
