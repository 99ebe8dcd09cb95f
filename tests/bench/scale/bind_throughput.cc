// Bind throughput against a real API server (issue 4's numbers); driven by bind_throughput.sh.
//
//   bind_throughput --kubeconfig FILE [--pods 800] [--parallelism 1,4,16,64] [--repeat 3]
//                   [--create-parallelism 16] [--namespace bind-bench]
//                   [--node-selector nodesim.kubeslurm.io/simulated=true]
//                   [--baseline LABEL=SCHEDULER_NAME[:PID]]... [--scheduler-pid PID]
//                   [--no-baseline]
//
// Modes, each run --repeat times on --pods pods of 1 nvidia.com/gpu (busybox `sleep 3600`):
//
//   bind P          pods created first (schedulerName kubeslurm-bench: nobody else binds them;
//                   creation not counted), then bound round-robin over the nodes with P threads
//                   issuing Client::bind (POST pods/NAME/binding) at once. Counted: from the
//                   release of the P threads to the return of the last bind.
//   LABEL+create    a kube-scheduler (pods with schedulerName SCHEDULER_NAME). Counted: from the
//                   first create to the watch event that shows the last pod with spec.nodeName.
//                   The pods are created with --create-parallelism threads and the scheduler
//                   binds while they are created, so this includes creation.
//   LABEL paused    the same scheduler, creation excluded: its process (PID) is stopped with
//                   SIGSTOP while the pods are created, and the clock runs from its SIGCONT to
//                   the watch event of the last spec.nodeName. Like the bind mode, it starts
//                   with every pod already in the API server. Only with a PID.
//
// Without --baseline: kube-scheduler=default-scheduler, with --scheduler-pid as its PID.
// Ratio columns compare each row with every baseline row.
//
// Between rounds the pods are deleted (gracePeriodSeconds 0) and the round waits until they
// are gone. The harness measures; it asserts no time. Exit status: 0, 1 when a round could not
// complete (the error is printed), 2 for bad flags.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iomanip>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/kubeconfig.h"
#include "kubeslurm/kube/resource.h"

