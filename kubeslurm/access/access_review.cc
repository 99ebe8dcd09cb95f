#include "kubeslurm/access/access_review.h"

#include <algorithm>
#include <array>
#include <utility>

#include <openssl/sha.h>

namespace kubeslurm::access {
namespace {

using Json = nlohmann::json;

constexpr auto kRefusalTtl = std::chrono::seconds(2);

kube::ResourceType tokenReviews() { return {"authentication.k8s.io", "v1", "tokenreviews", false}; }
kube::ResourceType subjectAccessReviews() {
  return {"authorization.k8s.io", "v1", "subjectaccessreviews", false};
}

std::vector<std::string> stringsOf(const Json& value) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (const Json& item : value) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

// The whole identity (extra too: scopes change what a token may do) and the permission.
std::string decisionKey(const Identity& caller, const Permission& p) {
  Json key = {{"u", caller.user},
              {"i", caller.uid},
              {"g", caller.groups},
              {"e", caller.extra},
              {"p", {p.verb, p.group, p.resource, p.namespaceName}}};
  return key.dump();
}

std::string tokenKey(const std::string& token) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),  // NOLINT
         digest.data());
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());  // NOLINT
}

// Bearer tokens are printable ASCII without spaces (RFC 6750 b64token, and every token type
// Kubernetes issues); 16 KiB is far above any of them.
bool couldBeToken(const std::string& token) {
  constexpr std::size_t kMaxTokenBytes = std::size_t{16} << 10;
  if (token.empty() || token.size() > kMaxTokenBytes) return false;
  return std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c <= '~'; });
}

}  // namespace

KubeAuthorizer::KubeAuthorizer(kube::Writer& writer, std::chrono::seconds ttl, kube::Clock& clock)
    : writer_(writer),
      ttl_(ttl),
      clock_(clock),
      tokens_(kMaxCachedTokens),
      decisions_(kMaxCachedDecisions) {}

StatusOr<Identity> KubeAuthorizer::authenticate(const std::string& token) {
  if (token.empty()) return Status(StatusCode::kUnauthenticated, "no bearer token");
  if (!couldBeToken(token)) return Status(StatusCode::kUnauthenticated, "not a bearer token");
  const auto now = clock_.now();
  const std::string key = tokenKey(token);
  {
    const std::lock_guard lock(mutex_);
    if (auto cached = tokens_.get(key, now)) return *cached;
  }
  const Json review = {{"apiVersion", "authentication.k8s.io/v1"},
                       {"kind", "TokenReview"},
                       {"spec", {{"token", token}}}};
  auto answer = writer_.create(tokenReviews(), "", review);
  // The API server could not be asked: say so, and cache nothing.
  if (!answer.isOk()) {
    return Status(StatusCode::kUnavailable, "TokenReview failed: " + answer.status().message());
  }
  const Json status = answer->value("status", Json::object());
  StatusOr<Identity> result = Status(StatusCode::kUnauthenticated, "token not accepted");
  if (status.value("authenticated", false) && status.contains("user") &&
      status["user"].is_object()) {
    const Json& user = status["user"];
    Identity caller;
    caller.user = user.value("username", "");
    caller.uid = user.value("uid", "");
    if (user.contains("groups")) caller.groups = stringsOf(user["groups"]);
    if (user.contains("extra") && user["extra"].is_object()) {
      for (auto it = user["extra"].begin(); it != user["extra"].end(); ++it) {
        caller.extra[it.key()] = stringsOf(it.value());
      }
    }
    result = std::move(caller);
  } else if (status.contains("error") && status["error"].is_string()) {
    result = Status(StatusCode::kUnauthenticated,
                    "token not accepted: " + status["error"].get<std::string>());
  }
  const std::lock_guard lock(mutex_);
  tokens_.put(key, result, now + (result.isOk() ? ttl_ : kRefusalTtl));
  return result;
}

Status KubeAuthorizer::authorize(const Identity& caller, const Permission& permission) {
  const auto now = clock_.now();
  const std::string key = decisionKey(caller, permission);
  {
    const std::lock_guard lock(mutex_);
    if (auto cached = decisions_.get(key, now)) return *cached;
  }
  Json attributes = {
      {"verb", permission.verb}, {"group", permission.group}, {"resource", permission.resource}};
  if (!permission.namespaceName.empty()) attributes["namespace"] = permission.namespaceName;
  Json spec = {
      {"user", caller.user}, {"groups", caller.groups}, {"resourceAttributes", attributes}};
  if (!caller.uid.empty()) spec["uid"] = caller.uid;
  if (!caller.extra.empty()) spec["extra"] = caller.extra;
  const Json review = {
      {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
  auto answer = writer_.create(subjectAccessReviews(), "", review);
  if (!answer.isOk()) {
    return {StatusCode::kUnavailable, "SubjectAccessReview failed: " + answer.status().message()};
  }
  const Json status = answer->value("status", Json::object());
  Status decision;
  if (!status.value("allowed", false)) {
    std::string what = permission.verb + " " + permission.resource + "." + permission.group;
    what += permission.namespaceName.empty() ? " at the cluster scope"
                                             : " in namespace " + permission.namespaceName;
    std::string message = "user \"" + caller.user + "\" cannot " + what;
    const std::string reason = status.value("reason", "");
    if (!reason.empty()) message += ": " + reason;
    decision = Status(StatusCode::kPermissionDenied, message);
  }
  const std::lock_guard lock(mutex_);
  decisions_.put(key, decision, now + (decision.isOk() ? ttl_ : kRefusalTtl));
  return decision;
}

}  // namespace kubeslurm::access
