// Pyxis's --container-mounts mapped onto what a partition allows. The entry syntax and the
// source/target rules are Pyxis's (args.c parse_mount_option, add_mount; tests/mounts.bats:
// "SRC:DST", the short form "SRC", "./" relative to the working directory, flags joined by "+").
#include "kubeslurm/podspec/container_mounts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kubeslurm::podspec {
namespace {

using ::testing::HasSubstr;

api::AllowedMount allowed(std::string path, api::Json volume, bool readOnly = false) {
  api::AllowedMount m;
  m.path = std::move(path);
  m.volume = std::move(volume);
  m.readOnly = readOnly;
  return m;
}

api::PartitionSpec gpuPartition() {
  api::PartitionSpec spec;
  spec.allowedMounts.push_back(
      allowed("/datasets", {{"persistentVolumeClaim", {{"claimName", "datasets"}}}}, true));
  spec.allowedMounts.push_back(allowed("/scratch", {{"hostPath", {{"path", "/mnt/nvme"}}}}));
  spec.allowedMounts.push_back(
      allowed("/scratch/shared", {{"nfs", {{"server", "nfs"}, {"path", "/x"}}}}));
  spec.sharedVolume = api::SharedVolume{"home", "/home", "users"};
  return spec;
}

StatusOr<std::vector<ContainerMount>> resolve(const std::vector<std::string>& entries,
                                              std::string_view workDir = "/home/alice/run") {
  return resolveContainerMounts(entries, workDir, "gpu", gpuPartition());
}

TEST(ContainerMountsTest, AllowedPathBecomesItsVolumeWithTheRestAsSubPath) {
  auto mounts = resolve({"/datasets/imagenet:/data"});
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  ASSERT_EQ(mounts->size(), 1U);
  const ContainerMount& m = mounts->front();
  EXPECT_EQ(m.volumeName, "mount-0");
  EXPECT_EQ(m.volume, api::Json({{"name", "mount-0"},
                                 {"persistentVolumeClaim", {{"claimName", "datasets"}}}}));
  EXPECT_EQ(m.mountPath, "/data");
  EXPECT_EQ(m.subPath, "imagenet");
  EXPECT_TRUE(m.readOnly);  // the partition's readOnly, though the entry did not ask
}

TEST(ContainerMountsTest, ShortFormMountsTheSourceAtTheSamePath) {
  auto mounts = resolve({"/scratch"});  // tests/mounts.bats "short-form"
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  EXPECT_EQ(mounts->front().mountPath, "/scratch");
  EXPECT_EQ(mounts->front().subPath, "");
  EXPECT_FALSE(mounts->front().readOnly);
}

TEST(ContainerMountsTest, LongestAllowedPathWins) {
  auto mounts = resolve({"/scratch/shared/ckpt:/ckpt", "/scratch/sharedx:/x"});
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  EXPECT_EQ((*mounts)[0].volumeName, "mount-2");
  EXPECT_EQ((*mounts)[0].subPath, "ckpt");
  // "/scratch/sharedx" is not under "/scratch/shared": components, not characters.
  EXPECT_EQ((*mounts)[1].volumeName, "mount-1");
  EXPECT_EQ((*mounts)[1].subPath, "sharedx");
}

TEST(ContainerMountsTest, RelativeSourceIsUnderTheWorkingDirectoryOnTheSharedVolume) {
  auto mounts = resolve({"./ckpt:/ckpt", "./:/work"});  // tests/mounts.bats "./:/test-mnt"
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  EXPECT_EQ((*mounts)[0].volumeName, kSharedVolumeName);
  EXPECT_TRUE((*mounts)[0].volume.is_null());  // rankPods adds the shared volume itself
  EXPECT_EQ((*mounts)[0].subPath, "users/alice/run/ckpt");
  EXPECT_EQ((*mounts)[1].subPath, "users/alice/run");
}

TEST(ContainerMountsTest, DotDotCannotClimbOutOfAnAllowedPath) {
  auto mounts = resolve({"/datasets/../etc:/etc2"});
  ASSERT_FALSE(mounts.isOk());
  EXPECT_THAT(mounts.status().message(),
              HasSubstr("/etc is not a path partition gpu allows to mount (allowed: /datasets, "
                        "/scratch, /scratch/shared, /home)"));
  // A relative target that leaves the root: enroot refuses it (tests/mounts.bats "path escape").
  EXPECT_THAT(resolve({"/scratch:../home"}).status().message(),
              HasSubstr("the target leaves the container's root"));
  EXPECT_THAT(resolve({"/scratch:/"}).status().message(),
              HasSubstr("the target is the container's root"));
}

TEST(ContainerMountsTest, RelativeTargetIsUnderTheContainersRoot) {
  auto mounts = resolve({"/scratch:./mnt/x/../y"});
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  EXPECT_EQ(mounts->front().mountPath, "/mnt/y");
}

TEST(ContainerMountsTest, FlagsReadOnlyAndPropagation) {
  auto mounts =
      resolve({"/scratch:/a:ro", "/scratch/x:/b:unbindable+ro+rw", "/scratch/y:/c:rslave"});
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  EXPECT_TRUE((*mounts)[0].readOnly);
  EXPECT_FALSE((*mounts)[1].readOnly);  // the last of ro/rw, as mount(8) takes them
  EXPECT_EQ((*mounts)[2].mountPropagation, "HostToContainer");
  EXPECT_THAT(resolve({"/scratch:/a:rshared"}).status().message(),
              HasSubstr("needs a privileged container"));
  EXPECT_THAT(resolve({"/scratch:/a:ro+bogus"}).status().message(),
              HasSubstr(R"(unsupported mount flag "bogus")"));
  EXPECT_THAT(resolve({"/datasets:/d:rw"}).status().message(),
              HasSubstr("/datasets is read-only in partition gpu"));
}

TEST(ContainerMountsTest, TmpfsIsAMemoryEmptyDirPerEntry) {
  auto mounts = resolve({"tmpfs:/tmp", "tmpfs:/dev/shm"});
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  EXPECT_EQ((*mounts)[0].volume,
            api::Json({{"name", "tmpfs-0"}, {"emptyDir", {{"medium", "Memory"}}}}));
  EXPECT_EQ((*mounts)[1].volumeName, "tmpfs-1");
  EXPECT_EQ((*mounts)[1].mountPath, "/dev/shm");
}

TEST(ContainerMountsTest, RefusalsSayWhatIsWrong) {
  EXPECT_THAT(resolve({"umount:/x"}).status().message(), HasSubstr("\"umount\" is not supported"));
  EXPECT_EQ(
      resolve({"relative:/x"}).status().message(),
      R"(pyxis: mount source must be a relative path, an absolute path, "tmpfs" or "umount")");
  EXPECT_EQ(resolve({"/scratch:x"}).status().message(),
            "pyxis: mount target must be a relative path or an absolute path");
  EXPECT_EQ(resolve({":/x"}).status().message(), "pyxis: --container-mounts: invalid format: :/x");
  EXPECT_THAT(resolve({"/scratch/a:/m", "/scratch/b:/m/"}).status().message(),
              HasSubstr("/m is the target of another entry"));
  EXPECT_THAT(resolve({"./x:/x"}, "").status().message(),
              HasSubstr("a relative source needs the job's working directory"));
  EXPECT_THAT(
      resolveContainerMounts({"/data:/data"}, "/", "cpu", api::PartitionSpec{}).status().message(),
      HasSubstr("is not a path partition cpu allows to mount (it allows none)"));
}

TEST(ContainerMountsTest, PartitionListProblems) {
  EXPECT_EQ(allowedMountsProblem(gpuPartition().allowedMounts), "");
  EXPECT_THAT(allowedMountsProblem({allowed("data", {{"hostPath", {{"path", "/d"}}}})}),
              HasSubstr("spec.allowedMounts[0].path: expected an absolute path"));
  EXPECT_THAT(allowedMountsProblem({allowed("/data/", {{"hostPath", {{"path", "/d"}}}})}),
              HasSubstr("expected a normalised path (/data)"));
  EXPECT_THAT(allowedMountsProblem({allowed("/d", {{"hostPath", {{"path", "/d"}}}}),
                                    allowed("/d", {{"hostPath", {{"path", "/e"}}}})}),
              HasSubstr("spec.allowedMounts[1].path: /d is listed twice"));
  EXPECT_THAT(allowedMountsProblem({allowed(
                  "/d", {{"hostPath", {{"path", "/d"}}}, {"emptyDir", api::Json::object()}})}),
              HasSubstr("expected exactly one volume source"));
  EXPECT_THAT(allowedMountsProblem({allowed("/d", api::Json())}),
              HasSubstr("expected exactly one volume source"));
  // A job that names a path of a broken list is refused with the list's problem.
  api::PartitionSpec broken;
  broken.allowedMounts.push_back(allowed("/d", api::Json::object()));
  EXPECT_THAT(resolveContainerMounts({"/d:/d"}, "/", "p", broken).status().message(),
              HasSubstr("partition p: spec.allowedMounts[0].volume"));
}

TEST(ContainerMountsTest, NormalizeAbsolutePath) {
  EXPECT_EQ(normalizeAbsolutePath("/"), "/");
  EXPECT_EQ(normalizeAbsolutePath("//a/./b//"), "/a/b");
  EXPECT_EQ(normalizeAbsolutePath("/a/../../b"), "/b");
  EXPECT_EQ(normalizeAbsolutePath("/.."), "/");
}

}  // namespace
}  // namespace kubeslurm::podspec
