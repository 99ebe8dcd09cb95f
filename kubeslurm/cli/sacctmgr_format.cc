#include "kubeslurm/cli/sacctmgr_format.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/cli/print_fields.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {
namespace {

CommandOutput failure(std::string err) { return {"", std::move(err), 1}; }

constexpr std::string_view kUsage =
    "sacctmgr [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -h or --help: equivalent to \"help\" command\n"
    "     -i or --immediate: commit changes immediately without asking for confirmation\n"
    "     -n or --noheader: no header will be added to the beginning of output\n"
    "     -p or --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -Q or --quiet: equivalent to \"quiet\" command\n"
    "     -s or --associations: equivalent to \"associations\" command\n"
    "     -V or --version: equivalent to \"version\" command\n"
    "\n"
    "  kubeslurm's sacctmgr shows the cluster's Account objects as Slurm's accounts and\n"
    "  associations:\n"
    "     list/show account [<conditions>] [WithAssoc] [Format=...]\n"
    "     list/show association [<conditions>] [Tree] [Format=...]\n"
    "     add account <names> [Description=] [Organization=] [Parent=] [Fairshare=]\n"
    "                         [GrpJobs=] [GrpTRES=] [MaxJobs=] [MaxNodes=] [MaxSubmitJobs=]\n"
    "                         [MaxTRES=] [MaxWall=] [QOS=] [DefaultQOS=]\n"
    "     add user <names> Account=<accounts>\n"
    "     modify account [where] <names> set <the options of add account>\n"
    "     delete account <names>\n"
    "  Changes are made on the Account objects with your Kubernetes credentials: RBAC decides\n"
    "  who may make them.\n";

// ---- fields (common.c _get_print_field) ----

enum class Field {
  kOther,  // a field no association or account of ours has: blank, as sacctmgr prints NULL
  kAccount,
  kCluster,
  kDefQos,
  kDescr,
  kGrpCpus,
  kGrpJobs,
  kGrpMem,
  kGrpNodes,
  kGrpTres,
  kMaxCpus,
  kMaxJobs,
  kMaxNodes,
  kMaxSubmit,
  kMaxTres,
  kMaxWall,
  kOrg,
  kParentName,
  kQos,
  kShare,
  kUser,
};

struct Alias {
  std::string_view name;
  std::size_t minimum = 0;
};

struct FieldSpec {
  std::array<Alias, 4> aliases;
  std::string_view header;
  int width;
  Overflow overflow;  // print_fields_str and the TRES and QOS lists mark; numbers are whole
  Field field = Field::kOther;
};

constexpr Overflow kStr = Overflow::kMark;
constexpr Overflow kNum = Overflow::kKeep;
constexpr Overflow kDate = Overflow::kCut;

// In _get_print_field's order, which decides what an abbreviation means ("S" is Share: Server
// needs three letters).
constexpr auto kFields = std::to_array<FieldSpec>({
    {{{{"Account", 3}, {"Acct", 4}}}, "Account", 10, kStr, Field::kAccount},
    {{{{"ActionRaw", 7}}}, "ActionRaw", 10, kNum},
    {{{{"Action", 4}}}, "Action", 20, kStr},
    {{{{"Actor", 4}}}, "Actor", 10, kStr},
    {{{{"AdminLevel", 2}}}, "Admin", 9, kStr},
    {{{{"Allowed", 2}}}, "% Allowed", 10, kNum},
    {{{{"Associations", 2}}}, "Assocs", 10, kStr},
    {{{{"TRES", 2}}}, "TRES", 20, kStr},
    {{{{"Classification", 3}}}, "Class", 9, kStr},
    {{{{"ClusterNodes", 8}}}, "Cluster Nodes", 20, kStr},
    {{{{"Clusters", 2}}}, "Cluster", 10, kStr, Field::kCluster},
    {{{{"Coordinators", 2}}}, "Coord Accounts", 20, kStr},
    {{{{"ControlHost", 8}}}, "ControlHost", 15, kStr},
    {{{{"ControlPort", 8}}}, "ControlPort", 12, kNum},
    {{{{"Count", 3}}}, "Count", 6, kNum},
    {{{{"CountAllowed", 6}}}, "# Allowed", 10, kNum},
    {{{{"CountUsed", 6}}}, "# Used", 10, kNum},
    {{{{"CPUCount", 2}}}, "CPU Cnt", 7, kStr},
    {{{{"DefaultAccount", 8}}}, "Def Acct", 10, kStr},
    {{{{"DefaultQOS", 8}}}, "Def QOS", 9, kStr, Field::kDefQos},
    {{{{"DefaultWCKey", 8}}}, "Def WCKey", 10, kStr},
    {{{{"Description", 3}}}, "Descr", 20, kStr, Field::kDescr},
    {{{{"Duration", 2}}}, "Duration", 13, kNum},
    {{{{"EventRaw", 6}}}, "EventRaw", 8, kNum},
    {{{{"Event", 2}}}, "Event", 7, kStr},
    {{{{"Features", 3}}}, "Features", 20, kStr},
    {{{{"Federation", 3}}}, "Federation", 10, kStr},
    {{{{"FedState", 4}}}, "FedState", 12, kStr},
    {{{{"FedStateRaw", 9}}}, "FedStateRaw", 11, kNum},
    {{{{"Flags", 2}}}, "Flags", 20, kStr},
    {{{{"GraceTime", 3}}}, "GraceTime", 10, kNum},
    {{{{"GrpCPUs", 6}}}, "GrpCPUs", 8, kNum, Field::kGrpCpus},
    {{{{"GrpCPUMins", 7}}}, "GrpCPUMins", 11, kNum},
    {{{{"GrpCPURunMins", 7}}}, "GrpCPURunMins", 13, kNum},
    {{{{"GrpTRES", 7}}}, "GrpTRES", 13, kStr, Field::kGrpTres},
    {{{{"GrpTRESMins", 7}}}, "GrpTRESMins", 13, kStr},
    {{{{"GrpTRESRunMins", 7}}}, "GrpTRESRunMins", 13, kStr},
    {{{{"GrpJobs", 4}}}, "GrpJobs", 7, kNum, Field::kGrpJobs},
    {{{{"GrpJobsAccrue", 8}}}, "GrpJobsAccrue", 13, kNum},
    {{{{"GrpMemory", 4}}}, "GrpMem", 7, kNum, Field::kGrpMem},
    {{{{"GrpNodes", 4}}}, "GrpNodes", 8, kNum, Field::kGrpNodes},
    {{{{"GrpSubmitJobs", 4}}}, "GrpSubmit", 9, kNum},
    {{{{"GrpWall", 4}}}, "GrpWall", 11, kNum},
    {{{{"ID", 2}}}, "ID", 6, kNum},
    {{{{"Info", 2}}}, "Info", 20, kStr},
    {{{{"LFT", 1}}}, "LFT", 6, kNum},
    {{{{"servertype", 10}}}, "ServerType", 10, kStr},
    {{{{"MaxCPUMinsPerJob", 7}}}, "MaxCPUMins", 11, kNum},
    {{{{"MaxCPURunMinsPerUser", 7}, {"MaxCPURunMinsPU", 7}}}, "MaxCPURunMinsPU", 15, kNum},
    {{{{"MaxCPUsPerJob", 7}}}, "MaxCPUs", 8, kNum, Field::kMaxCpus},
    {{{{"MaxCPUsPerUser", 11}, {"MaxCPUsPU", 9}}}, "MaxCPUsPU", 9, kNum},
    {{{{"MaxTRES", 7}, {"MaxTRESPerJob", 11}}}, "MaxTRES", 13, kStr, Field::kMaxTres},
    {{{{"MaxTRESPerNode", 11}}}, "MaxTRESPerNode", 14, kStr},
    {{{{"MaxTRESMinsPerJob", 8}}}, "MaxTRESMins", 13, kStr},
    {{{{"MaxTRESRunMinsPerAccount", 18}, {"MaxTRESRunMinsPerAcct", 18}, {"MaxTRESRunMinsPA", 15}}},
     "MaxTRESRunMinsPA",
     15,
     kStr},
    {{{{"MaxTRESRunMinsPerUser", 8}, {"MaxTRESRunMinsPU", 8}}}, "MaxTRESRunMinsPU", 15, kStr},
    {{{{"MaxTRESPerAccount", 11}, {"MaxTRESPerAcct", 11}, {"MaxTRESPA", 9}}},
     "MaxTRESPA",
     13,
     kStr},
    {{{{"MaxTRESPerUser", 11}, {"MaxTRESPU", 9}}}, "MaxTRESPU", 13, kStr},
    {{{{"MaxJobs", 4}}}, "MaxJobs", 7, kNum, Field::kMaxJobs},
    {{{{"MaxJobsAccrue", 4}}}, "MaxJobsAccrue", 13, kNum},
    {{{{"MaxJobsAccruePerAccount", 17}, {"MaxJobsAccruePerAcct", 17}, {"MaxJobsAccruePA", 15}}},
     "MaxJobsAccruePA",
     15,
     kNum},
    {{{{"MaxJobsAccruePerUser", 17}, {"MaxJobsAccruePU", 15}}}, "MaxJobsAccruePU", 15, kNum},
    {{{{"MaxJobsPerAccount", 11}, {"MaxJobsPerAcct", 11}, {"MaxJobsPA", 9}}}, "MaxJobsPA", 9, kNum},
    // The same value as MaxJobs (PRINT_MAXJ) under its own header.
    {{{{"MaxJobsPerUser", 11}, {"MaxJobsPU", 9}}}, "MaxJobsPU", 9, kNum, Field::kMaxJobs},
    {{{{"MaxNodesPerJob", 4}}}, "MaxNodes", 8, kNum, Field::kMaxNodes},
    {{{{"MaxNodesPerUser", 12}, {"MaxNodesPU", 10}}}, "MaxNodesPU", 10, kNum},
    {{{{"MinPrioThreshold", 4}}}, "MinPrioThres", 12, kNum},
    {{{{"MaxSubmitJobs", 4}}}, "MaxSubmit", 9, kNum, Field::kMaxSubmit},
    {{{{"MaxSubmitJobsPerAccount", 17},
       {"MaxSubmitJobsPerAcct", 17},
       {"MaxSubmitJobsPA", 15},
       {"MaxSubmitPA", 11}}},
     "MaxSubmitPA",
     11,
     kNum},
    {{{{"MaxSubmitJobsPerUser", 10}, {"MaxSubmitJobsPU", 10}, {"MaxSubmitPU", 6}}},
     "MaxSubmitPU",
     11,
     kNum,
     Field::kMaxSubmit},
    {{{{"MaxWallDurationPerJob", 4}}}, "MaxWall", 11, kNum, Field::kMaxWall},
    {{{{"MinCPUsPerJob", 7}}}, "MinCPUs", 8, kNum},
    {{{{"MinTRESPerJob", 7}}}, "MinTRES", 13, kStr},
    {{{{"Name", 2}}}, "Name", 10, kStr},
    {{{{"NodeCount", 5}}}, "NodeCount", 9, kNum},
    {{{{"NodeInx", 5}}}, "NodeInx", 9, kStr},
    {{{{"NodeNames", 5}}}, "NodeName", -15, kStr},
    {{{{"Organization", 1}}}, "Org", 20, kStr, Field::kOrg},
    {{{{"ParentID", 7}}}, "ParentID", 8, kNum},
    {{{{"ParentName", 7}}}, "ParentName", 10, kStr, Field::kParentName},
    {{{{"Partition", 4}}}, "Partition", 10, kStr},
    {{{{"PluginIDSelect", 2}}}, "PluginIDSelect", 14, kNum},
    {{{{"PreemptMode", 8}}}, "PreemptMode", 11, kStr},
    {{{{"Preempt", 7}}}, "Preempt", 10, kStr},
    {{{{"PreemptExemptTime", 8}}}, "PreemptExemptTime", 19, kNum},
    {{{{"Priority", 3}}}, "Priority", 10, kNum},
    {{{{"Problem", 1}}}, "Problem", 40, kStr},
    {{{{"QOSLevel", 3}}}, "QOS", 20, kStr, Field::kQos},
    {{{{"QOSRAWLevel", 4}}}, "QOS_RAW", 10, kStr},
    {{{{"Reason", 1}}}, "Reason", 30, kStr},
    {{{{"RGT", 1}}}, "RGT", 6, kNum},
    {{{{"RPC", 1}}}, "RPC", 5, kNum},
    {{{{"Server", 3}}}, "Server", 10, kStr},
    {{{{"Share", 1}, {"FairShare", 2}}}, "Share", 9, kNum, Field::kShare},
    {{{{"StateRaw", 6}}}, "StateRaw", 8, kNum},
    {{{{"State", 1}}}, "State", 6, kStr},
    {{{{"TimeStamp", 2}}}, "Time", 19, kDate},
    {{{{"TimeEligible", 6}, {"Eligible", 2}}}, "TimeEligible", 19, kDate},
    {{{{"TimeEnd", 6}, {"End", 2}}}, "TimeEnd", 19, kDate},
    {{{{"TimeStart", 7}, {"Start", 3}}}, "TimeStart", 19, kDate},
    {{{{"TimeSubmit", 6}, {"Submit", 2}}}, "TimeSubmit", 19, kDate},
    {{{{"Type", 2}}}, "Type", 8, kStr},
    {{{{"UnusedWall", 2}}}, "UnusedWall", 10, kNum},
    {{{{"UsageFactor", 6}}}, "UsageFactor", 11, kNum},
    {{{{"UsageThreshold", 6}}}, "UsageThres", 10, kNum},
    {{{{"LimitFactor", 6}}}, "LimitFactor", 11, kNum},
    {{{{"Allocated", 7}}}, "% Allocated", 11, kNum},
    {{{{"User", 1}}}, "User", 10, kStr, Field::kUser},
    {{{{"WCKeys", 2}}}, "WCKeys", 20, kStr},
    {{{{"Where", 2}}}, "Where", 20, kStr},
});

struct PrintField {
  const FieldSpec* spec;
  int width;
};

// sacctmgr_process_format_list: "Name%width", matched in kFields' order; an unknown name ends
// the command (exit 1) before anything is printed.
std::optional<std::vector<PrintField>> printFields(const std::vector<std::string>& format,
                                                   bool tree, std::string& err) {
  std::vector<PrintField> fields;
  for (const std::string& item : format) {
    const FormatItem parsed = splitFormatItem(item);
    const std::string& name = parsed.name;
    const int width = parsed.width;
    const auto* const spec = std::ranges::find_if(kFields, [&](const FieldSpec& f) {
      return std::ranges::any_of(f.aliases, [&](const Alias& a) {
        return !a.name.empty() && abbreviates(name, a.name, a.minimum);
      });
    });
    if (spec == kFields.end()) {
      err = "Unknown field '" + name + "'\n";
      return std::nullopt;
    }
    int shown = spec->width;
    if (spec->field == Field::kAccount && tree) shown = -20;
    fields.push_back({spec, width != 0 ? width : shown});
  }
  return fields;
}

// ---- associations ----

std::optional<std::int64_t> positive(std::optional<std::int32_t> value) {
  if (!value || *value < 0) return std::nullopt;
  return *value;
}

// What an association shows of its own account's limits or, where that account sets none, of
// the nearest account up the tree that does (as_mysql_assoc.c's get_parent_limits, shown unless
// WOPLimits). MaxTRES is merged per TRES, nearest first; MaxNodes= is MaxTRES=node.
struct InheritedLimits {
  std::optional<std::int64_t> maxJobs;
  std::optional<std::int64_t> maxSubmitJobs;
  std::optional<std::int64_t> maxWallSeconds;
  std::map<std::string, std::int64_t> maxTres;
  std::optional<std::set<std::string>> qos;  // by name, as slurmdbd lists them
  std::optional<std::string> defaultQos;

