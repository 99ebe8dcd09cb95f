#include "kubeslurm/cli/sacctmgr_change.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {
namespace {

using Json = nlohmann::json;

// The TRES an Account limits (the operator enforces gres/gpu and node; cpu and mem are kept).
constexpr std::array<std::string_view, 4> kLimitedTres = {"cpu", "gres/gpu", "mem", "node"};

// A limit as sacctmgr takes it: a value, or -1 (any negative) to clear it (INFINITE).
template <typename T>
struct Setting {
  std::optional<T> value;  // nullopt with `set`: cleared
  bool set = false;
};

// What `set` (or add's options) asks for, in sacctmgr_print_assoc_limits' terms.
struct Settings {
  std::optional<std::string> description;
  std::optional<std::string> organization;
  std::optional<std::string> parent;
  Setting<std::int64_t> shares;
  Setting<std::int64_t> grpJobs;
  Setting<std::int64_t> maxJobs;
  Setting<std::int64_t> maxSubmitJobs;
  Setting<std::int64_t> maxNodes;
  Setting<std::string> maxWall;                                // as written ("1-00:00:00")
  std::map<std::string, std::optional<std::int64_t>> grpTres;  // nullopt: clear that TRES
  std::map<std::string, std::optional<std::int64_t>> maxTres;
  std::optional<std::vector<std::string>> qos;  // QOS=
  std::vector<std::string> qosAdd;              // QOS+=
  std::vector<std::string> qosRemove;           // QOS-=
  Setting<std::string> defaultQos;

