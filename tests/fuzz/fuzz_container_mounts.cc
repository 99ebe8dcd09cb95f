// Pyxis --container-mounts entries from a SlurmJob (anyone who may create one writes them) mapped
// onto a partition's allowed paths. Line 1 is the job's working directory, every other line an
// entry. Beyond not crashing: whatever is accepted stays inside what the partition allows (no
// subPath that climbs out of its volume, no relative or unnormalised target).
#include <cstddef>
#include <cstdint>
#include <set>

#include "kubeslurm/podspec/container_mounts.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::fuzz::check;
using kubeslurm::podspec::ContainerMount;

const kubeslurm::api::PartitionSpec& partition() {
  static const kubeslurm::api::PartitionSpec spec = [] {
    kubeslurm::api::PartitionSpec s;
    kubeslurm::api::AllowedMount datasets;
    datasets.path = "/datasets";
    datasets.readOnly = true;
    datasets.volume = {{"persistentVolumeClaim", {{"claimName", "datasets"}}}};
    kubeslurm::api::AllowedMount scratch;
    scratch.path = "/scratch/a";
    scratch.volume = {{"hostPath", {{"path", "/mnt"}}}};
    s.allowedMounts = {datasets, scratch};
    s.sharedVolume = kubeslurm::api::SharedVolume{"home", "/home", "users"};
    return s;
  }();
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> lines = kubeslurm::fuzz::splitLines(data, size);
  const std::string workDir = lines.front();
  lines.erase(lines.begin());
  auto mounts = kubeslurm::podspec::resolveContainerMounts(lines, workDir, "p", partition());
  if (!mounts.isOk()) return 0;
  check(mounts->size() == lines.size());
  std::set<std::string> targets;
  for (const ContainerMount& m : *mounts) {
    check(m.mountPath.starts_with('/'));
    check(kubeslurm::podspec::normalizeAbsolutePath(m.mountPath) == m.mountPath);
    check(targets.insert(m.mountPath).second);
    check(!m.subPath.starts_with('/'));
    const std::string wrapped = "/" + m.subPath + "/";
    check(wrapped.find("/../") == std::string::npos && wrapped.find("/./") == std::string::npos);
    if (m.volumeName == "mount-0") check(m.readOnly);
    if (m.volumeName == "kubeslurm-shared") {
      check(m.subPath == "users" || m.subPath.starts_with("users/"));
    }
  }
  return 0;
}
