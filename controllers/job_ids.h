// Numeric Slurm job ids (what `sbatch --parsable` prints), never reused (DESIGN.md invariant 5).
//
// The high-water mark lives in a ConfigMap (data.next: the first id no operator has handed
// out). The allocator reserves a block of ids with one resourceVersion-guarded update and then
// hands them out from memory, so a burst of submissions costs one write per block, not one per
// job. An operator that restarts skips the rest of its block: ids stay unique and increasing,
// with gaps, as Slurm's own ids have gaps when submissions fail.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"

namespace kubeslurm::controllers {

inline constexpr std::string_view kJobIdConfigMap = "kubeslurm-job-ids";

struct JobIdOptions {
  std::string namespaceName;  // the operator's namespace
  std::string configMapName = std::string(kJobIdConfigMap);
  std::int64_t firstJobId = 1;  // slurm.conf FirstJobId
  std::int64_t blockSize = 100;
  int maxConflictRetries = 20;  // another writer raced us this many times in a row: give up
};

class JobIdAllocator {
 public:
  JobIdAllocator(kube::Reader& reader, kube::Writer& writer, JobIdOptions options);

  // The next id. Errors are the API server's (kUnavailable...), kAborted after too many
  // conflicting writers, kDataLoss if the ConfigMap holds something that is not a counter.
  StatusOr<std::int64_t> next();

 private:
  Status reserveBlock();

  kube::Reader& reader_;
  kube::Writer& writer_;
  JobIdOptions options_;
  std::mutex mutex_;
  std::int64_t nextInBlock_ = 0;
  std::int64_t blockEnd_ = 0;  // exclusive
};

}  // namespace kubeslurm::controllers
