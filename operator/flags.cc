#include "operator/flags.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace kubeslurm::op {

const std::string_view kUsage = R"(usage: kubeslurm-operator [flags]

Cluster:
  --kubeconfig FILE              default: $KUBECONFIG, ~/.kube/config, else in-cluster
  --context NAME                 kubeconfig context (default: current)
  --namespace NS                 the operator's own namespace: its Lease and job-id ConfigMap
                                 (default: $POD_NAMESPACE, else kubeslurm-system)
  --watch-namespace NS           SlurmJobs of this namespace only (default: all)
  --kube-api-qps N --kube-api-burst N   client-side rate limit (200, 400)
Leader election:
  --leader-elect=true|false      (true) one writer among replicas (a coordination/v1 Lease)
  --leader-election-id NAME      the Lease's name (kubeslurm-operator)
  --identity ID                  this replica's identity (default: hostname_random)
Scheduling:
  --scheduler-name NAME          schedulerName of rank pods (kubeslurm)
  --scheduling-interval SECONDS  a cycle at least this often (10); events wake it sooner
  --min-cycle-interval SECONDS   at most one cycle per this (0.2)
  --bf-max-job-test N --bf-window SECONDS --bf-resolution SECONDS   backfill budget
  --bf-max-time SECONDS          wall time backfill may take per cycle (30; 0: no cap)
  --default-image IMAGE          image of script jobs that name none (busybox:1.36)
  --tools-image IMAGE            in-pod tools (srun, scontrol, step agents) copied into script
                                 jobs' rank pods; "" (the default) runs scripts without them
  --cluster-name NAME            SLURM_CLUSTER_NAME (kubeslurm)
  --cluster-domain DOMAIN        (cluster.local)
  --kill-wait SECONDS            SIGTERM to SIGKILL when the operator stops a gang (30)
  --first-job-id N               the first job id ever handed out (1)
  --max-array-size N             slurm.conf's MaxArraySize: array task ids are below it (1001;
                                 at most 4000001; 0 refuses every array)
  --job-retention SECONDS        finished SlurmJobs are deleted this long after they end
                                 (86400; 0 = never), and not before their accounting
                                 records are written
  --accounting-db FILE           job records in SQLite at FILE, written off the scheduling loop
                                 (docs/accounting.md); "" (the default): none
  --accounting-postgres-dsn-file FILE
                                 job records in PostgreSQL instead, reached with the libpq
                                 connection string FILE holds (a mounted Secret); not with
                                 --accounting-db
  --gang-start-timeout SECONDS   a gang bound this long but not all running is rolled back and
                                 retried after a backoff (600; 0 = never)
  --gang-start-retries N         start timeouts before the job fails (JobLaunchFailure) (3)
  --gang-write-parallelism N     pod creates and binds in flight for one gang (16)
  --admission-parallelism N      gangs admitted at once (32)
  --admissions background|in-cycle   admissions run while later cycles plan, their gangs
                                 assumed meanwhile (background), or each cycle waits for its own
  --gang-placement create|binding   rank pods created on their nodes (create, one write per
                                 rank) or created unbound, then bound (binding)
Serving:
  --metrics-bind-address ADDR    /metrics (0.0.0.0:8080; "" or 0 = off)
  --health-probe-bind-address ADDR   /healthz, /readyz (0.0.0.0:8081; "" or 0 = off)
  --grpc-bind-address ADDR       the query API for sprio, sshare, squeue --start (0.0.0.0:9443;
                                 "" or 0 = off); TLS only, so it needs both of:
  --grpc-tls-cert FILE --grpc-tls-key FILE   the serving certificate (PEM); without them the
                                 query API stays off and the operator says so. With the
                                 in-pod runtime it also serves the step proxy (srun, salloc)
  --step-token-key-file FILE     the key jobs' step tokens derive from (32 bytes or more), the
                                 same for every replica; "" (the default): random per process
  --webhook-bind-address ADDR    the admission webhook for SlurmJobs, Partitions and Accounts
                                 (0.0.0.0:9444; "" or 0 = off); TLS only, so it needs both of:
  --webhook-tls-cert FILE --webhook-tls-key FILE   its serving certificate (PEM)
  --operator-username NAME       the operator's own user name, whose writes (array tasks) pass
                                 the webhook as written (default:
                                 system:serviceaccount:$POD_NAMESPACE:$SERVICE_ACCOUNT_NAME)
