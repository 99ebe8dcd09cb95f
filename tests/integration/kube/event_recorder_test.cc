// The event recorder against the sandbox's kube-apiserver v1.20.2, read back with the real
// kubectl: three identical events and one different about a ConfigMap are two Event objects,
// one with count 3 (client-go events_cache.go's eventLogger), and `kubectl describe` lists
// them under the ConfigMap.
#include "kubeslurm/kube/event_recorder.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/kube/client.h"
#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm::kube {
namespace {

using testing_support::SandboxEnvironment;

using testing_support::kubectl;

class EventRecorderIT : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "sandbox did not start";
    auto made = Client::create(testing_support::sandboxAdminConfig());
    ASSERT_TRUE(made.isOk()) << made.status().toString();
    client_ = std::move(made).value();
    ns_ = "ev-" + std::to_string(::getpid());
    const Json nsObject = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}};
    auto created = client_->create(resources::namespaces(), "", nsObject);
    ASSERT_TRUE(created.isOk()) << created.status().toString();
  }
  void TearDown() override {
    if (client_) (void)client_->remove(resources::namespaces(), "", ns_, {});
  }

  std::unique_ptr<Client> client_;
  std::string ns_;
};

TEST_F(EventRecorderIT, RepeatedEventIsOneObjectWithCountThreeAndDescribeListsThem) {
  const Json configMap = {{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"name", "job-config"}}},
                          {"data", {{"k", "v"}}}};
  auto created = client_->create(resources::configMaps(), ns_, configMap);
  ASSERT_TRUE(created.isOk()) << created.status().toString();

  EventRecorderOptions options;
  options.component = "kubeslurm-operator";
  options.reportingController = "kubeslurm.io/operator";
  options.reportingInstance = "operator-it";
  EventRecorder recorder(*client_, options);
  for (int i = 0; i < 3; ++i) {
    recorder.record(*created, kEventTypeWarning, "BindFailed", "node gpu-1 has no free GPU");
  }
  recorder.record(*created, kEventTypeNormal, "Scheduled", "placed on gpu-2");
  recorder.flush();
  const EventRecorderStats stats = recorder.stats();
  EXPECT_EQ(stats.created, 2U);
  EXPECT_EQ(stats.patched, 2U);
  EXPECT_EQ(stats.failed, 0U);

  auto listed = client_->list(resources::events(), ns_, {});
  ASSERT_TRUE(listed.isOk()) << listed.status().toString();
  ASSERT_EQ((*listed)["items"].size(), 2U) << listed->dump(2);

  const auto json = kubectl("get events -n " + ns_ + " -o json");
  ASSERT_EQ(json.exitCode, 0) << json.output;
  const Json events = Json::parse(json.output.substr(json.output.find('{')), nullptr, false);
  ASSERT_FALSE(events.is_discarded()) << json.output;
  ASSERT_EQ(events["items"].size(), 2U);
  int counted = 0;
  for (const Json& event : events["items"]) {
    EXPECT_EQ(event["involvedObject"]["name"], "job-config");
    EXPECT_EQ(event["involvedObject"]["kind"], "ConfigMap");
    EXPECT_EQ(event["involvedObject"]["uid"], (*created)["metadata"]["uid"]);
    EXPECT_EQ(event["source"]["component"], "kubeslurm-operator");
    if (event["reason"] == "BindFailed") {
      EXPECT_EQ(event["count"], 3);
      EXPECT_EQ(event["type"], "Warning");
      ++counted;
    } else {
      EXPECT_EQ(event["reason"], "Scheduled");
      EXPECT_EQ(event["count"], 1);
    }
  }
  EXPECT_EQ(counted, 1);

  const auto table = kubectl("get events -n " + ns_);
  ASSERT_EQ(table.exitCode, 0) << table.output;
  EXPECT_NE(table.output.find("BindFailed"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("configmap/job-config"), std::string::npos) << table.output;

  const auto described = kubectl("describe configmap job-config -n " + ns_);
  ASSERT_EQ(described.exitCode, 0) << described.output;
  EXPECT_NE(described.output.find("BindFailed"), std::string::npos) << described.output;
  EXPECT_NE(described.output.find("node gpu-1 has no free GPU"), std::string::npos);
  EXPECT_NE(described.output.find("Scheduled"), std::string::npos);
  EXPECT_NE(described.output.find("(x3 over"), std::string::npos) << described.output;
  EXPECT_NE(described.output.find("kubeslurm-operator"), std::string::npos);
}

}  // namespace
}  // namespace kubeslurm::kube
