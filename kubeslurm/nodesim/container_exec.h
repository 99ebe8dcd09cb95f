// `kubeslurm-nodesim run-container SPEC`: one container of process mode (process_runner.h), run
// by a process of its own so that what a multithreaded simulator may not do between fork and
// exec (allocate, read files, fork again) happens in a single-threaded one.
//
// It joins the pod's network namespace, unshares mount, uts, ipc and pid namespaces, makes a
// root on a tmpfs whose entries are bind mounts of the host's (a directory on the way to a mount
// point the host lacks gets the same treatment, so nothing is ever created on the host), mounts
// the spec's mounts into it, sets the hostname, and forks the command as pid 1 of the new pid
// namespace, chrooted, with a fresh /proc, in its working directory, with exactly the spec's
// environment (the command is looked up on that environment's PATH). It forwards SIGTERM,
// SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to pid 1 (which, as a container's init, only
// gets those it handles) and exits with pid 1's status, 128 + the signal for one that killed
// it; if it is itself killed, pid 1 (and with it the whole pid namespace) is killed too.
#pragma once

#include <string>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::nodesim {

struct ContainerMount {
  std::string source;  // a host directory or file
  std::string target;  // its path in the container
  bool readOnly = false;
};

struct ContainerSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=VALUE
  std::string hostname;
  std::string netns;   // a /run/netns path; "" = the host's network
  std::string rootfs;  // an empty directory the root is built on
  std::string workingDir;
  std::vector<ContainerMount> mounts;
};

api::Json encodeContainerSpec(const ContainerSpec& spec);
StatusOr<ContainerSpec> decodeContainerSpec(const api::Json& json);

// The helper's main: returns the exit status to exit with (errors are printed to stderr, which
// is the container's log).
int runContainer(const std::string& specPath);

}  // namespace kubeslurm::nodesim
