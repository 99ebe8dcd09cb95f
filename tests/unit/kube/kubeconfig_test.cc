#include "kubeslurm/kube/kubeconfig.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/kube/client.h"

namespace kubeslurm::kube {
namespace {

namespace fs = std::filesystem;

// "-----BEGIN CERTIFICATE-----\nCA\n" in base64.
constexpr const char* kCaData = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg==";

constexpr const char* kConfig = R"(
apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg==
- name: files
  cluster:
    server: https://k8s.example:443
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
- name: bot
  user:
    token: abc.def
    tokenFile: /var/run/token
    client-certificate: certs/bot.crt
    client-key: /abs/bot.key
contexts:
- name: admin
  context: {cluster: local, user: admin, namespace: hpc}
- name: bot
  context: {cluster: files, user: bot}
)";

TEST(KubeconfigTest, ParsesClustersUsersContextsAndDecodesData) {
  auto config = parseKubeconfig(kConfig, "/etc/kube");
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->currentContext, "admin");
  ASSERT_EQ(config->clusters.size(), 2U);
  EXPECT_EQ(config->clusters["local"].certificateAuthorityData,
            "-----BEGIN CERTIFICATE-----\nCA\n");
  EXPECT_FALSE(config->clusters["local"].insecureSkipTlsVerify);
  EXPECT_TRUE(config->clusters["files"].insecureSkipTlsVerify);
  EXPECT_EQ(config->clusters["files"].certificateAuthority, "/etc/kube/pki/ca.crt");
  EXPECT_EQ(config->users["admin"].clientCertificateData, "cert");
  EXPECT_EQ(config->users["admin"].clientKeyData, "key");
  EXPECT_EQ(config->users["bot"].clientCertificate, "/etc/kube/certs/bot.crt");
  EXPECT_EQ(config->users["bot"].clientKey, "/abs/bot.key");
  EXPECT_EQ(config->contexts["admin"].ns, "hpc");
}

TEST(KubeconfigTest, ResolvesCurrentContext) {
  auto config = parseKubeconfig(kConfig);
  ASSERT_TRUE(config.isOk());
  auto client = resolveContext(*config);
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  EXPECT_EQ(client->server, "https://127.0.0.1:6443");  // trailing slash dropped
  EXPECT_EQ(client->caPem, "-----BEGIN CERTIFICATE-----\nCA\n");
  EXPECT_EQ(client->clientCertPem, "cert");
  EXPECT_EQ(client->ns, "hpc");
  EXPECT_FALSE(client->insecureSkipTlsVerify);
}

TEST(KubeconfigTest, ResolvesNamedContextWithDefaultNamespace) {
  auto config = parseKubeconfig(kConfig);
  ASSERT_TRUE(config.isOk());
  auto client = resolveContext(*config, "bot");
  ASSERT_TRUE(client.isOk());
  EXPECT_EQ(client->token, "abc.def");
  EXPECT_EQ(client->tokenFile, "/var/run/token");
  EXPECT_EQ(client->ns, "default");
  EXPECT_TRUE(client->insecureSkipTlsVerify);
}

struct BadConfig {
  const char* name;
  const char* yaml;
  StatusCode code;
};

class KubeconfigErrorTest : public testing::TestWithParam<BadConfig> {};

