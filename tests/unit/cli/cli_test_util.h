// An in-memory CliIo for running commands in tests: files from a map, streams to strings.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kubeslurm/cli/cli.h"
#include "kubeslurm/rpc/client.h"

namespace kubeslurm::cli::testing {

class FakeCli {
 public:
  FakeCli()
      : io_{in_,
            out_,
            err_,
            [this](std::string_view name) -> std::optional<std::string> {
              const auto it = env.find(std::string(name));
              if (it == env.end()) return std::nullopt;
              return it->second;
            },
            [this](const std::string& path) -> StatusOr<std::string> {
              const auto it = files.find(path);
              if (it == files.end()) return notFound("Unable to open file " + path);
              return it->second;
            },
            kNow,
            0} {}

  // 2026-11-21T04:30:00Z
  static constexpr std::int64_t kNow = 1795235400;

  std::map<std::string, std::string> files;
  std::map<std::string, std::string> env;  // the process environment the command sees
  CliIo& io() { return io_; }
  // What the command reads from its standard input.
  void input(const std::string& text) {
    in_.str(text);
    in_.clear();
  }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
  CliIo io_;
};

// The operator's query API answering nothing: a test's fake overrides the calls it answers.
class NoQueries : public rpc::QueryClient {
 public:
  StatusOr<rpc::PendingJobsAnswer> listPendingJobs(const std::string&) override {
    return notHere();
  }
  StatusOr<rpc::FairShareAnswer> fairShare() override { return notHere(); }
  StatusOr<rpc::StatisticsAnswer> statistics() override { return notHere(); }
  StatusOr<rpc::TestOnlyAnswer> testOnly(const std::string&, const std::string&) override {
    return notHere();
  }
  StatusOr<std::vector<accounting::JobRecord>> listJobRecords(const rpc::JobRecordQuery&) override {
    return notHere();
  }

 private:
  static Status notHere() { return {StatusCode::kUnimplemented, "not here"}; }
};

}  // namespace kubeslurm::cli::testing
