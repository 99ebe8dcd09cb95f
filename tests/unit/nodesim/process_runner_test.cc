// The pure parts of process mode; the runner itself runs in tests/e2e/sandbox_e2e_test.sh.
#include "kubeslurm/nodesim/process_runner.h"

#include <gtest/gtest.h>

#include "kubeslurm/nodesim/container_exec.h"

namespace kubeslurm::nodesim {
namespace {

TEST(ImageContentTest, ImageHostPathAndContainerPath) {
  auto content = parseImageContent("kubeslurm/kubeslurm-tools:0.1=/srv/tools:/opt/kubeslurm");
  ASSERT_TRUE(content.isOk()) << content.status().message();
  EXPECT_EQ(content->image, "kubeslurm/kubeslurm-tools:0.1");
  EXPECT_EQ(content->hostDir, "/srv/tools");
  EXPECT_EQ(content->path, "/opt/kubeslurm");
  // A digest's '=' would not appear, but an image with '=' in it splits at the last one.
  auto file = parseImageContent("e2e/pytorch:1=/tmp/torchrun:/usr/local/bin/torchrun");
  ASSERT_TRUE(file.isOk());
  EXPECT_EQ(file->path, "/usr/local/bin/torchrun");
}

TEST(ImageContentTest, RefusesWhatIsNotImageHostPathPath) {
  for (const char* bad : {"", "image", "=/a:/b", "image=/a", "image=:/b", "image=/a:relative"}) {
    EXPECT_FALSE(parseImageContent(bad).isOk()) << bad;
  }
}

// pkg/kubelet/kuberuntime (expansion.Expand): $(VAR) of a defined variable is replaced, $$ is a
// literal $, and an undefined or unterminated reference is kept as written.
TEST(ExpandReferencesTest, AsTheKubeletExpandsThem) {
  const std::map<std::string, std::string> defined = {{"ME", "rank-0"}, {"PORT", "6818"}};
  EXPECT_EQ(expandReferences("$(ME):$(PORT)", defined), "rank-0:6818");
  EXPECT_EQ(expandReferences("$(UNSET)-$(ME)", defined), "$(UNSET)-rank-0");
  EXPECT_EQ(expandReferences("$$(ME) costs $$5", defined), "$(ME) costs $5");
  EXPECT_EQ(expandReferences("$(ME", defined), "$(ME");
  EXPECT_EQ(expandReferences("a $ b $", defined), "a $ b $");
  EXPECT_EQ(expandReferences("echo $$", defined), "echo $");
}

TEST(ContainerSpecTest, RoundTrips) {
  ContainerSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec kubeslurm-inpod step-agent"};
  spec.env = {"PATH=/usr/bin", "SLURM_JOB_ID=7"};
  spec.hostname = "train-1";
  spec.netns = "/run/netns/ksim-1";
  spec.rootfs = "/tmp/pod/rank/0.root";
  spec.workingDir = "/home/alice";
  spec.mounts = {{"/tmp/pod/volumes/tools", "/kubeslurm", true},
                 {"/tmp/pod/hosts", "/etc/hosts", false}};
  auto back = decodeContainerSpec(encodeContainerSpec(spec));
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->argv, spec.argv);
  EXPECT_EQ(back->env, spec.env);
  EXPECT_EQ(back->hostname, spec.hostname);
  EXPECT_EQ(back->netns, spec.netns);
  EXPECT_EQ(back->rootfs, spec.rootfs);
  EXPECT_EQ(back->workingDir, spec.workingDir);
  ASSERT_EQ(back->mounts.size(), 2U);
  EXPECT_EQ(back->mounts[0].target, "/kubeslurm");
  EXPECT_TRUE(back->mounts[0].readOnly);
  EXPECT_FALSE(back->mounts[1].readOnly);
}

TEST(ContainerSpecTest, RefusesASpecWithoutCommandOrRoot) {
  ContainerSpec spec;
  spec.rootfs = "/tmp/r";
  EXPECT_FALSE(decodeContainerSpec(encodeContainerSpec(spec)).isOk());
  spec.argv = {"true"};
  spec.rootfs.clear();
  EXPECT_FALSE(decodeContainerSpec(encodeContainerSpec(spec)).isOk());
  EXPECT_FALSE(decodeContainerSpec(api::Json::parse(R"({"argv": 3})")).isOk());
}

}  // namespace
}  // namespace kubeslurm::nodesim
