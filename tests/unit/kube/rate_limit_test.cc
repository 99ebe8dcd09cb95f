#include "kubeslurm/kube/rate_limit.h"

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

using std::chrono::milliseconds;
using Clock = TokenBucket::Clock;

TEST(TokenBucketTest, BurstIsFreeThenCallersAreSpacedAtQps) {
  const Clock::time_point start{};
  TokenBucket bucket(/*qps=*/10, /*burst=*/3, start);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.reserve(start), Clock::duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve(start)), milliseconds(100));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(bucket.reserve(start)), milliseconds(200));
  // After a second of quiet the bucket is full again, never fuller than the burst.
  const auto later = start + std::chrono::seconds(10);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.reserve(later), Clock::duration::zero());
  EXPECT_GT(bucket.reserve(later), Clock::duration::zero());
}

TEST(TokenBucketTest, ZeroQpsMeansUnlimited) {
  TokenBucket bucket(0, 1, Clock::time_point{});
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(bucket.reserve(Clock::time_point{}), Clock::duration::zero());
}

TEST(BackoffTest, DoublesUpToTheCapWithEqualJitter) {
  const milliseconds base(100);
  const milliseconds cap(1000);
  EXPECT_EQ(backoffDelay(0, base, cap, 0.0), milliseconds(50));
  EXPECT_EQ(backoffDelay(0, base, cap, 0.999), milliseconds(99));
  EXPECT_EQ(backoffDelay(2, base, cap, 0.0), milliseconds(200));
  EXPECT_EQ(backoffDelay(10, base, cap, 0.0), milliseconds(500));
  EXPECT_EQ(backoffDelay(1000, base, cap, 1.0), milliseconds(1000));
}

// A server's Retry-After lengthens the wait; one past the cap is not waited at all.
TEST(RetryAfterTest, RetryDelayHonoursRetryAfterUpToTheCap) {
  const std::chrono::seconds cap(30);
  EXPECT_EQ(retryDelay(milliseconds(200), std::nullopt, cap), milliseconds(200));
  EXPECT_EQ(retryDelay(milliseconds(200), std::chrono::seconds(1), cap), milliseconds(1000));
  EXPECT_EQ(retryDelay(milliseconds(5000), std::chrono::seconds(1), cap), milliseconds(5000));
  EXPECT_EQ(retryDelay(milliseconds(200), std::chrono::seconds(30), cap), milliseconds(30000));
  EXPECT_FALSE(retryDelay(milliseconds(200), std::chrono::seconds(31), cap).has_value());
  EXPECT_FALSE(retryDelay(milliseconds(200), std::chrono::seconds(999999999), cap).has_value());
}

TEST(RetryAfterTest, OnlyDeltaSeconds) {
  EXPECT_EQ(parseRetryAfter("1"), std::chrono::seconds(1));
  EXPECT_EQ(parseRetryAfter(" 30 "), std::chrono::seconds(30));
  EXPECT_FALSE(parseRetryAfter(""));
  EXPECT_FALSE(parseRetryAfter("-1"));
  EXPECT_FALSE(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"));
}

}  // namespace
}  // namespace kubeslurm::kube
