// `sreport`: usage from the operator's accounting store (through its query API), with the live
// SlurmJobs' records in place of the same runs' (a running job's usage so far), and the Account
// objects for the association tree, printed through sreport_format.h; the job report gets the
// records themselves. The Proper Name column is the login host's GECOS name of each user, as
// sreport's getpwnam gives it.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <pwd.h>

#include "kubeslurm/accounting/usage_report.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacct_format.h"
#include "kubeslurm/cli/scheduler_access.h"
#include "kubeslurm/cli/sreport_format.h"
#include "kubeslurm/kube/resource.h"

namespace kubeslurm::cli {
namespace {

// getpwnam's GECOS up to its first comma, for the users that have an entry here.
std::map<std::string, std::string> properNames(
    const std::vector<accounting::AssociationUsage>& usage) {
  std::map<std::string, std::string> names;
  for (const accounting::AssociationUsage& u : usage) {
    if (names.contains(u.user)) continue;
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (getpwnam_r(u.user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr || found->pw_gecos == nullptr) {
      continue;
    }
    std::string gecos = found->pw_gecos;
    gecos = gecos.substr(0, gecos.find(','));
    if (!gecos.empty()) names.emplace(u.user, std::move(gecos));
  }
  return names;
}

}  // namespace

int runSreportWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                   const QueryConnector& queries) {
  std::vector<std::string> sreportArgs = args;
  auto flags = takeKubeFlags(sreportArgs, /*allowAllNamespaces=*/true);
  auto schedulerFlags = takeSchedulerFlags(sreportArgs);
  if (!flags.isOk() || !schedulerFlags.isOk()) {
    io.err << "sreport: error: "
           << (!flags.isOk() ? flags.status() : schedulerFlags.status()).message() << "\n";
    return 1;
  }
  SreportContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  if (io.getenv) context.envTres = io.getenv("SREPORT_TRES");
  const SreportParse parse = parseSreportArgs(sreportArgs, context);
  if (parse.exit) return emit(*parse.exit, io);

  auto session = connect(*flags, io);
  if (!session.isOk()) {
    io.err << "sreport: error: " << session.status().message() << "\n";
    return 1;
  }
  const accounting::ReportWindow window = reportWindow(*parse.request, context);

  // Every run that overlaps the window: the store's, then the live jobs' in place of theirs.
  std::map<std::pair<std::int64_t, std::int64_t>, accounting::JobRecord> byRun;
  if (!queries) {
    io.err << "sreport: error: no query API to read the job records from\n";
    return 1;
  }
  auto client = queries(*session, *schedulerFlags, io);
  if (!client.isOk()) {
    io.err << "sreport: error: " << describeQueryFailure(client.status()) << "\n";
    return 1;
  }
  rpc::JobRecordQuery query;
  query.namespaceName = session->namespaceName;
  query.from = window.start;
  auto stored = (*client)->listJobRecords(query);
  if (!stored.isOk() && stored.status().code() != StatusCode::kFailedPrecondition) {
    io.err << "sreport: error: " << describeQueryFailure(stored.status()) << "\n";
    return 1;
  }
  if (!stored.isOk()) {
    // No store: the live SlurmJobs are all there is, and the report must not pass for complete.
    io.err << "sreport: warning: the operator keeps no job records (--accounting-db or "
              "--accounting-postgres-dsn-file): only jobs whose SlurmJobs still exist are "
              "counted\n";
  }
  if (stored.isOk()) {
    for (accounting::JobRecord& r : *stored) byRun[{r.jobId, r.attempt}] = std::move(r);
  }
  auto jobs = kube::listAll(*session->reader, kube::resources::slurmJobs(), session->namespaceName,
                            kube::ListOptions{});
  if (!jobs.isOk()) {
    io.err << "sreport: error: " << jobs.status().message() << "\n";
    return 1;
  }
  SacctContext recordContext;
  recordContext.now = context.now;
  recordContext.clusterName = context.clusterName;
  for (accounting::JobRecord& r : liveJobRecords(decodeJobList(*jobs), recordContext)) {
    byRun[{r.jobId, r.attempt}] = std::move(r);
  }
  std::vector<accounting::JobRecord> records;
  records.reserve(byRun.size());
  for (auto& [run, record] : byRun) records.push_back(std::move(record));

  SreportData data;
  const SreportReport report = parse.request->report;
  if (report == SreportReport::kJobSizesByAccount) {
    data.records = std::move(records);
  } else {
    data.usage = accounting::associationUsage(records, window, context.now);
    data.properNames = properNames(data.usage);
  }
  if (report == SreportReport::kAccountUtilizationByUser ||
      (report == SreportReport::kJobSizesByAccount && !parse.request->flatView)) {
    // The association tree: the Account objects (cluster-scoped), each under its parent.
    auto accounts =
        kube::listAll(*session->reader, kube::resources::accounts(), "", kube::ListOptions{});
    if (!accounts.isOk()) {
      io.err << "sreport: error: " << accounts.status().message() << "\n";
      return 1;
    }
    // One that does not decode: the operator reports it; the tree goes on without it.
    for (const api::Account& account : decodeAccountList(*accounts).accounts) {
      data.accounts.push_back({account.metadata.name, account.spec.parent});
    }
  }
  return emit(formatSreport(data, parse, context), io);
}

int runSreport(const std::vector<std::string>& args, CliIo& io) {
  return runSreportWith(args, io, kubeConnector(), grpcQueryConnector());
}

}  // namespace kubeslurm::cli
