// meta/v1: the metadata, owner references and conditions every kind carries, and their codecs.
// Same round-trip rule as core_v1.h: `raw` keeps what was decoded, encode writes over it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/json_fields.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::api {

using Json = nlohmann::json;

struct OwnerReference {
  std::string apiVersion;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> blockOwnerDeletion;
  Json raw = Json::object();
};

struct ObjectMeta {
  std::string name;
  std::string generateName;
  std::string namespaceName;  // metadata.namespace
  std::string uid;
  std::string resourceVersion;
  std::int64_t generation = 0;
  std::optional<std::int64_t> creationTimestamp;  // Unix seconds
  std::optional<std::int64_t> deletionTimestamp;
  std::optional<std::int64_t> deletionGracePeriodSeconds;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> ownerReferences;
  std::vector<std::string> finalizers;
};

struct Condition {  // NodeCondition, PodCondition and metav1.Condition share these fields
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::optional<std::int64_t> lastTransitionTime;
  std::optional<std::int64_t> lastHeartbeatTime;   // NodeCondition only
  std::optional<std::int64_t> observedGeneration;  // metav1.Condition only
  Json raw = Json::object();
};

// Metadata alone (informers index on it without decoding the whole object).
StatusOr<ObjectMeta> decodeObjectMeta(const Json& metadata, std::string_view path = "metadata");
// Writes the modelled fields of `meta` over `into`, the metadata object itself (the rule
// above); `into` becomes an object if it was not one.
void encodeObjectMeta(const ObjectMeta& meta, Json& into);

// The string member `key` of `object`, or "" when `object` is not an object, has no such member,
// or holds something else there. For reading JSON a user wrote without a throw: nlohmann's
// value(key, default) throws type_error on a member of another type.
std::string stringMember(const Json& object, std::string_view key);

// The status.conditions array of an object as read (codecs that leave conditions in the raw
// object: a SlurmJob's); an empty array when it has none.
const Json& conditionsOf(const Json& object);

// The condition `type` in a status.conditions array, or nullptr.
const Json* findCondition(const Json& conditions, std::string_view type);

namespace detail {

// NodeCondition, PodCondition and metav1.Condition (Condition above).
Condition decodeCondition(Decoder& d, const Json& in, const Path& at);
Json encodeCondition(const Condition& c);
// metav1.Condition, whose reason and message have no omitempty (CRD schemas require them).
Json encodeMetaCondition(const Condition& c);

// Decodes the whole object's metadata and checks the type; `decodeRest` fills the kind's own
// fields.
template <typename T, typename DecodeRest>
StatusOr<T> decodeObject(const Json& object, std::string_view apiVersion, std::string_view kind,
                         DecodeRest decodeRest) {
  if (!object.is_object()) {
    return invalidArgument("a " + std::string(kind) + " must be a JSON object");
  }
  Decoder d;
  checkTypeMeta(d, object, apiVersion, kind);
  if (!d.ok()) return d.status();
  T out;
  if (const Json* meta = d.object(object, "metadata", Path{})) {
    StatusOr<ObjectMeta> decoded = decodeObjectMeta(*meta);
    if (!decoded.isOk()) return decoded.status();
    out.metadata = std::move(*decoded);
  }
  if (!d.ok()) return d.status();
  decodeRest(d, object, out);
  if (!d.ok()) return d.status();
  out.raw = object;
  return out;
}

template <typename T>
Json encodeHeader(const T& object, std::string_view apiVersion, std::string_view kind) {
  Json out = baseObject(object.raw);
  setTypeMeta(out, apiVersion, kind);
  Json meta = subObject(out, "metadata");
  encodeObjectMeta(object.metadata, meta);
  putJson(out, "metadata", std::move(meta));
  return out;
}

}  // namespace detail
}  // namespace kubeslurm::api
