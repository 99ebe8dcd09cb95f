// Reconciler::cycle against an API server in memory: what one cycle writes, in order, for the
// situations the job controller and the scheduling loop meet (controllers/reconciler.h, the
// cycle's steps). The informers are played by reading the fake server's objects back before
// each cycle, as a watch would deliver them; the kubelets by setting the rank pods' phase.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controllers/job_ids.h"
#include "controllers/reconciler.h"
#include "tests/unit/controllers/cluster_objects.h"
#include "tests/unit/controllers/fake_api_server.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;
using fakes::FakeApiServer;
using fakes::ok;
using Call = FakeApiServer::Call;

constexpr core::Time kStart = fakes::kNow;

// A SlurmJob as `sbatch` creates it (no status yet) for nodes x gpusPerNode, an hour's limit.
Json submitted(const std::string& name, int nodes, int gpusPerNode) {
  return fakes::slurmJobObject(name, {{"image", "pytorch/pytorch:2.4.0"},
                                      {"timeLimit", "1:00:00"},
                                      {"nodes", nodes},
                                      {"gpusPerNode", gpusPerNode}});
}

// Four 8-GPU nodes in one partition, and the operator around them.
class Cycle : public ::testing::Test {
 public:
  Cycle() {
    for (int i = 1; i <= 4; ++i) api.put("nodes", fakes::nodeObject("gpu-" + std::to_string(i), 8));
    api.put("partitions",
            fakes::partitionObject(
                "gpu", {{"nodes", "gpu-[1-4]"}, {"default", true}, {"defMemPerGpu", 1024}}));
    options.admitInBackground = false;  // each cycle ends with its admissions' outcome
    options.admission.defaultImage = "pytorch/pytorch:2.4.0";
    options.canWrite = [this] { return leading; };
    reconciler = std::make_unique<Reconciler>(api, api, api, api, ids, nullptr, options);
  }

  // The informers' view: every object of the fake server, decoded as the operator decodes them.
  ReconcileInput read() const {
    ReconcileInput input;
    for (const Json& o : api.objects("nodes"))
      input.objects.nodes.push_back(ok(api::decodeNode(o)));
    for (const Json& o : api.objects("pods")) input.objects.pods.push_back(ok(api::decodePod(o)));
    for (const Json& o : api.objects("slurmjobs")) {
      input.objects.jobs.push_back(ok(api::decodeSlurmJob(o)));
    }
    for (const Json& o : api.objects("partitions")) {
      input.objects.partitions.push_back(ok(api::decodePartition(o)));
    }
    for (const Json& o : api.objects("accounts")) {
      input.objects.accounts.push_back(ok(api::decodeAccount(o)));
    }
    return input;
  }

  CycleReport cycle(core::Time now) {
    api.clearCalls();
    return reconciler->cycle(read(), now);
  }

  // What the kubelets report once a pod is bound: it runs.
  void kubeletsStartBoundPods() {
    for (Json pod : api.objects("pods")) {
      if (pod["spec"].value("nodeName", std::string()).empty()) continue;
      pod["status"] = {
          {"phase", "Running"},
          {"containerStatuses",
           Json::array(
               {{{"name", "rank"},
                 {"ready", true},
                 {"state", {{"running", {{"startedAt", api::formatTimestamp(kStart)}}}}}}})}};
      api.put("pods", pod);
    }
  }

  Json job(const std::string& name) const {
    return api.object("slurmjobs", "team-a", name).value();
  }

  FakeApiServer api;
  JobIdAllocator ids{api, api, [] {
                       JobIdOptions o;
                       o.namespaceName = "kubeslurm-system";
                       return o;
                     }()};
  ReconcilerOptions options;
  bool leading = true;
  std::unique_ptr<Reconciler> reconciler;
};

// One cycle of a specification: what happens before it, and every write it must make, in order.
struct Step {
  std::string what;
  std::function<void(Cycle&)> before;
  std::vector<Call> writes;
  core::Time at = 0;  // seconds after kStart
};

struct Spec {
  std::string name;
  GangPlacement placement = GangPlacement::kCreateBound;
  std::vector<Step> steps;
  // Each job's state and reason after the last step.
  std::vector<std::tuple<std::string, std::string, std::string>> finally;
};

// gtest's hook for printing a parameter: the name it must have.
void PrintTo(const Spec& spec, std::ostream* out) {  // NOLINT(readability-identifier-naming)
  *out << spec.name;
}

Call write(std::string verb, std::string resource, std::string key) {
  return {std::move(verb), std::move(resource), std::move(key)};
}

const Call kIdBlock = write("create", "configmaps", "kubeslurm-system/kubeslurm-job-ids");
const Call kPartitionStatus = write("updateStatus", "partitions", "/gpu");

Call status(const std::string& job) { return write("patchStatus", "slurmjobs", "team-a/" + job); }
Call made(const std::string& resource, const std::string& name) {
  return write("create", resource, "team-a/" + name);
}

std::function<void(Cycle&)> submit(std::string name, int nodes) {
  return [name = std::move(name), nodes](Cycle& c) {
    c.api.put("slurmjobs", submitted(name, nodes, 8));
  };
}

class CycleSpec : public Cycle, public ::testing::WithParamInterface<Spec> {};

