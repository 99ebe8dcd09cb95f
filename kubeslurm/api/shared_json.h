// A JSON document that copies of a decoded object share, copied on the first change.
//
// A decoded SlurmJob keeps the object it was decoded from (`raw`), so that encoding it keeps
// what the codec does not model. The operator's informers already hold that object as one
// immutable tree (kube::ObjectPtr), and a deep copy in every decoded job doubled what the
// operator holds per job: about 5 KB each, 250 MB at 50,000 jobs (operator_cache_bench). A
// SharedJson holds the tree by reference and copies it only when a holder changes it, which only
// code that builds a new object from an old one does.
//
// Thread safety: as for std::shared_ptr. A shared document is never changed (edit() copies it
// first), so holders on several threads may read it at once; one SharedJson is one thread's.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

namespace kubeslurm::api {

class SharedJson {
 public:
  SharedJson() = default;  // {}
  // Takes `document` as this holder's own.
  SharedJson(nlohmann::json document);  // NOLINT(google-explicit-constructor): `raw = object`
  // Shares `document`, which nobody may change while it is shared (an informer's stored object);
  // null is {}.
  explicit SharedJson(std::shared_ptr<const nlohmann::json> document);

  const nlohmann::json& operator*() const { return document_ ? *document_ : empty(); }
  const nlohmann::json* operator->() const { return &**this; }

  // The document to change: copied first unless this holder made it and is its only holder.
  nlohmann::json& edit();

  // Whether both hold the same document (not a copy of it).
  bool sharesWith(const SharedJson& other) const { return document_ == other.document_; }

 private:
  static const nlohmann::json& empty();

  std::shared_ptr<const nlohmann::json> document_;  // null: {}
  bool owned_ = false;  // made by this holder (or a copy of it) as a non-const object
};

}  // namespace kubeslurm::api