  // The limits of an account under `above` (null: at the top) whose spec is `spec`.
  static InheritedLimits under(const InheritedLimits* above, const api::AccountSpec* spec) {
    InheritedLimits out = above != nullptr ? *above : InheritedLimits{};
    if (spec == nullptr) return out;
    if (const auto& l = spec->limits) {
      if (auto v = positive(l->maxJobs)) out.maxJobs = v;
      if (auto v = positive(l->maxSubmitJobs)) out.maxSubmitJobs = v;
      if (l->maxWallDurationPerJob && l->maxWallDurationPerJob->limit.seconds) {
        out.maxWallSeconds = l->maxWallDurationPerJob->limit.seconds;
      }
      std::map<std::string, std::int64_t> own(l->maxTresPerJob.begin(), l->maxTresPerJob.end());
      if (auto nodes = positive(l->maxNodesPerJob)) own.try_emplace("node", *nodes);
      for (auto& [name, count] : own) out.maxTres[name] = count;
    }
    if (!spec->allowedQos.empty()) {
      out.qos.emplace(spec->allowedQos.begin(), spec->allowedQos.end());
    }
    if (!spec->defaultQos.empty()) out.defaultQos = spec->defaultQos;
    return out;
  }
};

// An account's place in the tree: its Account (null for root when no object names it) and what
// it inherits, resolved once from its parent's, so a deep tree costs one node per account.
struct TreeNode {
  const api::Account* account = nullptr;
  InheritedLimits limits;
};

// One association: an account's own (user empty) or a user's under an account.
struct Association {
  std::string account;
  std::string user;
  std::string parent;              // the parent account's name: account associations only
  const TreeNode* node = nullptr;  // the account's
  int depth = 0;                   // root 0
};

// By name, as the captured limits print ("gres/gpu=16,node=4"); a negative count is no limit.
std::string tresText(const std::map<std::string, std::int64_t>& tres) {
  std::string out;
  for (const auto& [name, count] : tres) {
    if (count < 0) continue;
    if (!out.empty()) out += ',';
    out += name + "=" + tresCountText(name, count);
  }
  return out;
}

class AssociationTree {
 public:
  AssociationTree(const std::vector<api::Account>& accounts, std::string_view cluster)
      : cluster_(cluster) {
    for (const api::Account& account : accounts) {
      if (account.metadata.name.empty()) continue;
      byName_.emplace(account.metadata.name, &account);
    }
    for (const auto& [name, account] : byName_) {
      if (name == "root") continue;
      children_[parentOf(*account)].push_back(name);
    }
    visit("root", "", nullptr, 0);
    // An account whose parents go round in a circle is reached from no root: under root, as
    // slurmdbd would refuse to make the circle.
    for (const auto& [name, account] : byName_) {
      if (name != "root" && !visited_.contains(name)) visit(name, "root", rootNode_, 1);
    }
  }

