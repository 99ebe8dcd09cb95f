// Who submitted a job, as Slurm shows them. Kubernetes identities are long ("system:
// serviceaccount:team-a:trainer", "oidc:alice@example.com"); Slurm's are POSIX user names. The
// full identity is kept in the object (spec.submitter); squeue, sacct and SLURM_JOB_USER show
// the short name. PURE.
#pragma once

#include <string>
#include <string_view>

namespace kubeslurm::access {

// The Slurm user name of a Kubernetes user name:
//   system:serviceaccount:<ns>:<name>  ->  <name>
//   <prefix>:<user>                    ->  <user>   (an authenticator's username prefix)
//   <issuer>#<subject>                 ->  <subject> (OIDC without a username claim)
//   <user>@<domain>                    ->  <user>
// Characters outside [A-Za-z0-9._-] become '_'; at most 64 characters; "nobody" when nothing is
// left. Two identities can share a short name (ServiceAccount "ci" in two namespaces): they
// share it as Slurm user too, and the full identity tells them apart.
std::string slurmUserName(std::string_view username);

}  // namespace kubeslurm::access
