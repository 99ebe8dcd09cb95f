// The informer's indexed store (client-go tools/cache thread_safe_store.go and index.go).
#include "kubeslurm/kube/object_store.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

using Json = nlohmann::json;

ObjectPtr pod(const std::string& ns, const std::string& name, const std::string& node,
              const std::vector<std::string>& owners = {}) {
  Json object = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", "u-" + name}}},
                 {"spec", Json::object()}};
  if (!node.empty()) object["spec"]["nodeName"] = node;
  for (const std::string& owner : owners) {
    object["metadata"]["ownerReferences"].push_back({{"kind", "SlurmJob"}, {"uid", owner}});
  }
  return std::make_shared<const Json>(std::move(object));
}

std::vector<std::string> names(const StatusOr<std::vector<ObjectPtr>>& objects) {
  std::vector<std::string> out;
  if (!objects.isOk()) return {"<" + objects.status().toString() + ">"};
  for (const ObjectPtr& object : *objects) out.push_back((*object)["metadata"]["name"]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ObjectKeyTest, NamespaceSlashNameOrBareNameForClusterScoped) {
  // client-go's MetaNamespaceKeyFunc.
  EXPECT_EQ(objectKey(Json{{"metadata", {{"name", "a"}, {"namespace", "ns"}}}}), "ns/a");
  EXPECT_EQ(objectKey(Json{{"metadata", {{"name", "node-1"}}}}), "node-1");
  EXPECT_EQ(objectKey(Json{{"metadata", {{"name", "a"}, {"namespace", ""}}}}), "a");
  EXPECT_EQ(objectKey(Json{{"metadata", Json::object()}}), "");
  EXPECT_EQ(objectKey(Json::array()), "");
}

TEST(ObjectStoreTest, GetListAndErase) {
  ObjectStore store;
  EXPECT_EQ(store.put("x/a", pod("x", "a", "")), nullptr);
  EXPECT_EQ(store.put("x/b", pod("x", "b", "")), nullptr);
  EXPECT_EQ(store.size(), 2U);
  ASSERT_NE(store.get("x/a"), nullptr);
  EXPECT_EQ(store.get("x/zz"), nullptr);
  auto keys = store.listKeys();
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"x/a", "x/b"}));
  EXPECT_NE(store.erase("x/a"), nullptr);
  EXPECT_EQ(store.erase("x/a"), nullptr);
  EXPECT_EQ(store.list().size(), 1U);
}