  const std::vector<Association>& associations() const { return associations_; }
  const std::map<std::string, const api::Account*, std::less<>>& accounts() const {
    return byName_;
  }
  std::string parentOf(const api::Account& account) const {
    const std::string& parent = account.spec.parent;
    if (parent.empty() || parent == account.metadata.name || !byName_.contains(parent)) {
      return "root";
    }
    return parent;
  }

 private:
  // slurmdb_sort_hierarchical_assoc_list: an account, then its users' associations by name, then
  // its sub-accounts by name, each with everything under it. Depth-first with a stack of its
  // own: an Account's parent is whatever an admin wrote, and a chain of thousands must not
  // exhaust the call stack.
  void visit(const std::string& top, const std::string& topParent, const TreeNode* topAbove,
             int topDepth) {
    struct Pending {
      std::string name;
      std::string parent;
      const TreeNode* above;
      int depth;
    };
    std::vector<Pending> stack{{top, topParent, topAbove, topDepth}};
    while (!stack.empty()) {
      Pending at = std::move(stack.back());
      stack.pop_back();
      if (!visited_.insert(at.name).second) continue;
      const auto own = byName_.find(at.name);
      const api::Account* account = own == byName_.end() ? nullptr : own->second;
      const TreeNode* node = &nodes_.emplace_back(TreeNode{
          account, InheritedLimits::under(at.above == nullptr ? nullptr : &at.above->limits,
                                          account == nullptr ? nullptr : &account->spec)});
      if (at.name == "root") rootNode_ = node;
      associations_.push_back({at.name, "", at.parent, node, at.depth});
      if (own != byName_.end()) {
        const std::set<std::string> users(own->second->spec.users.begin(),
                                          own->second->spec.users.end());
        for (const std::string& user : users) {
          if (!user.empty()) associations_.push_back({at.name, user, "", node, at.depth + 1});
        }
      }
      const auto kids = children_.find(at.name);
      if (kids == children_.end()) continue;
      std::vector<std::string> sorted = kids->second;
      std::ranges::sort(sorted, std::greater<>());  // popped smallest first
      for (std::string& child : sorted) {
        stack.push_back({std::move(child), at.name, node, at.depth + 1});
      }
    }
  }

