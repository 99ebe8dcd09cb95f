#include "kubeslurm/podspec/container_mounts.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace kubeslurm::podspec {

namespace {

// Components of `path` after "." and ".." are applied; `escaped` is set when a ".." climbs
// above the root.
std::vector<std::string_view> pathComponents(std::string_view path, bool* escaped) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view part = path.substr(start, slash - start);
    if (part == "..") {
      if (parts.empty()) {
        if (escaped != nullptr) *escaped = true;
      } else {
        parts.pop_back();
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  return parts;
}

std::string joinComponents(const std::vector<std::string_view>& parts) {
  if (parts.empty()) return "/";
  std::string out;
  for (const std::string_view part : parts) out.append("/").append(part);
  return out;
}

// `path` is `base` or below it; `rest` gets what follows base's components ("" for base).
bool under(std::string_view path, std::string_view base, std::string* rest) {
  if (base == "/") {
    *rest = std::string(path.substr(1));
    return true;
  }
  if (!path.starts_with(base)) return false;
  if (path.size() == base.size()) {
    rest->clear();
    return true;
  }
  if (path[base.size()] != '/') return false;
  *rest = std::string(path.substr(base.size() + 1));
  return true;
}

std::string joinSubPath(std::string_view first, std::string_view second) {
  if (first.empty()) return std::string(second);
  if (second.empty()) return std::string(first);
  std::string out(first);
  if (!out.ends_with('/')) out += '/';
  return out.append(second);
}

struct Entry {
  std::string_view source;
  std::string_view target;
  std::vector<std::string_view> flags;
};

std::optional<Entry> splitEntry(std::string_view text) {
  Entry e;
  const std::size_t colon = text.find(':');
  e.source = text.substr(0, colon);
  e.target = e.source;
  if (colon != std::string_view::npos) {
    const std::string_view rest = text.substr(colon + 1);
    const std::size_t second = rest.find(':');
    e.target = rest.substr(0, second);
    if (second != std::string_view::npos) {
      const std::string_view flags = rest.substr(second + 1);
      std::size_t start = 0;
      while (start < flags.size()) {
        std::size_t plus = flags.find('+', start);
        if (plus == std::string_view::npos) plus = flags.size();
        e.flags.push_back(flags.substr(start, plus - start));
        start = plus + 1;
      }
    }
  }
  if (e.source.empty() || e.target.empty()) return std::nullopt;
  return e;
}

bool isPath(std::string_view p) { return p.starts_with('.') || p.starts_with('/'); }

}  // namespace

std::string normalizeAbsolutePath(std::string_view path) {
  return joinComponents(pathComponents(path, nullptr));
}

std::string allowedMountsProblem(const std::vector<api::AllowedMount>& allowed) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    const api::AllowedMount& m = allowed[i];
    const std::string at = "spec.allowedMounts[" + std::to_string(i) + "]";
    if (!m.path.starts_with('/')) return at + ".path: expected an absolute path";
    if (normalizeAbsolutePath(m.path) != m.path) {
      return at + ".path: expected a normalised path (" + normalizeAbsolutePath(m.path) + ")";
    }
    if (!seen.insert(m.path).second) return at + ".path: " + m.path + " is listed twice";
    if (!m.volume.is_object() || m.volume.size() != 1 || !m.volume.begin()->is_object() ||
        m.volume.contains("name")) {
      return at + ".volume: expected exactly one volume source, such as " +
             R"({"persistentVolumeClaim": {"claimName": ...}} or {"hostPath": {"path": ...}})";
    }
  }
  return "";
}