// forEach visits what list() returns, the same objects (not copies), and nothing erased.
TEST(ObjectStoreTest, ForEachVisitsTheStoredObjects) {
  ObjectStore store;
  store.put("x/a", pod("x", "a", ""));
  store.put("x/b", pod("x", "b", ""));
  store.put("x/c", pod("x", "c", ""));
  store.erase("x/b");
  std::vector<const Json*> visited;
  store.forEach([&visited](const ObjectPtr& object) { visited.push_back(object.get()); });
  std::vector<const Json*> listed;
  for (const ObjectPtr& object : store.list()) listed.push_back(object.get());
  std::sort(visited.begin(), visited.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(visited, listed);
  EXPECT_EQ(visited.size(), 2U);
}

TEST(ObjectStoreTest, ReaderKeepsTheObjectItHoldsAfterAnUpdate) {
  ObjectStore store;
  store.put("x/a", pod("x", "a", "n1"));
  ObjectPtr held = store.get("x/a");
  ObjectPtr replaced = store.put("x/a", pod("x", "a", "n2"));
  EXPECT_EQ(replaced, held);  // put hands back exactly what was stored
  EXPECT_EQ((*held)["spec"]["nodeName"], "n1");
  EXPECT_EQ((*store.get("x/a"))["spec"]["nodeName"], "n2");
}

TEST(ObjectStoreTest, NodeIndexFollowsAnUpdateThatMovesThePod) {
  ObjectStore store;
  ASSERT_TRUE(store.addIndexer(std::string(kNodeIndex), indexByNode).isOk());
  store.put("x/a", pod("x", "a", "n1"));
  store.put("x/b", pod("x", "b", "n1"));
  store.put("x/c", pod("x", "c", ""));  // not bound: in no bucket
  EXPECT_EQ(names(store.byIndex(kNodeIndex, "n1")), (std::vector<std::string>{"a", "b"}));
  store.put("x/a", pod("x", "a", "n2"));
  EXPECT_EQ(names(store.byIndex(kNodeIndex, "n1")), (std::vector<std::string>{"b"}));
  EXPECT_EQ(names(store.byIndex(kNodeIndex, "n2")), (std::vector<std::string>{"a"}));
  store.erase("x/b");
  EXPECT_TRUE(names(store.byIndex(kNodeIndex, "n1")).empty());
  // An emptied bucket is dropped, not kept as an empty set.
  EXPECT_EQ(store.indexValues(kNodeIndex), (std::vector<std::string>{"n2"}));
}

TEST(ObjectStoreTest, NamespaceAndOwnerIndexes) {
  ObjectStore store;
  ASSERT_TRUE(store.addIndexer(std::string(kNamespaceIndex), indexByNamespace).isOk());
  ASSERT_TRUE(store.addIndexer(std::string(kOwnerUidIndex), indexByOwnerUid).isOk());
  store.put("x/a", pod("x", "a", "", {"job-1"}));
  store.put("y/b", pod("y", "b", "", {"job-1", "job-2"}));
  store.put("y/c", pod("y", "c", ""));
  EXPECT_EQ(names(store.byIndex(kNamespaceIndex, "y")), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(names(store.byIndex(kOwnerUidIndex, "job-1")), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(store.byIndex(kOwnerUidIndex, "job-2")), (std::vector<std::string>{"b"}));
  // Dropping one owner reference leaves the object under the other only.
  store.put("y/b", pod("y", "b", "", {"job-2"}));
  EXPECT_EQ(names(store.byIndex(kOwnerUidIndex, "job-1")), (std::vector<std::string>{"a"}));
  auto keys = store.indexKeys(kOwnerUidIndex, "job-2");
  ASSERT_TRUE(keys.isOk());
  EXPECT_EQ(*keys, (std::vector<std::string>{"y/b"}));
}

TEST(ObjectStoreTest, UnknownIndexIsNotFoundAndDuplicateIndexerRefused) {
  ObjectStore store;
  EXPECT_EQ(store.byIndex("nope", "v").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.indexKeys("nope", "v").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.addIndexer("ns", indexByNamespace).isOk());
  EXPECT_EQ(store.addIndexer("ns", indexByNamespace).code(), StatusCode::kAlreadyExists);
}

TEST(ObjectStoreTest, IndexerAddedLaterIndexesWhatIsAlreadyStored) {
  ObjectStore store;
  store.put("x/a", pod("x", "a", "n1"));
  ASSERT_TRUE(store.addIndexer(std::string(kNodeIndex), indexByNode).isOk());
  EXPECT_EQ(names(store.byIndex(kNodeIndex, "n1")), (std::vector<std::string>{"a"}));
}

TEST(ObjectStoreTest, ConcurrentReadersSeeIndexAndItemsAgree) {
  // Readers on other threads while one writer moves pods between nodes: every object a
  // byIndex(node) answer returns must be bound to that node (index and items updated in one
  // critical section).
  ObjectStore store;
  ASSERT_TRUE(store.addIndexer(std::string(kNodeIndex), indexByNode).isOk());
  for (int i = 0; i < 50; ++i) {
    store.put("x/p" + std::to_string(i), pod("x", "p" + std::to_string(i), "n0"));
  }
  std::atomic<bool> done{false};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> readers;
  readers.reserve(3);
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        for (const char* node : {"n0", "n1"}) {
          auto found = store.byIndex(kNodeIndex, node);
          if (!found.isOk()) continue;
          for (const ObjectPtr& object : *found) {
            if ((*object)["spec"]["nodeName"] != node) ++mismatches;
          }
        }
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    const std::string node = round % 2 == 0 ? "n1" : "n0";
    for (int i = 0; i < 50; ++i) {
      store.put("x/p" + std::to_string(i), pod("x", "p" + std::to_string(i), node));
    }
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace kubeslurm::kube
