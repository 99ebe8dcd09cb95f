#include "kubeslurm/kube/api_status.h"

#include <string>

#include <nlohmann/json.hpp>

namespace kubeslurm::kube {
namespace {

std::string stringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

std::string describe(int httpCode, std::string_view reason, std::string_view message,
                     std::string_view what) {
  std::string text(what);
  text += ": ";
  text += message.empty() ? std::string_view("no message") : message;
  text += " (HTTP ";
  text += std::to_string(httpCode);
  if (!reason.empty()) {
    text += ' ';
    text += reason;
  }
  text += ')';
  return text;
}

}  // namespace

StatusCode statusCodeForHttp(int httpCode, std::string_view reason) {
  if (httpCode >= 200 && httpCode < 300) return StatusCode::kOk;
  switch (httpCode) {
    case 400:
    case 422:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 405:
    case 501:
      return StatusCode::kUnimplemented;
    case 409:
      // The server says which conflict it is: a create of an existing name is AlreadyExists;
      // everything else (stale resourceVersion, uid precondition, pod already bound) is a
      // conflict that the caller resolves by re-reading.
      return reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kAborted;
    case 410:
      return StatusCode::kOutOfRange;
    case 408:
    case 504:
      // Both are the server giving up on time; retrying is as right as for any other 5xx.
      return StatusCode::kUnavailable;
    case 413:
    case 429:
      return StatusCode::kResourceExhausted;
    default:
      break;
  }
  if (httpCode >= 500 && httpCode < 600) return StatusCode::kUnavailable;
  if (httpCode >= 400 && httpCode < 500) return StatusCode::kFailedPrecondition;
  return StatusCode::kUnknown;
}

Status statusFromResponse(int httpCode, std::string_view body, std::string_view what) {
  std::string reason;
  std::string message;
  // The API server answers errors with a metav1.Status; proxies and load balancers in between
  // may answer with HTML or nothing, so the body is only a hint.
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && stringField(parsed, "kind") == "Status") {
    reason = stringField(parsed, "reason");
    message = stringField(parsed, "message");
  } else if (!body.empty()) {
    constexpr std::size_t kMaxBodyInMessage = 256;
    message = std::string(body.substr(0, kMaxBodyInMessage));
  }
  const StatusCode code = statusCodeForHttp(httpCode, reason);
  if (code == StatusCode::kOk) return Status::ok();
  return {code, describe(httpCode, reason, message, what)};
}

Status statusFromStatusObject(const nlohmann::json& object, std::string_view what) {
  if (!object.is_object()) return {StatusCode::kUnknown, std::string(what) + ": no status"};
  int httpCode = 500;
  auto it = object.find("code");
  if (it != object.end() && it->is_number_integer()) {
    const auto value = it->get<long long>();
    if (value >= 100 && value < 600) httpCode = static_cast<int>(value);
  }
  const std::string reason = stringField(object, "reason");
  const StatusCode code = statusCodeForHttp(httpCode, reason);
  // An ERROR event is an error even when it carries a 2xx code; keep it one.
  return {code == StatusCode::kOk ? StatusCode::kUnknown : code,
          describe(httpCode, reason, stringField(object, "message"), what)};
}

}  // namespace kubeslurm::kube
