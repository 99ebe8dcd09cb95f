// Where the step proxy (kubeslurm/rpc/step_proxy.h) sends a login host's step calls: a running
// job's rank pod, as the operator's caches hold it, with the attempt's step token
// (controllers/step_tokens.h).
#pragma once

#include "controllers/step_tokens.h"
#include "kubeslurm/kube/informer.h"
#include "kubeslurm/rpc/step_proxy.h"

namespace kubeslurm::op {

// Only a pod that is the job's own rank is a target: its name, labels (job name, job id) and
// controller reference (the job's uid) all say so. The pod admission webhook keeps kubeslurm's
// labels to the operator; without it, a pod of that name that someone else made could not be
// told apart by its labels alone, so the owner reference must match too.
rpc::StepRouter stepRouter(const kube::Informer& jobs, const kube::Informer& pods,
                           const controllers::StepTokens& tokens);

}  // namespace kubeslurm::op
