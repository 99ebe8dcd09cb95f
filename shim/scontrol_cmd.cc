// `scontrol`, offline: the hostlist entities of `show` exactly as Slurm 22.05's scontrol prints
// them (stdout, stderr and exit code pinned by tests/integration/slurm_diff against the real
// binary), scontrol's option parsing and keyword abbreviations, and its interactive mode.
// Commands that need a controller say so until the operator answers them.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "operator/slurm/hostlist.h"
#include "shim/commands.h"

namespace kubeslurm::shim {
namespace {

constexpr std::string_view kVersionLine = "slurm-wlm 22.05.8";  // as Debian 12's build prints it
constexpr std::size_t kMaxInputFields = 128;                    // scontrol.h MAX_INPUT_FIELDS
constexpr std::size_t kMaxHostlistFile = std::size_t{1024} * 1024;  // what scontrol reads of a file

// Our own summary: Slurm's usage text is its (GPL) prose, so we do not reproduce it.
constexpr std::string_view kUsage =
    "Usage: scontrol [OPTIONS] [COMMAND [ARGS...]]\n"
    "kubeslurm's scontrol (compatible with Slurm 22.05). Available offline:\n"
    "  show hostnames [HOSTLIST]   one host per line ($SLURM_NODELIST when omitted)\n"
    "  show hostlist LIST          compress hostnames (or /path/to/file) in order\n"
    "  show hostlistsorted LIST    compress them sorted\n"
    "  version, help, quit, exit\n"
    "Options: -a -d -F -o -Q -v (accepted), -h/--help, -V/--version.\n"
    "Without a command, reads commands from standard input.\n";

// Slurm's xstrncasecmp(tag, name, n) == 0: the first n characters agree ignoring case, where a
// string shorter than n ends in a NUL that must meet the other's NUL.
bool keywordMatches(std::string_view tag, std::string_view name, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const char a = i < tag.size() ? tag[i] : '\0';
    const char b = i < name.size() ? name[i] : '\0';
    if (std::tolower(static_cast<unsigned char>(a)) !=
        std::tolower(static_cast<unsigned char>(b))) {
      return false;
    }
    if (a == '\0') return true;
  }
  return true;
}

// Most keywords may be shortened to `minLength` characters (Slurm's MAX(tag_len, n)); a few are
// compared on a fixed length, so anything starting with them matches ("holdXYZ" is "hold").
struct Keyword {
  std::string_view name;
  std::size_t length;
  bool fixedLength = false;

