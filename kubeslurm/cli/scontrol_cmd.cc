// `scontrol`: the hostlist entities of `show` exactly as Slurm 22.05's scontrol prints them
// (stdout, stderr and exit code pinned by tests/integration/slurm_diff against the real
// binary), scontrol's option parsing and keyword abbreviations, and its interactive mode; and
// the commands the cluster answers: show job|partition|node (scontrol_show.h), hold, release,
// requeue, requeuehold and update of jobs (JSON merge patches of the SlurmJob's spec, which the
// operator acts on).
// Only those connect, on first use. Other controller commands say they are not available.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/array_task_lists.h"
#include "kubeslurm/cli/cluster_nodes.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/scontrol_show.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/slurm/dependency.h"
#include "kubeslurm/slurm/hostlist_show.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::cli {
namespace {

constexpr std::string_view kVersionLine = "slurm-wlm 22.05.8";  // as Debian 12's build prints it
constexpr std::size_t kMaxInputFields = 128;                    // scontrol.h MAX_INPUT_FIELDS

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

using slurm::scontrolKeywordMatches;

// Most keywords may be shortened to `minLength` characters (Slurm's MAX(tag_len, n)); a few are
// compared on a fixed length, so anything starting with them matches ("holdXYZ" is "hold").
struct Keyword {
  std::string_view name;
  std::size_t length;
  bool fixedLength = false;

  bool matches(std::string_view tag, std::size_t tagLength) const {
    return scontrolKeywordMatches(tag, name, fixedLength ? length : std::max(tagLength, length));
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
  kHold,
  kRelease,
  kUpdate,
  kRequeue,
  kRequeueHold,
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
      {{"requeue", 3}, Action::kRequeue},
      {{"requeuehold", 11, true}, Action::kRequeueHold},
      {{"hold", 4, true}, Action::kHold},
      {{"holdu", 5, true}, Action::kHold},
      {{"uhold", 5, true}, Action::kHold},
      {{"release", 3}, Action::kRelease},
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
      {{"update", 1}, Action::kUpdate},
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

// Besides the hostlist entities (slurm::hostlistEntity), which no other entity's keyword matches.
enum class Entity { kJob, kNode, kPartition, kNeedsCluster };

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
      {{"jobs", 1}, Entity::kJob, "job"},
      {{"jobid", 1}, Entity::kJob, "job"},
      {{"licenses", 2}, Entity::kNeedsCluster, "licenses"},
      {{"nodes", 1}, Entity::kNode, "node"},
      {{"partitions", 2}, Entity::kPartition, "partition"},
      {{"partitionname", 2}, Entity::kPartition, "partition"},
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
  Scontrol(CliIo& io, KubeFlags flags, const Connector& connect,
           std::function<void(std::chrono::milliseconds)> sleep)
      : io_(io), flags_(std::move(flags)), connect_(connect), sleep_(std::move(sleep)) {
    if (!sleep_) sleep_ = [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); };
  }

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
      if (arg == "--" || scontrolKeywordMatches(arg, "setdebugflags", 8)) {
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
      case 'o':
        oneLiner_ = true;
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
        oneLiner_ = true;
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
      case Action::kHold:
      case Action::kRelease:
        holdOrRelease(argv, command->action == Action::kHold);
        return;
      case Action::kUpdate:
        update(argv);
        return;
      case Action::kRequeue:
      case Action::kRequeueHold:
        requeue(argv, command->action == Action::kRequeueHold);
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
    const bool allowOptions = scontrolKeywordMatches(argv[1], "assoc_mgr", 2) ||
                              scontrolKeywordMatches(argv[1], "bbstat", 2) ||
                              scontrolKeywordMatches(argv[1], "dwstat", 2);
    if (argc > 3 && !allowOptions) {
      tooMany(argv[0], true);
      return;
    }
    const std::string& tag = argv[1];
    const auto [tagLength, value] = slurm::splitShowOperand(tag, argc == 3 ? &argv[2] : nullptr);
    if (std::optional<slurm::HostlistEntity> hosts = slurm::hostlistEntity(tag, tagLength)) {
      const slurm::HostlistShown shown =
          slurm::showHostlistEntity(*hosts, value, io_.getenv, io_.readFile, io_.out, io_.err);
      if (shown.failed) exitCode_ = 1;
      if (shown.fatal) fatal_ = true;
      if (shown.failed && !value) io_.out << kUsage;
      return;
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
      case Entity::kJob:
        showJobs(value);
        return;
      case Entity::kNode:
      case Entity::kPartition:
        showNodesOrPartitions(value, entity->entity == Entity::kNode);
        return;
      case Entity::kNeedsCluster:
        exitCode_ = 1;
        io_.err << "scontrol: error: show " << entity->canonical
                << " needs a cluster connection (not available offline yet)\n";
        return;
    }
  }

