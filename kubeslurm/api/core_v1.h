// Typed views of the Kubernetes objects the operator and the node simulator read and write:
// core/v1 Node, Pod, Binding, Service, Event, Namespace, ConfigMap and coordination.k8s.io/v1
// Lease. Our own kinds (SlurmJob, Partition, Account) are in kubeslurm_types.h.
//
// Round-trip rule. Every object keeps `raw`, the JSON it was decoded from. encode() starts from
// `raw` and overwrites every field the struct models (an empty optional or empty container
// removes the key), so fields the struct does not model survive unchanged: an update never
// drops what a newer API server, an admission webhook or another controller added. Nested
// structs with their own `raw` (containers, owner references, conditions...) follow the same
// rule, matched by position.
//
// decode() never throws: a field of the wrong JSON type is an kInvalidArgument error naming its
// path ("spec.containers[0].resources.requests: expected an object"). Missing fields decode to
// their defaults, as Go's encoding/json does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/api/quantity.h"
#include "kubeslurm/api/timestamp.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::api {

using Json = nlohmann::json;

// A resource.Quantity ("8", "500m", "64Gi", "1e3") as the API server writes it. Kept as text so
// that encode() writes back exactly what was read; use parseQuantity* (quantity.h) for
// arithmetic.
using Quantity = std::string;
using ResourceList = std::map<std::string, Quantity>;

// --- Node -------------------------------------------------------------------------------------

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  Json raw = Json::object();
};

struct Node {
  ObjectMeta metadata;
  bool unschedulable = false;  // spec.unschedulable (cordon)
  std::vector<Taint> taints;
  std::string providerID;
  ResourceList capacity;     // status.capacity
  ResourceList allocatable;  // status.allocatable
  std::vector<Condition> conditions;
  std::vector<std::pair<std::string, std::string>> addresses;  // (type, address)
  Json raw = Json::object();
};

// The node's Ready condition: "True", "False", "Unknown", or "" when it has none.
std::string_view nodeReadyStatus(const Node& node);

// --- Pod --------------------------------------------------------------------------------------

struct EnvVar {
  std::string name;
  std::string value;  // valueFrom is kept in raw
  Json raw = Json::object();
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  ResourceRequirements resources;
  std::string workingDir;
  Json raw = Json::object();
};

struct ContainerState {
  enum class Kind { kNone, kWaiting, kRunning, kTerminated };
  Kind kind = Kind::kNone;
  std::string reason;                      // waiting / terminated
  std::string message;                     // waiting / terminated
  std::optional<std::int64_t> startedAt;   // running / terminated
  std::optional<std::int64_t> finishedAt;  // terminated
  std::int32_t exitCode = 0;               // terminated
  std::optional<std::int32_t> signal;      // terminated
};

struct ContainerStatus {
  std::string name;
  bool ready = false;
  std::optional<bool> started;
  std::int32_t restartCount = 0;
  std::string image;
  std::string imageID;
  std::string containerID;
  ContainerState state;
  ContainerState lastState;
  Json raw = Json::object();
};

struct Toleration {
  std::string key;
  std::string operator_;  // "Exists" or "Equal"
  std::string value;
  std::string effect;
  std::optional<std::int64_t> tolerationSeconds;
  Json raw = Json::object();
};

struct PodSpec {
  std::string nodeName;
  std::string schedulerName;
  std::string hostname;
  std::string subdomain;
  std::string restartPolicy;  // Always, OnFailure, Never
  std::optional<std::int64_t> terminationGracePeriodSeconds;
  std::optional<std::int64_t> activeDeadlineSeconds;
  std::string priorityClassName;
  std::optional<std::int32_t> priority;
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::vector<std::string> dnsSearches;  // spec.dnsConfig.searches
  std::vector<Container> initContainers;
  std::vector<Container> containers;
  ResourceList overhead;  // spec.overhead (RuntimeClass pod overhead), added to the request
};

struct PodStatus {
  std::string phase;   // Pending, Running, Succeeded, Failed, Unknown ("" = not yet reported)
  std::string reason;  // e.g. OutOfnvidia.com/gpu, NodeLost, Evicted
  std::string message;
  std::string podIP;
  std::string hostIP;
  std::optional<std::int64_t> startTime;
  std::vector<Condition> conditions;
  std::vector<ContainerStatus> initContainerStatuses;
  std::vector<ContainerStatus> containerStatuses;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  Json raw = Json::object();
};

