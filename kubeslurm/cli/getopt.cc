#include "kubeslurm/cli/getopt.h"

#include <algorithm>

#include "kubeslurm/base/text.h"

namespace kubeslurm::cli {
namespace {

// -1: not an option; 0, 1, 2 as LongOptionSpec::argument.
int shortArgument(std::string_view spec, char c) {
  if (c == ':') return -1;
  const std::size_t at = spec.find(c);
  if (at == std::string_view::npos) return -1;
  if (at + 1 < spec.size() && spec[at + 1] == ':') {
    return at + 2 < spec.size() && spec[at + 2] == ':' ? 2 : 1;
  }
  return 0;
}

}  // namespace

GetoptResult getoptLong(std::string_view program, const std::vector<std::string>& args,
                        std::string_view shortSpec, std::span<const LongOptionSpec> longOptions) {
  GetoptResult result;
  const std::string prefix = std::string(program) + ": ";
  // A leading '+' (srun's, sattach's): the options end at the first operand.
  const bool inOrder = shortSpec.starts_with('+');
  if (inOrder) shortSpec.remove_prefix(1);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      result.operands.insert(result.operands.end(),
                             args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (word.starts_with("--")) {
      const std::size_t eq = word.find('=');
      const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const LongOptionSpec* match = nullptr;
      std::vector<const LongOptionSpec*> candidates;
      for (const LongOptionSpec& option : longOptions) {
        if (option.name == name) {
          match = &option;
          break;
        }
        if (option.name.starts_with(name)) candidates.push_back(&option);
      }
      if (match == nullptr && !candidates.empty()) {
        // glibc accepts an ambiguous prefix when every candidate means the same option.
        const bool same = std::ranges::all_of(candidates, [&](const LongOptionSpec* c) {
          return c->key != '\0' && c->key == candidates.front()->key &&
                 c->argument == candidates.front()->argument;
        });
        if (candidates.size() == 1 || same) {
          match = candidates.front();
        } else {
          std::string error =
              prefix + "option '" + word.substr(0, eq) + "' is ambiguous; " + "possibilities:";
          for (const LongOptionSpec* c : candidates) error += " '--" + std::string(c->name) + "'";
          result.error = std::move(error);
          return result;
        }
      }
      if (match == nullptr) {
        result.error = prefix;
        *result.error += "unrecognized option '" + word + "'";
        return result;
      }
      ParsedOption parsed{match->key, match->name, std::nullopt};
      if (eq != std::string::npos) {
        if (match->argument == 0) {
          result.error =
              prefix + "option '--" + std::string(match->name) + "' doesn't allow an argument";
          return result;
        }
        parsed.value = word.substr(eq + 1);
      } else if (match->argument == 1) {
        if (i + 1 >= args.size()) {
          result.error =
              prefix + "option '--" + std::string(match->name) + "' requires an argument";
          return result;
        }
        parsed.value = args[++i];
      }
      result.options.push_back(std::move(parsed));
      continue;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (inOrder) {
        result.operands.insert(result.operands.end(), args.begin() + static_cast<std::ptrdiff_t>(i),
                               args.end());
        break;
      }
      result.operands.push_back(word);
      continue;
    }
    for (std::size_t k = 1; k < word.size(); ++k) {
      const char c = word[k];
      const int argument = shortArgument(shortSpec, c);
      if (argument < 0) {
        result.error = prefix + "invalid option -- '" + std::string(1, c) + "'";
        return result;
      }
      ParsedOption parsed{c, "", std::nullopt};
      if (argument > 0 && k + 1 < word.size()) {
        parsed.value = word.substr(k + 1);
        k = word.size();
      } else if (argument == 1) {
        if (i + 1 >= args.size()) {
          result.error = prefix + "option requires an argument -- '" + std::string(1, c) + "'";
          return result;
        }
        parsed.value = args[++i];
      }
      result.options.push_back(std::move(parsed));
    }
  }
  return result;
}

int consumeFieldWidth(std::string_view text, std::size_t& i) {
  int width = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    width = std::min(width * 10 + (text[i++] - '0'), kMaxFieldWidth);
  }
  return width;
}

bool abbreviates(std::string_view word, std::string_view name, std::size_t minimum) {
  if (word.size() > name.size()) return false;
  if (word.size() < minimum) return word.size() == name.size() && equalsIgnoreCase(word, name);
  return equalsIgnoreCase(word, name.substr(0, word.size()));
}

std::string joinCommaList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

bool listHas(const std::vector<std::string>& list, std::string_view value, bool caseless) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
    return caseless ? equalsIgnoreCase(item, value) : item == value;
  });
}

std::vector<std::string> splitCommaList(std::string_view text) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) items.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

}  // namespace kubeslurm::cli
