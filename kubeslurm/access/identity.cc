#include "kubeslurm/access/identity.h"

namespace kubeslurm::access {

std::string slurmUserName(std::string_view username) {
  constexpr std::string_view kServiceAccount = "system:serviceaccount:";
  std::string_view name = username;
  if (name.starts_with(kServiceAccount)) {
    name.remove_prefix(kServiceAccount.size());
    const std::size_t colon = name.find(':');
    if (colon != std::string_view::npos) name.remove_prefix(colon + 1);
  } else if (const std::size_t colon = name.rfind(':'); colon != std::string_view::npos) {
    name.remove_prefix(colon + 1);
  }
  // An OIDC subject without a username claim: "<issuer>#<sub>".
  if (const std::size_t hash = name.rfind('#'); hash != std::string_view::npos) {
    name.remove_prefix(hash + 1);
  }
  if (const std::size_t at = name.find('@'); at != std::string_view::npos) {
    name = name.substr(0, at);
  }
  std::string out;
  for (const char c : name.substr(0, 64)) {
    const bool posix = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    out.push_back(posix ? c : '_');
  }
  return out.empty() ? std::string("nobody") : out;
}

}  // namespace kubeslurm::access
