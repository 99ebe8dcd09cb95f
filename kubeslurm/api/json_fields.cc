#include "kubeslurm/api/json_fields.h"

#include <limits>
#include <utility>

#include "kubeslurm/api/timestamp.h"
#include "kubeslurm/base/text.h"

namespace kubeslurm::api::detail {

std::string Path::render() const {
  std::vector<const Path*> chain;
  for (const Path* p = this; p != nullptr; p = p->parent) chain.push_back(p);
  std::string out;
  for (std::size_t i = chain.size(); i-- > 0;) {
    const Path& p = *chain[i];
    if (p.isIndex) {
      out += '[';
      out += std::to_string(p.index);
      out += ']';
    } else if (!p.key.empty()) {
      if (!out.empty()) out += '.';
      out += p.key;
    }
  }
  return out.empty() ? std::string("(object)") : out;
}

void Decoder::fail(const Path& at, std::string_view problem) {
  if (status_.isOk()) status_ = invalidArgument(at.render() + ": " + std::string(problem));
}

const Json* Decoder::member(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  // Through the std::map itself: GCC 12 sees a possible null in nlohmann's iterator.
  const auto& map = object.get_ref<const Json::object_t&>();
  const auto it = map.find(key);
  if (it == map.end() || it->second.is_null()) return nullptr;
  return &it->second;
}

const Json* Decoder::object(const Json& parent, const char* key, const Path& at) {
  const Json* value = member(parent, key);
  if (value == nullptr) return nullptr;
  if (!value->is_object()) {
    fail(at.child(key), "expected an object");
    return nullptr;
  }
  return value;
}

const Json* Decoder::array(const Json& parent, const char* key, const Path& at) {
  const Json* value = member(parent, key);
  if (value == nullptr) return nullptr;
  if (!value->is_array()) {
    fail(at.child(key), "expected an array");
    return nullptr;
  }
  return value;
}

std::string Decoder::text(const Json& parent, const char* key, const Path& at) {
  const Json* value = member(parent, key);
  if (value == nullptr) return {};
  if (!value->is_string()) {
    fail(at.child(key), "expected a string");
    return {};
  }
  return value->get_ref<const std::string&>();
}

bool Decoder::boolean(const Json& parent, const char* key, const Path& at) {
  return optionalBoolean(parent, key, at).value_or(false);
}

std::optional<bool> Decoder::optionalBoolean(const Json& parent, const char* key, const Path& at) {
  const Json* value = member(parent, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    fail(at.child(key), "expected a boolean");
    return std::nullopt;
  }
  return value->get<bool>();
}

std::optional<std::int64_t> Decoder::integer(const Json& parent, const char* key, const Path& at,
                                             std::int64_t min, std::int64_t max) {
  const Json* value = member(parent, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) {
    // Go's encoding/json rejects 1.5 and 1e3 for an integer field, as here.
    fail(at.child(key), "expected an integer");
    return std::nullopt;
  }
  const std::optional<std::int64_t> n = integerOf(value);
  if (!n || *n < min || *n > max) {
    fail(at.child(key), "integer out of range");
    return std::nullopt;
  }
  return n;
}

std::optional<std::int32_t> Decoder::int32(const Json& parent, const char* key, const Path& at) {
  const std::optional<std::int64_t> n =
      integer(parent, key, at, std::numeric_limits<std::int32_t>::min(),
              std::numeric_limits<std::int32_t>::max());
  if (!n) return std::nullopt;
  return static_cast<std::int32_t>(*n);
}

std::optional<std::int64_t> Decoder::int64(const Json& parent, const char* key, const Path& at) {
  return integer(parent, key, at, std::numeric_limits<std::int64_t>::min(),
                 std::numeric_limits<std::int64_t>::max());
}

std::optional<double> Decoder::number(const Json& parent, const char* key, const Path& at) {
  const Json* value = member(parent, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) {
    fail(at.child(key), "expected a number");
    return std::nullopt;
  }
  return value->get<double>();
}

std::vector<std::string> Decoder::strings(const Json& parent, const char* key, const Path& at) {
  std::vector<std::string> out;
  const Json* list = array(parent, key, at);
  if (list == nullptr) return out;
  out.reserve(list->size());
  const Path here = at.child(key);
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    if (!item.is_string()) {
      fail(here.at(i), "expected a string");
      return {};
    }
    out.push_back(item.get_ref<const std::string&>());
  }
  return out;
}