  // ---- the commands the cluster answers ----

  // The session, connected on first use; nullptr (and the error printed) when that fails.
  ClusterSession* session() {
    if (session_) return &*session_;
    if (connectFailed_) return nullptr;
    auto connected = connect_(flags_, io_);
    if (!connected.isOk()) {
      connectFailed_ = true;
      io_.err << "scontrol: error: " << connected.status().message() << "\n";
      return nullptr;
    }
    session_ = std::move(connected).value();
    return &*session_;
  }

  void apiError(std::string_view what, const Status& status) {
    exitCode_ = 1;
    if (status.code() == StatusCode::kUnavailable) {
      io_.err << what << ": Unable to contact slurm controller (connect failure)\n";
    }
    io_.err << "scontrol: error: " << status.message() << "\n";
  }

  std::optional<std::vector<api::SlurmJobObject>> loadJobs() {
    ClusterSession* s = session();
    if (s == nullptr) {
      exitCode_ = 1;
      return std::nullopt;
    }
    auto list = kube::listAll(*s->reader, kube::resources::slurmJobs(), s->namespaceName,
                              kube::ListOptions{});
    if (!list.isOk()) {
      apiError("slurm_load_jobs error", list.status());
      return std::nullopt;
    }
    std::vector<api::SlurmJobObject> jobs = decodeJobList(*list);
    return jobs;
  }

  std::vector<api::Partition> loadPartitions() {
    std::vector<api::Partition> partitions;
    ClusterSession* s = session();
    if (s == nullptr) return partitions;
    // Partitions only refine a job's record (default partition and time limit).
    auto list = kube::listAll(*s->reader, kube::resources::partitions(), "", kube::ListOptions{});
    if (!list.isOk() || !list->contains("items") || !(*list)["items"].is_array()) {
      return partitions;
    }
    for (const kube::Json& item : (*list)["items"]) {
      auto p = api::decodePartition(item);
      if (p.isOk()) partitions.push_back(std::move(p).value());
    }
    return partitions;
  }

  ShowContext showContext() const { return ShowContext{io_.now, io_.utcOffsetSeconds, oneLiner_}; }

  void print(const CommandOutput& output) {
    io_.out << output.out;
    io_.err << output.err;
    if (output.exitCode != 0) exitCode_ = output.exitCode;
  }

  void showJobs(const std::optional<std::string>& id) {
    std::optional<std::vector<api::SlurmJobObject>> jobs = loadJobs();
    if (!jobs) return;
    const std::vector<api::Partition> partitions = loadPartitions();
    // The nodes are listed once, and only for a job that holds all of each node's memory.
    std::optional<std::vector<api::Node>> nodes;
    const NodeMemoryLookup nodeMemoryMb =
        [&](const std::string& name) -> std::optional<std::uint64_t> {
      const auto partition = std::ranges::find(
          partitions, name, [](const api::Partition& p) { return p.metadata.name; });
      if (partition == partitions.end()) return std::nullopt;
      if (!nodes) {
        nodes.emplace();  // none when they cannot be read: no mem= then
        if (ClusterSession* s = session()) {
          if (auto loaded = loadNodes(*s->reader); loaded.isOk()) nodes = std::move(loaded).value();
        }
      }
      return firstNodeMemoryMb(partition->spec, *nodes);
    };
    print(formatShowJobs(*jobs, partitions, id, showContext(), nodeMemoryMb));
  }

  void showNodesOrPartitions(const std::optional<std::string>& name, bool nodes) {
    ClusterSession* s = session();
    if (s == nullptr) {
      exitCode_ = 1;
      return;
    }
    auto cluster = loadClusterNodes(*s->reader);
    if (!cluster.isOk()) {
      apiError(nodes ? "slurm_load_node error" : "slurm_load_partitions error", cluster.status());
      return;
    }
    print(nodes ? formatShowNodes(cluster->partitions, cluster->nodes, cluster->facts, name,
                                  showContext())
                : formatShowPartitions(cluster->partitions, cluster->nodes, cluster->facts, name,
                                       showContext()));
  }

