#include "tests/integration/support/sandbox_env.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

namespace kubeslurm::testing_support {

namespace fs = std::filesystem;

namespace {
std::string& sandboxDir() {
  static std::string dir;
  return dir;
}
}  // namespace

CommandResult runCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");  // NOLINT(cert-env33-c): test helper
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
    result.output += buffer.data();
  }
  result.exitCode = ::pclose(pipe);
  return result;
}

SandboxEnvironment::SandboxEnvironment(std::string upArguments)
    : upArguments_(std::move(upArguments)) {}

std::map<std::string, std::string>& SandboxEnvironment::env() {
  static std::map<std::string, std::string> values;
  return values;
}

const std::string& SandboxEnvironment::dir() { return sandboxDir(); }

std::string SandboxEnvironment::sandboxScript() {
  return std::string(KUBESLURM_SOURCE_DIR) + "/sandbox/sandbox";
}

void SandboxEnvironment::SetUp() {
  const char* cache = std::getenv("KUBESLURM_CACHE");     // NOLINT(concurrency-mt-unsafe)
  const char* home = std::getenv("HOME");                 // NOLINT(concurrency-mt-unsafe)
  const char* binDir = std::getenv("KUBESLURM_BIN_DIR");  // NOLINT(concurrency-mt-unsafe)
  const fs::path bin =
      binDir != nullptr
          ? fs::path(binDir)
          : (cache != nullptr ? fs::path(cache)
                              : fs::path(home != nullptr ? home : "") / ".cache/kubeslurm") /
                "bin";
  if (!fs::exists(bin / "kube-apiserver") || !fs::exists(bin / "etcd")) {
    FAIL() << "control plane binaries missing in " << bin
           << ": run sandbox/build-control-plane.sh once (about 5 minutes), then re-run";
  }
  std::string pattern = (fs::temp_directory_path() / "kube-it-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) FAIL() << "mkdtemp failed";
  sandboxDir() = pattern;
  std::string up = sandboxScript() + " up --dir " + pattern;
  if (!upArguments_.empty()) up += " " + upArguments_;
  const CommandResult started = runCommand(up);
  ASSERT_EQ(started.exitCode, 0) << "sandbox up failed:\n" << started.output;
  const CommandResult exports = runCommand(sandboxScript() + " env --dir " + pattern);
  ASSERT_EQ(exports.exitCode, 0) << exports.output;
  std::size_t at = 0;
  while (at < exports.output.size()) {
    std::size_t end = exports.output.find('\n', at);
    if (end == std::string::npos) end = exports.output.size();
    const std::string line = exports.output.substr(at, end - at);
    at = end + 1;
    if (line.rfind("export ", 0) != 0) continue;
    const std::size_t eq = line.find('=');
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    env()[line.substr(7, eq - 7)] = value;
  }
}

void SandboxEnvironment::TearDown() {
  if (sandboxDir().empty()) return;
  const CommandResult down = runCommand(sandboxScript() + " down --purge --dir " + sandboxDir());
  EXPECT_EQ(down.exitCode, 0) << down.output;
}

kube::ClientConfig sandboxAdminConfig() {
  auto files = kube::loadKubeconfigFiles(SandboxEnvironment::env()["KUBECONFIG"]);
  EXPECT_TRUE(files.isOk()) << files.status().toString();
  if (!files.isOk()) return {};
  auto config = kube::resolveContext(*files);
  EXPECT_TRUE(config.isOk()) << config.status().toString();
  return config.isOk() ? *config : kube::ClientConfig{};
}

std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

CommandResult kubectl(const std::string& arguments) {
  auto& env = SandboxEnvironment::env();
  return runCommand("KUBECONFIG=" + shellQuote(env["KUBECONFIG"]) + " " +
                    shellQuote(env["KUBESLURM_BIN_DIR"] + "/kubectl") + " --request-timeout=20s " +
                    arguments);
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kubeslurm::testing_support