std::map<std::string, std::string> Decoder::stringMap(const Json& parent, const char* key,
                                                      const Path& at) {
  std::map<std::string, std::string> out;
  const Json* map = object(parent, key, at);
  if (map == nullptr) return out;
  const Path here = at.child(key);
  for (const auto& [name, value] : map->items()) {
    if (value.is_null()) continue;  // Go decodes a null map value to ""; so do we, by omission
    if (!value.is_string()) {
      fail(here.child(name), "expected a string");
      return {};
    }
    out.emplace(name, value.get_ref<const std::string&>());
  }
  return out;
}

std::map<std::string, std::string> Decoder::quantityMap(const Json& parent, const char* key,
                                                        const Path& at) {
  std::map<std::string, std::string> out;
  const Json* map = object(parent, key, at);
  if (map == nullptr) return out;
  const Path here = at.child(key);
  for (const auto& [name, value] : map->items()) {
    std::optional<std::string> text = quantityTextOf(value);
    if (!text) {
      fail(here.child(name), "expected a quantity (a string or a number)");
      return {};
    }
    out.emplace(name, std::move(*text));
  }
  return out;
}

namespace {
// Time and MicroTime differ only in their parser (seconds vs microseconds).
std::optional<std::int64_t> timeMember(Decoder& d, const Json& parent, const char* key,
                                       const Path& at,
                                       StatusOr<std::int64_t> (*parse)(std::string_view)) {
  const Json* value = Decoder::member(parent, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    d.fail(at.child(key), "expected an RFC 3339 time string");
    return std::nullopt;
  }
  StatusOr<std::int64_t> t = parse(value->get_ref<const std::string&>());
  if (!t.isOk()) {
    d.fail(at.child(key), t.status().message());
    return std::nullopt;
  }
  return *t;
}
}  // namespace

std::optional<std::int64_t> Decoder::time(const Json& parent, const char* key, const Path& at) {
  return timeMember(*this, parent, key, at, &parseTimestamp);
}

std::optional<std::int64_t> Decoder::microTime(const Json& parent, const char* key,
                                               const Path& at) {
  return timeMember(*this, parent, key, at, &parseMicroTime);
}

std::optional<std::string> textOf(const Json* value) {
  if (value == nullptr || value->is_null()) return std::string();
  if (!value->is_string()) return std::nullopt;
  return value->get_ref<const std::string&>();
}

std::optional<std::int64_t> integerOf(const Json* value) {
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  if (value->is_number_unsigned()) {
    const auto u = value->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  return value->get<std::int64_t>();
}

std::optional<std::string> quantityTextOf(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>();
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) return value.dump();
  return std::nullopt;
}

