// Pyxis's --container-mounts on Kubernetes. On a Slurm cluster each entry bind-mounts a path of
// the compute node into the container; here a rank pod has no node paths of its own, so an
// entry may only name what its partition lists (spec.allowedMounts, and the shared volume the
// submit directory lives on), and becomes that volume with the rest of the path as subPath.
//
// Entries are Pyxis's "SRC[:DST[:FLAGS]]" (args.c parse_mount_option): SRC is an absolute path, a
// relative one (to the submit directory, as srun's working directory is there), "tmpfs" (a
// memory-backed emptyDir) or "umount" (refused: a Kubernetes container cannot unmount what its
// image has); DST defaults to SRC and a relative DST is under the container's root; FLAGS are
// enroot's mount options joined by "+". PURE.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::podspec {

// The volume a shared-volume mount uses: the one rankPods() adds for spec.sharedVolume.
inline constexpr std::string_view kSharedVolumeName = "kubeslurm-shared";

// One volumeMount of the rank container, and the pod volume it needs. nlohmann::json's implicit
// members only throw on a corrupted value, a bug, not an input error.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ContainerMount {
  std::string volumeName;  // kSharedVolumeName, "mount-<i>" (allowedMounts[i]) or "tmpfs-<j>"
  api::Json volume;        // the pod volume (with its name); null for the shared volume
  std::string mountPath;
  std::string subPath;
  bool readOnly = false;
  std::string mountPropagation;  // "" or "HostToContainer" (rslave)
  friend bool operator==(const ContainerMount&, const ContainerMount&) = default;
};

// What is wrong with a partition's spec.allowedMounts, or "" when nothing is: each path
// absolute and normalised, listed once; each volume exactly one volume source, an object.
std::string allowedMountsProblem(const std::vector<api::AllowedMount>& allowed);

// The mounts of a job's entries in partition `partitionName`, in entry order, each pod volume
// once. kInvalidArgument says which entry cannot be mounted and why (not under an allowed path,
// read-write on a read-only path, an unknown flag, a target used twice...).
StatusOr<std::vector<ContainerMount>> resolveContainerMounts(
    const std::vector<std::string>& entries, std::string_view workDir,
    std::string_view partitionName, const api::PartitionSpec& partition);

// `path` with "." and ".." components and repeated slashes taken out; ".." at the root stays
// at the root, as the kernel resolves it. `path` must be absolute.
std::string normalizeAbsolutePath(std::string_view path);

}  // namespace kubeslurm::podspec