  std::string_view cluster_;
  std::map<std::string, const api::Account*, std::less<>> byName_;
  std::map<std::string, std::vector<std::string>> children_;
  std::set<std::string> visited_;
  std::deque<TreeNode> nodes_;  // stable addresses
  const TreeNode* rootNode_ = nullptr;
  std::vector<Association> associations_;
};

std::optional<std::string> assocValue(Field field, const Association& a,
                                      const SacctmgrContext& context) {
  const api::Account* const own = a.node == nullptr ? nullptr : a.node->account;
  static const InheritedLimits kNone;
  const InheritedLimits& inherited = a.node == nullptr ? kNone : a.node->limits;
  const auto number = [](std::optional<std::int64_t> v) -> std::optional<std::string> {
    if (!v) return std::nullopt;
    return std::to_string(*v);
  };
  const auto grp = [&](std::string_view tres) -> std::optional<std::int64_t> {
    if (own == nullptr || !a.user.empty() || !own->spec.limits) return std::nullopt;
    const auto it = own->spec.limits->grpTres.find(std::string(tres));
    if (it == own->spec.limits->grpTres.end() || it->second < 0) return std::nullopt;
    return it->second;
  };
  switch (field) {
    case Field::kAccount:
      return a.account;
    case Field::kCluster:
      return context.clusterName;
    case Field::kUser:
      if (a.user.empty()) return std::nullopt;
      return a.user;
    case Field::kParentName:
      if (!a.user.empty() || a.parent.empty()) return std::nullopt;
      return a.parent;
    case Field::kShare:
      if (own == nullptr || !a.user.empty()) return "1";
      return std::to_string(api::accountShares(own->spec));
    case Field::kGrpJobs:
      if (own == nullptr || !a.user.empty() || !own->spec.limits) return std::nullopt;
      return number(positive(own->spec.limits->grpJobs));
    case Field::kGrpTres:
      if (own == nullptr || !a.user.empty() || !own->spec.limits) return "";
      return tresText(own->spec.limits->grpTres);
    case Field::kGrpCpus:
      return number(grp("cpu"));
    case Field::kGrpMem:
      return number(grp("mem"));
    case Field::kGrpNodes:
      return number(grp("node"));
    case Field::kMaxJobs:
      return number(inherited.maxJobs);
    case Field::kMaxSubmit:
      return number(inherited.maxSubmitJobs);
    case Field::kMaxWall:
      if (!inherited.maxWallSeconds) return std::nullopt;
      // mins2time_str of the limit in minutes.
      return slurm::formatPaddedDuration(slurm::TimeLimit{*inherited.maxWallSeconds / 60 * 60});
    case Field::kMaxTres:
      return tresText(inherited.maxTres);
    case Field::kMaxCpus:
    case Field::kMaxNodes: {
      const auto it = inherited.maxTres.find(field == Field::kMaxCpus ? "cpu" : "node");
      if (it == inherited.maxTres.end()) return std::nullopt;
      return std::to_string(it->second);
    }
    case Field::kQos:
      return inherited.qos ? joinCommaList({inherited.qos->begin(), inherited.qos->end()}) : "";
    case Field::kDefQos:
      return inherited.defaultQos.value_or("");
    case Field::kDescr:
    case Field::kOrg:
    case Field::kOther:
      return std::nullopt;
  }
  return std::nullopt;
}

// account_functions.c's add: a description defaults to the account's name, an organization to
// its parent's name (its own under root). root, which slurmdbd makes with the cluster, is
// "default root account" of organization root unless an Account object named root says more.
std::optional<std::string> accountValue(Field field, const std::string& name,
                                        const api::Account* account, const AssociationTree& tree) {
  const bool root = name == "root";
  switch (field) {
    case Field::kAccount:
      return name;
    case Field::kDescr:
      if (account != nullptr && !account->spec.description.empty()) {
        return account->spec.description;
      }
      return root ? "default root account" : name;
    case Field::kOrg: {
      if (account != nullptr && !account->spec.organization.empty()) {
        return account->spec.organization;
      }
      if (root || account == nullptr) return name;
      const std::string parent = tree.parentOf(*account);
      return parent == "root" ? name : parent;
    }
    case Field::kQos:
      return "";
    default:
      return std::nullopt;
  }
}

// A condition the user gave, or none: everything passes.
bool passes(const std::vector<std::string>& condition, const std::string& value, bool caseless) {
  return condition.empty() || listHas(condition, value, caseless);
}

// slurmdb_tree_name_get: one space deeper than the parent's line; a user's line shows its
// account one deeper than the account's.
std::string treeName(const Association& a) {
  return std::string(static_cast<std::size_t>(a.depth), ' ') + a.account;
}

// ---- parsing (sacctmgr.c, account_functions.c and association_functions.c _set_cond) ----

constexpr std::array kLongOptions = {
    LongOptionSpec{"help", 0, 'h'},      LongOptionSpec{"usage", 0, 'h'},
    LongOptionSpec{"immediate", 0, 'i'}, LongOptionSpec{"noheader", 0, 'n'},
    LongOptionSpec{"oneliner", 0, 'o'},  LongOptionSpec{"parsable", 0, 'p'},
    LongOptionSpec{"parsable2", 0, 'P'}, LongOptionSpec{"quiet", 0, 'Q'},
    LongOptionSpec{"readonly", 0, 'r'},  LongOptionSpec{"associations", 0, 's'},
    LongOptionSpec{"verbose", 0, 'v'},   LongOptionSpec{"version", 0, 'V'},
};

void addAll(std::vector<std::string>& into, const std::string& list) {
  for (std::string& item : splitCommaList(list)) into.push_back(std::move(item));
}

// The conditions of `show account` and `show association`; false with `err` set on one neither
// knows (" Unknown condition: ...").
bool parseConditions(const std::vector<std::string>& words, SacctmgrRequest& request,
                     std::string& err) {
  const bool accounts = request.entity == SacctmgrEntity::kAccount;
  for (const std::string& word : words) {
    const std::size_t equals = word.find('=');
    const bool hasValue = equals != std::string::npos;
    std::string name = hasValue ? word.substr(0, equals) : word;
    // "QOS+=" and "QOS-=": the operator letter is not part of the name.
    if (hasValue && !name.empty() && (name.back() == '+' || name.back() == '-')) name.pop_back();
    const std::string value = hasValue ? word.substr(equals + 1) : word;
    if (!hasValue && abbreviates(name, "where", 5)) continue;
    if (!hasValue && abbreviates(name, "WithDeleted", 5)) continue;  // none are kept
    if (!hasValue && abbreviates(name, "WithRawQOSLevel", 5)) continue;
    if (accounts && !hasValue && abbreviates(name, "WithAssoc", 5)) {
      request.withAssoc = true;
    } else if (accounts && !hasValue && abbreviates(name, "WithCoordinators", 5)) {
      continue;  // no coordinators: blank
    } else if (!accounts && !hasValue && abbreviates(name, "Tree", 4)) {
      request.tree = true;
    } else if (!accounts && !hasValue &&
               (abbreviates(name, "WOPInfo", 4) || abbreviates(name, "WOPLimits", 4) ||
                abbreviates(name, "WOLimits", 3) || abbreviates(name, "OnlyDefaults", 2) ||
                abbreviates(name, "WithSubAccounts", 5))) {
      err = " kubeslurm's sacctmgr does not take " + name + "\n";
      return false;
    } else if (!hasValue ||
               (accounts && (abbreviates(name, "Names", 1) || abbreviates(name, "Accounts", 1) ||
                             abbreviates(name, "Acct", 4))) ||
               abbreviates(name, "Accounts", 2) || abbreviates(name, "Acct", 4)) {
      if (!accounts && !hasValue) {
        err = " Unknown condition: " + word + "\n";  // a bare word is an association id there
        return false;
      }
      addAll(request.accounts, value);
    } else if (accounts && abbreviates(name, "Descriptions", 1)) {
      addAll(request.descriptions, value);
    } else if (abbreviates(name, "Format", 1)) {
      addAll(request.format, value);
    } else if (accounts && abbreviates(name, "Organizations", 1)) {
      addAll(request.organizations, value);
    } else if (abbreviates(name, "Clusters", 1)) {
      addAll(request.clusters, value);
    } else if (abbreviates(name, "Parents", 4)) {
      addAll(request.parents, value);
    } else if (abbreviates(name, "Users", 1)) {
      addAll(request.users, value);
    } else {
      err = " Unknown condition: " + word + "\n" +
            (accounts ? " Use keyword 'set' to modify value\n" : "");
      return false;
    }
  }
  return true;
}

}  // namespace

