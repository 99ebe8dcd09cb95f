// kubeslurm-operator: informers -> reconciler (job controller + scheduling loop) under leader
// election, with Prometheus metrics and kubelet probes. docs/operator.md describes the flow.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "controllers/cluster_view.h"
#include "controllers/job_ids.h"
#include "controllers/reconciler.h"
#include "controllers/will_run.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/event_recorder.h"
#include "kubeslurm/kube/informer.h"
#include "kubeslurm/kube/kubeconfig.h"
#include "kubeslurm/kube/leader_election.h"
#include "kubeslurm/metrics/http_endpoints.h"
#include "kubeslurm/metrics/operator_metrics.h"
#include "kubeslurm/rpc/server.h"
#include "kubeslurm/slurm/names.h"

namespace {

using kubeslurm::Status;
using kubeslurm::StatusCode;
namespace kube = kubeslurm::kube;
namespace controllers = kubeslurm::controllers;
namespace metrics = kubeslurm::metrics;
namespace rpc = kubeslurm::rpc;
using namespace std::chrono_literals;

constexpr std::string_view kUsage = R"(usage: kubeslurm-operator [flags]

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
  --job-retention SECONDS        finished SlurmJobs are deleted this long after they end
                                 (86400; 0 = never)
Serving:
  --metrics-bind-address ADDR    /metrics (0.0.0.0:8080; "" or 0 = off)
  --health-probe-bind-address ADDR   /healthz, /readyz (0.0.0.0:8081; "" or 0 = off)
  --grpc-bind-address ADDR       the query API for sprio, sshare, squeue --start (0.0.0.0:9443;
                                 "" or 0 = off); TLS only, so it needs both of:
  --grpc-tls-cert FILE --grpc-tls-key FILE   the serving certificate (PEM); without them the
                                 query API stays off and the operator says so
Logging:
  --log-format text|json         (text)
  --log-level debug|info|warning|error   (info)
)";

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
  std::int64_t jobRetention = 86400;
  std::string metricsAddress = "0.0.0.0:8080";
  std::string probeAddress = "0.0.0.0:8081";
  std::string grpcAddress = "0.0.0.0:9443";
  std::string grpcCert;
  std::string grpcKey;
  std::string logFormat = "text";
  std::string logLevel = "info";
};

int usageError(const std::string& message) {
  std::cerr << "kubeslurm-operator: " << message << "\n" << kUsage;
  return 2;
}

bool parseNumber(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && out >= 0;
}

// "--flag=value" or "--flag value"; returns 0 when parsed, else the exit code.
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
    } else if (flag == "--job-retention") {
      ok = parseNumber(value, number);
      f.jobRetention = static_cast<std::int64_t>(number);
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
  return 0;
}

// One JSON object per line (ts, level, logger, msg), for log pipelines that parse structure.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since = msg.time.time_since_epoch();
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since).count();
    nlohmann::json line = {{"ts", static_cast<double>(millis) / 1000.0},
                           {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                                                 spdlog::level::to_string_view(msg.level).size())},
                           {"logger", std::string(msg.logger_name.data(), msg.logger_name.size())},
                           {"msg", std::string(msg.payload.data(), msg.payload.size())}};
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

void setUpLogging(const Flags& f) {
  auto logger = std::make_shared<spdlog::logger>("kubeslurm-operator",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (f.logFormat == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %L %v", spdlog::pattern_time_type::utc);
  }
  logger->set_level(f.logLevel == "debug"     ? spdlog::level::debug
                    : f.logLevel == "warning" ? spdlog::level::warn
                    : f.logLevel == "error"   ? spdlog::level::err
                                              : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

std::string defaultIdentity() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::random_device random;
  return std::string(host.data()) + "_" + std::to_string(random() % 1000000U);
}

std::atomic<bool> gStop{false};
extern "C" void onSignal(int /*signal*/) { gStop.store(true); }

// Wakes the scheduling loop: informer handlers call it on every change.
class Wakeup {
 public:
  void notify() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      pending_ = true;
    }
    cv_.notify_one();
  }
  // Waits until notified, stopped or `timeout`; clears the notification. A signal handler
  // cannot notify a condition variable, so the stop flag is polled every 100 ms.
  void wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!pending_ && !gStop.load() && std::chrono::steady_clock::now() < deadline) {
      cv_.wait_for(lock, 100ms);
    }
    pending_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool pending_ = false;
};