// Succeeded or Failed: the kubelet no longer counts the pod against its node. A bound pod that
// is not terminal holds its requests (Invariant 4 of DESIGN.md).
bool podIsTerminal(const Pod& pod);
// The pod's effective request for `resource` in whole units, as the scheduler computes it
// (computePodResourceRequest in pkg/scheduler/framework/plugins/noderesources/fit.go, v1.20):
// max(sum over containers, max over init containers) plus spec.overhead. Each container's
// quantity is rounded up on its own (Quantity.Value()) before summing, as there. A limit stands
// in for a missing request of the same resource, as the API server's SetDefaults_Pod fills it
// (nvidia.com/gpu has only limits in most manifests; a pod not yet defaulted gets the same
// answer). kInvalidArgument for a malformed quantity, kOutOfRange on overflow.
StatusOr<std::int64_t> podRequest(const Pod& pod, std::string_view resource);
// The same in thousandths (Quantity.MilliValue()), as the scheduler counts cpu.
StatusOr<std::int64_t> podRequestMilli(const Pod& pod, std::string_view resource);

// --- The rest ---------------------------------------------------------------------------------

struct ServicePort {
  std::string name;
  std::int32_t port = 0;
  std::string protocol;  // TCP by default on the server
  std::optional<std::int32_t> targetPort;
  Json raw = Json::object();
};

struct Service {
  ObjectMeta metadata;
  std::string clusterIP;  // "None" for a headless Service
  std::map<std::string, std::string> selector;
  std::vector<ServicePort> ports;
  bool publishNotReadyAddresses = false;
  Json raw = Json::object();
};

struct ObjectReference {
  std::string apiVersion;
  std::string kind;
  std::string namespaceName;
  std::string name;
  std::string uid;
  std::string resourceVersion;
};

// core/v1 Event (the form `kubectl describe` reads in v1.20).
struct Event {
  ObjectMeta metadata;
  ObjectReference involvedObject;
  std::string type;  // Normal, Warning
  std::string reason;
  std::string message;
  std::string sourceComponent;  // source.component
  std::string sourceHost;
  std::optional<std::int64_t> firstTimestamp;  // Unix seconds
  std::optional<std::int64_t> lastTimestamp;
  std::int32_t count = 0;
  std::string reportingController;  // JSON "reportingComponent", as the Go field's tag says
  std::string reportingInstance;
  std::string action;
  std::optional<std::int64_t> eventTime;  // Unix microseconds (MicroTime)
  Json raw = Json::object();
};

struct Namespace {
  ObjectMeta metadata;
  std::string phase;  // Active, Terminating
  Json raw = Json::object();
};

struct ConfigMap {
  ObjectMeta metadata;
  std::map<std::string, std::string> data;
  Json raw = Json::object();
};

// coordination.k8s.io/v1 Lease.
struct Lease {
  ObjectMeta metadata;
  std::string holderIdentity;
  std::optional<std::int32_t> leaseDurationSeconds;
  std::optional<std::int64_t> acquireTime;  // Unix microseconds (MicroTime)
  std::optional<std::int64_t> renewTime;
  std::optional<std::int32_t> leaseTransitions;
  Json raw = Json::object();
};

// decode*: the object as the API server sent it (or as a user wrote it). encode*: the JSON to
// send, with apiVersion and kind set. Both are total over their input: encode never fails.
StatusOr<Node> decodeNode(const Json& object);
Json encodeNode(const Node& node);
StatusOr<Pod> decodePod(const Json& object);
Json encodePod(const Pod& pod);
StatusOr<Service> decodeService(const Json& object);
Json encodeService(const Service& service);
StatusOr<Event> decodeEvent(const Json& object);
Json encodeEvent(const Event& event);
StatusOr<Namespace> decodeNamespace(const Json& object);
Json encodeNamespace(const Namespace& ns);
StatusOr<ConfigMap> decodeConfigMap(const Json& object);
Json encodeConfigMap(const ConfigMap& configMap);
StatusOr<Lease> decodeLease(const Json& object);
Json encodeLease(const Lease& lease);

namespace detail {
// Shared with the kinds that carry tolerations of their own (a Partition's).
Toleration decodeToleration(Decoder& d, const Json& in, const Path& at);
Json encodeToleration(const Toleration& t);
}  // namespace detail

inline constexpr std::string_view kCoreApiVersion = "v1";
inline constexpr std::string_view kCoordinationApiVersion = "coordination.k8s.io/v1";

}  // namespace kubeslurm::api
