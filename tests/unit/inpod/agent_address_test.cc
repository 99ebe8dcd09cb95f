#include "kubeslurm/inpod/agent_address.h"

#include <gtest/gtest.h>

namespace kubeslurm::inpod {
namespace {

std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }

TEST(AgentAddressTest, NumericAddressesBecomeTargetsOfTheirFamily) {
  EXPECT_EQ(resolveAgentAddress("127.0.0.1:6818", now()).value(), "ipv4:127.0.0.1:6818");
  EXPECT_EQ(resolveAgentAddress("[::1]:6818", now()).value(), "ipv6:[::1]:6818");
}

TEST(AgentAddressTest, NamesResolveThroughTheCLibrary) {
  // localhost is in every /etc/hosts: no DNS server is asked.
  const StatusOr<std::string> target = resolveAgentAddress("localhost:6818", now());
  ASSERT_TRUE(target.isOk()) << target.status().message();
  EXPECT_TRUE(*target == "ipv4:127.0.0.1:6818" || *target == "ipv6:[::1]:6818") << *target;
}

TEST(AgentAddressTest, WhatIsNotHostAndPortIsRefused) {
  for (const char* text : {"node-1", ":6818", "node-1:", ""}) {
    const StatusOr<std::string> target = resolveAgentAddress(text, now());
    ASSERT_FALSE(target.isOk()) << text;
    EXPECT_EQ(target.status().code(), StatusCode::kInvalidArgument) << text;
  }
  // A port that is no number is refused by getaddrinfo (AI_NUMERICSERV), in Slurm's words.
  const StatusOr<std::string> named = resolveAgentAddress("127.0.0.1:slurmd", now());
  ASSERT_FALSE(named.isOk());
  EXPECT_TRUE(named.status().message().starts_with("Unable to resolve \"127.0.0.1\": "))
      << named.status().message();
}

}  // namespace
}  // namespace kubeslurm::inpod
