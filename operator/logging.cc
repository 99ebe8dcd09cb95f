#include "operator/logging.h"

#include <chrono>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace kubeslurm::op {
namespace {

// One JSON object per line (ts, level, logger, msg), for log pipelines that parse structure.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since = msg.time.time_since_epoch();
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since).count();
    nlohmann::json line = {{"ts", static_cast<double>(millis) / 1000.0},
                           {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                                                 spdlog::level::to_string_view(msg.level).size())},
                           {"logger", std::string(msg.logger_name.data(), msg.logger_name.size())},
                           {"msg", std::string(msg.payload.data(), msg.payload.size())}};
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

void setUpLogging(const Flags& f) {
  auto logger = std::make_shared<spdlog::logger>("kubeslurm-operator",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (f.logFormat == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %L %v", spdlog::pattern_time_type::utc);
  }
  logger->set_level(f.logLevel == "debug"     ? spdlog::level::debug
                    : f.logLevel == "warning" ? spdlog::level::warn
                    : f.logLevel == "error"   ? spdlog::level::err
                                              : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace kubeslurm::op
