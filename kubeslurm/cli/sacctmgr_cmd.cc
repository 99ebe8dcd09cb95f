// `sacctmgr show account|association`: the cluster's Account objects (cluster-scoped), printed
// through sacctmgr_format.h. Reading them needs only `list` on accounts.kubeslurm.io.
#include <string>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacctmgr_format.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {

int runSacctmgrWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect) {
  std::vector<std::string> sacctmgrArgs = args;
  auto flags = takeKubeFlags(sacctmgrArgs, /*allowAllNamespaces=*/true);
  if (!flags.isOk()) {
    io.err << "sacctmgr: error: " << flags.status().message() << "\n";
    return 1;
  }
  const SacctmgrParse parse = parseSacctmgrArgs(sacctmgrArgs);
  if (parse.exit) return emit(*parse.exit, io);

  auto session = connect(*flags, io);
  if (!session.isOk()) {
    io.err << "sacctmgr: error: " << session.status().message() << "\n";
    return 1;
  }
  auto listed =
      kube::listAll(*session->reader, kube::resources::accounts(), "", kube::ListOptions{});
  if (!listed.isOk()) {
    io.err << "sacctmgr: error: " << listed.status().message() << "\n";
    return 1;
  }
  std::vector<api::Account> accounts;
  for (const kube::Json& item : listed->value("items", kube::Json::array())) {
    auto account = api::decodeAccount(item);
    if (!account.isOk()) {
      // The operator reports an Account it cannot read on the object; here it is left out, and
      // said so, rather than shown half.
      io.err << "sacctmgr: warning: Account "
             << item.value("metadata", kube::Json::object()).value("name", std::string("?"))
             << " is left out: " << account.status().message() << "\n";
      continue;
    }
    accounts.push_back(std::move(account).value());
  }
  return emit(formatSacctmgr(accounts, parse, SacctmgrContext{}), io);
}

int runSacctmgr(const std::vector<std::string>& args, CliIo& io) {
  return runSacctmgrWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::cli
