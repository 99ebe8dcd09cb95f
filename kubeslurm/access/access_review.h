// Who may call the query API. Callers present their Kubernetes bearer token; the API server
// says whose it is (TokenReview) and what they may do (SubjectAccessReview), so the operator
// holds no user database and RBAC stays the one place access is granted: a user who may list
// SlurmJobs in a namespace may see that namespace's priorities.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kubeslurm/base/bounded_cache.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/clock.h"

namespace kubeslurm::access {

struct Identity {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// What a call needs, as a SubjectAccessReview's resourceAttributes.
struct Permission {
  std::string verb;           // "list"
  std::string group;          // "kubeslurm.io"
  std::string resource;       // "slurmjobs"
  std::string namespaceName;  // "" for a cluster-scoped check
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  // kUnauthenticated for a token the API server does not accept.
  virtual StatusOr<Identity> authenticate(const std::string& token) = 0;
  // kPermissionDenied with the API server's reason when RBAC says no.
  virtual Status authorize(const Identity& caller, const Permission& permission) = 0;
};

// The real one: TokenReview and SubjectAccessReview through the operator's own client, which
// needs RBAC to create both (the chart binds system:auth-delegator). Answers are cached for
// `ttl` (kube-rbac-proxy does the same) so that a CLI polling squeue --start costs the API
// server one review per ttl, not one per call; a refusal is cached for a shorter time so that a
// new RoleBinding takes effect quickly. A string that cannot be a token (empty, over 16 KiB, or
// with a byte outside printable ASCII) is refused without asking (security review H3: every
// review of a flood's garbage went through the API server).
class KubeAuthorizer final : public Authorizer {
 public:
  static constexpr std::size_t kMaxCachedTokens = 4096;
  static constexpr std::size_t kMaxCachedDecisions = 16384;

  explicit KubeAuthorizer(kube::Writer& writer, std::chrono::seconds ttl = std::chrono::seconds(10),
                          kube::Clock& clock = kube::steadyClock());

  StatusOr<Identity> authenticate(const std::string& token) override;
  Status authorize(const Identity& caller, const Permission& permission) override;

 private:
  kube::Writer& writer_;
  std::chrono::seconds ttl_;
  kube::Clock& clock_;
  std::mutex mutex_;
  // By a SHA-256 of the token (the operator keeps no caller's credential in memory), and by the
  // whole identity and permission; at most kMaxCachedTokens and kMaxCachedDecisions.
  BoundedCache<StatusOr<Identity>, kube::Clock::TimePoint> tokens_;
  BoundedCache<Status, kube::Clock::TimePoint> decisions_;
};

}  // namespace kubeslurm::access
