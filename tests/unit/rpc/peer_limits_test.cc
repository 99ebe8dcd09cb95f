// PeerRateLimiter and peerAddress (kubeslurm/rpc/peer_limits.h).
#include "kubeslurm/rpc/peer_limits.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/support/manual_clock.h"

namespace kubeslurm::rpc {
namespace {

using std::chrono::milliseconds;

TEST(PeerRateLimiter, ABurstThenTheRate) {
  testing_support::ManualClock clock;
  PeerRateLimiter limiter(10, 5);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.admit("10.0.0.1", clock.now())) << i;
  EXPECT_FALSE(limiter.admit("10.0.0.1", clock.now()));
  EXPECT_TRUE(limiter.admit("10.0.0.2", clock.now()));  // another peer has its own bucket
  clock.advance(milliseconds(100));                     // one call's worth at 10/s
  EXPECT_TRUE(limiter.admit("10.0.0.1", clock.now()));
  EXPECT_FALSE(limiter.admit("10.0.0.1", clock.now()));
  clock.advance(std::chrono::seconds(60));  // never more than the burst saved up
  int admitted = 0;
  while (limiter.admit("10.0.0.1", clock.now())) ++admitted;
  EXPECT_EQ(admitted, 5);
}

TEST(PeerRateLimiter, ManyPeersCostBoundedMemoryAndForgottenPeersStartFull) {
  testing_support::ManualClock clock;
  PeerRateLimiter limiter(1, 1, /*maxPeers=*/2);
  EXPECT_TRUE(limiter.admit("a", clock.now()));
  EXPECT_FALSE(limiter.admit("a", clock.now()));
  EXPECT_TRUE(limiter.admit("b", clock.now()));
  EXPECT_TRUE(limiter.admit("c", clock.now()));  // "a" is evicted...
  EXPECT_TRUE(limiter.admit("a", clock.now()));  // ...and comes back with a full bucket
}

TEST(PeerAddress, DropsThePort) {
  EXPECT_EQ(peerAddress("ipv4:10.1.2.3:51234"), "10.1.2.3");
  EXPECT_EQ(peerAddress("ipv6:[::1]:51234"), "::1");
  EXPECT_EQ(peerAddress("ipv6:[fd00::5]:1"), "fd00::5");
  EXPECT_EQ(peerAddress("unix:/run/x.sock"), "unix:/run/x.sock");
  EXPECT_EQ(peerAddress(""), "");
}

}  // namespace
}  // namespace kubeslurm::rpc
