// A leader-election candidate for tests/integration/kube/leader_election_test.cc.
//
//   kube_it_lease_candidate KUBECONFIG NAMESPACE LEASE IDENTITY FILE
//
// Campaigns for the Lease with short durations (3 s lease, 2 s renew deadline, 0.5 s retry).
// While leader it appends "IDENTITY MILLISECONDS" to FILE every 100 ms, asking the fence
// before each write; MILLISECONDS is CLOCK_MONOTONIC, which every process on the machine
// shares, so the test can compare two candidates' lines. SIGTERM or SIGINT: stop writing,
// release the lease, exit 0. Lost leadership: exit 3. Progress goes to stderr.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/kubeconfig.h"
#include "kubeslurm/kube/leader_election.h"

namespace {

using namespace std::chrono_literals;
using kubeslurm::kube::Client;
using kubeslurm::kube::LeaderElectionConfig;
using kubeslurm::kube::LeaderElector;

long long monotonicMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The writer: its mutex is held across "may I?" and the write, and onStoppedLeading takes it,
// so once leadership ends no write is in flight and none starts.
struct Writer {
  std::mutex mutex;
  bool allowed = false;
  int fd = -1;
  std::string identity;
};

int run(int argc, char** argv) {
  if (argc != 6) {
    (void)std::fprintf(stderr, "usage: %s KUBECONFIG NAMESPACE LEASE IDENTITY FILE\n", argv[0]);
    return 2;
  }
  const std::string identity = argv[4];

  // Signals are taken by one thread with sigwait; every other thread has them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto files = kubeslurm::kube::loadKubeconfigFiles(argv[1]);
  if (!files.isOk()) {
    (void)std::fprintf(stderr, "%s\n", files.status().toString().c_str());
    return 2;
  }
  auto config = kubeslurm::kube::resolveContext(*files);
  if (!config.isOk()) {
    (void)std::fprintf(stderr, "%s\n", config.status().toString().c_str());
    return 2;
  }
  kubeslurm::kube::ClientOptions options;
  // A renewal must not outlive the renew deadline by much; the fence guards writes anyway.
  options.requestTimeout = 1000ms;
  options.maxRetries = 1;
  auto client = Client::create(*config, options);
  if (!client.isOk()) {
    (void)std::fprintf(stderr, "%s\n", client.status().toString().c_str());
    return 2;
  }

  Writer writer;
  writer.identity = identity;
  writer.fd = ::open(argv[5], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (writer.fd < 0) {
    std::perror(argv[5]);
    return 2;
  }

  LeaderElectionConfig election;
  election.leaseNamespace = argv[2];
  election.leaseName = argv[3];
  election.identity = identity;
  election.leaseDuration = 3s;
  election.renewDeadline = 2s;
  election.retryPeriod = 500ms;
  election.callbacks.onStartedLeading = [&] {
    (void)std::fprintf(stderr, "%lld %s: started leading\n", monotonicMillis(), identity.c_str());
    const std::lock_guard lock(writer.mutex);
    writer.allowed = true;
  };
  election.callbacks.onStoppedLeading = [&] {
    {
      const std::lock_guard lock(writer.mutex);
      writer.allowed = false;
    }
    (void)std::fprintf(stderr, "%lld %s: stopped leading\n", monotonicMillis(), identity.c_str());
  };
  election.callbacks.onNewLeader = [&](const std::string& leader) {
    (void)std::fprintf(stderr, "%lld %s: leader is now '%s'\n", monotonicMillis(), identity.c_str(),
                       leader.c_str());
  };
  auto made = LeaderElector::create(**client, **client, election);
  if (!made.isOk()) {
    (void)std::fprintf(stderr, "%s\n", made.status().toString().c_str());
    return 2;
  }
  LeaderElector& elector = **made;

  std::atomic<bool> done{false};
  std::thread writing([&] {
    while (!done) {
      {
        const std::lock_guard lock(writer.mutex);
        if (writer.allowed && elector.canWrite()) {
          const std::string line = writer.identity + " " + std::to_string(monotonicMillis()) + "\n";
          if (::write(writer.fd, line.data(), line.size()) < 0) std::perror("write");
        }
      }
      std::this_thread::sleep_for(100ms);
    }
  });
  std::thread waiting([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    (void)std::fprintf(stderr, "%lld %s: signal %d\n", monotonicMillis(), identity.c_str(), signal);
    elector.stop();
  });
  waiting.detach();  // still in sigwait when leadership is lost; exit ends it

  const kubeslurm::Status result = elector.run();
  done = true;
  writing.join();
  ::close(writer.fd);
  (void)std::fprintf(stderr, "%lld %s: run ended: %s (last error: %s)\n", monotonicMillis(),
                     identity.c_str(), result.toString().c_str(),
                     elector.lastError().toString().c_str());
  // The signal thread may still wake and touch the elector: leave without destructors.
  (void)std::fflush(stderr);
  std::_Exit(result.isOk() ? 0 : 3);
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
