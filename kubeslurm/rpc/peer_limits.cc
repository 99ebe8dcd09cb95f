#include "kubeslurm/rpc/peer_limits.h"

#include <algorithm>
#include <chrono>

namespace kubeslurm::rpc {

PeerRateLimiter::PeerRateLimiter(double ratePerSecond, double burst, std::size_t maxPeers)
    : ratePerSecond_(std::max(ratePerSecond, 1e-3)),
      burst_(std::max(burst, 1.0)),
      buckets_(maxPeers) {}

bool PeerRateLimiter::admit(const std::string& peer, kube::Clock::TimePoint now) {
  const std::lock_guard lock(mutex_);
  Bucket bucket{burst_, now};
  if (auto known = buckets_.get(peer, now)) {
    const double elapsed = std::chrono::duration<double>(now - known->last).count();
    bucket.tokens = std::min(burst_, known->tokens + std::max(elapsed, 0.0) * ratePerSecond_);
  }
  const bool admitted = bucket.tokens >= 1.0;
  if (admitted) bucket.tokens -= 1.0;
  // Kept until the bucket would be full again: past that, a new bucket is the same.
  const auto refill = std::chrono::duration_cast<kube::Clock::Duration>(
      std::chrono::duration<double>((burst_ - bucket.tokens) / ratePerSecond_));
  buckets_.put(peer, bucket, now + refill + std::chrono::seconds(1));
  return admitted;
}

std::string peerAddress(std::string_view grpcPeer) {
  std::string_view rest = grpcPeer;
  if (rest.starts_with("ipv4:")) {
    rest.remove_prefix(5);
    return std::string(rest.substr(0, rest.rfind(':')));
  }
  if (rest.starts_with("ipv6:")) {
    rest.remove_prefix(5);
    if (rest.starts_with('[')) {
      const std::size_t close = rest.find(']');
      return std::string(
          rest.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
    }
    return std::string(rest.substr(0, rest.rfind(':')));
  }
  return std::string(grpcPeer);
}

}  // namespace kubeslurm::rpc
