#include "kubeslurm/kube/merge_patch.h"

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

using nlohmann::json;

// Applying the patch (nlohmann's merge_patch is RFC 7386) to `from` must give `to`.
void expectRoundTrip(const json& from, const json& to) {
  json applied = from;
  applied.merge_patch(mergePatchBetween(from, to));
  EXPECT_EQ(applied, to) << "from " << from.dump() << " to " << to.dump();
}

TEST(MergePatchBetween, CarriesOnlyWhatChanged) {
  const json from = {{"state", "PENDING"},
                     {"reason", "Priority"},
                     {"priority", 10},
                     {"conditions", json::array({{{"type", "Valid"}}})},
                     {"nested", {{"keep", 1}, {"change", 2}, {"drop", 3}}}};
  const json to = {{"state", "PENDING"},
                   {"reason", "Resources"},
                   {"priority", 10},
                   {"conditions", json::array({{{"type", "Valid"}}, {{"type", "Other"}}})},
                   {"nested", {{"keep", 1}, {"change", 4}}},
                   {"estimatedStart", "2026-11-27T12:00:00Z"}};
  EXPECT_EQ(mergePatchBetween(from, to),
            (json{{"reason", "Resources"},
                  {"conditions", json::array({{{"type", "Valid"}}, {{"type", "Other"}}})},
                  {"nested", {{"change", 4}, {"drop", nullptr}}},
                  {"estimatedStart", "2026-11-27T12:00:00Z"}}));
  expectRoundTrip(from, to);
}

TEST(MergePatchBetween, RemovedMembersAreNullAndNoChangeIsEmpty) {
  const json from = {{"a", 1}, {"b", {{"c", 2}}}};
  EXPECT_EQ(mergePatchBetween(from, from), json::object());
  EXPECT_EQ(mergePatchBetween(from, json::object()), (json{{"a", nullptr}, {"b", nullptr}}));
  expectRoundTrip(from, json::object());
  expectRoundTrip(json::object(), from);
  // An object replacing a scalar, and a scalar replacing an object, go whole.
  expectRoundTrip(json{{"a", 1}}, json{{"a", {{"x", 1}}}});
  expectRoundTrip(json{{"a", {{"x", 1}}}}, json{{"a", "text"}});
}

}  // namespace
}  // namespace kubeslurm::kube