kubeslurm::core::Time unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void publish(metrics::OperatorMetrics& m, const controllers::CycleReport& report,
             double cycleSeconds) {
  m.setJobs(report.jobsByState);
  m.setPendingReasons(report.pendingByReason);
  m.setNodes(report.nodesByState);
  metrics::GpuCounts gpus;
  gpus.total = report.gpusTotal;
  gpus.allocated = report.gpusAllocated;
  gpus.foreign = report.gpusForeign;
  gpus.free = report.gpusTotal - report.gpusAllocated - report.gpusForeign;
  gpus.unavailable = report.gpusUnavailable;
  m.setGpus(gpus);
  std::map<std::string, metrics::AccountFigures> accounts;
  for (const auto& row : report.fairShare) {
    if (row.user.empty()) accounts[row.account] = {row.fairShare, row.rawUsage, row.normShares};
  }
  for (const auto& job : report.pendingJobs) {
    if (job.reason == "Priority" || job.reason == "Resources") ++accounts[job.account].waitingJobs;
  }
  m.setAccounts(accounts);
  std::map<std::string, metrics::PartitionFigures> partitions;
  for (const auto& [name, load] : report.partitions) {
    metrics::PartitionFigures& p = partitions[name];
    p.gpus.allocated = load.gpusAllocated;
    p.gpus.foreign = load.gpusForeign;
    p.gpus.free = load.gpusFree;
    p.gpus.unavailable = load.gpusUnavailable;
    p.pendingJobs = load.pendingJobs;
    p.runningJobs = load.runningJobs;
  }
  // A cycle stopped by the fence reports no partitions: keep the last figures then.
  if (!report.fenceClosed) m.setPartitions(partitions);
  for (const auto& wait : report.queueWaits) m.observeQueueWait(wait.partition, wait.seconds);
  metrics::CycleSample sample;
  sample.seconds = cycleSeconds;
  sample.planSeconds = report.planSeconds;
  sample.jobsConsidered = report.stats.jobsConsidered;
  sample.jobsStarted = report.starts;
  sample.jobsBackfilled = report.backfilled;
  sample.reservations = report.stats.reservations;
  sample.backfillDepth = report.stats.backfillDepth;
  sample.budgetExhausted = report.stats.budgetExhausted;
  m.observeCycle(sample);
  for (const auto& admission : report.admissions) {
    m.addGangAdmission(admission.bound, admission.seconds);
  }
  for (const std::string& state : report.transitions) m.addJobTransition(state);
  m.addJobIdsAssigned(report.idsAssigned);
}

// The query API's view of the scheduler: replaced whole after each cycle, so a call reads one
// consistent cycle without holding a lock while it encodes the answer.
class QueryPublisher {
 public:
  explicit QueryPublisher(const kubeslurm::core::PriorityConfig& priority) : priority_(priority) {}

  // What sbatch --test-only plans against: the cluster as the last cycle left it.
  struct Cluster {
    std::shared_ptr<const controllers::SnapshotIndex> index;
    std::vector<kubeslurm::api::Partition> partitions;
    std::vector<kubeslurm::api::Account> accounts;
  };