namespace {

using kubeslurm::Status;
using kubeslurm::StatusCode;
using kubeslurm::StatusOr;
using kubeslurm::kube::Client;
using kubeslurm::kube::Json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace resources = kubeslurm::kube::resources;

constexpr const char* kBenchLabel = "kubeslurm.io/bench";
constexpr const char* kBenchValue = "bind-throughput";
constexpr const char* kOwnScheduler = "kubeslurm-bench";
constexpr const char* kDefaultScheduler = "default-scheduler";

// A kube-scheduler to compare with: the pods of its rounds name `scheduler`; `pid` (optional)
// is its process, stopped while the pods of the "paused" rounds are created.
struct Baseline {
  std::string label;
  std::string scheduler;
  pid_t pid = 0;
};

struct Options {
  std::string kubeconfig;
  int pods = 800;
  std::vector<int> parallelism = {1, 4, 16, 64};
  int repeat = 3;
  int createParallelism = 16;
  std::string ns = "bind-bench";
  std::string nodeSelector = "nodesim.kubeslurm.io/simulated=true";
  pid_t schedulerPid = 0;
  std::vector<Baseline> baselines;  // empty: kube-scheduler=default-scheduler[:--scheduler-pid]
  bool baseline = true;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

StatusOr<int> parsePositive(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || value <= 0 || value > 1000000) {
    return kubeslurm::invalidArgument(flag + ": expected a positive integer, got '" + text + "'");
  }
  return static_cast<int>(value);
}

StatusOr<Options> parseArgs(int argc, char** argv) {
  Options options;
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--no-baseline") {
      options.baseline = false;
      continue;
    }
    if (i + 1 >= args.size()) return kubeslurm::invalidArgument(flag + ": missing value");
    const std::string& value = args[++i];
    if (flag == "--kubeconfig") {
      options.kubeconfig = value;
    } else if (flag == "--namespace") {
      options.ns = value;
    } else if (flag == "--node-selector") {
      options.nodeSelector = value;
    } else if (flag == "--pods" || flag == "--repeat" || flag == "--create-parallelism" ||
               flag == "--scheduler-pid") {
      auto number = parsePositive(flag, value);
      if (!number) return number.status();
      if (flag == "--pods") options.pods = *number;
      if (flag == "--repeat") options.repeat = *number;
      if (flag == "--create-parallelism") options.createParallelism = *number;
      if (flag == "--scheduler-pid") options.schedulerPid = static_cast<pid_t>(*number);
    } else if (flag == "--baseline") {
      // LABEL=SCHEDULER_NAME[:PID]
      const auto equals = value.find('=');
      if (equals == std::string::npos || equals == 0) {
        return kubeslurm::invalidArgument("--baseline: expected LABEL=SCHEDULER[:PID]");
      }
      Baseline baseline{value.substr(0, equals), value.substr(equals + 1), 0};
      const auto colon = baseline.scheduler.find(':');
      if (colon != std::string::npos) {
        auto pid = parsePositive(flag, baseline.scheduler.substr(colon + 1));
        if (!pid) return pid.status();
        baseline.pid = static_cast<pid_t>(*pid);
        baseline.scheduler.resize(colon);
      }
      options.baselines.push_back(std::move(baseline));
    } else if (flag == "--parallelism") {
      options.parallelism.clear();
      std::stringstream list(value);
      std::string item;
      while (std::getline(list, item, ',')) {
        auto number = parsePositive(flag, item);
        if (!number) return number.status();
        options.parallelism.push_back(*number);
      }
    } else {
      return kubeslurm::invalidArgument("unknown flag " + flag);
    }
  }
  if (options.kubeconfig.empty()) return kubeslurm::invalidArgument("--kubeconfig is required");
  if (!options.baseline) options.baselines.clear();
  if (options.baseline && options.baselines.empty()) {
    options.baselines.push_back({"kube-scheduler", kDefaultScheduler, options.schedulerPid});
  }
  return options;
}

// One run of `count` tasks on `parallelism` threads. The clock starts when every thread is
// up and waiting, and stops when the last task has returned.
struct ParallelResult {
  Clock::time_point start;
  Clock::time_point end;
  std::vector<double> latenciesMs;
  int failures = 0;
  Status firstError;
};

ParallelResult runParallel(int count, int parallelism, const std::function<Status(int)>& task) {
  ParallelResult result;
  const int threads = std::max(1, std::min(parallelism, count));
  std::latch ready(threads);
  std::latch go(1);
  std::atomic<int> next{0};
  std::mutex mutex;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::vector<double> latencies;
      int failures = 0;
      Status firstError;
      ready.count_down();
      go.wait();
      for (int i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
        const auto begin = Clock::now();
        Status status = task(i);
        latencies.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
        if (!status.isOk()) {
          ++failures;
          if (firstError.isOk()) firstError = std::move(status);
        }
      }
      const std::lock_guard<std::mutex> lock(mutex);
      result.latenciesMs.insert(result.latenciesMs.end(), latencies.begin(), latencies.end());
      result.failures += failures;
      if (result.firstError.isOk()) result.firstError = std::move(firstError);
    });
  }
  ready.wait();
  result.start = Clock::now();
  go.count_down();
  for (auto& worker : workers) worker.join();
  result.end = Clock::now();
  return result;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto index =
      static_cast<std::size_t>(std::lround(p * static_cast<double>(values.size() - 1)));
  return values[std::min(index, values.size() - 1)];
}

std::string podName(int round, int i) {
  return "bb-" + std::to_string(round) + "-" + std::to_string(i);
}

