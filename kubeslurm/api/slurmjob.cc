#include "kubeslurm/api/slurmjob.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <memory>
#include <utility>

#include "kubeslurm/base/arithmetic.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::api {
namespace {

// Set once, before the threads that decode start; relaxed is enough for a value that then stays.
std::atomic<std::uint32_t> arrayTaskLimit{slurm::kMaxMaxArraySize};

// The API server's rule for a container's env names (validation.IsEnvVarName).
bool isEnvironmentName(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

using nlohmann::json;
using slurm::GresRequest;
using slurm::JobRequest;

constexpr std::size_t kMaxNameBase = 46;

const json* memberOf(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto& map = object.get_ref<const json::object_t&>();
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

std::string memberText(const json& object, const char* key) {
  const json* value = memberOf(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

// The metadata's task bookkeeping (ArrayTaskOwner): both labels, a decimal index, and a
// controller reference of kind SlurmJob named as the array label says.
std::optional<ArrayTaskOwner> arrayTaskOwner(const json& metadata) {
  const json* labels = memberOf(metadata, "labels");
  const json* array = labels == nullptr ? nullptr : memberOf(*labels, kArrayJobLabel.data());
  const json* task = labels == nullptr ? nullptr : memberOf(*labels, kArrayTaskLabel.data());
  if (array == nullptr || task == nullptr || !array->is_string() || !task->is_string()) {
    return std::nullopt;
  }
  const auto& name = array->get_ref<const std::string&>();
  const auto& index = task->get_ref<const std::string&>();
  std::uint32_t taskId = 0;
  const char* end = index.data() + index.size();
  const auto [ptr, ec] = std::from_chars(index.data(), end, taskId);
  if (name.empty() || index.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  const json* owners = memberOf(metadata, "ownerReferences");
  if (owners == nullptr || !owners->is_array()) return std::nullopt;
  for (const json& owner : *owners) {
    const json* controller = memberOf(owner, "controller");
    if (memberText(owner, "kind") != kSlurmJobKind || memberText(owner, "name") != name ||
        controller == nullptr || !controller->is_boolean() || !controller->get<bool>()) {
      continue;
    }
    return ArrayTaskOwner{name, memberText(owner, "uid"), taskId};
  }
  return std::nullopt;
}

json subObject(const json& object, const char* key) {
  const json* value = memberOf(object, key);
  return value != nullptr && value->is_object() ? *value : json::object();
}

// Sets a text member, or removes it when empty; leaves it alone when it already says `value`.
void putText(json& object, const char* key, const std::string& value) {
  const json* current = memberOf(object, key);
  const bool absent = current == nullptr || current->is_null();
  if ((absent && value.empty()) || (current != nullptr && current->is_string() &&
                                    current->get_ref<const std::string&>() == value)) {
    return;
  }
  if (value.empty()) {
    object.erase(key);
  } else {
    object[key] = value;
  }
}

// RFC 3339 in UTC, as Kubernetes writes times.
std::string formatRfc3339(slurm::EpochSeconds t) { return slurm::formatTimestamp(t, 0) + "Z"; }

std::optional<slurm::EpochSeconds> parseRfc3339(std::string_view text) {
  if (!text.ends_with('Z')) return std::nullopt;
  text.remove_suffix(1);
  StatusOr<slurm::EpochSeconds> t = slurm::parseTimestamp(text, 0);
  if (!t.isOk()) return std::nullopt;
  return *t;
}

std::string formatLimit(const slurm::TimeLimit& limit) {
  const std::optional<std::int64_t> minutes = slurm::timeLimitMinutes(limit);
  if (!minutes) return slurm::formatPaddedDuration(limit);
  return slurm::formatPaddedDuration(slurm::TimeLimit{*minutes * 60});
}

// A --gpus* list: a plain count is an integer, anything typed or longer a string.
json gpuValue(const std::vector<GresRequest>& gpus) {
  if (gpus.size() == 1 && gpus[0].type.empty()) return gpus[0].count;
  return slurm::formatGpuList(gpus);
}

void encodeResources(const JobRequest& r, json& spec) {
  if (r.nodes) {
    spec["nodes"] = r.nodes->min;
    if (r.nodes->max) spec["maxNodes"] = *r.nodes->max;
  }
  if (r.ntasks) spec["ntasks"] = *r.ntasks;
  if (r.ntasksPerNode) spec["ntasksPerNode"] = *r.ntasksPerNode;
  if (r.cpusPerTask) spec["cpusPerTask"] = *r.cpusPerTask;
  if (r.minCpusPerNode) spec["minCpusPerNode"] = *r.minCpusPerNode;
  if (r.contiguous) spec["contiguous"] = true;
  if (!r.gres.empty()) spec["gres"] = slurm::formatGresList(r.gres);
  if (!r.gpus.empty()) spec["gpus"] = gpuValue(r.gpus);
  if (!r.gpusPerNode.empty()) spec["gpusPerNode"] = gpuValue(r.gpusPerNode);
  if (!r.gpusPerTask.empty()) spec["gpusPerTask"] = gpuValue(r.gpusPerTask);
  if (r.memPerNodeMb) spec["memory"] = slurm::formatMegabytes(*r.memPerNodeMb);
  if (r.memPerCpuMb) spec["memoryPerCpu"] = slurm::formatMegabytes(*r.memPerCpuMb);
  if (r.memPerGpuMb) spec["memoryPerGpu"] = slurm::formatMegabytes(*r.memPerGpuMb);
  switch (r.shared) {
    case slurm::SharedMode::kExclusive:
      spec["exclusive"] = true;
      break;
    case slurm::SharedMode::kExclusiveUser:
      spec["exclusiveMode"] = "user";
      break;
    case slurm::SharedMode::kExclusiveMcs:
      spec["exclusiveMode"] = "mcs";
      break;
    case slurm::SharedMode::kOversubscribe:
      spec["oversubscribe"] = true;
      break;
    case slurm::SharedMode::kDefault:
      break;
  }
  if (!r.nodeList.empty()) spec["nodeList"] = r.nodeList;
  if (!r.excludeList.empty()) spec["exclude"] = r.excludeList;
  if (!r.constraint.empty()) spec["constraint"] = r.constraint;
  if (r.switches) {
    json switches = {{"count", *r.switches}};
    if (r.switchesWaitSeconds) {
      switches["maxWait"] = slurm::formatPaddedDuration(slurm::TimeLimit{*r.switchesWaitSeconds});
    }
    spec["switches"] = std::move(switches);
  }
}

void encodeScheduling(const JobRequest& r, json& spec) {
  auto setText = [&](const char* key, const std::string& value) {
    if (!value.empty()) spec[key] = value;
  };
  setText("partition", r.partition);
  setText("account", r.account);
  setText("qos", r.qos);
  if (r.timeLimit) spec["timeLimit"] = formatLimit(*r.timeLimit);
  if (r.timeMin) spec["timeMin"] = formatLimit(*r.timeMin);
  setText("array", r.arrayText);
  if (r.dependency) setText("dependency", slurm::formatDependency(*r.dependency));
  if (r.requeue) spec["requeue"] = *r.requeue;
  if (r.nice) spec["nice"] = *r.nice;
  if (r.priority) spec["priority"] = *r.priority;
  if (r.begin) spec["begin"] = formatRfc3339(*r.begin);
  if (r.deadline) spec["deadline"] = formatRfc3339(*r.deadline);
  if (r.signal) spec["signal"] = slurm::formatSignal(*r.signal);
  if (r.hold) spec["hold"] = true;
  if (r.interactive) spec["interactive"] = true;
  setText("comment", r.comment);
  if (r.mailType) spec["mailType"] = slurm::formatMailType(*r.mailType);
  setText("mailUser", r.mailUser);
}

void encodeFiles(const JobRequest& r, json& spec) {
  auto setText = [&](const char* key, const std::string& value) {
    if (!value.empty()) spec[key] = value;
  };
  setText("output", r.output);
  setText("error", r.error);
  setText("input", r.input);
  setText("workDir", r.workDir);
  setText("export", r.exportEnv);
  if (!r.environment.empty()) spec["environment"] = r.environment;
  if (r.openMode == slurm::OpenMode::kAppend) spec["openMode"] = "append";
  if (r.openMode == slurm::OpenMode::kTruncate) spec["openMode"] = "truncate";
  const slurm::ContainerSpec& c = r.container;
  if (c != slurm::ContainerSpec{}) {
    json container = json::object();
    if (!c.image.empty()) container["image"] = c.image;
    if (!c.mounts.empty()) container["mounts"] = c.mounts;
    if (!c.workdir.empty()) container["workdir"] = c.workdir;
    if (!c.env.empty()) container["env"] = c.env;
    if (!c.name.empty()) container["name"] = c.name;
    spec["container"] = std::move(container);
  }
}

json encodeStatus(const SlurmJobStatus& s) {
  json status = json::object();
  auto setText = [&](const char* key, const std::string& value) {
    if (!value.empty()) status[key] = value;
  };
  auto setTime = [&](const char* key, const std::optional<slurm::EpochSeconds>& t) {
    if (t) status[key] = formatRfc3339(*t);
  };
  if (s.jobId) status["jobId"] = *s.jobId;
  setText("state", s.state);
  setText("stateCode", s.stateCode);
  setText("reason", s.reason);
  setText("reasonDetail", s.reasonDetail);
  setText("nodeList", s.nodeList);
  setText("partition", s.partition);
  setTime("submitTime", s.submitTime);
  setTime("startTime", s.startTime);
  setTime("endTime", s.endTime);
  setTime("estimatedStart", s.estimatedStart);
  setText("exitCode", s.exitCode);
  if (s.restarts) status["restarts"] = *s.restarts;
  if (s.arrayJobId) status["arrayJobId"] = *s.arrayJobId;
  if (s.arrayTaskId) status["arrayTaskId"] = *s.arrayTaskId;
  if (s.priority) status["priority"] = *s.priority;
  if (s.requeuesHandled) status["requeuesHandled"] = *s.requeuesHandled;
  if (s.startFailures) status["startFailures"] = *s.startFailures;
  setTime("retryStartAfter", s.retryStartAfter);
  if (!s.steps.empty()) {
    json steps = json::array();
    for (const JobStepStatus& step : s.steps) {
      json item = {{"stepId", step.stepId},     {"name", step.name},   {"nodeList", step.nodeList},
                   {"nodes", step.nodes},       {"tasks", step.tasks}, {"cpus", step.cpus},
                   {"exitCode", step.exitCode}, {"state", step.state}};
      if (step.startTime) item["startTime"] = formatRfc3339(*step.startTime);
      if (step.endTime) item["endTime"] = formatRfc3339(*step.endTime);
      steps.push_back(std::move(item));
    }
    status["steps"] = std::move(steps);
  }
  if (s.stepsDropped) status["stepsDropped"] = *s.stepsDropped;
  return status;
}

// ---------------------------------------------------------------------------------------------
// Decoding. Each reader checks one field and names it in its error.

std::string arrayTextProblem(std::string_view arrayText) {
  return "invalid job array specification \"" + std::string(arrayText) + "\"";
}

// The problem quotes what the tenant wrote: cut to a few hundred bytes, so that a megabyte of it
// does not travel on in a condition, a webhook answer or a log line.
std::string fieldProblem(std::string_view key, const std::string& problem) {
  constexpr std::size_t kMaxProblem = 300;
  std::string shown =
      problem.size() > kMaxProblem ? problem.substr(0, kMaxProblem) + "..." : problem;
  return "spec." + std::string(key) + ": " + shown;
}

class SpecReader {
 public:
  explicit SpecReader(const json& spec) : spec_(spec) {}

  const Status& status() const { return status_; }

  const json* field(const char* key) const {
    auto it = spec_.find(key);
    return it == spec_.end() || it->is_null() ? nullptr : &*it;
  }

  void fail(const char* key, const std::string& problem) {
    if (!status_.isOk()) return;
    status_ = invalidArgument(fieldProblem(key, problem));
  }

  std::string text(const char* key) {
    const json* value = field(key);
    if (value == nullptr) return {};
    if (!value->is_string()) {
      fail(key, "must be a string");
      return {};
    }
    return value->get<std::string>();
  }

  std::optional<bool> boolean(const char* key) {
    const json* value = field(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean()) {
      fail(key, "must be a boolean");
      return std::nullopt;
    }
    return value->get<bool>();
  }

  std::optional<std::int64_t> integer(const char* key, std::int64_t min, std::int64_t max) {
    const json* value = field(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_number_integer()) {
      fail(key, "must be an integer");
      return std::nullopt;
    }
    if (value->is_number_unsigned() &&
        value->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(key, "out of range");
      return std::nullopt;
    }
    const auto n = value->get<std::int64_t>();
    if (n < min || n > max) {
      fail(key, "out of range");
      return std::nullopt;
    }
    return n;
  }

  std::optional<std::uint32_t> count(const char* key) {
    const std::optional<std::int64_t> n = integer(key, 1, INT32_MAX);
    if (!n) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
  }

  std::vector<std::string> strings(const json& parent, const char* key, const char* path) {
    std::vector<std::string> result;
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return result;
    if (!it->is_array()) {
      fail(path, "must be a list of strings");
      return result;
    }
    for (const json& item : *it) {
      if (!item.is_string()) {
        fail(path, "must be a list of strings");
        return {};
      }
      result.push_back(item.get<std::string>());
    }
    return result;
  }

  std::vector<GresRequest> gpus(const char* key, bool gresSyntax) {
    const json* value = field(key);
    if (value == nullptr) return {};
    std::string text;
    if (value->is_number_unsigned() || value->is_number_integer()) {
      text = std::to_string(value->get<std::int64_t>());
    } else if (value->is_string()) {
      text = value->get<std::string>();
    } else {
      fail(key, "must be a count or a string");
      return {};
    }
    auto parsed = slurm::parseGresList(text, !gresSyntax);
    if (!parsed) {
      fail(key, "invalid GPU request \"" + text + "\"");
      return {};
    }
    return *parsed;
  }

  std::optional<std::uint64_t> megabytes(const char* key) {
    const json* value = field(key);
    if (value == nullptr) return std::nullopt;
    if (value->is_number_integer() && value->get<std::int64_t>() >= 0) {
      return value->get<std::uint64_t>();
    }
    if (value->is_string()) {
      if (auto mb = slurm::parseMegabytes(value->get<std::string>())) return mb;
    }
    fail(key, "invalid memory size");
    return std::nullopt;
  }

  std::optional<slurm::TimeLimit> limit(const char* key) {
    const std::string value = text(key);
    if (value.empty()) return std::nullopt;
    StatusOr<slurm::TimeLimit> parsed = slurm::parseTimeLimit(value);
    if (!parsed.isOk()) {
      fail(key, "invalid time limit \"" + value + "\"");
      return std::nullopt;
    }
    const std::optional<std::int64_t> minutes = slurm::timeLimitMinutes(*parsed);
    if (!minutes) return slurm::TimeLimit{};
    return slurm::TimeLimit{*minutes * 60};
  }

  std::optional<slurm::EpochSeconds> time(const char* key) {
    const std::string value = text(key);
    if (value.empty()) return std::nullopt;
    std::optional<slurm::EpochSeconds> t = parseRfc3339(value);
    if (!t) fail(key, "must be an RFC 3339 time in UTC (2026-11-21T04:35:12Z)");
    return t;
  }

 private:
  const json& spec_;
  Status status_;
};

void decodeResources(SpecReader& in, JobRequest& r) {
  if (const std::optional<std::int64_t> nodes = in.integer("nodes", 0, INT32_MAX)) {
    r.nodes = slurm::NodeRange{static_cast<std::uint32_t>(*nodes), in.count("maxNodes")};
  }
  r.ntasks = in.count("ntasks");
  r.ntasksPerNode = in.count("ntasksPerNode");
  r.cpusPerTask = in.count("cpusPerTask");
  r.minCpusPerNode = in.count("minCpusPerNode");
  r.contiguous = in.boolean("contiguous").value_or(false);
  r.gres = in.gpus("gres", true);
  r.gpus = in.gpus("gpus", false);
  r.gpusPerNode = in.gpus("gpusPerNode", false);
  r.gpusPerTask = in.gpus("gpusPerTask", false);
  r.memPerNodeMb = in.megabytes("memory");
  r.memPerCpuMb = in.megabytes("memoryPerCpu");
  r.memPerGpuMb = in.megabytes("memoryPerGpu");
  if (in.boolean("exclusive").value_or(false)) r.shared = slurm::SharedMode::kExclusive;
  const std::string mode = in.text("exclusiveMode");
  if (mode == "user") {
    r.shared = slurm::SharedMode::kExclusiveUser;
  } else if (mode == "mcs") {
    r.shared = slurm::SharedMode::kExclusiveMcs;
  } else if (!mode.empty()) {
    in.fail("exclusiveMode", "must be user or mcs");
  }
  if (in.boolean("oversubscribe").value_or(false)) r.shared = slurm::SharedMode::kOversubscribe;
  r.nodeList = in.text("nodeList");
  r.excludeList = in.text("exclude");
  r.constraint = in.text("constraint");
  if (const json* switches = in.field("switches")) {
    SpecReader sub(*switches);
    r.switches = sub.count("count");
    if (const std::optional<slurm::TimeLimit> wait = sub.limit("maxWait")) {
      r.switchesWaitSeconds = wait->seconds;
    }
    if (!sub.status().isOk() || !r.switches) in.fail("switches", "needs a positive count");
  }
}

void decodeScheduling(SpecReader& in, JobRequest& r) {
  r.jobName = in.text("jobName");
  r.partition = in.text("partition");
  r.account = in.text("account");
  r.qos = in.text("qos");
  r.timeLimit = in.limit("timeLimit");
  r.timeMin = in.limit("timeMin");
  r.arrayText = in.text("array");
  // MaxArraySize is the cluster's (the operator's --max-array-size, which the webhook and the
  // reconciler apply): an object reads as written up to the largest slurm.conf allows, with no
  // more tasks than the process's limit (setDecodedArrayTaskLimit).
  if (!r.arrayText.empty()) {
    StatusOr<slurm::ArraySpec> array =
        slurm::parseArraySpec(r.arrayText, slurm::kMaxMaxArraySize, decodedArrayTaskLimit());
    if (array.isOk()) {
      r.array = std::move(*array);
    } else {
      in.fail("array", arrayTextProblem(r.arrayText));
    }
  }
  if (const std::string text = in.text("dependency"); !text.empty()) {
    StatusOr<slurm::DependencySpec> dependency =
        slurm::parseDependency(text, slurm::kMaxMaxArraySize);
    if (dependency.isOk()) {
      r.dependency = std::move(*dependency);
    } else {
      in.fail("dependency", "invalid dependency \"" + text + "\"");
    }
  }
  r.requeue = in.boolean("requeue");
  if (auto nice = in.integer("nice", -2147483645, 2147483645)) {
    r.nice = static_cast<std::int32_t>(*nice);
  }
  if (auto priority = in.integer("priority", 0, slurm::kPriorityTop)) {
    r.priority = static_cast<std::uint32_t>(*priority);
  }
  r.begin = in.time("begin");
  r.deadline = in.time("deadline");
  if (const std::string text = in.text("signal"); !text.empty()) {
    r.signal = slurm::parseSignal(text);
    if (!r.signal) in.fail("signal", "invalid signal \"" + text + "\"");
  }
  r.hold = in.boolean("hold").value_or(false);
  r.interactive = in.boolean("interactive").value_or(false);
  r.comment = in.text("comment");
  if (const std::string text = in.text("mailType"); !text.empty()) {
    r.mailType = slurm::parseMailType(text);
    if (!r.mailType) in.fail("mailType", "invalid mail type \"" + text + "\"");
  }
  r.mailUser = in.text("mailUser");
}

void decodeFiles(SpecReader& in, JobRequest& r) {
  r.output = in.text("output");
  r.error = in.text("error");
  r.input = in.text("input");
  r.workDir = in.text("workDir");
  r.exportEnv = in.text("export");
  if (const json* environment = in.field("environment")) {
    if (!environment->is_object()) {
      in.fail("environment", "must be a map of variable names to strings");
    } else {
      for (const auto& [name, value] : environment->items()) {
        if (!value.is_string()) {
          in.fail("environment", "the value of " + name + " must be a string");
          break;
        }
        if (!isEnvironmentName(name)) {
          in.fail("environment", "\"" + name + "\" is not a variable name the API server accepts");
          break;
        }
        r.environment[name] = value.get<std::string>();
      }
    }
  }
  const std::string openMode = in.text("openMode");
  if (openMode == "append") {
    r.openMode = slurm::OpenMode::kAppend;
  } else if (openMode == "truncate") {
    r.openMode = slurm::OpenMode::kTruncate;
  } else if (!openMode.empty()) {
    in.fail("openMode", "must be append or truncate");
  }
  if (const json* container = in.field("container")) {
    SpecReader sub(*container);
    r.container.image = sub.text("image");
    r.container.mounts = sub.strings(*container, "mounts", "container.mounts");
    r.container.workdir = sub.text("workdir");
    r.container.env = sub.strings(*container, "env", "container.env");
    r.container.name = sub.text("name");
    if (!sub.status().isOk()) in.fail("container", sub.status().message());
  }
}

std::optional<slurm::EpochSeconds> statusTime(const json& status, const char* key) {
  auto it = status.find(key);
  if (it == status.end() || !it->is_string()) return std::nullopt;
  return parseRfc3339(it->get<std::string>());
}

// Status members are read leniently: the operator wrote them, a wrong type reads as unset.
std::string statusText(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::int64_t> statusInteger(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

SlurmJobStatus decodeStatus(const json& status) {
  SlurmJobStatus s;
  auto text = [&](const char* key) { return statusText(status, key); };
  auto integer = [&](const char* key) { return statusInteger(status, key); };
  s.jobId = integer("jobId");
  s.state = text("state");
  s.stateCode = text("stateCode");
  s.reason = text("reason");
  s.reasonDetail = text("reasonDetail");
  s.nodeList = text("nodeList");
  s.partition = text("partition");
  s.submitTime = statusTime(status, "submitTime");
  s.startTime = statusTime(status, "startTime");
  s.endTime = statusTime(status, "endTime");
  s.estimatedStart = statusTime(status, "estimatedStart");
  s.exitCode = text("exitCode");
  s.restarts = integer("restarts");
  s.arrayJobId = integer("arrayJobId");
  s.arrayTaskId = integer("arrayTaskId");
  s.priority = integer("priority");
  s.requeuesHandled = integer("requeuesHandled");
  s.startFailures = integer("startFailures");
  s.retryStartAfter = statusTime(status, "retryStartAfter");
  s.stepsDropped = integer("stepsDropped");
  if (const auto steps = status.find("steps"); steps != status.end() && steps->is_array()) {
    for (const json& item : *steps) {
      if (!item.is_object()) continue;
      JobStepStatus step;
      auto itemText = [&](const char* key) { return statusText(item, key); };
      auto itemInteger = [&](const char* key) { return statusInteger(item, key).value_or(0); };
      step.stepId = itemInteger("stepId");
      step.name = itemText("name");
      step.nodeList = itemText("nodeList");
      step.nodes = itemInteger("nodes");
      step.tasks = itemInteger("tasks");
      step.cpus = itemInteger("cpus");
      step.startTime = statusTime(item, "startTime");
      step.endTime = statusTime(item, "endTime");
      step.exitCode = itemText("exitCode");
      step.state = itemText("state");
      s.steps.push_back(std::move(step));
    }
  }
  return s;
}

// The spec the fields alone give, as the codec has always written it.
json freshSpec(const SlurmJobObject& job) {
  json spec = json::object();
  if (!job.request.jobName.empty()) spec["jobName"] = job.request.jobName;
  if (!job.user.empty()) spec["user"] = job.user;
  if (job.submitter) {
    json submitter = {{"username", job.submitter->username}};
    if (!job.submitter->uid.empty()) submitter["uid"] = job.submitter->uid;
    if (!job.submitter->groups.empty()) submitter["groups"] = job.submitter->groups;
    spec["submitter"] = std::move(submitter);
  }
  encodeScheduling(job.request, spec);
  encodeResources(job.request, spec);
  encodeFiles(job.request, spec);
  // Absent rather than "": the API server refuses an empty string where the schema wants one.
  if (!job.script.empty()) spec["script"] = job.script;
  if (!job.scriptPath.empty()) spec["scriptPath"] = job.scriptPath;
  if (!job.scriptArgs.empty()) spec["scriptArgs"] = job.scriptArgs;
  if (job.requeueRequests) spec["requeueRequests"] = *job.requeueRequests;
  return spec;
}

Status decodeSpec(const json& spec, SlurmJobObject& job) {
  SpecReader in(spec);
  job.user = in.text("user");
  if (const json* submitter = in.field("submitter")) {
    if (!submitter->is_object()) {
      in.fail("submitter", "must be an object");
    } else {
      SpecReader who(*submitter);
      Submitter s;
      s.username = who.text("username");
      s.uid = who.text("uid");
      s.groups = who.strings(*submitter, "groups", "submitter.groups");
      if (!who.status().isOk())
        return invalidArgument("spec.submitter." + who.status().message().substr(5));
      job.submitter = std::move(s);
    }
  }
  decodeScheduling(in, job.request);
  decodeResources(in, job.request);
  decodeFiles(in, job.request);
  job.script = in.text("script");
  job.scriptPath = in.text("scriptPath");
  job.scriptArgs = in.strings(spec, "scriptArgs", "scriptArgs");
  job.requeueRequests = in.integer("requeueRequests", 0, INT64_MAX);
  return in.status();
}

// Every spec and status member the codec reads or writes; the rest of the object is the user's
// (or another controller's) and passes through untouched. A cached job holds only the rest as
// JSON (dropModelledFields), so a member named here must be one the job's fields carry:
// spec.cancel, which the controllers read from `raw` (cancelRequested), is not.
constexpr std::array<const char*, 54> kSpecKeys = {
    "jobName",      "user",           "submitter",   "partition",     "account",
    "qos",          "timeLimit",      "timeMin",     "array",         "dependency",
    "requeue",      "nice",           "priority",    "begin",         "deadline",
    "signal",       "hold",           "comment",     "mailType",      "mailUser",
    "nodes",        "maxNodes",       "ntasks",      "ntasksPerNode", "cpusPerTask",
    "gres",         "gpus",           "gpusPerNode", "gpusPerTask",   "memory",
    "memoryPerCpu", "memoryPerGpu",   "exclusive",   "exclusiveMode", "oversubscribe",
    "nodeList",     "exclude",        "constraint",  "switches",      "output",
    "error",        "input",          "workDir",     "export",        "openMode",
    "container",    "script",         "scriptPath",  "scriptArgs",    "requeueRequests",
    "environment",  "minCpusPerNode", "interactive", "contiguous"};
constexpr std::array<const char*, 21> kStatusKeys = {
    "jobId",           "state",      "stateCode",   "reason",   "reasonDetail",    "nodeList",
    "partition",       "submitTime", "startTime",   "endTime",  "estimatedStart",  "exitCode",
    "restarts",        "arrayJobId", "arrayTaskId", "priority", "requeuesHandled", "startFailures",
    "retryStartAfter", "steps",      "stepsDropped"};

// Writes `fresh`'s members named in `keys` over `base` (a key `fresh` lacks is removed), then
// puts back each of `base`'s own members whose return leaves the decoded value unchanged, so
// that text a user wrote ("60", "4096") survives an update that did not change its meaning.
template <std::size_t N, typename SameDecoded>
json mergeModelled(const json& base, const json& fresh, const std::array<const char*, N>& keys,
                   SameDecoded sameDecoded) {
  json merged = base;
  std::vector<const char*> changed;
  for (const char* key : keys) {
    const json* before = memberOf(base, key);
    const json* after = memberOf(fresh, key);
    if (after != nullptr) {
      if (before != nullptr && *before == *after) continue;
      merged[key] = *after;
    } else {
      if (before == nullptr) continue;
      merged.erase(key);
    }
    if (before != nullptr) changed.push_back(key);
  }
  for (const char* key : changed) {
    json candidate = merged;
    candidate[key] = *memberOf(base, key);
    if (sameDecoded(candidate, merged)) merged = std::move(candidate);
  }
  return merged;
}

}  // namespace

std::string generateNameBase(std::string_view jobName) {
  std::string base;
  for (const char c : jobName) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9');
    if (keep) {
      base += lower;
    } else if (!base.empty() && base.back() != '-') {
      base += '-';
    }
  }
  while (!base.empty() && base.back() == '-') base.pop_back();
  if (base.empty()) return "job";
  if (base[0] < 'a' || base[0] > 'z') base = "job-" + base;
  if (base.size() > kMaxNameBase) base.resize(kMaxNameBase);
  while (base.back() == '-') base.pop_back();
  return base;
}

SlurmJobObject slurmJobFromInvocation(const slurm::SbatchInvocation& invocation,
                                      std::string namespaceName, std::string user) {
  SlurmJobObject job;
  job.generateName = generateNameBase(invocation.request.jobName) + "-";
  job.namespaceName = std::move(namespaceName);
  job.user = std::move(user);
  job.request = invocation.request;
  job.script = invocation.script;
  job.scriptPath = invocation.scriptPath;
  job.scriptArgs = invocation.scriptArgs;
  JobRequest& r = job.request;
  if (r.output.empty() && !r.workDir.empty()) {
    r.output = r.workDir + (r.arrayText.empty() ? "/slurm-%j.out" : "/slurm-%A_%a.out");
  }
  // Client-side flags are not part of the job.
  r.parsable = false;
  r.testOnly = false;
  r.wrap.clear();
  r.ignoredOptions.clear();
  return job;
}

bool operator==(const SlurmJobObject& a, const SlurmJobObject& b) {
  return a.name == b.name && a.generateName == b.generateName &&
         a.namespaceName == b.namespaceName && a.user == b.user && a.submitter == b.submitter &&
         a.request == b.request && a.script == b.script && a.scriptPath == b.scriptPath &&
         a.scriptArgs == b.scriptArgs && a.requeueRequests == b.requeueRequests &&
         a.status == b.status;
}

nlohmann::json encodeSlurmJob(const SlurmJobObject& job) {
  json object = job.raw->is_object() ? *job.raw : json::object();
  object["apiVersion"] = kSlurmJobApiVersion;
  object["kind"] = kSlurmJobKind;

  json metadata = subObject(object, "metadata");
  putText(metadata, "name", job.name);
  // A named object needs no generateName; one the server named keeps the one it had.
  const bool keepGenerateName = job.name.empty() || metadata.contains("generateName");
  putText(metadata, "generateName", keepGenerateName ? job.generateName : std::string());
  putText(metadata, "namespace", job.namespaceName);
  if (!metadata.empty() || object.contains("metadata")) object["metadata"] = std::move(metadata);

  object["spec"] = mergeModelled(
      subObject(object, "spec"), freshSpec(job), kSpecKeys, [](const json& x, const json& y) {
        SlurmJobObject a;
        SlurmJobObject b;
        return decodeSpec(x, a).isOk() && decodeSpec(y, b).isOk() && a == b;
      });
  if (job.status) {
    object["status"] = mergeModelled(
        subObject(object, "status"), encodeStatus(*job.status), kStatusKeys,
        [](const json& x, const json& y) { return decodeStatus(x) == decodeStatus(y); });
  } else {
    object.erase("status");
  }
  return object;
}

std::string invalidArrayProblem(std::string_view arrayText) {
  return fieldProblem("array", arrayTextProblem(arrayText));
}

void setDecodedArrayTaskLimit(std::uint32_t maxTasks) {
  arrayTaskLimit.store(std::clamp<std::uint32_t>(maxTasks, 1, slurm::kMaxMaxArraySize),
                       std::memory_order_relaxed);
}

std::uint32_t decodedArrayTaskLimit() { return arrayTaskLimit.load(std::memory_order_relaxed); }

StatusOr<SlurmJobObject> decodeSlurmJobFields(const nlohmann::json& object) {
  if (!object.is_object()) return invalidArgument("a SlurmJob must be an object");
  if (memberText(object, "apiVersion") != kSlurmJobApiVersion ||
      memberText(object, "kind") != kSlurmJobKind) {
    return invalidArgument("not a kubeslurm.io/v1alpha1 SlurmJob");
  }
  SlurmJobObject job;
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    SpecReader meta(*metadata);
    job.name = meta.text("name");
    job.generateName = meta.text("generateName");
    job.namespaceName = meta.text("namespace");
    if (!meta.status().isOk()) {
      return invalidArgument("metadata." + meta.status().message().substr(5));
    }
  }
  auto specIt = object.find("spec");
  if (specIt == object.end() || !specIt->is_object()) return invalidArgument("spec: missing");
  if (Status status = decodeSpec(*specIt, job); !status.isOk()) return status;
  if (auto metadata = object.find("metadata");
      job.request.array && metadata != object.end() && metadata->is_object()) {
    job.arrayTask = arrayTaskOwner(*metadata);
  }
  if (auto status = object.find("status"); status != object.end() && status->is_object()) {
    job.status = decodeStatus(*status);
  }
  return job;
}

StatusOr<SlurmJobObject> decodeSlurmJob(const nlohmann::json& object) {
  StatusOr<SlurmJobObject> job = decodeSlurmJobFields(object);
  if (job.isOk()) job->raw = object;
  return job;
}

StatusOr<SlurmJobObject> decodeSlurmJob(std::shared_ptr<const nlohmann::json> object) {
  if (!object) return invalidArgument("a SlurmJob must be an object");
  StatusOr<SlurmJobObject> job = decodeSlurmJobFields(*object);
  if (job.isOk()) job->raw = SharedJson(std::move(object));
  return job;
}

void dropModelledFields(nlohmann::json& object) {
  if (!object.is_object()) return;
  const auto drop = [&object](const char* part, const auto& keys) {
    const auto it = object.find(part);
    if (it == object.end() || !it->is_object()) return;
    for (const char* key : keys) it->erase(key);
    if (it->empty()) object.erase(it);
  };
  drop("spec", kSpecKeys);
  drop("status", kStatusKeys);
}

const nlohmann::json* specMember(const SlurmJobObject& job, std::string_view key) {
  // The maps' comparator is transparent, and reading them directly spares nlohmann's iterators
  // (which trip GCC's -Wnull-dereference).
  const auto member = [](const nlohmann::json& object,
                         std::string_view name) -> const nlohmann::json* {
    if (!object.is_object()) return nullptr;
    const auto& map = object.get_ref<const nlohmann::json::object_t&>();
    const auto it = map.find(name);
    return it == map.end() ? nullptr : &it->second;
  };
  const nlohmann::json* spec = member(*job.raw, "spec");
  return spec == nullptr ? nullptr : member(*spec, key);
}

std::vector<std::uint32_t> cancelledArrayTasks(const SlurmJobObject& array) {
  return arrayTaskList(array, kCancelTasksField);
}

std::vector<std::uint32_t> arrayTaskList(const SlurmJobObject& array, std::string_view field) {
  const nlohmann::json* text = specMember(array, field);
  if (text == nullptr || !text->is_string()) return {};
  // Ids past the array's last task are none of its tasks: the whole list is then invalid.
  const std::uint32_t bound = array.request.array && !array.request.array->taskIds.empty()
                                  ? array.request.array->taskIds.back() + 1
                                  : 0;
  if (bound == 0) return {};
  auto tasks = slurm::parseArraySpec(text->get_ref<const std::string&>(), bound);
  if (!tasks.isOk()) return {};
  std::vector<std::uint32_t> ids = std::move(tasks->taskIds);
  std::ranges::sort(ids);
  return ids;
}

slurm::JobState jobStateOf(const SlurmJobStatus& status) {
  if (auto state = slurm::parseJobState(status.state)) return *state;
  if (auto state = slurm::parseJobState(status.stateCode)) return *state;
  return slurm::JobState::kPending;
}

std::string shownPartition(const SlurmJobObject& job, const std::string& defaultPartition) {
  if (job.status && !job.status->partition.empty()) return job.status->partition;
  return job.request.partition.empty() ? defaultPartition : job.request.partition;
}

std::string timeLimitPartition(const slurm::JobRequest& request,
                               const std::string& defaultPartition) {
  if (request.partition.empty()) return defaultPartition;
  return request.partition.substr(0, request.partition.find(','));
}

RecordedMemory recordedMemory(const slurm::JobRequest& request, const PartitionMemory& partition,
                              bool started, std::int64_t nodes, std::int64_t cpus,
                              std::int64_t gpus, std::optional<std::uint64_t> nodeMemoryMb) {
  RecordedMemory out;
  if (request.memPerNodeMb) {
    out.perNodeMb = *request.memPerNodeMb;
  } else if (request.memPerCpuMb) {
    out.perCpuMb = *request.memPerCpuMb;
  } else if (partition.defPerNode > 0) {
    out.perNodeMb = partition.defPerNode;
  } else {
    out.perCpuMb = partition.defPerCpu;
  }
  const bool ownMemory = request.memPerNodeMb || request.memPerCpuMb;
  // A request's figures are a tenant's: the product saturates.
  const auto times = [](std::uint64_t megabytes, std::int64_t n) {
    return saturatingProduct(megabytes, static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0)));
  };
  if (!ownMemory && request.memPerGpuMb && *request.memPerGpuMb > 0) {
    out.tresMb = times(*request.memPerGpuMb, gpus);
  } else if (!ownMemory && started && gpus > 0 && partition.defPerGpu > 0) {
    out.tresMb = times(partition.defPerGpu, gpus);
  } else if (out.perCpuMb > 0) {
    out.tresMb = times(out.perCpuMb, cpus);
  } else if (out.perNodeMb > 0) {
    out.tresMb = times(out.perNodeMb, nodes);
  } else if (nodeMemoryMb) {
    out.tresMb = times(*nodeMemoryMb, nodes);
  }
  return out;
}

}  // namespace kubeslurm::api
