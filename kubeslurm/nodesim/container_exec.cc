#include "kubeslurm/nodesim/container_exec.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <system_error>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace kubeslurm::nodesim {

namespace {

constexpr std::array kForwardedSignals = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
// What a runtime reports for a container whose command could not be started (runc: 128).
constexpr int kStartFailure = 128;

bool fail(const std::string& what) {
  std::cerr << "kubeslurm-nodesim: " << what << ": " << std::generic_category().message(errno)
            << '\n';
  return false;
}

bool exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// Builds the container's root: a tmpfs on `rootfs` and the root's entries as `mounts` says.
class RootBuilder {
 public:
  explicit RootBuilder(std::string rootfs) : rootfs_(std::move(rootfs)) {}

  bool build() {
    if (mount("tmpfs", rootfs_.c_str(), "tmpfs", 0, "mode=0755") != 0) return fail("tmpfs root");
    shadowed_.insert("/");
    return populate("/") && buildDev();
  }

  // Mounts `source` at `target` (a container path), making the mount point where it is missing.
  bool bind(const std::string& source, const std::string& target, bool readOnly) {
    struct stat st {};
    if (stat(source.c_str(), &st) != 0) return fail("volume source " + source);
    if (!makeMountPoint(target, S_ISDIR(st.st_mode))) return false;
    const std::string at = rootfs_ + target;
    if (mount(source.c_str(), at.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return fail("bind " + source + " at " + target);
    }
    if (readOnly &&
        mount(nullptr, at.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      return fail("read-only " + target);
    }
    return true;
  }

 private:
  // Gives the tmpfs directory for host directory `dir` the host's entries: directories and
  // files bound, symbolic links copied.
  bool populate(const std::string& dir) {
    DIR* listing = opendir(dir.c_str());
    if (listing == nullptr) return fail("list " + dir);
    const std::string base = dir == "/" ? "" : dir;
    bool ok = true;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): this helper is single-threaded
    while (const dirent* entry = readdir(listing)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string host = base;
      host += '/';
      host += name;
      const std::string inRoot = rootfs_ + host;
      if (host == rootfs_) continue;
      struct stat st {};
      if (lstat(host.c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        std::string target(4096, '\0');
        const ssize_t n = readlink(host.c_str(), target.data(), target.size());
        if (n < 0) continue;
        target.resize(static_cast<std::size_t>(n));
        ok = ok && (symlink(target.c_str(), inRoot.c_str()) == 0 || fail("symlink " + inRoot));
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (mkdir(inRoot.c_str(), st.st_mode & 07777) != 0) ok = fail("mkdir " + inRoot);
      } else {
        const int fd = open(inRoot.c_str(), O_CREAT | O_WRONLY, 0600);
        if (fd < 0) {
          ok = fail("create " + inRoot);
          continue;
        }
        close(fd);
      }
      if (ok && mount(host.c_str(), inRoot.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        ok = fail("bind " + host);
      }
    }
    closedir(listing);
    return ok;
  }

  // A container's /dev as runc makes it (its libcontainer default devices and mounts): a tmpfs
  // with the usual character devices bound from the host, a devpts instance of its own with
  // /dev/ptmx a link into it (so a pseudo-terminal opened in the container is named in the
  // container's /dev/pts), a /dev/shm tmpfs and the /proc/self/fd links.
  bool buildDev() {
    const std::string dev = rootfs_ + "/dev";
    if (mount("tmpfs", dev.c_str(), "tmpfs", MS_NOSUID, "mode=0755,size=65536k") != 0) {
      return fail("tmpfs /dev");
    }
    shadowed_.insert("/dev");
    for (const char* name : {"null", "zero", "full", "random", "urandom", "tty"}) {
      const std::string host = std::string("/dev/") + name;
      if (!exists(host)) continue;
      const std::string at = dev + "/" + name;
      const int fd = open(at.c_str(), O_CREAT | O_WRONLY, 0600);
      if (fd < 0) return fail("create " + at);
      close(fd);
      if (mount(host.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) != 0) {
        return fail("bind " + host);
      }
    }
    const std::string pts = dev + "/pts";
    const std::string shm = dev + "/shm";
    if (mkdir(pts.c_str(), 0755) != 0 ||
        mount("devpts", pts.c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=0620") != 0) {
      return fail("devpts at /dev/pts");
    }
    if (mkdir(shm.c_str(), 01777) != 0 ||
        mount("shm", shm.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "mode=1777,size=65536k") != 0) {
      return fail("tmpfs at /dev/shm");
    }
    const std::array<std::pair<const char*, const char*>, 5> links = {
        {{"ptmx", "pts/ptmx"},
         {"fd", "/proc/self/fd"},
         {"stdin", "/proc/self/fd/0"},
         {"stdout", "/proc/self/fd/1"},
         {"stderr", "/proc/self/fd/2"}}};
    for (const auto& [name, target] : links) {
      const std::string at = dev + "/" + name;
      if (symlink(target, at.c_str()) != 0) return fail("symlink " + at);
    }
    return true;
  }

  // The directories of `target` that exist on the host are the host's (bound); the first one
  // missing is made in a tmpfs laid over its parent (whose entries are bound back first).
  bool makeMountPoint(const std::string& target, bool directory) {
    if (target.empty() || target.front() != '/') {
      errno = EINVAL;
      return fail("mount point " + target + " is not absolute");
    }
    std::string path;
    std::size_t start = 1;
    while (start <= target.size()) {
      const std::size_t slash = std::min(target.find('/', start), target.size());
      const std::string name = target.substr(start, slash - start);
      start = slash + 1;
      if (name.empty()) continue;
      const std::string parent = path.empty() ? "/" : path;
      path += "/" + name;
      const bool last = slash >= target.size();
      if (exists(rootfs_ + path)) continue;
      if (!shadowed_.contains(parent)) {
        const std::string at = rootfs_ + parent;
        if (mount("tmpfs", at.c_str(), "tmpfs", 0, "mode=0755") != 0) {
          return fail("tmpfs over " + parent);
        }
        shadowed_.insert(parent);
        if (!populate(parent)) return false;
        if (exists(rootfs_ + path)) continue;
      }
      const std::string at = rootfs_ + path;
      if (last && !directory) {
        const int fd = open(at.c_str(), O_CREAT | O_WRONLY, 0644);
        if (fd < 0) return fail("create " + at);
        close(fd);
      } else if (mkdir(at.c_str(), 0755) != 0) {
        return fail("mkdir " + at);
      }
      shadowed_.insert(path);  // made by us: its children may be made directly
    }
    return true;
  }

  std::string rootfs_;
  std::set<std::string> shadowed_;  // container directories that are ours, not the host's
};

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Pid 1 of the container: never returns.
[[noreturn]] void execInit(ContainerSpec& spec) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (chroot(spec.rootfs.c_str()) != 0 || chdir("/") != 0) {
    fail("chroot " + spec.rootfs);
    _exit(kStartFailure);
  }
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    fail("mount /proc");
    _exit(kStartFailure);
  }
  const std::string workdir = spec.workingDir.empty() ? "/" : spec.workingDir;
  if (chdir(workdir.c_str()) != 0) {
    fail("chdir to the working directory " + workdir);
    _exit(kStartFailure);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe): one thread
  auto argv = cStrings(spec.argv);
  auto envp = cStrings(spec.env);
  environ = envp.data();  // execvp looks the command up on the container's PATH
  execvp(argv[0], argv.data());
  fail("exec " + spec.argv.front());
  _exit(kStartFailure);
}

}  // namespace

api::Json encodeContainerSpec(const ContainerSpec& spec) {
  api::Json mounts = api::Json::array();
  for (const auto& m : spec.mounts) {
    mounts.push_back({{"source", m.source}, {"target", m.target}, {"readOnly", m.readOnly}});
  }
  return {{"argv", spec.argv},          {"env", spec.env},       {"hostname", spec.hostname},
          {"netns", spec.netns},        {"rootfs", spec.rootfs}, {"workingDir", spec.workingDir},
          {"mounts", std::move(mounts)}};
}

StatusOr<ContainerSpec> decodeContainerSpec(const api::Json& json) {
  try {
    ContainerSpec spec;
    spec.argv = json.at("argv").get<std::vector<std::string>>();
    spec.env = json.at("env").get<std::vector<std::string>>();
    spec.hostname = json.at("hostname").get<std::string>();
    spec.netns = json.at("netns").get<std::string>();
    spec.rootfs = json.at("rootfs").get<std::string>();
    spec.workingDir = json.at("workingDir").get<std::string>();
    for (const auto& m : json.at("mounts")) {
      spec.mounts.push_back({m.at("source").get<std::string>(), m.at("target").get<std::string>(),
                             m.at("readOnly").get<bool>()});
    }
    if (spec.argv.empty()) return invalidArgument("the container has no command");
    if (spec.rootfs.empty()) return invalidArgument("no rootfs directory");
    return spec;
  } catch (const nlohmann::json::exception& e) {
    return invalidArgument(std::string("container spec: ") + e.what());
  }
}

int runContainer(const std::string& specPath) {
  std::ifstream in(specPath);
  std::stringstream text;
  text << in.rdbuf();
  const auto json = api::Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto parsed = decodeContainerSpec(json);
  if (!in || !parsed.isOk()) {
    std::cerr << "kubeslurm-nodesim: " << specPath << ": "
              << (parsed.isOk() ? "cannot read" : parsed.status().message()) << '\n';
    return kStartFailure;
  }
  ContainerSpec& spec = *parsed;
  // A simulator that dies takes its containers with it (pid 1 dies with this process in turn).
  prctl(PR_SET_PDEATHSIG, SIGKILL);

  // Signals to forward are taken synchronously, before pid 1 exists, so none is lost.
  sigset_t waited;
  sigemptyset(&waited);
  for (const int sig : kForwardedSignals) sigaddset(&waited, sig);
  sigaddset(&waited, SIGCHLD);
  sigprocmask(SIG_BLOCK, &waited, nullptr);  // NOLINT(concurrency-mt-unsafe): one thread

  if (!spec.netns.empty()) {
    const int fd = open(spec.netns.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      fail("join network namespace " + spec.netns);
      return kStartFailure;
    }
    close(fd);
  }
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID) != 0) {
    fail("unshare");
    return kStartFailure;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    fail("make / private");
    return kStartFailure;
  }
  if (!spec.hostname.empty() && sethostname(spec.hostname.data(), spec.hostname.size()) != 0) {
    fail("sethostname " + spec.hostname);
    return kStartFailure;
  }
  RootBuilder root(spec.rootfs);
  if (!root.build()) return kStartFailure;
  for (const auto& m : spec.mounts) {
    if (!root.bind(m.source, m.target, m.readOnly)) return kStartFailure;
  }

  const pid_t init = fork();
  if (init < 0) {
    fail("fork");
    return kStartFailure;
  }
  if (init == 0) execInit(spec);

  for (;;) {
    int sig = 0;
    if (sigwait(&waited, &sig) != 0) continue;
    if (sig != SIGCHLD) {
      kill(init, sig);
      continue;
    }
    int status = 0;
    const pid_t done = waitpid(init, &status, WNOHANG);
    if (done != init) continue;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  }
}

}  // namespace kubeslurm::nodesim
