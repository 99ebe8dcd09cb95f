#include "kubeslurm/slurm/names.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::slurm {
namespace {

struct StateCase {
  JobState state;
  std::string name;
  std::string shortName;
  bool finished;
};

// job_state_string / job_state_string_compact in src/common/slurm_protocol_defs.c (22.05),
// IS_JOB_FINISHED in slurm.h for the terminal ones.
const std::vector<StateCase>& stateCases() {
  static const std::vector<StateCase> kCases = {
      {JobState::kPending, "PENDING", "PD", false},
      {JobState::kRunning, "RUNNING", "R", false},
      {JobState::kSuspended, "SUSPENDED", "S", false},
      {JobState::kCompleting, "COMPLETING", "CG", false},
      {JobState::kCompleted, "COMPLETED", "CD", true},
      {JobState::kCancelled, "CANCELLED", "CA", true},
      {JobState::kFailed, "FAILED", "F", true},
      {JobState::kTimeout, "TIMEOUT", "TO", true},
      {JobState::kPreempted, "PREEMPTED", "PR", true},
      {JobState::kNodeFail, "NODE_FAIL", "NF", true},
      {JobState::kBootFail, "BOOT_FAIL", "BF", true},
      {JobState::kDeadline, "DEADLINE", "DL", true},
      {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM", true},
      {JobState::kRequeued, "REQUEUED", "RQ", false},
      {JobState::kRequeueHold, "REQUEUE_HOLD", "RH", false},
      {JobState::kRequeueFed, "REQUEUE_FED", "RF", false},
      {JobState::kResizing, "RESIZING", "RS", false},
      {JobState::kRevoked, "REVOKED", "RV", true},
      {JobState::kSignaling, "SIGNALING", "SI", false},
      {JobState::kSpecialExit, "SPECIAL_EXIT", "SE", false},
      {JobState::kStageOut, "STAGE_OUT", "SO", false},
      {JobState::kStopped, "STOPPED", "ST", false},
      {JobState::kConfiguring, "CONFIGURING", "CF", false},
      {JobState::kResvDelHold, "RESV_DEL_HOLD", "RD", false},
  };
  return kCases;
}

TEST(JobStateTest, PrintsSlurmsLongAndCompactNames) {
  // Every enumerator, in declaration order, so a new one without names fails here.
  ASSERT_EQ(stateCases().size(), static_cast<std::size_t>(JobState::kResvDelHold) + 1);
  for (const StateCase& c : stateCases()) {
    EXPECT_EQ(jobStateName(c.state), c.name);
    EXPECT_EQ(jobStateShortName(c.state), c.shortName) << c.name;
  }
}

TEST(JobStateTest, MatchesTheReferenceOutputs) {
  EXPECT_EQ(jobStateShortName(JobState::kPending), "PD");      // reference line 82: squeue ST
  EXPECT_EQ(jobStateShortName(JobState::kRunning), "R");       // reference line 83
  EXPECT_EQ(jobStateName(JobState::kRunning), "RUNNING");      // line 100: JobState=RUNNING
  EXPECT_EQ(jobStateName(JobState::kPending), "PENDING");      // line 195: JobState=PENDING
  EXPECT_EQ(jobStateName(JobState::kCompleted), "COMPLETED");  // line 207: sacct -c State
  EXPECT_EQ(jobStateName(JobState::kFailed), "FAILED");        // line 208
  EXPECT_EQ(jobStateName(JobState::kNodeFail), "NODE_FAIL");   // line 225
}

TEST(JobStateTest, ParsesLongOrShortNamesCaseInsensitivelyAsSqueueT) {
  // squeue -t goes through job_state_num: xstrcasecmp with either name.
  for (const StateCase& c : stateCases()) {
    EXPECT_EQ(parseJobState(c.name), c.state) << c.name;
    EXPECT_EQ(parseJobState(c.shortName), c.state) << c.shortName;
    std::string lower = c.name;
    for (char& ch : lower) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    EXPECT_EQ(parseJobState(lower), c.state) << lower;
  }
  EXPECT_EQ(parseJobState("pd"), JobState::kPending);
  EXPECT_EQ(parseJobState("Running"), JobState::kRunning);
  for (const std::string bad : {"", "P", "PEND", "all", "DONE", "COMPLETE", "PENDING "}) {
    EXPECT_EQ(parseJobState(bad), std::nullopt) << bad;
  }
}

TEST(JobStateTest, FinishedStatesAreSlurmsTerminalOnes) {
  for (const StateCase& c : stateCases()) EXPECT_EQ(isFinished(c.state), c.finished) << c.name;
}

struct ReasonCase {
  PendingReason reason;
  std::string name;
};

TEST(PendingReasonTest, PrintsJobReasonStringNames) {
  // job_reason_string in src/common/slurm_protocol_defs.c (22.05).
  const std::vector<ReasonCase> cases = {
      {PendingReason::kNone, "None"},              // reference line 100: Reason=None
      {PendingReason::kPriority, "Priority"},      // reference line 91
      {PendingReason::kResources, "Resources"},    // reference line 82
      {PendingReason::kDependency, "Dependency"},  // reference line 193
      {PendingReason::kDependencyNeverSatisfied, "DependencyNeverSatisfied"},  // line 192
      {PendingReason::kBeginTime, "BeginTime"},
      {PendingReason::kJobHeldUser, "JobHeldUser"},
      {PendingReason::kJobHeldAdmin, "JobHeldAdmin"},
      {PendingReason::kJobArrayTaskLimit, "JobArrayTaskLimit"},    // reference line 176
      {PendingReason::kPartitionTimeLimit, "PartitionTimeLimit"},  // reference line 91
      {PendingReason::kPartitionNodeLimit, "PartitionNodeLimit"},  // reference line 91
      {PendingReason::kPartitionConfig, "PartitionConfig"},        // reference line 91
      {PendingReason::kPartitionDown, "PartitionDown"},
      {PendingReason::kPartitionInactive, "PartitionInactive"},
      {PendingReason::kReqNodeNotAvail, "ReqNodeNotAvail"},  // reference line 91
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
      // No "Preempted" in 22.05: a requeued job waits out its begin time (batch_requeue_fini).
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
  };
  ASSERT_EQ(cases.size(), static_cast<std::size_t>(PendingReason::kInactiveLimit) + 1);
  for (const ReasonCase& c : cases) {
    EXPECT_EQ(pendingReasonName(c.reason), c.name);
    // job_reason_num is case-insensitive; "BeginTime" parses as kBeginTime.
    const PendingReason expected =
        c.reason == PendingReason::kPreempted ? PendingReason::kBeginTime : c.reason;
    EXPECT_EQ(parsePendingReason(c.name), expected) << c.name;
  }
}

TEST(PendingReasonTest, ParsesCaseInsensitivelyAndRejectsUnknownNames) {
  EXPECT_EQ(parsePendingReason("resources"), PendingReason::kResources);
  EXPECT_EQ(parsePendingReason("JOBARRAYTASKLIMIT"), PendingReason::kJobArrayTaskLimit);
  for (const std::string bad : {"", "Preempted", "Resource", "(Resources)", "None "}) {
    EXPECT_EQ(parsePendingReason(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace kubeslurm::slurm
