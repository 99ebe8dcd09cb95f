// The AdmissionReview codec (kubeslurm/webhook/admission_review.h): what the API server sends,
// what it gets back, and the bounds on what anyone who reaches the port can send.
#include "kubeslurm/webhook/admission_review.h"

#include <string>

#include <gtest/gtest.h>

namespace kubeslurm::webhook {
namespace {

std::string review(const Json& request) {
  return Json({{"apiVersion", "admission.k8s.io/v1"},
               {"kind", "AdmissionReview"},
               {"request", request}})
      .dump();
}

TEST(AdmissionReview, DecodesWhatTheApiServerSends) {
  const std::string body =
      review({{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
              {"kind", {{"group", "kubeslurm.io"}, {"version", "v1alpha1"}, {"kind", "SlurmJob"}}},
              {"resource",
               {{"group", "kubeslurm.io"}, {"version", "v1alpha1"}, {"resource", "slurmjobs"}}},
              {"namespace", "team-a"},
              {"operation", "CREATE"},
              {"userInfo",
               {{"username", "oidc:alice"},
                {"uid", "u1"},
                {"groups", {"g1"}},
                {"extra", {{"scopes", {"s"}}}}}},
              {"object", {{"kind", "SlurmJob"}}},
              {"dryRun", true}});
  auto request = decodeAdmissionReview(body);
  ASSERT_TRUE(request.isOk()) << request.status().toString();
  EXPECT_EQ(request->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(request->kind, "SlurmJob");
  EXPECT_EQ(request->resource, "slurmjobs");
  EXPECT_EQ(request->operation, "CREATE");
  EXPECT_EQ(request->namespaceName, "team-a");
  EXPECT_EQ(request->user.user, "oidc:alice");
  EXPECT_EQ(request->user.groups, std::vector<std::string>{"g1"});
  EXPECT_EQ(request->user.extra.at("scopes"), std::vector<std::string>{"s"});
  EXPECT_EQ(request->object["kind"], "SlurmJob");
  EXPECT_TRUE(request->dryRun);
}

TEST(AdmissionReview, AnswersWithTheRequestsUidAPatchInBase64AndRefusalsInStatus) {
  AdmissionRequest request;
  request.uid = "r-1";
  AdmissionResponse response;
  response.patch = Json::array({{{"op", "add"}, {"path", "/spec/user"}, {"value", "alice"}}});
  const Json allowed = Json::parse(encodeAdmissionReview(request, response));
  EXPECT_EQ(allowed["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(allowed["response"]["uid"], "r-1");
  EXPECT_EQ(allowed["response"]["allowed"], true);
  EXPECT_EQ(allowed["response"]["patchType"], "JSONPatch");
  // base64 of [{"op":"add","path":"/spec/user","value":"alice"}]
  EXPECT_EQ(allowed["response"]["patch"],
            "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvdXNlciIsInZhbHVlIjoiYWxpY2UifV0=");
  const Json refused =
      Json::parse(encodeAdmissionReview(request, refuse("Invalid qos specification")));
  EXPECT_EQ(refused["response"]["allowed"], false);
  EXPECT_EQ(refused["response"]["status"]["message"], "Invalid qos specification");
  EXPECT_EQ(refused["response"]["status"]["code"], 403);
  EXPECT_FALSE(refused["response"].contains("patch"));
}

TEST(AdmissionReview, RefusesWhatIsNotAReview) {
  EXPECT_EQ(decodeAdmissionReview("not json").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(decodeAdmissionReview("{}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(decodeAdmissionReview(review({{"operation", "CREATE"}})).status().message(),
            "an AdmissionReview request without a uid");
}

// Security review H4: 200 KB of JSON nested 100 000 deep overflowed the stack in a recursive
// copy. The parse stops building at the limit; nothing deeper is ever copied.
TEST(AdmissionReview, BoundsSizeAndDepth) {
  std::string deep = "{\"uid\":\"x\",\"object\":";
  for (int i = 0; i < 100000; ++i) deep += "[";
  for (int i = 0; i < 100000; ++i) deep += "]";
  deep += "}";
  const std::string body =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)" + deep + "}";
  auto decoded = decodeAdmissionReview(body);
  EXPECT_EQ(decoded.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(decoded.status().message(), "an AdmissionReview: JSON nested deeper than 100 levels");
  ReviewLimits small;
  small.maxBytes = 16;
  EXPECT_EQ(decodeAdmissionReview(review({{"uid", "x"}}), small).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(AdmissionReview, JsonPointerSegments) {
  EXPECT_EQ(pointerSegment("kubeslurm.io/array-job"), "kubeslurm.io~1array-job");
  EXPECT_EQ(pointerSegment("a~b"), "a~0b");
}

}  // namespace
}  // namespace kubeslurm::webhook