  // Takes the report's cluster objects (the last use of them in a cycle).
  void publish(controllers::CycleReport& report, double cycleSeconds, std::int64_t now) {
    ++cycles_;
    totalSeconds_ += cycleSeconds;
    maxSeconds_ = std::max(maxSeconds_, cycleSeconds);
    totalStarted_ += report.starts;
    totalBackfilled_ += report.backfilled;
    auto state = std::make_shared<rpc::QueryState>();
    state->planTime = now;
    state->fairTree = priority_.fairTree;
    state->weights.age = priority_.weightAge;
    state->weights.fairshare = priority_.weightFairshare;
    state->weights.jobSize = priority_.weightJobSize;
    state->weights.partition = priority_.weightPartition;
    state->weights.qos = priority_.weightQos;
    if (priority_.weightTresGpu > 0) {
      state->weights.tres = "GRES/gpu=" + std::to_string(priority_.weightTresGpu);
    }
    for (const auto& job : report.pendingJobs) {
      rpc::PendingJob& out = state->pending.emplace_back();
      out.jobId = static_cast<std::int64_t>(job.jobId);
      out.namespaceName = job.namespaceName;
      out.name = job.name;
      out.partition = job.partition;
      out.user = job.user;
      out.account = job.account;
      out.qos = job.qos;
      out.reason = job.reason;
      out.priority = {job.priority.age,       job.priority.fairshare, job.priority.jobSize,
                      job.priority.partition, job.priority.qos,       job.priority.tresGpu,
                      job.priority.nice,      job.priority.priority};
      out.estimatedStart = job.estimatedStart.value_or(0);
      out.estimatedNodes = job.estimatedNodes;
      out.arrayJobId = static_cast<std::int64_t>(job.arrayJobId.value_or(0));
      out.arrayTaskId = job.arrayTaskId ? static_cast<std::int64_t>(*job.arrayTaskId) : -1;
    }
    for (const auto& row : report.fairShare) {
      state->fairShare.push_back({row.account, row.user, row.parent, row.depth, row.rawShares,
                                  row.normShares, row.rawUsage, row.effectiveUsage, row.fairShare});
    }
    rpc::Statistics& stats = state->statistics;
    stats.serverStart = serverStart_;
    stats.cycles = cycles_;
    stats.lastCycleSeconds = cycleSeconds;
    stats.meanCycleSeconds = totalSeconds_ / static_cast<double>(cycles_);
    stats.maxCycleSeconds = maxSeconds_;
    stats.jobsConsidered = report.stats.jobsConsidered;
    stats.jobsStarted = report.starts;
    stats.jobsBackfilled = report.backfilled;
    stats.backfillDepth = report.stats.backfillDepth;
    stats.totalJobsStarted = totalStarted_;
    stats.totalJobsBackfilled = totalBackfilled_;
    stats.jobsByState = report.jobsByState;
    auto cluster =
        std::make_shared<Cluster>(Cluster{report.plannedCluster, std::move(report.partitionObjects),
                                          std::move(report.accountObjects)});
    const std::lock_guard lock(mutex_);
    state_ = std::move(state);
    if (report.plannedCluster) cluster_ = std::move(cluster);
  }

  // Leadership ended: another replica's plans are the truth now.
  void clear() {
    const std::lock_guard lock(mutex_);
    state_.reset();
    cluster_.reset();
  }

  std::shared_ptr<const Cluster> cluster() const {
    const std::lock_guard lock(mutex_);
    return cluster_;
  }

  std::shared_ptr<const rpc::QueryState> current() const {
    const std::lock_guard lock(mutex_);
    return state_;
  }

 private:
  kubeslurm::core::PriorityConfig priority_;
  std::int64_t serverStart_ = unixNow();
  std::uint64_t cycles_ = 0;
  double totalSeconds_ = 0;
  double maxSeconds_ = 0;
  std::uint64_t totalStarted_ = 0;
  std::uint64_t totalBackfilled_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<const rpc::QueryState> state_;
  std::shared_ptr<const Cluster> cluster_;
};

