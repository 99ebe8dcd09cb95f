#include "kubeslurm/api/kubeslurm_types.h"

#include <algorithm>
#include <utility>

#include "kubeslurm/api/json_fields.h"
#include "kubeslurm/base/text.h"

namespace kubeslurm::api {
namespace {

using detail::Decoder;
using detail::Path;

std::optional<SlurmDuration> decodeDuration(Decoder& d, const Json& in, const char* key,
                                            const Path& at) {
  const Json* value = Decoder::member(in, key);
  if (value == nullptr) return std::nullopt;
  std::string text = d.text(in, key, at);
  if (!d.ok()) return std::nullopt;
  StatusOr<slurm::TimeLimit> limit = slurm::parseTimeLimit(text);
  if (!limit.isOk()) {
    d.fail(at.child(key), "invalid Slurm time limit " + quoteForDiagnostic(text, 64));
    return std::nullopt;
  }
  return SlurmDuration{std::move(text), *limit};
}

void encodeDuration(Json& out, const char* key, const std::optional<SlurmDuration>& duration) {
  if (!duration) {
    if (out.contains(key)) out.erase(key);
    return;
  }
  StatusOr<slurm::TimeLimit> written = slurm::parseTimeLimit(duration->text);
  const bool textHolds = !duration->text.empty() && written.isOk() && *written == duration->limit;
  detail::putText(out, key,
                  textHolds ? duration->text : slurm::formatPaddedDuration(duration->limit), false);
}

std::map<std::string, std::int64_t> decodeInt64Map(Decoder& d, const Json& in, const char* key,
                                                   const Path& at) {
  std::map<std::string, std::int64_t> out;
  const Json* map = d.object(in, key, at);
  if (map == nullptr) return out;
  const Path here = at.child(key);
  for (const auto& [name, value] : map->items()) {
    if (value.is_null()) continue;
    const std::optional<std::int64_t> n = detail::integerOf(&value);
    if (!n) {
      d.fail(here.child(name), "expected a 64-bit integer");
      return {};
    }
    out.emplace(name, *n);
  }
  return out;
}

void encodeInt64Map(Json& out, const char* key, const std::map<std::string, std::int64_t>& map) {
  Decoder probe;
  if (decodeInt64Map(probe, out, key, Path{}) == map && probe.ok()) return;
  if (map.empty()) {
    out.erase(key);
  } else {
    out[key] = map;
  }
}

LabelSelectorRequirement decodeRequirement(Decoder& d, const Json& in, const Path& at) {
  LabelSelectorRequirement r;
  r.key = d.text(in, "key", at);
  r.operator_ = d.text(in, "operator", at);
  r.values = d.strings(in, "values", at);
  r.raw = in;
  return r;
}

Json encodeRequirement(const LabelSelectorRequirement& r) {
  Json out = detail::baseObject(r.raw);
  detail::putText(out, "key", r.key, false);
  detail::putText(out, "operator", r.operator_, false);
  detail::putStrings(out, "values", r.values);
  return out;
}

// Writes an optional sub-object: absent removes it, present writes `fill`'s fields over it.
template <typename T, typename Fill>
void encodeOptional(Json& out, const char* key, const std::optional<T>& value, Fill fill) {
  if (!value) {
    if (out.contains(key)) out.erase(key);
    return;
  }
  Json sub = detail::subObject(out, key);
  fill(*value, sub);
  if (sub.empty() && !out.contains(key)) {
    out[key] = Json::object();  // present but empty is still present
    return;
  }
  detail::putJson(out, key, std::move(sub));
}

AllowedMount decodeAllowedMount(Decoder& d, const Json& in, const Path& at) {
  AllowedMount m;
  m.path = d.text(in, "path", at);
  m.readOnly = d.boolean(in, "readOnly", at);
  if (const Json* volume = d.object(in, "volume", at)) m.volume = *volume;
  m.raw = in;
  return m;
}

Json encodeAllowedMount(const AllowedMount& m) {
  Json out = detail::baseObject(m.raw);
  detail::putText(out, "path", m.path, false);
  detail::putBool(out, "readOnly", m.readOnly);
  if (m.volume.is_object()) {
    detail::putJson(out, "volume", m.volume);
  } else if (out.contains("volume")) {
    out.erase("volume");
  }
  return out;
}

void decodePartitionSpec(Decoder& d, const Json& in, const Path& at, PartitionSpec& spec) {
  spec.nodes = d.text(in, "nodes", at);
  if (const Json* selector = d.object(in, "nodeSelector", at)) {
    const Path here = at.child("nodeSelector");
    LabelSelector s;
    s.matchLabels = d.stringMap(*selector, "matchLabels", here);
    s.matchExpressions = detail::decodeList<LabelSelectorRequirement>(
        d, *selector, "matchExpressions", here, decodeRequirement);
    spec.nodeSelector = std::move(s);
  }
  spec.isDefault = d.boolean(in, "default", at);
  spec.maxTime = decodeDuration(d, in, "maxTime", at);
  spec.defaultTime = decodeDuration(d, in, "defaultTime", at);
  spec.priorityTier = d.int32(in, "priorityTier", at);
  spec.priorityJobFactor = d.int32(in, "priorityJobFactor", at);
  spec.preemptMode = d.text(in, "preemptMode", at);
  spec.maxNodesPerJob = d.int32(in, "maxNodesPerJob", at);
  spec.minNodesPerJob = d.int32(in, "minNodesPerJob", at);
  for (auto [field, key] : {std::pair{&PartitionSpec::defMemPerNode, "defMemPerNode"},
                            std::pair{&PartitionSpec::defMemPerCpu, "defMemPerCPU"},
                            std::pair{&PartitionSpec::defMemPerGpu, "defMemPerGPU"},
                            std::pair{&PartitionSpec::maxMemPerNode, "maxMemPerNode"},
                            std::pair{&PartitionSpec::maxMemPerCpu, "maxMemPerCPU"}}) {
    std::optional<std::int64_t>& megabytes = spec.*field;
    megabytes = d.int64(in, key, at);
    if (megabytes && (*megabytes < 0 || *megabytes > kMaxPartitionMemoryMb)) {
      d.fail(at.child(key),
             "expected megabytes from 0 to " + std::to_string(kMaxPartitionMemoryMb));
      megabytes.reset();
    }
  }
  spec.allowedAccounts = d.strings(in, "allowedAccounts", at);
  spec.state = d.text(in, "state", at);
  if (const Json* topology = d.object(in, "topology", at)) {
    const Path here = at.child("topology");
    spec.topology =
        PartitionTopology{d.text(*topology, "conf", here), d.strings(*topology, "labelKeys", here)};
  }
  spec.nccl = d.stringMap(in, "nccl", at);
  if (const Json* volume = d.object(in, "sharedVolume", at)) {
    const Path here = at.child("sharedVolume");
    spec.sharedVolume =
        SharedVolume{d.text(*volume, "claimName", here), d.text(*volume, "mountPath", here),
                     d.text(*volume, "subPath", here)};
  }
  spec.allowedMounts =
      detail::decodeList<AllowedMount>(d, in, "allowedMounts", at, decodeAllowedMount);
  if (const Json* policy = d.object(in, "podPolicy", at)) {
    const Path here = at.child("podPolicy");
    PartitionPodPolicy p;
    p.podSecurity = d.text(*policy, "podSecurity", here);
    p.serviceAccounts = d.strings(*policy, "serviceAccounts", here);
    p.automountServiceAccountToken =
        d.optionalBoolean(*policy, "automountServiceAccountToken", here);
    p.priorityClasses = d.strings(*policy, "priorityClasses", here);
    p.runtimeClasses = d.strings(*policy, "runtimeClasses", here);
    p.capabilities = d.strings(*policy, "capabilities", here);
    p.runAsUser = d.int64(*policy, "runAsUser", here);
    spec.podPolicy = std::move(p);
  }
  spec.tolerations =
      detail::decodeList<Toleration>(d, in, "tolerations", at, detail::decodeToleration);
  spec.jobNetwork = d.text(in, "jobNetwork", at);
  if (!spec.jobNetwork.empty() && spec.jobNetwork != "Isolated" && spec.jobNetwork != "Open") {
    d.fail(at.child("jobNetwork"), "expected Isolated or Open");
  }
}

void encodePartitionSpec(const PartitionSpec& spec, Json& out) {
  detail::putText(out, "nodes", spec.nodes);
  encodeOptional(out, "nodeSelector", spec.nodeSelector, [](const LabelSelector& s, Json& sub) {
    detail::putStringMap(sub, "matchLabels", s.matchLabels);
    detail::encodeList(sub, "matchExpressions", s.matchExpressions, encodeRequirement);
  });
  detail::putBool(out, "default", spec.isDefault);
  encodeDuration(out, "maxTime", spec.maxTime);
  encodeDuration(out, "defaultTime", spec.defaultTime);
  detail::putOptionalInteger(out, "priorityTier", spec.priorityTier);
  detail::putOptionalInteger(out, "priorityJobFactor", spec.priorityJobFactor);
  detail::putText(out, "preemptMode", spec.preemptMode);
  detail::putOptionalInteger(out, "maxNodesPerJob", spec.maxNodesPerJob);
  detail::putOptionalInteger(out, "minNodesPerJob", spec.minNodesPerJob);
  detail::putOptionalInteger(out, "defMemPerNode", spec.defMemPerNode);
  detail::putOptionalInteger(out, "defMemPerCPU", spec.defMemPerCpu);
  detail::putOptionalInteger(out, "defMemPerGPU", spec.defMemPerGpu);
  detail::putOptionalInteger(out, "maxMemPerNode", spec.maxMemPerNode);
  detail::putOptionalInteger(out, "maxMemPerCPU", spec.maxMemPerCpu);
  detail::putStrings(out, "allowedAccounts", spec.allowedAccounts);
  detail::putText(out, "state", spec.state);
  encodeOptional(out, "topology", spec.topology, [](const PartitionTopology& t, Json& sub) {
    detail::putText(sub, "conf", t.conf);
    detail::putStrings(sub, "labelKeys", t.labelKeys);
  });
  detail::putStringMap(out, "nccl", spec.nccl);
  encodeOptional(out, "sharedVolume", spec.sharedVolume, [](const SharedVolume& v, Json& sub) {
    detail::putText(sub, "claimName", v.claimName);
    detail::putText(sub, "mountPath", v.mountPath);
    detail::putText(sub, "subPath", v.subPath);
  });
  detail::encodeList(out, "allowedMounts", spec.allowedMounts, encodeAllowedMount);
  encodeOptional(out, "podPolicy", spec.podPolicy, [](const PartitionPodPolicy& p, Json& sub) {
    detail::putText(sub, "podSecurity", p.podSecurity);
    detail::putStrings(sub, "serviceAccounts", p.serviceAccounts);
    detail::putOptionalBool(sub, "automountServiceAccountToken", p.automountServiceAccountToken);
    detail::putStrings(sub, "priorityClasses", p.priorityClasses);
    detail::putStrings(sub, "runtimeClasses", p.runtimeClasses);
    detail::putStrings(sub, "capabilities", p.capabilities);
    detail::putOptionalInteger(sub, "runAsUser", p.runAsUser);
  });
  detail::encodeList(out, "tolerations", spec.tolerations, detail::encodeToleration);
  detail::putText(out, "jobNetwork", spec.jobNetwork);
}

// The status counters, in CRD order. A counter that drops to 0 is written as 0, not removed,
// so that `kubectl get part` keeps showing it.
template <typename Status, typename Visit>
void forEachCounter(Status& s, Visit visit) {
  visit("nodes", s.nodes);
  visit("idleNodes", s.idleNodes);
  visit("mixedNodes", s.mixedNodes);
  visit("allocatedNodes", s.allocatedNodes);
  visit("downNodes", s.downNodes);
  visit("drainedNodes", s.drainedNodes);
  visit("gpus", s.gpus);
  visit("allocatedGpus", s.allocatedGpus);
  visit("idleGpus", s.idleGpus);
  visit("pendingJobs", s.pendingJobs);
  visit("runningJobs", s.runningJobs);
}

void decodeAccountSpec(Decoder& d, const Json& in, const Path& at, AccountSpec& spec) {
  spec.parent = d.text(in, "parent", at);
  spec.description = d.text(in, "description", at);
  spec.organization = d.text(in, "organization", at);
  spec.shares = d.int32(in, "shares", at);
  spec.namespaces = d.strings(in, "namespaces", at);
  spec.users = d.strings(in, "users", at);
  spec.groups = d.strings(in, "groups", at);
  spec.defaultQos = d.text(in, "defaultQos", at);
  spec.allowedQos = d.strings(in, "allowedQos", at);
  if (const Json* limits = d.object(in, "limits", at)) {
    const Path here = at.child("limits");
    AccountLimits l;
    l.maxJobs = d.int32(*limits, "maxJobs", here);
    l.maxSubmitJobs = d.int32(*limits, "maxSubmitJobs", here);
    l.maxNodesPerJob = d.int32(*limits, "maxNodesPerJob", here);
    l.maxWallDurationPerJob = decodeDuration(d, *limits, "maxWallDurationPerJob", here);
    l.grpJobs = d.int32(*limits, "grpJobs", here);
    l.grpTres = decodeInt64Map(d, *limits, "grpTres", here);
    l.maxTresPerJob = decodeInt64Map(d, *limits, "maxTresPerJob", here);
    spec.limits = std::move(l);
  }
}

void encodeAccountSpec(const AccountSpec& spec, Json& out) {
  detail::putText(out, "parent", spec.parent);
  detail::putText(out, "description", spec.description);
  detail::putText(out, "organization", spec.organization);
  detail::putOptionalInteger(out, "shares", spec.shares);
  detail::putStrings(out, "namespaces", spec.namespaces);
  detail::putStrings(out, "users", spec.users);
  detail::putStrings(out, "groups", spec.groups);
  detail::putText(out, "defaultQos", spec.defaultQos);
  detail::putStrings(out, "allowedQos", spec.allowedQos);
  encodeOptional(out, "limits", spec.limits, [](const AccountLimits& l, Json& sub) {
    detail::putOptionalInteger(sub, "maxJobs", l.maxJobs);
    detail::putOptionalInteger(sub, "maxSubmitJobs", l.maxSubmitJobs);
    detail::putOptionalInteger(sub, "maxNodesPerJob", l.maxNodesPerJob);
    encodeDuration(sub, "maxWallDurationPerJob", l.maxWallDurationPerJob);
    detail::putOptionalInteger(sub, "grpJobs", l.grpJobs);
    encodeInt64Map(sub, "grpTres", l.grpTres);
    encodeInt64Map(sub, "maxTresPerJob", l.maxTresPerJob);
  });
}

}  // namespace

PartitionMemory partitionMemory(const PartitionSpec& spec) {
  auto megabytes = [](const std::optional<std::int64_t>& value) -> std::uint64_t {
    return value && *value > 0 ? static_cast<std::uint64_t>(*value) : 0;
  };
  PartitionMemory out;
  out.defPerNode = megabytes(spec.defMemPerNode);
  out.defPerCpu = spec.defMemPerNode ? 0 : megabytes(spec.defMemPerCpu);
  out.defPerGpu = megabytes(spec.defMemPerGpu);
  out.maxPerNode = megabytes(spec.maxMemPerNode);
  out.maxPerCpu = spec.maxMemPerNode ? 0 : megabytes(spec.maxMemPerCpu);
  out.bothDefaults = spec.defMemPerNode.has_value() && spec.defMemPerCpu.has_value();
  out.bothLimits = spec.maxMemPerNode.has_value() && spec.maxMemPerCpu.has_value();
  return out;
}

StatusOr<Partition> decodePartition(const Json& object) {
  return detail::decodeObject<Partition>(
      object, kKubeslurmApiVersion, "Partition", [](Decoder& d, const Json& in, Partition& p) {
        const Path root;
        if (const Json* spec = d.object(in, "spec", root)) {
          decodePartitionSpec(d, *spec, root.child("spec"), p.spec);
        }
        if (const Json* status = d.object(in, "status", root)) {
          const Path at = root.child("status");
          forEachCounter(p.status, [&](const char* key, std::int32_t& value) {
            value = d.int32(*status, key, at).value_or(0);
          });
          p.status.conditions =
              detail::decodeList<Condition>(d, *status, "conditions", at, detail::decodeCondition);
        }
      });
}

Json encodePartition(const Partition& partition) {
  Json out = detail::encodeHeader(partition, kKubeslurmApiVersion, "Partition");
  Json spec = detail::subObject(out, "spec");
  encodePartitionSpec(partition.spec, spec);
  if (!out.contains("spec")) out["spec"] = Json::object();  // required by the CRD
  detail::putJson(out, "spec", std::move(spec));
  Json status = detail::subObject(out, "status");
  forEachCounter(partition.status, [&](const char* key, const std::int32_t& value) {
    detail::putInteger(status, key, value, false);
  });
  detail::encodeList(status, "conditions", partition.status.conditions,
                     detail::encodeMetaCondition);
  detail::putJson(out, "status", std::move(status));
  return out;
}

StatusOr<Account> decodeAccount(const Json& object) {
  return detail::decodeObject<Account>(
      object, kKubeslurmApiVersion, "Account", [](Decoder& d, const Json& in, Account& a) {
        const Path root;
        if (const Json* spec = d.object(in, "spec", root)) {
          decodeAccountSpec(d, *spec, root.child("spec"), a.spec);
        }
        if (const Json* status = d.object(in, "status", root)) {
          const Path at = root.child("status");
          AccountStatus& s = a.status;
          s.rawUsage = d.number(*status, "rawUsage", at);
          s.normShares = d.number(*status, "normShares", at);
          s.effectiveUsage = d.number(*status, "effectiveUsage", at);
          s.fairShare = d.number(*status, "fairShare", at);
          s.runningJobs = d.int32(*status, "runningJobs", at).value_or(0);
          s.pendingJobs = d.int32(*status, "pendingJobs", at).value_or(0);
          s.lastDecay = d.time(*status, "lastDecay", at);
          s.conditions =
              detail::decodeList<Condition>(d, *status, "conditions", at, detail::decodeCondition);
        }
      });
}

Json encodeAccount(const Account& account) {
  Json out = detail::encodeHeader(account, kKubeslurmApiVersion, "Account");
  Json spec = detail::subObject(out, "spec");
  encodeAccountSpec(account.spec, spec);
  if (!out.contains("spec")) out["spec"] = Json::object();  // required by the CRD
  detail::putJson(out, "spec", std::move(spec));
  Json status = detail::subObject(out, "status");
  const AccountStatus& s = account.status;
  detail::putNumber(status, "rawUsage", s.rawUsage);
  detail::putNumber(status, "normShares", s.normShares);
  detail::putNumber(status, "effectiveUsage", s.effectiveUsage);
  detail::putNumber(status, "fairShare", s.fairShare);
  detail::putInteger(status, "runningJobs", s.runningJobs, false);
  detail::putInteger(status, "pendingJobs", s.pendingJobs, false);
  detail::putTime(status, "lastDecay", s.lastDecay);
  detail::encodeList(status, "conditions", s.conditions, detail::encodeMetaCondition);
  detail::putJson(out, "status", std::move(status));
  return out;
}

namespace {

template <typename LabelMap>
bool selectorMatchesLabels(const LabelSelector& selector, const LabelMap& labels) {
  for (const auto& [key, value] : selector.matchLabels) {
    const auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return std::ranges::all_of(selector.matchExpressions, [&](const LabelSelectorRequirement& r) {
    const auto it = labels.find(r.key);
    const bool has = it != labels.end();
    const bool listed = has && std::ranges::find(r.values, it->second) != r.values.end();
    if (r.operator_ == "In") return listed;
    if (r.operator_ == "NotIn") return !listed;
    if (r.operator_ == "Exists") return has;
    if (r.operator_ == "DoesNotExist") return !has;
    return false;
  });
}

}  // namespace

bool labelSelectorMatches(const LabelSelector& selector,
                          const std::map<std::string, std::string, std::less<>>& labels) {
  return selectorMatchesLabels(selector, labels);
}

bool labelSelectorMatches(const LabelSelector& selector,
                          const std::map<std::string, std::string>& labels) {
  return selectorMatchesLabels(selector, labels);
}

}  // namespace kubeslurm::api
