#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "kubeslurm/metrics/http_endpoints.h"
#include "kubeslurm/metrics/operator_metrics.h"

namespace kubeslurm::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsTest, JobGaugesAreReplacedWhole) {
  OperatorMetrics metrics;
  metrics.setJobs({{{"batch", {{"PENDING", 3}, {"RUNNING", 2}}}}});
  std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("# TYPE kubeslurm_jobs gauge\n"));
  EXPECT_THAT(text, HasSubstr("# HELP kubeslurm_jobs "));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"PENDING\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"RUNNING\"} 2\n"));

  metrics.setJobs({{{"batch", {{"RUNNING", 5}}}}});
  text = metrics.exposition();
  EXPECT_THAT(text, Not(HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"PENDING\"}")));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"RUNNING\"} 5\n"));

  // A value that went away and came back is a fresh series, not a leftover.
  metrics.setJobs({{{"batch", {{"PENDING", 1}}}}});
  text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"PENDING\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"RUNNING\"}")));
}

TEST(MetricsTest, JobGaugesCarryTheirPartition) {
  OperatorMetrics metrics;
  // "gone": a partition a job asked for that does not exist; "": none asked and no default.
  metrics.setJobs({{{"batch", {{"PENDING", 3}, {"RUNNING", 2}}},
                    {"urgent", {{"PENDING", 1}}},
                    {"gone", {{"PENDING", 1}}}}});
  metrics.setPendingReasons(
      {{{"batch", {{"Resources", 2}, {"Priority", 1}}}, {"urgent", {{"Resources", 1}}}}});
  std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"PENDING\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"urgent\",state=\"PENDING\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs{partition=\"gone\",state=\"PENDING\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_pending_jobs{partition=\"batch\",reason=\"Resources\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_pending_jobs{partition=\"batch\",reason=\"Priority\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_pending_jobs{partition=\"urgent\",reason=\"Resources\"} 1\n"));

  // Replaced whole per (partition, value): urgent's Resources and gone's jobs went away.
  metrics.setJobs({{{"batch", {{"PENDING", 3}, {"RUNNING", 2}}}}});
  metrics.setPendingReasons({{{"batch", {{"Resources", 2}}}, {"urgent", {{"Priority", 1}}}}});
  text = metrics.exposition();
  EXPECT_THAT(text, Not(HasSubstr("partition=\"gone\"")));
  EXPECT_THAT(text, Not(HasSubstr("kubeslurm_jobs{partition=\"urgent\"")));
  EXPECT_THAT(text, Not(HasSubstr("partition=\"urgent\",reason=\"Resources\"")));
  EXPECT_THAT(text, Not(HasSubstr("partition=\"batch\",reason=\"Priority\"")));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_pending_jobs{partition=\"urgent\",reason=\"Priority\"} 1\n"));
}

TEST(MetricsTest, PartitionCountsTotalOverPartitions) {
  PartitionCounts counts;
  counts.add("batch", "PENDING");
  counts.add("batch", "PENDING");
  counts.add("urgent", "PENDING");
  counts.add("urgent", "RUNNING", 4);
  const std::map<std::string, std::int64_t> total = counts;
  EXPECT_EQ(total, (std::map<std::string, std::int64_t>{{"PENDING", 3}, {"RUNNING", 4}}));
  EXPECT_EQ(counts.byPartition.at("batch").at("PENDING"), 2);
  EXPECT_TRUE(PartitionCounts{}.total().empty());
}

TEST(MetricsTest, PendingReasonsNodesAndAccounts) {
  OperatorMetrics metrics;
  metrics.setPendingReasons({{{"batch", {{"Resources", 4}, {"Priority", 7}}}}});
  metrics.setNodes({{"idle", 2}, {"drain", 1}});
  metrics.setAccounts({{"ml-research", {0.25, 3600.5, 0.4, 3}}, {"inference", {0.75, 10, 0.6, 0}}});
  metrics.setLeader(true);
  std::string text = metrics.exposition();
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_pending_jobs{partition=\"batch\",reason=\"Resources\"} 4\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_pending_jobs{partition=\"batch\",reason=\"Priority\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_nodes{state=\"drain\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_account_fairshare{account=\"ml-research\"} 0.25\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_account_usage{account=\"ml-research\"} 3600.5\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_account_shares{account=\"ml-research\"} 0.4\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_account_waiting_jobs{account=\"ml-research\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_account_waiting_jobs{account=\"inference\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_leader 1\n"));

  metrics.setPendingReasons({{{"batch", {{"Priority", 1}}}}});
  metrics.setAccounts({{"inference", {0.5, 20}}});
  metrics.setLeader(false);
  text = metrics.exposition();
  EXPECT_THAT(text, Not(HasSubstr("reason=\"Resources\"")));
  EXPECT_THAT(text, Not(HasSubstr("account=\"ml-research\"")));
  EXPECT_THAT(text, HasSubstr("kubeslurm_account_usage{account=\"inference\"} 20\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_leader 0\n"));
}