namespace {

const Json* find(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto& map = object.get_ref<const Json::object_t&>();
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

bool isAbsentOrNull(const Json* value) { return value == nullptr || value->is_null(); }

void setOrErase(Json& object, const char* key, bool erase, Json value) {
  if (erase) {
    object.erase(key);
  } else {
    object[key] = std::move(value);
  }
}

}  // namespace

void putText(Json& object, const char* key, const std::string& value, bool omitEmpty) {
  if (textOf(find(object, key)) == value) return;
  setOrErase(object, key, value.empty() && omitEmpty, value);
}

void putBool(Json& object, const char* key, bool value, bool omitEmpty) {
  const Json* current = find(object, key);
  if (isAbsentOrNull(current) && !value) return;
  if (current != nullptr && current->is_boolean() && current->get<bool>() == value) return;
  setOrErase(object, key, !value && omitEmpty, value);
}

void putOptionalBool(Json& object, const char* key, const std::optional<bool>& value) {
  const Json* current = find(object, key);
  if (!value) {
    if (!isAbsentOrNull(current)) object.erase(key);
    return;
  }
  if (current != nullptr && current->is_boolean() && current->get<bool>() == *value) return;
  object[key] = *value;
}

void putInteger(Json& object, const char* key, std::int64_t value, bool omitEmpty) {
  const Json* current = find(object, key);
  if (isAbsentOrNull(current)) {
    if (value == 0) return;
  } else if (integerOf(current) == value) {
    return;
  }
  setOrErase(object, key, value == 0 && omitEmpty, value);
}

void putOptionalInteger(Json& object, const char* key, const std::optional<std::int64_t>& value) {
  const Json* current = find(object, key);
  if (!value) {
    if (!isAbsentOrNull(current)) object.erase(key);
    return;
  }
  if (integerOf(current) == *value) return;
  object[key] = *value;
}

void putNumber(Json& object, const char* key, const std::optional<double>& value) {
  const Json* current = find(object, key);
  if (!value) {
    if (!isAbsentOrNull(current)) object.erase(key);
    return;
  }
  if (current != nullptr && current->is_number() && current->get<double>() == *value) return;
  object[key] = *value;
}

void putStrings(Json& object, const char* key, const std::vector<std::string>& value) {
  const Json* current = find(object, key);
  if (value.empty()) {
    if (isAbsentOrNull(current) || (current->is_array() && current->empty())) return;
    object.erase(key);
    return;
  }
  if (current != nullptr && current->is_array() && current->size() == value.size()) {
    bool same = true;
    for (std::size_t i = 0; i < value.size() && same; ++i) {
      const Json& item = (*current)[i];
      same = item.is_string() && item.get_ref<const std::string&>() == value[i];
    }
    if (same) return;
  }
  object[key] = value;
}

void putStringMap(Json& object, const char* key, const std::map<std::string, std::string>& value) {
  const Json* current = find(object, key);
  if (current != nullptr && current->is_object()) {
    std::size_t nonNull = 0;
    bool same = true;
    for (const auto& [name, item] : current->items()) {
      if (item.is_null()) continue;
      ++nonNull;
      const auto it = value.find(name);
      if (!item.is_string() || it == value.end() ||
          it->second != item.get_ref<const std::string&>()) {
        same = false;
        break;
      }
    }
    if (same && nonNull == value.size()) return;
  } else if (isAbsentOrNull(current) && value.empty()) {
    return;
  }
  setOrErase(object, key, value.empty(), Json(value));
}

void putQuantityMap(Json& object, const char* key,
                    const std::map<std::string, std::string>& value) {
  const Json* current = find(object, key);
  if (current != nullptr && current->is_object() && current->size() == value.size()) {
    bool same = true;
    for (const auto& [name, item] : current->items()) {
      const auto it = value.find(name);
      if (it == value.end() || quantityTextOf(item) != it->second) {
        same = false;
        break;
      }
    }
    if (same) return;
  } else if (isAbsentOrNull(current) && value.empty()) {
    return;
  }
  setOrErase(object, key, value.empty(), Json(value));
}

void putTime(Json& object, const char* key, const std::optional<std::int64_t>& unixSeconds) {
  const Json* current = find(object, key);
  if (!unixSeconds) {
    if (!isAbsentOrNull(current)) object.erase(key);
    return;
  }
  if (current != nullptr && current->is_string()) {
    StatusOr<std::int64_t> now = parseTimestamp(current->get_ref<const std::string&>());
    if (now.isOk() && *now == *unixSeconds) return;
  }
  object[key] = formatTimestamp(*unixSeconds);
}

void putMicroTime(Json& object, const char* key, const std::optional<std::int64_t>& unixMicros) {
  const Json* current = find(object, key);
  if (!unixMicros) {
    if (!isAbsentOrNull(current)) object.erase(key);
    return;
  }
  if (current != nullptr && current->is_string()) {
    StatusOr<std::int64_t> now = parseMicroTime(current->get_ref<const std::string&>());
    if (now.isOk() && *now == *unixMicros) return;
  }
  object[key] = formatMicroTime(*unixMicros);
}

void putJson(Json& object, const char* key, Json value) {
  const Json* current = find(object, key);
  if (current != nullptr && *current == value) return;
  const bool empty = (value.is_object() || value.is_array()) && value.empty();
  if (empty && isAbsentOrNull(current)) return;
  object[key] = std::move(value);
}

Json subObject(const Json& object, const char* key) {
  const Json* current = find(object, key);
  if (current != nullptr && current->is_object()) return *current;
  return Json::object();
}

Json baseObject(const Json& raw) { return raw.is_object() ? raw : Json::object(); }

void checkTypeMeta(Decoder& d, const Json& object, std::string_view apiVersion,
                   std::string_view kind) {
  const Path root;
  const std::string gotVersion = d.text(object, "apiVersion", root);
  const std::string gotKind = d.text(object, "kind", root);
  if (!gotKind.empty() && gotKind != kind) {
    d.fail(root.child("kind"),
           "expected " + std::string(kind) + ", got " + quoteForDiagnostic(gotKind, 64));
  }
  if (!gotVersion.empty() && gotVersion != apiVersion) {
    d.fail(root.child("apiVersion"),
           "expected " + std::string(apiVersion) + ", got " + quoteForDiagnostic(gotVersion, 64));
  }
}

void setTypeMeta(Json& object, std::string_view apiVersion, std::string_view kind) {
  putText(object, "apiVersion", std::string(apiVersion));
  putText(object, "kind", std::string(kind));
}

}  // namespace kubeslurm::api::detail
