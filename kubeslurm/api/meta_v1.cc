#include "kubeslurm/api/meta_v1.h"

#include <utility>

namespace kubeslurm::api {
namespace {

using detail::decodeList;
using detail::Decoder;
using detail::encodeList;
using detail::Path;

// --- shared pieces ----------------------------------------------------------------------------

OwnerReference decodeOwnerReference(Decoder& d, const Json& in, const Path& at) {
  OwnerReference ref;
  ref.apiVersion = d.text(in, "apiVersion", at);
  ref.kind = d.text(in, "kind", at);
  ref.name = d.text(in, "name", at);
  ref.uid = d.text(in, "uid", at);
  ref.controller = d.optionalBoolean(in, "controller", at);
  ref.blockOwnerDeletion = d.optionalBoolean(in, "blockOwnerDeletion", at);
  ref.raw = in;
  return ref;
}

Json encodeOwnerReference(const OwnerReference& ref) {
  Json out = detail::baseObject(ref.raw);
  // Not omitempty in Go: an owner reference always names all four.
  detail::putText(out, "apiVersion", ref.apiVersion, false);
  detail::putText(out, "kind", ref.kind, false);
  detail::putText(out, "name", ref.name, false);
  detail::putText(out, "uid", ref.uid, false);
  detail::putOptionalBool(out, "controller", ref.controller);
  detail::putOptionalBool(out, "blockOwnerDeletion", ref.blockOwnerDeletion);
  return out;
}

}  // namespace

std::string stringMember(const Json& object, std::string_view key) {
  if (!object.is_object()) return "";
  const auto it = object.find(std::string(key));
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

const Json& conditionsOf(const Json& object) {
  static const Json kEmpty = Json::array();
  if (!object.is_object()) return kEmpty;
  auto status = object.find("status");
  if (status == object.end() || !status->is_object()) return kEmpty;
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return kEmpty;
  return *conditions;
}

const Json* findCondition(const Json& conditions, std::string_view type) {
  if (!conditions.is_array()) return nullptr;
  for (const Json& c : conditions) {
    if (stringMember(c, "type") == type) return &c;
  }
  return nullptr;
}

namespace detail {

Condition decodeCondition(Decoder& d, const Json& in, const Path& at) {
  Condition c;
  c.type = d.text(in, "type", at);
  c.status = d.text(in, "status", at);
  c.reason = d.text(in, "reason", at);
  c.message = d.text(in, "message", at);
  c.lastTransitionTime = d.time(in, "lastTransitionTime", at);
  c.lastHeartbeatTime = d.time(in, "lastHeartbeatTime", at);
  c.observedGeneration = d.int64(in, "observedGeneration", at);
  c.raw = in;
  return c;
}

namespace {

Json encodeConditionOmitting(const Condition& c, bool omitEmptyText) {
  Json out = baseObject(c.raw);
  putText(out, "type", c.type, false);
  putText(out, "status", c.status, false);
  putText(out, "reason", c.reason, omitEmptyText);
  putText(out, "message", c.message, omitEmptyText);
  putTime(out, "lastTransitionTime", c.lastTransitionTime);
  putTime(out, "lastHeartbeatTime", c.lastHeartbeatTime);
  putOptionalInteger(out, "observedGeneration", c.observedGeneration);
  return out;
}

}  // namespace

Json encodeCondition(const Condition& c) { return encodeConditionOmitting(c, true); }

Json encodeMetaCondition(const Condition& c) {
  Json out = encodeConditionOmitting(c, false);
  // A new condition states both even when empty, as Go's encoding of metav1.Condition does;
  // a decoded one is left as it was written.
  if (c.raw.is_object() && !c.raw.empty()) return out;
  if (!out.contains("reason")) out["reason"] = c.reason;
  if (!out.contains("message")) out["message"] = c.message;
  return out;
}

}  // namespace detail

// --- public: metadata -------------------------------------------------------------------------

StatusOr<ObjectMeta> decodeObjectMeta(const Json& metadata, std::string_view path) {
  const Path at{nullptr, path, 0, false};
  if (!metadata.is_object()) return invalidArgument(at.render() + ": expected an object");
  Decoder d;
  ObjectMeta m;
  m.name = d.text(metadata, "name", at);
  m.generateName = d.text(metadata, "generateName", at);
  m.namespaceName = d.text(metadata, "namespace", at);
  m.uid = d.text(metadata, "uid", at);
  m.resourceVersion = d.text(metadata, "resourceVersion", at);
  m.generation = d.int64(metadata, "generation", at).value_or(0);
  m.creationTimestamp = d.time(metadata, "creationTimestamp", at);
  m.deletionTimestamp = d.time(metadata, "deletionTimestamp", at);
  m.deletionGracePeriodSeconds = d.int64(metadata, "deletionGracePeriodSeconds", at);
  m.labels = d.stringMap(metadata, "labels", at);
  m.annotations = d.stringMap(metadata, "annotations", at);
  m.ownerReferences =
      decodeList<OwnerReference>(d, metadata, "ownerReferences", at, decodeOwnerReference);
  m.finalizers = d.strings(metadata, "finalizers", at);
  if (!d.ok()) return d.status();
  return m;
}

void encodeObjectMeta(const ObjectMeta& meta, Json& into) {
  if (!into.is_object()) into = Json::object();
  detail::putText(into, "name", meta.name);
  detail::putText(into, "generateName", meta.generateName);
  detail::putText(into, "namespace", meta.namespaceName);
  detail::putText(into, "uid", meta.uid);
  detail::putText(into, "resourceVersion", meta.resourceVersion);
  detail::putInteger(into, "generation", meta.generation);
  detail::putTime(into, "creationTimestamp", meta.creationTimestamp);
  detail::putTime(into, "deletionTimestamp", meta.deletionTimestamp);
  detail::putOptionalInteger(into, "deletionGracePeriodSeconds", meta.deletionGracePeriodSeconds);
  detail::putStringMap(into, "labels", meta.labels);
  detail::putStringMap(into, "annotations", meta.annotations);
  encodeList(into, "ownerReferences", meta.ownerReferences, encodeOwnerReference);
  detail::putStrings(into, "finalizers", meta.finalizers);
}

}  // namespace kubeslurm::api