  // The objects an id names: "N" is job N, or array N with all its tasks; "N_T" one task.
  static std::vector<const api::SlurmJobObject*> findJobs(
      const std::vector<api::SlurmJobObject>& jobs, std::int64_t id,
      std::optional<std::int64_t> task) {
    std::vector<const api::SlurmJobObject*> out;
    for (const api::SlurmJobObject& job : jobs) {
      if (!job.status || !job.status->jobId) continue;
      const api::SlurmJobStatus& s = *job.status;
      const bool isTask = s.arrayJobId && s.arrayTaskId;
      const bool matches = task ? isTask && *s.arrayJobId == id && *s.arrayTaskId == *task
                                : *s.jobId == id || (isTask && *s.arrayJobId == id);
      if (matches) out.push_back(&job);
    }
    return out;
  }

  static std::optional<std::pair<std::int64_t, std::optional<std::int64_t>>> parseId(
      std::string_view text) {
    const std::size_t underscore = text.find('_');
    auto number = [](std::string_view digits) -> std::optional<std::int64_t> {
      if (digits.empty() || digits.size() > 10 ||
          digits.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
      }
      return std::stoll(std::string(digits));
    };
    const auto id = number(text.substr(0, underscore));
    if (!id) return std::nullopt;
    if (underscore == std::string_view::npos) {
      return std::make_pair(*id, std::optional<std::int64_t>());
    }
    const auto task = number(text.substr(underscore + 1));
    if (!task) return std::nullopt;
    return std::make_pair(*id, std::optional<std::int64_t>(*task));
  }

  static slurm::JobState stateOf(const api::SlurmJobObject& job) {
    return api::jobStateOf(*job.status);
  }

  // Patches every object `idText` names, after slurmctld's checks on the first one (the job
  // state decides for an array's records alike). `pendingOnly`: what only a pending job may
  // change (ESLURM_JOB_NOT_PENDING).
  void patchJobs(const std::vector<api::SlurmJobObject>& jobs, const std::string& idText,
                 const kube::Json& body, bool pendingOnly) {
    const auto id = parseId(idText);
    if (!id) {
      exitCode_ = 1;
      io_.err << "scontrol: error: Invalid job id: " << idText << "\n";
      return;
    }
    const std::vector<const api::SlurmJobObject*> matches = findJobs(jobs, id->first, id->second);
    auto fail = [&](std::string_view message) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << message << " for job " << idText << "\n";
    };
    if (matches.empty()) {
      if (id->second) {
        if (const api::SlurmJobObject* array =
                unmadeTaskArray(unmadeArrayTasks(jobs), jobs, id->first, *id->second)) {
          splitOff(*array, static_cast<std::uint32_t>(*id->second), body, idText);
          return;
        }
      }
      return fail("Invalid job id specified");
    }
    std::vector<const api::SlurmJobObject*> targets;
    bool anyPending = false;
    bool allFinished = true;
    for (const api::SlurmJobObject* job : matches) {
      const slurm::JobState state = stateOf(*job);
      if (!slurm::isFinished(state)) allFinished = false;
      if (state == slurm::JobState::kPending) anyPending = true;
      // An array's own object stands for its tasks still to come.
      if (!slurm::isFinished(state) && (!pendingOnly || state == slurm::JobState::kPending)) {
        targets.push_back(job);
      }
    }
    if (allFinished) return fail("Job has already finished");
    if (pendingOnly && !anyPending) return fail("Job is no longer pending execution");
    for (const api::SlurmJobObject* job : targets) {
      auto patched = session()->writer->patch(kube::resources::slurmJobs(), job->namespaceName,
                                              job->name, body);
      if (!patched.isOk()) {
        apiError("slurm_update error", patched.status());
        return;
      }
    }
  }

  // The array whose record holds task `task` of array `id`, not made yet (`unmade`, of `jobs`);
  // nullptr if none.
  static const api::SlurmJobObject* unmadeTaskArray(
      const std::map<std::int64_t, UnmadeTasks>& unmade,
      const std::vector<api::SlurmJobObject>& jobs, std::int64_t id, std::int64_t task) {
    const auto tasks = unmade.find(id);
    if (task < 0 || task > UINT32_MAX || tasks == unmade.end() ||
        !std::ranges::binary_search(tasks->second.taskIds, static_cast<std::uint32_t>(task))) {
      return nullptr;
    }
    for (const api::SlurmJobObject& job : jobs) {
      if (isArrayParent(job) && job.status && job.status->jobId == id) return &job;
    }
    return nullptr;
  }