TEST(MetricsTest, GpuGauges) {
  OperatorMetrics metrics;
  metrics.setGpus({.total = 64, .allocated = 40, .foreign = 8, .free = 16, .unavailable = 8});
  const std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("# TYPE kubeslurm_gpus gauge\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gpus{state=\"allocated\"} 40\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gpus{state=\"foreign\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gpus{state=\"free\"} 16\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gpus{state=\"unavailable\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gpus_allocatable 64\n"));
}

TEST(MetricsTest, PartitionGaugesCarryTheirStateAndAreReplacedWhole) {
  OperatorMetrics metrics;
  PartitionFigures batch;
  batch.gpus = {.allocated = 32, .foreign = 8, .free = 24, .unavailable = 0};
  batch.pendingJobs = 3;
  batch.runningJobs = 2;
  PartitionFigures urgent;
  urgent.gpus.free = 8;
  metrics.setPartitions({{"batch", batch}, {"urgent", urgent}});
  std::string text = metrics.exposition();
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_partition_gpus{partition=\"batch\",state=\"allocated\"} 32\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_partition_gpus{partition=\"batch\",state=\"foreign\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_partition_gpus{partition=\"urgent\",state=\"free\"} 8\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_partition_jobs{partition=\"batch\",state=\"pending\"} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_partition_jobs{partition=\"batch\",state=\"running\"} 2\n"));
  metrics.setPartitions({{"batch", batch}});
  text = metrics.exposition();
  EXPECT_THAT(text, Not(HasSubstr("partition=\"urgent\"")));
}

TEST(MetricsTest, LabelledCountersStartAtZero) {
  OperatorMetrics metrics;
  std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_api_errors_total{verb=\"post\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_transitions_total{state=\"FAILED\"} 0\n"));
  metrics.addApiError("post");
  metrics.addJobTransition("FAILED");
  text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_api_errors_total{verb=\"post\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_transitions_total{state=\"FAILED\"} 1\n"));
}

TEST(MetricsTest, QueueWaitIsAHistogramPerPartition) {
  OperatorMetrics metrics;
  metrics.observeQueueWait("batch", 42);
  metrics.observeQueueWait("batch", 7200);
  metrics.observeQueueWait("urgent", 2);
  const std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("# TYPE kubeslurm_job_queue_wait_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_queue_wait_seconds_count{partition=\"batch\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_queue_wait_seconds_sum{partition=\"batch\"} 7242\n"));
  EXPECT_THAT(
      text,
      HasSubstr("kubeslurm_job_queue_wait_seconds_bucket{partition=\"batch\",le=\"60\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_queue_wait_seconds_count{partition=\"urgent\"} 1\n"));
}

TEST(MetricsTest, CyclesFillCountersAndHistograms) {
  OperatorMetrics metrics;
  metrics.observeCycle({.seconds = 0.003,
                        .planSeconds = 0.0002,
                        .jobsConsidered = 10,
                        .jobsStarted = 3,
                        .jobsBackfilled = 1,
                        .reservations = 2});
  metrics.observeCycle({.seconds = 0.7,
                        .planSeconds = 0.3,
                        .jobsConsidered = 50,
                        .jobsStarted = 2,
                        .jobsBackfilled = 2,
                        .reservations = 4,
                        .backfillDepth = 17,
                        .budgetExhausted = true});
  const std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("# TYPE kubeslurm_scheduler_cycles_total counter\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_cycles_total 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs_started_total{backfilled=\"false\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs_started_total{backfilled=\"true\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_budget_exhausted_total 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_backfill_reservations 4\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_backfill_depth 17\n"));

  EXPECT_THAT(text, HasSubstr("# TYPE kubeslurm_scheduler_cycle_duration_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_count 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_sum 0.703\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_bucket{le=\"0.001\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_bucket{le=\"0.0025\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_bucket{le=\"0.005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_bucket{le=\"0.5\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_bucket{le=\"1\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_scheduler_cycle_duration_seconds_bucket{le=\"+Inf\"} 2\n"));

  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_plan_duration_seconds_count 2\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_scheduler_plan_duration_seconds_bucket{le=\"0.0001\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_scheduler_plan_duration_seconds_bucket{le=\"0.00025\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_plan_duration_seconds_bucket{le=\"0.25\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_plan_duration_seconds_bucket{le=\"0.5\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_scheduler_plan_duration_seconds_bucket{le=\"10\"} 2\n"));
}

