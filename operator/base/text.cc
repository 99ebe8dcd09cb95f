#include "operator/base/text.h"

namespace kubeslurm {

std::string quoteForDiagnostic(std::string_view text, std::size_t maxShown) {
  std::string shown(text.substr(0, maxShown));
  for (char& c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) c = '?';
  }
  if (text.size() > maxShown) shown += "...";
  return "\"" + shown + "\"";
}

}  // namespace kubeslurm
