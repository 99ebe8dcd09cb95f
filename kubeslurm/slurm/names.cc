#include "kubeslurm/slurm/names.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "kubeslurm/base/text.h"

namespace kubeslurm::slurm {
namespace {

struct StateNames {
  JobState state;
  std::string_view name;       // job_state_string
  std::string_view shortName;  // job_state_string_compact
};

// Base states first, then the flag states, in job_state_num's search order.
constexpr auto kStateNames = std::to_array<StateNames>({
    {JobState::kPending, "PENDING", "PD"},
    {JobState::kRunning, "RUNNING", "R"},
    {JobState::kSuspended, "SUSPENDED", "S"},
    {JobState::kCompleted, "COMPLETED", "CD"},
    {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kFailed, "FAILED", "F"},
    {JobState::kTimeout, "TIMEOUT", "TO"},
    {JobState::kNodeFail, "NODE_FAIL", "NF"},
    {JobState::kPreempted, "PREEMPTED", "PR"},
    {JobState::kBootFail, "BOOT_FAIL", "BF"},
    {JobState::kDeadline, "DEADLINE", "DL"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
    {JobState::kCompleting, "COMPLETING", "CG"},
    {JobState::kConfiguring, "CONFIGURING", "CF"},
    {JobState::kResizing, "RESIZING", "RS"},
    {JobState::kResvDelHold, "RESV_DEL_HOLD", "RD"},
    {JobState::kRequeued, "REQUEUED", "RQ"},
    {JobState::kRequeueFed, "REQUEUE_FED", "RF"},
    {JobState::kRequeueHold, "REQUEUE_HOLD", "RH"},
    {JobState::kRevoked, "REVOKED", "RV"},
    {JobState::kSignaling, "SIGNALING", "SI"},
    {JobState::kSpecialExit, "SPECIAL_EXIT", "SE"},
    {JobState::kStageOut, "STAGE_OUT", "SO"},
    {JobState::kStopped, "STOPPED", "ST"},
});

struct ReasonName {
  PendingReason reason;
  std::string_view name;  // job_reason_string
};

// kBeginTime comes before kPreempted so that parsing "BeginTime" finds kBeginTime.
// Slurm's WAIT_PART_DOWN and FAIL_DOWN_PARTITION both print "PartitionDown": one value here.
constexpr auto kReasonNames = std::to_array<ReasonName>({
    {PendingReason::kNone, "None"},
    {PendingReason::kPriority, "Priority"},
    {PendingReason::kResources, "Resources"},
    {PendingReason::kDependency, "Dependency"},
    {PendingReason::kDependencyNeverSatisfied, "DependencyNeverSatisfied"},
    {PendingReason::kBeginTime, "BeginTime"},
    {PendingReason::kJobHeldUser, "JobHeldUser"},
    {PendingReason::kJobHeldAdmin, "JobHeldAdmin"},
    {PendingReason::kJobArrayTaskLimit, "JobArrayTaskLimit"},
    {PendingReason::kPartitionTimeLimit, "PartitionTimeLimit"},
    {PendingReason::kPartitionNodeLimit, "PartitionNodeLimit"},
    {PendingReason::kPartitionConfig, "PartitionConfig"},
    {PendingReason::kPartitionDown, "PartitionDown"},
    {PendingReason::kPartitionInactive, "PartitionInactive"},
    {PendingReason::kReqNodeNotAvail, "ReqNodeNotAvail"},
    {PendingReason::kNodeDown, "NodeDown"},
    {PendingReason::kBadConstraints, "BadConstraints"},
    {PendingReason::kInvalidAccount, "InvalidAccount"},
    {PendingReason::kInvalidQOS, "InvalidQOS"},
    {PendingReason::kQOSMaxGRESPerUser, "QOSMaxGRESPerUser"},
    {PendingReason::kQOSMaxGRESPerJob, "QOSMaxGRESPerJob"},
    {PendingReason::kQOSMaxNodePerJobLimit, "QOSMaxNodePerJobLimit"},
    {PendingReason::kQOSMaxWallDurationPerJobLimit, "QOSMaxWallDurationPerJobLimit"},
    {PendingReason::kAssocGrpGRES, "AssocGrpGRES"},
    {PendingReason::kAssocMaxJobsLimit, "AssocMaxJobsLimit"},
    {PendingReason::kAssocGrpNodeLimit, "AssocGrpNodeLimit"},
    {PendingReason::kLicenses, "Licenses"},
    {PendingReason::kReservation, "Reservation"},
    {PendingReason::kDeadLine, "DeadLine"},
    {PendingReason::kAccountNotAllowed, "AccountNotAllowed"},
    {PendingReason::kSystemFailure, "SystemFailure"},
    {PendingReason::kCleaning, "Cleaning"},
    {PendingReason::kPreempted, "BeginTime"},
    {PendingReason::kProlog, "Prolog"},
    {PendingReason::kQOSNotAllowed, "QOSNotAllowed"},
    {PendingReason::kQOSUsageThreshold, "QOSUsageThreshold"},
    {PendingReason::kQOSJobLimit, "QOSJobLimit"},
    {PendingReason::kQOSResourceLimit, "QOSResourceLimit"},
    {PendingReason::kQOSTimeLimit, "QOSTimeLimit"},
    {PendingReason::kQOSGrpGRES, "QOSGrpGRES"},
    {PendingReason::kQOSGrpJobsLimit, "QOSGrpJobsLimit"},
    {PendingReason::kQOSGrpNodeLimit, "QOSGrpNodeLimit"},
    {PendingReason::kQOSGrpSubmitJobsLimit, "QOSGrpSubmitJobsLimit"},
    {PendingReason::kQOSMaxGRESPerNode, "QOSMaxGRESPerNode"},
    {PendingReason::kQOSMaxJobsPerUserLimit, "QOSMaxJobsPerUserLimit"},
    {PendingReason::kQOSMaxNodePerUserLimit, "QOSMaxNodePerUserLimit"},
    {PendingReason::kQOSMaxSubmitJobPerUserLimit, "QOSMaxSubmitJobPerUserLimit"},
    {PendingReason::kAssociationJobLimit, "AssociationJobLimit"},
    {PendingReason::kAssociationResourceLimit, "AssociationResourceLimit"},
    {PendingReason::kAssociationTimeLimit, "AssociationTimeLimit"},
    {PendingReason::kAssocGrpJobsLimit, "AssocGrpJobsLimit"},
    {PendingReason::kAssocGrpSubmitJobsLimit, "AssocGrpSubmitJobsLimit"},
    {PendingReason::kAssocGrpWallLimit, "AssocGrpWallLimit"},
    {PendingReason::kAssocGrpGRESMinutes, "AssocGrpGRESMinutes"},
    {PendingReason::kAssocGrpGRESRunMinutes, "AssocGrpGRESRunMinutes"},
    {PendingReason::kAssocMaxGRESPerJob, "AssocMaxGRESPerJob"},
    {PendingReason::kAssocMaxGRESPerNode, "AssocMaxGRESPerNode"},
    {PendingReason::kAssocMaxNodePerJobLimit, "AssocMaxNodePerJobLimit"},
    {PendingReason::kAssocMaxWallDurationPerJobLimit, "AssocMaxWallDurationPerJobLimit"},
    {PendingReason::kAssocMaxSubmitJobLimit, "AssocMaxSubmitJobLimit"},
    {PendingReason::kAccountingPolicy, "AccountingPolicy"},
    {PendingReason::kJobHoldMaxRequeue, "JobHoldMaxRequeue"},
    {PendingReason::kReservationDeleted, "ReservationDeleted"},
    {PendingReason::kSchedDefer, "SchedDefer"},
    {PendingReason::kMaxMemPerLimit, "MaxMemPerLimit"},
    {PendingReason::kNonZeroExitCode, "NonZeroExitCode"},
    {PendingReason::kTimeLimit, "TimeLimit"},
    {PendingReason::kJobLaunchFailure, "JobLaunchFailure"},
    {PendingReason::kOutOfMemory, "OutOfMemory"},
    {PendingReason::kInactiveLimit, "InactiveLimit"},
});

const StateNames& namesOf(JobState state) {
  for (const StateNames& names : kStateNames) {
    if (names.state == state) return names;
  }
  return kStateNames[0];  // unreachable: every enumerator is in the table (see the tests)
}

}  // namespace

std::string_view jobStateName(JobState state) { return namesOf(state).name; }

std::string_view jobStateShortName(JobState state) { return namesOf(state).shortName; }

std::optional<JobState> parseJobState(std::string_view text) {
  for (const StateNames& names : kStateNames) {
    if (equalsIgnoreCase(text, names.name) || equalsIgnoreCase(text, names.shortName)) {
      return names.state;
    }
  }
  return std::nullopt;
}

bool isFinished(JobState state) {
  switch (state) {
    case JobState::kCompleted:
    case JobState::kCancelled:
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kPreempted:
    case JobState::kNodeFail:
    case JobState::kBootFail:
    case JobState::kDeadline:
    case JobState::kOutOfMemory:
    case JobState::kRevoked:
      return true;
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
    case JobState::kRequeued:
    case JobState::kRequeueHold:
    case JobState::kRequeueFed:
    case JobState::kResizing:
    case JobState::kSignaling:
    case JobState::kSpecialExit:
    case JobState::kStageOut:
    case JobState::kStopped:
    case JobState::kConfiguring:
    case JobState::kResvDelHold:
      return false;
  }
  return false;
}

std::string_view pendingReasonName(PendingReason reason) {
  for (const ReasonName& entry : kReasonNames) {
    if (entry.reason == reason) return entry.name;
  }
  return "None";  // unreachable: every enumerator is in the table (see the tests)
}

std::optional<PendingReason> parsePendingReason(std::string_view text) {
  for (const ReasonName& entry : kReasonNames) {
    if (equalsIgnoreCase(text, entry.name)) return entry.reason;
  }
  return std::nullopt;
}

namespace {

// signals_mapping[] in proc_args.c, in its order (the first name that fits wins).
struct SignalName {
  std::string_view name;
  int number;
};
constexpr std::array<SignalName, 16> kSignals = {{
    {"HUP", 1},
    {"INT", 2},
    {"QUIT", 3},
    {"ABRT", 6},
    {"KILL", 9},
    {"ALRM", 14},
    {"TERM", 15},
    {"USR1", 10},
    {"USR2", 12},
    {"URG", 23},
    {"CONT", 18},
    {"STOP", 19},
    {"TSTP", 20},
    {"TTIN", 21},
    {"TTOU", 22},
    {"XCPU", 24},
}};

}  // namespace

std::string_view signalName(int number) {
  for (const SignalName& signal : kSignals) {
    if (signal.number == number) return signal.name;
  }
  return {};
}

int signalNumber(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  const auto onlyBlanks = [&](std::string_view rest) {
    return std::all_of(rest.begin(), rest.end(), blank);
  };
  const std::string copy(text);
  char* end = nullptr;
  const long number = std::strtol(copy.c_str(), &end, 10);
  if (end != copy.c_str()) {
    return onlyBlanks(std::string_view(end)) ? static_cast<int>(number) : 0;
  }
  std::string_view name = text;
  while (!name.empty() && blank(name.front())) name.remove_prefix(1);
  if (startsWithIgnoreCase(name, "SIG")) name.remove_prefix(3);
  for (const SignalName& signal : kSignals) {
    if (startsWithIgnoreCase(name, signal.name) && onlyBlanks(name.substr(signal.name.size()))) {
      return signal.number;
    }
  }
  return 0;
}

}  // namespace kubeslurm::slurm
