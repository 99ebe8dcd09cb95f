// A job's finished steps, carried from the rank-0 pod to the SlurmJob's status. PURE.
//
// srun reports each step it ran to rank 0's agent (kubeslurm/step/step.proto RecordStep); when the
// script ends, the batch launcher writes them as the container's termination message (the file
// at terminationMessagePath, which the kubelet copies into the terminated state's `message`,
// at most 4096 bytes); the operator decodes them into status.steps, and sacct prints them as
// Slurm's N.0, N.1 ... lines. The message is written inside the user's container, so the
// operator reads it as untrusted input: decode() refuses anything malformed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::step {

struct StepRecord {
  std::uint32_t stepId = 0;
  std::string name;      // srun -J, else the command's base name
  std::string nodelist;  // compressed hostlist
  std::uint32_t nnodes = 0;
  std::uint32_t ntasks = 0;
  std::uint32_t cpus = 0;
  std::int64_t startTime = 0;  // Unix seconds
  std::int64_t endTime = 0;
  std::int32_t exitCode = 0;
  std::int32_t signal = 0;
  std::string state;  // COMPLETED, FAILED or CANCELLED
  bool operator==(const StepRecord&) const = default;
};

// What the kubelet keeps of a termination message.
inline constexpr std::size_t kTerminationMessageLimit = 4096;
// Where Kubernetes puts it unless the pod says otherwise; KUBESLURM_TERMINATION_LOG overrides.
inline constexpr std::string_view kTerminationMessagePath = "/dev/termination-log";
inline constexpr std::string_view kTerminationLogVariable = "KUBESLURM_TERMINATION_LOG";

struct StepRecords {
  std::vector<StepRecord> steps;
  std::uint32_t dropped = 0;  // steps left out to stay within the limit
};

// {"steps":[{"id":0,"name":...}],"dropped":N} within `maxBytes`: the first steps are kept.
std::string encodeStepRecords(const std::vector<StepRecord>& steps,
                              std::size_t maxBytes = kTerminationMessageLimit);
// kInvalidArgument for anything but what encode writes (types, states, sizes checked).
StatusOr<StepRecords> decodeStepRecords(std::string_view text);

}  // namespace kubeslurm::step
