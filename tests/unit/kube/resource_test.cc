#include "kubeslurm/kube/resource.h"

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

TEST(ResourcePathTest, CoreNamespacedObjectAndSubresource) {
  EXPECT_EQ(resourcePath(resources::pods(), "default", "p-1", "binding"),
            "/api/v1/namespaces/default/pods/p-1/binding");
  EXPECT_EQ(resourcePath(resources::configMaps(), "ns", ""), "/api/v1/namespaces/ns/configmaps");
}

TEST(ResourcePathTest, AllNamespacesAndClusterScoped) {
  EXPECT_EQ(resourcePath(resources::pods(), ""), "/api/v1/pods");
  EXPECT_EQ(resourcePath(resources::nodes(), "ignored", "n1"), "/api/v1/nodes/n1");
}

TEST(ResourcePathTest, GroupedResource) {
  const ResourceType jobs{"kubeslurm.io", "v1alpha1", "slurmjobs", true};
  EXPECT_EQ(resourcePath(jobs, "hpc", "j", "status"),
            "/apis/kubeslurm.io/v1alpha1/namespaces/hpc/slurmjobs/j/status");
  EXPECT_EQ(jobs.apiVersion(), "kubeslurm.io/v1alpha1");
  EXPECT_EQ(resources::pods().apiVersion(), "v1");
}

TEST(QueryTest, SelectorsArePercentEncoded) {
  EXPECT_EQ(withQuery("/api/v1/pods", {{"labelSelector", "app=a,tier in (x,y)"}, {"limit", "10"}}),
            "/api/v1/pods?labelSelector=app%3Da%2Ctier%20in%20%28x%2Cy%29&limit=10");
  EXPECT_EQ(withQuery("/p", {}), "/p");
  EXPECT_EQ(percentEncode("a/b+c~_.-"), "a%2Fb%2Bc~_.-");
}

}  // namespace
}  // namespace kubeslurm::kube
