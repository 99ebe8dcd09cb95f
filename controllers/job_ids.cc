#include "controllers/job_ids.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/base/text.h"

namespace kubeslurm::controllers {

namespace {
constexpr const char* kNextKey = "next";
}  // namespace

JobIdAllocator::JobIdAllocator(kube::Reader& reader, kube::Writer& writer, JobIdOptions options)
    : reader_(reader), writer_(writer), options_(std::move(options)) {}

StatusOr<std::int64_t> JobIdAllocator::next() {
  std::lock_guard lock(mutex_);
  if (nextInBlock_ >= blockEnd_) {
    if (Status reserved = reserveBlock(); !reserved.isOk()) return reserved;
  }
  return nextInBlock_++;
}

StatusOr<std::int64_t> JobIdAllocator::peek() {
  std::lock_guard lock(mutex_);
  if (nextInBlock_ < blockEnd_) return nextInBlock_;
  return blockStart(
      reader_.get(kube::resources::configMaps(), options_.namespaceName, options_.configMapName));
}

StatusOr<std::int64_t> JobIdAllocator::blockStart(const StatusOr<kube::Json>& current) const {
  if (!current.isOk()) {
    if (current.status().code() != StatusCode::kNotFound) return current.status();
    const std::int64_t highest = options_.highestIdInUse ? options_.highestIdInUse() : 0;
    return std::max(options_.firstJobId, highest + 1);
  }
  const kube::Json& object = *current;
  const std::optional<std::int64_t> parsed =
      object.is_object() && object.contains("data")
          ? parseInteger<std::int64_t>(api::stringMember(object["data"], kNextKey))
          : std::nullopt;
  if (!parsed || *parsed < 1) {
    return Status(StatusCode::kDataLoss,
                  "ConfigMap " + options_.namespaceName + "/" + options_.configMapName +
                      " has no valid data.next job-id counter; refusing to guess one (ids "
                      "must never be reused)");
  }
  return std::max(*parsed, options_.firstJobId);
}

Status JobIdAllocator::reserveBlock() {
  const kube::ResourceType type = kube::resources::configMaps();
  for (int attempt = 0; attempt <= options_.maxConflictRetries; ++attempt) {
    auto current = reader_.get(type, options_.namespaceName, options_.configMapName);
    auto first = blockStart(current);
    if (!first.isOk()) return first.status();
    const std::int64_t start = *first;
    const bool exists = current.isOk();
    kube::Json object;
    if (exists) {
      object = std::move(current).value();
    } else {
      object = {
          {"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", options_.configMapName}, {"namespace", options_.namespaceName}}}};
    }
    object["data"][kNextKey] = std::to_string(start + options_.blockSize);
    // An update carries the resourceVersion we read: a concurrent reservation makes it fail
    // with kAborted and we read again; a create races the same way with kAlreadyExists.
    auto written = exists ? writer_.update(type, options_.namespaceName, object)
                          : writer_.create(type, options_.namespaceName, object);
    if (written.isOk()) {
      nextInBlock_ = start;
      blockEnd_ = start + options_.blockSize;
      return Status::ok();
    }
    const StatusCode code = written.status().code();
    if (code != StatusCode::kAborted && code != StatusCode::kAlreadyExists) {
      return written.status();
    }
  }
  return {StatusCode::kAborted, "could not reserve job ids: the counter kept changing under us"};
}

}  // namespace kubeslurm::controllers
