#include "controllers/step_tokens.h"

#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace kubeslurm::controllers {

namespace {
constexpr std::size_t kMinKeyBytes = 32;
}  // namespace

StatusOr<StepTokens> StepTokens::fromKey(std::string key) {
  if (key.size() < kMinKeyBytes) {
    return invalidArgument("the step-token key has " + std::to_string(key.size()) +
                           " bytes; at least " + std::to_string(kMinKeyBytes) + " are needed");
  }
  return StepTokens(std::move(key));
}

StatusOr<StepTokens> StepTokens::fromKeyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot read the step-token key file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string key = std::move(text).str();
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  auto tokens = fromKey(std::move(key));
  if (!tokens.isOk()) return invalidArgument(path + ": " + tokens.status().message());
  return tokens;
}

StatusOr<StepTokens> StepTokens::randomKey() {
  std::string key(kMinKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    return internalError("no random bytes for the step-token key (OpenSSL RAND_bytes)");
  }
  return StepTokens(std::move(key));
}

std::string StepTokens::tokenFor(std::string_view namespaceName, std::string_view jobUid,
                                 std::uint32_t attempt) const {
  const std::string message =
      std::string(namespaceName) + "/" + std::string(jobUid) + "/" + std::to_string(attempt);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
       &length);
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string token;
  token.reserve(std::size_t{length} * 2);
  for (unsigned int i = 0; i < length; ++i) {
    token.push_back(kHex[digest[i] >> 4U]);
    token.push_back(kHex[digest[i] & 0x0FU]);
  }
  return token;
}

}  // namespace kubeslurm::controllers
