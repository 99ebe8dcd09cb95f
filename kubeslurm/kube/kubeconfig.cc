#include "kubeslurm/kube/kubeconfig.h"

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include <yaml-cpp/yaml.h>

namespace kubeslurm::kube {
namespace {

namespace fs = std::filesystem;

std::string scalarField(const YAML::Node& map, const char* key) {
  if (!map.IsMap()) return {};
  const YAML::Node value = map[key];
  if (!value || !value.IsScalar()) return {};
  return value.Scalar();
}

std::string resolvePath(std::string path, const fs::path& baseDir) {
  if (path.empty() || baseDir.empty()) return path;
  const fs::path candidate(path);
  if (candidate.is_absolute()) return path;
  return (baseDir / candidate).lexically_normal().string();
}

// A "*-data" field: base64 of a PEM. Empty when absent.
StatusOr<std::string> dataField(const YAML::Node& map, const char* key, std::string_view owner) {
  const std::string encoded = scalarField(map, key);
  if (encoded.empty()) return std::string();
  auto decoded = decodeBase64(encoded);
  if (!decoded.isOk()) {
    return invalidArgument(std::string(owner) + ": " + key + ": " + decoded.status().message());
  }
  return decoded;
}

StatusOr<bool> boolField(const YAML::Node& map, const char* key, std::string_view owner) {
  const std::string text = scalarField(map, key);
  if (text.empty()) return false;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return invalidArgument(std::string(owner) + ": " + key + ": not a boolean: " + text);
}

// Walks one named list ("clusters", "users", "contexts"): entries {name, <inner>: {...}}.
template <typename Parse>
Status forEachNamed(const YAML::Node& root, const char* listKey, const char* innerKey,
                    Parse&& parse) {
  const YAML::Node list = root[listKey];
  if (!list || list.IsNull()) return Status::ok();
  if (!list.IsSequence()) return invalidArgument(std::string(listKey) + ": not a list");
  for (const YAML::Node& entry : list) {
    const std::string name = scalarField(entry, "name");
    if (name.empty()) return invalidArgument(std::string(listKey) + ": an entry has no name");
    const YAML::Node inner = entry[innerKey];
    const YAML::Node empty(YAML::NodeType::Map);
    Status status = parse(name, inner && inner.IsMap() ? inner : empty);
    if (!status.isOk()) return status;
  }
  return Status::ok();
}

StatusOr<Kubeconfig> parseRoot(const YAML::Node& root, const fs::path& baseDir) {
  Kubeconfig config;
  if (!root || root.IsNull()) return config;  // an empty file is an empty config, as kubectl
  if (!root.IsMap()) return invalidArgument("kubeconfig: not a mapping");
  config.currentContext = scalarField(root, "current-context");

  Status status = forEachNamed(
      root, "clusters", "cluster", [&](const std::string& name, const YAML::Node& node) {
        KubeconfigCluster cluster;
        const std::string owner = "cluster " + name;
        cluster.server = scalarField(node, "server");
        cluster.tlsServerName = scalarField(node, "tls-server-name");
        cluster.certificateAuthority =
            resolvePath(scalarField(node, "certificate-authority"), baseDir);
        auto ca = dataField(node, "certificate-authority-data", owner);
        if (!ca.isOk()) return ca.status();
        cluster.certificateAuthorityData = std::move(ca).value();
        auto insecure = boolField(node, "insecure-skip-tls-verify", owner);
        if (!insecure.isOk()) return insecure.status();
        cluster.insecureSkipTlsVerify = *insecure;
        config.clusters.emplace(name, std::move(cluster));  // first entry of a name wins
        return Status::ok();
      });
  if (!status.isOk()) return status;

  status =
      forEachNamed(root, "users", "user", [&](const std::string& name, const YAML::Node& node) {
        KubeconfigUser user;
        const std::string owner = "user " + name;
        user.token = scalarField(node, "token");
        user.tokenFile = resolvePath(scalarField(node, "tokenFile"), baseDir);
        user.clientCertificate = resolvePath(scalarField(node, "client-certificate"), baseDir);
        user.clientKey = resolvePath(scalarField(node, "client-key"), baseDir);
        auto cert = dataField(node, "client-certificate-data", owner);
        if (!cert.isOk()) return cert.status();
        user.clientCertificateData = std::move(cert).value();
        auto key = dataField(node, "client-key-data", owner);
        if (!key.isOk()) return key.status();
        user.clientKeyData = std::move(key).value();
        config.users.emplace(name, std::move(user));
        return Status::ok();
      });
  if (!status.isOk()) return status;

  status = forEachNamed(root, "contexts", "context",
                        [&](const std::string& name, const YAML::Node& node) {
                          KubeconfigContext context;
                          context.cluster = scalarField(node, "cluster");
                          context.user = scalarField(node, "user");
                          context.ns = scalarField(node, "namespace");
                          config.contexts.emplace(name, std::move(context));
                          return Status::ok();
                        });
  if (!status.isOk()) return status;
  return config;
}

StatusOr<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status(StatusCode::kUnavailable, "error reading " + path.string());
  return text.str();
}

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

StatusOr<std::string> decodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t accumulator = 0;
  int bits = 0;
  bool padding = false;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    if (padding) return invalidArgument("base64: data after padding");
    std::uint32_t value = 0;
    if (c >= 'A' && c <= 'Z') {
      value = static_cast<std::uint32_t>(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      value = static_cast<std::uint32_t>(c - 'a') + 26U;
    } else if (c >= '0' && c <= '9') {
      value = static_cast<std::uint32_t>(c - '0') + 52U;
    } else if (c == '+') {
      value = 62U;
    } else if (c == '/') {
      value = 63U;
    } else {
      return invalidArgument("base64: invalid character");
    }
    accumulator = (accumulator << 6U) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((accumulator >> static_cast<unsigned>(bits)) & 0xFFU));
    }
  }
  // 6 leftover bits means one lone character: not a whole byte, so not base64.
  if (bits >= 6) return invalidArgument("base64: truncated input");
  return out;
}

