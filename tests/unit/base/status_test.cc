#include "kubeslurm/base/status.h"

#include <string>

#include <gtest/gtest.h>

namespace kubeslurm {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.isOk());
  EXPECT_EQ(status.toString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status status = invalidArgument("bad node count");
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.toString(), "INVALID_ARGUMENT: bad node count");
}

TEST(StatusOrTest, HoldsValueOrError) {
  StatusOr<int> value = 42;
  ASSERT_TRUE(value.isOk());
  EXPECT_EQ(*value, 42);
  EXPECT_TRUE(value.status().isOk());

  StatusOr<std::string> error = notFound("no such job");
  ASSERT_FALSE(error.isOk());
  EXPECT_EQ(error.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(error.status().message(), "no such job");
}

TEST(StatusOrTest, MovesValueOut) {
  StatusOr<std::string> value = std::string("gpu-node-001");
  std::string moved = std::move(value).value();
  EXPECT_EQ(moved, "gpu-node-001");
}

}  // namespace
}  // namespace kubeslurm
