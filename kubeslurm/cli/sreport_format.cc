#include "kubeslurm/cli/sreport_format.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "kubeslurm/accounting/job_sizes.h"
#include "kubeslurm/base/arithmetic.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/cli/print_fields.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {

namespace {

CommandOutput failure(std::string err) { return CommandOutput{"", std::move(err), 1}; }

// The number a text starts with, 0 when none, as Slurm's atoi reads its report arguments.
std::int64_t leadingNumber(const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  return end == text ? 0 : value;
}

// The TRES slurmdbd tracks for a GPU cluster (its tres table, by id), as -T names them.
constexpr auto kKnownTres = std::to_array<std::string_view>(
    {"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu"});

constexpr std::string_view kUsage =
    "sreport [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a or --all_clusters: Use all clusters instead of current\n"
    "     -h or --help: equivalent to \"help\" command\n"
    "     -M or --cluster: Only report on the given cluster\n"
    "     -n or --noheader: equivalent to \"noheader\" command\n"
    "     -p or --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -Q or --quiet: equivalent to \"quiet\" command\n"
    "     -t <time_format>: Second, Minute or Hour; Percent, SecPer, MinPer or HourPer for\n"
    "        the job report (the others need the cluster's capacity, which is not kept)\n"
    "     -T or --tres: comma separated list of TRES, or 'ALL' for all TRES\n"
    "     -s or --sort: Name or Time\n"
    "     -V or --version: equivalent to \"version\" command\n"
    "\n"
    "    Valid <COMMAND> values are:\n"
    "     user TopUsage [Start=<time>] [End=<time>] [Users=<list>] [Accounts=<list>]\n"
    "                   [TopCount=<n>] [Group] [Format=<fields>]\n"
    "     cluster AccountUtilizationByUser [Start=] [End=] [Users=] [Accounts=] [Tree]\n"
    "                   [Format=<fields>]\n"
    "     cluster UserUtilizationByAccount [Start=] [End=] [Users=] [Accounts=] [Format=]\n"
    "     job SizesByAccount [Start=] [End=] [Users=] [Accounts=] [Partitions=] [Jobs=]\n"
    "                   [Grouping=<bounds>|individual] [PrintJobCount] [FlatView]\n"
    "                   [AcctAsParent] [Format=<fields>]\n"
    "     (the other cluster and job reports and the reservation reports are not made by\n"
    "     kubeslurm yet)\n";

constexpr auto kLongOptions = std::to_array<LongOptionSpec>({
    {"all_clusters", 0, 'a'},
    {"cluster", 1, 'M'},
    {"help", 0, 'h'},
    {"noheader", 0, 'n'},
    {"parsable", 0, 'p'},
    {"parsable2", 0, 'P'},
    {"quiet", 0, 'Q'},
    {"sort", 1, 's'},
    {"tres", 1, 'T'},
    {"usage", 0, 'h'},
    {"verbose", 0, 'v'},
    {"version", 0, 'V'},
});

// _set_time_format. Slurm prints an unknown format without a newline and goes on with the one
// it had.
void setTimeFormat(const std::string& text, SreportOptions& options, std::string& err) {
  if (abbreviates(text, "SecPer", 6)) {
    options.time = SreportTime::kSecondsPercent;
  } else if (abbreviates(text, "MinPer", 6)) {
    options.time = SreportTime::kMinutesPercent;
  } else if (abbreviates(text, "HourPer", 6)) {
    options.time = SreportTime::kHoursPercent;
  } else if (abbreviates(text, "Seconds", 1)) {
    options.time = SreportTime::kSeconds;
  } else if (abbreviates(text, "Minutes", 1)) {
    options.time = SreportTime::kMinutes;
  } else if (abbreviates(text, "Hours", 1)) {
    options.time = SreportTime::kHours;
  } else if (abbreviates(text, "Percent", 1)) {
    options.time = SreportTime::kPercent;
  } else {
    err += "unknown time format " + text;
  }
}

// _build_tres_list: the names -T lists that the cluster tracks, in the order given ("ALL": all
// of them, by id); none is fatal.
std::optional<CommandOutput> resolveTres(const std::string& list, SreportOptions& options) {
  // strtok_r leaves tres_str its first item, which the job report prints.
  const std::vector<std::string> items = splitCommaList(list);
  if (!items.empty()) options.tresText = items.front();
  for (const std::string& token : items) {
    if (equalsIgnoreCase(token, "ALL")) {
      options.tres.assign(kKnownTres.begin(), kKnownTres.end());
      break;
    }
    const auto* const known =
        std::find_if(kKnownTres.begin(), kKnownTres.end(),
                     [&](std::string_view t) { return equalsIgnoreCase(t, token); });
    if (known != kKnownTres.end()) options.tres.emplace_back(*known);
  }
  if (options.tres.empty()) return failure("sreport: fatal: No valid TRES given\n");
  return std::nullopt;
}

// A start= or end= value: parse_time's diagnostic and then as if not given (parse_time's 0).
std::optional<std::int64_t> conditionTime(const std::string& text, const SreportContext& context,
                                          std::string& err) {
  auto t = slurm::parsePastTime(text, context.now, context.utcOffsetSeconds);
  if (t.isOk()) return *t;
  if (!t.status().message().empty()) err += std::string(t.status().message()) + "\n";
  return std::nullopt;
}

// The report's conditions: user_reports.c _set_cond (user TopUsage) and cluster_reports.c
// _set_assoc_cond (the cluster reports), which differ in Group/TopCount against Tree.
void parseConditions(const std::vector<std::string>& words, const SreportContext& context,
                     SreportRequest& request, std::string& err, int& exitCode) {
  const bool userReport = request.report == SreportReport::kUserTop;
  for (const std::string& word : words) {
    const std::size_t equals = word.find('=');
    const bool hasValue = equals != std::string::npos;
    const std::string name = hasValue ? word.substr(0, equals) : word;
    const std::string value = hasValue ? word.substr(equals + 1) : word;
    if (!hasValue && abbreviates(name, "all_clusters", 1)) continue;
    if (userReport && !hasValue && abbreviates(name, "group", 1)) {
      request.group = true;
    } else if (!userReport && !hasValue && abbreviates(name, "Tree", 4)) {
      request.tree = true;
    } else if (!hasValue || abbreviates(name, "Users", 1)) {
      for (const std::string& user : splitCommaList(value)) {
        request.users.push_back(lowercaseAscii(user));
      }
    } else if (abbreviates(name, "Accounts", 2) || abbreviates(name, "Acct", 4)) {
      for (std::string& account : splitCommaList(value)) {
        request.accounts.push_back(std::move(account));
      }
    } else if (abbreviates(name, "Clusters", 1)) {
      continue;  // one cluster
    } else if (abbreviates(name, "End", 1)) {
      request.end = conditionTime(value, context, err);
    } else if (abbreviates(name, "Format", 1)) {
      for (std::string& field : splitCommaList(value)) request.format.push_back(std::move(field));
    } else if (abbreviates(name, "Start", 1)) {
      request.start = conditionTime(value, context, err);
    } else if (userReport && abbreviates(name, "TopCount", 1)) {
      // get_uint: strtol, a negative count is no limit.
      char* rest = nullptr;
      const long count = std::strtol(value.c_str(), &rest, 10);
      if (count == 0 && rest != nullptr && *rest != '\0') {
        err += "sreport: error: Invalid value for TopCount (" + value + ")\n";
        exitCode = 1;
      } else {
        request.topCount =
            count < 0 ? UINT32_MAX : static_cast<std::uint32_t>(std::min<long>(count, UINT32_MAX));
      }
    } else {
      err += " Unknown condition: " + word + "\nUse keyword set to modify value\n";
      exitCode = 1;
    }
  }
}

// job_reports.c _set_cond: its words, and what kubeslurm cannot select by said and left out.
void parseJobConditions(const std::vector<std::string>& words, const SreportContext& context,
                        SreportRequest& request, std::string& err, int& exitCode) {
  const auto lowered = [](const std::string& list) {
    std::vector<std::string> items = splitCommaList(list);
    for (std::string& item : items) item = lowercaseAscii(item);
    return items;
  };
  for (const std::string& word : words) {
    const std::size_t equals = word.find('=');
    const bool hasValue = equals != std::string::npos;
    const std::string name = hasValue ? word.substr(0, equals) : word;
    const std::string value = hasValue ? word.substr(equals + 1) : word;
    if (!hasValue && abbreviates(name, "all_clusters", 1)) continue;
    if (!hasValue && abbreviates(name, "AcctAsParent", 2)) {
      request.accountsAsParents = true;
    } else if (!hasValue && abbreviates(name, "PrintJobCount", 2)) {
      request.printJobCount = true;
    } else if (!hasValue && abbreviates(name, "FlatView", 2)) {
      request.flatView = true;
    } else if (!hasValue || abbreviates(name, "Clusters", 1)) {
      for (std::string& cluster : lowered(value)) request.clusters.push_back(std::move(cluster));
    } else if (abbreviates(name, "Accounts", 2) || abbreviates(name, "Acct", 4)) {
      for (std::string& account : lowered(value)) request.accounts.push_back(std::move(account));
    } else if (abbreviates(name, "Associations", 2) || abbreviates(name, "Gid", 2) ||
               abbreviates(name, "Nodes", 1)) {
      err +=
          "sreport: error: kubeslurm keeps no association ids or group ids, and does not "
          "select runs by node: " +
          word + " is left out\n";
      exitCode = 1;
    } else if (abbreviates(name, "End", 1)) {
      request.end = conditionTime(value, context, err);
    } else if (abbreviates(name, "Format", 2)) {
      for (std::string& field : splitCommaList(value)) request.format.push_back(std::move(field));
    } else if (abbreviates(name, "grouping", 2)) {
      if (!value.empty() && (value[0] == 'i' || value[0] == 'I')) {
        request.individual = true;
      } else {
        // slurm_addto_char_list: lower-cased, each item once.
        for (std::string& item : splitCommaList(value)) {
          item = lowercaseAscii(item);
          if (std::find(request.grouping.begin(), request.grouping.end(), item) ==
              request.grouping.end()) {
            request.grouping.push_back(std::move(item));
          }
        }
      }
    } else if (abbreviates(name, "Jobs", 1)) {
      // As Slurm reads the list: an id counts only when a comma follows it ("Jobs=5" selects
      // every job, "Jobs=5,6" job 5), and a step's ".N" is dropped.
      std::string_view rest = value;
      for (std::size_t comma = rest.find(','); comma != std::string_view::npos;
           comma = rest.find(',')) {
        std::string item(rest.substr(0, comma));
        rest.remove_prefix(comma + 1);
        item.erase(0, item.find_first_not_of(" \t\n\v\f\r"));
        if (!item.empty()) request.jobIds.push_back(leadingNumber(item.c_str()));
      }
    } else if (abbreviates(name, "Partitions", 2)) {
      for (std::string& p : lowered(value)) request.partitions.push_back(std::move(p));
    } else if (abbreviates(name, "Start", 1)) {
      request.start = conditionTime(value, context, err);
    } else if (abbreviates(name, "Users", 1)) {
      for (std::string& user : lowered(value)) request.users.push_back(std::move(user));
    } else if (abbreviates(name, "Wckeys", 2)) {
      request.wckeys = true;
    } else {
      err += " Unknown condition: " + word + "\nUse keyword set to modify value\n";
      exitCode = 1;
    }
  }
}

// cluster_reports.c's reports by name (sreport.c _cluster_rep: "A...", "UserUtilizationByA..."
// or "UA...", "Ut...", "W...", "UserUtilizationByW..." or "UW...").
std::optional<SreportReport> clusterReport(const std::string& word, std::string& notMade,
                                           std::string& invalid) {
  const auto starts = [&word](std::string_view name, std::size_t length) {
    return word.size() >= length &&
           equalsIgnoreCase(word.substr(0, length), name.substr(0, length));
  };
  if (starts("AccountUtilizationByUser", 1)) return SreportReport::kAccountUtilizationByUser;
  if (starts("UserUtilizationByAccount", 18) || starts("UA", 2)) {
    return SreportReport::kUserUtilizationByAccount;
  }
  if (starts("UserUtilizationByWckey", 18) || starts("UW", 2) || starts("Utilization", 2) ||
      starts("WCKeyUtilizationByUser", 1)) {
    notMade = word;
    return std::nullopt;
  }
  invalid = "Not valid report " + word +
            "\nValid cluster reports are, \"AccountUtilizationByUser\", "
            "\"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and "
            "\"WCKeyUtilizationByUser\"\n";
  return std::nullopt;
}

// The command words (sreport.c _process_command, _user_rep, _cluster_rep).
void parseCommand(const std::vector<std::string>& words, const SreportContext& context,
                  SreportParse& parse, std::string& err, int& exitCode) {
  if (words.empty()) {
    parse.exit = failure(
        "sreport: error: kubeslurm's sreport runs the one command on its command line; it has "
        "no interactive mode\n");
    return;
  }
  const std::string& keyword = words[0];
  const auto tooFew = [&] {
    parse.exit =
        failure(parse.options.quiet ? "" : "too few arguments for keyword:" + keyword + "\n");
  };
  const auto notMade = [&](const std::string& what) {
    parse.exit = failure("sreport: error: kubeslurm does not make the " + what +
                         " report yet; it makes user TopUsage, cluster AccountUtilizationByUser, "
                         "cluster UserUtilizationByAccount and job SizesByAccount\n");
  };
  if (abbreviates(keyword, "help", 2)) {
    parse.exit = CommandOutput{std::string(kUsage), "", 0};
    return;
  }
  SreportRequest request;
  if (abbreviates(keyword, "user", 1)) {
    if (words.size() < 2) return tooFew();
    if (words[1].empty() || (words[1][0] != 'T' && words[1][0] != 't')) {
      parse.exit = failure("Not valid report " + words[1] + "\nValid user reports are, \"Top\"\n");
      return;
    }
    request.report = SreportReport::kUserTop;
  } else if (abbreviates(keyword, "cluster", 2)) {
    if (words.size() < 2) return tooFew();
    std::string unmade;
    std::string invalid;
    const std::optional<SreportReport> report = clusterReport(words[1], unmade, invalid);
    if (!unmade.empty()) return notMade("cluster " + unmade);
    if (!report) {
      parse.exit = failure(invalid);
      return;
    }
    request.report = *report;
  } else if (abbreviates(keyword, "job", 1)) {
    if (words.size() < 2) return tooFew();
    // sreport.c _job_rep: "Sizes" was the report's first name, so one letter will do.
    const std::string& name = words[1];
    if (abbreviates(name, "SizesByAccount", 1)) {
      request.report = SreportReport::kJobSizesByAccount;
      parseJobConditions({words.begin() + 2, words.end()}, context, request, err, exitCode);
      parse.request = std::move(request);
      return;
    }
    if (abbreviates(name, "SizesByWcKey", 8) || abbreviates(name, "SizesByAccountAndWcKey", 15)) {
      return notMade("job " + name);
    }
    parse.exit = failure("Not valid report " + name +
                         "\nValid job reports are, \"SizesByAccount, SizesByAccountAndWcKey, and  "
                         "SizesByWckey\"\n");
    return;
  } else if (abbreviates(keyword, "reservation", 2) || abbreviates(keyword, "resv", 2)) {
    if (words.size() < 2) return tooFew();
    return notMade(keyword + " " + words[1]);
  } else {
    parse.exit = failure("invalid keyword: " + keyword + "\n");
    return;
  }
  parseConditions({words.begin() + 2, words.end()}, context, request, err, exitCode);
  parse.request = std::move(request);
}

// slurmdb_report_print_time for the whole-number formats.
std::string usageText(std::uint64_t seconds, SreportTime time) {
  if (time == SreportTime::kSeconds) return std::to_string(seconds);
  const double divisor = time == SreportTime::kHours ? 3600.0 : 60.0;
  std::array<char, 64> buffer{};
  const int written =
      std::snprintf(buffer.data(), buffer.size(), "%.0f", static_cast<double>(seconds) / divisor);
  if (written < 0) return "";
  return buffer.data();
}

enum class Field {
  kAccount,
  kCluster,
  kEnergy,
  kLogin,
  kProper,
  kTresName,
  kUsed,
  kBlank,  // a cluster-report field that these reports leave empty (Allocated, Down, ...)
  // The job report's fields that it prints with no value: print_fields_time and
  // print_fields_uint given 0 ("00:00:00", "0").
  kZeroDuration,
  kZeroCount,
};

struct PrintField {
  Field field;
  std::string name;
  int width;
};

struct FieldSpec {
  std::string_view prefix;
  std::size_t minimum;  // characters a prefix needs
  PrintField field;
};

// user_reports.c's fields, in the order _setup_print_fields_list tries them.
const std::vector<FieldSpec>& userFields() {
  static const std::vector<FieldSpec> kFields = {
      {"Accounts", 1, {Field::kAccount, "Account", 15}},
      {"Cluster", 1, {Field::kCluster, "Cluster", 9}},
      {"Energy", 1, {Field::kEnergy, "Energy", 10}},
      {"Login", 1, {Field::kLogin, "Login", 9}},
      {"Proper", 1, {Field::kProper, "Proper Name", 15}},
      {"TresName", 5, {Field::kTresName, "TRES Name", 14}},
      {"Used", 1, {Field::kUsed, "Used", 10}},
  };
  return kFields;
}

// cluster_reports.c's; the Account column is 20 wide and left-aligned in a Tree.
const std::vector<FieldSpec>& clusterFields() {
  static const std::vector<FieldSpec> kFields = {
      {"Accounts", 2, {Field::kAccount, "Account", 15}},
      {"allocated", 2, {Field::kBlank, "Allocated", 12}},
      {"Cluster", 2, {Field::kCluster, "Cluster", 9}},
      {"down", 1, {Field::kBlank, "Down", 10}},
      {"idle", 1, {Field::kBlank, "Idle", 12}},
      {"Login", 1, {Field::kLogin, "Login", 9}},
      {"overcommitted", 1, {Field::kBlank, "Over Comm", 9}},
      {"PlannedDown", 2, {Field::kBlank, "PLND Down", 10}},
      {"Proper", 2, {Field::kProper, "Proper Name", 15}},
      {"reported", 3, {Field::kBlank, "Reported", 12}},
      {"reserved", 3, {Field::kBlank, "Planned", 9}},
      {"planned", 4, {Field::kBlank, "Planned", 9}},
      {"TresCount", 5, {Field::kBlank, "TRES Count", 10}},
      {"cpucount", 2, {Field::kBlank, "TRES Count", 10}},
      {"count", 2, {Field::kBlank, "TRES Count", 10}},
      {"TresName", 5, {Field::kTresName, "TRES Name", 14}},
      {"Used", 1, {Field::kUsed, "Used", 10}},
      {"WCKey", 2, {Field::kBlank, "WCKey", 15}},
      {"Energy", 1, {Field::kEnergy, "Energy", 10}},
  };
  return kFields;
}

// job_reports.c's; Wckey prints the line's account, User nothing.
const std::vector<FieldSpec>& jobFields() {
  static const std::vector<FieldSpec> kFields = {
      {"Account", 1, {Field::kAccount, "Account", 9}},
      {"Acct", 4, {Field::kAccount, "Account", 9}},
      {"Cluster", 2, {Field::kCluster, "Cluster", 9}},
      {"Duration", 1, {Field::kZeroDuration, "Duration", 12}},
      {"JobCount", 2, {Field::kZeroCount, "Job Count", 9}},
      {"NodeCount", 2, {Field::kZeroCount, "Node Count", 9}},
      {"TresCount", 5, {Field::kZeroCount, "TRES Count", 10}},
      {"CpuCount", 2, {Field::kZeroCount, "TRES Count", 10}},
      {"count", 2, {Field::kZeroCount, "TRES Count", 10}},
      {"User", 1, {Field::kBlank, "User", 9}},
      {"Wckey", 1, {Field::kAccount, "Wckey", 9}},
  };
  return kFields;
}

// _setup_print_fields_list: each field's prefix, header and width ("%N" sets the width, "%-N"
// left-aligns).
std::vector<PrintField> printFields(const SreportRequest& request, std::string& err,
                                    int& exitCode) {
  const bool userReport = request.report == SreportReport::kUserTop;
  const std::vector<FieldSpec>& specs = request.report == SreportReport::kJobSizesByAccount
                                            ? jobFields()
                                        : userReport ? userFields()
                                                     : clusterFields();
  std::vector<PrintField> fields;
  for (std::string object : request.format) {
    int width = 0;
    if (const std::size_t percent = object.find('%'); percent != std::string::npos) {
      std::size_t at = percent + 1;
      const bool left = at < object.size() && object[at] == '-';
      if (left) ++at;
      width = consumeFieldWidth(object, at) * (left ? -1 : 1);
      object.resize(percent);
    }
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const FieldSpec& f) {
      return abbreviates(object, f.prefix, f.minimum);
    });
    if (spec == specs.end()) {
      err += " Unknown field '" + object + "'\n";
      exitCode = 1;
      continue;
    }
    PrintField f = spec->field;
    if (f.field == Field::kAccount && request.tree) f.width = -20;
    if (width != 0) f.width = width;
    fields.push_back(std::move(f));
  }
  return fields;
}

