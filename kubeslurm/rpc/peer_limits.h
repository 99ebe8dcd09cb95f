// How much one caller of the query API may ask, before anyone asks the API server who it is.
// Every call that reaches authentication may cost a TokenReview; a flood from one address must
// not (security review H3: ~3,000 calls a second starved the client that renews the Lease).
// Buckets are kept per peer address in a bounded cache: a flood from many addresses costs
// bounded memory, and an address forgotten comes back with a full bucket.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include "kubeslurm/base/bounded_cache.h"
#include "kubeslurm/kube/clock.h"

namespace kubeslurm::rpc {

// A token bucket per peer: `ratePerSecond` calls a second on average, `burst` at once.
class PeerRateLimiter {
 public:
  PeerRateLimiter(double ratePerSecond, double burst, std::size_t maxPeers = 4096);

  // Whether `peer` may make a call at `now` (and, if so, the call is counted).
  bool admit(const std::string& peer, kube::Clock::TimePoint now);

 private:
  struct Bucket {
    double tokens = 0;
    kube::Clock::TimePoint last;
  };
  double ratePerSecond_;
  double burst_;
  std::mutex mutex_;
  BoundedCache<Bucket, kube::Clock::TimePoint> buckets_;
};

// The address part of a gRPC peer string: "ipv4:10.0.0.1:5000" -> "10.0.0.1",
// "ipv6:[::1]:5000" -> "::1", "unix:/path" -> "unix:/path" (one bucket for a socket).
std::string peerAddress(std::string_view grpcPeer);

}  // namespace kubeslurm::rpc