TEST(MetricsTest, EventCounters) {
  OperatorMetrics metrics;
  // Present from the start so that rate() has a zero to begin from.
  std::string text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_gang_admissions_total{result=\"rolled_back\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_jobs_started_total{backfilled=\"true\"} 0\n"));

  metrics.addGangAdmission(true, 0.04);
  metrics.addGangAdmission(false, 2);
  metrics.addGangAdmission(true, 0.02);
  metrics.addJobTransition("RUNNING");
  metrics.addJobTransition("RUNNING");
  metrics.addJobTransition("COMPLETED");
  metrics.addJobIdsAssigned(5);
  metrics.addJobIdsAssigned(-1);
  metrics.addApiError("patch");
  text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_gang_admissions_total{result=\"bound\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gang_admissions_total{result=\"rolled_back\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_gang_admission_duration_seconds_count 3\n"));
  EXPECT_THAT(text,
              HasSubstr("kubeslurm_gang_admission_duration_seconds_bucket{le=\"0.025\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_transitions_total{state=\"RUNNING\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_transitions_total{state=\"COMPLETED\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_job_ids_assigned_total 5\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_api_errors_total{verb=\"patch\"} 1\n"));

  // The accounting writer's running totals become counters that move by what they grew.
  metrics.setAccounting({100, 2, 7});
  metrics.setAccounting({150, 2, 0});
  text = metrics.exposition();
  EXPECT_THAT(text, HasSubstr("kubeslurm_accounting_records_written_total 150\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_accounting_write_failures_total 2\n"));
  EXPECT_THAT(text, HasSubstr("kubeslurm_accounting_records_queued 0\n"));
}

// GPU-seconds accumulate per (account, user) from cycle to cycle; nothing counts down.
TEST(MetricsTest, GpuSecondsAccumulateByAccountAndUser) {
  OperatorMetrics metrics;
  metrics.addGpuSeconds({{{"nlp", "alice"}, 480}, {{"vision", "bob"}, 8}});
  metrics.addGpuSeconds({{{"nlp", "alice"}, 120}, {{"vision", "bob"}, -5}});
  const std::string text = metrics.exposition();
  EXPECT_THAT(
      text, HasSubstr("kubeslurm_account_gpu_seconds_total{account=\"nlp\",user=\"alice\"} 600\n"));
  EXPECT_THAT(
      text, HasSubstr("kubeslurm_account_gpu_seconds_total{account=\"vision\",user=\"bob\"} 8\n"));
}

struct HttpResponse {
  int code = 0;
  std::string headers;  // lower-cased
  std::string body;
};

// A blocking HTTP/1.0 exchange with 127.0.0.1; the server closes after the response.
HttpResponse httpRequest(int port, const std::string& method, const std::string& path) {
  HttpResponse response;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return response;
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return response;
  }
  const std::string request = method + " " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return response;
  }
  std::string raw;
  std::array<char, 4096> buffer{};
  for (ssize_t n = 0; (n = recv(fd, buffer.data(), buffer.size(), 0)) > 0;) {
    raw.append(buffer.data(), static_cast<std::size_t>(n));
  }
  close(fd);
  const std::size_t headersEnd = raw.find("\r\n\r\n");
  if (!raw.starts_with("HTTP/1.") || raw.size() < 12 || headersEnd == std::string::npos) {
    return response;
  }
  response.code = std::stoi(raw.substr(9, 3));
  for (std::size_t i = 0; i < headersEnd; ++i) {
    response.headers += static_cast<char>(std::tolower(static_cast<unsigned char>(raw[i])));
  }
  response.body = raw.substr(headersEnd + 4);
  return response;
}

TEST(HttpEndpointsTest, ServesMetricsAndProbes) {
  OperatorMetrics metrics;
  metrics.setJobs({{{"batch", {{"PENDING", 3}}}}});
  std::atomic<bool> synced = false;
  auto endpoints = HttpEndpoints::start(
      {.metricsAddress = "127.0.0.1:0", .probeAddress = "127.0.0.1:0"}, metrics,
      [] { return Status::ok(); },
      [&synced] {
        return synced ? Status::ok() : Status(StatusCode::kUnavailable, "informers not synced");
      });
  ASSERT_TRUE(endpoints.isOk()) << endpoints.status().toString();
  const int metricsPort = (*endpoints)->metricsPort();
  const int probePort = (*endpoints)->probePort();
  ASSERT_GT(metricsPort, 0);
  ASSERT_GT(probePort, 0);
  EXPECT_NE(metricsPort, probePort);

  HttpResponse scraped = httpRequest(metricsPort, "GET", "/metrics");
  EXPECT_EQ(scraped.code, 200);
  EXPECT_THAT(scraped.headers, HasSubstr("content-type: text/plain"));
  EXPECT_THAT(scraped.body, HasSubstr("kubeslurm_jobs{partition=\"batch\",state=\"PENDING\"} 3\n"));
  EXPECT_THAT(scraped.body, HasSubstr("# TYPE kubeslurm_scheduler_cycles_total counter\n"));

  HttpResponse healthz = httpRequest(probePort, "GET", "/healthz");
  EXPECT_EQ(healthz.code, 200);
  EXPECT_EQ(healthz.body, "ok");
  EXPECT_THAT(healthz.headers, HasSubstr("content-type: text/plain"));

  HttpResponse notReady = httpRequest(probePort, "GET", "/readyz");
  EXPECT_EQ(notReady.code, 503);
  EXPECT_EQ(notReady.body, "informers not synced");
  synced = true;
  HttpResponse ready = httpRequest(probePort, "GET", "/readyz");
  EXPECT_EQ(ready.code, 200);
  EXPECT_EQ(ready.body, "ok");

  EXPECT_EQ(httpRequest(probePort, "GET", "/nothing-here").code, 404);
  EXPECT_EQ(httpRequest(probePort, "GET", "/healthz/deeper").code, 404);
  EXPECT_EQ(httpRequest(metricsPort, "GET", "/nothing-here").code, 404);
  const HttpResponse posted = httpRequest(probePort, "POST", "/healthz");
  EXPECT_EQ(posted.code, 405);
  EXPECT_THAT(posted.headers, HasSubstr("allow: get"));
}

