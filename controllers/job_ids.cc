#include "controllers/job_ids.h"

#include <utility>

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

Status JobIdAllocator::reserveBlock() {
  const kube::ResourceType type = kube::resources::configMaps();
  for (int attempt = 0; attempt <= options_.maxConflictRetries; ++attempt) {
    auto current = reader_.get(type, options_.namespaceName, options_.configMapName);
    if (!current.isOk() && current.status().code() != StatusCode::kNotFound) {
      return current.status();
    }
    std::int64_t start = options_.firstJobId;
    const bool exists = current.isOk();
    kube::Json object;
    if (exists) {
      object = std::move(current).value();
      const kube::Json* text = nullptr;
      if (object.contains("data") && object["data"].is_object() &&
          object["data"].contains(kNextKey) && object["data"][kNextKey].is_string()) {
        text = &object["data"][kNextKey];
      }
      const auto parsed =
          text != nullptr ? parseInteger<std::int64_t>(text->get<std::string>()) : std::nullopt;
      if (!parsed || *parsed < 1) {
        return {StatusCode::kDataLoss, "ConfigMap " + options_.namespaceName + "/" +
                                           options_.configMapName +
                                           " has no valid data.next job-id counter; refusing "
                                           "to guess one (ids must never be reused)"};
      }
      start = std::max(*parsed, options_.firstJobId);
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
