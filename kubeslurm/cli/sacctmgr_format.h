// `sacctmgr show account` and `sacctmgr show association` as Slurm 22.05 prints them, as a pure
// function of the Account objects and the arguments: no I/O. sacctmgr_cmd.cc lists the Accounts
// and prints what this returns.
//
// kubeslurm's associations are its Account objects: the account tree is each Account under its
// spec.parent (root when empty); each name in spec.users is a user association under it. What an
// association shows is what slurmdbd's as_mysql_assoc.c returns without WOPLimits: its own
// Share and Grp* limits, and the Max* limits, QOS and DefaultQOS of the nearest account up the
// tree that sets them. Sources of truth (Slurm 22.05.8): src/sacctmgr/sacctmgr.c (options, the
// command words), src/sacctmgr/common.c (_get_print_field's field names, prefix lengths and
// widths; sacctmgr_print_tres), src/sacctmgr/account_functions.c and association_functions.c
// (conditions, default formats, sacctmgr_print_assoc_rec), slurmdb_defs.c
// (slurmdb_sort_hierarchical_assoc_list, slurmdb_tree_name_get) and src/common/print_fields.c.
//
// add, modify and delete are sacctmgr_change.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/cli/command_output.h"

namespace kubeslurm::cli {

struct SacctmgrOptions {
  bool noHeader = false;   // -n
  int parsable = 0;        // 1: -p (trailing '|'), 2: -P
  bool withAssoc = false;  // -s, --associations
  bool immediate = false;  // -i: commit changes without asking
};

enum class SacctmgrEntity { kAccount, kAssociation };

struct SacctmgrRequest {
  SacctmgrEntity entity = SacctmgrEntity::kAccount;
  std::vector<std::string> accounts;       // Names= / Accounts= (or a bare name)
  std::vector<std::string> users;          // Users=
  std::vector<std::string> clusters;       // Clusters=
  std::vector<std::string> parents;        // Parents=
  std::vector<std::string> descriptions;   // Descriptions= (accounts)
  std::vector<std::string> organizations;  // Organizations= (accounts)
  std::vector<std::string> format;         // Format=
  bool withAssoc = false;                  // WithAssoc (accounts)
  bool tree = false;                       // Tree (associations)
};

struct SacctmgrParse {
  SacctmgrOptions options;
  std::optional<SacctmgrRequest> request;
  // add, modify, delete: the command's words, planned against the Account objects
  // (sacctmgr_change.h).
  std::optional<std::vector<std::string>> change;
  // Set when sacctmgr stops before reading the accounts: a bad option or condition, help, a
  // command kubeslurm does not take.
  std::optional<CommandOutput> exit;
};
SacctmgrParse parseSacctmgrArgs(const std::vector<std::string>& args);

struct SacctmgrContext {
  std::string clusterName = "kubeslurm";
};

// One TRES count as sacctmgr prints it (slurmdb_make_tres_string_from_simple with
// CONVERT_NUM_UNIT_EXACT): memory, in MB, in the largest unit that divides it ("16G").
std::string tresCountText(std::string_view name, std::int64_t count);

CommandOutput formatSacctmgr(const std::vector<api::Account>& accounts, const SacctmgrParse& parse,
                             const SacctmgrContext& context);

}  // namespace kubeslurm::cli
