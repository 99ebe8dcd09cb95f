// The scontrol commands that need no controller: `show hostnames`, `show hostlist` and
// `show hostlistsorted`, printed as Slurm 22.05's scontrol prints them (stdout, stderr and
// exit code pinned against the real binary by tests/integration/slurm_diff). Shared by the
// CLI's scontrol and the in-pod tool's, so that a batch script's
// `scontrol show hostnames "$SLURM_JOB_NODELIST"` reads the same in a rank pod as on a login host.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "kubeslurm/base/status.h"

namespace kubeslurm::slurm {

// Slurm's xstrncasecmp(tag, name, n) == 0, how scontrol compares keywords: the first n
// characters agree ignoring case, where a string shorter than n ends in a NUL that must meet the
// other's NUL.
bool scontrolKeywordMatches(std::string_view tag, std::string_view name, std::size_t n);

// scontrol's `show ENTITY[=VALUE] [VALUE]`: how much of the entity word `tag` is the keyword,
// and the value: what follows '=', else `next` (the word after `tag`; nullptr when none).
struct ShowOperand {
  std::size_t tagLength = 0;
  std::optional<std::string> value;
};
ShowOperand splitShowOperand(const std::string& tag, const std::string* next);

enum class HostlistEntity { kHostnames, kHostlist, kHostlistSorted };

// The hostlist entity the first `tagLength` characters of `tag` name, as scontrol's `show`
// abbreviates them ("hostn" and longer: hostnames; "hostl": hostlist; "hostlists": sorted).
std::optional<HostlistEntity> hostlistEntity(std::string_view tag, std::size_t tagLength);

struct HostlistShown {
  bool failed = false;  // scontrol's exit code is 1
  bool fatal = false;   // scontrol called fatal(): it exits at once, even in interactive mode
};

// Prints `show <entity> <value>`. `value`: the entity's argument; hostnames without one reads
// $SLURM_NODELIST through `getenv`. hostlist and hostlistsorted read `value` as a file when it
// starts with '/' (through `readFile`); without a value they fail with scontrol's message.
HostlistShown showHostlistEntity(
    HostlistEntity entity, const std::optional<std::string>& value,
    const std::function<std::optional<std::string>(std::string_view)>& getenv,
    const std::function<StatusOr<std::string>(const std::string&)>& readFile, std::ostream& out,
    std::ostream& err);

}  // namespace kubeslurm::slurm