  bool accountFields() const { return description || organization; }
  bool assocFields() const {
    return parent || shares.set || grpJobs.set || maxJobs.set || maxSubmitJobs.set ||
           maxNodes.set || maxWall.set || !grpTres.empty() || !maxTres.empty() || qos ||
           !qosAdd.empty() || !qosRemove.empty() || defaultQos.set;
  }
};

struct Words {
  std::vector<std::string> names;     // Names=/Accounts= or bare words
  std::vector<std::string> accounts;  // add user: Account=
  std::vector<std::string> clusters;
  Settings settings;
};

// get_uint: strtol, "abc" refused, a negative number clears.
bool uintValue(const std::string& value, const char* type, Setting<std::int64_t>& into,
               std::string& err) {
  char* rest = nullptr;
  const long number = std::strtol(value.c_str(), &rest, 10);
  if (number == 0 && rest != nullptr && *rest != '\0') {
    err += std::string("sacctmgr: error: Invalid value for ") + type + " (" + value + ")\n";
    return false;
  }
  into.set = true;
  into.value = number < 0 ? std::nullopt : std::optional<std::int64_t>(number);
  if (into.value && *into.value > INT32_MAX) into.value = INT32_MAX;
  return true;
}

// "gres/gpu=16,node=4" (memory in MB, or with a K/M/G/T suffix); -1 clears a TRES.
bool tresValue(const std::string& value, std::map<std::string, std::optional<std::int64_t>>& into,
               std::string& err) {
  for (const std::string& item : splitCommaList(value)) {
    const std::size_t equals = item.find('=');
    const std::string name = lowercaseAscii(item.substr(0, equals));
    if (std::ranges::find(kLimitedTres, name) == kLimitedTres.end()) {
      err += "sacctmgr: error: slurmdb_format_tres_str: no TRES known by type " + name + "\n";
      return false;
    }
    const std::string count = equals == std::string::npos ? "" : item.substr(equals + 1);
    char* rest = nullptr;
    long long number = std::strtoll(count.c_str(), &rest, 10);
    if (count.empty() || rest == count.c_str()) {
      err += "sacctmgr: error: slurmdb_format_tres_str: no count given for " + name + "\n";
      return false;
    }
    std::string_view unit = rest;
    if (number >= 0 && name == "mem" && !unit.empty()) {
      static constexpr std::string_view kUnits = "KMGTP";
      const std::size_t at = kUnits.find(static_cast<char>(std::toupper(unit[0])));
      if (at == std::string_view::npos || unit.size() > 1) {
        err += "sacctmgr: error: slurmdb_format_tres_str: bad memory size " + count + "\n";
        return false;
      }
      for (std::size_t i = 1; i < at; ++i) {
        number = number > INT64_MAX / 1024 ? INT64_MAX : number * 1024;
      }
      if (at == 0) number = number / 1024 + (number % 1024 != 0 ? 1 : 0);  // K: whole MB, up
    } else if (!unit.empty()) {
      err += "sacctmgr: error: slurmdb_format_tres_str: bad count " + count + "\n";
      return false;
    }
    into[name] = number < 0 ? std::nullopt : std::optional<std::int64_t>(number);
  }
  return true;
}

// _set_rec (account_functions.c) with sacctmgr_set_assoc_rec's options kubeslurm keeps;
// `names` collects the bare words and Names=/Accounts= (refused where they cannot be set).
bool parseWords(const std::vector<std::string>& words, bool namesAllowed, Words& out,
                std::string& err) {
  Settings& s = out.settings;
  for (const std::string& word : words) {
    const std::size_t equals = word.find('=');
    const bool hasValue = equals != std::string::npos;
    std::string name = hasValue ? word.substr(0, equals) : word;
    char option = '\0';
    if (hasValue && !name.empty() && (name.back() == '+' || name.back() == '-')) {
      option = name.back();
      name.pop_back();
    }
    const std::string value = hasValue ? word.substr(equals + 1) : word;
    const auto unknown = [&] {
      err += " Unknown option: " + word + "\n Use keyword 'where' to modify condition\n";
      return false;
    };
    if (!hasValue && (abbreviates(name, "Where", 5) || abbreviates(name, "set", 3))) continue;
    if (!hasValue || abbreviates(name, "Accounts", 1) || abbreviates(name, "Names", 1) ||
        abbreviates(name, "Acct", 4)) {
      if (!namesAllowed) {
        err += " Can't modify the name of an account\n";
        return false;
      }
      for (std::string& item : splitCommaList(value)) out.names.push_back(std::move(item));
    } else if (abbreviates(name, "Clusters", 1)) {
      for (std::string& item : splitCommaList(value)) out.clusters.push_back(std::move(item));
    } else if (abbreviates(name, "Description", 1)) {
      s.description = lowercaseAscii(value);  // strip_quotes(..., 1) lower-cases it
    } else if (abbreviates(name, "Organization", 1)) {
      s.organization = lowercaseAscii(value);
    } else if (abbreviates(name, "DefaultQOS", 8)) {
      s.defaultQos.set = true;
      if (!value.empty() && value != "-1") s.defaultQos.value = value;
    } else if (abbreviates(name, "FairShare", 1) || abbreviates(name, "Shares", 1)) {
      if (!uintValue(value, "FairShare", s.shares, err)) return unknown();
    } else if (abbreviates(name, "GrpJobs", 4)) {
      if (!uintValue(value, "GrpJobs", s.grpJobs, err)) return unknown();
    } else if (abbreviates(name, "GrpTRES", 7)) {
      if (!tresValue(value, s.grpTres, err)) return unknown();
    } else if (abbreviates(name, "MaxJobs", 4)) {
      if (!uintValue(value, "MaxJobs", s.maxJobs, err)) return unknown();
    } else if (abbreviates(name, "MaxNodesPerJob", 4)) {
      if (!uintValue(value, "MaxNodes", s.maxNodes, err)) return unknown();
    } else if (abbreviates(name, "MaxSubmitJobs", 4)) {
      if (!uintValue(value, "MaxSubmitJobs", s.maxSubmitJobs, err)) return unknown();
    } else if (abbreviates(name, "MaxTRES", 7) || abbreviates(name, "MaxTRESPerJob", 11)) {
      if (!tresValue(value, s.maxTres, err)) return unknown();
    } else if (abbreviates(name, "MaxWallDurationPerJob", 4)) {
      s.maxWall.set = true;
      if (value != "-1") {
        if (!slurm::parseTimeLimit(value).isOk()) {
          err += " Bad MaxWall time format: " + name + "\n";
          return false;
        }
        s.maxWall.value = value;
      }
    } else if (abbreviates(name, "Parent", 2)) {
      s.parent = value;
    } else if (abbreviates(name, "QosLevel", 1)) {
      std::vector<std::string> names = splitCommaList(value);
      if (option == '+') {
        s.qosAdd.insert(s.qosAdd.end(), names.begin(), names.end());
      } else if (option == '-') {
        s.qosRemove.insert(s.qosRemove.end(), names.begin(), names.end());
      } else {
        s.qos = std::move(names);
      }
    } else {
      return unknown();
    }
  }
  return true;
}

std::string tresText(const std::map<std::string, std::optional<std::int64_t>>& tres) {
  std::string out;
  for (const auto& [name, count] : tres) {
    if (!out.empty()) out += ',';
    out += name + "=" + (count ? tresCountText(name, *count) : std::string("-1"));
  }
  return out;
}

// sacctmgr_print_assoc_limits for the settings kubeslurm keeps, in its order.
std::string settingsLines(const Settings& s) {
  std::string out;
  const auto number = [&out](const char* label, const Setting<std::int64_t>& v) {
    if (!v.set) return;
    out += std::string("  ") + label + " = " + (v.value ? std::to_string(*v.value) : "NONE") + "\n";
  };
  number("Fairshare    ", s.shares);
  number("GrpJobs      ", s.grpJobs);
  if (!s.grpTres.empty()) out += "  GrpTRES       = " + tresText(s.grpTres) + "\n";
  number("MaxJobs      ", s.maxJobs);
  number("MaxSubmitJobs", s.maxSubmitJobs);
  std::map<std::string, std::optional<std::int64_t>> maxTres = s.maxTres;
  if (s.maxNodes.set) maxTres["node"] = s.maxNodes.value;
  if (!maxTres.empty()) out += "  MaxTRES       = " + tresText(maxTres) + "\n";
  if (s.maxWall.set) out += "  MaxWall       = " + s.maxWall.value.value_or("NONE") + "\n";
  if (s.parent) out += "  Parent        = " + *s.parent + "\n";
  if (s.qos) out += "  QOS           = " + joinCommaList(*s.qos) + "\n";
  if (s.defaultQos.set) out += "  DefQOS        = " + s.defaultQos.value.value_or("") + "\n";
  return out;
}

Json nullable(const std::optional<std::int64_t>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// The merge patch of an Account's spec that makes the settings so, given the Account as it is
// (for QOS+= and QOS-=, and the lists a merge patch replaces whole).
Json specPatch(const Settings& s, const api::Account* current) {
  Json spec = Json::object();
  if (s.description) spec["description"] = *s.description;
  if (s.organization) spec["organization"] = *s.organization;
  if (s.parent) spec["parent"] = *s.parent == "root" ? Json("") : Json(*s.parent);
  if (s.shares.set) spec["shares"] = nullable(s.shares.value);
  Json limits = Json::object();
  if (s.grpJobs.set) limits["grpJobs"] = nullable(s.grpJobs.value);
  if (s.maxJobs.set) limits["maxJobs"] = nullable(s.maxJobs.value);
  if (s.maxSubmitJobs.set) limits["maxSubmitJobs"] = nullable(s.maxSubmitJobs.value);
  if (s.maxNodes.set) limits["maxNodesPerJob"] = nullable(s.maxNodes.value);
  if (s.maxWall.set) {
    limits["maxWallDurationPerJob"] = s.maxWall.value ? Json(*s.maxWall.value) : Json(nullptr);
  }
  for (const auto& [name, count] : s.grpTres) limits["grpTres"][name] = nullable(count);
  for (const auto& [name, count] : s.maxTres) limits["maxTresPerJob"][name] = nullable(count);
  if (!limits.empty()) spec["limits"] = limits;
  if (s.qos || !s.qosAdd.empty() || !s.qosRemove.empty()) {
    std::vector<std::string> qos =
        s.qos ? *s.qos : (current ? current->spec.allowedQos : std::vector<std::string>{});
    for (const std::string& q : s.qosAdd) {
      if (std::ranges::find(qos, q) == qos.end()) qos.push_back(q);
    }
    std::erase_if(qos, [&](const std::string& q) {
      return std::ranges::find(s.qosRemove, q) != s.qosRemove.end();
    });
    spec["allowedQos"] = qos;
  }
  if (s.defaultQos.set) spec["defaultQos"] = s.defaultQos.value.value_or("");
  return spec;
}

// A merge patch of the spec. One that replaces a list (users, QOS) carries the object's
// resourceVersion: the API server refuses it (409) if the Account changed since it was read, so
// a concurrent change to the list is never lost; the command reads again and plans again.
Json specMergePatch(const api::Account& account, Json spec) {
  const bool replacesList = spec.contains("users") || spec.contains("allowedQos");
  Json patch = {{"spec", std::move(spec)}};
  if (replacesList && !account.metadata.resourceVersion.empty()) {
    patch["metadata"]["resourceVersion"] = account.metadata.resourceVersion;
  }
  return patch;
}

std::string padded(const std::string& text, std::size_t width) {
  std::string out = text.substr(0, width);
  out.append(width - out.size(), ' ');
  return out;
}

class Planner {
 public:
  Planner(const std::vector<api::Account>& accounts, const SacctmgrContext& context)
      : context_(context) {
    for (const api::Account& account : accounts) byName_.emplace(account.metadata.name, &account);
  }

  SacctmgrPlan addAccount(const std::vector<std::string>& words) {
    Words w;
    if (!parse(words, true, w)) return std::move(plan_);
    if (!clusterOk(w)) return std::move(plan_);
    if (w.names.empty()) return fail(" Need name of account to add.\n");
    const Settings& s = w.settings;
    const std::string parent = s.parent.value_or("root");
    if (parent != "root" && !byName_.contains(parent)) {
      plan_.err += " Parent account '" + parent + "' doesn't exist on cluster " +
                   context_.clusterName + "\n        Contact your admin to add this account.\n";
      plan_.err += " No associations created.\n";
      plan_.exitCode = 1;
      return std::move(plan_);
    }
    std::string added;
    std::string assocs;
    for (const std::string& name : w.names) {
      if (name.empty()) return fail(" No blank names are allowed when adding.\n");
      if (name == "root" || byName_.contains(name)) continue;
      added += "  " + name + "\n";
      assocs += "  A = " + padded(name, 10) + " C = " + padded(context_.clusterName, 10) + "\n";
      Json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                     {"kind", "Account"},
                     {"metadata", {{"name", name}}},
                     {"spec", specPatch(s, nullptr)}};
      // Nulls clear a limit in a patch; a new object simply has none.
      Json& spec = object["spec"];
      if (spec.contains("limits")) {
        for (auto it = spec["limits"].begin(); it != spec["limits"].end();) {
          it = it->is_null() ? spec["limits"].erase(it) : std::next(it);
        }
      }
      for (auto it = spec.begin(); it != spec.end();) {
        const bool rootParent = it.key() == "parent" && it->is_string() && it->empty();
        it = it->is_null() || rootParent ? spec.erase(it) : std::next(it);
      }
      plan_.writes.push_back({AccountWrite::Kind::kCreate, name, std::move(object)});
    }
    if (plan_.writes.empty()) {
      plan_.out += " Nothing new added.\n";
      plan_.exitCode = 1;
      return std::move(plan_);
    }
    plan_.out += " Adding Account(s)\n" + added + " Settings\n";
    plan_.out += "  Description     = " + s.description.value_or("Account Name") + "\n";
    plan_.out += "  Organization    = " + s.organization.value_or("Parent/Account Name") + "\n";
    plan_.out += " Associations\n" + assocs;
    if (s.accountFields() || s.assocFields()) {
      Settings shown = s;
      shown.parent = parent;  // slurmdbd's default parent is said once anything is set
      plan_.out += " Settings\n" + settingsLines(shown);
    }
    plan_.failure = " Problem adding accounts: ";
    return std::move(plan_);
  }

  SacctmgrPlan addUser(const std::vector<std::string>& words) {
    Words w;
    // Users are named by bare words or Names=; Account= says where.
    std::vector<std::string> rest;
    for (const std::string& word : words) {
      const std::size_t equals = word.find('=');
      const std::string name = word.substr(0, equals);
      if (equals != std::string::npos &&
          (abbreviates(name, "Accounts", 2) || abbreviates(name, "DefaultAccount", 8))) {
        for (std::string& a : splitCommaList(word.substr(equals + 1))) {
          if (std::ranges::find(w.accounts, a) == w.accounts.end()) w.accounts.push_back(a);
        }
      } else {
        rest.push_back(word);
      }
    }
    if (!parse(rest, true, w)) return std::move(plan_);
    if (!clusterOk(w)) return std::move(plan_);
    if (w.settings.accountFields() || w.settings.assocFields()) {
      return fail(
          " kubeslurm keeps limits on accounts, not on a user's association: set them "
          "with `sacctmgr modify account`\n");
    }
    if (w.names.empty()) return fail(" Need name of user to add.\n");
    if (w.accounts.empty()) return fail(" Need name of account to add user to.\n");
    std::set<std::string> known;
    for (const auto& [name, account] : byName_) {
      known.insert(account->spec.users.begin(), account->spec.users.end());
    }
    std::string users;
    std::string assocs;
    for (const std::string& account : w.accounts) {
      const auto found = byName_.find(account);
      if (found == byName_.end()) {
        plan_.err += " This account '" + account +
                     "' doesn't exist.\n        Contact your admin to add this account.\n";
        plan_.exitCode = 1;
        continue;
      }
      std::vector<std::string> members = found->second->spec.users;
      bool changed = false;
      for (const std::string& user : w.names) {
        if (std::ranges::find(members, user) != members.end()) continue;
        members.push_back(user);
        changed = true;
        assocs += "  U = " + padded(user, 9) + " A = " + padded(account, 10) +
                  " C = " + padded(context_.clusterName, 10) + "\n";
        if (!known.contains(user)) {
          known.insert(user);
          users += "  " + user + "\n";
        }
      }
      if (changed) {
        plan_.writes.push_back({AccountWrite::Kind::kPatch, account,
                                specMergePatch(*found->second, Json{{"users", members}})});
      }
    }
    if (plan_.writes.empty()) {
      if (plan_.exitCode != 0) {
        plan_.err += " No associations or wckeys created.\n";
      } else {
        plan_.out += " Nothing new added.\n";
        plan_.exitCode = 1;
      }
      return std::move(plan_);
    }
    if (!users.empty()) plan_.out += " Adding User(s)\n" + users;
    plan_.out += " Associations =\n" + assocs + " Non Default Settings\n";
    plan_.failure = " Problem adding users: ";
    return std::move(plan_);
  }

  SacctmgrPlan modifyAccount(const std::vector<std::string>& words) {
    // Conditions (names) before `set`, settings after it.
    std::vector<std::string> conditions;
    std::vector<std::string> sets;
    bool inSet = false;
    for (const std::string& word : words) {
      if (word.find('=') == std::string::npos && abbreviates(word, "Set", 3)) {
        inSet = true;
      } else if (word.find('=') == std::string::npos && abbreviates(word, "Where", 5)) {
        inSet = false;
      } else {
        (inSet ? sets : conditions).push_back(word);
      }
    }
    Words where;
    Words w;
    if (!parse(conditions, true, where) || !parse(sets, false, w)) return std::move(plan_);
    if (!clusterOk(where)) return std::move(plan_);
    const Settings& s = w.settings;
    if (!s.accountFields() && !s.assocFields()) {
      return fail(" You didn't give me anything to set\n");
    }
    if (where.names.empty()) {
      return fail(
          " kubeslurm's sacctmgr modifies the accounts it is given by name: add "
          "`where name=...`\n");
    }
    if (s.parent && *s.parent != "root" && !byName_.contains(*s.parent)) {
      return fail(" Parent Account " + *s.parent + " doesn't exist.\n");
    }
    std::string accountsDone;
    std::string assocsDone;
    for (const std::string& name : where.names) {
      const auto found = byName_.find(name);
      if (found == byName_.end()) continue;
      if (s.parent && under(*s.parent, name)) {
        return fail(" Can't move account " + name + " under " + *s.parent +
                    ", which is one of its own sub-accounts.\n");
      }
      plan_.writes.push_back({AccountWrite::Kind::kPatch, name,
                              specMergePatch(*found->second, specPatch(s, found->second))});
      if (s.accountFields()) accountsDone += "  " + name + "\n";
      if (s.assocFields()) {
        const std::string parent = s.parent.value_or(parentOf(*found->second));
        assocsDone += "  C = " + padded(context_.clusterName, 10) + " A = " + name +
                      (name == "root" ? "" : " of " + parent) + "\n";
      }
    }
    if (plan_.writes.empty()) {
      plan_.out += " Nothing modified\n";
      plan_.exitCode = 1;
      return std::move(plan_);
    }
    if (!accountsDone.empty()) plan_.out += " Modified accounts...\n" + accountsDone;
    if (!assocsDone.empty()) plan_.out += " Modified account associations...\n" + assocsDone;
    plan_.failure = " Error with request: ";
    return std::move(plan_);
  }

  SacctmgrPlan deleteAccount(const std::vector<std::string>& words) {
    Words w;
    if (!parse(words, true, w)) return std::move(plan_);
    if (w.settings.accountFields() || w.settings.assocFields()) {
      return fail(" Unknown condition for delete\n");
    }
    if (!clusterOk(w)) return std::move(plan_);
    for (const std::string& name : w.names) {
      if (equalsIgnoreCase(name, "root")) {
        return fail(
            " You are not allowed to remove the root account.\n"
            " Use remove cluster instead.\n");
      }
    }
    std::string done;
    for (const std::string& name : w.names) {
      if (!byName_.contains(name)) continue;
      // slurmdbd removes the sub-accounts' associations with it; an Account whose parent is
      // gone would hang under root instead, with root's place in the tree: refused.
      std::string children;
      for (const auto& [other, account] : byName_) {
        if (account->spec.parent == name && std::ranges::find(w.names, other) == w.names.end()) {
          children += (children.empty() ? "" : ",") + other;
        }
      }
      if (!children.empty()) {
        std::string err = " Error with request: account ";
        err += name;
        err += " still has sub-accounts (";
        err += children;
        err += "): delete or move them first\n";
        return fail(err);
      }
      plan_.writes.push_back({AccountWrite::Kind::kDelete, name, Json()});
      done += "  " + name + "\n";
    }
    if (plan_.writes.empty()) {
      plan_.out += " Nothing deleted\n";
      plan_.exitCode = 1;
      return std::move(plan_);
    }
    plan_.out += " Deleting accounts...\n" + done;
    plan_.failure = " Error with request: ";
    return std::move(plan_);
  }

 private:
  bool parse(const std::vector<std::string>& words, bool namesAllowed, Words& w) {
    if (parseWords(words, namesAllowed, w, plan_.err)) return true;
    plan_.exitCode = 1;
    plan_.writes.clear();
    return false;
  }

  bool clusterOk(const Words& w) {
    const auto other = std::ranges::find_if(w.clusters, [this](const std::string& cluster) {
      return !equalsIgnoreCase(cluster, context_.clusterName);
    });
    if (other == w.clusters.end()) return true;
    plan_.err += " This cluster '" + *other +
                 "' doesn't exist.\n        Contact your admin to add it to accounting.\n";
    plan_.exitCode = 1;
    return false;
  }

  SacctmgrPlan fail(const std::string& err) {
    plan_.err += err;
    plan_.exitCode = 1;
    plan_.writes.clear();
    return std::move(plan_);
  }

  std::string parentOf(const api::Account& account) const {
    const std::string& parent = account.spec.parent;
    return parent.empty() || !byName_.contains(parent) ? "root" : parent;
  }

  // Whether `candidate` is `account` or lies under it.
  bool under(const std::string& candidate, const std::string& account) const {
    std::string at = candidate;
    for (std::size_t steps = 0; steps <= byName_.size(); ++steps) {
      if (at == account) return true;
      const auto found = byName_.find(at);
      if (found == byName_.end() || found->second->spec.parent.empty()) return false;
      at = found->second->spec.parent;
    }
    return false;  // a circle that does not pass through `account`
  }

  const SacctmgrContext& context_;
  std::map<std::string, const api::Account*, std::less<>> byName_;
  SacctmgrPlan plan_;
};

}  // namespace

