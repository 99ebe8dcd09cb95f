#include "kubeslurm/core/profile.h"

#include <algorithm>

namespace kubeslurm::core {

namespace {
// Room for a few reservations per node before it has to move: a reservation adds two steps.
constexpr std::uint32_t kSpareSteps = 4;
}  // namespace

Profile::Profile(Time now, const Budget& budget, std::span<const NodeFree> freeNow,
                 std::span<const Release> releases)
    : now_(now), resolution_(std::max<Duration>(budget.resolution, 1)) {
  const Duration window = std::max<Duration>(budget.window, 0);
  lastSlot_ = static_cast<std::uint32_t>(
      std::min<Duration>(window / resolution_, std::numeric_limits<std::uint32_t>::max() - 2));
  const std::size_t nodes = freeNow.size();
  // Releases grouped by node (counting sort), each node's then ordered by time.
  std::vector<std::uint32_t> first(nodes + 1, 0);
  for (const Release& r : releases) ++first[r.node + 1];
  for (std::size_t n = 0; n < nodes; ++n) first[n + 1] += first[n];
  std::vector<const Release*> byNode(releases.size());
  std::vector<std::uint32_t> cursor(first.begin(), first.end() - 1);
  for (const Release& r : releases) byNode[cursor[r.node]++] = &r;

  start_.resize(nodes);
  head_.reserve(nodes);
  length_.resize(nodes);
  capacity_.resize(nodes);
  steps_.reserve(releases.size() + nodes * (1 + kSpareSteps));
  for (std::size_t n = 0; n < nodes; ++n) {
    auto begin = byNode.begin() + first[n];
    auto end = byNode.begin() + first[n + 1];
    std::sort(begin, end, [](const Release* a, const Release* b) { return a->at < b->at; });
    start_[n] = static_cast<std::uint32_t>(steps_.size());
    NodeFree free = freeNow[n];
    steps_.push_back({now_, free});
    for (auto it = begin; it != end; ++it) {
      free.amount += (*it)->amount;
      --free.jobs;
      const Time at = std::max((*it)->at, now_ + 1);
      if (steps_.back().at == at) {
        steps_.back().free = free;
      } else {
        steps_.push_back({at, free});
      }
    }
    length_[n] = static_cast<std::uint32_t>(steps_.size() - start_[n]);
    head_.push_back(steps_[start_[n]].free);
    capacity_[n] = length_[n] + kSpareSteps;
    steps_.resize(steps_.size() + kSpareSteps);
  }
}

std::uint64_t Profile::slotAtOrAfter(Time t) const {
  if (t <= now_) return 0;
  if (t >= kForever) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>((t - now_ + resolution_ - 1) / resolution_);
}

bool Profile::fitsSteps(NodeIndex n, const NodeRequest& request, Time start, Duration duration,
                        Amount& leastFree) const {
  const Time end = start >= kForever - duration ? kForever : start + duration;
  const std::span<const Step> s = steps(n);
  bool any = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Time stepEnd = i + 1 < s.size() ? s[i + 1].at : kForever;
    if (stepEnd <= start) continue;
    if (s[i].at >= end) break;
    if (!fits(s[i].free, request)) return false;
    const Amount& a = s[i].free.amount;
    if (!any) {
      leastFree = a;
      any = true;
    } else {
      leastFree.gpus = std::min(leastFree.gpus, a.gpus);
      leastFree.cpuMillis = std::min(leastFree.cpuMillis, a.cpuMillis);
      leastFree.memoryBytes = std::min(leastFree.memoryBytes, a.memoryBytes);
    }
  }
  return any;
}

Time Profile::intervalStartContaining(NodeIndex n, const NodeRequest& request, Duration duration,
                                      Time at) const {
  Time found = at;
  bool done = false;
  forEachStartInterval(n, request, duration, [&](Time a, Time b) {
    if (!done && a <= at && at < b) {
      found = a;
      done = true;
    }
  });
  return found;
}

void Profile::grow(NodeIndex n) {
  const std::uint32_t newCapacity = capacity_[n] * 2;
  const auto moved = static_cast<std::uint32_t>(steps_.size());
  steps_.resize(steps_.size() + newCapacity);
  std::copy_n(steps_.begin() + start_[n], length_[n], steps_.begin() + moved);
  start_[n] = moved;
  capacity_[n] = newCapacity;
}

std::size_t Profile::split(NodeIndex n, Time at) {
  const std::span<const Step> s = steps(n);
  // The last step starting at or before `at` (the first step starts at now <= at).
  auto it = std::upper_bound(s.begin(), s.end(), at,
                             [](Time t, const Step& step) { return t < step.at; });
  const auto i = static_cast<std::size_t>(it - s.begin()) - 1;
  if (s[i].at == at) return i;
  if (length_[n] == capacity_[n]) grow(n);
  Step* base = steps_.data() + start_[n];
  std::copy_backward(base + i + 1, base + length_[n], base + length_[n] + 1);
  base[i + 1] = {at, base[i].free};
  ++length_[n];
  return i + 1;
}

void Profile::reserve(NodeIndex n, Time from, Time to, const Amount& amount) {
  from = std::max(from, now_);
  if (to <= from) return;
  const std::size_t first = split(n, from);
  const std::size_t last = to >= kForever ? length_[n] : split(n, to);
  Step* base = steps_.data() + start_[n];
  for (std::size_t i = first; i < last; ++i) {
    base[i].free.amount -= amount;
    ++base[i].free.jobs;
  }
  head_[n] = base[0].free;
}

}  // namespace kubeslurm::core
