// The CLI's cluster access: which kubeconfig, context, namespace and user a command gets
// (kube_access.h), without connecting (the client is only created).
#include "kubeslurm/cli/kube_access.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/cli/commands.h"

namespace kubeslurm::cli {
namespace {

constexpr std::string_view kKubeconfig = R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
users:
- name: alice@lab
  user:
    token: t1
- name: bob
  user:
    token: t2
contexts:
- name: one
  context: {cluster: c, user: alice@lab, namespace: team-a}
- name: two
  context: {cluster: c, user: bob}
current-context: one
)";

class KubeAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kubeslurm-kube-access-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "config") << kKubeconfig;
    env_["KUBECONFIG"] = (dir_ / "config").string();
    env_["USER"] = "alice";
    env_["PWD"] = "/home/alice";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  CliIo io() {
    return CliIo{in_, out_, err_,
                 [this](std::string_view name) -> std::optional<std::string> {
                   auto it = env_.find(std::string(name));
                   if (it == env_.end()) return std::nullopt;
                   return it->second;
                 },
                 [](const std::string&) -> StatusOr<std::string> {
                   return std::string("#!/bin/sh\ntrue\n");
                 }};
  }

  StatusOr<ClusterSession> connect(const KubeFlags& flags) {
    CliIo cli = io();
    return kubeConnector()(flags, cli);
  }

  std::filesystem::path dir_;
  std::map<std::string, std::string> env_;
  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(KubeAccess, ContextNamespaceAndUser) {
  auto session = connect(KubeFlags{});
  ASSERT_TRUE(session.isOk()) << session.status().message();
  EXPECT_EQ(session->namespaceName, "team-a");
  EXPECT_EQ(session->user, "alice@lab");

  auto other = connect(KubeFlags{.context = "two"});
  ASSERT_TRUE(other.isOk());
  EXPECT_EQ(other->namespaceName, "default");  // the context names none
  EXPECT_EQ(other->user, "bob");
}

// $KUBESLURM_CONTEXT chooses the context for a command that takes no flags of ours (srun);
// --context wins over it.
TEST_F(KubeAccess, ContextFromTheEnvironment) {
  env_["KUBESLURM_CONTEXT"] = "two";
  auto fromEnv = connect(KubeFlags{});
  ASSERT_TRUE(fromEnv.isOk()) << fromEnv.status().message();
  EXPECT_EQ(fromEnv->user, "bob");
  auto flag = connect(KubeFlags{.context = "one"});
  ASSERT_TRUE(flag.isOk());
  EXPECT_EQ(flag->user, "alice@lab");
}

TEST_F(KubeAccess, NamespaceOverrides) {
  env_["KUBESLURM_NAMESPACE"] = "from-env";
  EXPECT_EQ(connect(KubeFlags{})->namespaceName, "from-env");
  EXPECT_EQ(connect(KubeFlags{.namespaceName = "flag"})->namespaceName, "flag");
  EXPECT_EQ(connect(KubeFlags{.allNamespaces = true})->namespaceName, "");
}

TEST_F(KubeAccess, KubeconfigFlagWinsAndMustExist) {
  env_["KUBECONFIG"] = "/nonexistent";
  auto missing = connect(KubeFlags{.kubeconfig = (dir_ / "nope").string()});
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().message(),
            "stat " + (dir_ / "nope").string() + ": no such file or directory");
  auto given = connect(KubeFlags{.kubeconfig = (dir_ / "config").string()});
  ASSERT_TRUE(given.isOk());
  EXPECT_EQ(given->user, "alice@lab");
}

// sbatch --dry-run writes the kubeconfig's user as spec.user (else $USER) and --namespace as
// metadata.namespace, without connecting.
TEST_F(KubeAccess, DryRunUsesTheKubeconfigUser) {
  CliIo cli = io();
  ASSERT_EQ(runSbatch({"--dry-run=client", "-o", "json", "--namespace=ns1", "x.sbatch"}, cli), 0)
      << err_.str();
  const auto object = nlohmann::json::parse(out_.str());
  EXPECT_EQ(object["spec"]["user"], "alice@lab");
  EXPECT_EQ(object["metadata"]["namespace"], "ns1");
}

}  // namespace
}  // namespace kubeslurm::cli
