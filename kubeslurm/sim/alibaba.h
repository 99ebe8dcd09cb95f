// Alibaba's GPU cluster trace v2023 (alibaba/clusterdata, cluster-trace-gpu-v2023): a pod list
//   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
//   deletion_time,scheduled_time
// and a node list
//   sn,cpu_milli,memory_mib,gpu,model
// Columns are found by their header names, so reordered or extra columns are accepted; fields
// are plain (no CSV quoting, which the trace does not use).
//
// GPU sharing. A pod with gpu_milli < 1000 asks for that fraction of one GPU; the core places
// whole GPUs only (core::Resources::gpus), so such a pod is given one whole GPU: TraceJob::gpus
// is 1 and TraceJob::gpuMilli keeps what it asked for. The replay therefore overstates GPU
// demand for sharing pods: the scheduler sees them as exclusive GPU users, the way a cluster
// without a GPU-sharing device plugin would run them. Pods with num_gpu 0 are CPU-only tasks and
// ask only for CPU and memory.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/sim/trace.h"

namespace kubeslurm::sim {

struct AlibabaOptions {
  std::size_t maxRecords = 0;  // read only the first this many pods (0: all)
};

// A pod's submit time is creation_time, its run time deletion_time - scheduled_time. Pods the
// trace never scheduled (empty scheduled_time: deleted while pending) have no run time and are
// skipped and counted in Trace::notes. A pod list without creation_time and deletion_time (the
// multigpu50 variant is a static snapshot) is an error: there is nothing to replay in time.
// Errors name the line: "alibaba pod list line 7: num_gpu is not a number: \"x\"".
StatusOr<Trace> parseAlibabaPods(std::string_view csv, const AlibabaOptions& options = {});

// The node list; errors name the line as above ("alibaba node list line 3: ...").
StatusOr<std::vector<TraceNode>> parseAlibabaNodes(std::string_view csv);

}  // namespace kubeslurm::sim
