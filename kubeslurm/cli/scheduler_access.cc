#include "kubeslurm/cli/scheduler_access.h"

#include <ostream>

#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {
namespace {

constexpr std::string_view kConfigMapName = "kubeslurm-scheduler";
constexpr std::string_view kDefaultOperatorNamespace = "kubeslurm-system";

std::string envOr(const CliIo& io, const char* name) {
  if (!io.getenv) return {};
  return io.getenv(name).value_or("");
}

}  // namespace

StatusOr<SchedulerFlags> takeSchedulerFlags(std::vector<std::string>& args) {
  SchedulerFlags flags;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    bool taken = false;
    for (auto [name, target] :
         {std::pair<std::string_view, std::string*>{"--scheduler", &flags.address},
          {"--scheduler-ca", &flags.caFile},
          {"--scheduler-server-name", &flags.serverName}}) {
      if (word == name) {
        if (i + 1 >= args.size()) {
          return invalidArgument("flag needs an argument: " + std::string(name));
        }
        *target = args[++i];
        taken = true;
        break;
      }
      if (word.size() > name.size() && word.starts_with(name) && word[name.size()] == '=') {
        *target = word.substr(name.size() + 1);
        taken = true;
        break;
      }
    }
    if (!taken) rest.push_back(word);
  }
  args = std::move(rest);
  return flags;
}

StatusOr<rpc::ClientOptions> schedulerEndpoint(const ClusterSession& session,
                                               const SchedulerFlags& flags, const CliIo& io) {
  rpc::ClientOptions options;
  options.address = !flags.address.empty() ? flags.address : envOr(io, "KUBESLURM_SCHEDULER");
  options.serverNameOverride =
      !flags.serverName.empty() ? flags.serverName : envOr(io, "KUBESLURM_SCHEDULER_SERVER_NAME");
  std::string caFile = !flags.caFile.empty() ? flags.caFile : envOr(io, "KUBESLURM_SCHEDULER_CA");
  if (!caFile.empty()) {
    auto pem = io.readFile(caFile);
    if (!pem.isOk()) return pem.status();
    options.caPem = *pem;
  }
  if (options.address.empty() || options.caPem.empty() || options.serverNameOverride.empty()) {
    std::string ns = envOr(io, "KUBESLURM_OPERATOR_NAMESPACE");
    if (ns.empty()) ns = kDefaultOperatorNamespace;
    auto configMap = session.reader->get(kube::resources::configMaps(), ns, kConfigMapName);
    if (!configMap.isOk() && (options.address.empty() || options.caPem.empty())) {
      return Status(configMap.status().code(),
                    "cannot find the scheduler's query API: no --scheduler/--scheduler-ca "
                    "and no ConfigMap " +
                        ns + "/" + std::string(kConfigMapName) + " (" +
                        configMap.status().message() + ")");
    }
    if (configMap.isOk()) {
      const kube::Json data = configMap->value("data", kube::Json::object());
      if (options.address.empty()) options.address = data.value("address", "");
      if (options.caPem.empty()) options.caPem = data.value("ca.crt", "");
      if (options.serverNameOverride.empty()) {
        options.serverNameOverride = data.value("serverName", "");
      }
    }
  }
  if (options.address.empty()) {
    return failedPrecondition("the scheduler's address is unknown (--scheduler HOST:PORT)");
  }
  if (options.caPem.empty()) {
    return failedPrecondition(
        "no CA to check the scheduler's certificate with (--scheduler-ca FILE)");
  }
  if (session.bearerToken.empty()) {
    return Status(StatusCode::kUnauthenticated,
                  "the scheduler's query API authenticates callers by a Kubernetes bearer "
                  "token, and the kubeconfig credentials in use have none");
  }
  options.bearerToken = session.bearerToken;
  return options;
}

QueryConnector grpcQueryConnector() {
  return [](const ClusterSession& session, const SchedulerFlags& flags,
            const CliIo& io) -> StatusOr<std::unique_ptr<rpc::QueryClient>> {
    auto options = schedulerEndpoint(session, flags, io);
    if (!options.isOk()) return options.status();
    return rpc::connectQueryClient(*options);
  };
}

std::string describeQueryFailure(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnauthenticated:
      return "Access/permission denied: " + status.message();
    case StatusCode::kPermissionDenied:
      return "Access/permission denied: " + status.message();
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return "Unable to contact slurm controller (connect failure): " + status.message();
    default:
      return status.message();
  }
}

}  // namespace kubeslurm::cli