// sreport_set_usage_col_width: 8 columns, one more per digit past eight of the raw seconds.
int usageWidth(std::uint64_t seconds) {
  int width = 8;
  for (std::uint64_t order = 100000000; seconds >= order && width < 26; order *= 10) {
    ++width;
    if (order > UINT64_MAX / 10) break;
  }
  return width;
}

using TresSeconds = std::map<std::string, std::uint64_t>;

std::uint64_t secondsOf(const TresSeconds& allocSeconds, const std::string& tres) {
  const auto it = allocSeconds.find(tres);
  return it == allocSeconds.end() ? 0 : it->second;
}

// PrintField's columns for print_fields_header.
std::vector<PrintColumn> columnsOf(const std::vector<PrintField>& fields) {
  std::vector<PrintColumn> columns;
  columns.reserve(fields.size());
  for (const PrintField& f : fields) columns.push_back({f.name, f.width});
  return columns;
}

std::string timeText(std::int64_t t, const SreportContext& context) {
  return slurm::formatTimestamp(t, context.utcOffsetSeconds);
}

}  // namespace

SreportParse parseSreportArgs(const std::vector<std::string>& args, const SreportContext& context) {
  SreportParse parse;
  SreportOptions& o = parse.options;
  const GetoptResult got = getoptLong("sreport", args, "aM:hnpPQs:t:T:vV", kLongOptions);
  if (got.error) {
    parse.exit = failure(*got.error + "\nTry \"sreport --help\" for more information\n");
    return parse;
  }
  std::string err;
  int exitCode = 0;
  std::optional<std::string> tres = context.envTres;
  for (const ParsedOption& option : got.options) {
    const std::string value = option.value.value_or("");
    switch (option.key) {
      case 'h':
        parse.exit = CommandOutput{std::string(kUsage), "", 0};
        return parse;
      case 'V':
        parse.exit = CommandOutput{"slurm 22.05.8\n", "", 0};
        return parse;
      case 'n':
        o.noHeader = true;
        break;
      case 'p':
        o.parsable = 1;
        break;
      case 'P':
        o.parsable = 2;
        break;
      case 'Q':
        o.quiet = true;
        break;
      case 's':
        if (abbreviates(value, "Name", 1)) {
          o.sortByName = true;
        } else if (abbreviates(value, "Time", 6)) {
          o.sortByName = false;
        } else {
          err += "unknown timesort format " + value;
        }
        break;
      case 't':
        setTimeFormat(value, o, err);
        break;
      case 'T':
        tres = value;
        break;
      default:  // -a, -M, -v: one cluster, and nothing more to say
        break;
    }
  }
  if (tres) {
    if (auto stop = resolveTres(*tres, o)) {
      parse.exit = std::move(stop);
      return parse;
    }
  }
  parseCommand(got.operands, context, parse, err, exitCode);
  if (!parse.exit && parse.request && parse.request->report != SreportReport::kJobSizesByAccount &&
      o.time >= SreportTime::kPercent) {
    parse.exit = failure(
        "sreport: error: kubeslurm does not record the cluster's capacity over time, so it "
        "reports no percentage of it; use -t Seconds, Minutes or Hours\n");
  }
  if (parse.exit) {
    parse.exit->err = err + parse.exit->err;
    return parse;
  }
  // What Slurm complains of and then reports anyway (an unknown condition, a bad TopCount).
  parse.complaints = std::move(err);
  parse.exitCode = exitCode;
  return parse;
}

