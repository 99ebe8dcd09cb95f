#include "controllers/shared_list.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

TEST(SharedList, ACycleThatChangesARecordGetsItsOwnCopy) {
  auto viewRecord = std::make_shared<std::string>("pending");
  SharedList<std::string> cycle;
  cycle.push_back(viewRecord);
  EXPECT_EQ(&cycle[0], viewRecord.get());  // shared, not copied

  cycle.mutableAt(0) = "running";
  EXPECT_EQ(*viewRecord, "pending");  // the view's record is untouched
  EXPECT_EQ(cycle[0], "running");
  EXPECT_NE(&cycle[0], viewRecord.get());

  // A record nobody else holds is changed in place.
  const std::string* own = &cycle[0];
  cycle.mutableAt(0) += "!";
  EXPECT_EQ(&cycle[0], own);
  EXPECT_EQ(cycle[0], "running!");
}

TEST(SharedList, ReplaceLeavesTheOldRecordToWhoeverHoldsIt) {
  auto viewRecord = std::make_shared<std::string>("a");
  SharedList<std::string> cycle;
  cycle.push_back(viewRecord);
  const std::string* before = &cycle[0];
  cycle.replace(0, "b");
  EXPECT_EQ(*before, "a");
  EXPECT_EQ(cycle[0], "b");
}

TEST(SharedList, RecordsKeepTheirAddressesAsTheListGrows) {
  SharedList<std::string> list{"x", "y"};
  const std::string* first = &list[0];
  for (int i = 0; i < 1000; ++i) list.push_back(std::to_string(i));
  EXPECT_EQ(&list[0], first);
  EXPECT_EQ(list.size(), 1002U);
  EXPECT_EQ(list.back(), "999");
}

TEST(SharedList, ReadsAsAVectorOfConstRecords) {
  const std::vector<int> numbers = {3, 1, 2};
  const SharedList<int> list = numbers;  // copies of the vector's records
  EXPECT_EQ(std::vector<int>(list.begin(), list.end()), numbers);
  EXPECT_EQ(std::count_if(list.begin(), list.end(), [](int n) { return n > 1; }), 2);
  EXPECT_EQ(*std::max_element(list.begin(), list.end()), 3);
  EXPECT_EQ(list.end() - list.begin(), 3);
  EXPECT_EQ(list.begin()[2], 2);
  EXPECT_TRUE(SharedList<int>().empty());
}

}  // namespace
}  // namespace kubeslurm::controllers