  bool matches(std::string_view tag, std::size_t tagLength) const {
    return keywordMatches(tag, name, fixedLength ? length : std::max(tagLength, length));
  }
};

enum class Action {
  kAll,
  kDetails,
  kExit,
  kHelp,
  kHide,
  kOneliner,
  kQuiet,
  kQuit,
  kShow,
  kVerbose,
  kVersion,
  kNeedsCluster,  // talks to slurmctld or slurmdbd
  kLocalOnly,     // works on a Slurm host without a controller; not offered by kubeslurm yet
};

struct TopCommand {
  Keyword keyword;
  Action action;
};

// In scontrol's order: the first match wins ("sh" is too short for "show", "h" is nothing).
const std::vector<TopCommand>& topCommands() {
  static const std::vector<TopCommand> kCommands = {
      {{"abort", 5}, Action::kNeedsCluster},
      {{"all", 2}, Action::kAll},
      {{"cancel_reboot", 3}, Action::kNeedsCluster},
      {{"completing", 2}, Action::kNeedsCluster},
      {{"cluster", 2}, Action::kNeedsCluster},
      {{"create", 2}, Action::kNeedsCluster},
      {{"details", 1}, Action::kDetails},
      {{"errnumstr", 2}, Action::kLocalOnly},
      {{"errnostr", 2}, Action::kLocalOnly},
      {{"exit", 2}, Action::kExit},
      {{"gethost", 7}, Action::kLocalOnly},
      {{"hash_file", 15}, Action::kLocalOnly},
      {{"hash", 9}, Action::kLocalOnly},
      {{"help", 2}, Action::kHelp},
      {{"hide", 2}, Action::kHide},
      {{"oneliner", 1}, Action::kOneliner},
      {{"pidinfo", 3}, Action::kLocalOnly},
      {{"ping", 3}, Action::kNeedsCluster},
      {{"\\q", 2, true}, Action::kQuiet},
      {{"quiet", 4}, Action::kQuiet},
      {{"quit", 4}, Action::kQuit},
      {{"reboot_nodes", 3}, Action::kNeedsCluster},
      {{"reconfigure", 3}, Action::kNeedsCluster},
      {{"requeue", 3}, Action::kNeedsCluster},
      {{"requeuehold", 11, true}, Action::kNeedsCluster},
      {{"hold", 4, true}, Action::kNeedsCluster},
      {{"holdu", 5, true}, Action::kNeedsCluster},
      {{"uhold", 5, true}, Action::kNeedsCluster},
      {{"release", 3}, Action::kNeedsCluster},
      {{"suspend", 2}, Action::kNeedsCluster},
      {{"resume", 3}, Action::kNeedsCluster},
      {{"top", 3}, Action::kNeedsCluster},
      {{"token", 3}, Action::kNeedsCluster},
      {{"wait_job", 2}, Action::kNeedsCluster},
      {{"setdebugflags", 9}, Action::kNeedsCluster},
      {{"fsdampeningfactor", 3}, Action::kNeedsCluster},
      {{"fairsharedampeningfactor", 3}, Action::kNeedsCluster},
      {{"setdebug", 2}, Action::kNeedsCluster},
      {{"schedloglevel", 3}, Action::kNeedsCluster},
      {{"show", 3}, Action::kShow},
      {{"write", 5}, Action::kNeedsCluster},
      {{"takeover", 8}, Action::kNeedsCluster},
      {{"shutdown", 8}, Action::kNeedsCluster},
      {{"update", 1}, Action::kNeedsCluster},
      {{"delete", 1}, Action::kNeedsCluster},
      {{"verbose", 4}, Action::kVerbose},
      {{"version", 4}, Action::kVersion},
      {{"listpids", 1}, Action::kLocalOnly},
      {{"getent", 6}, Action::kLocalOnly},
      {{"notify", 1}, Action::kNeedsCluster},
      {{"callerid", 3}, Action::kNeedsCluster},
  };
  return kCommands;
}

enum class Entity { kHostnames, kHostlist, kHostlistSorted, kNeedsCluster };

struct ShowEntity {
  Keyword keyword;
  Entity entity;
  std::string_view canonical;  // how our "needs a cluster" message names it
};

const std::vector<ShowEntity>& showEntities() {
  static const std::vector<ShowEntity> kEntities = {
      {{"aliases", 1}, Entity::kNeedsCluster, "aliases"},
      {{"bbstat", 2}, Entity::kNeedsCluster, "bbstat"},
      {{"dwstat", 2}, Entity::kNeedsCluster, "dwstat"},
      {{"burstbuffer", 2}, Entity::kNeedsCluster, "burstbuffer"},
      {{"assoc_mgr", 2}, Entity::kNeedsCluster, "assoc_mgr"},
      {{"cache", 2}, Entity::kNeedsCluster, "assoc_mgr"},
      {{"config", 1}, Entity::kNeedsCluster, "config"},
      {{"daemons", 1}, Entity::kNeedsCluster, "daemons"},
      {{"Federations", 1}, Entity::kNeedsCluster, "federation"},
      {{"FrontendName", 1}, Entity::kNeedsCluster, "frontend"},
      {{"hostnames", 5}, Entity::kHostnames, "hostnames"},
      {{"hostlist", 5}, Entity::kHostlist, "hostlist"},
      {{"hostlistsorted", 9}, Entity::kHostlistSorted, "hostlistsorted"},
      {{"jobs", 1}, Entity::kNeedsCluster, "job"},
      {{"jobid", 1}, Entity::kNeedsCluster, "job"},
      {{"licenses", 2}, Entity::kNeedsCluster, "licenses"},
      {{"nodes", 1}, Entity::kNeedsCluster, "node"},
      {{"partitions", 2}, Entity::kNeedsCluster, "partition"},
      {{"partitionname", 2}, Entity::kNeedsCluster, "partition"},
      {{"reservations", 1}, Entity::kNeedsCluster, "reservation"},
      {{"reservationname", 1}, Entity::kNeedsCluster, "reservation"},
      {{"slurmd", 2}, Entity::kNeedsCluster, "slurmd"},
      {{"steps", 2}, Entity::kNeedsCluster, "step"},
      {{"topology", 1}, Entity::kNeedsCluster, "topology"},
  };
  return kEntities;
}

// scontrol's getopt_long() table, in its order (the order ambiguity messages list them in).
struct LongOption {
  std::string_view name;
  bool hasArgument;
  char shortName;  // '\0': long only
};

const std::vector<LongOption>& longOptions() {
  static const std::vector<LongOption> kOptions = {
      {"all", false, 'a'},      {"cluster", true, 'M'},      {"clusters", true, 'M'},
      {"details", false, 'd'},  {"federation", false, '\0'}, {"future", false, 'F'},
      {"help", false, 'h'},     {"hide", false, '\0'},       {"local", false, '\0'},
      {"oneliner", false, 'o'}, {"quiet", false, 'Q'},       {"sibling", false, '\0'},
      {"uid", true, 'u'},       {"usage", false, 'h'},       {"verbose", false, 'v'},
      {"version", false, 'V'},
  };
  return kOptions;
}

class Scontrol {
 public:
  explicit Scontrol(CliIo& io) : io_(io) {}

