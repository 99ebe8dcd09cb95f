// Field-level helpers shared by the codecs of kubeslurm/api: reading a JSON member with its type
// checked and its path named in the error, and writing a member back under the round-trip rule
// of core_v1.h (a member that already decodes to the value is left exactly as it is, so
// "1e3" stays "1e3", a null stays null and a time keeps its fractional seconds).
//
// Internal to kubeslurm/api; not a stable interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/base/status.h"

namespace kubeslurm::api::detail {

using Json = nlohmann::json;

// Where a value sits in the object, built on the stack while decoding and rendered only when
// an error needs it: "spec.containers[0].resources.requests".
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  // member name; empty for the root and for array elements
  std::size_t index = 0;
  bool isIndex = false;

  Path child(std::string_view name) const { return Path{this, name, 0, false}; }
  Path at(std::size_t i) const { return Path{this, {}, i, true}; }
  std::string render() const;
};

// Collects the first error; every reader returns the zero value after a failure so decoding
// can carry on to the end of the object without branching at each field.
class Decoder {
 public:
  bool ok() const { return status_.isOk(); }
  const Status& status() const { return status_; }
  void fail(const Path& at, std::string_view problem);

  // The member, or nullptr when it is absent or null (Go's encoding/json keeps the zero value
  // for both).
  static const Json* member(const Json& object, const char* key);

  // An object member; nullptr when absent/null, and an error when it is not an object.
  const Json* object(const Json& parent, const char* key, const Path& at);
  // An array member; nullptr when absent/null, and an error when it is not an array.
  const Json* array(const Json& parent, const char* key, const Path& at);

  std::string text(const Json& parent, const char* key, const Path& at);
  bool boolean(const Json& parent, const char* key, const Path& at);
  std::optional<bool> optionalBoolean(const Json& parent, const char* key, const Path& at);
  std::optional<std::int64_t> integer(const Json& parent, const char* key, const Path& at,
                                      std::int64_t min, std::int64_t max);
  std::optional<std::int32_t> int32(const Json& parent, const char* key, const Path& at);
  std::optional<std::int64_t> int64(const Json& parent, const char* key, const Path& at);
  std::optional<double> number(const Json& parent, const char* key, const Path& at);
  std::vector<std::string> strings(const Json& parent, const char* key, const Path& at);
  std::map<std::string, std::string> stringMap(const Json& parent, const char* key, const Path& at);
  // A map of resource.Quantity: strings, or numbers as the API server also accepts them.
  std::map<std::string, std::string> quantityMap(const Json& parent, const char* key,
                                                 const Path& at);
  // metav1.Time / MicroTime members, in Unix seconds / microseconds.
  std::optional<std::int64_t> time(const Json& parent, const char* key, const Path& at);
  std::optional<std::int64_t> microTime(const Json& parent, const char* key, const Path& at);

 private:
  Status status_;
};

// What a member decodes to, for the "leave it when equal" comparisons of the writers. nullopt
// when the member has another type (the writer then replaces it).
std::optional<std::string> textOf(const Json* value);
std::optional<std::int64_t> integerOf(const Json* value);
std::optional<std::string> quantityTextOf(const Json& value);

// Writers. `omitEmpty` mirrors the Go field's `omitempty`: an empty value removes the member
// instead of writing "" / 0 / false. Each leaves the member untouched when it already decodes
// to `value`.
void putText(Json& object, const char* key, const std::string& value, bool omitEmpty = true);
void putBool(Json& object, const char* key, bool value, bool omitEmpty = true);
void putOptionalBool(Json& object, const char* key, const std::optional<bool>& value);
void putInteger(Json& object, const char* key, std::int64_t value, bool omitEmpty = true);
void putOptionalInteger(Json& object, const char* key, const std::optional<std::int64_t>& value);
void putNumber(Json& object, const char* key, const std::optional<double>& value);
void putStrings(Json& object, const char* key, const std::vector<std::string>& value);
void putStringMap(Json& object, const char* key, const std::map<std::string, std::string>& value);
void putQuantityMap(Json& object, const char* key, const std::map<std::string, std::string>& value);
void putTime(Json& object, const char* key, const std::optional<std::int64_t>& unixSeconds);
void putMicroTime(Json& object, const char* key, const std::optional<std::int64_t>& unixMicros);
// Replaces the member with `value` unless it is already equal; an empty array or object
// removes an absent-or-null member's place rather than creating it.
void putJson(Json& object, const char* key, Json value);

// The member as an object to write into: a copy of it when it is an object, else {}. Pair with
// putJson to write it back.
Json subObject(const Json& object, const char* key);
// `raw` when it is an object, else {} (a struct built in code starts from nothing).
Json baseObject(const Json& raw);

// Checks the optional apiVersion and kind members against what the decoder expects. Lists
// return items without them, so absence is fine; a different kind is an error.
void checkTypeMeta(Decoder& d, const Json& object, std::string_view apiVersion,
                   std::string_view kind);
void setTypeMeta(Json& object, std::string_view apiVersion, std::string_view kind);

// Decodes each element of an array member with `decodeOne`, which must check that its
// element is an object.
template <typename T, typename DecodeOne>
std::vector<T> decodeList(Decoder& d, const Json& parent, const char* key, const Path& at,
                          DecodeOne decodeOne) {
  std::vector<T> out;
  const Json* list = d.array(parent, key, at);
  if (list == nullptr) return out;
  out.reserve(list->size());
  const Path here = at.child(key);
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    const Path itemPath = here.at(i);
    if (!item.is_object()) {
      d.fail(itemPath, "expected an object");
      return {};
    }
    out.push_back(decodeOne(d, item, itemPath));
  }
  return out;
}

template <typename T, typename EncodeOne>
void encodeList(Json& parent, const char* key, const std::vector<T>& items, EncodeOne encodeOne) {
  Json list = Json::array();
  for (const T& item : items) list.push_back(encodeOne(item));
  if (items.empty()) {
    const auto it = parent.find(key);
    if (it == parent.end() || it->is_null() || (it->is_array() && it->empty())) return;
    parent.erase(key);
    return;
  }
  putJson(parent, key, std::move(list));
}

}  // namespace kubeslurm::api::detail
