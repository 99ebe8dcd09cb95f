#include "kubeslurm/cli/kube_access.h"

#include <filesystem>

#include "kubeslurm/kube/kubeconfig.h"

namespace kubeslurm::cli {

StatusOr<KubeFlags> takeKubeFlags(std::vector<std::string>& args, bool allowAllNamespaces) {
  KubeFlags flags;
  std::vector<std::string> rest;
  const auto valueFlag = [](std::string_view word,
                            std::string_view name) -> std::optional<std::string> {
    if (word.starts_with(name) && word.size() > name.size() && word[name.size()] == '=') {
      return std::string(word.substr(name.size() + 1));
    }
    return std::nullopt;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (allowAllNamespaces && word == "--all-namespaces") {
      flags.allNamespaces = true;
      continue;
    }
    bool taken = false;
    for (auto [name, target] :
         {std::pair<std::string_view, std::string*>{"--kubeconfig", &flags.kubeconfig},
          {"--context", &flags.context},
          {"--namespace", &flags.namespaceName}}) {
      if (word == name) {
        if (i + 1 >= args.size()) {
          return invalidArgument("flag needs an argument: " + std::string(name));
        }
        *target = args[++i];
        taken = true;
        break;
      }
      if (auto value = valueFlag(word, name)) {
        *target = *value;
        taken = true;
        break;
      }
    }
    if (!taken) rest.push_back(word);
  }
  args = std::move(rest);
  return flags;
}

namespace {

struct ResolvedConfig {
  kube::ClientConfig config;
  std::string user;
};

StatusOr<ResolvedConfig> resolve(const KubeFlags& flags, const CliIo& io) {
  const kube::GetEnv env = [&io](const char* name) -> std::optional<std::string> {
    return io.getenv ? io.getenv(name) : std::nullopt;
  };
  std::string paths = flags.kubeconfig;
  if (!paths.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(paths, ec)) {
      return notFound("stat " + paths + ": no such file or directory");
    }
  } else {
    paths = env("KUBECONFIG").value_or("");
    if (paths.empty()) {
      const std::string home = env("HOME").value_or("");
      std::error_code ec;
      const std::filesystem::path file = std::filesystem::path(home) / ".kube" / "config";
      if (!home.empty() && std::filesystem::exists(file, ec)) paths = file.string();
    }
  }
  ResolvedConfig out;
  if (paths.empty()) {
    auto config = kube::inClusterConfig(env);
    if (!config.isOk()) {
      return Status(config.status().code(),
                    "no kubeconfig ($KUBECONFIG, ~/.kube/config or --kubeconfig) and not in a "
                    "pod: " +
                        config.status().message());
    }
    out.config = std::move(config).value();
  } else {
    auto kubeconfig = kube::loadKubeconfigFiles(paths);
    if (!kubeconfig.isOk()) return kubeconfig.status();
    // $KUBESLURM_CONTEXT: for the commands that take no flags of ours (srun).
    const std::string context =
        !flags.context.empty() ? flags.context : env("KUBESLURM_CONTEXT").value_or("");
    auto config = kube::resolveContext(*kubeconfig, context);
    if (!config.isOk()) return config.status();
    out.config = std::move(config).value();
    const std::string& name = context.empty() ? kubeconfig->currentContext : context;
    if (auto it = kubeconfig->contexts.find(name); it != kubeconfig->contexts.end()) {
      out.user = it->second.user;
    }
  }
  if (!flags.namespaceName.empty()) {
    out.config.ns = flags.namespaceName;
  } else if (auto ns = env("KUBESLURM_NAMESPACE"); ns && !ns->empty()) {
    out.config.ns = *ns;
  }
  if (out.config.ns.empty()) out.config.ns = "default";
  return out;
}

}  // namespace

std::string kubeconfigUser(const KubeFlags& flags, const CliIo& io) {
  auto resolved = resolve(flags, io);
  return resolved.isOk() ? resolved->user : std::string();
}

Connector kubeConnector() {
  return [](const KubeFlags& flags, const CliIo& io) -> StatusOr<ClusterSession> {
    auto resolved = resolve(flags, io);
    if (!resolved.isOk()) return resolved.status();
    kube::ClientOptions options;
    // A person is waiting: fail in seconds rather than retrying for long.
    options.maxRetries = 2;
    options.requestTimeout = std::chrono::milliseconds(20000);
    options.userAgent = "kubeslurm-cli/0.1";
    auto client = kube::Client::create(resolved->config, options);
    if (!client.isOk()) return client.status();
    std::shared_ptr<kube::Client> owner = std::move(client).value();
    ClusterSession session;
    session.reader = owner.get();
    session.writer = owner.get();
    session.watcher = owner.get();
    session.namespaceName = flags.allNamespaces ? std::string() : resolved->config.ns;
    session.user = resolved->user;
    session.bearerToken = resolved->config.token;
    if (session.bearerToken.empty() && !resolved->config.tokenFile.empty() && io.readFile) {
      auto token = io.readFile(resolved->config.tokenFile);
      if (token.isOk()) {
        session.bearerToken = *token;
        while (!session.bearerToken.empty() &&
               (session.bearerToken.back() == '\n' || session.bearerToken.back() == '\r')) {
          session.bearerToken.pop_back();
        }
      }
    }
    session.owner = owner;
    return session;
  };
}

}  // namespace kubeslurm::cli
