// Step tokens derived from a key (controllers/step_tokens.h): any replica with the key gives an
// attempt the same token, and nothing else shares it.
#include "controllers/step_tokens.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

namespace kubeslurm::controllers {
namespace {

const std::string kKey(32, 'k');

TEST(StepTokens, AReplicaWithTheKeyDerivesTheSameTokenForAnAttempt) {
  const auto first = StepTokens::fromKey(kKey);
  const auto second = StepTokens::fromKey(kKey);
  ASSERT_TRUE(first.isOk() && second.isOk());
  const std::string token = first->tokenFor("team-a", "uid-1", 0);
  EXPECT_EQ(token, second->tokenFor("team-a", "uid-1", 0));
  EXPECT_EQ(token.size(), 64U);  // HMAC-SHA256, hex
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(StepTokens, EachNamespaceJobAttemptAndKeyHasItsOwn) {
  const auto tokens = StepTokens::fromKey(kKey);
  const auto other = StepTokens::fromKey(std::string(32, 'o'));
  ASSERT_TRUE(tokens.isOk() && other.isOk());
  const std::set<std::string> distinct = {
      tokens->tokenFor("team-a", "uid-1", 0), tokens->tokenFor("team-b", "uid-1", 0),
      tokens->tokenFor("team-a", "uid-2", 0), tokens->tokenFor("team-a", "uid-1", 1),
      other->tokenFor("team-a", "uid-1", 0),
      // The separator keeps "a/b" + "c" apart from "a" + "b/c".
      tokens->tokenFor("team-a/uid", "1", 0)};
  EXPECT_EQ(distinct.size(), 6U);
  const auto random1 = StepTokens::randomKey();
  const auto random2 = StepTokens::randomKey();
  ASSERT_TRUE(random1.isOk() && random2.isOk());
  EXPECT_NE(random1->tokenFor("team-a", "uid-1", 0), random2->tokenFor("team-a", "uid-1", 0));
}

TEST(StepTokens, AKeyFileHoldsAtLeast32BytesAndItsNewlineIsNotKey) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("step-key-" + std::to_string(::getpid()));
  std::ofstream(file) << kKey << "\n";
  const auto fromFile = StepTokens::fromKeyFile(file.string());
  ASSERT_TRUE(fromFile.isOk()) << fromFile.status().toString();
  EXPECT_EQ(fromFile->tokenFor("ns", "uid", 2),
            StepTokens::fromKey(kKey)->tokenFor("ns", "uid", 2));
  std::ofstream(file) << "short\n";
  EXPECT_EQ(StepTokens::fromKeyFile(file.string()).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::remove(file);
  EXPECT_EQ(StepTokens::fromKeyFile(file.string()).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kubeslurm::controllers