accounting::ReportWindow reportWindow(const SreportRequest& request,
                                      const SreportContext& context) {
  return accounting::reportWindow(request.start, request.end, context.now,
                                  context.utcOffsetSeconds);
}

namespace {

// One printed association: a user's (with `group`, all of a user's) or an account's.
struct Line {
  std::string user;                   // "" for an account
  std::vector<std::string> accounts;  // one, or a grouped user's
  std::string parent;                 // an account line's, for the Tree
  TresSeconds allocSeconds;
};

bool selected(const std::vector<std::string>& list, const std::string& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// The lines of user TopUsage (by user and account, or by user with `group`) and of
// UserUtilizationByAccount, whose Accounts= selects exactly those accounts' associations.
std::vector<Line> userLines(const SreportData& data, const SreportRequest& request) {
  std::vector<Line> lines;
  std::map<std::string, std::size_t> lineOfUser;
  for (const accounting::AssociationUsage& u : data.usage) {
    if (!selected(request.users, lowercaseAscii(u.user)) ||
        !selected(request.accounts, u.account)) {
      continue;
    }
    std::size_t at = lines.size();
    if (request.group) at = lineOfUser.try_emplace(u.user, lines.size()).first->second;
    if (at == lines.size()) lines.push_back(Line{u.user, {}, "", {}});
    Line& line = lines[at];
    if (std::find(line.accounts.begin(), line.accounts.end(), u.account) == line.accounts.end()) {
      line.accounts.push_back(u.account);
    }
    for (const auto& [name, seconds] : u.allocSeconds) {
      std::uint64_t& total = line.allocSeconds[name];
      total = saturatingSum(total, seconds);
    }
  }
  return lines;
}

// sort_user_dec: most of `tres` first, then by login (and here by account, where Slurm's qsort
// leaves a user's associations in no set order).
void sortUsers(std::vector<Line>& lines, const std::string& tres, bool byName) {
  std::stable_sort(lines.begin(), lines.end(), [&](const Line& a, const Line& b) {
    if (!byName) {
      const auto ua = secondsOf(a.allocSeconds, tres);
      const auto ub = secondsOf(b.allocSeconds, tres);
      if (ua != ub) return ua > ub;
    }
    if (a.user != b.user) return a.user < b.user;
    return a.accounts < b.accounts;
  });
}

std::string joined(const std::vector<std::string>& accounts) {
  std::string text;
  for (const std::string& a : accounts) text += (text.empty() ? "" : ", ") + a;
  return text;
}

// slurmdb_report_print_time: `value` in the -t format, a percentage of `total` (1 when 0).
std::string reportTimeText(std::uint64_t value, std::uint64_t total, SreportTime time) {
  const double share = static_cast<double>(value) / static_cast<double>(total == 0 ? 1 : total);
  std::array<char, 96> buffer{};
  int written = 0;
  switch (time) {
    case SreportTime::kSeconds:
    case SreportTime::kMinutes:
    case SreportTime::kHours:
      return usageText(value, time);
    case SreportTime::kPercent:
      written = std::snprintf(buffer.data(), buffer.size(), "%.2f%%", share * 100);
      break;
    case SreportTime::kSecondsPercent:
      written = std::snprintf(buffer.data(), buffer.size(), "%llu(%.2f%%)",
                              static_cast<unsigned long long>(value), share * 100);
      break;
    case SreportTime::kMinutesPercent:
    case SreportTime::kHoursPercent: {
      const double divisor = time == SreportTime::kHoursPercent ? 3600.0 : 60.0;
      written = std::snprintf(buffer.data(), buffer.size(), "%.0f(%.2f%%)",
                              static_cast<double>(value) / divisor, share * 100);
      break;
    }
  }
  return written < 0 ? "" : buffer.data();
}

const char* timeFormatName(SreportTime time) {
  switch (time) {
    case SreportTime::kSeconds:
      return "Seconds";
    case SreportTime::kMinutes:
      return "Minutes";
    case SreportTime::kHours:
      return "Hours";
    case SreportTime::kPercent:
      return "Percentage of Total";
    case SreportTime::kSecondsPercent:
      return "Seconds/Percentage of Total";
    case SreportTime::kMinutesPercent:
      return "Minutes/Percentage of Total";
    case SreportTime::kHoursPercent:
      return "Hours/Percentage of Total";
  }
  return "Minutes";
}

// "250%20" -> 20: a Grouping= item's width (atoi after its '%'), 0 when none.
int groupingWidth(const std::string& item) {
  const std::size_t percent = item.find('%');
  return percent == std::string::npos ? 0
                                      : static_cast<int>(leadingNumber(item.c_str() + percent + 1));
}

// job_reports.c _run_report: the header block, the columns (Format=, one per size bucket as
// _setup_grouping_print_fields_list names them, "% of cluster") and a line per account.
CommandOutput formatJobSizes(const SreportData& data, const SreportParse& parse,
                             const SreportContext& context) {
  const SreportOptions& o = parse.options;
  SreportRequest request = *parse.request;
  CommandOutput result;
  result.err = parse.complaints;
  result.exitCode = parse.exitCode;
  if (request.format.empty()) request.format = {"Cl", "a"};
  if (o.tres.size() > 1) {
    result.err +=
        " Job report only supports a single --tres type.\n"
        " Generate a separate report for each TRES type.\n";
    result.exitCode = 1;
    return result;
  }
  accounting::JobSizesQuery query;
  query.window = reportWindow(request, context);
  query.tres = o.tres.empty() ? "cpu" : o.tres.front();
  query.individual = request.individual;
  if (request.grouping.empty()) request.grouping = {"50", "250", "500", "1000"};
  query.grouping.clear();
  for (const std::string& item : request.grouping) {
    query.grouping.push_back(static_cast<std::uint32_t>(leadingNumber(item.c_str())));
  }
  query.flatView = request.flatView;
  query.accountsAsParents = request.accountsAsParents && !request.flatView;
  query.accounts = request.accounts;
  query.users = request.users;
  query.partitions = request.partitions;
  query.jobIds = request.jobIds;
  // Another cluster's runs, or runs with a wckey, are none of these.
  const bool noRuns =
      request.wckeys || (!request.clusters.empty() &&
                         !selected(request.clusters, lowercaseAscii(context.clusterName)));
  const accounting::JobSizesReport report =
      accounting::jobSizesByAccount(noRuns ? std::vector<accounting::JobRecord>{} : data.records,
                                    data.accounts, query, context.now);

  std::vector<PrintField> fields = printFields(request, result.err, result.exitCode);
  if (report.buckets.empty()) {
    result.err += " We need a grouping list to set up the print.\n";
    result.exitCode = 1;
    return result;
  }
  const bool cpuUnits = o.tresText.empty() || equalsIgnoreCase(o.tresText, "cpu");
  const std::string unit = cpuUnits ? "CPUs" : "TRES";
  const bool withPercent = o.time == SreportTime::kSecondsPercent ||
                           o.time == SreportTime::kMinutesPercent ||
                           o.time == SreportTime::kHoursPercent;
  std::vector<std::string> bucketNames;  // what the columns' names view
  std::vector<int> bucketWidths;
  for (std::size_t b = 0; b < report.buckets.size(); ++b) {
    const accounting::JobSizeBucket& bucket = report.buckets[b];
    std::string name;
    if (request.individual) {
      name = std::to_string(bucket.min) + " " + unit;
    } else if (bucket.orMore) {
      name = ">= " + std::to_string(bucket.min) + " " + unit;
    } else {
      name = std::to_string(bucket.min) + "-" + std::to_string(bucket.max) + " " + unit;
    }
    int width = withPercent ? 20 : 13;
    if (!request.individual) {
      // The last bound's width is also the ">=" bucket's.
      const std::string& item = request.grouping[std::min(b, request.grouping.size() - 1)];
      if (const int asked = groupingWidth(item); asked != 0) width = asked;
    }
    bucketNames.push_back(std::move(name));
    bucketWidths.push_back(width);
  }
  std::vector<PrintColumn> columns = columnsOf(fields);
  for (std::size_t b = 0; b < bucketNames.size(); ++b) {
    columns.push_back({bucketNames[b], bucketWidths[b]});
  }
  columns.push_back({"% of cluster", 12});

  std::string& out = result.out;
  if (!o.noHeader) {
    const std::string rule(80, '-');
    out += rule + "\n";
    out += "Job Sizes " + timeText(query.window.start, context) + " - " +
           timeText(query.window.end - 1, context) + " (" +
           std::to_string(query.window.end - query.window.start) + " secs)\n";
    if (!o.tresText.empty()) out += "TRES type is " + o.tresText + "\n";
    out += request.printJobCount ? std::string("Units are in number of jobs ran\n")
                                 : std::string("Time reported in ") + timeFormatName(o.time) + "\n";
    out += rule + "\n";
    FieldPrinter(o.parsable).header(out, columns);
  }
  const FieldPrinter printer(o.parsable);
  for (const accounting::AccountJobSizes& line : report.accounts) {
    for (const PrintField& f : fields) {
      switch (f.field) {
        case Field::kAccount:
          printer.cell(out, f.width, Overflow::kMark, line.account, false);
          break;
        case Field::kCluster:
          printer.cell(out, f.width, Overflow::kMark, context.clusterName, false);
          break;
        case Field::kZeroDuration:
          printer.cell(out, f.width, Overflow::kKeep, "00:00:00", false);
          break;
        case Field::kZeroCount:
          printer.cell(out, f.width, Overflow::kKeep, "0", false);
          break;
        default:
          printer.cell(out, f.width, Overflow::kMark, std::nullopt, false);
          break;
      }
    }
    for (std::size_t b = 0; b < report.buckets.size(); ++b) {
      if (request.printJobCount) {
        printer.cell(out, bucketWidths[b], Overflow::kKeep, std::to_string(line.runs[b]), false);
      } else {
        printer.cell(out, bucketWidths[b], Overflow::kCut,
                     reportTimeText(line.tresSeconds[b], line.totalTresSeconds, o.time), false);
      }
    }
    const std::uint64_t share = request.printJobCount ? line.totalRuns : line.totalTresSeconds;
    const std::uint64_t whole =
        request.printJobCount ? report.clusterRuns : report.clusterTresSeconds;
    printer.cell(out, 12, Overflow::kCut, reportTimeText(share, whole, SreportTime::kPercent),
                 true);
    out += "\n";
  }
  return result;
}

}  // namespace

CommandOutput formatSreport(const SreportData& data, const SreportParse& parse,
                            const SreportContext& context) {
  if (parse.request->report == SreportReport::kJobSizesByAccount) {
    return formatJobSizes(data, parse, context);
  }
  const SreportOptions& o = parse.options;
  SreportRequest request = *parse.request;
  CommandOutput result;
  result.err = parse.complaints;
  result.exitCode = parse.exitCode;
  const bool tresGiven = !o.tres.empty();
  const std::vector<std::string> tres = tresGiven ? o.tres : std::vector<std::string>{"cpu"};
  const SreportReport kind = request.report;

  if (request.format.empty()) {
    const bool top = kind == SreportReport::kUserTop;
    const bool byUser = kind == SreportReport::kAccountUtilizationByUser;
    const std::string last = tresGiven ? "TresName,Used" : "Used,Energy";
    const std::string head = top      ? "Cl,L,P,A,"
                             : byUser ? "Cluster,Ac,Login,Proper,"
                                      : "Cluster,Login,Proper,Ac,";
    request.format = splitCommaList(head + last);
  }
  std::vector<PrintField> fields = printFields(request, result.err, result.exitCode);

  // The lines, in the report's order.
  std::vector<Line> lines;
  if (kind == SreportReport::kAccountUtilizationByUser) {
    for (accounting::AccountUsageRow& row :
         accounting::accountUsageTree(data.usage, data.accounts, request.accounts)) {
      // Users= asks slurmdbd for those users' associations: no account lines then.
      if (!request.users.empty() &&
          (row.user.empty() || !selected(request.users, lowercaseAscii(row.user)))) {
        continue;
      }
      lines.push_back(Line{std::move(row.user),
                           {std::move(row.account)},
                           std::move(row.parent),
                           std::move(row.allocSeconds)});
    }
  } else {
    request.group = request.group && kind == SreportReport::kUserTop;
    lines = userLines(data, request);
    // sreport_set_usage_column_width sorts the users by CPU; TopUsage then by its first TRES.
    sortUsers(lines, "cpu", o.sortByName);
  }

  // The widths of Used and Energy from the first line (the largest: root, or the user with the
  // most CPU), over the report's TRES when -T named them; whatever %N asked.
  std::uint64_t maxUsage = 0;
  if (!lines.empty()) {
    const bool energyShown = std::any_of(fields.begin(), fields.end(), [](const PrintField& f) {
      return f.field == Field::kEnergy;
    });
    if (energyShown) {
      maxUsage = secondsOf(lines.front().allocSeconds, "cpu");
    } else {
      for (const std::string& t : tres) {
        maxUsage = std::max(maxUsage, secondsOf(lines.front().allocSeconds, t));
      }
    }
  }
  for (PrintField& f : fields) {
    if (f.field == Field::kUsed) f.width = usageWidth(maxUsage);
    if (f.field == Field::kEnergy) f.width = usageWidth(0);
  }
  if (kind == SreportReport::kUserTop) sortUsers(lines, tres.front(), o.sortByName);

  const accounting::ReportWindow window = reportWindow(request, context);
  std::string& out = result.out;
  if (!o.noHeader) {
    const std::string rule(80, '-');
    const std::string span = timeText(window.start, context) + " - " +
                             timeText(window.end - 1, context) + " (" +
                             std::to_string(window.end - window.start) + " secs)";
    out += rule + "\n";
    switch (kind) {
      case SreportReport::kUserTop:
        out += "Top " + std::to_string(request.topCount) + " Users " + span + "\n";
        break;
      case SreportReport::kAccountUtilizationByUser:
        out += "Cluster/Account/User Utilization " + span + "\n";
        break;
      case SreportReport::kUserUtilizationByAccount:
        out += "Cluster/User/Account Utilization " + span + "\n";
        break;
      case SreportReport::kJobSizesByAccount:  // formatJobSizes
        break;
    }
    out += std::string("Usage reported in ") + (tresGiven ? "TRES " : "CPU ") +
           timeFormatName(o.time) + "\n";
    out += rule + "\n";
    FieldPrinter(o.parsable).header(out, columnsOf(fields));
  }

  const FieldPrinter printer(o.parsable);
  // slurmdb_tree_name_get: an account one space deeper than its parent's line, when that was
  // printed; a user's line shows its account one deeper than the account's.
  std::map<std::string, std::string> indent;
  std::uint32_t count = 0;
  for (const Line& line : lines) {
    if (kind == SreportReport::kUserTop && count++ >= request.topCount) break;
    std::string account = joined(line.accounts);
    if (request.tree && kind == SreportReport::kAccountUtilizationByUser) {
      const std::string& under = line.user.empty() ? line.parent : account;
      const auto parent = indent.find(under);
      const std::string spaces = parent == indent.end() ? "" : parent->second + " ";
      if (line.user.empty()) indent.try_emplace(account, spaces);
      account.insert(0, spaces);
    }
    for (const std::string& t : tres) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const PrintField& f = fields[i];
        const bool lastField = i + 1 == fields.size();
        switch (f.field) {
          case Field::kAccount:
            printer.cell(out, f.width, Overflow::kMark, account, lastField);
            break;
          case Field::kCluster:
            printer.cell(out, f.width, Overflow::kMark, context.clusterName, lastField);
            break;
          case Field::kLogin:
            printer.cell(out, f.width, Overflow::kMark,
                         line.user.empty() ? std::nullopt : std::optional<std::string>(line.user),
                         lastField);
            break;
          case Field::kProper: {
            const auto name = data.properNames.find(line.user);
            printer.cell(out, f.width, Overflow::kMark,
                         name == data.properNames.end() || line.user.empty()
                             ? std::nullopt
                             : std::optional<std::string>(name->second),
                         lastField);
            break;
          }
          case Field::kUsed:
            printer.cell(out, f.width, Overflow::kCut,
                         usageText(secondsOf(line.allocSeconds, t), o.time), lastField);
            break;
          case Field::kEnergy:  // no energy is gathered: every association's is 0
            printer.cell(out, f.width, Overflow::kCut, usageText(0, o.time), lastField);
            break;
          case Field::kTresName:
            printer.cell(out, f.width, Overflow::kMark, t, lastField);
            break;
          case Field::kBlank:
            printer.cell(out, f.width, Overflow::kMark, std::nullopt, lastField);
            break;
          case Field::kZeroDuration:
            printer.cell(out, f.width, Overflow::kKeep, "00:00:00", lastField);
            break;
          case Field::kZeroCount:
            printer.cell(out, f.width, Overflow::kKeep, "0", lastField);
            break;
        }
      }
      out += "\n";
    }
  }
  return result;
}

}  // namespace kubeslurm::cli
