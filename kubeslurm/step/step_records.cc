#include "kubeslurm/step/step_records.h"

#include <limits>

#include <nlohmann/json.hpp>

namespace kubeslurm::step {

namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxSteps = 4096;
constexpr std::size_t kMaxText = 1024;

Json encodeOne(const StepRecord& r) {
  return {{"id", r.stepId},     {"name", r.name},     {"nodes", r.nodelist},  {"nnodes", r.nnodes},
          {"ntasks", r.ntasks}, {"cpus", r.cpus},     {"start", r.startTime}, {"end", r.endTime},
          {"exit", r.exitCode}, {"signal", r.signal}, {"state", r.state}};
}

template <typename T>
bool readInteger(const Json& object, const char* key, T& out) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return false;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return false;
    out = static_cast<T>(value);
    return true;
  }
  const auto value = it->get<std::int64_t>();
  if (value < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
      (value > 0 && static_cast<std::uint64_t>(value) >
                        static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
    return false;
  }
  out = static_cast<T>(value);
  return true;
}

bool readText(const Json& object, const char* key, std::string& out) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return false;
  out = it->get<std::string>();
  return out.size() <= kMaxText;
}

}  // namespace

std::string encodeStepRecords(const std::vector<StepRecord>& steps, std::size_t maxBytes) {
  Json json = {{"steps", Json::array()}, {"dropped", 0}};
  std::size_t kept = 0;
  for (const StepRecord& step : steps) {
    Json next = json;
    next["steps"].push_back(encodeOne(step));
    next["dropped"] = steps.size() - kept - 1;
    if (next.dump().size() > maxBytes) break;
    json = std::move(next);
    ++kept;
  }
  json["dropped"] = steps.size() - kept;
  return json.dump();
}

StatusOr<StepRecords> decodeStepRecords(std::string_view text) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("steps") || !json["steps"].is_array()) {
    return invalidArgument("step records: not an object with a steps array");
  }
  StepRecords records;
  if (json.contains("dropped") && !readInteger(json, "dropped", records.dropped)) {
    return invalidArgument("step records: dropped is not a count");
  }
  if (json["steps"].size() > kMaxSteps) return invalidArgument("step records: too many steps");
  for (const Json& item : json["steps"]) {
    if (!item.is_object()) return invalidArgument("step records: a step is not an object");
    StepRecord r;
    const bool ok = readInteger(item, "id", r.stepId) && readText(item, "name", r.name) &&
                    readText(item, "nodes", r.nodelist) && readInteger(item, "nnodes", r.nnodes) &&
                    readInteger(item, "ntasks", r.ntasks) && readInteger(item, "cpus", r.cpus) &&
                    readInteger(item, "start", r.startTime) &&
                    readInteger(item, "end", r.endTime) && readInteger(item, "exit", r.exitCode) &&
                    readInteger(item, "signal", r.signal) && readText(item, "state", r.state);
    if (!ok) return invalidArgument("step records: a step lacks a field or has a wrong type");
    if (r.state != "COMPLETED" && r.state != "FAILED" && r.state != "CANCELLED") {
      return invalidArgument("step records: unknown state " + r.state);
    }
    records.steps.push_back(std::move(r));
  }
  return records;
}

}  // namespace kubeslurm::step
