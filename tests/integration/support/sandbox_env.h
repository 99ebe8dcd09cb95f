// The sandbox (docs/sandbox.md) for an integration-test binary: a global gtest Environment
// runs `sandbox up --dir <mkdtemp>` once, reads `sandbox env`, and `sandbox down --purge` at
// the end. Missing control-plane binaries are a FAIL that says how to build them, never a skip.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "kubeslurm/kube/kubeconfig.h"

namespace kubeslurm::testing_support {

struct CommandResult {
  int exitCode = -1;   // as pclose() returns it: 0 on success
  std::string output;  // stdout and stderr together
};

// Runs `command` under /bin/sh with stderr folded into stdout.
CommandResult runCommand(const std::string& command);

class SandboxEnvironment : public ::testing::Environment {
 public:
  // Extra arguments for `sandbox up` (e.g. a node-simulator shape).
  explicit SandboxEnvironment(std::string upArguments = {});

  // The `export` lines of `sandbox env`: KUBECONFIG, KUBESLURM_APISERVER, KUBESLURM_TOKEN,
  // KUBESLURM_CA_FILE, KUBESLURM_ETCD. Empty if the sandbox did not start.
  static std::map<std::string, std::string>& env();
  // The sandbox's directory (pki/, logs/, run/...).
  static const std::string& dir();
  static std::string sandboxScript();

  void SetUp() override;
  void TearDown() override;

 private:
  std::string upArguments_;
};

// The admin context of the sandbox's kubeconfig.
kube::ClientConfig sandboxAdminConfig();

// `text` as one single-quoted /bin/sh word.
std::string shellQuote(const std::string& text);

// The sandbox's own kubectl (the control plane's version) with its admin kubeconfig and a 20 s
// request timeout; `arguments` are passed to the shell as written.
CommandResult kubectl(const std::string& arguments);

// Polls `done` every `poll` until it holds or `timeout` passed; then one last look.
bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds poll = std::chrono::milliseconds(200));

// The whole file, or "" when it cannot be read.
std::string readFile(const std::string& path);

}  // namespace kubeslurm::testing_support
