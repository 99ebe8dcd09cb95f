// Where srun reaches a rank's step agent. srun resolves the rank's name itself, with the C
// library's resolver, as Slurm's srun resolves node names (slurm_set_addr: getaddrinfo): it reads
// /etc/hosts, nsswitch.conf and resolv.conf's search domains as every other program in the pod
// does. gRPC's default resolver (c-ares) asks DNS servers only, so a name in /etc/hosts waited
// for DNS timeouts (9 s per srun in a root filesystem without a DNS server).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "kubeslurm/base/status.h"

namespace kubeslurm::inpod {

// "HOST:PORT" (HOST a name, an IPv4 address or a bracketed IPv6 one) -> a gRPC target that names
// every address HOST has ("ipv4:10.0.0.7:6818", "ipv6:[fd00::7]:6818", comma-separated when
// several). A name that does not resolve yet (a rank pod whose DNS record is not published yet)
// is asked again until `deadline`; then kNotFound with Slurm's message, `Unable to resolve
// "HOST": <gai_strerror>`.
StatusOr<std::string> resolveAgentAddress(std::string_view hostPort,
                                          std::chrono::steady_clock::time_point deadline);

}  // namespace kubeslurm::inpod
