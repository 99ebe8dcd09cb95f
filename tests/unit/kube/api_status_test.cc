#include "kubeslurm/kube/api_status.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kubeslurm::kube {
namespace {

struct Case {
  int http;
  const char* reason;
  StatusCode code;
};

class HttpMappingTest : public testing::TestWithParam<Case> {};

TEST_P(HttpMappingTest, MapsOnce) {
  EXPECT_EQ(statusCodeForHttp(GetParam().http, GetParam().reason), GetParam().code)
      << GetParam().http << " " << GetParam().reason;
}

INSTANTIATE_TEST_SUITE_P(
    Table, HttpMappingTest,
    testing::Values(
        Case{200, "", StatusCode::kOk}, Case{201, "", StatusCode::kOk},
        Case{400, "BadRequest", StatusCode::kInvalidArgument},
        Case{401, "Unauthorized", StatusCode::kUnauthenticated},
        Case{403, "Forbidden", StatusCode::kPermissionDenied},
        Case{404, "NotFound", StatusCode::kNotFound}, Case{409, "Conflict", StatusCode::kAborted},
        Case{409, "AlreadyExists", StatusCode::kAlreadyExists}, Case{409, "", StatusCode::kAborted},
        Case{410, "Expired", StatusCode::kOutOfRange}, Case{410, "Gone", StatusCode::kOutOfRange},
        Case{422, "Invalid", StatusCode::kInvalidArgument},
        Case{429, "TooManyRequests", StatusCode::kResourceExhausted},
        Case{500, "InternalError", StatusCode::kUnavailable},
        Case{503, "ServiceUnavailable", StatusCode::kUnavailable},
        Case{504, "Timeout", StatusCode::kUnavailable},
        Case{418, "", StatusCode::kFailedPrecondition}));

TEST(StatusFromResponseTest, CarriesTheServersMessageAndReason) {
  const Status status = statusFromResponse(
      422,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"ConfigMap \"Bad_Name\")"
      R"( is invalid","reason":"Invalid","code":422})",
      "POST /api/v1/namespaces/default/configmaps");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("is invalid"), std::string::npos);
  EXPECT_NE(status.message().find("POST /api/v1"), std::string::npos);
  EXPECT_NE(status.message().find("422 Invalid"), std::string::npos);
}

TEST(StatusFromResponseTest, NonJsonBodyFromAProxyStillMapsByCode) {
  const Status status = statusFromResponse(502, "<html>bad gateway</html>", "GET /x");
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("bad gateway"), std::string::npos);
}

TEST(StatusFromResponseTest, AlreadyExistsComesFromTheReason) {
  EXPECT_EQ(statusFromResponse(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})", "")
                .code(),
            StatusCode::kAlreadyExists);
}

TEST(StatusFromStatusObjectTest, OddCodesStayErrors) {
  EXPECT_EQ(statusFromStatusObject(nlohmann::json{{"code", 200}}, "w").code(),
            StatusCode::kUnknown);
  EXPECT_EQ(statusFromStatusObject(nlohmann::json{{"code", "410"}}, "w").code(),
            StatusCode::kUnavailable);  // not a number: treated as a server error
  EXPECT_EQ(statusFromStatusObject(nlohmann::json::array(), "w").code(), StatusCode::kUnknown);
}

}  // namespace
}  // namespace kubeslurm::kube
