#include "kubeslurm/cli/priority_format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/cli/print_fields.h"

namespace kubeslurm::cli {
namespace {

std::string printfString(const char* format, double value) {
  std::array<char, 64> buffer{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): Slurm's own number formats
  (void)std::snprintf(buffer.data(), buffer.size(), format, value);
  return buffer.data();
}

// sprio's _print_str: right-justified fields are "%Ns" cut to N characters, left-justified ones
// "%.Ns" padded to N; width 0 prints the text as it is.
void appendField(std::string& out, const std::string& text, int width, bool right) {
  if (width <= 0) {
    out += text;
    return;
  }
  const auto w = static_cast<std::size_t>(width);
  std::string cell = text;
  if (right && cell.size() < w) cell.insert(0, w - cell.size(), ' ');
  if (cell.size() > w) cell.resize(w);
  out += cell;
  if (cell.size() < w) out.append(w - cell.size(), ' ');
}

std::string roundedNumber(double value) { return printfString("%.0f", value); }
std::string normalizedNumber(double value) { return printfString("%.7lf", value); }

// sprio's get_priority_from_factors: the factors' sum (site 0, minus nice), truncated, and never
// below 1 (0 means held).
std::int64_t priorityOf(const rpc::PriorityFactors& p) {
  const double sum = p.age + p.fairshare + p.jobSize + p.partition + p.qos + p.tresGpu -
                     static_cast<double>(p.nice);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(sum));
}

struct SprioField {
  char letter = 'i';
  int width = 0;
  bool right = false;
  std::string suffix;
};

// The weight a normalized factor is divided by, and the weighted value, per letter.
struct FactorColumn {
  char weighted;
  const char* header;
  double rpc::PriorityFactors::*value;
  std::uint32_t rpc::PriorityWeights::*weight;
};
constexpr std::array kFactorColumns = {
    FactorColumn{'A', "AGE", &rpc::PriorityFactors::age, &rpc::PriorityWeights::age},
    FactorColumn{'F', "FAIRSHARE", &rpc::PriorityFactors::fairshare,
                 &rpc::PriorityWeights::fairshare},
    FactorColumn{'J', "JOBSIZE", &rpc::PriorityFactors::jobSize, &rpc::PriorityWeights::jobSize},
    FactorColumn{'P', "PARTITION", &rpc::PriorityFactors::partition,
                 &rpc::PriorityWeights::partition},
    FactorColumn{'Q', "QOS", &rpc::PriorityFactors::qos, &rpc::PriorityWeights::qos},
};

// The GPU weight of PriorityWeightTRES ("GRES/gpu=1000" -> 1000).
double tresGpuWeight(const rpc::PriorityWeights& weights) {
  const std::size_t eq = weights.tres.find('=');
  return eq == std::string::npos ? 0.0 : std::strtod(weights.tres.c_str() + eq + 1, nullptr);
}

enum class Row { kHeader, kWeights, kJob };

// One cell; nullopt for a letter sprio does not know.
std::optional<std::string> sprioCell(char letter, Row row, const rpc::PendingJob* job,
                                     const rpc::PriorityWeights& weights) {
  const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
  const bool normalized = letter != upper;
  for (const FactorColumn& column : kFactorColumns) {
    if (column.weighted != upper) continue;
    const auto weight = static_cast<double>(weights.*column.weight);
    if (row == Row::kHeader) return column.header;
    if (row == Row::kWeights) return roundedNumber(weight);
    const double value = job->priority.*column.value;
    if (!normalized) return roundedNumber(value);
    return normalizedNumber(weight > 0 ? value / weight : 0.0);
  }
  switch (letter) {
    case 'i':
      if (row == Row::kHeader) return "JOBID";
      if (row == Row::kWeights) return "Weights";
      return std::to_string(job->jobId);
    case 'r':
      if (row == Row::kHeader) return "PARTITION";
      return row == Row::kWeights ? std::string() : job->partition;
    case 'u':
      if (row == Row::kHeader) return "USER";
      return row == Row::kWeights ? std::string() : job->user;
    case 'Y':
      if (row == Row::kHeader) return "PRIORITY";
      return row == Row::kWeights ? std::string() : std::to_string(priorityOf(job->priority));
    case 'y':
      if (row == Row::kHeader) return "PRIORITY";
      if (row == Row::kWeights) return std::string();
      return printfString("%16.14f", static_cast<double>(priorityOf(job->priority)) /
                                         static_cast<double>(0xffffffffU));
    case 'S':
      if (row == Row::kHeader) return "SITE";
      return row == Row::kWeights ? "1" : "0";  // no site factor: Slurm's default 0
    case 'B':
    case 'b':
      // PriorityWeightAssoc is not modelled: weight 0, factor 0, as on the reference cluster.
      if (row == Row::kHeader) return "ASSOC";
      return row == Row::kJob && normalized ? normalizedNumber(0) : "0";
    case 'N':
      if (row == Row::kHeader) return "NICE";
      return row == Row::kWeights ? std::string() : roundedNumber(job->priority.nice);
    case 'T':
    case 't': {
      if (row == Row::kHeader) return "TRES";
      if (row == Row::kWeights) return weights.tres;
      if (job->priority.tresGpu == 0) return std::string();
      if (!normalized) return "gres/gpu=" + roundedNumber(job->priority.tresGpu);
      const double weight = tresGpuWeight(weights);
      return "gres/gpu=" + printfString("%.2f", weight > 0 ? job->priority.tresGpu / weight : 0.0);
    }
    default:
      return std::nullopt;
  }
}

// sprio's parse_format: text before the first '%' is dropped, each "%[.][width]X" is a field and
// what follows it up to the next '%' is printed after it.
std::vector<SprioField> parseSprioFormat(const std::string& format, std::string& err) {
  std::vector<SprioField> fields;
  std::size_t pos = format.find('%');
  while (pos != std::string::npos) {
    std::size_t i = pos + 1;
    const std::size_t next = format.find('%', i);
    const std::string token =
        format.substr(i, next == std::string::npos ? std::string::npos : next - i);
    pos = next;
    if (token.empty()) continue;
    SprioField field;
    std::size_t k = 0;
    if (token[k] == '.') {
      field.right = true;
      ++k;
    }
    field.width = consumeFieldWidth(token, k);
    if (k >= token.size()) continue;
    field.letter = token[k];
    field.suffix = token.substr(k + 1);
    if (!sprioCell(field.letter, Row::kHeader, nullptr, {})) {
      err +=
          "sprio: error: Invalid job format specification: " + std::string(1, field.letter) + "\n";
      continue;
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

// sprio.c's default: the job id, partition (and user with -u), priority and site, then one
// column per non-zero weight.
std::string defaultSprioFormat(const SprioOptions& o, const rpc::PriorityWeights& w) {
  if (o.longList) {
    return o.normalized ? "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t"
                        : "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N "
                          "%.20T";
  }
  std::string format = "%.15i %9r";
  if (!o.users.empty()) format += " %.8u";
  format += o.normalized ? " %10y" : " %.10Y %.10S";
  const auto column = [&](bool on, char letter) {
    if (!on) return;
    format += o.normalized ? std::string(" %10") + static_cast<char>(std::tolower(letter))
                           : std::string(" %.10") + letter;
  };
  column(w.age != 0, 'A');
  column(w.fairshare != 0, 'F');
  column(w.jobSize != 0, 'J');
  column(w.partition != 0, 'P');
  column(w.qos != 0, 'Q');
  if (!w.tres.empty()) format += o.normalized ? " %20t" : " %.20T";
  return format;
}

constexpr std::array kSprioLongOptions = {
    LongOptionSpec{"noheader", 0, 'h'},    LongOptionSpec{"jobs", 2, 'j'},
    LongOptionSpec{"long", 0, 'l'},        LongOptionSpec{"cluster", 1, 'M'},
    LongOptionSpec{"clusters", 1, 'M'},    LongOptionSpec{"norm", 0, 'n'},
    LongOptionSpec{"format", 1, 'o'},      LongOptionSpec{"sort", 1, 'S'},
    LongOptionSpec{"partition", 1, 'p'},   LongOptionSpec{"user", 1, 'u'},
    LongOptionSpec{"users", 1, 'u'},       LongOptionSpec{"verbose", 0, 'v'},
    LongOptionSpec{"version", 0, 'V'},     LongOptionSpec{"weights", 0, 'w'},
    LongOptionSpec{"help", 0, '\0'},       LongOptionSpec{"usage", 0, '\0'},
    LongOptionSpec{"federation", 0, '\0'}, LongOptionSpec{"local", 0, '\0'},
    LongOptionSpec{"sibling", 0, '\0'},
};

constexpr std::string_view kVersion = "slurm-wlm 22.05.8\n";

CommandOutput usageFailure(std::string_view program, const std::string& message) {
  return {"", message + "\nTry \"" + std::string(program) + " --help\" for more information\n", 1};
}

bool addJobIds(std::string_view text, std::vector<std::int64_t>& jobs, std::string& bad) {
  for (const std::string& item : splitCommaList(text)) {
    char* end = nullptr;
    const long long id = std::strtoll(item.c_str(), &end, 10);
    if (id <= 0 || *end != '\0') {
      bad = item;
      return false;
    }
    jobs.push_back(id);
  }
  return true;
}

}  // namespace

SprioParse parseSprioArgs(const std::vector<std::string>& args) {
  SprioParse parse;
  SprioOptions& o = parse.options;
  const GetoptResult got = getoptLong("sprio", args, "hj::lM:no:p:S:u:vVw", kSprioLongOptions);
  if (got.error) {
    parse.exit = usageFailure("sprio", *got.error);
    return parse;
  }
  std::string bad;
  for (const ParsedOption& option : got.options) {
    switch (option.key) {
      case 'h':
        o.noHeader = true;
        break;
      case 'j':
        if (!o.jobs) o.jobs.emplace();
        if (option.value && !addJobIds(*option.value, *o.jobs, bad)) {
          parse.exit = CommandOutput{"", "sprio: error: Invalid job id: " + bad + "\n", 1};
          return parse;
        }
        break;
      case 'l':
        o.longList = true;
        break;
      case 'M':
        parse.exit = CommandOutput{
            "", "sprio: error: -M/--clusters: kubeslurm runs one cluster per operator\n", 1};
        return parse;
      case 'n':
        o.normalized = true;
        break;
      case 'o':
        o.format = *option.value;
        break;
      case 'S':
        o.sort = *option.value;
        break;
      case 'p':
        o.partitions = splitCommaList(*option.value);
        break;
      case 'u':
        o.users = splitCommaList(*option.value);
        break;
      case 'v':
        break;
      case 'V':
        parse.exit = CommandOutput{std::string(kVersion), "", 0};
        return parse;
      case 'w':
        o.weights = true;
        break;
      default:
        if (option.longName == "help" || option.longName == "usage") {
          parse.exit = CommandOutput{
              "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
              "             [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n"
              "kubeslurm: --namespace NS, --all-namespaces, --kubeconfig FILE, --context NAME\n",
              "", 0};
          return parse;
        }
        break;  // --federation, --local, --sibling: one cluster, nothing to select
    }
  }
  // "-j 5": the list as the next operand, as sprio's option parser takes it.
  std::size_t next = 0;
  if (o.jobs && o.jobs->empty() && next < got.operands.size()) {
    if (!addJobIds(got.operands[next++], *o.jobs, bad)) {
      parse.exit = CommandOutput{"", "sprio: error: Invalid job id: " + bad + "\n", 1};
      return parse;
    }
  }
  if (next < got.operands.size()) {
    parse.exit = usageFailure("sprio", "sprio: error: Unrecognized option: " + got.operands[next]);
    return parse;
  }
  if (o.longList && o.format) {
    parse.exit = CommandOutput{"",
                               "sprio: fatal: Options -o(--format) and -l(--long) are mutually "
                               "exclusive. Please remove one and retry.\n",
                               1};
  }
  return parse;
}

CommandOutput formatSprio(const std::vector<rpc::PendingJob>& all,
                          const rpc::PriorityWeights& weights, const SprioOptions& options) {
  CommandOutput output;
  const std::string format =
      options.format ? *options.format : defaultSprioFormat(options, weights);
  const std::vector<SprioField> fields = parseSprioFormat(format, output.err);

  // A job of several partitions is a row in each, with that partition's factors
  // (priority_multifactor.c _filter_job): -p filters rows, and the job-id sort, being stable,
  // keeps them in the order the job names its partitions.
  std::vector<rpc::PendingJob> perPartition;
  for (const rpc::PendingJob& job : all) {
    for (const rpc::PartitionPriority& each : job.partitionPriorities) {
      rpc::PendingJob& row = perPartition.emplace_back(job);
      row.partition = each.partition;
      row.priority = each.priority;
      row.partitionPriorities.clear();
    }
  }
  std::vector<const rpc::PendingJob*> rows;
  for (const rpc::PendingJob& job : all) {
    if (job.partitionPriorities.empty()) rows.push_back(&job);
  }
  for (const rpc::PendingJob& row : perPartition) rows.push_back(&row);

  std::vector<const rpc::PendingJob*> jobs;
  for (const rpc::PendingJob* row : rows) {
    const rpc::PendingJob& job = *row;
    // A held job (priority 0) has no factors to show, as slurmctld leaves it out.
    if (job.priority.priority == 0) continue;
    if (options.jobs && !options.jobs->empty() &&
        std::ranges::find(*options.jobs, job.jobId) == options.jobs->end()) {
      continue;
    }
    if (!options.partitions.empty() &&
        std::ranges::find(options.partitions, job.partition) == options.partitions.end()) {
      continue;
    }
    if (!options.users.empty() &&
        std::ranges::find(options.users, job.user) == options.users.end()) {
      continue;
    }
    jobs.push_back(&job);
  }
  if (options.jobs && jobs.empty() && !options.weights) {
    output.out = "Unable to find jobs matching user/id(s) specified\n";
    return output;
  }

  const auto line = [&](Row row, const rpc::PendingJob* job) {
    for (const SprioField& field : fields) {
      appendField(output.out, *sprioCell(field.letter, row, job, weights), field.width,
                  field.right);
      output.out += field.suffix;
    }
    output.out += '\n';
  };
  if (!options.noHeader) line(Row::kHeader, nullptr);
  if (options.weights) {
    line(Row::kWeights, nullptr);
    return output;
  }

  // sort.c: keys applied from the last to the first, '-' before a key for descending.
  std::ranges::stable_sort(jobs, {}, [](const rpc::PendingJob* j) { return j->jobId; });
  const std::string sort = options.sort.empty() ? "i" : options.sort;
  for (std::size_t i = sort.size(); i-- > 0;) {
    const char key = sort[i];
    if (key == ',' || key == '-' || key == '+') continue;
    const bool descending = i > 0 && sort[i - 1] == '-';
    std::function<bool(const rpc::PendingJob*, const rpc::PendingJob*)> less;
    const auto by = [&](auto projection) {
      less = [projection](const rpc::PendingJob* a, const rpc::PendingJob* b) {
        return projection(*a) < projection(*b);
      };
    };
    switch (std::tolower(static_cast<unsigned char>(key))) {
      case 'i':
        by([](const rpc::PendingJob& j) { return j.jobId; });
        break;
      case 'r':
        by([](const rpc::PendingJob& j) { return j.partition; });
        break;
      case 'u':
        by([](const rpc::PendingJob& j) { return j.user; });
        break;
      case 'n':
        by([](const rpc::PendingJob& j) { return j.priority.nice; });
        break;
      case 'a':
        by([](const rpc::PendingJob& j) { return j.priority.age; });
        break;
      case 'f':
        by([](const rpc::PendingJob& j) { return j.priority.fairshare; });
        break;
      case 'j':
        by([](const rpc::PendingJob& j) { return j.priority.jobSize; });
        break;
      case 'p':
        by([](const rpc::PendingJob& j) { return j.priority.partition; });
        break;
      case 'q':
        by([](const rpc::PendingJob& j) { return j.priority.qos; });
        break;
      case 't':
        by([](const rpc::PendingJob& j) { return j.priority.tresGpu; });
        break;
      case 'y':
        by([](const rpc::PendingJob& j) { return priorityOf(j.priority); });
        break;
      default:
        return {"", "sprio: error: Invalid sort specification: " + std::string(1, key) + "\n", 1};
    }
    std::ranges::stable_sort(jobs, [&](const rpc::PendingJob* a, const rpc::PendingJob* b) {
      return descending ? less(b, a) : less(a, b);
    });
  }
  for (const rpc::PendingJob* job : jobs) line(Row::kJob, job);
  return output;
}

// ---------------------------------------------------------------------------------------------
// sshare

namespace {

enum class ShareField {
  kAccount,
  kCluster,
  kEffectiveUsage,
  kFairShare,
  kGrpTresMins,
  kGrpTresRaw,
  kId,
  kLevelFs,
  kNormShares,
  kNormUsage,
  kPartition,
  kRawShares,
  kRawUsage,
  kTresRunMins,
  kUser,
};

struct ShareColumn {
  std::string_view name;
  int width;  // negative: left-justified (print_fields)
  ShareField field;
};

// process.c's fields[], in its order: a requested name matches the first whose name starts
// with it, ignoring case.
constexpr std::array kShareColumns = {
    ShareColumn{"Account", -20, ShareField::kAccount},
    ShareColumn{"Cluster", 10, ShareField::kCluster},
    ShareColumn{"EffectvUsage", 13, ShareField::kEffectiveUsage},
    ShareColumn{"FairShare", 10, ShareField::kFairShare},
    ShareColumn{"GrpTRESMins", 30, ShareField::kGrpTresMins},
    ShareColumn{"GrpTRESRaw", 30, ShareField::kGrpTresRaw},
    ShareColumn{"ID", 6, ShareField::kId},
    ShareColumn{"LevelFS", 10, ShareField::kLevelFs},
    ShareColumn{"NormShares", 11, ShareField::kNormShares},
    ShareColumn{"NormUsage", 11, ShareField::kNormUsage},
    ShareColumn{"Partition", 12, ShareField::kPartition},
    ShareColumn{"RawShares", 10, ShareField::kRawShares},
    ShareColumn{"RawUsage", 11, ShareField::kRawUsage},
    ShareColumn{"TRESRunMins", 30, ShareField::kTresRunMins},
    ShareColumn{"User", 10, ShareField::kUser},
};

// One printed value: text, or nullopt for "no value" (print_fields prints blanks).
struct ShareValue {
  std::optional<std::string> text;
  bool number = false;  // numbers are never cut; strings get '+' when too long
};

std::string sixDecimals(double value) {
  if (std::isinf(value)) return "inf";
  return printfString("%f", value);
}

constexpr std::array kSshareLongOptions = {
    LongOptionSpec{"accounts", 1, 'A'},   LongOptionSpec{"all", 0, 'a'},
    LongOptionSpec{"helpformat", 0, 'e'}, LongOptionSpec{"long", 0, 'l'},
    LongOptionSpec{"partition", 0, 'm'},  LongOptionSpec{"cluster", 1, 'M'},
    LongOptionSpec{"clusters", 1, 'M'},   LongOptionSpec{"noheader", 0, 'n'},
    LongOptionSpec{"format", 1, 'o'},     LongOptionSpec{"parsable", 0, 'p'},
    LongOptionSpec{"parsable2", 0, 'P'},  LongOptionSpec{"users", 1, 'u'},
    LongOptionSpec{"Users", 0, 'U'},      LongOptionSpec{"verbose", 0, 'v'},
    LongOptionSpec{"version", 0, 'V'},    LongOptionSpec{"help", 0, '\0'},
    LongOptionSpec{"usage", 0, '\0'},
};

}  // namespace

SshareParse parseSshareArgs(const std::vector<std::string>& args) {
  SshareParse parse;
  SshareOptions& o = parse.options;
  const GetoptResult got = getoptLong("sshare", args, "aA:ehlM:no:pPqUu:t:vVm", kSshareLongOptions);
  if (got.error) {
    parse.exit = usageFailure("sshare", *got.error);
    return parse;
  }
  for (const ParsedOption& option : got.options) {
    switch (option.key) {
      case 'a':
        o.allUsers = true;
        break;
      case 'A': {
        const auto accounts = splitCommaList(*option.value);
        o.accounts.insert(o.accounts.end(), accounts.begin(), accounts.end());
        break;
      }
      case 'e': {
        std::string out;
        for (const ShareColumn& column : kShareColumns) out += std::string(column.name) + " ";
        parse.exit = CommandOutput{out + "\n", "", 0};
        return parse;
      }
      case 'h':
      case 'n':
        o.noHeader = true;
        break;
      case 'l':
        o.longList = true;
        break;
      case 'm':
        break;  // per-partition associations: kubeslurm's are per account only
      case 'M':
        parse.exit = CommandOutput{
            "", "sshare: error: -M/--clusters: kubeslurm runs one cluster per operator\n", 1};
        return parse;
      case 'o':
        o.format = o.format.value_or("") + *option.value + ",";
        break;
      case 'p':
        o.parsable = 1;
        break;
      case 'P':
        o.parsable = 2;
        break;
      case 'q':
      case 't':
      case 'v':
        break;
      case 'U':
        o.usersOnly = true;
        break;
      case 'u':
        if (*option.value == "-1") {
          o.allUsers = true;
        } else {
          o.allUsers = false;
          const auto users = splitCommaList(*option.value);
          o.users.insert(o.users.end(), users.begin(), users.end());
        }
        break;
      case 'V':
        parse.exit = CommandOutput{std::string(kVersion), "", 0};
        return parse;
      default:
        parse.exit = CommandOutput{
            "Usage: sshare [-A accounts] [-a] [-l] [-n] [-o fields] [-p] [-P] [-U] [-u users]\n"
            "kubeslurm: --kubeconfig FILE, --context NAME\n",
            "", 0};
        return parse;
    }
  }
  return parse;
}

CommandOutput formatSshare(const std::vector<rpc::FairShareRow>& rows, bool fairTree,
                           const SshareOptions& options, const std::string& caller) {
  CommandOutput output;
  std::string fieldList;
  if (options.format) {
    fieldList = *options.format;
  } else if (options.longList) {
    fieldList = fairTree ? "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,LevelFS,"
                           "GrpTRESMins,TRESRunMins"
                         : "A,User,RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,"
                           "GrpTRESMins,TRESRunMins";
  } else {
    fieldList = "A,User,RawShares,NormShares,RawUsage,Eff,Fairshare";
  }
  std::vector<ShareColumn> columns;
  for (const std::string& item : splitCommaList(fieldList)) {
    const FormatItem parsed = splitFormatItem(item);
    const std::string& name = parsed.name;
    const int width = parsed.width;
    const auto* const match = std::ranges::find_if(
        kShareColumns, [&](const ShareColumn& c) { return startsWithIgnoreCase(c.name, name); });
    if (match == kShareColumns.end()) {
      return {"", "sshare: error: Invalid field requested: \"" + name + "\"\n", 1};
    }
    ShareColumn column = *match;
    if (width != 0) column.width = width;
    columns.push_back(column);
  }

  const FieldPrinter printer(options.parsable);
  if (!options.noHeader) {
    std::vector<PrintColumn> header;
    header.reserve(columns.size());
    for (const ShareColumn& column : columns) header.push_back({column.name, column.width});
    printer.header(output.out, header);
  }

  const double rootUsage = rows.empty() ? 0.0 : rows.front().rawUsage;
  const std::set<std::string> users(options.users.begin(), options.users.end());
  for (std::size_t index = 0; index < rows.size(); ++index) {
    const rpc::FairShareRow& row = rows[index];
    const bool userRow = !row.user.empty();
    if (userRow) {
      const bool wanted = options.allUsers ? true
                          : users.empty()  ? row.user == caller
                                           : users.contains(row.user);
      if (!wanted) continue;
    } else if (options.usersOnly) {
      continue;
    }
    if (!options.accounts.empty() &&
        std::ranges::find(options.accounts, row.account) == options.accounts.end()) {
      continue;
    }
    for (std::size_t i = 0; i < columns.size(); ++i) {
      ShareValue value;
      switch (columns[i].field) {
        case ShareField::kAccount:
          value.text = std::string(row.depth, ' ') + row.account;
          break;
        case ShareField::kUser:
          if (userRow) value.text = row.user;
          break;
        case ShareField::kRawShares:
          // The root association has no shares of its own (NO_VAL: blank).
          if (row.depth > 0) value = {std::to_string(row.rawShares), true};
          break;
        case ShareField::kNormShares:
          value = {sixDecimals(row.normShares), true};
          break;
        case ShareField::kRawUsage:
          value = {std::to_string(static_cast<std::uint64_t>(std::max(0.0, row.rawUsage))), true};
          break;
        case ShareField::kNormUsage:
          value = {sixDecimals(rootUsage > 0 ? row.rawUsage / rootUsage : 0.0), true};
          break;
        case ShareField::kEffectiveUsage:
          value = {sixDecimals(row.effectiveUsage), true};
          break;
        case ShareField::kFairShare:
          // Fair Tree ranks users; an account row has no factor of its own to show.
          if (!fairTree || userRow) value = {sixDecimals(row.fairShare), true};
          break;
        case ShareField::kLevelFs:
          // Fair Tree's level fair-share: shares over usage among siblings.
          value = {
              sixDecimals(row.effectiveUsage > 0 ? row.normShares / row.effectiveUsage : INFINITY),
              true};
          break;
        case ShareField::kId:
          value = {std::to_string(index + 1), true};
          break;
        case ShareField::kCluster:
        case ShareField::kPartition:
        case ShareField::kGrpTresMins:
        case ShareField::kGrpTresRaw:
        case ShareField::kTresRunMins:
          break;  // no value: one cluster, accounts without partitions or TRES limits
      }
      printer.cell(output.out, columns[i].width, value.number ? Overflow::kKeep : Overflow::kMark,
                   value.text, i + 1 == columns.size());
    }
    output.out += '\n';
  }
  return output;
}

}  // namespace kubeslurm::cli
