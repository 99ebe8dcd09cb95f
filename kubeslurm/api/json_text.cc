#include "kubeslurm/api/json_text.h"

#include <string>

namespace kubeslurm::api {

StatusOr<nlohmann::json> parseJson(std::string_view text, const JsonLimits& limits) {
  using Json = nlohmann::json;
  if (text.size() > limits.maxBytes) {
    return Status(StatusCode::kResourceExhausted,
                  "more than " + std::to_string(limits.maxBytes) + " bytes of JSON");
  }
  bool tooDeep = false;
  const Json::parser_callback_t depthGuard = [&](int depth, Json::parse_event_t /*event*/,
                                                 Json& /*parsed*/) {
    // nlohmann counts the outermost container as depth 0.
    if (static_cast<std::size_t>(depth) >= limits.maxDepth) tooDeep = true;
    return !tooDeep;
  };
  Json parsed = Json::parse(text.begin(), text.end(), depthGuard, /*allow_exceptions=*/false);
  if (tooDeep) {
    return Status(StatusCode::kResourceExhausted,
                  "JSON nested deeper than " + std::to_string(limits.maxDepth) + " levels");
  }
  if (parsed.is_discarded()) return invalidArgument("not JSON");
  return parsed;
}

}  // namespace kubeslurm::api
