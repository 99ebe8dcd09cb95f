#include "kubeslurm/kube/run_bounded.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kubeslurm::kube {

Status runBounded(std::size_t n, std::size_t parallelism, bool stopOnFailure,
                  const std::function<Status(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  Status first;
  auto worker = [&] {
    while (!(stopOnFailure && failed.load())) {
      const std::size_t index = next.fetch_add(1);
      if (index >= n) return;
      Status result = task(index);
      if (!result.isOk()) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failed.exchange(true)) first = std::move(result);
      }
    }
  };
  const std::size_t threads = std::min(std::max<std::size_t>(parallelism, 1), n);
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) {
    try {
      pool.emplace_back(worker);
    } catch (const std::exception&) {
      break;  // fewer threads: the work still gets done by those that started
    }
  }
  worker();
  for (std::thread& thread : pool) thread.join();
  return first;
}

}  // namespace kubeslurm::kube
