#include "kubeslurm/kube/watch_framing.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "kubeslurm/kube/api_status.h"

namespace kubeslurm::kube {
namespace {

constexpr std::string_view kWhitespace = " \t\r\n";

std::string_view trim(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(kWhitespace);
  if (begin == std::string_view::npos) return {};
  const std::size_t end = text.find_last_not_of(kWhitespace);
  return text.substr(begin, end - begin + 1);
}

bool parseType(std::string_view name, WatchEventType& type) {
  static constexpr std::array<std::pair<std::string_view, WatchEventType>, 5> kTypes = {{
      {"ADDED", WatchEventType::kAdded},
      {"MODIFIED", WatchEventType::kModified},
      {"DELETED", WatchEventType::kDeleted},
      {"BOOKMARK", WatchEventType::kBookmark},
      {"ERROR", WatchEventType::kError},
  }};
  for (const auto& [text, value] : kTypes) {
    if (text == name) {
      type = value;
      return true;
    }
  }
  return false;
}

Status dataLoss(std::string message) { return {StatusCode::kDataLoss, std::move(message)}; }

std::string preview(std::string_view line) {
  constexpr std::size_t kPreview = 80;
  std::string text(line.substr(0, kPreview));
  if (line.size() > kPreview) text += "...";
  return text;
}

}  // namespace

std::string_view watchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

Status WatchEvent::errorStatus() const {
  if (type != WatchEventType::kError) return Status::ok();
  return statusFromStatusObject(object, "watch");
}

std::string WatchEvent::resourceVersion() const {
  if (!object.is_object()) return {};
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  auto version = metadata->find("resourceVersion");
  if (version == metadata->end() || !version->is_string()) return {};
  return version->get<std::string>();
}

StatusOr<WatchEvent> parseWatchEvent(std::string_view line) {
  line = trim(line);
  nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return dataLoss("watch: line is not a JSON object: " + preview(line));
  }
  auto type = parsed.find("type");
  auto object = parsed.find("object");
  if (type == parsed.end() || !type->is_string()) {
    return dataLoss("watch: event without a type: " + preview(line));
  }
  WatchEvent event;
  if (!parseType(type->get_ref<const std::string&>(), event.type)) {
    return dataLoss("watch: unknown event type " + type->get<std::string>());
  }
  if (object == parsed.end() || !object->is_object()) {
    return dataLoss("watch: " + std::string(watchEventTypeName(event.type)) +
                    " event without an object");
  }
  event.object = std::move(*object);
  return event;
}

Status WatchDecoder::decodeLine(std::string_view line, std::vector<WatchEvent>& out) {
  if (trim(line).empty()) return Status::ok();  // keep-alive or a blank line between events
  auto event = parseWatchEvent(line);
  if (!event.isOk()) return event.status();
  if (event->type != WatchEventType::kError) {
    std::string version = event->resourceVersion();
    if (!version.empty()) resourceVersion_ = std::move(version);
  }
  ++eventsDecoded_;
  out.push_back(std::move(event).value());
  return Status::ok();
}

Status WatchDecoder::feed(std::string_view chunk, std::vector<WatchEvent>& out) {
  if (!error_.isOk()) return error_;
  buffer_.append(chunk);
  std::size_t lineStart = 0;
  // Only bytes not searched before are searched: a line of N bytes in K chunks costs O(N).
  std::size_t searchFrom = scanned_;
  while (true) {
    const std::size_t newline = buffer_.find('\n', searchFrom);
    if (newline == std::string::npos) break;
    const std::string_view line(buffer_.data() + lineStart, newline - lineStart);
    Status status = decodeLine(line, out);
    lineStart = newline + 1;
    searchFrom = lineStart;
    if (!status.isOk()) {
      error_ = std::move(status);
      buffer_.clear();
      scanned_ = 0;
      return error_;
    }
  }
  buffer_.erase(0, lineStart);
  scanned_ = buffer_.size();
  if (buffer_.size() > maxLineBytes_) {
    error_ = Status(StatusCode::kResourceExhausted,
                    "watch: event line longer than " + std::to_string(maxLineBytes_) + " bytes");
    buffer_.clear();
    scanned_ = 0;
    return error_;
  }
  return Status::ok();
}

Status WatchDecoder::finish() {
  if (!error_.isOk()) return error_;
  if (trim(buffer_).empty()) {
    buffer_.clear();
    scanned_ = 0;
    return Status::ok();
  }
  Status truncated = dataLoss("watch: stream ended inside an event (truncated, " +
                              std::to_string(buffer_.size()) + " bytes dropped)");
  buffer_.clear();
  scanned_ = 0;
  return truncated;
}

}  // namespace kubeslurm::kube
