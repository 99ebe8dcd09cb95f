// Job states and pending reasons with the names and short codes Slurm 22.05 prints
// (squeue %t / %T, scontrol JobState= / Reason=, sacct State).
//
// Source of truth: src/common/slurm_protocol_defs.c (job_state_string,
// job_state_string_compact, job_state_num, job_reason_string, job_reason_num). A Slurm job
// state is a base state plus flags, and those printers show the first set flag (COMPLETING,
// STAGE_OUT, CONFIGURING, RESIZING, REQUEUED, ...) in place of the base state; each value
// below is one such printed state.
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
// Accepts the long or short name, case-insensitive (squeue -t pd,running), as job_state_num.
// squeue's "all" is the caller's to handle.
std::optional<JobState> parseJobState(std::string_view text);
// A terminal state: nothing will run for this job again unless it is requeued (Slurm's
// IS_JOB_FINISHED: COMPLETED, CANCELLED, FAILED, TIMEOUT, PREEMPTED, NODE_FAIL, BOOT_FAIL,
// DEADLINE, OUT_OF_MEMORY; REVOKED too, as a federation sibling that will never run here).
bool isFinished(JobState state);

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
  // Slurm 22.05 has no "Preempted" reason: a preempted and requeued batch job pends with its
  // begin time pushed past the credential lifetime (batch_requeue_fini), so squeue shows
  // "(BeginTime)". kPreempted prints that; parsing "BeginTime" gives kBeginTime.
  kPreempted,
  // More of job_reason_string's list: limits, holds and failure reasons that a scheduler on
  // Kubernetes reports too.
  kProlog,
  kQOSNotAllowed,
  kQOSUsageThreshold,
  kQOSJobLimit,
  kQOSResourceLimit,
  kQOSTimeLimit,
  kQOSGrpGRES,
  kQOSGrpJobsLimit,
  kQOSGrpNodeLimit,
  kQOSGrpSubmitJobsLimit,
  kQOSMaxGRESPerNode,
  kQOSMaxJobsPerUserLimit,
  kQOSMaxNodePerUserLimit,
  kQOSMaxSubmitJobPerUserLimit,
  kAssociationJobLimit,
  kAssociationResourceLimit,
  kAssociationTimeLimit,
  kAssocGrpJobsLimit,
  kAssocGrpSubmitJobsLimit,
  kAssocGrpWallLimit,
  kAssocGrpGRESMinutes,
  kAssocGrpGRESRunMinutes,
  kAssocMaxGRESPerJob,
  kAssocMaxGRESPerNode,
  kAssocMaxNodePerJobLimit,
  kAssocMaxWallDurationPerJobLimit,
  kAssocMaxSubmitJobLimit,
  kAccountingPolicy,
  kJobHoldMaxRequeue,
  kReservationDeleted,
  kSchedDefer,
  kMaxMemPerLimit,
  // Why a job ended (scontrol Reason= of a finished job).
  kNonZeroExitCode,
  kTimeLimit,
  kJobLaunchFailure,
  kOutOfMemory,
  kInactiveLimit,
};

std::string_view pendingReasonName(PendingReason reason);  // "Resources"
// Case-insensitive, as job_reason_num.
std::optional<PendingReason> parsePendingReason(std::string_view text);

// A signal as Slurm's commands read one (src/common/proc_args.c sig_name2num, for scancel -s,
// sbatch --signal, salloc --kill-command): a number (C's strtol, blanks after it allowed), or a
// name of signals_mapping with or without "SIG", any case, blanks around it; 0 when neither.
int signalNumber(std::string_view text);
// sig_num2name: "TERM" for 15; empty for a number signals_mapping does not name.
std::string_view signalName(int number);

}  // namespace kubeslurm::slurm