  int run(const std::vector<std::string>& args) {
    std::vector<std::string> operands;
    if (std::optional<int> early = parseOptions(args, operands)) return *early;
    if (!operands.empty()) {
      process(operands);
    } else {
      interactive();
    }
    return fatal_ ? 1 : exitCode_;
  }

 private:
  // GNU getopt_long with argument permutation: options may follow the command.
  std::optional<int> parseOptions(const std::vector<std::string>& args,
                                  std::vector<std::string>& operands) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& arg = args[i];
      // "setdebugflags -Backfill": flags there start with '-' and are not options.
      if (arg == "--" || keywordMatches(arg, "setdebugflags", 8)) {
        if (arg != "--") operands.push_back(arg);
        operands.insert(operands.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        args.end());
        break;
      }
      if (arg.size() < 2 || arg[0] != '-') {
        operands.push_back(arg);
        continue;
      }
      std::optional<int> done = arg[1] == '-' ? longOption(args, i) : shortOptions(args, i);
      if (done) return done;
    }
    return std::nullopt;
  }

  std::optional<int> badOption(const std::string& message) {
    io_.err << "scontrol: " << message << "\n"
            << "Try \"scontrol --help\" for more information\n";
    return 1;
  }

  std::optional<int> longOption(const std::vector<std::string>& args, std::size_t& i) {
    const std::string body = args[i].substr(2);
    const std::size_t equals = body.find('=');
    const std::string name = body.substr(0, equals);
    const LongOption* found = nullptr;
    std::vector<const LongOption*> candidates;
    for (const LongOption& option : longOptions()) {
      if (option.name == name) {
        found = &option;
        candidates.clear();
        break;
      }
      if (option.name.substr(0, name.size()) != name) continue;
      if (found == nullptr) {
        found = &option;
        candidates.push_back(&option);
      } else if (found->hasArgument != option.hasArgument || found->shortName != option.shortName ||
                 found->shortName == '\0') {
        candidates.push_back(&option);
      }
    }
    if (found == nullptr) return badOption("unrecognized option '" + args[i] + "'");
    if (candidates.size() > 1) {
      std::string message = "option '" + args[i] + "' is ambiguous; possibilities:";
      for (const LongOption* option : candidates)
        message += " '--" + std::string(option->name) + "'";
      return badOption(message);
    }
    if (equals != std::string::npos) {
      if (!found->hasArgument) {
        return badOption("option '--" + std::string(found->name) + "' doesn't allow an argument");
      }
    } else if (found->hasArgument) {
      if (i + 1 >= args.size()) {
        return badOption("option '--" + std::string(found->name) + "' requires an argument");
      }
      ++i;  // the option's value
    }
    return applyOption(found->shortName);
  }

  std::optional<int> shortOptions(const std::vector<std::string>& args, std::size_t& i) {
    const std::string& arg = args[i];
    for (std::size_t k = 1; k < arg.size(); ++k) {
      const char c = arg[k];
      if (c == 'M' || c == 'u') {
        // The value is the rest of this word or the next one.
        if (k + 1 == arg.size()) {
          if (i + 1 >= args.size()) {
            return badOption(std::string("option requires an argument -- '") + c + "'");
          }
          ++i;
        }
        return applyOption(c);
      }
      if (std::string_view("adFhoQvV").find(c) == std::string_view::npos) {
        return badOption(std::string("invalid option -- '") + c + "'");
      }
      if (std::optional<int> done = applyOption(c)) return done;
    }
    return std::nullopt;
  }

  // -a -d -F -o -u --federation --hide --local --sibling change only what a controller would
  // report, so they are accepted and have no effect offline.
  std::optional<int> applyOption(char shortName) {
    switch (shortName) {
      case 'h':
        io_.out << kUsage;
        return exitCode_;
      case 'V':
        io_.out << kVersionLine << "\n";
        return exitCode_;
      case 'Q':
        quiet_ = 1;
        return std::nullopt;
      case 'v':
        quiet_ = -1;
        return std::nullopt;
      case 'M':
        io_.err << "scontrol: error: --cluster needs a cluster connection (not available offline "
                   "yet)\n";
        return 1;
      default:
        return std::nullopt;
    }
  }

  // Interactive mode: readline echoes each line after the prompt when input is not a terminal.
  void interactive() {
    std::string line;
    std::optional<std::string> last;
    while (true) {
      io_.out << "scontrol: ";
      if (!std::getline(io_.in, line)) {
        io_.out << "\n";
        return;
      }
      io_.out << line << "\n";
      std::string command;
      if (line == "!!") {
        command = last.value_or("");
      } else {
        command = line;
        last = line;
      }
      std::vector<std::string> fields;
      if (!splitFields(command, fields)) {
        io_.out << "\n";
        return;
      }
      process(fields);
      if (exit_ || fatal_) return;
    }
  }

  // Slurm splits on white space; quotes only stop a split and are kept in the word.
  bool splitFields(const std::string& line, std::vector<std::string>& fields) {
    std::size_t i = 0;
    const std::size_t n = line.size();
    auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (i < n) {
      if (space(line[i])) {
        ++i;
        continue;
      }
      if (fields.size() + 1 > kMaxInputFields) {
        exitCode_ = 1;
        io_.err << "scontrol: can not process over " << kMaxInputFields - 1 << " words\n";
        return false;
      }
      const std::size_t start = i;
      bool doubleQuote = false;
      bool singleQuote = false;
      for (++i; i < n; ++i) {
        if (line[i] == '"') {
          doubleQuote = !doubleQuote;
        } else if (line[i] == '\'') {
          singleQuote = !singleQuote;
        } else if (!doubleQuote && !singleQuote && space(line[i])) {
          break;
        }
      }
      fields.push_back(line.substr(start, i - start));
      ++i;
    }
    return true;
  }

  void tooMany(const std::string& tag, bool quietable = false) {
    exitCode_ = 1;
    if (!quietable || quiet_ != 1) io_.err << "too many arguments for keyword:" << tag << "\n";
  }

  void process(const std::vector<std::string>& argv) {
    if (argv.empty()) {
      exitCode_ = 1;
      if (quiet_ == -1) io_.err << "no input";
      return;
    }
    const std::string& tag = argv[0];
    const TopCommand* command = nullptr;
    for (const TopCommand& candidate : topCommands()) {
      if (candidate.keyword.matches(tag, tag.size())) {
        command = &candidate;
        break;
      }
    }
    if (command == nullptr) {
      exitCode_ = 1;
      io_.err << "invalid keyword: " << tag << "\n";
      return;
    }
    const std::size_t argc = argv.size();
    switch (command->action) {
      case Action::kAll:
      case Action::kHide:
        return;
      case Action::kDetails:
        if (argc > 1) tooMany(tag);
        return;
      case Action::kOneliner:
        if (argc > 1) tooMany(tag);
        return;
      case Action::kExit:
      case Action::kQuit:
        if (argc > 1) tooMany(tag);
        exit_ = true;
        return;
      case Action::kHelp:
        if (argc > 1) tooMany(tag);
        io_.out << kUsage;
        return;
      case Action::kQuiet:
        if (argc > 1) tooMany(tag);
        quiet_ = 1;
        return;
      case Action::kVerbose:
        if (argc > 1) {
          exitCode_ = 1;
          io_.err << "too many arguments for " << tag << " keyword\n";
        }
        quiet_ = -1;
        return;
      case Action::kVersion:
        if (argc > 1) {
          exitCode_ = 1;
          io_.err << "too many arguments for " << tag << " keyword\n";
        }
        io_.out << kVersionLine << "\n";
        return;
      case Action::kShow:
        show(argv);
        return;
      case Action::kNeedsCluster:
        exitCode_ = 1;
        io_.err << "scontrol: error: " << command->keyword.name
                << " needs a cluster connection (not available offline yet)\n";
        return;
      case Action::kLocalOnly:
        exitCode_ = 1;
        io_.err << "scontrol: error: " << command->keyword.name
                << " is not available in kubeslurm yet\n";
        return;
    }
  }

  void show(const std::vector<std::string>& argv) {
    const std::size_t argc = argv.size();
    if (argc < 2) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << "too few arguments for keyword:" << argv[0] << "\n";
      return;
    }
    // Slurm tests these with a length of 2 (its tag length is not set yet): an entity starting
    // "as", "bb" or "dw" may take more arguments.
    const bool allowOptions = keywordMatches(argv[1], "assoc_mgr", 2) ||
                              keywordMatches(argv[1], "bbstat", 2) ||
                              keywordMatches(argv[1], "dwstat", 2);
    if (argc > 3 && !allowOptions) {
      tooMany(argv[0], true);
      return;
    }
    const std::string& tag = argv[1];
    std::size_t tagLength = tag.size();
    std::optional<std::string> value;
    if (const std::size_t equals = tag.find('='); equals != std::string::npos) {
      tagLength = equals;
      value = tag.substr(equals + 1);
    } else if (argc == 3) {
      value = argv[2];
    }
    const ShowEntity* entity = nullptr;
    for (const ShowEntity& candidate : showEntities()) {
      if (candidate.keyword.matches(tag, tagLength)) {
        entity = &candidate;
        break;
      }
    }
    if (entity == nullptr) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << "invalid entity:" << tag << " for keyword:" << argv[0] << " \n";
      return;
    }
    switch (entity->entity) {
      case Entity::kHostnames:
        printHosts(value ? value : io_.getenv("SLURM_NODELIST"));
        return;
      case Entity::kHostlist:
      case Entity::kHostlistSorted:
        if (!value) {
          exitCode_ = 1;
          io_.err << "invalid encode argument\n";
          io_.out << kUsage;
          return;
        }
        if (!encodeHostlist(*value, entity->entity == Entity::kHostlistSorted)) exitCode_ = 1;
        return;
      case Entity::kNeedsCluster:
        exitCode_ = 1;
        io_.err << "scontrol: error: show " << entity->canonical
                << " needs a cluster connection (not available offline yet)\n";
        return;
    }
  }

  // Parses as Slurm does and prints its diagnostics. A fatal error ends scontrol at once.
  std::optional<slurm::Hostlist> parseHostlist(const std::string& text) {
    std::vector<std::string> diagnostics;
    StatusOr<slurm::Hostlist> list = slurm::Hostlist::parse(text, &diagnostics);
    for (const std::string& line : diagnostics) io_.err << "scontrol: error: " << line << "\n";
    if (list.isOk()) return std::move(list).value();
    switch (list.status().code()) {
      case StatusCode::kResourceExhausted:
        io_.err << "scontrol: fatal: " << list.status().message() << "\n";
        fatal_ = true;
        break;
      case StatusCode::kOutOfRange:
        io_.err << "scontrol: error: " << list.status().message() << "\n";
        break;
      default:
        break;
    }
    return std::nullopt;
  }

  void printHosts(const std::optional<std::string>& nodeList) {
    if (!nodeList) {
      io_.err << "scontrol: error: host list is empty\n";
      return;
    }
    std::optional<slurm::Hostlist> list = parseHostlist(*nodeList);
    if (!list) {
      if (!fatal_) io_.err << "Invalid hostlist: " << *nodeList << "\n";
      return;
    }
    list->forEachHost([&](std::string_view host) {
      io_.out << host << '\n';
      return true;
    });
  }

  bool encodeHostlist(const std::string& argument, bool sorted) {
    std::string text = argument;
    if (!text.empty() && text[0] == '/') {
      StatusOr<std::string> contents = io_.readFile(text);
      if (!contents.isOk()) {
        io_.err << "Can not open " << text << "\n";
        return false;
      }
      text = hostFileToList(*contents);
    }
    std::optional<slurm::Hostlist> list = parseHostlist(text);
    if (!list) {
      if (!fatal_) io_.err << "Invalid hostlist: " << text << "\n";
      return false;
    }
    if (sorted) list->sort();
    io_.out << list->ranged() << "\n";
    return true;
  }

  // scontrol reads at most 1 MiB as a C string, turns newlines into commas and squeezes runs
  // of commas into one.
  static std::string hostFileToList(const std::string& contents) {
    std::string_view text(contents);
    text = text.substr(0, std::min(text.size(), kMaxHostlistFile));
    text = text.substr(0, text.find('\0'));
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
      if (c == '\n') c = ',';
      if (c == ',' && !out.empty() && out.back() == ',') continue;
      out.push_back(c);
    }
    return out;
  }

  CliIo& io_;
  int exitCode_ = 0;
  int quiet_ = 0;  // Slurm's quiet_flag: 1 quiet, -1 verbose
  bool exit_ = false;
  bool fatal_ = false;  // Slurm called fatal(): scontrol exits 1 at once
};

}  // namespace

int runScontrol(const std::vector<std::string>& args, CliIo& io) {
  Scontrol scontrol(io);
  return scontrol.run(args);
}

}  // namespace kubeslurm::shim
