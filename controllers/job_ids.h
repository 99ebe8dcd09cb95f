// Numeric Slurm job ids (what `sbatch --parsable` prints), never reused (DESIGN.md invariant 5).
//
// The high-water mark lives in a ConfigMap (data.next: the first id no operator has handed
// out). The allocator reserves a block of ids with one resourceVersion-guarded update and then
// hands them out from memory, so a burst of submissions costs one write per block, not one per
// job. An operator that restarts skips the rest of its block: ids stay unique and increasing,
// with gaps, as Slurm's own ids have gaps when submissions fail.
//
// A missing counter (a new cluster, or someone deleted the ConfigMap) starts above the highest
// id any SlurmJob holds, never at FirstJobId again (security review M4: deleting the ConfigMap
// restarted ids at 1, and sacct, --dependency and scancel would have named two jobs by one id).
#pragma once

#include <cstdint>
#include <functional>
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
  // The highest job id in use (0 for none): read only when the counter is missing.
  std::function<std::int64_t()> highestIdInUse;
};

class JobIdAllocator {
 public:
  JobIdAllocator(kube::Reader& reader, kube::Writer& writer, JobIdOptions options);

  // The next id. Errors are the API server's (kUnavailable...), kAborted after too many
  // conflicting writers, kDataLoss if the ConfigMap holds something that is not a counter.
  StatusOr<std::int64_t> next();

  // The id next() would hand out now, without reserving it (sbatch --test-only prints one; a
  // what-if must not use up ids, nor cost a write). Errors as next()'s.
  StatusOr<std::int64_t> peek();

 private:
  Status reserveBlock();
  // Where a block read from `current` (the ConfigMap, or kNotFound) starts.
  StatusOr<std::int64_t> blockStart(const StatusOr<kube::Json>& current) const;

  kube::Reader& reader_;
  kube::Writer& writer_;
  JobIdOptions options_;
  std::mutex mutex_;
  std::int64_t nextInBlock_ = 0;
  std::int64_t blockEnd_ = 0;  // exclusive
};

}  // namespace kubeslurm::controllers