// The gRPC Service selects the leader's pod by this label (the chart's templates/query-api.yaml),
// because only the leader has scheduler state to answer with. Best effort: a failed patch only
// sends CLI calls to a replica that answers UNAVAILABLE until the next leadership change.
constexpr const char* kLeaderLabel = "kubeslurm.io/leader";

void labelOwnPod(kube::Writer& writer, const std::string& ns, const std::string& pod,
                 bool leader) noexcept {
  if (pod.empty()) return;  // not in a pod (POD_NAME unset): nothing to label
  try {
    nlohmann::json labels = nlohmann::json::object();
    labels[kLeaderLabel] = leader ? nlohmann::json("true") : nlohmann::json(nullptr);
    nlohmann::json patch = nlohmann::json::object();
    patch["metadata"]["labels"] = std::move(labels);
    auto patched = writer.patch(kube::resources::pods(), ns, pod, patch);
    if (!patched.isOk()) {
      spdlog::warn("cannot label pod {}/{} {}={}: {}", ns, pod, kLeaderLabel, leader,
                   patched.status().toString());
    }
  } catch (const std::exception& e) {
    spdlog::warn("cannot label pod {}/{}: {}", ns, pod, e.what());
  }
}

kubeslurm::StatusOr<std::string> readPem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return kubeslurm::notFound("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int run(const Flags& f) {
  auto config = f.kubeconfig.empty() ? kube::defaultClientConfig(kube::processEnv(), f.context)
                                     : [&]() -> kubeslurm::StatusOr<kube::ClientConfig> {
    auto loaded = kube::loadKubeconfigFiles(f.kubeconfig);
    if (!loaded.isOk()) return loaded.status();
    return kube::resolveContext(*loaded, f.context);
  }();
  if (!config.isOk()) {
    spdlog::error("no cluster: {}", config.status().toString());
    return 1;
  }
  metrics::OperatorMetrics operatorMetrics;
  kube::ClientOptions clientOptions;
  clientOptions.onFailure = [&operatorMetrics](std::string_view verb, const Status&) {
    operatorMetrics.addApiError(std::string(verb));
  };
  clientOptions.qps = f.qps;
  clientOptions.burst = f.burst;
  clientOptions.userAgent = "kubeslurm-operator/0.1";
  auto made = kube::Client::create(*config, clientOptions);
  if (!made.isOk()) {
    spdlog::error("client: {}", made.status().toString());
    return 1;
  }
  kube::Client& client = **made;
  const std::string ns =
      !f.ns.empty() ? f.ns
      : std::getenv("POD_NAMESPACE") != nullptr        // NOLINT(concurrency-mt-unsafe)
          ? std::string(std::getenv("POD_NAMESPACE"))  // NOLINT(concurrency-mt-unsafe)
          : std::string("kubeslurm-system");
  const std::string identity = f.identity.empty() ? defaultIdentity() : f.identity;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before any thread starts
  const std::string podName = std::getenv("POD_NAME") != nullptr ? std::getenv("POD_NAME") : "";
  // NOLINTNEXTLINE(concurrency-mt-unsafe): as above
  const char* podNamespaceEnv = std::getenv("POD_NAMESPACE");
  const std::string podNamespace = podNamespaceEnv != nullptr ? podNamespaceEnv : ns;
  // A restarted container keeps its pod's labels: it leads again only once it wins the Lease.
  labelOwnPod(client, podNamespace, podName, false);

  Wakeup wakeup;

  // Informers: every change wakes the loop; decisions are taken from the caches.
  kube::EventHandler wake;
  wake.onAdd = [&](const kube::ObjectPtr&) { wakeup.notify(); };
  wake.onUpdate = [&](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
    if (a != b) wakeup.notify();
  };
  wake.onDelete = [&](const kube::ObjectPtr&, bool) { wakeup.notify(); };
  const auto informer = [&](const kube::ResourceType& type, std::string watchNs) {
    kube::InformerOptions options;
    options.ns = std::move(watchNs);
    options.onError = [type](const Status& failure) {
      spdlog::warn("watch {}: {}", type.plural, failure.toString());
    };
    auto created = std::make_unique<kube::Informer>(client, client, type, options);
    (void)created->addEventHandler(wake);
    return created;
  };
  auto nodes = informer(kube::resources::nodes(), "");
  auto pods = informer(kube::resources::pods(), "");
  auto jobs = informer(kube::resources::slurmJobs(), f.watchNamespace);
  auto partitions = informer(kube::resources::partitions(), "");
  auto accounts = informer(kube::resources::accounts(), "");
  const std::vector<kube::Informer*> all = {nodes.get(), pods.get(), jobs.get(), partitions.get(),
                                            accounts.get()};
  for (kube::Informer* i : all) i->start();

  std::atomic<bool> synced{false};
  std::atomic<bool> leading{false};
  std::atomic<bool> needRecovery{false};
  std::atomic<std::int64_t> lastCycle{0};

  std::unique_ptr<kube::LeaderElector> elector;
  if (f.leaderElect) {
    kube::LeaderElectionConfig election;
    election.leaseNamespace = ns;
    election.leaseName = f.leaseName;
    election.identity = identity;
    election.callbacks.onStartedLeading = [&] {
      spdlog::info("became leader as {}", identity);
      labelOwnPod(client, podNamespace, podName, true);
      needRecovery = true;
      leading = true;
      operatorMetrics.setLeader(true);
      wakeup.notify();
    };
    election.callbacks.onStoppedLeading = [&] {
      if (gStop.load()) {
        spdlog::info("stopped leading (shutting down)");
      } else {
        spdlog::warn("leadership lost: writes stopped");
      }
      leading = false;
      operatorMetrics.setLeader(false);
      labelOwnPod(client, podNamespace, podName, false);
    };
    election.callbacks.onNewLeader = [&](const std::string& holder) {
      if (holder != identity) spdlog::info("leader is now \"{}\"", holder);
    };
    auto created = kube::LeaderElector::create(client, client, election);
    if (!created.isOk()) {
      spdlog::error("leader election: {}", created.status().toString());
      return 1;
    }
    elector = std::move(created).value();
  }
  const std::function<bool()> canWrite = [&] {
    return elector ? elector->canWrite() && leading.load() : true;
  };

  std::unique_ptr<metrics::HttpEndpoints> endpoints;
  {
    metrics::EndpointsOptions options;
    options.metricsAddress = f.metricsAddress;
    options.probeAddress = f.probeAddress;
    auto started = metrics::HttpEndpoints::start(
        options, operatorMetrics,
        [&]() -> Status {
          // Wedged: a leader whose loop has not completed a cycle for 10 intervals.
          const std::int64_t last = lastCycle.load();
          if (leading && last > 0 &&
              unixNow() - last > static_cast<std::int64_t>(f.interval * 10)) {
            return {StatusCode::kUnavailable, "no scheduling cycle since " + std::to_string(last)};
          }
          return Status::ok();
        },
        [&]() -> Status {
          if (!synced) return {StatusCode::kUnavailable, "informers not synced"};
          return Status::ok();
        });
    if (!started.isOk()) {
      spdlog::error("{}", started.status().toString());
      return 1;
    }
    endpoints = std::move(started).value();
    if (endpoints->metricsPort() != 0) {
      spdlog::info("metrics on port {}", endpoints->metricsPort());
    }
    if (endpoints->probePort() != 0) spdlog::info("probes on port {}", endpoints->probePort());
  }

  kube::EventRecorderOptions eventOptions;
  eventOptions.component = "kubeslurm-operator";
  eventOptions.host = identity;
  eventOptions.reportingController = "kubeslurm.io/operator";
  eventOptions.reportingInstance = identity;
  kube::EventRecorder events(client, eventOptions);

  controllers::JobIdOptions idOptions;
  idOptions.namespaceName = ns;
  idOptions.firstJobId = f.firstJobId;
  controllers::JobIdAllocator ids(client, client, idOptions);

  controllers::ReconcilerOptions options;
  options.budget = f.budget;
  options.backfillMaxTime = f.backfillMaxTime;
  options.admission.clusterName = f.clusterName;
  options.admission.clusterDomain = f.clusterDomain;
  options.admission.schedulerName = f.schedulerName;
  options.admission.defaultImage = f.defaultImage;
  options.admission.toolsImage = f.toolsImage;
  options.admission.killWaitSeconds = f.killWait;
  options.canWrite = canWrite;
  options.jobRetention = f.jobRetention;
  controllers::Reconciler reconciler(client, client, client, client, ids, &events, options);

  QueryPublisher queries(options.snapshot.config.priority);
  rpc::KubeAuthorizer authorizer(client);
  std::unique_ptr<rpc::QueryServer> queryServer;
  if (!f.grpcAddress.empty() && (f.grpcCert.empty() || f.grpcKey.empty())) {
    spdlog::warn(
        "query API off: it serves TLS only, and --grpc-tls-cert/--grpc-tls-key are "
        "not both given (sprio, sshare and squeue --start need it)");
  } else if (!f.grpcAddress.empty()) {
    auto cert = readPem(f.grpcCert);
    auto key = readPem(f.grpcKey);
    if (!cert.isOk() || !key.isOk()) {
      spdlog::error("query API: {}", (cert.isOk() ? key.status() : cert.status()).message());
      return 1;
    }
    auto testOnly = [&](const std::string& jobNamespace,
                        const std::string& text) -> kubeslurm::StatusOr<rpc::TestOnlyAnswer> {
      // A handler runs on a gRPC thread: nothing it throws may reach the operator.
      try {
        const auto cluster = queries.cluster();
        if (!cluster) {
          return Status(StatusCode::kUnavailable, "no scheduling cycle to plan against yet");
        }
        const nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
        auto job = kubeslurm::api::decodeSlurmJob(object);
        if (object.is_discarded() || !job.isOk()) {
          return kubeslurm::invalidArgument(object.is_discarded() ? "the SlurmJob is not JSON"
                                                                  : job.status().message());
        }
        // A will-run test uses up a job id, as slurmctld's does.
        auto id = ids.next();
        if (!id.isOk()) return id.status();
        auto planned = controllers::planTestOnly(
            *cluster->index, cluster->partitions, job->request,
            job->user.empty() ? options.snapshot.defaultUser : job->user,
            controllers::defaultAccountFor(cluster->accounts, jobNamespace),
            static_cast<kubeslurm::core::JobId>(*id), unixNow(), f.budget);
        if (!planned.isOk()) return planned.status();
        return rpc::TestOnlyAnswer{*id, planned->start, planned->processors, planned->nodes,
                                   planned->partition};
      } catch (const std::exception& e) {
        return kubeslurm::internalError(std::string("test-only: ") + e.what());
      }
    };
    auto started = rpc::startQueryServer(
        {f.grpcAddress, *cert, *key}, [&queries] { return queries.current(); }, testOnly,
        authorizer);
    if (!started.isOk()) {
      spdlog::error("query API: {}", started.status().message());
      return 1;
    }
    queryServer = std::move(started).value();
    spdlog::info("query API (gRPC, TLS) on port {}", queryServer->port());
  }

  std::thread elections;
  if (elector) {
    elections = std::thread([&] {
      const Status ended = elector->run();
      if (!ended.isOk() && !gStop.load()) {
        // Lost the lease: exit so that the Deployment restarts this replica as a candidate
        // with fresh state, as controller-runtime managers do.
        spdlog::error("leader election ended: {}", ended.toString());
        gStop = true;
        wakeup.notify();
      }
    });
  } else {
    leading = true;
    needRecovery = true;
    operatorMetrics.setLeader(true);
  }

  spdlog::info("kubeslurm-operator {} started (namespace {}, scheduler {})", identity, ns,
               f.schedulerName);
  controllers::ClusterView view;
  auto lastRun = std::chrono::steady_clock::now() - 1h;
  bool wasLeading = false;
  while (!gStop.load()) {
    wakeup.wait(std::chrono::milliseconds(static_cast<std::int64_t>(f.interval * 1000)));
    if (gStop.load()) break;
    if (!synced) {
      bool all_synced = true;
      for (kube::Informer* i : all) all_synced = all_synced && i->hasSynced();
      if (!all_synced) continue;
      synced = true;
      spdlog::info("caches synced: {} nodes, {} pods, {} jobs, {} partitions, {} accounts",
                   nodes->store().size(), pods->store().size(), jobs->store().size(),
                   partitions->store().size(), accounts->store().size());
    }
    if (!leading) {
      if (wasLeading) {
        reconciler.reset();
        queries.clear();
      }
      wasLeading = false;
      continue;
    }
    wasLeading = true;
    // Coalesce bursts of events into one cycle.
    const auto since = std::chrono::steady_clock::now() - lastRun;
    const auto minimum = std::chrono::duration<double>(f.minInterval);
    if (since < minimum) {
      std::this_thread::sleep_for(minimum - since);
    }
    lastRun = std::chrono::steady_clock::now();
    const auto began = std::chrono::steady_clock::now();
    controllers::ReconcileInput input = view.read(nodes->store(), pods->store(), jobs->store(),
                                                  partitions->store(), accounts->store());
    if (needRecovery) {
      auto removed = reconciler.recover(input.objects.jobs);
      if (!removed.isOk()) {
        spdlog::warn("recovery: {}; retrying", removed.status().toString());
        wakeup.notify();
        continue;
      }
      needRecovery = false;
      spdlog::info("recovery: {} partial gang(s) removed", *removed);
      if (*removed > 0) continue;  // let the caches see the deletes before planning
    }
    controllers::CycleReport report = reconciler.cycle(std::move(input), unixNow());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    lastCycle = unixNow();
    publish(operatorMetrics, report, seconds);
    if (!report.fenceClosed) queries.publish(report, seconds, lastCycle.load());
    for (const std::string& error : report.errors) spdlog::warn("{}", error);
    if (report.stuckGangsRemoved > 0) {
      spdlog::warn("removed {} partial gang(s) left by failed rollbacks", report.stuckGangsRemoved);
    }
    if (report.idsAssigned + report.starts + report.statusWrites + report.podsDeleted +
            report.arrayTasksCreated >
        0) {
      spdlog::info(
          "cycle {:.1f} ms (plan {:.1f} ms): {} considered, {} started ({} backfilled), "
          "{} ids, {} array tasks created, {} status writes, {} conflicts, {} pods deleted, "
          "{} admission failures",
          seconds * 1e3, report.planSeconds * 1e3, report.stats.jobsConsidered, report.starts,
          report.backfilled, report.idsAssigned, report.arrayTasksCreated, report.statusWrites,
          report.writeConflicts, report.podsDeleted, report.admissionFailures);
    } else {
      spdlog::debug("cycle {:.1f} ms: nothing to do", seconds * 1e3);
    }
    // Writes made this cycle come back through the informers and wake the loop again; a
    // time-driven change (a time limit, an estimated start) needs the periodic wake only.
  }

  spdlog::info("stopping");
  if (queryServer) queryServer->stop();
  if (elector) {
    elector->stop();
    elections.join();
  }
  events.shutDown();
  for (kube::Informer* i : all) i->stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  const int parsed = parseFlags(argc, argv, flags);
  if (parsed != 0) return parsed < 0 ? 0 : parsed;
  setUpLogging(flags);
  struct sigaction action {};
  action.sa_handler = onSignal;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  ::sigaction(SIGPIPE, &ignore, nullptr);
  return run(flags);
}