StatusOr<Kubeconfig> parseKubeconfig(std::string_view text, const fs::path& baseDir) {
  try {
    return parseRoot(YAML::Load(std::string(text)), baseDir);
  } catch (const YAML::Exception& e) {
    return invalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

Kubeconfig mergeKubeconfigs(const std::vector<Kubeconfig>& configs) {
  Kubeconfig merged;
  for (const Kubeconfig& config : configs) {
    if (merged.currentContext.empty()) merged.currentContext = config.currentContext;
    // map::insert keeps an existing key: the earlier file wins, as in kubectl.
    merged.clusters.insert(config.clusters.begin(), config.clusters.end());
    merged.users.insert(config.users.begin(), config.users.end());
    merged.contexts.insert(config.contexts.begin(), config.contexts.end());
  }
  return merged;
}

StatusOr<ClientConfig> resolveContext(const Kubeconfig& config, std::string_view context) {
  const std::string name(context.empty() ? std::string_view(config.currentContext) : context);
  if (name.empty()) return failedPrecondition("kubeconfig: no current-context");
  auto ctx = config.contexts.find(name);
  if (ctx == config.contexts.end()) return notFound("kubeconfig: no context " + name);
  auto cluster = config.clusters.find(ctx->second.cluster);
  if (cluster == config.clusters.end()) {
    return notFound("kubeconfig: context " + name + ": no cluster " + ctx->second.cluster);
  }
  if (cluster->second.server.empty()) {
    return invalidArgument("kubeconfig: cluster " + ctx->second.cluster + " has no server");
  }
  ClientConfig out;
  out.server = cluster->second.server;
  while (!out.server.empty() && out.server.back() == '/') out.server.pop_back();
  out.caPem = cluster->second.certificateAuthorityData;
  out.caFile = cluster->second.certificateAuthority;
  out.tlsServerName = cluster->second.tlsServerName;
  out.insecureSkipTlsVerify = cluster->second.insecureSkipTlsVerify;
  if (!ctx->second.user.empty()) {
    auto user = config.users.find(ctx->second.user);
    if (user == config.users.end()) {
      return notFound("kubeconfig: context " + name + ": no user " + ctx->second.user);
    }
    out.token = user->second.token;
    out.tokenFile = user->second.tokenFile;
    out.clientCertPem = user->second.clientCertificateData;
    out.clientCertFile = user->second.clientCertificate;
    out.clientKeyPem = user->second.clientKeyData;
    out.clientKeyFile = user->second.clientKey;
  }
  if (!ctx->second.ns.empty()) out.ns = ctx->second.ns;
  return out;
}

StatusOr<Kubeconfig> loadKubeconfigFiles(std::string_view pathList) {
  std::vector<Kubeconfig> configs;
  while (!pathList.empty()) {
    const std::size_t colon = pathList.find(':');
    const std::string_view item = pathList.substr(0, colon);
    pathList = colon == std::string_view::npos ? std::string_view() : pathList.substr(colon + 1);
    if (item.empty()) continue;
    const fs::path path(item);
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;  // kubectl skips missing files in the list
    auto text = readFile(path);
    if (!text.isOk()) return text.status();
    auto parsed = parseKubeconfig(*text, path.parent_path());
    if (!parsed.isOk()) {
      return Status(parsed.status().code(), path.string() + ": " + parsed.status().message());
    }
    configs.push_back(std::move(parsed).value());
  }
  if (configs.empty()) return notFound("kubeconfig: none of the listed files exists");
  return mergeKubeconfigs(configs);
}

GetEnv processEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

StatusOr<ClientConfig> inClusterConfig(const GetEnv& env, const InClusterPaths& paths) {
  const std::optional<std::string> host = env("KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return failedPrecondition(
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  }
  ClientConfig config;
  // An IPv6 service address needs brackets in a URL.
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  auto token = readFile(paths.tokenFile);
  if (!token.isOk()) return failedPrecondition("in-cluster: " + token.status().message());
  config.tokenFile = paths.tokenFile.string();
  config.caFile = paths.caFile.string();
  auto ns = readFile(paths.namespaceFile);
  if (ns.isOk() && !trimmed(*ns).empty()) config.ns = trimmed(*ns);
  return config;
}

StatusOr<ClientConfig> defaultClientConfig(const GetEnv& env, std::string_view context) {
  std::optional<std::string> list = env("KUBECONFIG");
  if (!list || list->empty()) {
    const std::optional<std::string> home = env("HOME");
    if (home && !home->empty()) {
      const fs::path path = fs::path(*home) / ".kube" / "config";
      std::error_code ec;
      if (fs::exists(path, ec)) list = path.string();
    }
  }
  if (list && !list->empty()) {
    auto config = loadKubeconfigFiles(*list);
    if (!config.isOk()) return config.status();
    return resolveContext(*config, context);
  }
  return inClusterConfig(env);
}

std::shared_ptr<TokenSource> TokenSource::fromConfig(const ClientConfig& config) {
  // A token file wins over a static token, as in client-go: it is the one that rotates.
  if (!config.tokenFile.empty()) return std::make_shared<TokenSource>(fs::path(config.tokenFile));
  return std::make_shared<TokenSource>(config.token);
}

StatusOr<std::string> TokenSource::token() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (file_.empty()) return token_;
  std::error_code timeError;
  std::error_code sizeError;
  const auto time = fs::last_write_time(file_, timeError);
  const auto size = fs::file_size(file_, sizeError);
  const bool changed =
      timeError || sizeError || !seenTime_ || *seenTime_ != time || seenSize_ != size;
  if (!changed) return token_;
  auto text = readFile(file_);
  if (!text.isOk()) {
    // Mid-rotation the file may be briefly absent; the last token is still the best bet.
    if (seenTime_) return token_;
    return Status(StatusCode::kUnauthenticated, "token file: " + text.status().message());
  }
  token_ = trimmed(std::move(text).value());
  if (!timeError && !sizeError) {
    seenTime_ = time;
    seenSize_ = size;
  }
  return token_;
}

}  // namespace kubeslurm::kube