Logging:
  --log-format text|json         (text)
  --log-level debug|info|warning|error   (info)
Fault injection (tests only):
  --crash-at STEP:N              SIGKILL itself when admission step STEP completes for the Nth
                                 time: objects-ready, pod-created, pod-bound or gang-bound
)";

namespace {

int usageError(const std::string& message) {
  std::cerr << "kubeslurm-operator: " << message << "\n" << kUsage;
  return 2;
}

bool parseNumber(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && out >= 0;
}

}  // namespace

int parseFlags(int argc, char** argv, Flags& f) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool hasValue = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
      hasValue = true;
    }
    if (flag == "-h" || flag == "--help") {
      std::cout << kUsage;
      return -1;
    }
    if (flag == "--leader-elect" && !hasValue) {
      f.leaderElect = true;
      continue;
    }
    if (!hasValue) {
      if (i + 1 >= args.size()) return usageError(flag + " needs a value");
      value = args[++i];
    }
    double number = 0;
    const auto needNumber = [&](double& out) {
      if (!parseNumber(value, number)) return false;
      out = number;
      return true;
    };
    bool ok = true;
    if (flag == "--kubeconfig") {
      f.kubeconfig = value;
    } else if (flag == "--context") {
      f.context = value;
    } else if (flag == "--namespace") {
      f.ns = value;
    } else if (flag == "--watch-namespace") {
      f.watchNamespace = value;
    } else if (flag == "--kube-api-qps") {
      ok = needNumber(f.qps);
    } else if (flag == "--kube-api-burst") {
      ok = parseNumber(value, number) && number >= 1;
      f.burst = static_cast<int>(number);
    } else if (flag == "--leader-elect") {
      ok = value == "true" || value == "false";
      f.leaderElect = value == "true";
    } else if (flag == "--leader-election-id") {
      f.leaseName = value;
    } else if (flag == "--identity") {
      f.identity = value;
    } else if (flag == "--scheduler-name") {
      f.schedulerName = value;
    } else if (flag == "--scheduling-interval") {
      ok = needNumber(f.interval) && f.interval > 0;
    } else if (flag == "--min-cycle-interval") {
      ok = needNumber(f.minInterval);
    } else if (flag == "--bf-max-job-test") {
      ok = parseNumber(value, number) && number >= 1;
      f.budget.maxJobsTested = static_cast<std::uint32_t>(number);
    } else if (flag == "--bf-window") {
      ok = parseNumber(value, number) && number >= 1;
      f.budget.window = static_cast<kubeslurm::core::Duration>(number);
    } else if (flag == "--bf-max-time") {
      ok = parseNumber(value, number) && number >= 0;
      f.backfillMaxTime = std::chrono::milliseconds(static_cast<std::int64_t>(number * 1000));
    } else if (flag == "--bf-resolution") {
      ok = parseNumber(value, number) && number >= 1;
      f.budget.resolution = static_cast<kubeslurm::core::Duration>(number);
    } else if (flag == "--default-image") {
      f.defaultImage = value;
    } else if (flag == "--tools-image") {
      f.toolsImage = value;
    } else if (flag == "--cluster-name") {
      f.clusterName = value;
    } else if (flag == "--cluster-domain") {
      f.clusterDomain = value;
    } else if (flag == "--kill-wait") {
      ok = parseNumber(value, number);
      f.killWait = static_cast<std::int64_t>(number);
    } else if (flag == "--first-job-id") {
      ok = parseNumber(value, number) && number >= 1;
      f.firstJobId = static_cast<std::int64_t>(number);
    } else if (flag == "--max-array-size") {
      ok = parseNumber(value, number) && number == std::floor(number) &&
           number <= kubeslurm::slurm::kMaxMaxArraySize;
      f.maxArraySize = static_cast<std::uint32_t>(number);
    } else if (flag == "--job-retention") {
      ok = parseNumber(value, number);
      f.jobRetention = static_cast<std::int64_t>(number);
    } else if (flag == "--accounting-db") {
      f.accountingDb = value;
    } else if (flag == "--accounting-postgres-dsn-file") {
      f.accountingPostgresDsnFile = value;
    } else if (flag == "--gang-start-timeout") {
      ok = parseNumber(value, number) && number <= 31536000;  // a year
      f.gangStartTimeout = static_cast<std::int64_t>(number);
    } else if (flag == "--gang-start-retries") {
      ok = parseNumber(value, number) && number <= 100;
      f.gangStartRetries = static_cast<std::int64_t>(number);
    } else if (flag == "--gang-write-parallelism") {
      ok = parseNumber(value, number) && number >= 1 && number <= 256 &&
           number == static_cast<double>(static_cast<std::size_t>(number));
      f.gangWriteParallelism = static_cast<std::size_t>(number);
    } else if (flag == "--admission-parallelism") {
      ok = parseNumber(value, number) && number >= 1 && number <= 256 &&
           number == static_cast<double>(static_cast<std::size_t>(number));
      f.admissionParallelism = static_cast<std::size_t>(number);
    } else if (flag == "--admissions") {
      ok = value == "background" || value == "in-cycle";
      f.admitInBackground = value == "background";
    } else if (flag == "--gang-placement") {
      ok = value == "create" || value == "binding";
      f.gangPlacement = value == "binding" ? controllers::GangPlacement::kBinding
                                           : controllers::GangPlacement::kCreateBound;
    } else if (flag == "--crash-at") {
      const std::size_t colon = value.find(':');
      f.crashAtStep = controllers::parseAdmissionStep(value.substr(0, colon));
      ok = f.crashAtStep.has_value() && colon != std::string::npos &&
           parseNumber(value.substr(colon + 1), number) && number >= 1 && number <= 1e9 &&
           number == static_cast<double>(static_cast<std::uint64_t>(number));
      f.crashAtCount = static_cast<std::uint64_t>(number);
    } else if (flag == "--metrics-bind-address") {
      f.metricsAddress = value == "0" ? "" : value;
    } else if (flag == "--health-probe-bind-address") {
      f.probeAddress = value == "0" ? "" : value;
    } else if (flag == "--grpc-bind-address") {
      f.grpcAddress = value == "0" ? "" : value;
    } else if (flag == "--grpc-tls-cert") {
      f.grpcCert = value;
    } else if (flag == "--grpc-tls-key") {
      f.grpcKey = value;
    } else if (flag == "--step-token-key-file") {
      f.stepTokenKeyFile = value;
    } else if (flag == "--webhook-bind-address") {
      f.webhookAddress = value == "0" ? "" : value;
    } else if (flag == "--webhook-tls-cert") {
      f.webhookCert = value;
    } else if (flag == "--webhook-tls-key") {
      f.webhookKey = value;
    } else if (flag == "--operator-username") {
      f.operatorUsername = value;
    } else if (flag == "--log-format") {
      ok = value == "text" || value == "json";
      f.logFormat = value;
    } else if (flag == "--log-level") {
      ok = value == "debug" || value == "info" || value == "warning" || value == "error";
      f.logLevel = value;
    } else {
      return usageError("unknown flag " + flag);
    }
    // NOLINTNEXTLINE(performance-inefficient-string-concatenation): once, before exiting
    if (!ok) return usageError("invalid value \"" + value + "\" for " + flag);
  }
  if (!f.accountingDb.empty() && !f.accountingPostgresDsnFile.empty()) {
    return usageError("--accounting-db and --accounting-postgres-dsn-file: one store, not two");
  }
  return 0;
}

}  // namespace kubeslurm::op
