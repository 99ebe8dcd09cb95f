// Where the API server is and who we are to it: kubeconfig files and in-cluster config.
//
// Parsing is pure (text in, structs out) so that it is unit-tested and fuzzed without files;
// reading files, the environment and service-account paths is done by the load* functions,
// each with its inputs injectable.
//
// Merging follows kubectl (client-go clientcmd): $KUBECONFIG is a ':'-separated list; files
// that do not exist are skipped; for every named cluster, user and context the first file that
// defines the name wins, and current-context is the first non-empty one. Relative paths in a
// file (certificate-authority, client-certificate, client-key, tokenFile) are relative to that
// file's directory.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::kube {

struct KubeconfigCluster {
  std::string server;
  std::string certificateAuthority;      // path
  std::string certificateAuthorityData;  // PEM, already base64-decoded
  std::string tlsServerName;
  bool insecureSkipTlsVerify = false;  // true only when the file says so
};

struct KubeconfigUser {
  std::string token;
  std::string tokenFile;              // path
  std::string clientCertificate;      // path
  std::string clientCertificateData;  // PEM, decoded
  std::string clientKey;              // path
  std::string clientKeyData;          // PEM, decoded
};

struct KubeconfigContext {
  std::string cluster;
  std::string user;
  std::string ns;  // "namespace"
};

struct Kubeconfig {
  std::map<std::string, KubeconfigCluster> clusters;
  std::map<std::string, KubeconfigUser> users;
  std::map<std::string, KubeconfigContext> contexts;
  std::string currentContext;
};

// Everything the HTTPS client needs, resolved from one context or from the pod's service
// account. PEM fields win over their path twins when both are set.
struct ClientConfig {
  std::string server;  // https://host:port, no trailing slash
  std::string caPem;
  std::string caFile;
  std::string tlsServerName;
  bool insecureSkipTlsVerify = false;
  std::string clientCertPem;
  std::string clientCertFile;
  std::string clientKeyPem;
  std::string clientKeyFile;
  std::string token;      // static bearer token
  std::string tokenFile;  // re-read when it changes (projected service-account tokens rotate)
  std::string ns = "default";
};

// Parses one kubeconfig document (YAML or JSON). `baseDir` makes relative paths absolute.
StatusOr<Kubeconfig> parseKubeconfig(std::string_view text,
                                     const std::filesystem::path& baseDir = {});

// Merges in kubectl's order: earlier configs win per name and for current-context.
Kubeconfig mergeKubeconfigs(const std::vector<Kubeconfig>& configs);

// The config of `context` (empty: current-context).
StatusOr<ClientConfig> resolveContext(const Kubeconfig& config, std::string_view context = {});

// Decodes standard base64 (with or without padding; whitespace ignored), as kubeconfig *-data
// fields hold.
StatusOr<std::string> decodeBase64(std::string_view text);

// Reads a ':'-separated list of kubeconfig paths (the value of $KUBECONFIG), skipping missing
// files as kubectl does; an unreadable or malformed existing file is an error.
StatusOr<Kubeconfig> loadKubeconfigFiles(std::string_view pathList);

// In-cluster configuration of a pod.
struct InClusterPaths {
  std::filesystem::path tokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::filesystem::path caFile = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::filesystem::path namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};
using GetEnv = std::function<std::optional<std::string>(const char* name)>;
GetEnv processEnv();

// KUBERNETES_SERVICE_HOST/PORT plus the service-account files; kFailedPrecondition when not
// in a pod.
StatusOr<ClientConfig> inClusterConfig(const GetEnv& env = processEnv(),
                                       const InClusterPaths& paths = {});

// $KUBECONFIG (or ~/.kube/config), else in-cluster: what `kubectl` would use.
StatusOr<ClientConfig> defaultClientConfig(const GetEnv& env = processEnv(),
                                           std::string_view context = {});

// A bearer token that follows its file: kubelets rotate projected service-account tokens
// (about hourly), so a token read once at start stops working. The file is stat'ed on each
// call and re-read when its modification time or size changed. Thread-safe.
class TokenSource {
 public:
  explicit TokenSource(std::string staticToken) : token_(std::move(staticToken)) {}
  explicit TokenSource(std::filesystem::path file) : file_(std::move(file)) {}

  static std::shared_ptr<TokenSource> fromConfig(const ClientConfig& config);

  // The current token ("" when the config has none).
  StatusOr<std::string> token();

 private:
  std::mutex mutex_;
  std::string token_;
  std::filesystem::path file_;
  std::optional<std::filesystem::file_time_type> seenTime_;
  std::uintmax_t seenSize_ = 0;
};

}  // namespace kubeslurm::kube
