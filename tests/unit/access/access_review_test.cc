// KubeAuthorizer: what it sends the API server, what it makes of the answers, and how long it
// remembers them (kubeslurm/access/access_review.h).
#include "kubeslurm/access/access_review.h"

#include <gtest/gtest.h>

#include "tests/support/manual_clock.h"

namespace kubeslurm::access {
namespace {

using Json = nlohmann::json;

// Answers TokenReviews and SubjectAccessReviews as the API server would, and records them.
class FakeReviews final : public kube::Writer {
 public:
  std::vector<Json> sent;
  std::function<Json(const Json&)> answer;
  std::optional<Status> failure;

  StatusOr<Json> create(const kube::ResourceType&, std::string_view, const Json& object) override {
    sent.push_back(object);
    if (failure) return *failure;
    return answer(object);
  }
  StatusOr<Json> update(const kube::ResourceType&, std::string_view, const Json&) override {
    return Status(StatusCode::kUnimplemented, "update");
  }
  StatusOr<Json> patch(const kube::ResourceType&, std::string_view, std::string_view,
                       const Json&) override {
    return Status(StatusCode::kUnimplemented, "patch");
  }
  Status remove(const kube::ResourceType&, std::string_view, std::string_view,
                const kube::DeleteOptions&) override {
    return {StatusCode::kUnimplemented, "remove"};
  }
};

Json reviewAnswer(const Json& request) {
  Json out = request;
  if (request["kind"] == "TokenReview") {
    if (request["spec"]["token"] == "alice-token") {
      out["status"] = {{"authenticated", true},
                       {"user",
                        {{"username", "alice"},
                         {"uid", "u-1"},
                         {"groups", {"team-a", "system:authenticated"}},
                         {"extra", {{"scopes", {"x"}}}}}}};
    } else {
      out["status"] = {{"authenticated", false}, {"error", "invalid bearer token"}};
    }
    return out;
  }
  const bool allowed = request["spec"]["resourceAttributes"].value("namespace", "") == "team-a";
  out["status"] = {{"allowed", allowed}};
  if (!allowed) out["status"]["reason"] = "no RBAC policy matched";
  return out;
}

class KubeAuthorizerTest : public ::testing::Test {
 protected:
  FakeReviews reviews;
  testing_support::ManualClock clock;
  KubeAuthorizer authorizer{reviews, std::chrono::seconds(10), clock};
  void SetUp() override { reviews.answer = reviewAnswer; }
};

TEST_F(KubeAuthorizerTest, AcceptedTokenGivesTheCallerAndIsRemembered) {
  auto caller = authorizer.authenticate("alice-token");
  ASSERT_TRUE(caller.isOk()) << caller.status().toString();
  EXPECT_EQ(caller->user, "alice");
  EXPECT_EQ(caller->uid, "u-1");
  EXPECT_EQ(caller->groups, (std::vector<std::string>{"team-a", "system:authenticated"}));
  EXPECT_EQ(caller->extra.at("scopes"), std::vector<std::string>{"x"});
  ASSERT_EQ(reviews.sent.size(), 1u);
  EXPECT_EQ(reviews.sent[0]["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(reviews.sent[0]["spec"]["token"], "alice-token");

  clock.advance(std::chrono::seconds(9));
  EXPECT_TRUE(authorizer.authenticate("alice-token").isOk());
  EXPECT_EQ(reviews.sent.size(), 1u);  // cached
  clock.advance(std::chrono::seconds(2));
  EXPECT_TRUE(authorizer.authenticate("alice-token").isOk());
  EXPECT_EQ(reviews.sent.size(), 2u);  // the ttl passed: asked again
}

TEST_F(KubeAuthorizerTest, RejectedAndMissingTokensAreUnauthenticated) {
  auto rejected = authorizer.authenticate("forged");
  EXPECT_EQ(rejected.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(rejected.status().message().find("invalid bearer token"), std::string::npos);
  EXPECT_EQ(authorizer.authenticate("").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(reviews.sent.size(), 1u);  // an empty token never reaches the API server
  // A refusal is kept for 2 s only.
  clock.advance(std::chrono::seconds(3));
  (void)authorizer.authenticate("forged");
  EXPECT_EQ(reviews.sent.size(), 2u);
}

TEST_F(KubeAuthorizerTest, AnApiServerThatCannotBeAskedIsUnavailableAndNotCached) {
  reviews.failure = Status(StatusCode::kUnavailable, "connection refused");
  EXPECT_EQ(authorizer.authenticate("alice-token").status().code(), StatusCode::kUnavailable);
  reviews.failure.reset();
  EXPECT_TRUE(authorizer.authenticate("alice-token").isOk());
}

TEST_F(KubeAuthorizerTest, SubjectAccessReviewCarriesTheCallerAndTheResource) {
  const Identity alice = *authorizer.authenticate("alice-token");
  reviews.sent.clear();
  EXPECT_TRUE(authorizer.authorize(alice, {"list", "kubeslurm.io", "slurmjobs", "team-a"}).isOk());
  ASSERT_EQ(reviews.sent.size(), 1u);
  const Json& spec = reviews.sent[0]["spec"];
  EXPECT_EQ(reviews.sent[0]["kind"], "SubjectAccessReview");
  EXPECT_EQ(spec["user"], "alice");
  EXPECT_EQ(spec["uid"], "u-1");
  EXPECT_EQ(spec["groups"][0], "team-a");
  EXPECT_EQ(spec["extra"]["scopes"][0], "x");
  EXPECT_EQ(spec["resourceAttributes"], (Json{{"verb", "list"},
                                              {"group", "kubeslurm.io"},
                                              {"resource", "slurmjobs"},
                                              {"namespace", "team-a"}}));

  const Status denied = authorizer.authorize(alice, {"list", "kubeslurm.io", "slurmjobs", "b"});
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.message(),
            "user \"alice\" cannot list slurmjobs.kubeslurm.io in namespace b: no RBAC policy "
            "matched");
  const Status cluster = authorizer.authorize(alice, {"list", "kubeslurm.io", "accounts", ""});
  EXPECT_EQ(cluster.message(),
            "user \"alice\" cannot list accounts.kubeslurm.io at the cluster scope: no RBAC "
            "policy matched");
  EXPECT_FALSE(reviews.sent.back()["spec"]["resourceAttributes"].contains("namespace"));
  // Decisions are cached per caller and permission.
  const std::size_t asked = reviews.sent.size();
  EXPECT_TRUE(authorizer.authorize(alice, {"list", "kubeslurm.io", "slurmjobs", "team-a"}).isOk());
  EXPECT_EQ(reviews.sent.size(), asked);
}

TEST_F(KubeAuthorizerTest, StringsThatCannotBeTokensAreRefusedWithoutAReview) {
  // RFC 6750 b64token: printable ASCII, no spaces; nothing Kubernetes issues is 16 KiB long.
  for (const std::string& garbage :
       {std::string("has space"), std::string("tab\there"), std::string("nul\0x", 5),
        std::string("\xff\xfe"), std::string((16 << 10) + 1, 'a')}) {
    EXPECT_EQ(authorizer.authenticate(garbage).status().code(), StatusCode::kUnauthenticated);
  }
  EXPECT_TRUE(reviews.sent.empty());
  (void)authorizer.authenticate(std::string(16 << 10, 'a'));  // at the limit: asked
  EXPECT_EQ(reviews.sent.size(), 1u);
}

TEST_F(KubeAuthorizerTest, AFloodOfDistinctTokensIsRememberedWithinABound) {
  // Each forged token is reviewed once and its refusal remembered, but the memory is bounded:
  // the oldest refusals give way, and a token seen recently is still answered from memory.
  const std::size_t flood = KubeAuthorizer::kMaxCachedTokens + 100;
  for (std::size_t i = 0; i < flood; ++i) (void)authorizer.authenticate("t" + std::to_string(i));
  EXPECT_EQ(reviews.sent.size(), flood);
  (void)authorizer.authenticate("t" + std::to_string(flood - 1));
  EXPECT_EQ(reviews.sent.size(), flood);  // recent: cached
  (void)authorizer.authenticate("t0");
  EXPECT_EQ(reviews.sent.size(), flood + 1);  // evicted: asked again
}

TEST_F(KubeAuthorizerTest, DecisionsDependOnTheWholeIdentityIncludingExtra) {
  // A token scoped by `extra` (e.g. authentication.kubernetes.io/pod-name) may be refused what
  // the same user without the scope is allowed; the cache must not mix the two.
  Identity scoped{"alice", "u-1", {"team-a"}, {{"scopes", {"narrow"}}}};
  Identity unscoped{"alice", "u-1", {"team-a"}, {}};
  (void)authorizer.authorize(scoped, {"get", "", "pods", "team-a"});
  (void)authorizer.authorize(unscoped, {"get", "", "pods", "team-a"});
  EXPECT_EQ(reviews.sent.size(), 2u);
}

}  // namespace
}  // namespace kubeslurm::access
