#include "kubeslurm/accounting/usage_report.h"

#include <algorithm>
#include <set>
#include <utility>

#include "kubeslurm/base/arithmetic.h"
#include "kubeslurm/base/text.h"

namespace kubeslurm::accounting {

namespace {

constexpr std::int64_t kHour = 3600;
constexpr std::int64_t kDay = 86400;

// Floor division, so that times before the epoch round the same way.
std::int64_t floorTo(std::int64_t t, std::int64_t unit) {
  const std::int64_t q = t / unit;
  return (t % unit < 0 ? q - 1 : q) * unit;
}

// slurmdb_report_set_start_end_time's rounding of a given bound, on local time: seconds from 30
// add a minute, and minutes (after that) from 30 an hour; then minutes and seconds go.
std::int64_t roundToHour(std::int64_t local) {
  const std::int64_t hour = floorTo(local, kHour);
  const std::int64_t seconds = local - hour;
  std::int64_t minutes = seconds / 60;
  if (seconds % 60 >= 30) ++minutes;
  return minutes >= 30 ? hour + kHour : hour;
}

// "500G" -> 512000 (MB), as Slurm writes mem in AllocTRES (a bare number is MB).
std::optional<std::uint64_t> megabytes(std::string_view text) {
  std::uint64_t kib = 1024;
  if (!text.empty() && text.back() >= 'A') {
    const std::string_view units = "KMGTP";
    const std::size_t unit = units.find(text.back());
    if (unit == std::string_view::npos) return std::nullopt;
    kib = std::uint64_t{1} << (10 * unit);
    text.remove_suffix(1);
  }
  const auto value = parseInteger<std::uint64_t>(text);
  if (!value || *value > UINT64_MAX / kib) return std::nullopt;
  return *value * kib / 1024;
}

}  // namespace

ReportWindow reportWindow(std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                          std::int64_t now, std::int32_t utcOffset) {
  const std::int64_t localNow = now + utcOffset;
  std::int64_t localEnd = 0;
  if (end) {
    localEnd = roundToHour(std::min(*end, now) + utcOffset);
  } else {
    localEnd = floorTo(localNow, kDay);
  }
  const std::int64_t localStart =
      start ? roundToHour(*start + utcOffset) : floorTo(localNow, kDay) - kDay;
  ReportWindow window{localStart - utcOffset, localEnd - utcOffset};
  if (window.end - window.start < kHour) window.end = window.start + kHour;
  return window;
}

std::map<std::string, std::uint64_t> tresCounts(std::string_view tres) {
  std::map<std::string, std::uint64_t> counts;
  std::uint64_t typedGpus = 0;
  while (!tres.empty()) {
    const std::size_t comma = tres.find(',');
    const std::string_view item = tres.substr(0, comma);
    tres.remove_prefix(comma == std::string_view::npos ? tres.size() : comma + 1);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    const std::string_view name = item.substr(0, equals);
    const std::string_view value = item.substr(equals + 1);
    const std::optional<std::uint64_t> count =
        name == "mem" ? megabytes(value) : parseInteger<std::uint64_t>(value);
    if (!count) continue;
    counts[std::string(name)] = *count;
    if (name.starts_with("gres/gpu:")) typedGpus += *count;
  }
  if (typedGpus > 0) counts.try_emplace("gres/gpu", typedGpus);
  return counts;
}

std::vector<AssociationUsage> associationUsage(const std::vector<JobRecord>& records,
                                               const ReportWindow& window, std::int64_t now) {
  std::map<std::pair<std::string, std::string>, AssociationUsage> byAssociation;
  for (const JobRecord& r : records) {
    // An array's own record stands for its tasks, whose records hold their allocations.
    if (r.allocTres.empty() || !r.startTime || !r.arrayTasks.empty()) continue;
    const std::int64_t from = std::max(*r.startTime, window.start);
    const std::int64_t to = std::min(r.endTime.value_or(now), window.end);
    if (to <= from) continue;
    const auto seconds = static_cast<std::uint64_t>(to - from);
    const std::map<std::string, std::uint64_t> counts = tresCounts(r.allocTres);
    if (counts.empty()) continue;
    AssociationUsage& usage = byAssociation[{r.user, r.account}];
    usage.user = r.user;
    usage.account = r.account;
    for (const auto& [name, count] : counts) {
      std::uint64_t& total = usage.allocSeconds[name];
      total = saturatingSum(total, saturatingProduct(count, seconds));
    }
  }
  std::vector<AssociationUsage> out;
  out.reserve(byAssociation.size());
  for (auto& [key, usage] : byAssociation) out.push_back(std::move(usage));
  return out;
}

namespace {

using TresSeconds = std::map<std::string, std::uint64_t>;

void addInto(TresSeconds& total, const TresSeconds& more) {
  for (const auto& [name, seconds] : more) {
    std::uint64_t& sum = total[name];
    sum = saturatingSum(sum, seconds);
  }
}

}  // namespace

std::map<std::string, std::string> accountParents(const std::vector<AccountEdge>& accounts,
                                                  const std::vector<std::string>& extra) {
  const std::string root = kRootAccount;
  // One pass cuts every chain that does not reach root within as many steps as there are
  // accounts: an account checked earlier reaches root, and cutting a later one only shortens
  // the chains through it.
  std::map<std::string, std::string> parentOf;
  for (const AccountEdge& a : accounts) {
    if (a.name == root) continue;
    parentOf.try_emplace(a.name, a.parent.empty() ? root : a.parent);
  }
  for (const std::string& account : extra) {
    if (account != root) parentOf.try_emplace(account, root);
  }
  for (auto& [name, parent] : parentOf) {
    if (parent != root && !parentOf.contains(parent)) parent = root;
  }
  for (auto& [name, parent] : parentOf) {
    std::string at = parent;
    std::size_t steps = 0;
    while (at != root && steps <= parentOf.size()) {
      at = parentOf.at(at);
      ++steps;
    }
    if (at != root || steps > parentOf.size()) parent = root;
  }
  return parentOf;
}

std::vector<AccountUsageRow> accountUsageTree(const std::vector<AssociationUsage>& usage,
                                              const std::vector<AccountEdge>& accounts,
                                              const std::vector<std::string>& subtrees) {
  const std::string root = kRootAccount;
  std::vector<std::string> charged;
  charged.reserve(usage.size());
  for (const AssociationUsage& u : usage) charged.push_back(u.account);
  const std::map<std::string, std::string> parentOf = accountParents(accounts, charged);
  // Usage up the tree, users under their account.
  std::map<std::string, TresSeconds> subtreeUsage;
  std::map<std::string, std::map<std::string, TresSeconds>> usersOf;
  for (const AssociationUsage& u : usage) {
    if (u.allocSeconds.empty()) continue;
    addInto(usersOf[u.account][u.user], u.allocSeconds);
    std::string at = u.account;
    for (std::size_t steps = 0; steps <= parentOf.size() + 1; ++steps) {
      addInto(subtreeUsage[at], u.allocSeconds);
      if (at == root) break;
      at = parentOf.at(at);
    }
  }
  std::map<std::string, std::set<std::string>> childrenOf;
  for (const auto& [name, parent] : parentOf) childrenOf[parent].insert(name);

  // Depth first from root; a subtree is kept when it or an ancestor is named.
  std::vector<AccountUsageRow> rows;
  const std::set<std::string> named(subtrees.begin(), subtrees.end());
  std::vector<std::pair<std::string, bool>> stack = {{root, named.empty() || named.contains(root)}};
  while (!stack.empty()) {
    const std::string account = std::move(stack.back().first);
    const bool kept = stack.back().second;
    stack.pop_back();
    const auto used = subtreeUsage.find(account);
    if (used == subtreeUsage.end()) continue;  // nothing below it used anything
    if (kept) {
      rows.push_back({account, account == root ? "" : parentOf.at(account), "", used->second});
      if (const auto users = usersOf.find(account); users != usersOf.end()) {
        for (const auto& [user, seconds] : users->second) {
          rows.push_back({account, "", user, seconds});
        }
      }
    }
    if (const auto children = childrenOf.find(account); children != childrenOf.end()) {
      // Pushed last first, so that the first by name comes off the stack first.
      std::for_each(children->second.rbegin(), children->second.rend(),
                    [&](const std::string& child) {
                      stack.emplace_back(child, kept || named.contains(child));
                    });
    }
  }
  return rows;
}

}  // namespace kubeslurm::accounting