std::string tresCountText(std::string_view name, std::int64_t count) {
  if (name != "mem" || count < 0) return std::to_string(count);
  std::int64_t value = count;
  std::size_t unit = 0;
  static constexpr std::string_view kUnits = "MGTPE";
  while (value != 0 && value % 1024 == 0 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + kUnits[unit];
}

SacctmgrParse parseSacctmgrArgs(const std::vector<std::string>& args) {
  SacctmgrParse parse;
  const GetoptResult got = getoptLong("sacctmgr", args, "hionpPQrsvV", kLongOptions);
  if (got.error) {
    parse.exit = failure(*got.error + "\nTry \"sacctmgr --help\" for more information\n");
    return parse;
  }
  for (const ParsedOption& option : got.options) {
    switch (option.key) {
      case 'h':
        parse.exit = CommandOutput{std::string(kUsage), "", 0};
        return parse;
      case 'n':
        parse.options.noHeader = true;
        break;
      case 'p':
        parse.options.parsable = 1;
        break;
      case 'P':
        parse.options.parsable = 2;
        break;
      case 's':
        parse.options.withAssoc = true;
        break;
      case 'i':
        parse.options.immediate = true;
        break;
      case 'V':
        parse.exit = CommandOutput{"slurm-wlm 22.05.8\n", "", 0};
        return parse;
      default:
        break;  // -o, -Q, -r, -v change nothing kubeslurm's sacctmgr prints
    }
  }
  const std::vector<std::string>& words = got.operands;
  if (words.empty()) {
    parse.exit = failure(
        "sacctmgr: error: kubeslurm's sacctmgr runs the one command on its command line; it has "
        "no interactive mode\n");
    return parse;
  }
  const std::string& keyword = words[0];
  if (abbreviates(keyword, "help", 2)) {
    parse.exit = CommandOutput{std::string(kUsage), "", 0};
    return parse;
  }
  if (abbreviates(keyword, "version", 4)) {
    parse.exit = CommandOutput{"slurm-wlm 22.05.8\n", "", 0};
    return parse;
  }
  if (abbreviates(keyword, "add", 3) || abbreviates(keyword, "create", 3) ||
      abbreviates(keyword, "modify", 1) || abbreviates(keyword, "update", 1) ||
      abbreviates(keyword, "delete", 3) || abbreviates(keyword, "remove", 3)) {
    parse.change = words;
    return parse;
  }
  if (abbreviates(keyword, "load", 2) || abbreviates(keyword, "dump", 3) ||
      abbreviates(keyword, "archive", 3) || abbreviates(keyword, "clear", 3)) {
    parse.exit = failure(
        "sacctmgr: error: kubeslurm keeps accounts and their associations as Account objects, "
        "not in a database to load, dump, archive or clear\n");
    return parse;
  }
  if (!abbreviates(keyword, "show", 3) && !abbreviates(keyword, "list", 3)) {
    parse.exit = failure("invalid keyword: " + keyword + "\n");
    return parse;
  }
  const std::string entity = words.size() > 1 ? words[1] : "";
  SacctmgrRequest request;
  if (!entity.empty() && (abbreviates(entity, "Accounts", 2) || abbreviates(entity, "Acct", 4))) {
    request.entity = SacctmgrEntity::kAccount;
  } else if (!entity.empty() && abbreviates(entity, "Associations", 2)) {
    request.entity = SacctmgrEntity::kAssociation;
  } else if (!entity.empty() &&
             (abbreviates(entity, "Clusters", 2) || abbreviates(entity, "Configuration", 2) ||
              abbreviates(entity, "Events", 1) || abbreviates(entity, "Federation", 1) ||
              abbreviates(entity, "Problems", 1) || abbreviates(entity, "RunawayJobs", 2) ||
              abbreviates(entity, "OrphanJobs", 1) || abbreviates(entity, "LostJobs", 1) ||
              abbreviates(entity, "QOS", 1) || abbreviates(entity, "Resource", 4) ||
              abbreviates(entity, "Reservations", 4) || abbreviates(entity, "Resv", 4) ||
              abbreviates(entity, "Stats", 1) || abbreviates(entity, "Transactions", 1) ||
              abbreviates(entity, "Txn", 1) || abbreviates(entity, "Users", 1) ||
              abbreviates(entity, "WCKeys", 1) || abbreviates(entity, "tres", 2))) {
    parse.exit = failure(
        "sacctmgr: error: kubeslurm's sacctmgr shows accounts and associations; "
        "it does not show " +
        entity + " yet\n");
    return parse;
  } else {
    parse.exit = failure(
        "No valid entity in list command\n"
        "Input line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n"
        "\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n"
        "\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n");
    return parse;
  }
  std::string err;
  if (!parseConditions({words.begin() + 2, words.end()}, request, err)) {
    parse.exit = failure(err);
    return parse;
  }
  if (parse.options.withAssoc) request.withAssoc = true;
  parse.request = std::move(request);
  return parse;
}

CommandOutput formatSacctmgr(const std::vector<api::Account>& accounts, const SacctmgrParse& parse,
                             const SacctmgrContext& context) {
  const SacctmgrRequest& request = *parse.request;
  const SacctmgrOptions& o = parse.options;
  const bool listAccounts = request.entity == SacctmgrEntity::kAccount;
  std::vector<std::string> format = request.format;
  if (format.empty()) {
    if (listAccounts) {
      format = {"Acc", "Des", "O"};
      if (request.withAssoc) {
        for (const char* f :
             {"Cl",      "ParentN", "U",    "Share",      "Priority",   "GrpJ",      "GrpN",
              "GrpCPUs", "GrpMEM",  "GrpS", "GrpWall",    "GrpCPUMins", "MaxJ",      "MaxN",
              "MaxCPUs", "MaxS",    "MaxW", "MaxCPUMins", "QOS",        "DefaultQOS"}) {
          format.emplace_back(f);
        }
      }
    } else {
      format = {"Cluster",     "Account",     "User",    "Part",        "Share",
                "Priority",    "GrpJ",        "GrpTRES", "GrpS",        "GrpWall",
                "GrpTRESMins", "MaxJ",        "MaxTRES", "MaxTRESPerN", "MaxS",
                "MaxW",        "MaxTRESMins", "QOS",     "DefaultQOS",  "GrpTRESRunMins"};
    }
  }
  std::string err;
  const auto fields = printFields(format, request.tree && !listAccounts, err);
  if (!fields) return failure(err);

  CommandOutput result;
  std::string& out = result.out;
  const FieldPrinter printer(o.parsable);
  if (!o.noHeader) {
    std::vector<PrintColumn> columns;
    columns.reserve(fields->size());
    for (const PrintField& f : *fields) columns.push_back({f.spec->header, f.width});
    printer.header(out, columns);
  }
  if (!passes(request.clusters, context.clusterName, true)) return result;

  const AssociationTree tree(accounts, context.clusterName);
  const auto wanted = [&](const Association& a) {
    if (!passes(request.accounts, a.account, false)) return false;
    if (!request.users.empty() && (a.user.empty() || !passes(request.users, a.user, true))) {
      return false;
    }
    return request.parents.empty() ||
           (!a.parent.empty() && passes(request.parents, a.parent, false));
  };
  const auto printLine = [&](const std::function<std::optional<std::string>(Field)>& value) {
    for (std::size_t i = 0; i < fields->size(); ++i) {
      const PrintField& f = (*fields)[i];
      printer.cell(out, f.width, f.spec->overflow, value(f.spec->field), i + 1 == fields->size());
    }
    out += '\n';
  };

  if (!listAccounts) {
    for (const Association& a : tree.associations()) {
      if (!wanted(a)) continue;
      printLine([&](Field field) {
        if (field == Field::kAccount && request.tree) return std::optional(treeName(a));
        return assocValue(field, a, context);
      });
    }
    return result;
  }

  // The accounts by name, root among them; WithAssoc prints a line per association of each,
  // found through one grouping rather than a scan of every association per account.
  std::map<std::string, std::vector<const Association*>> byAccount;
  if (request.withAssoc) {
    for (const Association& a : tree.associations()) byAccount[a.account].push_back(&a);
  }
  std::set<std::string> names{"root"};
  for (const auto& [name, account] : tree.accounts()) names.insert(name);
  for (const std::string& name : names) {
    const auto found = tree.accounts().find(name);
    const api::Account* account = found == tree.accounts().end() ? nullptr : found->second;
    if (!passes(request.accounts, name, false)) continue;
    const auto own = [&](Field field) { return accountValue(field, name, account, tree); };
    if (!passes(request.descriptions, own(Field::kDescr).value_or(""), false) ||
        !passes(request.organizations, own(Field::kOrg).value_or(""), false)) {
      continue;
    }
    if (!request.withAssoc) {
      printLine(own);
      continue;
    }
    for (const Association* a : byAccount[name]) {
      if (!wanted(*a)) continue;
      printLine([&](Field field) {
        if (field == Field::kAccount || field == Field::kDescr || field == Field::kOrg) {
          return own(field);
        }
        return assocValue(field, *a, context);
      });
    }
  }
  return result;
}

}  // namespace kubeslurm::cli
