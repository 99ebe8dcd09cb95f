// kubeslurm-operator: informers -> controllers (the job controller and the scheduling loop)
// under leader election, with Prometheus metrics, kubelet probes and the query API.
//
// run() is the list of setup steps, in the order they depend on each other; each step builds one
// part of the Operator below and logs why when it cannot. docs/operator.md describes the flow.
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "controllers/accounting_writer.h"
#include "controllers/cluster_view.h"
#include "controllers/job_ids.h"
#include "controllers/reconciler.h"
#include "controllers/step_tokens.h"
#include "controllers/will_run.h"
#include "kubeslurm/access/access_review.h"
#include "kubeslurm/accounting/postgres_store.h"
#include "kubeslurm/accounting/sqlite_store.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/event_recorder.h"
#include "kubeslurm/kube/informer.h"
#include "kubeslurm/kube/kubeconfig.h"
#include "kubeslurm/kube/leader_election.h"
#include "kubeslurm/metrics/http_endpoints.h"
#include "kubeslurm/metrics/operator_metrics.h"
#include "kubeslurm/rpc/server.h"
#include "kubeslurm/webhook/server.h"
#include "operator/admission_webhook.h"
#include "operator/flags.h"
#include "operator/leader_label.h"
#include "operator/logging.h"
#include "operator/report_publisher.h"
#include "operator/step_routes.h"

namespace {

using kubeslurm::Status;
using kubeslurm::StatusCode;
using kubeslurm::op::Flags;
namespace kube = kubeslurm::kube;
namespace accounting = kubeslurm::accounting;
namespace api = kubeslurm::api;
namespace controllers = kubeslurm::controllers;
namespace metrics = kubeslurm::metrics;
namespace op = kubeslurm::op;
namespace rpc = kubeslurm::rpc;
using namespace std::chrono_literals;

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

std::string defaultIdentity() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::random_device random;
  return std::string(host.data()) + "_" + std::to_string(random() % 1000000U);
}

