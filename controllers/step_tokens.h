// The step tokens of jobs' rank pods, derived rather than stored. srun presents a job's token to
// its ranks' agents; a login host's srun never holds it: the operator's step proxy adds it to
// each call it forwards. The operator may not read Secrets (least privilege), and a new leader
// must still reach the jobs an earlier one started, so the token of an attempt is a keyed hash of
// what names it:
//   hex(HMAC-SHA256(key, "<namespace>/<SlurmJob uid>/<attempt>"))
// The key comes from a file the chart mounts from a Secret of its own (--step-token-key-file),
// the same for every replica; without one, a random key for this process's life (a restarted
// operator cannot proxy to jobs started before: their srun inside the job still works).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kubeslurm/base/status.h"

namespace kubeslurm::controllers {

class StepTokens {
 public:
  // The key is the file's bytes, at least 32 of them (trailing newlines trimmed).
  static StatusOr<StepTokens> fromKeyFile(const std::string& path);
  static StatusOr<StepTokens> randomKey();
  // Error: a key shorter than 32 bytes.
  static StatusOr<StepTokens> fromKey(std::string key);

  std::string tokenFor(std::string_view namespaceName, std::string_view jobUid,
                       std::uint32_t attempt) const;

 private:
  explicit StepTokens(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

}  // namespace kubeslurm::controllers
