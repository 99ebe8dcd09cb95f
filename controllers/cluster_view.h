// Informer caches -> ReconcileInput, decoding each object once per resourceVersion.
//
// Decoding every cached pod on every cycle would cost the scheduling loop time proportional to
// the cluster (about 30 µs per pod), although between two cycles few objects change. The view
// keeps each decoded object with the resourceVersion it was decoded from and decodes again only
// what changed; objects gone from the caches are dropped from it.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "controllers/reconciler.h"
#include "kubeslurm/kube/object_store.h"

namespace kubeslurm::controllers {

struct ViewStats {
  std::size_t decoded = 0;  // objects decoded by the last read()
  std::size_t reused = 0;   // objects taken from the view unchanged
  std::size_t failed = 0;   // objects that did not decode (undecodable jobs are reported)
};

class ClusterView {
 public:
  // Not thread-safe: one reader (the scheduling loop).
  ReconcileInput read(const kube::ObjectStore& nodes, const kube::ObjectStore& pods,
                      const kube::ObjectStore& jobs, const kube::ObjectStore& partitions,
                      const kube::ObjectStore& accounts);
  ViewStats stats() const { return stats_; }

 private:
  template <typename T>
  using Cache = std::map<std::string, std::pair<std::string, T>>;  // key -> (rv, decoded)

  Cache<api::Node> nodes_;
  Cache<api::Pod> pods_;
  Cache<api::SlurmJobObject> jobs_;
  Cache<api::Partition> partitions_;
  Cache<api::Account> accounts_;
  ViewStats stats_;
};

}  // namespace kubeslurm::controllers
