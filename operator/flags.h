// kubeslurm-operator's command line: every flag, its default, and the usage text.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "controllers/gang_binder.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/slurm/array_spec.h"

namespace kubeslurm::op {

extern const std::string_view kUsage;

struct Flags {
  std::string kubeconfig;
  std::string context;
  std::string ns;
  std::string watchNamespace;
  double qps = 200;
  int burst = 400;
  bool leaderElect = true;
  std::string leaseName = "kubeslurm-operator";
  std::string identity;
  std::string schedulerName = "kubeslurm";
  double interval = 10;
  double minInterval = 0.2;
  kubeslurm::core::Budget budget;
  std::chrono::milliseconds backfillMaxTime{30000};
  std::string defaultImage = "busybox:1.36";
  std::string toolsImage;
  std::string clusterName = "kubeslurm";
  std::string clusterDomain = "cluster.local";
  std::int64_t killWait = 30;
  std::int64_t firstJobId = 1;
  std::uint32_t maxArraySize = kubeslurm::slurm::kDefaultMaxArraySize;
  std::int64_t jobRetention = 86400;
  std::string accountingDb;  // --accounting-db: SQLite file of job records; "" none
  // --accounting-postgres-dsn-file: a file holding a libpq connection string; job records in
  // PostgreSQL instead (an HA install's). A file, so the password never shows in `ps`.
  std::string accountingPostgresDsnFile;
  std::int64_t gangStartTimeout = 600;
  std::int64_t gangStartRetries = 3;
  std::size_t gangWriteParallelism = 16;
  std::size_t admissionParallelism = 32;
  bool admitInBackground = true;  // --admissions background|in-cycle
  controllers::GangPlacement gangPlacement = controllers::GangPlacement::kCreateBound;
  // --crash-at STEP:N: SIGKILL at the Nth completion of that admission step (tests only).
  std::optional<controllers::AdmissionStep> crashAtStep;
  std::uint64_t crashAtCount = 0;
  std::string metricsAddress = "0.0.0.0:8080";
  std::string probeAddress = "0.0.0.0:8081";
  std::string grpcAddress = "0.0.0.0:9443";
  std::string grpcCert;
  std::string grpcKey;
  std::string stepTokenKeyFile;  // --step-token-key-file: "" means a random key per process
  std::string webhookAddress = "0.0.0.0:9444";
  std::string webhookCert;
  std::string webhookKey;
  // Who the operator is to the API server: its own writes (array tasks) pass the webhook as
  // written. Default: system:serviceaccount:$POD_NAMESPACE:$SERVICE_ACCOUNT_NAME.
  std::string operatorUsername;
  std::string logFormat = "text";
  std::string logLevel = "info";
};

// "--flag=value" or "--flag value". Returns 0 when parsed, -1 after --help (printed), else the
// exit code of a usage error (printed with the usage).
int parseFlags(int argc, char** argv, Flags& flags);

}  // namespace kubeslurm::op
