#include "controllers/job_ids.h"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

using kube::Json;

// ConfigMaps in memory with the API server's optimistic concurrency: update needs the current
// resourceVersion (else 409 -> kAborted), create of an existing name is kAlreadyExists.
class FakeConfigMaps : public kube::Reader, public kube::Writer {
 public:
  StatusOr<Json> get(const kube::ResourceType& /*type*/, std::string_view ns,
                     std::string_view name) override {
    std::lock_guard lock(mutex_);
    ++gets;
    auto found = objects_.find(key(ns, name));
    if (found == objects_.end()) return notFound("configmaps \"" + std::string(name) + "\"");
    return found->second;
  }
  StatusOr<Json> list(const kube::ResourceType& /*type*/, std::string_view /*ns*/,
                      const kube::ListOptions& /*options*/) override {
    return Status{StatusCode::kUnimplemented, "not used"};
  }
  StatusOr<Json> create(const kube::ResourceType& /*type*/, std::string_view ns,
                        const Json& object) override {
    std::lock_guard lock(mutex_);
    ++writes;
    const std::string k = key(ns, object["metadata"]["name"].get<std::string>());
    if (objects_.contains(k)) return Status{StatusCode::kAlreadyExists, "exists"};
    Json stored = object;
    stored["metadata"]["resourceVersion"] = std::to_string(++version_);
    objects_[k] = stored;
    return stored;
  }
  StatusOr<Json> update(const kube::ResourceType& /*type*/, std::string_view ns,
                        const Json& object) override {
    std::lock_guard lock(mutex_);
    ++writes;
    if (failNextUpdates > 0) {
      --failNextUpdates;
      return Status{StatusCode::kAborted, "the object has been modified"};
    }
    const std::string k = key(ns, object["metadata"]["name"].get<std::string>());
    auto found = objects_.find(k);
    if (found == objects_.end()) return notFound("gone");
    if (found->second["metadata"]["resourceVersion"] != object["metadata"]["resourceVersion"]) {
      return Status{StatusCode::kAborted, "the object has been modified"};
    }
    Json stored = object;
    stored["metadata"]["resourceVersion"] = std::to_string(++version_);
    found->second = stored;
    return stored;
  }
  StatusOr<Json> patch(const kube::ResourceType& /*type*/, std::string_view /*ns*/,
                       std::string_view /*name*/, const Json& /*mergePatch*/) override {
    return Status{StatusCode::kUnimplemented, "not used"};
  }
  Status remove(const kube::ResourceType& /*type*/, std::string_view /*ns*/,
                std::string_view /*name*/, const kube::DeleteOptions& /*options*/) override {
    return Status{StatusCode::kUnimplemented, "not used"};
  }

  void put(const Json& object) {
    std::lock_guard lock(mutex_);
    Json stored = object;
    stored["metadata"]["resourceVersion"] = std::to_string(++version_);
    objects_[key(object["metadata"]["namespace"].get<std::string>(),
                 object["metadata"]["name"].get<std::string>())] = stored;
  }
  Json stored(std::string_view ns, std::string_view name) {
    std::lock_guard lock(mutex_);
    return objects_.at(key(ns, name));
  }

  int gets = 0;
  int writes = 0;
  int failNextUpdates = 0;

 private:
  static std::string key(std::string_view ns, std::string_view name) {
    return std::string(ns) + "/" + std::string(name);
  }
  std::mutex mutex_;
  std::map<std::string, Json> objects_;
  int version_ = 0;
};

JobIdOptions options(std::int64_t blockSize = 10) {
  JobIdOptions result;
  result.namespaceName = "kubeslurm-system";
  result.blockSize = blockSize;
  return result;
}

TEST(JobIdAllocator, StartsAtFirstJobIdAndWritesOncePerBlock) {
  FakeConfigMaps store;
  JobIdAllocator ids(store, store, options(10));
  for (std::int64_t expected = 1; expected <= 25; ++expected) {
    auto id = ids.next();
    ASSERT_TRUE(id.isOk()) << id.status().toString();
    EXPECT_EQ(*id, expected);
  }
  EXPECT_EQ(store.writes, 3);  // blocks [1,11), [11,21), [21,31)
  EXPECT_EQ(store.stored("kubeslurm-system", "kubeslurm-job-ids")["data"]["next"], "31");
}

// A restarted operator continues after everything any operator reserved: the unused rest of a
// block is skipped, never handed out again.
TEST(JobIdAllocator, ARestartNeverReusesAnId) {
  FakeConfigMaps store;
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
  FakeConfigMaps store;
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
  FakeConfigMaps store;
  JobIdAllocator ids(store, store, options(10));
  ASSERT_TRUE(ids.next().isOk());  // creates the counter
  JobIdOptions impatient = options(10);
  impatient.maxConflictRetries = 2;
  JobIdAllocator other(store, store, impatient);
  store.failNextUpdates = 3;
  auto id = other.next();
  ASSERT_FALSE(id.isOk());
  EXPECT_EQ(id.status().code(), StatusCode::kAborted);
  store.failNextUpdates = 0;
  EXPECT_EQ(*other.next(), 11);
}

TEST(JobIdAllocator, RefusesACounterItCannotRead) {
  FakeConfigMaps store;
  store.put({{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", "kubeslurm-job-ids"}, {"namespace", "kubeslurm-system"}}},
             {"data", {{"next", "seven"}}}});
  JobIdAllocator ids(store, store, options(10));
  auto id = ids.next();
  ASSERT_FALSE(id.isOk());
  EXPECT_EQ(id.status().code(), StatusCode::kDataLoss);
}

TEST(JobIdAllocator, HonoursFirstJobIdAboveTheStoredCounter) {
  FakeConfigMaps store;
  JobIdOptions opts = options(10);
  opts.firstJobId = 1000;
  JobIdAllocator ids(store, store, opts);
  EXPECT_EQ(*ids.next(), 1000);
}

// Deleting the counter must not restart ids at 1 while jobs hold higher ones (review M4).
TEST(JobIdAllocator, AMissingCounterStartsAboveTheHighestIdInUse) {
  FakeConfigMaps store;
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
  FakeConfigMaps store;
  JobIdOptions opts = options(10);
  opts.highestIdInUse = [] { return std::int64_t{41}; };
  JobIdAllocator ids(store, store, opts);
  EXPECT_EQ(*ids.peek(), 42);  // no counter yet: what next() would create
  EXPECT_EQ(*ids.peek(), 42);
  EXPECT_EQ(store.writes, 0);
  EXPECT_EQ(*ids.next(), 42);
  EXPECT_EQ(*ids.peek(), 43);  // from the block in memory
  const int gets = store.gets;
  EXPECT_EQ(*ids.peek(), 43);
  EXPECT_EQ(store.gets, gets);
  EXPECT_EQ(store.writes, 1);
  EXPECT_EQ(*ids.next(), 43);
}

}  // namespace
}  // namespace kubeslurm::controllers
