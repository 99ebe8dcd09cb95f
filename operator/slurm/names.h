// Job states and pending reasons with the names and short codes Slurm 22.05 prints
// (squeue %t / %T, scontrol JobState= / Reason=, sacct State).
#pragma once

#include <optional>
#include <string_view>

namespace kubeslurm::slurm {

enum class JobState {
  kPending,
  kRunning,
  kSuspended,
  kCompleting,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kPreempted,
  kNodeFail,
  kBootFail,
  kDeadline,
  kOutOfMemory,
  kRequeued,
  kRequeueHold,
  kRequeueFed,
  kResizing,
  kRevoked,
  kSignaling,
  kSpecialExit,
  kStageOut,
  kStopped,
  kConfiguring,
  kResvDelHold,
};

std::string_view jobStateName(JobState state);       // "PENDING"
std::string_view jobStateShortName(JobState state);  // "PD"
// Accepts the long or short name, case-insensitive (squeue -t pd,running).
std::optional<JobState> parseJobState(std::string_view text);
bool isFinished(JobState state);  // a terminal state: nothing will run for this job again

enum class PendingReason {
  kNone,
  kPriority,
  kResources,
  kDependency,
  kDependencyNeverSatisfied,
  kBeginTime,
  kJobHeldUser,
  kJobHeldAdmin,
  kJobArrayTaskLimit,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kPartitionConfig,
  kPartitionDown,
  kPartitionInactive,
  kReqNodeNotAvail,
  kNodeDown,
  kBadConstraints,
  kInvalidAccount,
  kInvalidQOS,
  kQOSMaxGRESPerUser,
  kQOSMaxGRESPerJob,
  kQOSMaxNodePerJobLimit,
  kQOSMaxWallDurationPerJobLimit,
  kAssocGrpGRES,
  kAssocMaxJobsLimit,
  kAssocGrpNodeLimit,
  kLicenses,
  kReservation,
  kDeadLine,
  kAccountNotAllowed,
  kSystemFailure,
  kCleaning,
  kPreempted,
};

std::string_view pendingReasonName(PendingReason reason);  // "Resources"
std::optional<PendingReason> parsePendingReason(std::string_view text);

}  // namespace kubeslurm::slurm
