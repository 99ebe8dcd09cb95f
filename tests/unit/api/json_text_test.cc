// parseJson: outside JSON text within size and depth limits (kubeslurm/api/json_text.h).
#include "kubeslurm/api/json_text.h"

#include <string>

#include <gtest/gtest.h>

namespace kubeslurm::api {
namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJson, TakesJsonWithinTheLimits) {
  auto parsed = parseJson(R"({"a":[1,{"b":"c"}]})");
  ASSERT_TRUE(parsed.isOk());
  EXPECT_EQ((*parsed)["a"][1]["b"], "c");
  EXPECT_TRUE(parseJson(nested(100)).isOk());  // exactly the limit
}

// Security review C3: ~200 KB nested 100 000 deep overflowed the stack of the thread that
// decoded it. The parser stops at the limit; the deep tree is never built.
TEST(ParseJson, RefusesDepthPastTheLimitWithoutBuildingIt) {
  auto deep = parseJson(nested(100000));
  EXPECT_EQ(deep.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(deep.status().message(), "JSON nested deeper than 100 levels");
  EXPECT_EQ(parseJson(nested(101)).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(parseJson(R"({"a":{"b":1}})", {1024, 1}).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(ParseJson, RefusesSizePastTheLimitAndText) {
  auto large = parseJson("[1, 2, 3]", {4, 100});
  EXPECT_EQ(large.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(large.status().message(), "more than 4 bytes of JSON");
  EXPECT_EQ(parseJson("{\"a\":").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parseJson("").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kubeslurm::api
