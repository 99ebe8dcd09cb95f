#include "controllers/job_ids.h"

#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/controllers/fake_api_server.h"

namespace kubeslurm::controllers {
namespace {

using kube::Json;

// The API server's optimistic concurrency on the counter's ConfigMap: update needs the current
// resourceVersion (else 409 -> kAborted), create of an existing name is kAlreadyExists.
class Store : public fakes::FakeApiServer {
 public:
  int gets() const { return count("get"); }
  int writes() const { return static_cast<int>(FakeApiServer::writes().size()); }
  Json stored(const std::string& ns, const std::string& name) const {
    return object("configmaps", ns, name).value();
  }
  void failUpdates(int n) {
    for (int i = 0; i < n; ++i) {
      failNext("update", "configmaps",
               Status(StatusCode::kAborted, "the object has been modified"));
    }
  }

 private:
  int count(const std::string& verb) const {
    int n = 0;
    for (const Call& call : calls()) n += call.verb == verb ? 1 : 0;
    return n;
  }
};

JobIdOptions options(std::int64_t blockSize = 10) {
  JobIdOptions result;
  result.namespaceName = "kubeslurm-system";
  result.blockSize = blockSize;
  return result;
}

TEST(JobIdAllocator, StartsAtFirstJobIdAndWritesOncePerBlock) {
  Store store;
  JobIdAllocator ids(store, store, options(10));
  for (std::int64_t expected = 1; expected <= 25; ++expected) {
    auto id = ids.next();
    ASSERT_TRUE(id.isOk()) << id.status().toString();
    EXPECT_EQ(*id, expected);
  }
  EXPECT_EQ(store.writes(), 3);  // blocks [1,11), [11,21), [21,31)
  EXPECT_EQ(store.stored("kubeslurm-system", "kubeslurm-job-ids")["data"]["next"], "31");
}

// A restarted operator continues after everything any operator reserved: the unused rest of a
// block is skipped, never handed out again.
TEST(JobIdAllocator, ARestartNeverReusesAnId) {
  Store store;
  std::set<std::int64_t> seen;
  {
    JobIdAllocator first(store, store, options(10));
    for (int i = 0; i < 3; ++i) seen.insert(*first.next());
  }
  JobIdAllocator second(store, store, options(10));
  auto id = second.next();
  ASSERT_TRUE(id.isOk());
  EXPECT_EQ(*id, 11);
  EXPECT_EQ(seen.count(*id), 0U);
}

TEST(JobIdAllocator, ConflictingWritersAreRetriedAndIdsStayUnique) {
  Store store;
  JobIdAllocator a(store, store, options(3));
  JobIdAllocator b(store, store, options(3));
  std::set<std::int64_t> ids;
  std::mutex idsMutex;
  auto take = [&](JobIdAllocator& allocator) {
    for (int i = 0; i < 200; ++i) {
      auto id = allocator.next();
      ASSERT_TRUE(id.isOk()) << id.status().toString();
      std::lock_guard lock(idsMutex);
      EXPECT_TRUE(ids.insert(*id).second) << "duplicate id " << *id;
    }
  };
  std::thread ta(take, std::ref(a));
  std::thread tb(take, std::ref(b));
  ta.join();
  tb.join();
  EXPECT_EQ(ids.size(), 400U);
}

TEST(JobIdAllocator, GivesUpAfterTooManyConflicts) {
  Store store;
  JobIdAllocator ids(store, store, options(10));
  ASSERT_TRUE(ids.next().isOk());  // creates the counter
  JobIdOptions impatient = options(10);
  impatient.maxConflictRetries = 2;
  JobIdAllocator other(store, store, impatient);
  store.failUpdates(3);
  auto id = other.next();
  ASSERT_FALSE(id.isOk());
  EXPECT_EQ(id.status().code(), StatusCode::kAborted);
  EXPECT_EQ(*other.next(), 11);
}

TEST(JobIdAllocator, RefusesACounterItCannotRead) {
  Store store;
  store.put("configmaps",
            {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "kubeslurm-job-ids"}, {"namespace", "kubeslurm-system"}}},
             {"data", {{"next", "seven"}}}});
  JobIdAllocator ids(store, store, options(10));
  auto id = ids.next();
  ASSERT_FALSE(id.isOk());
  EXPECT_EQ(id.status().code(), StatusCode::kDataLoss);
}

TEST(JobIdAllocator, HonoursFirstJobIdAboveTheStoredCounter) {
  Store store;
  JobIdOptions opts = options(10);
  opts.firstJobId = 1000;
  JobIdAllocator ids(store, store, opts);
  EXPECT_EQ(*ids.next(), 1000);
}

// Deleting the counter must not restart ids at 1 while jobs hold higher ones (review M4).
TEST(JobIdAllocator, AMissingCounterStartsAboveTheHighestIdInUse) {
  Store store;
  JobIdOptions opts = options(10);
  opts.highestIdInUse = [] { return std::int64_t{4711}; };
  JobIdAllocator ids(store, store, opts);
  EXPECT_EQ(*ids.next(), 4712);
  // Only a missing counter consults the jobs: an existing one is the authority.
  JobIdOptions later = options(10);
  later.highestIdInUse = [] { return std::int64_t{1}; };
  JobIdAllocator restarted(store, store, later);
  EXPECT_EQ(*restarted.next(), 4722);
}

TEST(JobIdAllocator, PeekShowsTheNextIdWithoutUsingItOrWriting) {
  Store store;
  JobIdOptions opts = options(10);
  opts.highestIdInUse = [] { return std::int64_t{41}; };
  JobIdAllocator ids(store, store, opts);
  EXPECT_EQ(*ids.peek(), 42);  // no counter yet: what next() would create
  EXPECT_EQ(*ids.peek(), 42);
  EXPECT_EQ(store.writes(), 0);
  EXPECT_EQ(*ids.next(), 42);
  EXPECT_EQ(*ids.peek(), 43);  // from the block in memory
  const int gets = store.gets();
  EXPECT_EQ(*ids.peek(), 43);
  EXPECT_EQ(store.gets(), gets);
  EXPECT_EQ(store.writes(), 1);
  EXPECT_EQ(*ids.next(), 43);
}

}  // namespace
}  // namespace kubeslurm::controllers
