// Differential test: our `scontrol show hostnames|hostlist|hostlistsorted` against the REAL
// Slurm 22.05 scontrol (Debian's slurm-client, /usr/bin/scontrol), byte for byte on stdout and
// stderr and on the exit code, over a fixed-seed corpus of expressions and host lists that
// covers the whole syntax (../shared/reference/slurm-22.05.md, "Hostlists"). Both of ours: the
// CLI's scontrol and the in-pod tool's, for every case the in-pod tool answers itself.
//
// The real binary needs only a slurm.conf (no daemons). A missing scontrol FAILS the test: CI
// installs slurm-client, and a silent skip would hide every regression.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/cli/cli.h"
#include "kubeslurm/inpod/scontrol.h"
#include "tests/integration/slurm_diff/real_slurm.h"

namespace kubeslurm {
namespace {

using diff::readAll;
using diff::Scratch;

constexpr const char* kRealScontrol = "/usr/bin/scontrol";
constexpr std::uint64_t kSeed = 0x5eed'2205'0008ULL;
constexpr int kParallel = 3;
constexpr std::chrono::seconds kTimeLimit{20};
using Clock = std::chrono::steady_clock;

struct Case {
  std::vector<std::string> args;           // after "scontrol"
  std::map<std::string, std::string> env;  // besides SLURM_CONF and PATH
};

struct Outcome {
  std::string out;
  std::string err;
  int rc = 0;

  friend bool operator==(const Outcome&, const Outcome&) = default;
};

std::string slurmConf(const Scratch& scratch) {
  // The test reads its environment once, before it starts any process.
  const char* conf = std::getenv("SLURM_CONF");  // NOLINT(concurrency-mt-unsafe)
  if (conf != nullptr && *conf != '\0') return conf;
  return scratch.write("slurm.conf", "ClusterName=diff\nSlurmctldHost=localhost\n");
}

// Runs the real scontrol over all cases, a few at a time, each with a clean environment and its
// output captured in files (no pipes to drain, so no deadlock on large outputs).
class RealScontrol {
 public:
  RealScontrol(const Scratch& scratch, std::string conf)
      : scratch_(scratch), conf_(std::move(conf)) {}