Json podObject(const std::string& name, const std::string& scheduler) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{kBenchLabel, kBenchValue}}}}},
              {"spec",
               {{"schedulerName", scheduler},
                {"restartPolicy", "Never"},
                {"terminationGracePeriodSeconds", 0},
                {"containers",
                 Json::array({Json{{"name", "main"},
                                   {"image", "busybox"},
                                   {"command", Json::array({"sleep", "3600"})},
                                   {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
}

std::string selector() { return std::string(kBenchLabel) + "=" + kBenchValue; }

class Bench {
 public:
  Bench(Options options, std::unique_ptr<Client> client)
      : options_(std::move(options)), client_(std::move(client)) {}

  // Namespace, node list, and one pod created and deleted: the namespace's service account
  // exists afterwards, so no measured create is refused for want of it.
  Status prepare() {
    auto ns = client_->create(
        resources::namespaces(), "",
        Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", options_.ns}}}});
    if (!ns && ns.status().code() != StatusCode::kAlreadyExists) return ns.status();
    kubeslurm::kube::ListOptions list;
    list.labelSelector = options_.nodeSelector;
    auto nodes = client_->list(resources::nodes(), "", list);
    if (!nodes) return nodes.status();
    for (const auto& node : (*nodes)["items"]) {
      nodes_.push_back(node["metadata"]["name"].get<std::string>());
    }
    std::sort(nodes_.begin(), nodes_.end());
    if (nodes_.empty()) {
      return kubeslurm::failedPrecondition("no node matches " + options_.nodeSelector);
    }
    Status created = Status(StatusCode::kUnknown, "not tried");
    const auto deadline = Clock::now() + 30s;
    while (Clock::now() < deadline) {
      auto pod =
          client_->create(resources::pods(), options_.ns, podObject("bb-probe", kOwnScheduler));
      created = pod.status();
      if (pod || created.code() == StatusCode::kAlreadyExists) {
        created = Status::ok();
        break;
      }
      std::this_thread::sleep_for(250ms);
    }
    if (!created.isOk()) return created;
    return deleteAll();
  }

  std::size_t nodeCount() const { return nodes_.size(); }

  // Creates pods 0..pods-1 of `round`; fills uids_.
  ParallelResult createPods(int round, const std::string& scheduler) {
    uids_.assign(static_cast<std::size_t>(options_.pods), std::string());
    return runParallel(options_.pods, options_.createParallelism, [&](int i) -> Status {
      auto pod =
          client_->create(resources::pods(), options_.ns, podObject(podName(round, i), scheduler));
      if (!pod) return pod.status();
      uids_[static_cast<std::size_t>(i)] = (*pod)["metadata"]["uid"].get<std::string>();
      return Status::ok();
    });
  }

  // `parallelism` concurrent one-item lists, so that the client's connection pool holds that
  // many open connections before a measured round (TLS handshakes are not what is measured).
  void warmConnections(int parallelism) {
    kubeslurm::kube::ListOptions list;
    list.limit = 1;
    (void)runParallel(parallelism, parallelism,
                      [&](int) { return client_->list(resources::nodes(), "", list).status(); });
  }

  ParallelResult bindPods(int round, int parallelism) {
    return runParallel(options_.pods, parallelism, [&](int i) {
      const auto index = static_cast<std::size_t>(i);
      return client_->bind(options_.ns, podName(round, i), nodes_[index % nodes_.size()],
                           uids_[index]);
    });
  }

  // Deletes every bench pod (grace period 0) and waits until the list is empty.
  Status deleteAll() {
    kubeslurm::kube::ListOptions list;
    list.labelSelector = selector();
    auto pods = kubeslurm::kube::listAll(*client_, resources::pods(), options_.ns, list);
    if (!pods) return pods.status();
    std::vector<std::string> names;
    for (const auto& pod : (*pods)["items"]) {
      names.push_back(pod["metadata"]["name"].get<std::string>());
    }
    kubeslurm::kube::DeleteOptions remove;
    remove.gracePeriodSeconds = 0;
    const ParallelResult deleted = runParallel(
        static_cast<int>(names.size()), options_.createParallelism, [&](int i) -> Status {
          Status status = client_->remove(resources::pods(), options_.ns,
                                          names[static_cast<std::size_t>(i)], remove);
          return status.code() == StatusCode::kNotFound ? Status::ok() : status;
        });
    if (deleted.failures > 0) return deleted.firstError;
    const auto deadline = Clock::now() + 120s;
    list.limit = 1;
    while (Clock::now() < deadline) {
      auto left = client_->list(resources::pods(), options_.ns, list);
      if (!left) return left.status();
      if ((*left)["items"].empty()) return Status::ok();
      std::this_thread::sleep_for(200ms);
    }
    return {StatusCode::kDeadlineExceeded, "bench pods still there after 120 s"};
  }

  Client& client() { return *client_; }
  const Options& options() const { return options_; }

 private:
  Options options_;
  std::unique_ptr<Client> client_;
  std::vector<std::string> nodes_;
  std::vector<std::string> uids_;
};

// Watches the bench pods and notes when each first shows spec.nodeName.
class BoundWatch {
 public:
  BoundWatch(Client& client, std::string ns, int expected)
      : client_(client), ns_(std::move(ns)), expected_(static_cast<std::size_t>(expected)) {}
  BoundWatch(const BoundWatch&) = delete;
  BoundWatch& operator=(const BoundWatch&) = delete;
  ~BoundWatch() {
    stop_.stop();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  // Lists (to learn the resourceVersion to watch from) and starts the watch thread.
  Status start() {
    std::string resourceVersion;
    Status listed = relist(resourceVersion);
    if (!listed.isOk()) return listed;
    thread_ = std::thread([this, resourceVersion]() mutable { loop(resourceVersion); });
    return Status::ok();
  }

  // The time the last expected pod was seen bound, or an error after `timeout`.
  StatusOr<Clock::time_point> waitAll(Clock::duration timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return bound_.size() >= expected_; })) {
      return Status(StatusCode::kDeadlineExceeded, std::to_string(bound_.size()) + " of " +
                                                       std::to_string(expected_) +
                                                       " pods bound when the wait timed out");
    }
    return lastBound_;
  }

  std::size_t boundCount() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return bound_.size();
  }

 private:
  Status relist(std::string& resourceVersion) {
    kubeslurm::kube::ListOptions list;
    list.labelSelector = selector();
    auto pods = kubeslurm::kube::listAll(client_, resources::pods(), ns_, list);
    if (!pods) return pods.status();
    for (const auto& pod : (*pods)["items"]) note(pod);
    resourceVersion = (*pods)["metadata"].value("resourceVersion", "");
    return Status::ok();
  }

  // Returns true once every expected pod is bound.
  bool note(const Json& pod) {
    const auto spec = pod.find("spec");
    std::string node;
    if (spec != pod.end() && spec->contains("nodeName") && (*spec)["nodeName"].is_string()) {
      node = (*spec)["nodeName"].get<std::string>();
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!node.empty() && bound_.insert(pod["metadata"]["name"].get<std::string>()).second) {
      lastBound_ = Clock::now();
      if (bound_.size() >= expected_) cv_.notify_all();
    }
    return bound_.size() >= expected_ || finished_;
  }

  void loop(std::string resourceVersion) {
    while (!stop_.stopped()) {
      kubeslurm::kube::WatchOptions watch;
      watch.resourceVersion = resourceVersion;
      watch.labelSelector = selector();
      watch.timeoutSeconds = 60;
      bool done = false;
      const auto result = client_.watch(
          resources::pods(), ns_, watch,
          [&](const kubeslurm::kube::WatchEvent& event) {
            using Type = kubeslurm::kube::WatchEventType;
            if (event.type == Type::kAdded || event.type == Type::kModified) {
              done = note(event.object);
            }
            return !done;
          },
          &stop_);
      if (done || result.status.code() == StatusCode::kCancelled) return;
      resourceVersion = result.resourceVersion;
      if (!result.status.isOk()) {
        std::this_thread::sleep_for(100ms);
        if (!relist(resourceVersion).isOk()) resourceVersion.clear();
      }
    }
  }

  Client& client_;
  std::string ns_;
  std::size_t expected_;
  kubeslurm::kube::WatchStop stop_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::set<std::string> bound_;
  Clock::time_point lastBound_;
  bool finished_ = false;
};

// SIGSTOP on the scheduler for the life of the guard (SIGCONT when it ends, whatever happens).
class SchedulerPause {
 public:
  explicit SchedulerPause(pid_t pid) : pid_(pid) {}
  SchedulerPause(const SchedulerPause&) = delete;
  SchedulerPause& operator=(const SchedulerPause&) = delete;
  ~SchedulerPause() { resume(); }

  Status pause() {
    std::ifstream comm("/proc/" + std::to_string(pid_) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != "kube-scheduler") {
      return kubeslurm::failedPrecondition("pid " + std::to_string(pid_) +
                                           " is not kube-scheduler ('" + name + "')");
    }
    if (::kill(pid_, SIGSTOP) != 0) return {StatusCode::kInternal, "kill(SIGSTOP) failed"};
    paused_ = true;
    return Status::ok();
  }

  void resume() {
    if (paused_) (void)::kill(pid_, SIGCONT);
    paused_ = false;
  }

 private:
  pid_t pid_;
  bool paused_ = false;
};

struct Sample {
  double seconds = 0;
  int failures = 0;
  std::vector<double> latenciesMs;
  std::string note;
};

enum class Kind { kCreate, kPaused, kBind };

struct Row {
  Kind kind = Kind::kBind;
  std::string mode;
  int parallelism = 0;  // bind rows
  int baseline = -1;    // index into Options::baselines for the others
  std::vector<Sample> samples;
};

double medianSeconds(const Row& row) {
  std::vector<double> values;
  for (const auto& sample : row.samples) values.push_back(sample.seconds);
  return percentile(values, 0.5);
}

StatusOr<Sample> schedulerWithCreation(Bench& bench, int round, const Baseline& baseline) {
  BoundWatch watch(bench.client(), bench.options().ns, bench.options().pods);
  Status started = watch.start();
  if (!started.isOk()) return started;
  bench.warmConnections(bench.options().createParallelism);
  const ParallelResult created = bench.createPods(round, baseline.scheduler);
  if (created.failures > 0) return created.firstError;
  const std::size_t boundAtCreateEnd = watch.boundCount();
  auto last = watch.waitAll(300s);
  if (!last) return last.status();
  Sample sample;
  sample.seconds = seconds(*last - created.start);
  std::ostringstream note;
  note.setf(std::ios::fixed);
  note.precision(2);
  note << "creation " << seconds(created.end - created.start) << " s (" << boundAtCreateEnd
       << " bound by then), last bind seen " << seconds(*last - created.end) << " s after creation";
  sample.note = note.str();
  return sample;
}

StatusOr<Sample> schedulerPaused(Bench& bench, int round, const Baseline& baseline) {
  SchedulerPause pause(baseline.pid);
  Status paused = pause.pause();
  if (!paused.isOk()) return paused;
  const ParallelResult created = bench.createPods(round, baseline.scheduler);
  if (created.failures > 0) return created.firstError;
  BoundWatch watch(bench.client(), bench.options().ns, bench.options().pods);
  Status started = watch.start();
  if (!started.isOk()) return started;
  const auto start = Clock::now();
  pause.resume();
  auto last = watch.waitAll(300s);
  if (!last) return last.status();
  Sample sample;
  sample.seconds = seconds(*last - start);
  std::ostringstream note;
  note.setf(std::ios::fixed);
  note.precision(2);
  note << "creation (scheduler stopped, not counted) " << seconds(created.end - created.start)
       << " s";
  sample.note = note.str();
  return sample;
}

StatusOr<Sample> ourBind(Bench& bench, int round, int parallelism) {
  const ParallelResult created = bench.createPods(round, kOwnScheduler);
  if (created.failures > 0) return created.firstError;
  bench.warmConnections(parallelism);
  const ParallelResult bound = bench.bindPods(round, parallelism);
  if (bound.failures > 0) {
    (void)std::fprintf(stderr, "bind P=%d: %d failures, first: %s\n", parallelism, bound.failures,
                       bound.firstError.toString().c_str());
  }
  Sample sample;
  sample.seconds = seconds(bound.end - bound.start);
  sample.failures = bound.failures;
  sample.latenciesMs = bound.latenciesMs;
  std::ostringstream note;
  note.setf(std::ios::fixed);
  note.precision(2);
  note << "creation (not counted) " << seconds(created.end - created.start) << " s";
  sample.note = note.str();
  return sample;
}

std::string fixed(double value, int precision) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(precision) << value;
  return text.str();
}

void printTable(const Options& options, const std::vector<Row>& rows) {
  const auto rate = [&](const Row& row) { return options.pods / medianSeconds(row); };
  // Ratio columns: for each baseline, its paused row (xPi) and its +create row (xCi).
  std::vector<const Row*> bases;
  std::string legend;
  for (std::size_t b = 0; b < options.baselines.size(); ++b) {
    for (const Kind kind : {Kind::kPaused, Kind::kCreate}) {
      for (const auto& row : rows) {
        if (row.kind == kind && row.baseline == static_cast<int>(b)) {
          bases.push_back(&row);
          legend += "  x" + std::string(kind == Kind::kPaused ? "P" : "C") + std::to_string(b + 1) +
                    ": pods/s over " + row.mode + "'s\n";
        }
      }
    }
  }
  std::string header;
  for (const Row* base : bases) {
    const auto b = static_cast<std::size_t>(base->baseline);
    header += (base->kind == Kind::kPaused ? "     xP" : "     xC") + std::to_string(b + 1);
  }
  (void)std::printf("\n%-22s %5s %4s %8s %8s %15s%s %8s %8s %4s\n", "mode", "pods", "par",
                    "seconds", "pods/s", "pods/s min-max", header.c_str(), "p50 ms", "p99 ms",
                    "err");
  for (const auto& row : rows) {
    double low = 1e300;
    double high = 0;
    std::vector<double> latencies;
    int failures = 0;
    for (const auto& sample : row.samples) {
      const double r = options.pods / sample.seconds;
      low = std::min(low, r);
      high = std::max(high, r);
      latencies.insert(latencies.end(), sample.latenciesMs.begin(), sample.latenciesMs.end());
      failures += sample.failures;
    }
    const std::string range =
        std::to_string(std::lround(low)) + "-" + std::to_string(std::lround(high));
    const std::string par = row.parallelism > 0 ? std::to_string(row.parallelism) : "-";
    std::string ratios;
    for (const Row* base : bases) {
      const std::string ratio = fixed(rate(row) / rate(*base), 2);
      ratios += std::string(9 - std::min<std::size_t>(8, ratio.size()), ' ') + ratio;
    }
    const auto ms = [&](double p) {
      if (latencies.empty()) return std::string("-");
      return fixed(percentile(latencies, p), 1);
    };
    (void)std::printf("%-22s %5d %4s %8.2f %8.1f %15s%s %8s %8s %4d\n", row.mode.c_str(),
                      options.pods, par.c_str(), medianSeconds(row), rate(row), range.c_str(),
                      ratios.c_str(), ms(0.5).c_str(), ms(0.99).c_str(), failures);
  }
  (void)std::printf(
      "\nseconds: median of %d runs; pods/s = pods / median seconds; min-max over the runs.\n"
      "%s"
      "p50/p99: latency of one Client::bind call (bind rows only); err: failed binds.\n",
      options.repeat, legend.c_str());
}

int run(int argc, char** argv) {
  auto options = parseArgs(argc, argv);
  if (!options) {
    (void)std::fprintf(stderr, "%s\n", options.status().toString().c_str());
    return 2;
  }
  auto files = kubeslurm::kube::loadKubeconfigFiles(options->kubeconfig);
  if (!files) {
    (void)std::fprintf(stderr, "%s\n", files.status().toString().c_str());
    return 2;
  }
  auto config = kubeslurm::kube::resolveContext(*files);
  if (!config) {
    (void)std::fprintf(stderr, "%s\n", config.status().toString().c_str());
    return 2;
  }
  kubeslurm::kube::ClientOptions clientOptions;
  // High enough that the client's token bucket never waits: the server is what is measured.
  clientOptions.qps = 1e6;
  clientOptions.burst = 1000000;
  clientOptions.userAgent = "kubeslurm-bind-throughput";
  auto client = Client::create(*config, clientOptions);
  if (!client) {
    (void)std::fprintf(stderr, "%s\n", client.status().toString().c_str());
    return 2;
  }
  Bench bench(*options, std::move(*client));
  Status prepared = bench.prepare();
  if (!prepared.isOk()) {
    (void)std::fprintf(stderr, "prepare: %s\n", prepared.toString().c_str());
    return 1;
  }
  (void)std::printf(
      "bind_throughput: %d pods of 1 GPU over %zu nodes, %d runs per mode, "
      "creation with %d threads\n",
      options->pods, bench.nodeCount(), options->repeat, options->createParallelism);

  std::vector<Row> rows;
  for (std::size_t b = 0; b < options->baselines.size(); ++b) {
    const Baseline& baseline = options->baselines[b];
    rows.push_back({Kind::kCreate, baseline.label + "+create", 0, static_cast<int>(b), {}});
    if (baseline.pid > 0) {
      rows.push_back({Kind::kPaused, baseline.label + " paused", 0, static_cast<int>(b), {}});
    }
  }
  for (const int p : options->parallelism) rows.push_back({Kind::kBind, "bind", p, -1, {}});

  int round = 0;
  for (int r = 0; r < options->repeat; ++r) {
    for (auto& row : rows) {
      ++round;
      StatusOr<Sample> sample = Status(StatusCode::kUnknown, "no mode");
      switch (row.kind) {
        case Kind::kCreate:
          sample = schedulerWithCreation(
              bench, round, options->baselines[static_cast<std::size_t>(row.baseline)]);
          break;
        case Kind::kPaused:
          sample = schedulerPaused(bench, round,
                                   options->baselines[static_cast<std::size_t>(row.baseline)]);
          break;
        case Kind::kBind:
          sample = ourBind(bench, round, row.parallelism);
          break;
      }
      Status cleaned = bench.deleteAll();
      if (!sample) {
        (void)std::fprintf(stderr, "%s run %d: %s\n", row.mode.c_str(), r + 1,
                           sample.status().toString().c_str());
        return 1;
      }
      if (!cleaned.isOk()) {
        (void)std::fprintf(stderr, "cleanup: %s\n", cleaned.toString().c_str());
        return 1;
      }
      const std::string par = row.parallelism > 0 ? " P=" + std::to_string(row.parallelism) : "";
      (void)std::printf("run %d %s%s: %.2f s, %.1f pods/s (%s)\n", r + 1, row.mode.c_str(),
                        par.c_str(), sample->seconds, options->pods / sample->seconds,
                        sample->note.c_str());
      (void)std::fflush(stdout);
      row.samples.push_back(std::move(*sample));
      // The scheduler's cache drops deleted pods from its watch; give it a moment so the next
      // round finds every GPU free there too.
      std::this_thread::sleep_for(1s);
    }
  }
  printTable(*options, rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "bind_throughput: %s\n", e.what());
  } catch (...) {
    (void)std::fprintf(stderr, "bind_throughput: unknown exception\n");
  }
  return 1;
}