kubeslurm::StatusOr<std::string> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return kubeslurm::notFound("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Everything the operator holds while it runs, in the order the steps build it.
struct Operator {
  explicit Operator(const Flags& f) : flags(f) {}

  const Flags& flags;
  std::string ns;            // its own namespace: the Lease and the job-id ConfigMap
  std::string identity;      // this replica's name in the Lease
  std::string podName;       // POD_NAME: the pod to label while leading ("" outside a pod)
  std::string podNamespace;  // POD_NAMESPACE, else `ns`
  metrics::OperatorMetrics metrics;
  // Four clients, each with its own rate limiter (security review H3): the controllers' writes,
  // the Lease (renewal must never wait behind anyone), the reviews the query API and the
  // admission webhook ask of the API server (a flood of callers must not starve either other),
  // and Events (a burst of them must not delay a gang's pods; issue 18).
  std::unique_ptr<kube::Client> client;
  std::unique_ptr<kube::Client> leaseClient;
  std::unique_ptr<kube::Client> reviewClient;
  std::unique_ptr<kube::Client> eventClient;
  Wakeup wakeup;
  std::unique_ptr<kube::Informer> nodes, pods, jobs, partitions, accounts;
  std::vector<kube::Informer*> informers;
  std::optional<controllers::StepTokens> stepTokens;
  std::atomic<bool> synced{false};
  std::atomic<bool> leading{false};
  std::atomic<bool> needRecovery{false};
  std::atomic<std::int64_t> lastCycle{0};
  std::unique_ptr<kube::LeaderElector> elector;
  std::thread elections;
  std::unique_ptr<metrics::HttpEndpoints> endpoints;
  std::unique_ptr<kube::EventRecorder> events;
  std::unique_ptr<controllers::JobIdAllocator> ids;
  // Before the reconciler that writes to them, so that they outlive it: the writer's last
  // batch goes to the store when it stops.
  std::unique_ptr<accounting::RecordStore> accountingStore;
  std::unique_ptr<controllers::AccountingWriter> accounting;
  controllers::ReconcilerOptions reconcilerOptions;
  std::unique_ptr<controllers::Reconciler> reconciler;
  std::unique_ptr<op::QueryPublisher> queries;
  std::unique_ptr<kubeslurm::access::KubeAuthorizer> authorizer;
  std::shared_ptr<const op::SubmissionGate> gate;
  std::unique_ptr<rpc::QueryServer> queryServer;
  std::unique_ptr<kubeslurm::webhook::Server> webhook;
};

// The API server from --kubeconfig (or the default chain), and who this replica is.
bool setUpClient(Operator& o) {
  const Flags& f = o.flags;
  auto config = f.kubeconfig.empty() ? kube::defaultClientConfig(kube::processEnv(), f.context)
                                     : [&]() -> kubeslurm::StatusOr<kube::ClientConfig> {
    auto loaded = kube::loadKubeconfigFiles(f.kubeconfig);
    if (!loaded.isOk()) return loaded.status();
    return kube::resolveContext(*loaded, f.context);
  }();
  if (!config.isOk()) {
    spdlog::error("no cluster: {}", config.status().toString());
    return false;
  }
  // Before the clients' threads: a new connection must not parse the system CA bundle.
  kube::skipSystemCaFile(*config);
  kube::ClientOptions clientOptions;
  clientOptions.onFailure = [&o](std::string_view verb, const Status&) {
    o.metrics.addApiError(std::string(verb));
  };
  clientOptions.qps = f.qps;
  clientOptions.burst = f.burst;
  clientOptions.userAgent = "kubeslurm-operator/0.1";
  kube::ClientOptions leaseOptions = clientOptions;
  leaseOptions.qps = 20;  // a renewal every 2 s, and the odd read: never waits
  leaseOptions.burst = 40;
  leaseOptions.userAgent = "kubeslurm-operator/0.1 (leader-election)";
  kube::ClientOptions reviewOptions = clientOptions;
  reviewOptions.qps = 100;
  reviewOptions.burst = 200;
  reviewOptions.userAgent = "kubeslurm-operator/0.1 (reviews)";
  // Every write of the main client ends at the leader's fence (DESIGN.md invariant 2): none is
  // sent, retried or waited for past it. The Lease's client writes the Lease and the own-pod
  // leader label, which a replica must write whether or not it leads.
  kube::ClientOptions mainOptions = clientOptions;
  mainOptions.writeFence = [&o]() -> std::optional<std::chrono::steady_clock::time_point> {
    if (!o.elector || !o.leading.load()) return std::nullopt;
    return o.elector->fenceEnd();
  };
  auto made = kube::Client::create(*config, mainOptions);
  if (!made.isOk()) {
    spdlog::error("client: {}", made.status().toString());
    return false;
  }
  o.client = std::move(made).value();
  // Events are written by the leader only, behind the same fence, at the same rate as the
  // main client but from a bucket of their own.
  kube::ClientOptions eventOptions = mainOptions;
  eventOptions.userAgent = "kubeslurm-operator/0.1 (events)";
  auto lease = kube::Client::create(*config, leaseOptions);
  auto reviews = kube::Client::create(*config, reviewOptions);
  auto events = kube::Client::create(*config, eventOptions);
  for (const auto* other : {&lease, &reviews, &events}) {
    if (!other->isOk()) {
      spdlog::error("client: {}", other->status().toString());
      return false;
    }
  }
  o.leaseClient = std::move(lease).value();
  o.reviewClient = std::move(reviews).value();
  o.eventClient = std::move(events).value();
  // Read once, before any thread starts: getenv cannot race with a setenv then.
  const char* podNamespace = std::getenv("POD_NAMESPACE");  // NOLINT(concurrency-mt-unsafe)
  const char* podName = std::getenv("POD_NAME");            // NOLINT(concurrency-mt-unsafe)
  o.ns = !f.ns.empty()             ? f.ns
         : podNamespace != nullptr ? std::string(podNamespace)
                                   : std::string("kubeslurm-system");
  o.identity = f.identity.empty() ? defaultIdentity() : f.identity;
  o.podName = podName != nullptr ? podName : "";
  o.podNamespace = podNamespace != nullptr ? podNamespace : o.ns;
  // A restarted container keeps its pod's labels: it leads again only once it wins the Lease.
  op::labelOwnPod(*o.leaseClient, o.podNamespace, o.podName, false);
  return true;
}

// Informers on every kind the controllers read: every change wakes the loop, and decisions are
// taken from the caches.
void setUpInformers(Operator& o) {
  kube::EventHandler wake;
  wake.onAdd = [&o](const kube::ObjectPtr&) { o.wakeup.notify(); };
  wake.onUpdate = [&o](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
    if (a != b) o.wakeup.notify();
  };
  wake.onDelete = [&o](const kube::ObjectPtr&, bool) { o.wakeup.notify(); };
  const auto informer = [&](const kube::ResourceType& type, std::string watchNs,
                            kube::Transform transform = kube::dropManagedFields,
                            kube::Holder holder = nullptr) {
    kube::InformerOptions options;
    options.ns = std::move(watchNs);
    options.transform = std::move(transform);
    options.holder = std::move(holder);
    options.onError = [type](const Status& failure) {
      spdlog::warn("watch {}: {}", type.plural, failure.toString());
    };
    auto created = std::make_unique<kube::Informer>(*o.client, *o.client, type, options);
    (void)created->addEventHandler(wake);
    return created;
  };
  // Every node and pod of the cluster: only what the controllers read is kept, decoded
  // (controllers/cluster_view.h).
  o.nodes = informer(kube::resources::nodes(), "", controllers::leanNode, controllers::holdNode);
  o.pods = informer(kube::resources::pods(), "", controllers::leanPod, controllers::holdPod);
  // SlurmJobs without their batch scripts, read at admission (controllers/job_object.h), each
  // held decoded (controllers::holdSlurmJob).
  o.jobs = informer(kube::resources::slurmJobs(), o.flags.watchNamespace, controllers::leanSlurmJob,
                    controllers::holdSlurmJob);
  o.partitions = informer(kube::resources::partitions(), "");
  o.accounts = informer(kube::resources::accounts(), "");
  o.informers = {o.nodes.get(), o.pods.get(), o.jobs.get(), o.partitions.get(), o.accounts.get()};
  for (kube::Informer* i : o.informers) i->start();
}

// One writer among the replicas: a coordination/v1 Lease (--leader-elect).
bool setUpLeaderElection(Operator& o) {
  if (!o.flags.leaderElect) return true;
  kube::LeaderElectionConfig election;
  election.leaseNamespace = o.ns;
  election.leaseName = o.flags.leaseName;
  election.identity = o.identity;
  election.callbacks.onStartedLeading = [&o] {
    spdlog::info("became leader as {}", o.identity);
    op::labelOwnPod(*o.leaseClient, o.podNamespace, o.podName, true);
    o.needRecovery = true;
    o.leading = true;
    o.metrics.setLeader(true);
    o.wakeup.notify();
  };
  election.callbacks.onStoppedLeading = [&o] {
    if (gStop.load()) {
      spdlog::info("stopped leading (shutting down)");
    } else {
      spdlog::warn("leadership lost: writes stopped");
    }
    o.leading = false;
    o.metrics.setLeader(false);
    op::labelOwnPod(*o.leaseClient, o.podNamespace, o.podName, false);
  };
  election.callbacks.onNewLeader = [&o](const std::string& holder) {
    if (holder != o.identity) spdlog::info("leader is now \"{}\"", holder);
  };
  auto created = kube::LeaderElector::create(*o.leaseClient, *o.leaseClient, election);
  if (!created.isOk()) {
    spdlog::error("leader election: {}", created.status().toString());
    return false;
  }
  o.elector = std::move(created).value();
  return true;
}

// /metrics, /healthz and /readyz.
bool setUpEndpoints(Operator& o) {
  metrics::EndpointsOptions options;
  options.metricsAddress = o.flags.metricsAddress;
  options.probeAddress = o.flags.probeAddress;
  auto started = metrics::HttpEndpoints::start(
      options, o.metrics,
      [&o]() -> Status {
        // Wedged: a leader whose loop has not completed a cycle for 10 intervals.
        const std::int64_t last = o.lastCycle.load();
        if (o.leading && last > 0 &&
            unixNow() - last > static_cast<std::int64_t>(o.flags.interval * 10)) {
          return {StatusCode::kUnavailable, "no scheduling cycle since " + std::to_string(last)};
        }
        return Status::ok();
      },
      [&o]() -> Status {
        if (!o.synced) return {StatusCode::kUnavailable, "informers not synced"};
        return Status::ok();
      });
  if (!started.isOk()) {
    spdlog::error("{}", started.status().toString());
    return false;
  }
  o.endpoints = std::move(started).value();
  if (o.endpoints->metricsPort() != 0)
    spdlog::info("metrics on port {}", o.endpoints->metricsPort());
  if (o.endpoints->probePort() != 0) spdlog::info("probes on port {}", o.endpoints->probePort());
  return true;
}

// The event recorder, the job-id allocator and the reconciler, writing only while leading.
void setUpControllers(Operator& o) {
  const Flags& f = o.flags;
  kube::EventRecorderOptions eventOptions;
  eventOptions.component = "kubeslurm-operator";
  eventOptions.host = o.identity;
  eventOptions.reportingController = "kubeslurm.io/operator";
  eventOptions.reportingInstance = o.identity;
  o.events = std::make_unique<kube::EventRecorder>(*o.eventClient, eventOptions);

  controllers::JobIdOptions idOptions;
  idOptions.namespaceName = o.ns;
  idOptions.firstJobId = f.firstJobId;
  idOptions.highestIdInUse = [&o] {
    std::int64_t highest = 0;
    for (const kube::ObjectPtr& job : o.jobs->store().list()) {
      if (const auto held = controllers::heldSlurmJob(job)) {
        if (held->status) {
          highest = std::max(
              {highest, held->status->jobId.value_or(0), held->status->arrayJobId.value_or(0)});
        }
        continue;
      }
      // A job that did not decode is held as JSON (controllers::holdSlurmJob).
      const kube::Json* status = nullptr;
      if (job->is_object() && job->contains("status")) status = &(*job)["status"];
      if (status == nullptr || !status->is_object()) continue;
      for (const char* key : {"jobId", "arrayJobId"}) {
        if (const auto id = status->find(key); id != status->end() && id->is_number_integer()) {
          highest = std::max(highest, id->get<std::int64_t>());
        }
      }
    }
    return highest;
  };
  o.ids = std::make_unique<controllers::JobIdAllocator>(*o.client, *o.client, idOptions);

  controllers::ReconcilerOptions& options = o.reconcilerOptions;
  options.budget = f.budget;
  options.backfillMaxTime = f.backfillMaxTime;
  options.admission.clusterName = f.clusterName;
  options.admission.clusterDomain = f.clusterDomain;
  options.admission.schedulerName = f.schedulerName;
  options.admission.defaultImage = f.defaultImage;
  options.admission.toolsImage = f.toolsImage;
  options.admission.killWaitSeconds = f.killWait;
  options.canWrite = [&o] { return o.elector ? o.elector->canWrite() && o.leading.load() : true; };
  options.jobRetention = f.jobRetention;
  options.maxArraySize = f.maxArraySize;
  options.gangStartTimeout = f.gangStartTimeout;
  options.gangStartRetries = f.gangStartRetries;
  options.binder.bindParallelism = f.gangWriteParallelism;
  options.admissionParallelism = f.admissionParallelism;
  options.admitInBackground = f.admitInBackground;
  options.admissionEnded = [&o] { o.wakeup.notify(); };
  options.binder.placement = f.gangPlacement;
  options.binder.stepToken = [&o](const kubeslurm::podspec::GangInput& gang) {
    return o.stepTokens->tokenFor(gang.namespaceName, gang.jobUid, gang.attempt);
  };
  if (f.crashAtStep) {
    // A crash at a chosen write, where the tests of invariant 1 need one: the kill lands
    // mid-admission by construction, not by the luck of a timer. The count is process-wide.
    auto seen = std::make_shared<std::atomic<std::uint64_t>>(0);
    options.binder.reached = [step = *f.crashAtStep, count = f.crashAtCount,
                              seen](controllers::AdmissionStep reached) {
      if (reached != step || ++*seen != count) return;
      spdlog::critical("crash-at: {} #{} reached; SIGKILL", controllers::admissionStepName(step),
                       count);
      spdlog::default_logger()->flush();
      (void)std::raise(SIGKILL);
    };
  }
  options.accounting = o.accounting.get();
  o.reconciler = std::make_unique<controllers::Reconciler>(
      *o.client, *o.client, *o.client, *o.client, *o.ids, o.events.get(), options);
  o.queries = std::make_unique<op::QueryPublisher>(options.snapshot.config.priority, unixNow());
}

// Job records that outlive the SlurmJobs (--accounting-db, --accounting-postgres-dsn-file): the
// store, migrated to this operator's schema, and the writer that feeds it off the loop. A store
// that does not open stops the operator: running without the accounting it was told to keep
// would lose records.
bool setUpAccounting(Operator& o) {
  const Flags& f = o.flags;
  std::string where;
  kubeslurm::StatusOr<std::unique_ptr<accounting::RecordStore>> store =
      std::unique_ptr<accounting::RecordStore>();
  if (!f.accountingDb.empty()) {
    where = f.accountingDb;
    auto sqlite = accounting::SqliteStore::open(f.accountingDb);
    if (sqlite.isOk()) {
      store = std::unique_ptr<accounting::RecordStore>(std::move(sqlite).value());
    } else {
      store = sqlite.status();
    }
  } else if (!f.accountingPostgresDsnFile.empty()) {
    where = "PostgreSQL (" + f.accountingPostgresDsnFile + ")";
    auto dsn = readWholeFile(f.accountingPostgresDsnFile);
    if (!dsn.isOk()) {
      store = dsn.status();
    } else {
      while (!dsn->empty() && (dsn->back() == '\n' || dsn->back() == '\r')) dsn->pop_back();
      auto postgres = accounting::PostgresStore::open(*dsn);
      if (postgres.isOk()) {
        store = std::unique_ptr<accounting::RecordStore>(std::move(postgres).value());
      } else {
        store = postgres.status();
      }
    }
  } else {
    return true;
  }
  if (!store.isOk()) {
    spdlog::error("accounting database {}: {}", where, store.status().toString());
    return false;
  }
  o.accountingStore = std::move(store).value();
  controllers::AccountingWriterOptions options;
  options.cluster = f.clusterName;
  options.failed = [](const kubeslurm::Status& failure) {
    spdlog::warn("accounting records not written (kept, retried): {}", failure.toString());
  };
  o.accounting = std::make_unique<controllers::AccountingWriter>(
      [store = o.accountingStore.get()](std::span<const accounting::JobRecord> records) {
        return store->write(records);
      },
      options);
  spdlog::info("accounting: job records in {} (schema {})", where,
               accounting::RecordStore::kSchemaVersion);
  return true;
}

// What a submission must pass: the admission webhook's rules over the caches, which the webhook
// and sbatch --test-only share. Reviews go through the review client (and its rate limiter).
void setUpSubmissionGate(Operator& o) {
  const Flags& f = o.flags;
  o.authorizer = std::make_unique<kubeslurm::access::KubeAuthorizer>(*o.reviewClient);
  std::string operatorUsername = f.operatorUsername;
  if (operatorUsername.empty()) {
    const char* account = std::getenv("SERVICE_ACCOUNT_NAME");  // NOLINT(concurrency-mt-unsafe)
    if (account != nullptr) {
      operatorUsername = "system:serviceaccount:" + o.podNamespace + ":" + std::string(account);
    }
  }
  o.gate = std::make_shared<const op::SubmissionGate>(
      op::WebhookSources{*o.nodes, *o.partitions, *o.accounts, *o.authorizer, *o.reviewClient,
                         [&o] {
                           return o.nodes->hasSynced() && o.partitions->hasSynced() &&
                                  o.accounts->hasSynced();
                         }},
      operatorUsername, o.reconcilerOptions.admission, o.reconcilerOptions.maxArraySize);
  // The chart test reads this line: the operator's own writes pass the webhook as this user.
  spdlog::info("submission gate: the operator is \"{}\"", operatorUsername);
}

// sbatch --test-only on a gRPC thread: the SlurmJob (parsed within limits by the server) stamped
// and checked as its submission would be, then planned under the id the next submission would get
// (no id is used up). Nothing it throws may reach the operator.
kubeslurm::StatusOr<rpc::TestOnlyAnswer> planTestOnly(Operator& o,
                                                      const kubeslurm::access::Identity& caller,
                                                      const std::string& jobNamespace,
                                                      const nlohmann::json& job) {
  try {
    const auto cluster = o.queries->cluster();
    if (!cluster) {
      return Status(StatusCode::kUnavailable, "no scheduling cycle to plan against yet");
    }
    auto admitted = o.gate->admitWhatIf(caller, jobNamespace, job);
    if (!admitted.isOk()) return admitted.status();
    auto id = o.ids->peek();
    if (!id.isOk()) return id.status();
    auto answer = controllers::willRunForJob(*cluster, jobNamespace, *admitted, *id, unixNow(),
                                             o.flags.budget);
    if (!answer.isOk()) return answer.status();
    const controllers::WillRunResult& r = answer->result;
    return rpc::TestOnlyAnswer{answer->jobId, r.start, r.processors, r.nodes, r.partition};
  } catch (const std::exception& e) {
    return kubeslurm::internalError(std::string("test-only: ") + e.what());
  }
}

// sacct's records, from the store this operator writes; none without one.
rpc::RecordQuery recordQuery(Operator& o) {
  if (!o.accountingStore) return nullptr;
  return [&o](const accounting::JobFilter& asked) {
    accounting::JobFilter filter = asked;
    filter.cluster = o.flags.clusterName;
    return o.accountingStore->query(filter);
  };
}

// The key the jobs' step tokens derive from: the chart's, shared by the replicas, so that any
// leader's step proxy reaches the jobs an earlier one started.
bool setUpStepTokens(Operator& o) {
  const std::string& file = o.flags.stepTokenKeyFile;
  auto tokens = file.empty() ? controllers::StepTokens::randomKey()
                             : controllers::StepTokens::fromKeyFile(file);
  if (!tokens.isOk()) {
    spdlog::error("step tokens: {}", tokens.status().message());
    return false;
  }
  if (file.empty() && !o.flags.toolsImage.empty()) {
    spdlog::info(
        "step tokens: a random key for this process (--step-token-key-file not given): after a "
        "restart or failover, srun from a login host cannot reach jobs started before");
  }
  o.stepTokens = std::move(tokens).value();
  return true;
}

// The query API (gRPC over TLS) for sprio, sshare, sdiag, squeue --start and sbatch --test-only.
bool setUpQueryApi(Operator& o) {
  const Flags& f = o.flags;
  if (f.grpcAddress.empty()) return true;
  if (f.grpcCert.empty() || f.grpcKey.empty()) {
    spdlog::warn(
        "query API off: it serves TLS only, and --grpc-tls-cert/--grpc-tls-key are "
        "not both given (sprio, sshare and squeue --start need it)");
    return true;
  }
  auto cert = readWholeFile(f.grpcCert);
  auto key = readWholeFile(f.grpcKey);
  if (!cert.isOk() || !key.isOk()) {
    spdlog::error("query API: {}", (cert.isOk() ? key.status() : cert.status()).message());
    return false;
  }
  rpc::ServerOptions options;
  options.address = f.grpcAddress;
  options.certificatePem = *cert;
  options.privateKeyPem = *key;
  auto started = rpc::startQueryServer(
      options, [&o] { return o.queries->current(); },
      [&o](const kubeslurm::access::Identity& caller, const std::string& ns,
           const nlohmann::json& job) { return planTestOnly(o, caller, ns, job); },
      *o.authorizer, recordQuery(o),
      f.toolsImage.empty() ? rpc::StepRouter()
                           : kubeslurm::op::stepRouter(*o.jobs, *o.pods, *o.stepTokens));
  if (!started.isOk()) {
    spdlog::error("query API: {}", started.status().message());
    return false;
  }
  o.queryServer = std::move(started).value();
  spdlog::info("query API (gRPC, TLS) on port {}", o.queryServer->port());
  return true;
}

// "host:port" (the port alone means every interface).
bool splitAddress(const std::string& address, std::string& host, std::uint16_t& port) {
  const std::size_t colon = address.rfind(':');
  const std::string portText = colon == std::string::npos ? address : address.substr(colon + 1);
  host = colon == std::string::npos || colon == 0 ? "0.0.0.0" : address.substr(0, colon);
  char* end = nullptr;
  const long value = std::strtol(portText.c_str(), &end, 10);
  if (end == portText.c_str() || *end != '\0' || value < 1 || value > 65535) return false;
  port = static_cast<std::uint16_t>(value);
  return true;
}

// The admission webhook: every replica serves it, leader or not (admission is not scheduling).
bool setUpWebhook(Operator& o) {
  const Flags& f = o.flags;
  if (f.webhookAddress.empty()) return true;
  if (f.webhookCert.empty() || f.webhookKey.empty()) {
    spdlog::warn(
        "admission webhook off: it serves TLS only, and --webhook-tls-cert/--webhook-tls-key "
        "are not both given (SlurmJobs are then not stamped with their submitter)");
    return true;
  }
  kubeslurm::webhook::ServerOptions options;
  if (!splitAddress(f.webhookAddress, options.host, options.port)) {
    spdlog::error("admission webhook: bad address {}", f.webhookAddress);
    return false;
  }
  options.certificateFile = f.webhookCert;
  options.privateKeyFile = f.webhookKey;
  auto started = op::startAdmissionWebhook(options, o.gate);
  if (!started.isOk()) {
    spdlog::error("{}", started.status().toString());
    return false;
  }
  o.webhook = std::move(started).value();
  spdlog::info("admission webhook (HTTPS) on {}:{}", options.host, options.port);
  return true;
}

// Campaigns for the Lease on a thread of its own; without leader election, leads at once.
void startLeading(Operator& o) {
  if (!o.elector) {
    o.leading = true;
    o.needRecovery = true;
    o.metrics.setLeader(true);
    return;
  }
  o.elections = std::thread([&o] {
    const Status ended = o.elector->run();
    if (!ended.isOk() && !gStop.load()) {
      // Lost the lease: exit so that the Deployment restarts this replica as a candidate
      // with fresh state, as controller-runtime managers do.
      spdlog::error("leader election ended: {}", ended.toString());
      gStop = true;
      o.wakeup.notify();
    }
  });
}

void logCycle(const controllers::CycleReport& report, double seconds) {
  for (const std::string& error : report.errors) spdlog::warn("{}", error);
  if (report.stuckGangsRemoved > 0) {
    spdlog::warn("removed {} partial gang(s) left by failed rollbacks", report.stuckGangsRemoved);
  }
  if (report.idsAssigned + report.gangsAssumed + report.starts + report.statusWrites +
          report.podsDeleted + report.arrayTasksCreated >
      0) {
    // "assumed": gangs this cycle's plan started, handed to admission; "started": admissions
    // that ended bound since the last cycle (controllers/assumed_gangs.h).
    spdlog::info(
        "cycle {:.1f} ms (plan {:.1f} ms): {} considered, {} assumed, {} started ({} "
        "backfilled), {} ids, {} array tasks created, {} status writes, {} conflicts, {} pods "
        "deleted, {} admission failures",
        seconds * 1e3, report.planSeconds * 1e3, report.stats.jobsConsidered, report.gangsAssumed,
        report.starts, report.backfilled, report.idsAssigned, report.arrayTasksCreated,
        report.statusWrites, report.writeConflicts, report.podsDeleted, report.admissionFailures);
  } else {
    spdlog::debug("cycle {:.1f} ms: nothing to do", seconds * 1e3);
  }
}

// The scheduling loop: once the caches are synced and while leading, a cycle whenever something
// changed (at most one per --min-cycle-interval) and at least every --scheduling-interval.
void runSchedulingLoop(Operator& o) {
  const Flags& f = o.flags;
  controllers::ClusterView view;
  auto lastRun = std::chrono::steady_clock::now() - 1h;
  bool wasLeading = false;
  while (!gStop.load()) {
    o.wakeup.wait(std::chrono::milliseconds(static_cast<std::int64_t>(f.interval * 1000)));
    if (gStop.load()) break;
    if (!o.synced) {
      bool allSynced = true;
      for (kube::Informer* i : o.informers) allSynced = allSynced && i->hasSynced();
      if (!allSynced) continue;
      o.synced = true;
      spdlog::info("caches synced: {} nodes, {} pods, {} jobs, {} partitions, {} accounts",
                   o.nodes->store().size(), o.pods->store().size(), o.jobs->store().size(),
                   o.partitions->store().size(), o.accounts->store().size());
    }
    if (!o.leading) {
      if (wasLeading) {
        o.reconciler->reset();
        o.queries->clear();
      }
      wasLeading = false;
      continue;
    }
    wasLeading = true;
    // Coalesce bursts of events into one cycle.
    const auto since = std::chrono::steady_clock::now() - lastRun;
    const auto minimum = std::chrono::duration<double>(f.minInterval);
    if (since < minimum) std::this_thread::sleep_for(minimum - since);
    lastRun = std::chrono::steady_clock::now();
    const auto began = std::chrono::steady_clock::now();
    controllers::ReconcileInput input =
        view.read(o.nodes->store(), o.pods->store(), o.jobs->store(), o.partitions->store(),
                  o.accounts->store());
    if (o.needRecovery) {
      auto removed = o.reconciler->recover(input.objects.jobs);
      if (!removed.isOk()) {
        spdlog::warn("recovery: {}; retrying", removed.status().toString());
        o.wakeup.notify();
        continue;
      }
      o.needRecovery = false;
      spdlog::info("recovery: {} partial gang(s) removed", *removed);
      if (*removed > 0) continue;  // let the caches see the deletes before planning
    }
    controllers::CycleReport report = o.reconciler->cycle(std::move(input), unixNow());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    o.lastCycle = unixNow();
    op::publishMetrics(o.metrics, report, seconds);
    if (o.accounting) {
      const controllers::AccountingWriterStats stats = o.accounting->stats();
      o.metrics.setAccounting(
          {stats.recordsWritten, stats.batchesFailed, static_cast<std::int64_t>(stats.queued)});
    }
    if (!report.fenceClosed) o.queries->publish(report, seconds, o.lastCycle.load());
    logCycle(report, seconds);
    // Writes made this cycle come back through the informers and wake the loop again; a
    // time-driven change (a time limit, an estimated start) needs the periodic wake only.
  }
  // An admission stopped half-way by the shutdown would leave a partial gang for the next
  // leader's recovery; the fence is still open here, so each one that runs finishes (or rolls
  // back). Queued ones never start: their jobs are still PENDING for the next leader.
  o.reconciler->finishAdmissions();
}

void shutDown(Operator& o) {
  spdlog::info("stopping");
  if (o.webhook) o.webhook->stop();
  if (o.queryServer) o.queryServer->stop();
  if (o.elector) {
    o.elector->stop();
    if (o.elections.joinable()) o.elections.join();
  }
  if (o.events) o.events->shutDown();
  for (kube::Informer* i : o.informers) i->stop();
}

int run(const Flags& flags) {
  // Before any object is read: an array the cluster refuses then never decodes to its tasks.
  api::setDecodedArrayTaskLimit(flags.maxArraySize);
  Operator o(flags);
  if (!setUpClient(o)) return 1;
  setUpInformers(o);
  if (!setUpLeaderElection(o) || !setUpEndpoints(o) || !setUpAccounting(o)) {
    shutDown(o);
    return 1;
  }
  if (!setUpStepTokens(o)) {
    shutDown(o);
    return 1;
  }
  setUpControllers(o);
  setUpSubmissionGate(o);
  if (!setUpQueryApi(o) || !setUpWebhook(o)) {
    shutDown(o);
    return 1;
  }
  startLeading(o);
  spdlog::info("kubeslurm-operator {} started (namespace {}, scheduler {})", o.identity, o.ns,
               flags.schedulerName);
  runSchedulingLoop(o);
  shutDown(o);
  return 0;
}

void handleSignals() {
  struct sigaction action {};
  action.sa_handler = onSignal;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  const int parsed = kubeslurm::op::parseFlags(argc, argv, flags);
  if (parsed != 0) return parsed < 0 ? 0 : parsed;
  kubeslurm::op::setUpLogging(flags);
  handleSignals();
  return run(flags);
}