  // A task still in its array's record: slurmctld splits it off into a record of its own and
  // changes that. Here the array's spec.splitTasks asks the operator to make the task now, held
  // (so that no start comes first); once its SlurmJob exists, `body` is patched onto it, with the
  // hold the task would have had (the array's) unless the command sets one.
  void splitOff(const api::SlurmJobObject& array, std::uint32_t task, const kube::Json& body,
                const std::string& idText) {
    ClusterSession* s = session();
    if (s == nullptr) return;
    if (Status added = addArrayTasks(*s, array, api::kSplitTasksField, {task}); !added.isOk()) {
      apiError("slurm_update error", added);
      return;
    }
    const std::string name = array.name + "-" + std::to_string(task);
    for (std::int64_t polls = 0;; ++polls) {
      auto made = s->reader->get(kube::resources::slurmJobs(), array.namespaceName, name);
      if (made.isOk() && isTaskOf(*made, array, task)) break;
      if (!made.isOk() && made.status().code() != StatusCode::kNotFound) {
        apiError("slurm_update error", made.status());
        return;
      }
      if (polls * kSplitPoll.count() >= kSplitWait.count() * 1000) {
        exitCode_ = 1;
        io_.err << "scontrol: error: task " << idText << " was not split off its array within "
                << kSplitWait.count() << " s: is the kubeslurm operator running?\n";
        return;
      }
      sleep_(kSplitPoll);
    }
    kube::Json patch = body;
    if (!patch["spec"].contains("hold")) patch["spec"]["hold"] = array.request.hold;
    auto patched = s->writer->patch(kube::resources::slurmJobs(), array.namespaceName, name, patch);
    if (!patched.isOk()) apiError("slurm_update error", patched.status());
  }

  // Task `task` of `array` as the operator makes it: the codec's rule (SlurmJobObject::arrayTask:
  // the labels, and a controller reference to the array), with the array's uid.
  static bool isTaskOf(const kube::Json& object, const api::SlurmJobObject& array,
                       std::uint32_t task) {
    const auto decoded = api::decodeSlurmJob(object);
    if (!decoded.isOk() || !decoded->arrayTask) return false;
    const kube::Json& meta = array.raw->value("metadata", kube::Json::object());
    const std::string uid = meta.is_object() ? meta.value("uid", std::string()) : std::string();
    return !uid.empty() && *decoded->arrayTask == api::ArrayTaskOwner{array.name, uid, task};
  }

