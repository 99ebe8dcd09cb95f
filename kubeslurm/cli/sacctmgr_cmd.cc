// `sacctmgr show account|association`: the cluster's Account objects (cluster-scoped), printed
// through sacctmgr_format.h. Reading them needs only `list` on accounts.kubeslurm.io.
// `add`, `modify` and `delete` are planned by sacctmgr_change.h, confirmed as sacctmgr's
// commit_check asks (unless -i), and written with the caller's credentials.
#include <string>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacctmgr_change.h"
#include "kubeslurm/cli/sacctmgr_format.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {
namespace {

// commit_check: the question, then one answer character per try ("Y or N please" between tries);
// y commits; n, a bare newline or the end of the input does not.
bool confirmed(CliIo& io) {
  io.out << kCommitQuestion << std::flush;
  for (int tries = 0;; ++tries) {
    if (tries > 0) io.out << "Y or N please\n(N/y): " << std::flush;
    const int c = io.in.get();
    io.out << "\n";
    if (c == std::char_traits<char>::eof()) return false;
    if (c == 'y' || c == 'Y' || c == 'n' || c == 'N' || c == '\n') {
      return commitAnswer(static_cast<char>(c));
    }
    if (tries >= 100) return false;  // a stream of anything else is not a yes
  }
}

// Applies the plan's writes in order until one fails.
Status apply(const SacctmgrPlan& plan, kube::Writer& writer, std::string& failedName) {
  for (const AccountWrite& write : plan.writes) {
    Status status;
    switch (write.kind) {
      case AccountWrite::Kind::kCreate:
        status = writer.create(kube::resources::accounts(), "", write.body).status();
        break;
      case AccountWrite::Kind::kPatch:
        status = writer.patch(kube::resources::accounts(), "", write.name, write.body).status();
        break;
      case AccountWrite::Kind::kDelete:
        status = writer.remove(kube::resources::accounts(), "", write.name, kube::DeleteOptions{});
        break;
    }
    if (!status.isOk()) {
      failedName = write.name;
      return status;
    }
  }
  return Status::ok();
}

// The Account objects; one that does not decode is left out, and said so when `warn`, rather
// than shown half (the operator reports it on the object).
StatusOr<std::vector<api::Account>> listAccounts(kube::Reader& reader, CliIo& io, bool warn) {
  auto listed = kube::listAll(reader, kube::resources::accounts(), "", kube::ListOptions{});
  if (!listed.isOk()) return listed.status();
  AccountList decoded = decodeAccountList(*listed);
  if (warn) {
    for (const AccountList::LeftOut& left : decoded.leftOut) {
      io.err << "sacctmgr: warning: Account " << left.name << " is left out: " << left.reason
             << "\n";
    }
  }
  return std::move(decoded.accounts);
}

}  // namespace

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
  auto accounts = listAccounts(*session->reader, io, true);
  if (!accounts.isOk()) {
    io.err << "sacctmgr: error: " << accounts.status().message() << "\n";
    return 1;
  }
  if (parse.change) {
    SacctmgrPlan plan = planSacctmgrChange(*parse.change, *accounts, SacctmgrContext{});
    io.out << plan.out;
    io.err << plan.err;
    if (plan.writes.empty()) return plan.exitCode;
    if (!parse.options.immediate && !confirmed(io)) {
      io.out << " Changes Discarded\n";
      return 0;
    }
    // A list patch that met a newer object (409: the operator's status write, another admin)
    // is planned again from a fresh read; what was already written is then nothing new.
    for (int attempt = 1;; ++attempt) {
      std::string failedName;
      const Status status = apply(plan, *session->writer, failedName);
      if (status.isOk()) return 0;
      if (status.code() != StatusCode::kAborted || attempt == 5) {
        io.err << plan.failure << failedName << ": " << status.message() << "\n";
        return 1;
      }
      accounts = listAccounts(*session->reader, io, false);
      if (!accounts.isOk()) {
        io.err << "sacctmgr: error: " << accounts.status().message() << "\n";
        return 1;
      }
      plan = planSacctmgrChange(*parse.change, *accounts, SacctmgrContext{});
      if (plan.writes.empty()) {
        // All of it is there now (written before the conflict, or by someone else), or the
        // change no longer applies (an account gone), which is said.
        io.err << plan.err;
        return plan.err.empty() ? 0 : 1;
      }
    }
  }
  return emit(formatSacctmgr(*accounts, parse, SacctmgrContext{}), io);
}

int runSacctmgr(const std::vector<std::string>& args, CliIo& io) {
  return runSacctmgrWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::cli
