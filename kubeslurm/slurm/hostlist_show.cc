#include "kubeslurm/slurm/hostlist_show.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::slurm {
namespace {

constexpr std::size_t kMaxHostlistFile = std::size_t{1024} * 1024;  // what scontrol reads of a file

// Parses as Slurm does and prints its diagnostics; a fatal error is marked in `shown`.
std::optional<Hostlist> parseHostlist(const std::string& text, HostlistShown& shown,
                                      std::ostream& err) {
  std::vector<std::string> diagnostics;
  StatusOr<Hostlist> list = Hostlist::parse(text, &diagnostics);
  for (const std::string& line : diagnostics) err << "scontrol: error: " << line << "\n";
  if (list.isOk()) return std::move(list).value();
  switch (list.status().code()) {
    case StatusCode::kResourceExhausted:
      err << "scontrol: fatal: " << list.status().message() << "\n";
      shown.fatal = true;
      break;
    case StatusCode::kOutOfRange:
      err << "scontrol: error: " << list.status().message() << "\n";
      break;
    default:
      break;
  }
  return std::nullopt;
}

// scontrol reads at most 1 MiB of a host file as a C string, turns newlines into commas and
// squeezes runs of commas into one.
std::string hostFileToList(const std::string& contents) {
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

// scontrol prints no error and exits 0 for an invalid list given to `show hostnames`.
HostlistShown printHosts(const std::optional<std::string>& nodeList, std::ostream& out,
                         std::ostream& err) {
  HostlistShown shown;
  if (!nodeList) {
    err << "scontrol: error: host list is empty\n";
    return shown;
  }
  std::optional<Hostlist> list = parseHostlist(*nodeList, shown, err);
  if (!list) {
    if (!shown.fatal) err << "Invalid hostlist: " << *nodeList << "\n";
    return shown;
  }
  list->forEachHost([&](std::string_view host) {
    out << host << '\n';
    return true;
  });
  return shown;
}

HostlistShown encodeHostlist(
    const std::string& argument, bool sorted,
    const std::function<StatusOr<std::string>(const std::string&)>& readFile, std::ostream& out,
    std::ostream& err) {
  HostlistShown shown;
  std::string text = argument;
  if (!text.empty() && text[0] == '/') {
    StatusOr<std::string> contents = readFile(text);
    if (!contents.isOk()) {
      err << "Can not open " << text << "\n";
      shown.failed = true;
      return shown;
    }
    text = hostFileToList(*contents);
  }
  std::optional<Hostlist> list = parseHostlist(text, shown, err);
  if (!list) {
    if (!shown.fatal) err << "Invalid hostlist: " << text << "\n";
    shown.failed = true;
    return shown;
  }
  if (sorted) list->sort();
  out << list->ranged() << "\n";
  return shown;
}

}  // namespace

bool scontrolKeywordMatches(std::string_view tag, std::string_view name, std::size_t n) {
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

ShowOperand splitShowOperand(const std::string& tag, const std::string* next) {
  ShowOperand operand;
  operand.tagLength = tag.size();
  if (const std::size_t equals = tag.find('='); equals != std::string::npos) {
    operand.tagLength = equals;
    operand.value = tag.substr(equals + 1);
  } else if (next != nullptr) {
    operand.value = *next;
  }
  return operand;
}

std::optional<HostlistEntity> hostlistEntity(std::string_view tag, std::size_t tagLength) {
  struct Entry {
    std::string_view name;
    std::size_t minLength;
    HostlistEntity entity;
  };
  // In scontrol's order (the first match wins), with its minimum lengths.
  static constexpr std::array<Entry, 3> kEntities = {{
      {"hostnames", 5, HostlistEntity::kHostnames},
      {"hostlist", 5, HostlistEntity::kHostlist},
      {"hostlistsorted", 9, HostlistEntity::kHostlistSorted},
  }};
  for (const Entry& entry : kEntities) {
    if (scontrolKeywordMatches(tag, entry.name, std::max(tagLength, entry.minLength))) {
      return entry.entity;
    }
  }
  return std::nullopt;
}

HostlistShown showHostlistEntity(
    HostlistEntity entity, const std::optional<std::string>& value,
    const std::function<std::optional<std::string>(std::string_view)>& getenv,
    const std::function<StatusOr<std::string>(const std::string&)>& readFile, std::ostream& out,
    std::ostream& err) {
  if (entity == HostlistEntity::kHostnames) {
    return printHosts(value ? value : getenv("SLURM_NODELIST"), out, err);
  }
  if (!value) {
    err << "invalid encode argument\n";
    return {.failed = true};
  }
  return encodeHostlist(*value, entity == HostlistEntity::kHostlistSorted, readFile, out, err);
}

}  // namespace kubeslurm::slurm
