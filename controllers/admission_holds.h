// Jobs held out of the plan for what the objects alone do not show, and the policy that puts
// them there (the job controller's side of DESIGN.md invariant 7: no object stops the
// scheduler).
//
//   pod check  A pending job's pods are built once per spec (uid, generation) and partition
//              (name, resourceVersion) before the job may hold nodes. A job whose pods cannot
//              be made (a template of the wrong shape, no image, a mount the partition does not
//              allow, anything that throws) waits as InvalidPodSpec until one of them changes.
//              A job that names several partitions (sbatch -p a,b) is checked in each: every
//              one must accept it, as the admission webhook required at submission.
//   refused    The API server refused a rank pod or the job's Service as written (400, 422, or
//              Pod Security's 403): InvalidPodSpec until the spec changes. The refusal is also
//              read back from the job's Valid condition (reason InvalidPodSpec, observed at
//              the current generation), so a new leader does not plan the job again.
//   backoff    Any other failed admission (5xx, 429, a conflict, a node gone): the job is not
//              planned for 10 s, doubling with each failure in a row up to 5 min.
//
//              check fails            API server refuses             other failure
//   (pending) -------------> held    <---------------- (admitted?) ----------------> backoff
//       ^                     |  spec or partition changes                              |
//       +---------------------+-------------------------------------- retry time passes +
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "controllers/snapshot.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

inline constexpr std::string_view kInvalidPodSpecReason = "InvalidPodSpec";
inline constexpr core::Duration kFirstAdmissionRetry = 10;
inline constexpr core::Duration kLastAdmissionRetry = 300;

// Whether an admission failed because of what the job asks for (the API server refused it as
// written) rather than for a reason that may pass.
bool refusedAsWritten(const Status& cause);

class AdmissionHolds {
 public:
  using PodCheck = std::function<Status(const api::SlurmJobObject&, const api::Partition&)>;

  // This cycle's holds, for buildSnapshot. Runs `check` for each pending job whose spec or
  // partition changed since its last check, and forgets the jobs that are gone.
  JobHolds holdsFor(const ClusterObjects& objects, core::Time now, const PodCheck& check);

  // An admission's outcome. A refusal as written returns the job's problem (InvalidPodSpec with
  // the API server's words); any other failure starts or lengthens the job's backoff.
  std::optional<JobProblem> failed(const api::SlurmJobObject& job, const Status& cause,
                                   core::Time now);
  void succeeded(const std::string& key);

  // Leadership ended: another leader decides from the objects alone.
  void reset();

 private:
  struct Check {
    std::string uid;
    std::int64_t generation = 0;
    std::string partitions;  // "name@resourceVersion," of each partition the job names
    Status result;
  };
  struct Backoff {
    std::uint32_t failures = 0;
    core::Time retryAfter = 0;
  };
  struct Refusal {
    std::string uid;
    std::int64_t generation = 0;
    JobProblem problem;
  };

  std::map<std::string, Check> checks_;
  std::map<std::string, Backoff> backoffs_;
  std::map<std::string, Refusal> refusals_;
};

}  // namespace kubeslurm::controllers