  std::vector<Outcome> runAll(const std::vector<Case>& cases) {
    std::vector<Outcome> outcomes(cases.size());
    struct Slot {
      pid_t pid = -1;
      std::size_t index = 0;
      Clock::time_point deadline;
      bool killed = false;
    };
    std::vector<Slot> slots(kParallel);
    std::size_t next = 0;
    std::size_t running = 0;
    while (next < cases.size() || running > 0) {
      for (std::size_t s = 0; s < slots.size() && next < cases.size(); ++s) {
        if (slots[s].pid != -1) continue;
        slots[s] = {spawn(cases[next], s), next, Clock::now() + kTimeLimit, false};
        if (slots[s].pid == -1) {
          outcomes[next].rc = -1;
          outcomes[next].err = "spawn failed";
          slots[s].pid = -1;
        } else {
          ++running;
        }
        ++next;
      }
      if (running == 0) continue;
      int status = 0;
      const pid_t done = waitpid(-1, &status, WNOHANG);
      if (done < 0) break;
      if (done == 0) {
        // A watchdog, in case an input makes Slurm loop forever (and eat memory doing so).
        for (Slot& slot : slots) {
          if (slot.pid != -1 && !slot.killed && Clock::now() > slot.deadline) {
            kill(slot.pid, SIGKILL);
            slot.killed = true;
          }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      for (std::size_t s = 0; s < slots.size(); ++s) {
        if (slots[s].pid != done) continue;
        Outcome& outcome = outcomes[slots[s].index];
        outcome.out = readAll(outPath(s));
        outcome.err = readAll(errPath(s));
        outcome.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (slots[s].killed) outcome.err += "\n[killed by the test's watchdog: ran too long]";
        slots[s].pid = -1;
        --running;
      }
    }
    return outcomes;
  }

 private:
  std::filesystem::path outPath(std::size_t slot) const {
    return scratch_.dir() / ("slot" + std::to_string(slot) + ".out");
  }
  std::filesystem::path errPath(std::size_t slot) const {
    return scratch_.dir() / ("slot" + std::to_string(slot) + ".err");
  }

  pid_t spawn(const Case& c, std::size_t slot) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = outPath(slot).string();
    const std::string err = errPath(slot).string();
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> argStrings = {"scontrol"};
    argStrings.insert(argStrings.end(), c.args.begin(), c.args.end());
    std::vector<std::string> envStrings = {"SLURM_CONF=" + conf_, "PATH=/usr/bin:/bin"};
    for (const auto& [name, value] : c.env) envStrings.push_back(name + "=" += value);
    std::vector<char*> argv = diff::cStrings(argStrings);
    std::vector<char*> envp = diff::cStrings(envStrings);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, kRealScontrol, &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
  }

  const Scratch& scratch_;
  std::string conf_;
};

StatusOr<std::string> readWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return notFound("Unable to open file " + path);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::optional<std::string> caseVariable(const Case& c, std::string_view name) {
  auto it = c.env.find(std::string(name));
  if (it == c.env.end()) return std::nullopt;
  return it->second;
}

Outcome runOurs(const Case& c) {
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  cli::CliIo io{
      .in = in,
      .out = out,
      .err = err,
      .getenv = [&](std::string_view name) { return caseVariable(c, name); },
      .readFile = readWholeFile,
  };
  Outcome outcome;
  outcome.rc = cli::runCli("scontrol", c.args, io);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

// The in-pod tool's scontrol; nullopt where it would hand the command to the full CLI.
std::optional<Outcome> runInPod(const Case& c) {
  std::ostringstream out;
  std::ostringstream err;
  inpod::ScontrolIo io{
      .out = out,
      .err = err,
      .getenv = [&](std::string_view name) { return caseVariable(c, name); },
      .readFile = readWholeFile,
  };
  const std::optional<int> rc = inpod::runOfflineScontrol(c.args, io);
  if (!rc) return std::nullopt;
  return Outcome{.out = out.str(), .err = err.str(), .rc = *rc};
}

std::string quoted(const std::vector<std::string>& args) {
  std::string s = "scontrol";
  for (const std::string& a : args) s += " '" + a + "'";
  return s;
}

std::string clip(const std::string& s) {
  constexpr std::size_t kMax = 600;
  return s.size() <= kMax ? s : s.substr(0, kMax) + "...(" + std::to_string(s.size()) + " bytes)";
}

// What a corpus exercised, so that a generator change cannot quietly stop covering errors.
struct Coverage {
  std::size_t cases = 0;
  std::size_t withStderr = 0;
  std::size_t failing = 0;  // rc != 0
  std::size_t emptyStdout = 0;
  std::size_t inPod = 0;  // cases the in-pod tool's scontrol answered too
};

// Compares every case and reports the first few differences in full.
Coverage expectSameAsReal(const std::vector<Case>& cases) {
  Coverage coverage;
  coverage.cases = cases.size();
  if (!std::filesystem::exists(kRealScontrol)) {
    ADD_FAILURE() << kRealScontrol
                  << " is missing: install slurm-client (Slurm 22.05); this test must not skip";
    return coverage;
  }
  Scratch scratch("hostlist-diff");
  if (scratch.dir().empty()) {
    ADD_FAILURE() << "cannot create a scratch directory";
    return coverage;
  }
  RealScontrol real(scratch, slurmConf(scratch));
  const std::vector<Outcome> expected = real.runAll(cases);
  int differences = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    coverage.withStderr += expected[i].err.empty() ? 0U : 1U;
    coverage.failing += expected[i].rc != 0 ? 1U : 0U;
    coverage.emptyStdout += expected[i].out.empty() ? 1U : 0U;
    std::vector<std::pair<const char*, Outcome>> ours = {{"cli", runOurs(cases[i])}};
    if (std::optional<Outcome> inPod = runInPod(cases[i])) {
      ++coverage.inPod;
      ours.emplace_back("in-pod", std::move(*inPod));
    }
    for (const auto& [who, outcome] : ours) {
      if (outcome == expected[i]) continue;
      if (++differences <= 15) {
        ADD_FAILURE() << quoted(cases[i].args) << "\n  real rc=" << expected[i].rc << " stdout=["
                      << clip(expected[i].out) << "] stderr=[" << clip(expected[i].err) << "]\n  "
                      << who << " rc=" << outcome.rc << " stdout=[" << clip(outcome.out)
                      << "] stderr=[" << clip(outcome.err) << "]";
      }
    }
  }
  EXPECT_EQ(differences, 0) << "of " << cases.size() << " cases";
  std::cout << "[ corpus   ] " << coverage.cases
            << " runs of the real scontrol: " << coverage.withStderr << " wrote to stderr, "
            << coverage.failing << " exited non-zero, " << coverage.emptyStdout
            << " printed nothing; the in-pod scontrol answered " << coverage.inPod << "\n";
  return coverage;
}

// ---- The corpus -------------------------------------------------------------------------------

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  bool chance(unsigned percent) { return below(100) < percent; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

  static std::string padded(std::uint64_t value, std::uint64_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
    return digits;
  }

  // Small numbers mostly, some crossing digit boundaries, a few large.
  std::uint64_t number() {
    switch (below(10)) {
      case 0:
        return below(10);
      case 1:
        return 95 + below(10);
      case 2:
        return 995 + below(10);
      case 3:
        return below(100000);
      case 4:
        return chance(50) ? 2147483640 + below(20) : 4294967290 + below(20);
      case 5:
        return 1'000'000'000'000ULL + below(1'000'000'000'000'000ULL);
      default:
        return below(40);
    }
  }

  std::string prefix() {
    static const std::vector<std::string> kPrefixes = {
        "n",   "gpu-node-", "rack", "node",  "a", "x", "lx",   "nid", "c1-",
        "r2n", "login",     "b.c-", "node_", "N", "",  "ib0-", "Gpu"};
    return pick(kPrefixes);
  }

  // One item of a bracket: a number or a range, valid mostly. `lone` is set when the bracket is
  // the token's only group: only there may an item be huge, since a huge group in front of
  // another expands multiplicatively, and a value of 2^64-1 there makes Slurm 22.05 loop
  // forever (see Hostlist::parse).
  std::string rangeItem(std::uint64_t maxSpan, bool lone) {
    if (chance(3)) {
      static const std::vector<std::string> kOdd = {
          "",     "a",   "1x",    "x",    "1-",   "-3",   "1--3",   " 2",  "+3",
          "1a-3", "3-2", "07-7",  "1-+3", "2 -4", "1-3a", "1- 3",   "\t4", "0x5",
          "5-5",  "-",   "1-2-3", "00",   "0-0",  "9-10", "099-101"};
      static const std::vector<std::string> kHuge = {
          "0-70000", "0-65535", "1-65536", "18446744073709551616", "99999999999999999999999"};
      return lone && chance(25) ? pick(kHuge) : pick(kOdd);
    }
    const std::uint64_t width = chance(50) ? 0 : 1 + below(4);
    const std::uint64_t lo = chance(80) ? below(120) : number();
    if (chance(45)) return padded(lo, width);
    std::uint64_t hi = lo + below(maxSpan + 1);
    if (chance(4) && lo > 0) hi = lo - 1;  // reversed
    const std::uint64_t hiWidth = chance(85) ? width : below(5);
    return padded(lo, width) + "-" + padded(hi, hiWidth);
  }

  std::string bracket(std::uint64_t maxItems, std::uint64_t maxSpan, bool lone) {
    std::string out = "[";
    const std::uint64_t items = 1 + below(maxItems);
    for (std::uint64_t i = 0; i < items; ++i) {
      if (i > 0) out += chance(3) ? ",," : ",";
      out += rangeItem(maxSpan, lone);
    }
    return out + "]";
  }

  std::string token() {
    if (chance(5)) {
      static const std::vector<std::string> kOdd = {"abc[12",      "n]1[2]",
                                                    "[abc",        "n[[1-2]",
                                                    "a[ ]b[c",     "n[1-2]]",
                                                    "n1]",         "[",
                                                    "]",           "n[1-2",
                                                    "n[1-3]x",     "n[1-2]x[3]",
                                                    "a[1,b[2]",    "n[1-3]-[a,b]",
                                                    "x[1-2][3-4]", "n[5-3]",
                                                    "n[]",         "a[x]b[1-2]c[1-2]",
                                                    "[1-3]",       "[01-03]x",
                                                    "n[1-3]]x[2]"};
      return pick(kOdd);
    }
    std::string out = prefix();
    const std::uint64_t groups = chance(60) ? 1 : chance(70) ? 2 : 3;
    if (chance(15)) {
      // No bracket at all: a plain hostname.
      return out + (chance(70) ? padded(number(), below(4)) : "");
    }
    static const std::vector<std::string> kMiddles = {"", "-", "-gpu", "x", ".", "_n", "s"};
    for (std::uint64_t g = 0; g < groups; ++g) {
      if (groups == 1) {
        out += bracket(5, 30, true);
      } else {
        out += bracket(3, 4, false);
      }
      if (g + 1 < groups) out += pick(kMiddles);
    }
    if (chance(6)) {
      static const std::vector<std::string> kSuffixes = {"-ib", "x", "]", "0", " ", ",", "[2"};
      out += pick(kSuffixes);
    }
    return out;
  }

  std::string expression() {
    static const std::vector<std::string> kSeparators = {",", ",", ",", ",", " ", ", ", ",,", "\t"};
    std::string out;
    const std::uint64_t tokens = 1 + below(chance(70) ? 2 : 5);
    for (std::uint64_t t = 0; t < tokens; ++t) {
      if (t > 0) out += pick(kSeparators);
      out += token();
    }
    if (chance(3)) out = "," + out;
    if (chance(3)) out += ",";
    return out;
  }

  // A list of plain hostnames, as a scheduler would hand to compression.
  std::string hostList() {
    std::vector<std::string> hosts;
    const std::uint64_t mode = below(7);
    const std::uint64_t n = 1 + below(chance(85) ? 40 : 250);
    const std::string p = prefix();
    const std::uint64_t width = below(5);
    switch (mode) {
      case 0: {  // a run, partly shuffled
        const std::uint64_t start = chance(70) ? below(110) : number();
        for (std::uint64_t i = 0; i < n; ++i) hosts.push_back(p + padded(start + i, width));
        for (std::uint64_t swaps = below(4); swaps > 0 && hosts.size() > 1; --swaps) {
          std::swap(hosts[below(hosts.size())], hosts[below(hosts.size())]);
        }
        break;
      }
      case 1:  // from a small pool: duplicates
        for (std::uint64_t i = 0; i < n; ++i) hosts.push_back(p + padded(below(12), width));
        break;
      case 2: {  // several prefixes, with and without numbers
        std::vector<std::string> prefixes = {p, prefix(), prefix()};
        for (std::uint64_t i = 0; i < n; ++i) {
          const std::string& q = pick(prefixes);
          hosts.push_back(chance(10) ? (q.empty() ? "login" : q) : q + padded(below(30), below(4)));
        }
        break;
      }
      case 3:  // mixed widths of the same prefix
        for (std::uint64_t i = 0; i < n; ++i) hosts.push_back(p + padded(below(120), below(5)));
        break;
      case 4: {  // runs across digit boundaries
        const std::uint64_t start = pick(std::vector<std::uint64_t>{7, 97, 997, 9997, 98});
        for (std::uint64_t i = 0; i < n && i < 12; ++i)
          hosts.push_back(p + padded(start + i, width));
        break;
      }
      case 5:  // large numbers, including past 2^31 and 2^32
        for (std::uint64_t i = 0; i < n && i < 8; ++i) {
          hosts.push_back(p + padded(chance(60) ? number() : below(10), below(3)));
        }
        break;
      default:  // overlapping and nested ranges written out as expressions
        for (std::uint64_t i = 0; i < 1 + below(4); ++i) {
          const std::uint64_t lo = below(20);
          hosts.push_back(p + "[" + padded(lo, width) + "-" + padded(lo + below(10), width) + "]");
        }
        break;
    }
    std::string out;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      if (i > 0) out += ",";
      out += hosts[i];
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

// Slurm 22.05's hostlist_sort() can read a range it just freed: when two numbers under one prefix
// are 2^31 or more apart its int comparison misorders them and the merge step deletes the wrong
// range. What it then reads depends on whether glibc handed the block straight back (the common
// case, which Hostlist::sort() reproduces) or not (it depends on the allocation history of the
// whole run). Generated sorted cases therefore keep numbers below 2^31; the fixed cases below
// pin small inputs, where the real binary is stable.
bool reachesSlurmsUseAfterFree(const std::string& input) {
  std::uint64_t value = 0;
  std::size_t digits = 0;
  for (const char c : input + " ") {
    if (c >= '0' && c <= '9') {
      if (++digits > 10) return true;
      value = value * 10 + static_cast<std::uint64_t>(c - '0');
      continue;
    }
    if (digits > 0 && value >= (std::uint64_t{1} << 31)) return true;
    value = 0;
    digits = 0;
  }
  return false;
}

constexpr int kExpressions = 1800;
constexpr int kHostLists = 1400;

TEST(HostlistDiffTest, RealScontrolIsInstalled) {
  EXPECT_TRUE(std::filesystem::exists(kRealScontrol))
      << "install slurm-client (Slurm 22.05): the differential tests need the real scontrol";
}

// Every generated expression through all three entities.
TEST(HostlistDiffTest, GeneratedExpressionsMatchRealScontrol) {
  Generator gen(kSeed);
  std::vector<Case> cases;
  for (int i = 0; i < kExpressions; ++i) {
    const std::string expr = gen.expression();
    for (const char* entity : {"hostnames", "hostlist", "hostlistsorted"}) {
      if (entity == std::string("hostlistsorted") && reachesSlurmsUseAfterFree(expr)) continue;
      cases.push_back({{"show", entity, expr}, {}});
    }
  }
  const Coverage coverage = expectSameAsReal(cases);
  // Invalid and weird-but-valid input must stay a real share of the corpus.
  EXPECT_GT(coverage.withStderr, cases.size() / 20);
  EXPECT_GT(coverage.failing, cases.size() / 40);
}

TEST(HostlistDiffTest, GeneratedHostListsMatchRealScontrol) {
  Generator gen(kSeed + 1);
  std::vector<Case> cases;
  for (int i = 0; i < kHostLists; ++i) {
    const std::string list = gen.hostList();
    for (const char* entity : {"hostlist", "hostlistsorted", "hostnames"}) {
      if (entity == std::string("hostlistsorted") && reachesSlurmsUseAfterFree(list)) continue;
      cases.push_back({{"show", entity, list}, {}});
    }
  }
  EXPECT_GE(kExpressions + kHostLists, 3000) << "the corpus is at least 3000 distinct inputs";
  expectSameAsReal(cases);
}

// The reference file's Hostlists section, limits, and scontrol's command line around them.
TEST(HostlistDiffTest, CommandLineMatchesRealScontrol) {
  Scratch files("hostlist-diff");
  const std::string hostFile = files.write("hosts.txt", "a1\na2\n\n\na3,,a5\nb7\n");
  const std::string noNewline = files.write("hosts2.txt", "n3\nn1\nn2");
  const std::string badFile = files.write("bad.txt", "n[5-3]\n");
  std::string many = "n[";
  for (int i = 0; i < 262145; ++i) many += i == 0 ? "1" : ",1";
  const std::string tooManyRanges = files.write("many.txt", many + "]\n");
  const std::string justEnough = files.write("enough.txt", many.substr(0, many.size() - 2) + "]");
  const std::vector<Case> cases = {
      {{"show", "hostnames", "gpu-node-[001-004],login[1-2]"}, {}},
      {{"show", "hostlist", "gpu-node-001,gpu-node-002,gpu-node-003"}, {}},
      {{"show", "hostlist", "gpu-node-001,gpu-node-003,gpu-node-004,login1,login2"}, {}},
      {{"show", "hostlist", "gpu-node-002,gpu-node-001"}, {}},
      {{"show", "hostlistsorted", "gpu-node-002,gpu-node-001"}, {}},
      {{"show", "hostlist", "gpu-node-001,gpu-node-001"}, {}},
      {{"show", "hostlist", "n09,n10,n1"}, {}},
      {{"show", "hostlist", "a,b,gpu-node-001"}, {}},
      {{"show", "hostnames", "rack[1-2]-n[01-02]"}, {}},
      {{"show", "hostnames", "n[1-3]-[a,b]"}, {}},
      {{"show", "hostnames", "n[5-3]"}, {}},
      {{"show", "hostnames", "n[1-3]x"}, {}},
      {{"show", "hostnames"}, {}},
      {{"show", "hostnames"}, {{"SLURM_NODELIST", "gpu-node-[001-004]"}}},
      {{"show", "hostnames"}, {{"SLURM_JOB_NODELIST", "gpu-node-[001-004]"}}},
      {{"show", "hostnames"}, {{"SLURM_NODELIST", ""}}},
      {{"show", "hostnames", "n[0-65535]"}, {}},
      {{"show", "hostnames", "n[0-65536]"}, {}},
      {{"show", "hostnames", "a[0-32767,0-32768]b[1]"}, {}},
      {{"show", "hostnames", "a[0-32767,0-32768]b[1-2]c[1]"}, {}},
      {{"show", "hostnames", "a[0-255]b[0-255]"}, {}},
      {{"show", "hostnames", "n18446744073709551615,n0"}, {}},
      {{"show", "hostlist", "n18446744073709551615,n0"}, {}},
      {{"show", "hostlistsorted", "n18446744073709551615,n0"}, {}},
      {{"show", "hostlistsorted", "n3000000000,n5"}, {}},
      {{"show", "hostlistsorted", "n5,n3000000000"}, {}},
      {{"show", "hostlistsorted", "n3000000000,n5,n7"}, {}},
      {{"show", "hostlistsorted", "n2147483648,n0"}, {}},
      {{"show", "hostlistsorted", "n2147483647,n0"}, {}},
      {{"show", "hostlistsorted", "n4294967296,n1"}, {}},
      {{"show", "hostlistsorted", "n[3000000000-3000000001],n[5-6]"}, {}},
      {{"show", "hostlistsorted", "n[1-3],n[2-5]"}, {}},
      {{"show", "hostlistsorted", "n[1-10],n[3-4],n[2-12]"}, {}},
      {{"show", "hostlist", hostFile}, {}},
      {{"show", "hostlistsorted", hostFile}, {}},
      {{"show", "hostlist", noNewline}, {}},
      {{"show", "hostlist", badFile}, {}},
      {{"show", "hostlist", tooManyRanges}, {}},
      {{"show", "hostlist", justEnough}, {}},
      {{"show", "hostlist", "/nonexistent/hosts"}, {}},
      {{"show", "hostnames", "/nonexistent/hosts"}, {}},
      {{"show", "hostlist="}, {}},
      {{"show", "hostnames="}, {}},
      {{"show", "HOSTNAMES=n[1-2]"}, {}},
      {{"show", "hostnames=a1", "b2"}, {}},
      {{"show", "hostn", "a[1-2]"}, {}},
      {{"show", "hostname", "a[1-2]"}, {}},
      {{"show", "host", "a[1-2]"}, {}},
      {{"show", "hostl", "a1,a2"}, {}},
      {{"show", "hostlists", "a2,a1"}, {}},
      {{"show", "hostlistso", "a2,a1"}, {}},
      {{"show", "hostlistsortedx", "a2,a1"}, {}},
      {{"SHOW", "HostNames", "a[1-2]"}, {}},
      {{"sho", "hostnames", "a1"}, {}},
      {{"sh", "hostnames", "a1"}, {}},
      {{"show"}, {}},
      {{"show", "foo"}, {}},
      {{"show", "foo=bar"}, {}},
      {{"show", "hostnames", "a", "b"}, {}},
      {{"show", "hostlist", "a", "b"}, {}},
      {{"foo"}, {}},
      {{"quit"}, {}},
      {{"exit", "now"}, {}},
      {{"-Q", "show"}, {}},
      {{"-Q", "show", "foo"}, {}},
      {{"-Q", "foo"}, {}},
      {{"-Qd", "show", "hostnames", "a1"}, {}},
      {{"show", "hostnames", "a1", "-Q"}, {}},
      {{"show", "hostnames", "--", "-a1"}, {}},
      {{"-o", "-a", "-F", "-v", "show", "hostlist", "a1,a2"}, {}},
      {{"--foo"}, {}},
      {{"--foo=bar", "show"}, {}},
      {{"--h"}, {}},
      {{"--u"}, {}},
      {{"--ver"}, {}},
      {{"--vers"}, {}},
      {{"-V"}, {}},
      {{"version"}, {}},
      {{"--help=x"}, {}},
      {{"-x"}, {}},
      {{"-dQx", "show"}, {}},
      {{"-u"}, {}},
      {{"--uid"}, {}},
      {{"-u", "0", "show", "hostnames", "a1"}, {}},
      {{"--details", "--oneliner", "show", "hostnames", "a1"}, {}},
      {{"--c"}, {}},
  };
  expectSameAsReal(cases);
}

}  // namespace
}  // namespace kubeslurm