StatusOr<std::vector<ContainerMount>> resolveContainerMounts(
    const std::vector<std::string>& entries, std::string_view workDir,
    std::string_view partitionName, const api::PartitionSpec& partition) {
  const std::string partitionText(partitionName);
  std::vector<ContainerMount> mounts;
  std::set<std::string> targets;
  std::size_t tmpfsCount = 0;
  // Checked once, and only when an entry uses the list: a broken list refuses those entries,
  // not a job that mounts only tmpfs or the shared volume.
  std::optional<std::string> listProblem;
  for (const std::string& text : entries) {
    const std::string prefix = "--container-mounts: " + text + ": ";
    const std::optional<Entry> entry = splitEntry(text);
    if (!entry) return invalidArgument("pyxis: --container-mounts: invalid format: " + text);
    if (entry->source == "umount") {
      return invalidArgument(prefix +
                             "\"umount\" is not supported: a container cannot unmount what its "
                             "image holds");
    }
    if (entry->source != "tmpfs" && !isPath(entry->source)) {
      return invalidArgument(
          R"(pyxis: mount source must be a relative path, an absolute path, "tmpfs" or "umount")");
    }
    if (!isPath(entry->target)) {
      return invalidArgument("pyxis: mount target must be a relative path or an absolute path");
    }

    ContainerMount mount;
    bool escaped = false;
    // enroot puts a relative target under the container's root and refuses one that leaves it.
    mount.mountPath = joinComponents(pathComponents(entry->target, &escaped));
    if (escaped && !entry->target.starts_with('/')) {
      return invalidArgument(prefix + "the target leaves the container's root");
    }
    if (mount.mountPath == "/")
      return invalidArgument(prefix + "the target is the container's root");
    if (!targets.insert(mount.mountPath).second) {
      return invalidArgument(prefix + mount.mountPath + " is the target of another entry");
    }

    std::optional<bool> writable;  // the last of ro/rw wins, as in mount(8)
    for (const std::string_view flag : entry->flags) {
      if (flag == "ro") {
        writable = false;
      } else if (flag == "rw") {
        writable = true;
      } else if (flag == "slave" || flag == "rslave") {
        mount.mountPropagation = "HostToContainer";
      } else if (flag == "shared" || flag == "rshared") {
        return invalidArgument(prefix + "flag " + std::string(flag) +
                               " needs a privileged container (Bidirectional propagation)");
      } else if (flag != "bind" && flag != "rbind" && flag != "private" && flag != "rprivate" &&
                 flag != "unbindable" && flag != "runbindable" && flag != "nosuid" &&
                 flag != "nodev" && flag != "noexec") {
        return invalidArgument(prefix + "unsupported mount flag \"" + std::string(flag) + "\"");
      }
    }

    if (entry->source == "tmpfs") {
      mount.volumeName = "tmpfs-" + std::to_string(tmpfsCount++);
      mount.volume = {{"name", mount.volumeName}, {"emptyDir", {{"medium", "Memory"}}}};
      mount.readOnly = writable == false;
      mounts.push_back(std::move(mount));
      continue;
    }

    std::string source;
    if (entry->source.starts_with('/')) {
      source = normalizeAbsolutePath(entry->source);
    } else {
      if (!workDir.starts_with('/')) {
        return invalidArgument(prefix + "a relative source needs the job's working directory");
      }
      source = normalizeAbsolutePath(std::string(workDir) + "/" + std::string(entry->source));
    }

    // The longest allowed path the source is at or under.
    std::optional<std::size_t> best;
    std::size_t bestLength = 0;
    std::string rest;
    bool shared = false;
    for (std::size_t i = 0; i < partition.allowedMounts.size(); ++i) {
      std::string tail;
      const std::string& path = partition.allowedMounts[i].path;
      if (under(source, path, &tail) && (!best || path.size() > bestLength)) {
        best = i;
        bestLength = path.size();
        rest = tail;
      }
    }
    if (partition.sharedVolume && partition.sharedVolume->mountPath.starts_with('/')) {
      const std::string path = normalizeAbsolutePath(partition.sharedVolume->mountPath);
      std::string tail;
      if (under(source, path, &tail) && (!best || path.size() > bestLength)) {
        shared = true;
        rest = tail;
      }
    }
    if (!best && !shared) {
      std::string allowed;
      for (const api::AllowedMount& m : partition.allowedMounts) {
        allowed += (allowed.empty() ? "" : ", ") + m.path;
      }
      if (partition.sharedVolume && !partition.sharedVolume->mountPath.empty()) {
        allowed += (allowed.empty() ? "" : ", ") + partition.sharedVolume->mountPath;
      }
      std::string message = prefix;
      message.append(source).append(" is not a path partition ").append(partitionText);
      message.append(" allows to mount (");
      message.append(allowed.empty() ? "it allows none" : "allowed: " + allowed).append(")");
      return invalidArgument(std::move(message));
    }

    if (shared) {
      mount.volumeName = std::string(kSharedVolumeName);
      mount.subPath = joinSubPath(partition.sharedVolume->subPath, rest);
      mount.readOnly = writable == false;
    } else {
      if (!listProblem) listProblem = allowedMountsProblem(partition.allowedMounts);
      if (!listProblem->empty()) {
        return invalidArgument(
            std::string("partition ").append(partitionText).append(": ").append(*listProblem));
      }
      const api::AllowedMount& allowed = partition.allowedMounts[*best];
      if (allowed.readOnly && writable == true) {
        std::string message = prefix;
        message.append(allowed.path).append(" is read-only in partition ").append(partitionText);
        return invalidArgument(std::move(message));
      }
      mount.volumeName = "mount-" + std::to_string(*best);
      mount.volume = allowed.volume;
      mount.volume["name"] = mount.volumeName;
      mount.subPath = rest;
      mount.readOnly = allowed.readOnly || writable == false;
    }
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

}  // namespace kubeslurm::podspec