TEST(HttpEndpointsTest, OffMeansNoServer) {
  OperatorMetrics metrics;
  auto endpoints = HttpEndpoints::start(
      {.metricsAddress = "", .probeAddress = ""}, metrics, [] { return Status::ok(); },
      [] { return Status::ok(); });
  ASSERT_TRUE(endpoints.isOk()) << endpoints.status().toString();
  EXPECT_EQ((*endpoints)->metricsPort(), 0);
  EXPECT_EQ((*endpoints)->probePort(), 0);
}

TEST(HttpEndpointsTest, PortInUseNamesTheAddress) {
  OperatorMetrics metrics;
  auto first = HttpEndpoints::start(
      {.metricsAddress = "127.0.0.1:0", .probeAddress = "127.0.0.1:0"}, metrics,
      [] { return Status::ok(); }, [] { return Status::ok(); });
  ASSERT_TRUE(first.isOk()) << first.status().toString();

  const std::string takenProbe = "127.0.0.1:" + std::to_string((*first)->probePort());
  auto probeClash = HttpEndpoints::start(
      {.metricsAddress = "", .probeAddress = takenProbe}, metrics, [] { return Status::ok(); },
      [] { return Status::ok(); });
  ASSERT_FALSE(probeClash.isOk());
  EXPECT_EQ(probeClash.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(probeClash.status().message(), HasSubstr("\"" + takenProbe + "\""));
  EXPECT_THAT(probeClash.status().message(), HasSubstr("in use"));

  const std::string takenMetrics = "127.0.0.1:" + std::to_string((*first)->metricsPort());
  auto metricsClash = HttpEndpoints::start(
      {.metricsAddress = takenMetrics, .probeAddress = ""}, metrics, [] { return Status::ok(); },
      [] { return Status::ok(); });
  ASSERT_FALSE(metricsClash.isOk());
  EXPECT_EQ(metricsClash.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(metricsClash.status().message(), HasSubstr("\"" + takenMetrics + "\""));
  EXPECT_THAT(metricsClash.status().message(), HasSubstr("in use"));

  // The first endpoints still serve after the failed attempts.
  EXPECT_EQ(httpRequest((*first)->probePort(), "GET", "/healthz").code, 200);
}

TEST(HttpEndpointsTest, MalformedAddresses) {
  OperatorMetrics metrics;
  for (const std::string address : {"8080", "127.0.0.1:http", "127.0.0.1:70000", "::1:80",
                                    "127.0.0.1,127.0.0.2:80", "127.0.0.1:"}) {
    auto endpoints = HttpEndpoints::start(
        {.metricsAddress = "", .probeAddress = address}, metrics, [] { return Status::ok(); },
        [] { return Status::ok(); });
    ASSERT_FALSE(endpoints.isOk()) << address;
    EXPECT_EQ(endpoints.status().code(), StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(endpoints.status().message(), HasSubstr("\"" + address + "\"")) << address;
  }
}

TEST(HttpEndpointsTest, AllInterfacesShorthand) {
  OperatorMetrics metrics;
  auto endpoints = HttpEndpoints::start(
      {.metricsAddress = ":0", .probeAddress = ":0"}, metrics, [] { return Status::ok(); },
      [] { return Status::ok(); });
  ASSERT_TRUE(endpoints.isOk()) << endpoints.status().toString();
  EXPECT_EQ(httpRequest((*endpoints)->probePort(), "GET", "/healthz").code, 200);
  EXPECT_EQ(httpRequest((*endpoints)->metricsPort(), "GET", "/metrics").code, 200);
}

}  // namespace
}  // namespace kubeslurm::metrics
