// Watch framing: a pure, incremental decoder of a Kubernetes watch stream.
//
// A watch body is newline-delimited JSON, one event a line:
//   {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}
// Bytes arrive in chunks cut anywhere (inside a UTF-8 sequence, between '\r' and '\n', in the
// middle of a multi-megabyte object), so the decoder buffers the incomplete tail and only
// parses complete lines, each exactly once (the classic bug of re-parsing the whole buffer on
// every chunk is quadratic on large objects).
//
// It tracks the resourceVersion to resume from: that of the last ADDED, MODIFIED, DELETED or
// BOOKMARK object (a BOOKMARK carries only metadata.resourceVersion). An ERROR event carries a
// metav1.Status; code 410 (Gone/Expired) means the resume point is older than what the server
// keeps and the caller must relist: errorStatus() maps it to kOutOfRange.
//
// Errors are sticky: after a malformed line the decoder yields nothing more (a watch stream
// that lost framing cannot be trusted) and the caller restarts from resourceVersion().
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/base/status.h"

namespace kubeslurm::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

std::string_view watchEventTypeName(WatchEventType type);

// nlohmann::json moves without throwing; bugprone-exception-escape follows its invariant asserts.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  nlohmann::json object;

  // For kError: the carried metav1.Status as a Status (410 -> kOutOfRange). OK otherwise.
  Status errorStatus() const;
  // metadata.resourceVersion of the object, or "" when absent.
  std::string resourceVersion() const;
};

class WatchDecoder {
 public:
  // One line longer than this is refused (kResourceExhausted) instead of buffered forever.
  // The API server limits objects to ~1.5 MiB in etcd; 64 MiB leaves room for any real one.
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t{64} << 20U;

  explicit WatchDecoder(std::size_t maxLineBytes = kDefaultMaxLineBytes)
      : maxLineBytes_(maxLineBytes) {}

  // Consumes a chunk and appends each event completed by it to `out`, in stream order.
  // Returns the first framing error (kDataLoss for a line that is not a watch event,
  // kResourceExhausted for an over-long line); events before it are still appended.
  Status feed(std::string_view chunk, std::vector<WatchEvent>& out);

  // The stream ended. A partial line left over is reported as kDataLoss ("truncated"), never
  // as an event: the server ends every event with '\n', so a missing one means a cut stream.
  Status finish();

  // Resume point: the resourceVersion of the last non-ERROR event that carried one, or the
  // initial value.
  const std::string& resourceVersion() const { return resourceVersion_; }
  void setResourceVersion(std::string resourceVersion) {
    resourceVersion_ = std::move(resourceVersion);
  }

  // Bytes held for a line not yet complete.
  std::size_t buffered() const { return buffer_.size(); }
  std::size_t eventsDecoded() const { return eventsDecoded_; }

 private:
  Status decodeLine(std::string_view line, std::vector<WatchEvent>& out);

  std::size_t maxLineBytes_;
  std::string buffer_;
  // Bytes of buffer_ already searched for '\n' (all of it: they hold none).
  std::size_t scanned_ = 0;
  std::string resourceVersion_;
  std::size_t eventsDecoded_ = 0;
  Status error_;
};

// Parses one event line (no trailing newline; surrounding whitespace and '\r' allowed).
StatusOr<WatchEvent> parseWatchEvent(std::string_view line);

}  // namespace kubeslurm::kube
