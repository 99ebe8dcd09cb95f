// `sacctmgr add account`, `add user`, `modify account` and `delete account` as changes to the
// Account objects: a pure plan of what sacctmgr prints and the object writes that make the
// change; sacctmgr_cmd.cc asks "Would you like to commit changes?" (unless -i) and sends them
// with the caller's credentials, so the API server's RBAC decides who may change accounts, as
// slurmdbd's admin levels do for Slurm.
//
// Sources of truth (Slurm 22.05.8): src/sacctmgr/account_functions.c (sacctmgr_add_account,
// sacctmgr_modify_account, sacctmgr_delete_account, _set_rec), user_functions.c
// (sacctmgr_add_user), association_functions.c (sacctmgr_set_assoc_rec), common.c
// (sacctmgr_print_assoc_limits, commit_check), as_mysql_assoc.c (the "C = ... A = ... of ..."
// lines), and the capture of the real sacctmgr in tests/integration/slurm_diff/sacctmgr/.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/cli/sacctmgr_format.h"

namespace kubeslurm::cli {

struct AccountWrite {
  enum class Kind { kCreate, kPatch, kDelete };
  Kind kind = Kind::kCreate;
  std::string name;
  nlohmann::json body;  // the object (kCreate) or a JSON merge patch (kPatch)
};

struct SacctmgrPlan {
  std::string out;
  std::string err;
  int exitCode = 0;
  // Empty: nothing to commit. A patch that replaces a list (users, QOS) is conditional on the
  // Account's resourceVersion: it fails with kAborted if the object changed since it was read.
  std::vector<AccountWrite> writes;
  std::string failure;  // " Problem adding accounts: " ... what a failed write is called
};

// `words`: the command after sacctmgr's options ("add", "account", "team-a", "Parent=ml").
SacctmgrPlan planSacctmgrChange(const std::vector<std::string>& words,
                                const std::vector<api::Account>& accounts,
                                const SacctmgrContext& context);

// commit_check's question and what it prints after the answer. True when `answer` (the first
// character the user typed; '\0' for none) commits.
inline constexpr std::string_view kCommitQuestion =
    "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ";
bool commitAnswer(char answer);

}  // namespace kubeslurm::cli
