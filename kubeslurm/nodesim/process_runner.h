// The node simulator's process mode: containers run as real processes of this host, each pod in
// namespaces of its own, as a container runtime would run them (needs root: it makes network
// namespaces, veth pairs and a bridge, and mounts).
//
// A pod (set up when its first container starts):
//  - a network namespace `ksim-<hash>` with `eth0` (its pod IP, the kubelet model's) on a veth
//    pair whose host end sits on one bridge per simulator, and `lo`: the pods of all simulated
//    nodes share one L2 network, and a server binding 0.0.0.0 in one pod does not collide with
//    another pod's. The host reaches each pod as a node reaches its own (a route per pod IP over
//    the bridge, which holds the host's address 10.255.255.254/32), so that the operator, on
//    the host in the sandbox, can proxy login hosts' steps to the pods' step agents;
//  - an /etc/hosts as the kubelet writes it (localhost, the pod's own hostname.subdomain FQDN),
//    plus the records a cluster DNS would serve for the pods of the same namespace that have a
//    hostname and subdomain (a headless Service per subdomain, as the operator creates): the
//    FQDN, `hostname.subdomain`, and `hostname` where the pod's dnsConfig searches that domain;
//    rewritten in place whenever such a pod starts or goes. /etc/resolv.conf searches as the
//    kubelet's does and names 127.0.0.1 as the server, so any other name fails at once;
//  - volumes: emptyDir in the pod's directory, persistentVolumeClaim as <volume root>/<ns>/<claim>
//    (shared by every pod that mounts it), hostPath as is; other kinds (projected service account
//    tokens, configMap, secret) are empty directories (logged at debug level);
//  - init containers run to completion, in order, before the first container starts (the model
//    reports them Completed then); one that fails fails every container of the pod.
//
// A container: `kubeslurm-nodesim run-container SPEC` (container_exec.h) joins the pod's network
// namespace, takes mount, uts, ipc and pid namespaces of its own, builds a root from the host's
// (the host is every image) with the volume mounts, the pod's hostname, /etc/hosts and
// /etc/resolv.conf, and an image's content where --image-content names one, then runs the
// command as pid 1 of its pid namespace with the environment the pod spec gives (value,
// secretKeyRef, configMapKeyRef, fieldRef, $(VAR) references). When pid 1 exits, every process
// of the container goes with it, as in a container. Stdout and stderr go to
// <state dir>/pods/<ns>_<pod>_<uid>/<container>/<restart>.log (the kubelet's /var/log/pods
// layout), kept after the pod is gone. The file at terminationMessagePath (/dev/termination-log)
// becomes the terminated state's message, as the kubelet reads it (at most 4096 bytes).
//
// Not modelled: runAsUser and the rest of the securityContext (everything runs as root),
// resource limits (no cgroups), envFrom, probes, the service account token's content.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <sys/types.h>

#include "kubeslurm/base/status.h"
#include "kubeslurm/nodesim/runner.h"

namespace kubeslurm::nodesim {

// An image's own files: the host directory or file `hostDir` appears at `path` in its
// containers.
struct ImageContent {
  std::string image;
  std::string hostDir;
  std::string path;
};
// "IMAGE=HOSTPATH:PATH" (the image may carry a tag or digest: the last '=' splits). HOSTPATH
// is a directory or a file.
StatusOr<ImageContent> parseImageContent(std::string_view text);

// $(NAME) references in env values, command and args, as the kubelet expands them: a defined
// name is replaced, $$ is a '$', anything else stays as written.
std::string expandReferences(const std::string& text,
                             const std::map<std::string, std::string>& defined);

struct ProcessRunnerOptions {
  std::string stateDir;      // pods/, the network's names; created
  std::string helperBinary;  // the binary that serves `run-container` (this one)
  std::string volumeRoot;    // persistentVolumeClaim volumes; "" = <stateDir>/volumes
  std::vector<ImageContent> imageContent;
  std::string clusterDomain = "cluster.local";
  // A key of a Secret or ConfigMap (`resource` is "secrets" or "configmaps"), decoded.
  std::function<StatusOr<std::string>(const std::string& resource, const std::string& ns,
                                      const std::string& name, const std::string& key)>
      lookupKey;
  std::int64_t pollIntervalMs = 200;
  std::int64_t initTimeoutMs = 120'000;
};

class ProcessRunner final : public Runner {
 public:
  // Creates the state directory and the bridge (a stale one of the same name is replaced).
  static StatusOr<std::unique_ptr<ProcessRunner>> create(ProcessRunnerOptions options);
  ~ProcessRunner() override;  // kills what still runs, removes the namespaces and the bridge
  ProcessRunner(const ProcessRunner&) = delete;
  ProcessRunner& operator=(const ProcessRunner&) = delete;

  void start(const ContainerRef& ref, std::int64_t nowMs) override;
  RunStatus poll(const ContainerRef& ref, std::int64_t startedAtMs, std::int64_t nowMs) override;
  RunStatus stop(const ContainerRef& ref, std::int64_t startedAtMs, std::int64_t killAtMs,
                 std::int64_t nowMs) override;
  void forget(std::string_view podUid) override;

 private:
  struct PodSandbox;
  struct Process {
    pid_t pid = -1;  // -1: never started (the pod's set-up failed)
    bool exited = false;
    std::int32_t exitCode = 0;
    std::int64_t finishedAtMs = 0;
    bool terminated = false;     // SIGTERM sent
    bool killed = false;         // SIGKILL sent
    std::string terminationLog;  // the host file behind terminationMessagePath
    std::string message;         // its content once the container has exited
  };
  using ProcessKey = std::tuple<std::string, std::string, std::int32_t>;

  explicit ProcessRunner(ProcessRunnerOptions options);
  Status setUpBridge();
  // <pod dir>/<container>/<restart>: the stem of an incarnation's .log, .spec.json, .root and
  // .termination-log.
  static std::string containerFiles(const PodSandbox& sandbox, const std::string& container,
                                    std::int32_t restartCount);
  PodSandbox& sandboxFor(const ContainerRef& ref);
  Status setUpNetwork(PodSandbox& pod);
  void runInitContainers(const api::Pod& pod, PodSandbox& sandbox);
  StatusOr<pid_t> spawn(const api::Pod& pod, const api::Container& container,
                        std::int32_t restartCount, PodSandbox& sandbox);
  void writeHostsFiles(const std::string& ns);
  void reap(Process& process, std::int64_t nowMs, bool block);
  Process* reaped(const ContainerRef& ref, std::int64_t nowMs);  // nullptr: never started here
  static RunStatus exited(const Process& process);

  ProcessRunnerOptions options_;
  // This simulator's network objects carry a hash of its state directory in their names.
  std::string netnsPrefix_;
  std::string bridge_;
  std::string networkLog_;  // every `ip` command run, with its output
  std::map<std::string, std::unique_ptr<PodSandbox>, std::less<>> pods_;  // by pod uid
  std::map<ProcessKey, Process> processes_;
};

}  // namespace kubeslurm::nodesim