SacctmgrPlan planSacctmgrChange(const std::vector<std::string>& words,
                                const std::vector<api::Account>& accounts,
                                const SacctmgrContext& context) {
  Planner planner(accounts, context);
  const std::string& verb = words.at(0);
  const std::string entity = words.size() > 1 ? words[1] : "";
  const std::vector<std::string> rest =
      words.size() > 2 ? std::vector<std::string>(std::next(words.begin(), 2), words.end())
                       : std::vector<std::string>{};
  const bool account =
      !entity.empty() && (abbreviates(entity, "Accounts", 1) || abbreviates(entity, "Acct", 4));
  const bool user = !entity.empty() && abbreviates(entity, "Users", 1);
  if (abbreviates(verb, "add", 3) || abbreviates(verb, "create", 3)) {
    if (account) return planner.addAccount(rest);
    if (user) return planner.addUser(rest);
  } else if (abbreviates(verb, "modify", 1) || abbreviates(verb, "update", 1)) {
    if (account) return planner.modifyAccount(rest);
  } else if (abbreviates(verb, "delete", 3) || abbreviates(verb, "remove", 3)) {
    if (account) return planner.deleteAccount(rest);
  }
  SacctmgrPlan plan;
  plan.err =
      "sacctmgr: error: kubeslurm's sacctmgr adds accounts and users, modifies and "
      "deletes accounts; other changes are made on the Account objects with kubectl\n";
  plan.exitCode = 1;
  return plan;
}

bool commitAnswer(char answer) { return answer == 'y' || answer == 'Y'; }

}  // namespace kubeslurm::cli
