// Slurm hostlist expressions: expansion and compression as Slurm 22.05 does them
// (src/common/hostlist.c semantics; see ../shared/reference/slurm-22.05.md "Hostlists").
//
// Behaviour pinned against the real `scontrol` 22.05.8 by tests/integration/slurm_diff:
//  - "rack[01-02]-gpu[1-3]": several bracket groups; the LAST group in the prefix varies slowest,
//    the group at the end fastest (a[0-1]b[0-1]c[1-2] gives a0b0c1 a0b0c2 a1b0c1 a1b0c2 a0b1c1...).
//  - Order and duplicates are kept; only `hostlistsorted` sorts (Slurm's natural order on
//    prefixes, then by number), and its merge of overlapping ranges is Slurm's, quirks included
//    ("n[1-3],n[2-5]" sorts to "n[1-2,2-3,3-5]").
//  - Limits: at most 65536 hosts in one range, 65536 values across a bracket group that is
//    followed by another group, 262144 ranges in one bracket (more is fatal to scontrol).
//  - Slurm counts hosts in a C int: a list of 2^31 or more hosts wraps, and `show hostnames`
//    prints as many hosts as the wrapped count says (none when it is negative).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::slurm {

// A run of hosts sharing a prefix and a zero-padding width: Slurm's hostrange_t.
struct HostRange {
  std::string prefix;
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  int width = 0;        // digits to zero-pad the number to
  bool single = false;  // a name without a numeric suffix: `prefix` is the whole name

  friend bool operator==(const HostRange&, const HostRange&) = default;
};

// A parsed hostlist (one dimension, as on every non-Cray cluster): Slurm's hostlist_t.
class Hostlist {
 public:
  Hostlist() = default;

  // Parses a hostlist expression as hostlist_create() does. `diagnostics` (may be null)
  // receives each line Slurm logs with error() while parsing, e.g.
  // "_parse_single_range: Invalid range: `5-3'"; some come with a successful parse (a bad
  // range inside an inner bracket group is reported and skipped). On failure the Status is
  //  - kInvalidArgument: scontrol prints "Invalid hostlist: EXPR" (message: the last
  //    diagnostic, or empty when Slurm prints none, as for "n[1-3]x");
  //  - kResourceExhausted: Slurm calls fatal() (message: the text after "fatal: ");
  //  - kOutOfRange: we refuse what Slurm would not survive either: more than `maxRanges` ranges
  //    (the 65536 cap is per bracket group, so "a[0-65535]b[0-65535]c[1]" asks for 2^32 of
  //    them) or the work of that many, or a bracket value of 2^64-1 before another group
  //    (Slurm 22.05 loops forever).
  static constexpr std::size_t kDefaultMaxRanges = std::size_t{1} << 20;
  static StatusOr<Hostlist> parse(std::string_view expr,
                                  std::vector<std::string>* diagnostics = nullptr,
                                  std::size_t maxRanges = kDefaultMaxRanges);

  // Appends one hostname as hostlist_push_host() does: a trailing run of digits becomes the
  // number (its length the width); a name without one is kept whole.
  void pushHost(std::string_view host);

  // Sorts as hostlist_sort() does (then merges overlapping and adjacent ranges).
  void sort();

  // The compressed form, as hostlist_ranged_string() writes it.
  std::string ranged() const;

  // Appends a range as hostlist_push_range() does: it joins the last range when it continues
  // it (same prefix, compatible width, next number).
  void pushRange(HostRange range);

  // Calls `emit` with each host in the order `scontrol show hostnames` prints them, as many as
  // Slurm's (wrapping) host count says. Stops early when `emit` returns false.
  void forEachHost(const std::function<bool(std::string_view)>& emit) const;

  // Slurm's host count: the sum of range sizes, wrapped to a C int as Slurm's counter wraps.
  std::int32_t count() const { return count_; }
  const std::vector<HostRange>& ranges() const { return ranges_; }

 private:
  std::vector<HostRange> ranges_;
  std::int32_t count_ = 0;
};

// Expands "gpu-node-[001-004],login[1-2]" into hostnames, in order, duplicates kept.
// On bad input the Status message is the diagnostic Slurm prints after "scontrol: error: "
// (e.g. "_parse_single_range: Invalid range: `5-3'"), or empty when Slurm prints only
// "Invalid hostlist: EXPR". More than kMaxExpandedHosts hosts is kResourceExhausted (use
// Hostlist::forEachHost to stream a list of any size).
inline constexpr std::int32_t kMaxExpandedHosts = 1 << 22;
StatusOr<std::vector<std::string>> expandHostlist(std::string_view expr);

// How many hosts `expr` names, as Hostlist::count says (duplicates count); 0 when it does not
// parse. Counts ranges, never expands them.
std::int64_t countHosts(std::string_view expr);

// Compresses hostnames the way `scontrol show hostlist` does: order kept, duplicates kept.
// Each element is one hostname (pushed as hostlist_push_host() does, never parsed as an
// expression), so for ordinary names this equals `scontrol show hostlist a,b,c`.
std::string compressHostlist(std::span<const std::string> hosts);

// As `scontrol show hostlistsorted`: sorted (Slurm's host order), duplicates kept.
std::string compressHostlistSorted(std::span<const std::string> hosts);

// Slurm's strnatcmp(): the "natural" order of hostname prefixes (runs of digits compare by
// value, leading zeros make a run compare as a fraction, white space is skipped). <0, 0, >0.
int naturalCompare(std::string_view a, std::string_view b);

}  // namespace kubeslurm::slurm