TEST_P(KubeconfigErrorTest, IsAnErrorNotAnException) {
  auto config = parseKubeconfig(GetParam().yaml);
  if (config.isOk()) {
    EXPECT_EQ(resolveContext(*config).status().code(), GetParam().code);
  } else {
    EXPECT_EQ(config.status().code(), GetParam().code);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, KubeconfigErrorTest,
    testing::Values(BadConfig{"NotYaml", "clusters: [", StatusCode::kInvalidArgument},
                    BadConfig{"NotAMap", "- 1\n- 2", StatusCode::kInvalidArgument},
                    BadConfig{"ClustersNotAList", "clusters: 3", StatusCode::kInvalidArgument},
                    BadConfig{"EntryWithoutName", "clusters: [{cluster: {server: x}}]",
                              StatusCode::kInvalidArgument},
                    BadConfig{"BadBase64",
                              "clusters: [{name: c, cluster: {certificate-authority-data: '*'}}]",
                              StatusCode::kInvalidArgument},
                    BadConfig{"BadBool",
                              "clusters: [{name: c, cluster: {insecure-skip-tls-verify: maybe}}]",
                              StatusCode::kInvalidArgument},
                    BadConfig{"NoCurrentContext", "clusters: []", StatusCode::kFailedPrecondition},
                    BadConfig{"MissingContext", "current-context: x", StatusCode::kNotFound},
                    BadConfig{"MissingCluster",
                              "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]",
                              StatusCode::kNotFound},
                    BadConfig{"ClusterWithoutServer",
                              "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
                              "clusters: [{name: c, cluster: {}}]",
                              StatusCode::kInvalidArgument}),
    [](const testing::TestParamInfo<BadConfig>& param) { return param.param.name; });

TEST(KubeconfigTest, EmptyDocumentIsAnEmptyConfig) {
  auto config = parseKubeconfig("");
  ASSERT_TRUE(config.isOk());
  EXPECT_TRUE(config->clusters.empty());
}

TEST(Base64Test, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(decodeBase64("aGVsbG8=").value(), "hello");
  EXPECT_EQ(decodeBase64("aGVsbG8").value(), "hello");
  EXPECT_EQ(decodeBase64("aGVs\nbG8=\n").value(), "hello");
  EXPECT_EQ(decodeBase64(kCaData).value(), "-----BEGIN CERTIFICATE-----\nCA\n");
  EXPECT_FALSE(decodeBase64("a").isOk());
  EXPECT_FALSE(decodeBase64("aG=Vs").isOk());
  EXPECT_FALSE(decodeBase64("a$==").isOk());
}

TEST(MergeTest, FirstFileWinsPerNameAndForCurrentContext) {
  auto first = parseKubeconfig(R"(
clusters: [{name: shared, cluster: {server: https://first}}]
contexts: [{name: a, context: {cluster: shared}}]
)");
  auto second = parseKubeconfig(R"(
current-context: b
clusters: [{name: shared, cluster: {server: https://second}}, {name: only2, cluster: {server: https://o}}]
contexts: [{name: a, context: {cluster: only2}}, {name: b, context: {cluster: shared}}]
)");
  ASSERT_TRUE(first.isOk() && second.isOk());
  Kubeconfig merged = mergeKubeconfigs({*first, *second});
  EXPECT_EQ(merged.currentContext, "b");
  EXPECT_EQ(merged.clusters["shared"].server, "https://first");
  EXPECT_EQ(merged.clusters["only2"].server, "https://o");
  EXPECT_EQ(merged.contexts["a"].cluster, "shared");
  EXPECT_EQ(resolveContext(merged).value().server, "https://first");
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kubecfg-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  fs::path path_;
};

TEST(LoadTest, KubeconfigListSkipsMissingFilesAndResolvesRelativePaths) {
  TempDir dir;
  const fs::path a = dir.write("a.yaml", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {tokenFile: tok}}]
)");
  const fs::path b = dir.write("b.yaml",
                               "clusters: [{name: k, cluster: {server: https://h:1, "
                               "certificate-authority: ca.crt}}]\n");
  const std::string list =
      (dir.path() / "missing.yaml").string() + ":" + a.string() + "::" + b.string();
  auto config = loadKubeconfigFiles(list);
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  auto client = resolveContext(*config);
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  EXPECT_EQ(client->caFile, (dir.path() / "ca.crt").string());
  EXPECT_EQ(client->tokenFile, (dir.path() / "tok").string());
}

TEST(LoadTest, MalformedExistingFileIsAnErrorNamingIt) {
  TempDir dir;
  const fs::path bad = dir.write("bad.yaml", "clusters: [");
  auto config = loadKubeconfigFiles(bad.string());
  ASSERT_FALSE(config.isOk());
  EXPECT_NE(config.status().message().find("bad.yaml"), std::string::npos);
  EXPECT_EQ(loadKubeconfigFiles("/nonexistent/x").status().code(), StatusCode::kNotFound);
}

GetEnv fakeEnv(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(InClusterTest, BuildsServerFromServiceEnvAndReadsServiceAccount) {
  TempDir dir;
  InClusterPaths paths{dir.write("token", "tok-1\n"), dir.write("ca.crt", "CA"),
                       dir.write("namespace", "hpc\n")};
  auto config = inClusterConfig(
      fakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}),
      paths);
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->caFile, paths.caFile.string());
  EXPECT_EQ(config->tokenFile, paths.tokenFile.string());
  EXPECT_EQ(config->ns, "hpc");
}

TEST(InClusterTest, Ipv6HostIsBracketed) {
  TempDir dir;
  InClusterPaths paths{dir.write("token", "t"), dir.path() / "ca.crt", dir.path() / "none"};
  auto config = inClusterConfig(
      fakeEnv({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}}), paths);
  ASSERT_TRUE(config.isOk());
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
  EXPECT_EQ(config->ns, "default");
}

TEST(InClusterTest, OutsideAPodIsFailedPrecondition) {
  EXPECT_EQ(inClusterConfig(fakeEnv({})).status().code(), StatusCode::kFailedPrecondition);
  TempDir dir;
  InClusterPaths paths{dir.path() / "no-token", dir.path() / "ca", dir.path() / "ns"};
  EXPECT_EQ(
      inClusterConfig(fakeEnv({{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}}),
                      paths)
          .status()
          .code(),
      StatusCode::kFailedPrecondition);
}

TEST(DefaultConfigTest, KubeconfigEnvWinsOverInCluster) {
  TempDir dir;
  const fs::path file = dir.write("cfg",
                                  "current-context: c\ncontexts: [{name: c, context: "
                                  "{cluster: k}}]\nclusters: [{name: k, cluster: "
                                  "{server: https://from-file}}]\n");
  auto config = defaultClientConfig(fakeEnv({{"KUBECONFIG", file.string()},
                                             {"KUBERNETES_SERVICE_HOST", "h"},
                                             {"KUBERNETES_SERVICE_PORT", "1"}}));
  ASSERT_TRUE(config.isOk());
  EXPECT_EQ(config->server, "https://from-file");
}

TEST(TokenSourceTest, FollowsTheFileWhenItChanges) {
  TempDir dir;
  const fs::path file = dir.write("token", "first\n");
  TokenSource source(file);
  EXPECT_EQ(source.token().value(), "first");
  std::ofstream(file) << "second-token";
  // Rotation writes a new file; make its mtime differ even on coarse-timestamp filesystems.
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  EXPECT_EQ(source.token().value(), "second-token");
  fs::remove(file);
  EXPECT_EQ(source.token().value(), "second-token");  // briefly missing: keep the last one
}

TEST(TokenSourceTest, StaticTokenAndMissingFile) {
  EXPECT_EQ(TokenSource(std::string("s")).token().value(), "s");
  EXPECT_EQ(TokenSource(fs::path("/nonexistent/token")).token().status().code(),
            StatusCode::kUnauthenticated);
  ClientConfig config;
  config.token = "static";
  config.tokenFile = "/nonexistent/token";
  EXPECT_FALSE(TokenSource::fromConfig(config)->token().isOk());  // the file wins
}

// A config that names the cluster's CA drops OpenSSL's default CA file for the process (each new
// connection would parse it again); one without a CA leaves the system's trust as it is.
TEST(SkipSystemCaFileTest, OnlyWhenTheConfigNamesTheClusterCa) {
  const char* before = std::getenv("SSL_CERT_FILE");  // NOLINT(concurrency-mt-unsafe)
  const std::optional<std::string> saved =
      before != nullptr ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt", 1);  // NOLINT
  ClientConfig none;
  none.server = "https://127.0.0.1:6443";
  EXPECT_FALSE(skipSystemCaFile(none));
  EXPECT_STREQ(std::getenv("SSL_CERT_FILE"),  // NOLINT(concurrency-mt-unsafe)
               "/etc/ssl/certs/ca-certificates.crt");
  ClientConfig withCa = none;
  withCa.caPem = "-----BEGIN CERTIFICATE-----\n...";
  EXPECT_TRUE(skipSystemCaFile(withCa));
  EXPECT_STREQ(std::getenv("SSL_CERT_FILE"), "/dev/null");  // NOLINT(concurrency-mt-unsafe)
  if (saved) {
    ::setenv("SSL_CERT_FILE", saved->c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  } else {
    ::unsetenv("SSL_CERT_FILE");  // NOLINT(concurrency-mt-unsafe)
  }
}

}  // namespace
}  // namespace kubeslurm::kube
