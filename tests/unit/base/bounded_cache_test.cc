// BoundedCache: expiry, least-recently-used eviction, replacement (kubeslurm/base/bounded_cache.h).
#include "kubeslurm/base/bounded_cache.h"

#include <gtest/gtest.h>

namespace kubeslurm {
namespace {

TEST(BoundedCache, ExpiresEvictsTheLeastRecentlyUsedAndReplaces) {
  BoundedCache<int, int> cache(2);
  cache.put("a", 1, 10);
  cache.put("b", 2, 10);
  EXPECT_EQ(cache.get("a", 5), 1);  // a is now the most recently used
  cache.put("c", 3, 10);            // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.get("b", 5));
  EXPECT_EQ(cache.get("a", 5), 1);
  EXPECT_EQ(cache.get("c", 5), 3);
  cache.put("c", 4, 20);  // replaced, not duplicated
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.get("c", 15), 4);
  EXPECT_FALSE(cache.get("a", 10));  // expired at its deadline, and dropped
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace kubeslurm
