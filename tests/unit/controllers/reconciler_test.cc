// The reconciler's pure helpers: metav1.Condition bookkeeping on status.conditions.
#include "controllers/reconciler.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controllers/job_object.h"
#include "kubeslurm/api/meta_v1.h"

namespace kubeslurm::controllers {
namespace {

using nlohmann::json;

TEST(ConditionTest, AddedWithEveryRequiredFieldAsAString) {
  json conditions = json::array();
  EXPECT_TRUE(setCondition(conditions, "Valid", "False", "InvalidPartition", "no such", 60));
  ASSERT_EQ(conditions.size(), 1U);
  const json& c = conditions[0];
  EXPECT_EQ(c["type"], "Valid");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "InvalidPartition");
  EXPECT_EQ(c["message"], "no such");
  EXPECT_EQ(c["lastTransitionTime"], "1970-01-01T00:01:00Z");
}

TEST(ConditionTest, TransitionTimeMovesOnlyWithTheStatusAndAnEmptyMessageIsAString) {
  json conditions = json::array();
  setCondition(conditions, "Valid", "False", "InvalidPartition", "no such", 60);
  // Same status, new message: the transition time stays.
  EXPECT_TRUE(setCondition(conditions, "Valid", "False", "InvalidPartition", "still none", 120));
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "1970-01-01T00:01:00Z");
  // Nothing new: no change reported.
  EXPECT_FALSE(setCondition(conditions, "Valid", "False", "InvalidPartition", "still none", 180));
  // The status flips: the time moves; the CRD requires message to be a string, never null.
  EXPECT_TRUE(setCondition(conditions, "Valid", "True", "Valid", "", 240));
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "1970-01-01T00:04:00Z");
  ASSERT_TRUE(conditions[0]["message"].is_string()) << conditions.dump();
  EXPECT_EQ(conditions[0]["message"], "");
  EXPECT_EQ(conditions.size(), 1U);
}

TEST(ConditionTest, OtherConditionsAreKeptAndFound) {
  json conditions = json::array({{{"type", "Other"}, {"status", "True"}}});
  setCondition(conditions, "Valid", "True", "Valid", "", 0);
  ASSERT_EQ(conditions.size(), 2U);
  ASSERT_NE(api::findCondition(conditions, "Other"), nullptr);
  EXPECT_EQ(api::findCondition(conditions, "Valid")->at("reason"), "Valid");
  EXPECT_EQ(api::findCondition(conditions, "Missing"), nullptr);
}

}  // namespace
}  // namespace kubeslurm::controllers
