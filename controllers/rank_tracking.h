// Rank pods are made with the kubeslurm.io/job-tracking finalizer (podspec::kJobTrackingFinalizer),
// so that the end of a rank cannot vanish before its job has recorded it: a pod deleted while no
// operator runs (by a user, a garbage collector, a namespace cleanup) stays, finished, until a
// leader has read it. Without it a COMPLETED job whose pods were deleted during an outage looked
// like a gang that lost its ranks, and ran again. Kubernetes' Job controller keeps its pods the
// same way (batch.kubernetes.io/job-tracking, KEP-2307).
//
//   created ──► bound ──► running ──► finished ─┬─► claimed: kept while the job still needs
//   (with the finalizer)                or      │   its outcome (RUNNING, or PENDING with its
//                                    deleting   │   whole gang bound, at this attempt)
//                                               └─► released: finalizer removed; a deleting
//                                                   pod then goes at once
//
// Only a pod that is finished or being deleted is ever released, so a live gang is never
// touched. What the operator deletes is either of an attempt the job has left, of a job that
// has ended or gone back to the queue (REQUEUED), or of a gang that never ran whole: all of those
// are unclaimed, so the next cycle releases them. The gang binder's rollbacks release their
// pods at once, before the delete, so that a rolled-back gang is gone without waiting for one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/shared_list.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/slurmjob.h"

namespace kubeslurm::controllers {

// One pod whose finalizer may go, with what the patch needs.
struct TrackingRelease {
  std::string namespaceName;
  std::string name;
  std::string resourceVersion;         // the patch's precondition: as seen, or 409
  std::vector<std::string> remaining;  // the pod's other finalizers, kept
  bool operator==(const TrackingRelease&) const = default;
};

// The release of `pod`'s finalizer; nullopt when it carries none.
std::optional<TrackingRelease> trackingRelease(const api::Pod& pod);

// PURE. The rank pods carrying the finalizer that are finished (Succeeded, Failed) or being
// deleted and whose outcome no job claims, sorted by namespace and name. Unclaimed:
//  - the job is gone (no SlurmJob of that name, or one with another uid than the pod's owner);
//  - the pod's attempt label is not the job's status.restarts (the job has moved on), or
//    does not parse;
//  - the job has finished (its end is recorded);
//  - the pod was never bound (it ran nothing);
//  - the job is neither RUNNING nor PENDING (REQUEUED: its gang was rolled back), or PENDING
//    with this attempt's gang incomplete (it never ran whole, so it has no outcome).
std::vector<TrackingRelease> rankPodsToRelease(const SharedList<api::Pod>& pods,
                                               const SharedList<api::SlurmJobObject>& jobs);

// The JSON merge patch (RFC 7386) that releases it: the remaining finalizers (null for none)
// and the resourceVersion, so that a pod changed since it was seen is not patched (409).
api::Json releasePatch(const TrackingRelease& release);

}  // namespace kubeslurm::controllers
