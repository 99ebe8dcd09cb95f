#include "kubeslurm/api/core_v1.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "kubeslurm/api/json_fields.h"
#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/base/text.h"

namespace kubeslurm::api {
namespace {

using detail::decodeCondition;
using detail::decodeList;
using detail::decodeObject;
using detail::Decoder;
using detail::decodeToleration;
using detail::encodeCondition;
using detail::encodeHeader;
using detail::encodeList;
using detail::encodeToleration;
using detail::Path;

// --- Node -------------------------------------------------------------------------------------

Taint decodeTaint(Decoder& d, const Json& in, const Path& at) {
  Taint t;
  t.key = d.text(in, "key", at);
  t.value = d.text(in, "value", at);
  t.effect = d.text(in, "effect", at);
  t.raw = in;
  return t;
}

Json encodeTaint(const Taint& t) {
  Json out = detail::baseObject(t.raw);
  detail::putText(out, "key", t.key, false);
  detail::putText(out, "value", t.value);
  detail::putText(out, "effect", t.effect, false);
  return out;
}

// --- Pod --------------------------------------------------------------------------------------

EnvVar decodeEnvVar(Decoder& d, const Json& in, const Path& at) {
  EnvVar e;
  e.name = d.text(in, "name", at);
  e.value = d.text(in, "value", at);
  e.raw = in;
  return e;
}

Json encodeEnvVar(const EnvVar& e) {
  Json out = detail::baseObject(e.raw);
  detail::putText(out, "name", e.name, false);
  detail::putText(out, "value", e.value);
  return out;
}

Container decodeContainer(Decoder& d, const Json& in, const Path& at) {
  Container c;
  c.name = d.text(in, "name", at);
  c.image = d.text(in, "image", at);
  c.command = d.strings(in, "command", at);
  c.args = d.strings(in, "args", at);
  c.env = decodeList<EnvVar>(d, in, "env", at, decodeEnvVar);
  if (const Json* resources = d.object(in, "resources", at)) {
    const Path here = at.child("resources");
    c.resources.requests = d.quantityMap(*resources, "requests", here);
    c.resources.limits = d.quantityMap(*resources, "limits", here);
  }
  c.workingDir = d.text(in, "workingDir", at);
  c.raw = in;
  return c;
}

Json encodeContainer(const Container& c) {
  Json out = detail::baseObject(c.raw);
  detail::putText(out, "name", c.name, false);
  detail::putText(out, "image", c.image);
  detail::putStrings(out, "command", c.command);
  detail::putStrings(out, "args", c.args);
  encodeList(out, "env", c.env, encodeEnvVar);
  Json resources = detail::subObject(out, "resources");
  detail::putQuantityMap(resources, "requests", c.resources.requests);
  detail::putQuantityMap(resources, "limits", c.resources.limits);
  detail::putJson(out, "resources", std::move(resources));
  detail::putText(out, "workingDir", c.workingDir);
  return out;
}

ContainerState decodeContainerState(Decoder& d, const Json& in, const Path& at) {
  ContainerState s;
  // A state has one member; were there several, the most advanced wins.
  if (const Json* t = d.object(in, "terminated", at)) {
    const Path here = at.child("terminated");
    s.kind = ContainerState::Kind::kTerminated;
    s.reason = d.text(*t, "reason", here);
    s.message = d.text(*t, "message", here);
    s.startedAt = d.time(*t, "startedAt", here);
    s.finishedAt = d.time(*t, "finishedAt", here);
    s.exitCode = d.int32(*t, "exitCode", here).value_or(0);
    s.signal = d.int32(*t, "signal", here);
  } else if (const Json* r = d.object(in, "running", at)) {
    s.kind = ContainerState::Kind::kRunning;
    s.startedAt = d.time(*r, "startedAt", at.child("running"));
  } else if (const Json* w = d.object(in, "waiting", at)) {
    const Path here = at.child("waiting");
    s.kind = ContainerState::Kind::kWaiting;
    s.reason = d.text(*w, "reason", here);
    s.message = d.text(*w, "message", here);
  }
  return s;
}

bool sameState(const ContainerState& a, const ContainerState& b) {
  return a.kind == b.kind && a.reason == b.reason && a.message == b.message &&
         a.startedAt == b.startedAt && a.finishedAt == b.finishedAt && a.exitCode == b.exitCode &&
         a.signal == b.signal;
}

// Writes `s` into the state object `into`: unchanged when it already decodes to `s`, updated
// in place when the kind is the same (keeping e.g. terminated.containerID), replaced otherwise.
void encodeContainerState(const ContainerState& s, Json& parent, const char* key) {
  Json state = detail::subObject(parent, key);
  Decoder probe;
  if (sameState(decodeContainerState(probe, state, Path{}), s) && probe.ok()) return;
  const char* kindKey = nullptr;
  switch (s.kind) {
    case ContainerState::Kind::kWaiting:
      kindKey = "waiting";
      break;
    case ContainerState::Kind::kRunning:
      kindKey = "running";
      break;
    case ContainerState::Kind::kTerminated:
      kindKey = "terminated";
      break;
    case ContainerState::Kind::kNone:
      break;
  }
  Json inner = kindKey != nullptr ? detail::subObject(state, kindKey) : Json::object();
  state = Json::object();
  if (kindKey != nullptr) {
    if (s.kind != ContainerState::Kind::kRunning) {
      detail::putText(inner, "reason", s.reason);
      detail::putText(inner, "message", s.message);
    }
    if (s.kind != ContainerState::Kind::kWaiting) detail::putTime(inner, "startedAt", s.startedAt);
    if (s.kind == ContainerState::Kind::kTerminated) {
      detail::putTime(inner, "finishedAt", s.finishedAt);
      detail::putInteger(inner, "exitCode", s.exitCode, false);
      if (!inner.contains("exitCode")) inner["exitCode"] = s.exitCode;
      detail::putOptionalInteger(inner, "signal", s.signal);
    }
    state[kindKey] = std::move(inner);
  }
  parent[key] = std::move(state);
}

ContainerStatus decodeContainerStatus(Decoder& d, const Json& in, const Path& at) {
  ContainerStatus s;
  s.name = d.text(in, "name", at);
  s.ready = d.boolean(in, "ready", at);
  s.started = d.optionalBoolean(in, "started", at);
  s.restartCount = d.int32(in, "restartCount", at).value_or(0);
  s.image = d.text(in, "image", at);
  s.imageID = d.text(in, "imageID", at);
  s.containerID = d.text(in, "containerID", at);
  if (const Json* state = d.object(in, "state", at)) {
    s.state = decodeContainerState(d, *state, at.child("state"));
  }
  if (const Json* last = d.object(in, "lastState", at)) {
    s.lastState = decodeContainerState(d, *last, at.child("lastState"));
  }
  s.raw = in;
  return s;
}

Json encodeContainerStatus(const ContainerStatus& s) {
  Json out = detail::baseObject(s.raw);
  // name, ready, restartCount, image and imageID have no omitempty in Go.
  detail::putText(out, "name", s.name, false);
  detail::putBool(out, "ready", s.ready, false);
  detail::putOptionalBool(out, "started", s.started);
  detail::putInteger(out, "restartCount", s.restartCount, false);
  detail::putText(out, "image", s.image, false);
  detail::putText(out, "imageID", s.imageID, false);
  detail::putText(out, "containerID", s.containerID);
  encodeContainerState(s.state, out, "state");
  encodeContainerState(s.lastState, out, "lastState");
  return out;
}

void decodePodSpec(Decoder& d, const Json& in, const Path& at, PodSpec& spec) {
  spec.nodeName = d.text(in, "nodeName", at);
  spec.schedulerName = d.text(in, "schedulerName", at);
  spec.hostname = d.text(in, "hostname", at);
  spec.subdomain = d.text(in, "subdomain", at);
  spec.restartPolicy = d.text(in, "restartPolicy", at);
  spec.terminationGracePeriodSeconds = d.int64(in, "terminationGracePeriodSeconds", at);
  spec.activeDeadlineSeconds = d.int64(in, "activeDeadlineSeconds", at);
  spec.priorityClassName = d.text(in, "priorityClassName", at);
  spec.priority = d.int32(in, "priority", at);
  spec.nodeSelector = d.stringMap(in, "nodeSelector", at);
  spec.tolerations = decodeList<Toleration>(d, in, "tolerations", at, decodeToleration);
  if (const Json* dns = d.object(in, "dnsConfig", at)) {
    spec.dnsSearches = d.strings(*dns, "searches", at.child("dnsConfig"));
  }
  spec.initContainers = decodeList<Container>(d, in, "initContainers", at, decodeContainer);
  spec.containers = decodeList<Container>(d, in, "containers", at, decodeContainer);
  spec.overhead = d.quantityMap(in, "overhead", at);
}

void encodePodSpec(const PodSpec& spec, Json& out) {
  detail::putText(out, "nodeName", spec.nodeName);
  detail::putText(out, "schedulerName", spec.schedulerName);
  detail::putText(out, "hostname", spec.hostname);
  detail::putText(out, "subdomain", spec.subdomain);
  detail::putText(out, "restartPolicy", spec.restartPolicy);
  detail::putOptionalInteger(out, "terminationGracePeriodSeconds",
                             spec.terminationGracePeriodSeconds);
  detail::putOptionalInteger(out, "activeDeadlineSeconds", spec.activeDeadlineSeconds);
  detail::putText(out, "priorityClassName", spec.priorityClassName);
  detail::putOptionalInteger(out, "priority", spec.priority);
  detail::putStringMap(out, "nodeSelector", spec.nodeSelector);
  encodeList(out, "tolerations", spec.tolerations, encodeToleration);
  Json dns = detail::subObject(out, "dnsConfig");
  detail::putStrings(dns, "searches", spec.dnsSearches);
  detail::putJson(out, "dnsConfig", std::move(dns));
  encodeList(out, "initContainers", spec.initContainers, encodeContainer);
  // Not omitempty: a pod always has its containers list.
  if (spec.containers.empty() && !out.contains("containers")) {
    out["containers"] = Json::array();
  }
  encodeList(out, "containers", spec.containers, encodeContainer);
  detail::putQuantityMap(out, "overhead", spec.overhead);
}

void decodePodStatus(Decoder& d, const Json& in, const Path& at, PodStatus& status) {
  status.phase = d.text(in, "phase", at);
  status.reason = d.text(in, "reason", at);
  status.message = d.text(in, "message", at);
  status.podIP = d.text(in, "podIP", at);
  status.hostIP = d.text(in, "hostIP", at);
  status.startTime = d.time(in, "startTime", at);
  status.conditions = decodeList<Condition>(d, in, "conditions", at, decodeCondition);
  status.initContainerStatuses =
      decodeList<ContainerStatus>(d, in, "initContainerStatuses", at, decodeContainerStatus);
  status.containerStatuses =
      decodeList<ContainerStatus>(d, in, "containerStatuses", at, decodeContainerStatus);
}

void encodePodStatus(const PodStatus& status, Json& out) {
  detail::putText(out, "phase", status.phase);
  detail::putText(out, "reason", status.reason);
  detail::putText(out, "message", status.message);
  detail::putText(out, "podIP", status.podIP);
  detail::putText(out, "hostIP", status.hostIP);
  detail::putTime(out, "startTime", status.startTime);
  encodeList(out, "conditions", status.conditions, encodeCondition);
  encodeList(out, "initContainerStatuses", status.initContainerStatuses, encodeContainerStatus);
  encodeList(out, "containerStatuses", status.containerStatuses, encodeContainerStatus);
}

// The request of one container for `resource`, its limit standing in (SetDefaults_Pod).
const Quantity* containerRequest(const Container& c, std::string_view resource) {
  if (auto it = c.resources.requests.find(std::string(resource));
      it != c.resources.requests.end()) {
    return &it->second;
  }
  if (auto it = c.resources.limits.find(std::string(resource)); it != c.resources.limits.end()) {
    return &it->second;
  }
  return nullptr;
}

StatusOr<std::int64_t> podRequestScaled(const Pod& pod, std::string_view resource, int scale) {
  auto parse = [&](const Quantity& q) {
    return scale == 3 ? parseQuantityMilli(q) : parseQuantityValue(q);
  };
  const Status overflow = outOfRange("request for " + std::string(resource) + " overflows");
  std::int64_t sum = 0;
  for (const Container& c : pod.spec.containers) {
    const Quantity* q = containerRequest(c, resource);
    if (q == nullptr) continue;
    StatusOr<std::int64_t> v = parse(*q);
    if (!v.isOk()) return v.status();
    if (__builtin_add_overflow(sum, *v, &sum)) return overflow;
  }
  for (const Container& c : pod.spec.initContainers) {
    const Quantity* q = containerRequest(c, resource);
    if (q == nullptr) continue;
    StatusOr<std::int64_t> v = parse(*q);
    if (!v.isOk()) return v.status();
    sum = std::max(sum, *v);
  }
  if (auto it = pod.spec.overhead.find(std::string(resource)); it != pod.spec.overhead.end()) {
    StatusOr<std::int64_t> v = parse(it->second);
    if (!v.isOk()) return v.status();
    if (__builtin_add_overflow(sum, *v, &sum)) return overflow;
  }
  return sum;
}

// --- Service ----------------------------------------------------------------------------------

ServicePort decodeServicePort(Decoder& d, const Json& in, const Path& at) {
  ServicePort p;
  p.name = d.text(in, "name", at);
  p.port = d.int32(in, "port", at).value_or(0);
  p.protocol = d.text(in, "protocol", at);
  // targetPort is an IntOrString; a named port stays in raw.
  if (const Json* target = Decoder::member(in, "targetPort"); target != nullptr) {
    if (target->is_number_integer()) {
      p.targetPort = d.int32(in, "targetPort", at);
    } else if (!target->is_string()) {
      d.fail(at.child("targetPort"), "expected an integer or a string");
    }
  }
  p.raw = in;
  return p;
}

Json encodeServicePort(const ServicePort& p) {
  Json out = detail::baseObject(p.raw);
  detail::putText(out, "name", p.name);
  detail::putInteger(out, "port", p.port, false);
  detail::putText(out, "protocol", p.protocol);
  if (p.targetPort) {
    detail::putOptionalInteger(out, "targetPort", p.targetPort);
  } else if (const auto it = out.find("targetPort"); it != out.end() && !it->is_string()) {
    out.erase(it);
  }
  return out;
}

}  // namespace

// --- public: Node -----------------------------------------------------------------------------

std::string_view nodeReadyStatus(const Node& node) {
  for (const Condition& c : node.conditions) {
    if (c.type == "Ready") return c.status;
  }
  return {};
}

StatusOr<Node> decodeNode(const Json& object) {
  return decodeObject<Node>(
      object, kCoreApiVersion, "Node", [](Decoder& d, const Json& in, Node& node) {
        const Path root;
        if (const Json* spec = d.object(in, "spec", root)) {
          const Path at = root.child("spec");
          node.unschedulable = d.boolean(*spec, "unschedulable", at);
          node.taints = decodeList<Taint>(d, *spec, "taints", at, decodeTaint);
          node.providerID = d.text(*spec, "providerID", at);
        }
        if (const Json* status = d.object(in, "status", root)) {
          const Path at = root.child("status");
          node.capacity = d.quantityMap(*status, "capacity", at);
          node.allocatable = d.quantityMap(*status, "allocatable", at);
          node.conditions = decodeList<Condition>(d, *status, "conditions", at, decodeCondition);
          const auto addresses = decodeList<std::pair<std::string, std::string>>(
              d, *status, "addresses", at, [](Decoder& dd, const Json& item, const Path& p) {
                return std::make_pair(dd.text(item, "type", p), dd.text(item, "address", p));
              });
          node.addresses = addresses;
        }
      });
}

Json encodeNode(const Node& node) {
  Json out = encodeHeader(node, kCoreApiVersion, "Node");
  Json spec = detail::subObject(out, "spec");
  detail::putBool(spec, "unschedulable", node.unschedulable);
  encodeList(spec, "taints", node.taints, encodeTaint);
  detail::putText(spec, "providerID", node.providerID);
  detail::putJson(out, "spec", std::move(spec));
  Json status = detail::subObject(out, "status");
  detail::putQuantityMap(status, "capacity", node.capacity);
  detail::putQuantityMap(status, "allocatable", node.allocatable);
  encodeList(status, "conditions", node.conditions, encodeCondition);
  {
    // NodeAddress has exactly these two fields, so rebuilding the list loses nothing.
    Json addresses = Json::array();
    for (const auto& [type, address] : node.addresses) {
      addresses.push_back({{"type", type}, {"address", address}});
    }
    Decoder probe;
    const auto current = decodeList<std::pair<std::string, std::string>>(
        probe, status, "addresses", Path{}, [](Decoder& dd, const Json& item, const Path& p) {
          return std::make_pair(dd.text(item, "type", p), dd.text(item, "address", p));
        });
    if (!probe.ok() || current != node.addresses) {
      if (node.addresses.empty()) {
        status.erase("addresses");
      } else {
        status["addresses"] = std::move(addresses);
      }
    }
  }
  detail::putJson(out, "status", std::move(status));
  return out;
}

// --- public: Pod ------------------------------------------------------------------------------

bool podIsTerminal(const Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

StatusOr<std::int64_t> podRequest(const Pod& pod, std::string_view resource) {
  return podRequestScaled(pod, resource, 0);
}

StatusOr<std::int64_t> podRequestMilli(const Pod& pod, std::string_view resource) {
  return podRequestScaled(pod, resource, 3);
}

StatusOr<Pod> decodePod(const Json& object) {
  return decodeObject<Pod>(object, kCoreApiVersion, "Pod",
                           [](Decoder& d, const Json& in, Pod& pod) {
                             const Path root;
                             if (const Json* spec = d.object(in, "spec", root)) {
                               decodePodSpec(d, *spec, root.child("spec"), pod.spec);
                             }
                             if (const Json* status = d.object(in, "status", root)) {
                               decodePodStatus(d, *status, root.child("status"), pod.status);
                             }
                           });
}

Json encodePod(const Pod& pod) {
  Json out = encodeHeader(pod, kCoreApiVersion, "Pod");
  Json spec = detail::subObject(out, "spec");
  encodePodSpec(pod.spec, spec);
  detail::putJson(out, "spec", std::move(spec));
  Json status = detail::subObject(out, "status");
  encodePodStatus(pod.status, status);
  detail::putJson(out, "status", std::move(status));
  return out;
}

// --- public: Service, Event, Namespace, ConfigMap, Lease --------------------------------------

StatusOr<Service> decodeService(const Json& object) {
  return decodeObject<Service>(
      object, kCoreApiVersion, "Service", [](Decoder& d, const Json& in, Service& service) {
        const Path root;
        if (const Json* spec = d.object(in, "spec", root)) {
          const Path at = root.child("spec");
          service.clusterIP = d.text(*spec, "clusterIP", at);
          service.selector = d.stringMap(*spec, "selector", at);
          service.ports = decodeList<ServicePort>(d, *spec, "ports", at, decodeServicePort);
          service.publishNotReadyAddresses = d.boolean(*spec, "publishNotReadyAddresses", at);
        }
      });
}

Json encodeService(const Service& service) {
  Json out = encodeHeader(service, kCoreApiVersion, "Service");
  Json spec = detail::subObject(out, "spec");
  detail::putText(spec, "clusterIP", service.clusterIP);
  detail::putStringMap(spec, "selector", service.selector);
  encodeList(spec, "ports", service.ports, encodeServicePort);
  detail::putBool(spec, "publishNotReadyAddresses", service.publishNotReadyAddresses);
  detail::putJson(out, "spec", std::move(spec));
  return out;
}

StatusOr<Event> decodeEvent(const Json& object) {
  return decodeObject<Event>(
      object, kCoreApiVersion, "Event", [](Decoder& d, const Json& in, Event& event) {
        const Path root;
        if (const Json* ref = d.object(in, "involvedObject", root)) {
          const Path at = root.child("involvedObject");
          ObjectReference& o = event.involvedObject;
          o.apiVersion = d.text(*ref, "apiVersion", at);
          o.kind = d.text(*ref, "kind", at);
          o.namespaceName = d.text(*ref, "namespace", at);
          o.name = d.text(*ref, "name", at);
          o.uid = d.text(*ref, "uid", at);
          o.resourceVersion = d.text(*ref, "resourceVersion", at);
        }
        event.type = d.text(in, "type", root);
        event.reason = d.text(in, "reason", root);
        event.message = d.text(in, "message", root);
        if (const Json* source = d.object(in, "source", root)) {
          event.sourceComponent = d.text(*source, "component", root.child("source"));
          event.sourceHost = d.text(*source, "host", root.child("source"));
        }
        event.firstTimestamp = d.time(in, "firstTimestamp", root);
        event.lastTimestamp = d.time(in, "lastTimestamp", root);
        event.count = d.int32(in, "count", root).value_or(0);
        event.reportingController = d.text(in, "reportingComponent", root);
        event.reportingInstance = d.text(in, "reportingInstance", root);
        event.action = d.text(in, "action", root);
        event.eventTime = d.microTime(in, "eventTime", root);
      });
}

Json encodeEvent(const Event& event) {
  Json out = encodeHeader(event, kCoreApiVersion, "Event");
  Json ref = detail::subObject(out, "involvedObject");
  const ObjectReference& o = event.involvedObject;
  detail::putText(ref, "apiVersion", o.apiVersion);
  detail::putText(ref, "kind", o.kind);
  detail::putText(ref, "namespace", o.namespaceName);
  detail::putText(ref, "name", o.name);
  detail::putText(ref, "uid", o.uid);
  detail::putText(ref, "resourceVersion", o.resourceVersion);
  // Not omitempty: an Event always has its involvedObject.
  if (!out.contains("involvedObject")) out["involvedObject"] = Json::object();
  detail::putJson(out, "involvedObject", std::move(ref));
  detail::putText(out, "type", event.type);
  detail::putText(out, "reason", event.reason);
  detail::putText(out, "message", event.message);
  Json source = detail::subObject(out, "source");
  detail::putText(source, "component", event.sourceComponent);
  detail::putText(source, "host", event.sourceHost);
  detail::putJson(out, "source", std::move(source));
  detail::putTime(out, "firstTimestamp", event.firstTimestamp);
  detail::putTime(out, "lastTimestamp", event.lastTimestamp);
  detail::putInteger(out, "count", event.count);
  detail::putText(out, "reportingComponent", event.reportingController);
  detail::putText(out, "reportingInstance", event.reportingInstance);
  detail::putText(out, "action", event.action);
  detail::putMicroTime(out, "eventTime", event.eventTime);
  return out;
}

StatusOr<Namespace> decodeNamespace(const Json& object) {
  return decodeObject<Namespace>(object, kCoreApiVersion, "Namespace",
                                 [](Decoder& d, const Json& in, Namespace& ns) {
                                   const Path root;
                                   if (const Json* status = d.object(in, "status", root)) {
                                     ns.phase = d.text(*status, "phase", root.child("status"));
                                   }
                                 });
}

Json encodeNamespace(const Namespace& ns) {
  Json out = encodeHeader(ns, kCoreApiVersion, "Namespace");
  Json status = detail::subObject(out, "status");
  detail::putText(status, "phase", ns.phase);
  detail::putJson(out, "status", std::move(status));
  return out;
}

StatusOr<ConfigMap> decodeConfigMap(const Json& object) {
  return decodeObject<ConfigMap>(
      object, kCoreApiVersion, "ConfigMap",
      [](Decoder& d, const Json& in, ConfigMap& cm) { cm.data = d.stringMap(in, "data", Path{}); });
}

Json encodeConfigMap(const ConfigMap& configMap) {
  Json out = encodeHeader(configMap, kCoreApiVersion, "ConfigMap");
  detail::putStringMap(out, "data", configMap.data);
  return out;
}

StatusOr<Lease> decodeLease(const Json& object) {
  return decodeObject<Lease>(
      object, kCoordinationApiVersion, "Lease", [](Decoder& d, const Json& in, Lease& lease) {
        const Path root;
        if (const Json* spec = d.object(in, "spec", root)) {
          const Path at = root.child("spec");
          lease.holderIdentity = d.text(*spec, "holderIdentity", at);
          lease.leaseDurationSeconds = d.int32(*spec, "leaseDurationSeconds", at);
          lease.acquireTime = d.microTime(*spec, "acquireTime", at);
          lease.renewTime = d.microTime(*spec, "renewTime", at);
          lease.leaseTransitions = d.int32(*spec, "leaseTransitions", at);
        }
      });
}

Json encodeLease(const Lease& lease) {
  Json out = encodeHeader(lease, kCoordinationApiVersion, "Lease");
  Json spec = detail::subObject(out, "spec");
  detail::putText(spec, "holderIdentity", lease.holderIdentity);
  detail::putOptionalInteger(spec, "leaseDurationSeconds", lease.leaseDurationSeconds);
  detail::putMicroTime(spec, "acquireTime", lease.acquireTime);
  detail::putMicroTime(spec, "renewTime", lease.renewTime);
  detail::putOptionalInteger(spec, "leaseTransitions", lease.leaseTransitions);
  detail::putJson(out, "spec", std::move(spec));
  return out;
}

namespace detail {

Toleration decodeToleration(Decoder& d, const Json& in, const Path& at) {
  Toleration t;
  t.key = d.text(in, "key", at);
  t.operator_ = d.text(in, "operator", at);
  t.value = d.text(in, "value", at);
  t.effect = d.text(in, "effect", at);
  t.tolerationSeconds = d.int64(in, "tolerationSeconds", at);
  t.raw = in;
  return t;
}

Json encodeToleration(const Toleration& t) {
  Json out = detail::baseObject(t.raw);
  detail::putText(out, "key", t.key);
  detail::putText(out, "operator", t.operator_);
  detail::putText(out, "value", t.value);
  detail::putText(out, "effect", t.effect);
  detail::putOptionalInteger(out, "tolerationSeconds", t.tolerationSeconds);
  return out;
}

}  // namespace detail
}  // namespace kubeslurm::api