TEST_P(CycleSpec, WritesWhatTheDesignSays) {
  const Spec& spec = GetParam();
  options.binder.placement = spec.placement;
  options.binder.bindParallelism = 1;  // one write at a time: the order is the design's
  reconciler = std::make_unique<Reconciler>(api, api, api, api, ids, nullptr, options);
  for (const Step& step : spec.steps) {
    if (step.before) step.before(*this);
    cycle(kStart + step.at);
    EXPECT_THAT(api.writes(), ::testing::ElementsAreArray(step.writes)) << step.what;
  }
  for (const auto& [name, state, reason] : spec.finally) {
    const Json status = job(name).value("status", Json::object());
    EXPECT_EQ(status.value("state", ""), state) << name;
    EXPECT_EQ(status.value("reason", ""), reason) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cycles, CycleSpec,
    ::testing::Values(
        // Step 2's id goes out with the job's first write, then step 7 admits the gang: its
        // Service and NetworkPolicy, ranks 1..N-1, then rank 0 on its own, each created on its
        // planned node (docs/operator.md, "create"). RUNNING once the kubelets run the pods; a
        // steady cluster costs no write.
        Spec{"a fresh gang starts in its first cycle, created on its nodes",
             GangPlacement::kCreateBound,
             {Step{"submitted",
                   submit("train", 2),
                   {kIdBlock, status("train"), made("services", "train"),
                    made("networkpolicies", "train"), made("pods", "train-1"),
                    made("pods", "train-0"), kPartitionStatus},
                   0},
              Step{"the kubelets run its pods",
                   [](Cycle& c) { c.kubeletsStartBoundPods(); },
                   {status("train"), kPartitionStatus},
                   1},
              Step{"its partition counts it running", nullptr, {kPartitionStatus}, 2},
              Step{"nothing changes", nullptr, {}, 3}},
             {{"train", "RUNNING", "None"}}},
        // --gang-placement binding: every rank created unbound, then bound.
        Spec{"binding placement: creates, then a bind per rank",
             GangPlacement::kBinding,
             {Step{"submitted",
                   submit("train", 2),
                   {kIdBlock, status("train"), made("services", "train"),
                    made("networkpolicies", "train"), made("pods", "train-0"),
                    made("pods", "train-1"), write("bind", "pods", "team-a/train-0"),
                    write("bind", "pods", "team-a/train-1"), kPartitionStatus},
                   0}},
             {{"train", "PENDING", "None"}}},
        // slurmctld's reason for a job larger than its partition, written once.
        Spec{"a job larger than its partition waits, its reason written once",
             GangPlacement::kCreateBound,
             {Step{"submitted", submit("big", 5), {kIdBlock, status("big"), kPartitionStatus}, 0},
              Step{"nothing changes", nullptr, {}, 1}},
             {{"big", "PENDING", "PartitionNodeLimit"}}},
        // The id write fails with 409 (the cache was stale): the job is not started on a stale
        // read; the next cycle writes it again and starts it.
        Spec{"a conflict on the first write: the job starts a cycle later",
             GangPlacement::kCreateBound,
             {Step{"submitted; its status write conflicts",
                   [](Cycle& c) {
                     c.api.put("slurmjobs", submitted("late", 2, 8));
                     c.api.failNext("patchStatus", "slurmjobs",
                                    Status(StatusCode::kAborted, "the object has been modified"));
                   },
                   {kIdBlock, status("late"), kPartitionStatus},
                   0},
              Step{"read again",
                   nullptr,
                   {status("late"), made("services", "late"), made("networkpolicies", "late"),
                    made("pods", "late-1"), made("pods", "late-0")},
                   1}},
             {{"late", "PENDING", "None"}}},
        // All or nothing (invariant 1): rank 0's create fails after rank 1's succeeded, so rank
        // 1 is released from its finalizer and deleted; the job waits its backoff
        // (BeginTime), then is admitted again.
        Spec{"a failed rank create rolls the gang back; the job waits, then starts again",
             GangPlacement::kCreateBound,
             {Step{"submitted; the second pod create fails",
                   [](Cycle& c) {
                     c.api.put("slurmjobs", submitted("x", 2, 8));
                     c.api.failNext("create", "pods", Status(StatusCode::kUnavailable, "etcd"), 1);
                   },
                   {kIdBlock, status("x"), made("services", "x"), made("networkpolicies", "x"),
                    made("pods", "x-1"), made("pods", "x-0"), write("patch", "pods", "team-a/x-1"),
                    write("delete", "pods", "team-a/x-1"), kPartitionStatus},
                   0},
              Step{"backing off", nullptr, {status("x")}, 1},
              Step{"after the backoff",
                   nullptr,
                   {made("services", "x"), made("networkpolicies", "x"), made("pods", "x-1"),
                    made("pods", "x-0")},
                   40}},
             {{"x", "PENDING", "BeginTime"}}},
        // Invariant 2: a replica that is not the leader writes nothing, not even an id.
        Spec{"without leadership a cycle writes nothing",
             GangPlacement::kCreateBound,
             {Step{"submitted, not leading",
                   [](Cycle& c) {
                     c.leading = false;
                     c.api.put("slurmjobs", submitted("y", 1, 8));
                   },
                   {},
                   0}},
             {{"y", "", ""}}}),
    [](const ::testing::TestParamInfo<Spec>& param) {
      return "Spec" + std::to_string(param.index);
    });

}  // namespace
}  // namespace kubeslurm::controllers