  void holdOrRelease(const std::vector<std::string>& argv, bool hold) {
    if (argv.size() < 2) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << "too few arguments for keyword:" << argv[0] << "\n";
      return;
    }
    std::optional<std::vector<api::SlurmJobObject>> jobs = loadJobs();
    if (!jobs) return;
    const kube::Json body = {{"spec", {{"hold", hold}}}};
    // scontrol takes ids as separate words or a comma list ("hold 5,6").
    for (std::size_t i = 1; i < argv.size(); ++i) {
      for (const std::string& id : splitComma(argv[i])) patchJobs(*jobs, id, body, true);
    }
  }

  static std::vector<std::string> splitComma(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
      const std::size_t comma = std::min(text.find(',', pos), text.size());
      if (comma > pos) out.push_back(text.substr(pos, comma - pos));
      pos = comma + 1;
    }
    return out;
  }

  // ---- requeue, requeuehold (Slurm 22.05 src/scontrol/scontrol.c and update_job.c:
  // parse_requeue_flags, scontrol_requeue, scontrol_requeue_hold; the checks are slurmctld's,
  // src/slurmctld/job_mgr.c _job_requeue_op, with slurm_errno.c's texts) ----

  struct RequeueFlags {
    bool incomplete = false;   // only jobs that have not finished
    bool specialExit = false;  // State=SpecialExit: JOB_SPECIAL_EXIT, not modelled
  };

  // parse_requeue_flags: "Incomplete" may be shortened to any prefix; "State=" takes
  // "SpecialExit" or "SE", compared on their own lengths, so anything after them is ignored.
  static bool parseRequeueFlag(const std::string& word, RequeueFlags& flags) {
    if (scontrolKeywordMatches(word, "incomplete", word.size())) {
      flags.incomplete = true;
      return true;
    }
    if (!scontrolKeywordMatches(word, "state=", 6)) return false;
    const std::string value = word.substr(6);
    if (scontrolKeywordMatches(value, "specialexit", 11) ||
        scontrolKeywordMatches(value, "se", 2)) {
      flags.specialExit = true;
      return true;
    }
    return false;
  }

  void requeue(const std::vector<std::string>& argv, bool hold) {
    if (argv.size() < 2) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << "too few arguments for keyword:" << argv[0] << "\n";
      return;
    }
    RequeueFlags flags;
    std::size_t first = 1;
    while (first < argv.size() && parseRequeueFlag(argv[first], flags)) ++first;
    if (first == argv.size()) return;  // flags and no job: scontrol does nothing
    if (flags.specialExit) {
      exitCode_ = 1;
      io_.err << "scontrol: error: State=SpecialExit is not supported by kubeslurm\n";
      return;
    }
    std::optional<std::vector<api::SlurmJobObject>> jobs;
    for (std::size_t i = first; i < argv.size(); ++i) {
      std::string_view word = argv[i];
      // scontrol_requeue takes "JobId=" and "Job=" before the list; scontrol_requeue_hold
      // does not.
      if (!hold) {
        if (scontrolKeywordMatches(word, "jobid=", 6)) {
          word.remove_prefix(6);
        } else if (scontrolKeywordMatches(word, "job=", 4)) {
          word.remove_prefix(4);
        }
      }
      if (word.empty()) continue;  // "JobId=" alone names no job: nothing to do
      if (!looksLikeJobIds(word)) {
        exitCode_ = 1;
        if (quiet_ != 1) io_.err << "Invalid job id specified for job " << word << "\n";
        continue;
      }
      if (!jobs) {
        jobs = loadJobs();
        if (!jobs) return;
      }
      for (const std::string& id : splitComma(std::string(word))) {
        if (!requeueJob(*jobs, id, flags, hold)) return;
      }
    }
  }

  // update_job.c _is_job_id: digits, one '_' and one '+' per id, bracketed ranges, ',' lists.
  static bool looksLikeJobIds(std::string_view text) {
    bool plus = false;
    bool under = false;
    int brackets = 0;
    for (const char c : text) {
      if (c == '+') {
        if (plus) return false;
        plus = true;
      } else if (c == '_') {
        if (under) return false;
        under = true;
      } else if (c == '[') {
        ++brackets;
      } else if (c == ']') {
        --brackets;
      } else if (c == '-') {
        if (brackets == 0 && !under) return false;
      } else if (c == ',' || c == ' ') {
        if (brackets == 0) plus = under = false;
      } else if (c < '0' || c > '9') {
        return false;
      }
    }
    return brackets == 0;
  }

  // slurmctld's refusal of one record, in _job_requeue_op's order; "" when it may be
  // requeued. `skip`: the Incomplete flag and a job that is not running (success, no change).
  static std::string requeueRefusal(const api::SlurmJobObject& job, const RequeueFlags& flags,
                                    bool& skip) {
    const slurm::JobState state = stateOf(job);
    skip = flags.incomplete && state != slurm::JobState::kRunning &&
           state != slurm::JobState::kSuspended;
    if (skip) return {};
    if (!job.request.requeue.value_or(true)) return "Requested operation is presently disabled";
    if (state == slurm::JobState::kPending || state == slurm::JobState::kRequeued) {
      return "Job is pending execution";
    }
    return {};
  }

  // The id of a record as slurmctld names an array task in its answers ("6_2").
  static std::string recordId(const api::SlurmJobObject& job) {
    const api::SlurmJobStatus& s = *job.status;
    if (s.arrayJobId && s.arrayTaskId) {
      return std::to_string(*s.arrayJobId) + "_" + std::to_string(*s.arrayTaskId);
    }
    return std::to_string(s.jobId.value_or(0));
  }

  // One id: every record it names (an array's tasks; the array's own object stands for tasks
  // not yet created) is checked, and each one that may be requeued gets spec.requeueRequests
  // + 1 (with spec.hold for requeuehold, and spec.cancel cleared, or the operator would cancel
  // the next run at once). Errors as scontrol_requeue prints them: "<error> for job <id>" for a
  // single record, "<task>: <error>" per record of an array. False: stop (API error).
  bool requeueJob(const std::vector<api::SlurmJobObject>& jobs, const std::string& idText,
                  const RequeueFlags& flags, bool hold) {
    const auto id = parseId(idText);
    if (!id) {
      exitCode_ = 1;
      io_.err << "scontrol: error: Invalid job id: " << idText << "\n";
      return true;
    }
    std::vector<const api::SlurmJobObject*> records = findJobs(jobs, id->first, id->second);
    if (records.size() > 1) {
      std::erase_if(records, [](const api::SlurmJobObject* job) { return isArrayParent(*job); });
    }
    // A task still in its array's record is pending there: refused as a pending job is.
    std::map<std::int64_t, UnmadeTasks> unmade;
    if (records.empty() && id->second) {
      unmade = unmadeArrayTasks(jobs);
      if (unmadeTaskArray(unmade, jobs, id->first, *id->second) != nullptr) {
        records.push_back(&unmade.at(id->first).standIn);
      }
    }
    if (records.empty()) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << "Invalid job id specified for job " << idText << "\n";
      return true;
    }
    for (const api::SlurmJobObject* job : records) {
      bool skip = false;
      const std::string refusal = requeueRefusal(*job, flags, skip);
      if (skip) continue;
      if (!refusal.empty()) {
        exitCode_ = 1;
        if (quiet_ == 1) continue;
        if (records.size() == 1) {
          io_.err << refusal << " for job " << idText << "\n";
        } else {
          io_.err << recordId(*job) << ": " << refusal << "\n";
        }
        continue;
      }
      if (!addRequeueRequest(*job, hold)) return false;
    }
    return true;
  }

  // spec.requeueRequests + 1 as a merge patch that carries the resourceVersion it was read
  // at: two concurrent requeues must not both write the same count (the API server answers
  // 409 to a stale one, and the count is read again).
  bool addRequeueRequest(const api::SlurmJobObject& listed, bool hold) {
    ClusterSession* s = session();
    kube::Json object = *listed.raw;
    constexpr int kAttempts = 5;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      auto current = api::decodeSlurmJob(object);
      if (!current.isOk()) {
        exitCode_ = 1;
        io_.err << "scontrol: error: " << current.status().message() << "\n";
        return true;
      }
      kube::Json spec = {{"requeueRequests", current->requeueRequests.value_or(0) + 1}};
      if (hold) spec["hold"] = true;
      if (const kube::Json* cancel = specField(object, "cancel"); cancel != nullptr) {
        spec["cancel"] = nullptr;
      }
      kube::Json body = {{"spec", spec}};
      if (const std::string version = resourceVersionOf(object); !version.empty()) {
        body["metadata"] = {{"resourceVersion", version}};
      }
      auto patched =
          s->writer->patch(kube::resources::slurmJobs(), listed.namespaceName, listed.name, body);
      if (patched.isOk()) return true;
      if (patched.status().code() != StatusCode::kAborted) {
        apiError("slurm_requeue error", patched.status());
        return false;
      }
      auto fresh = s->reader->get(kube::resources::slurmJobs(), listed.namespaceName, listed.name);
      if (!fresh.isOk()) {
        apiError("slurm_requeue error", fresh.status());
        return false;
      }
      object = std::move(fresh).value();
    }
    apiError("slurm_requeue error",
             Status(StatusCode::kAborted, "the job kept changing; try again"));
    return false;
  }

  static const kube::Json* specField(const kube::Json& object, const std::string& key) {
    if (!object.is_object()) return nullptr;
    const auto spec = object.find("spec");
    if (spec == object.end() || !spec->is_object()) return nullptr;
    const auto field = spec->find(key);
    return field == spec->end() || field->is_null() ? nullptr : &*field;
  }

  static std::string resourceVersionOf(const kube::Json& object) {
    if (!object.is_object()) return {};
    const auto meta = object.find("metadata");
    if (meta == object.end() || !meta->is_object()) return {};
    const auto version = meta->find("resourceVersion");
    return version != meta->end() && version->is_string() ? version->get<std::string>()
                                                          : std::string();
  }

  // update_job.c: Tag=Value words, each tag shortened to at least its minimum length.
  void update(const std::vector<std::string>& argv) {
    if (argv.size() < 2) {
      exitCode_ = 1;
      if (quiet_ != 1) io_.err << "too few arguments for keyword:" << argv[0] << "\n";
      return;
    }
    const std::string& first = argv[1];
    const std::string firstTag = first.substr(0, first.find('='));
    if (!scontrolKeywordMatches(firstTag, "JobId", std::max<std::size_t>(firstTag.size(), 3))) {
      exitCode_ = 1;
      io_.err << "scontrol: error: update of " << firstTag
              << " is not supported by kubeslurm yet (only jobs: JobId=...)\n";
      return;
    }
    std::optional<std::string> jobId;
    kube::Json spec = kube::Json::object();
    bool pendingOnly = false;
    for (std::size_t i = 1; i < argv.size(); ++i) {
      const std::string& word = argv[i];
      const std::size_t equals = word.find('=');
      if (equals == std::string::npos || equals == 0) {
        exitCode_ = 1;
        io_.err << "Invalid input: " << word << "\nRequest aborted\n";
        return;
      }
      const std::string tag = word.substr(0, equals);
      const std::string value = word.substr(equals + 1);
      auto is = [&tag](std::string_view name, std::size_t minimum) {
        return scontrolKeywordMatches(tag, name, std::max(tag.size(), minimum));
      };
      if (is("JobId", 3)) {
        jobId = value;
      } else if (is("TimeLimit", 5)) {
        auto limit = slurm::parseTimeLimit(value);
        if (!limit.isOk()) {
          exitCode_ = 1;
          io_.err << "scontrol: error: Invalid TimeLimit value\n";
          return;
        }
        spec["timeLimit"] = value;
      } else if (is("Nice", 2)) {
        char* end = nullptr;
        const long nice = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || nice > 2147483645 || nice < -2147483645) {
          exitCode_ = 1;
          io_.err << "scontrol: error: Invalid nice value: " << value << "\n";
          return;
        }
        spec["nice"] = nice;
      } else if (is("Comment", 3)) {
        spec["comment"] = value.empty() ? kube::Json(nullptr) : kube::Json(value);
      } else if (is("Partition", 2)) {
        spec["partition"] = value;
        pendingOnly = true;
      } else if (is("Dependency", 1)) {
        // Bracketed tasks are bounded by the cluster's MaxArraySize, which the webhook applies.
        if (!value.empty() && !slurm::parseDependency(value, slurm::kMaxMaxArraySize).isOk()) {
          exitCode_ = 1;
          io_.err << "Job dependency problem for job " << jobId.value_or("") << "\n";
          return;
        }
        spec["dependency"] = value.empty() ? kube::Json(nullptr) : kube::Json(value);
        pendingOnly = true;
      } else {
        exitCode_ = 1;
        io_.err << "Update of this parameter is not supported: " << word << "\n"
                << "Request aborted\n";
        return;
      }
    }
    if (spec.empty()) {
      exitCode_ = 1;
      io_.err << "No changes specified\n";
      return;
    }
    if (!jobId) {
      exitCode_ = 1;
      io_.err << "scontrol: error: No job ID specified\n";
      return;
    }
    std::optional<std::vector<api::SlurmJobObject>> jobs = loadJobs();
    if (!jobs) return;
    patchJobs(*jobs, *jobId, kube::Json{{"spec", spec}}, pendingOnly);
  }

  // How long a task split off its array may take to appear: the operator makes it in its next
  // cycle, a fraction of a second after the array changes.
  static constexpr std::chrono::seconds kSplitWait{60};
  static constexpr std::chrono::milliseconds kSplitPoll{250};

  CliIo& io_;
  KubeFlags flags_;
  const Connector& connect_;
  std::function<void(std::chrono::milliseconds)> sleep_;
  std::optional<ClusterSession> session_;
  bool connectFailed_ = false;
  bool oneLiner_ = false;
  int exitCode_ = 0;
  int quiet_ = 0;  // Slurm's quiet_flag: 1 quiet, -1 verbose
  bool exit_ = false;
  bool fatal_ = false;  // Slurm called fatal(): scontrol exits 1 at once
};

}  // namespace

int runScontrolWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect,
                    std::function<void(std::chrono::milliseconds)> sleep) {
  std::vector<std::string> scontrolArgs = args;
  auto flags = takeKubeFlags(scontrolArgs, /*allowAllNamespaces=*/false);
  if (!flags.isOk()) {
    io.err << "scontrol: error: " << flags.status().message() << "\n";
    return 1;
  }
  Scontrol scontrol(io, *flags, connect, std::move(sleep));
  return scontrol.run(scontrolArgs);
}

int runScontrol(const std::vector<std::string>& args, CliIo& io) {
  return runScontrolWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::cli
