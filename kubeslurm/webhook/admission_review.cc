#include "kubeslurm/webhook/admission_review.h"

#include <utility>

#include "kubeslurm/api/json_text.h"

namespace kubeslurm::webhook {
namespace {

std::string text(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> strings(const Json& value) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (const Json& item : value) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

// Base64 (RFC 4648, with padding) of the JSONPatch, as AdmissionResponse.patch carries it.
std::string base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
                   static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(n >> 18U) & 63U];
    out += kAlphabet[(n >> 12U) & 63U];
    out += kAlphabet[(n >> 6U) & 63U];
    out += kAlphabet[n & 63U];
  }
  if (i < bytes.size()) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16U;
    const bool two = i + 1 < bytes.size();
    if (two) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
    out += kAlphabet[(n >> 18U) & 63U];
    out += kAlphabet[(n >> 12U) & 63U];
    out += two ? kAlphabet[(n >> 6U) & 63U] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

AdmissionResponse allow() { return AdmissionResponse{}; }

AdmissionResponse refuse(std::string message, std::int32_t code, std::string reason) {
  AdmissionResponse response;
  response.allowed = false;
  response.message = std::move(message);
  response.code = code;
  response.reason = std::move(reason);
  return response;
}

StatusOr<AdmissionRequest> decodeAdmissionReview(std::string_view body,
                                                 const ReviewLimits& limits) {
  auto parsed = api::parseJson(body, {limits.maxBytes, limits.maxDepth});
  if (!parsed.isOk()) {
    return Status(parsed.status().code(), "an AdmissionReview: " + parsed.status().message());
  }
  const Json review = std::move(parsed).value();
  if (!review.is_object()) return invalidArgument("the body is not a JSON object");
  if (text(review, "apiVersion") != "admission.k8s.io/v1" ||
      text(review, "kind") != "AdmissionReview") {
    return invalidArgument("not an admission.k8s.io/v1 AdmissionReview");
  }
  const auto request = review.find("request");
  if (request == review.end() || !request->is_object()) {
    return invalidArgument("an AdmissionReview without a request");
  }
  AdmissionRequest out;
  out.uid = text(*request, "uid");
  if (out.uid.empty()) return invalidArgument("an AdmissionReview request without a uid");
  if (const auto kind = request->find("kind"); kind != request->end()) {
    out.group = text(*kind, "group");
    out.kind = text(*kind, "kind");
  }
  if (const auto resource = request->find("resource"); resource != request->end()) {
    out.resource = text(*resource, "resource");
  }
  out.subResource = text(*request, "subResource");
  out.operation = text(*request, "operation");
  out.namespaceName = text(*request, "namespace");
  out.name = text(*request, "name");
  if (const auto user = request->find("userInfo"); user != request->end() && user->is_object()) {
    out.user.user = text(*user, "username");
    out.user.uid = text(*user, "uid");
    if (const auto groups = user->find("groups"); groups != user->end()) {
      out.user.groups = strings(*groups);
    }
    if (const auto extra = user->find("extra"); extra != user->end() && extra->is_object()) {
      for (const auto& [key, value] : extra->items()) out.user.extra[key] = strings(value);
    }
  }
  if (const auto object = request->find("object"); object != request->end()) {
    out.object = *object;
  }
  if (const auto old = request->find("oldObject"); old != request->end()) {
    out.oldObject = *old;
  }
  if (const auto dryRun = request->find("dryRun");
      dryRun != request->end() && dryRun->is_boolean()) {
    out.dryRun = dryRun->get<bool>();
  }
  return out;
}

std::string encodeAdmissionReview(const AdmissionRequest& request,
                                  const AdmissionResponse& response) {
  Json answer = {{"uid", request.uid}, {"allowed", response.allowed}};
  if (!response.allowed) {
    answer["status"] = {
        {"code", response.code}, {"reason", response.reason}, {"message", response.message}};
  }
  if (response.allowed && response.patch.is_array() && !response.patch.empty()) {
    answer["patchType"] = "JSONPatch";
    answer["patch"] = base64(response.patch.dump());
  }
  if (!response.warnings.empty()) answer["warnings"] = response.warnings;
  const Json review = {{"apiVersion", "admission.k8s.io/v1"},
                       {"kind", "AdmissionReview"},
                       {"response", std::move(answer)}};
  return review.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string pointerSegment(std::string_view segment) {
  std::string out;
  for (const char c : segment) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kubeslurm::webhook
