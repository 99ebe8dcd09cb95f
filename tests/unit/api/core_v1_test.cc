#include "kubeslurm/api/core_v1.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "tests/unit/api/fixtures.h"

namespace kubeslurm::api {
namespace {

Json parse(std::string_view text) { return Json::parse(text); }

// The JSON Patch paths where two documents differ (RFC 6902 via nlohmann::json::diff).
std::vector<std::string> changedPaths(const Json& before, const Json& after) {
  std::vector<std::string> paths;
  for (const Json& op : Json::diff(before, after)) paths.push_back(op["path"].get<std::string>());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// --- resource.Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go) --------------------

struct QuantityCase {
  const char* text;
  std::int64_t milli;
};

class QuantityMilliTest : public ::testing::TestWithParam<QuantityCase> {};

TEST_P(QuantityMilliTest, MatchesMilliValue) {
  const StatusOr<std::int64_t> milli = parseQuantityMilli(GetParam().text);
  ASSERT_TRUE(milli.isOk()) << GetParam().text << ": " << milli.status().toString();
  EXPECT_EQ(*milli, GetParam().milli) << GetParam().text;
}

// Expected values are Quantity.MilliValue() (ceil(q * 1000)) of ParseQuantity(text).
INSTANTIATE_TEST_SUITE_P(
    Kubernetes, QuantityMilliTest,
    ::testing::Values(QuantityCase{"0", 0}, QuantityCase{"500m", 500}, QuantityCase{"2", 2000},
                      QuantityCase{"1Ki", 1024000}, QuantityCase{"64Gi", 68719476736000},
                      QuantityCase{"1.5", 1500}, QuantityCase{"1.5Ki", 1536000},
                      QuantityCase{"0.5Gi", 536870912000}, QuantityCase{"1e3", 1000000},
                      QuantityCase{"1E3", 1000000}, QuantityCase{"1e-3", 1},
                      QuantityCase{"1e+3", 1000000},
                      QuantityCase{"100n", 1},  // rounded up, never to zero
                      QuantityCase{"0.1m", 1}, QuantityCase{"1u", 1}, QuantityCase{"1k", 1000000},
                      QuantityCase{"1M", 1000000000}, QuantityCase{"1G", 1000000000000},
                      QuantityCase{"1T", 1000000000000000}, QuantityCase{"1P", 1000000000000000000},
                      QuantityCase{"-1", -1000}, QuantityCase{"+1", 1000},
                      QuantityCase{"-0.5m", -1}, QuantityCase{".5", 500}, QuantityCase{"1.", 1000},
                      QuantityCase{"1.G", 1000000000000}, QuantityCase{"007", 7000},
                      QuantityCase{"95500m", 95500}, QuantityCase{"2113464428Ki", 2164187574272000},
                      // quantity.go strips leading zeros and reads an absent number as zero, so
                      // these parse (kubernetes/apimachinery#165 reports the bare-suffix case): the
                      // API server accepts them and stores "0".
                      QuantityCase{"Mi", 0}, QuantityCase{"k", 0}, QuantityCase{"+", 0},
                      QuantityCase{"-", 0}, QuantityCase{".", 0}, QuantityCase{"000", 0},
                      QuantityCase{"0.000", 0},
                      // A zero with any suffix is zero, however large the exponent.
                      QuantityCase{"0e99999999999", 0},
                      // ParseInt then int32(): Go keeps the exponent's low 32 bits, so 2^32+3 is 3.
                      QuantityCase{"1e4294967299", 1000000}));

TEST(QuantityTest, RejectsWhatParseQuantityRejects) {
  // From quantity_test.go's invalid list, plus the brief's cases.
  for (const char* text : {"",       "1.5.3",   "5mi",  "1.1.M", "1+1.0M",
                           "0.1mi",  "0.1am",   "aoeu", ".5i",   "1i",
                           "-3.01i", "-3.01e-", " 1",   "1 ",    "1K",
                           "1Kib",   "1e",      "1ee3", "1e3m",  "1e+",
                           "1Mi5",   "--1",     "1,5",  "0x10",  "1e99999999999999999999"}) {
    const StatusOr<std::int64_t> milli = parseQuantityMilli(text);
    EXPECT_FALSE(milli.isOk()) << '"' << text << "\" gave " << (milli.isOk() ? *milli : 0);
    if (!milli.isOk()) {
      EXPECT_EQ(milli.status().code(), StatusCode::kInvalidArgument) << text;
    }
  }
}

TEST(QuantityTest, OverflowIsOutOfRange) {
  for (const char* text :
       {"8Ei", "9223372036854775808m", "10E", "1e19", "9999999999999999999999"}) {
    const StatusOr<std::int64_t> milli = parseQuantityMilli(text);
    ASSERT_FALSE(milli.isOk()) << text;
    EXPECT_EQ(milli.status().code(), StatusCode::kOutOfRange) << text;
  }
  // The largest representable milli value, and whole units beyond milli's range.
  EXPECT_EQ(*parseQuantityMilli("9223372036854775807m"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(*parseQuantityValue("7Ei"), std::int64_t{7} << 60);
  EXPECT_EQ(parseQuantityMilli("7Ei").status().code(), StatusCode::kOutOfRange);
}

TEST(QuantityTest, ValueRoundsUpAsKubelet) {
  // Quantity.Value() is ceil: "1500m" is 2 cores, "1" stays 1, "1n" is 1.
  EXPECT_EQ(*parseQuantityValue("1500m"), 2);
  EXPECT_EQ(*parseQuantityValue("1000m"), 1);
  EXPECT_EQ(*parseQuantityValue("1n"), 1);
  EXPECT_EQ(*parseQuantityValue("64Mi"), 67108864);
  EXPECT_EQ(*parseQuantityValue("1.0000000000000000000001"), 2);
  EXPECT_EQ(*parseQuantityValue("-1500m"), -2);  // away from zero, as inf.RoundUp
}

// --- Timestamps (metav1.Time, metav1.MicroTime) ---------------------------------------------

TEST(TimestampTest, ParsesRfc3339AsGoDoes) {
  EXPECT_EQ(*parseTimestamp("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*parseTimestamp("2026-11-21T10:00:00Z"), 1795255200);
  EXPECT_EQ(*parseTimestamp("2026-11-21T11:30:00+01:30"), 1795255200);
  EXPECT_EQ(*parseTimestamp("2026-11-21T05:00:00-05:00"), 1795255200);
  EXPECT_EQ(*parseTimestamp("2026-11-21T10:00:00.999999999Z"), 1795255200);  // truncated
  EXPECT_EQ(*parseTimestamp("1969-12-31T23:59:59.5Z"), -1);  // floor, as time.Unix()
  EXPECT_EQ(*parseTimestamp("2024-02-29T00:00:00Z"), 1709164800);
  for (const char* bad :
       {"", "2026-11-21", "2026-11-21 10:00:00Z", "2026-11-21t10:00:00Z", "2026-11-21T10:00:00z",
        "2026-11-21T10:00:00", "2026-13-01T00:00:00Z", "2023-02-29T00:00:00Z",
        "2026-11-21T24:00:00Z", "2026-11-21T10:60:00Z", "2026-11-21T10:00:60Z",
        "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00+0100", "2026-11-21T10:00:00+01:00x",
        "26-11-21T10:00:00Z", "2026-1-21T10:00:00Z"}) {
    EXPECT_FALSE(parseTimestamp(bad).isOk()) << bad;
  }
}

TEST(TimestampTest, FormatsAsMetav1) {
  // metav1.Time marshals t.UTC().Format(time.RFC3339); MicroTime uses RFC3339Micro.
  EXPECT_EQ(formatTimestamp(1795255200), "2026-11-21T10:00:00Z");
  EXPECT_EQ(formatTimestamp(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatTimestamp(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(formatMicroTime(1795255200000042), "2026-11-21T10:00:00.000042Z");
  EXPECT_EQ(formatMicroTime(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(*parseMicroTime("2026-11-21T10:00:00.000042Z"), 1795255200000042);
  EXPECT_EQ(*parseMicroTime("2026-11-21T10:00:00Z"), 1795255200000000);
  for (std::int64_t t : {std::int64_t{0}, std::int64_t{951782400}, std::int64_t{253402300799}}) {
    EXPECT_EQ(*parseTimestamp(formatTimestamp(t)), t);
  }
}

// --- ObjectMeta -----------------------------------------------------------------------------

TEST(ObjectMetaTest, DecodesEveryField) {
  const Json pod = parse(testing::kRunningPodJson);
  const StatusOr<ObjectMeta> meta = decodeObjectMeta(pod["metadata"]);
  ASSERT_TRUE(meta.isOk()) << meta.status().toString();
  EXPECT_EQ(meta->name, "train-llm-x7k2p-0");
  EXPECT_EQ(meta->generateName, "train-llm-x7k2p-");
  EXPECT_EQ(meta->namespaceName, "team-a");
  EXPECT_EQ(meta->resourceVersion, "48213");
  EXPECT_EQ(meta->creationTimestamp, 1795255200);
  EXPECT_EQ(meta->labels.at("kubeslurm.io/rank"), "0");
  EXPECT_EQ(meta->annotations.at("kubeslurm.io/job-id"), "1042");
  ASSERT_EQ(meta->ownerReferences.size(), 1U);
  EXPECT_EQ(meta->ownerReferences[0].kind, "SlurmJob");
  EXPECT_EQ(meta->ownerReferences[0].controller, true);
  EXPECT_EQ(meta->finalizers, std::vector<std::string>{"kubeslurm.io/gang"});
}

TEST(ObjectMetaTest, WrongTypesNameTheField) {
  auto error = [](std::string_view text) {
    return decodeObjectMeta(Json::parse(text)).status().message();
  };
  EXPECT_EQ(error(R"({"labels": ["a"]})"), "metadata.labels: expected an object");
  EXPECT_EQ(error(R"({"labels": {"a": 1}})"), "metadata.labels.a: expected a string");
  EXPECT_EQ(error(R"({"generation": "2"})"), "metadata.generation: expected an integer");
  EXPECT_EQ(error(R"({"ownerReferences": [{"kind": 7}]})"),
            "metadata.ownerReferences[0].kind: expected a string");
  EXPECT_EQ(error(R"({"creationTimestamp": "yesterday"})").rfind("metadata.creationTimestamp: ", 0),
            0U);
  EXPECT_EQ(decodeObjectMeta(Json::array()).status().code(), StatusCode::kInvalidArgument);
}

TEST(ObjectMetaTest, NullsAndAbsenceDecodeToDefaultsAndSurvive) {
  // A pod template's metadata as Go writes it: "creationTimestamp": null.
  const Json in = parse(R"({"name": "x", "creationTimestamp": null, "labels": null})");
  const StatusOr<ObjectMeta> meta = decodeObjectMeta(in);
  ASSERT_TRUE(meta.isOk());
  EXPECT_FALSE(meta->creationTimestamp);
  Json out = in;
  encodeObjectMeta(*meta, out);
  EXPECT_EQ(out, in);
}

// --- Pod --------------------------------------------------------------------------------------

TEST(PodTest, RealObjectRoundTripsExactly) {
  const Json in = parse(testing::kRunningPodJson);
  const StatusOr<Pod> pod = decodePod(in);
  ASSERT_TRUE(pod.isOk()) << pod.status().toString();
  EXPECT_EQ(encodePod(*pod), in) << Json::diff(in, encodePod(*pod)).dump(1);
}

TEST(PodTest, DecodesSpecAndStatus) {
  const StatusOr<Pod> pod = decodePod(parse(testing::kRunningPodJson));
  ASSERT_TRUE(pod.isOk());
  const PodSpec& spec = pod->spec;
  EXPECT_EQ(spec.nodeName, "gpu-node-001");
  EXPECT_EQ(spec.schedulerName, "kubeslurm");
  EXPECT_EQ(spec.hostname, "train-llm-x7k2p-0");
  EXPECT_EQ(spec.subdomain, "train-llm-x7k2p");
  EXPECT_EQ(spec.restartPolicy, "Never");
  EXPECT_EQ(spec.terminationGracePeriodSeconds, 30);
  EXPECT_EQ(spec.priority, 1000);
  EXPECT_EQ(spec.dnsSearches[0], "train-llm-x7k2p.team-a.svc.cluster.local");
  ASSERT_EQ(spec.tolerations.size(), 3U);
  EXPECT_EQ(spec.tolerations[1].tolerationSeconds, 300);
  EXPECT_EQ(spec.tolerations[0].operator_, "Exists");
  ASSERT_EQ(spec.containers.size(), 1U);
  const Container& rank = spec.containers[0];
  EXPECT_EQ(rank.args, (std::vector<std::string>{"--rank", "0"}));
  EXPECT_EQ(rank.env[1].value, "train-llm-x7k2p-[0-1]");
  EXPECT_EQ(rank.env[3].value, "");  // valueFrom stays in raw
  EXPECT_EQ(rank.resources.limits.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(rank.workingDir, "/home/alice/llm");
  const PodStatus& status = pod->status;
  EXPECT_EQ(status.phase, "Running");
  EXPECT_EQ(status.podIP, "10.244.3.12");
  EXPECT_EQ(status.startTime, 1795255201);
  ASSERT_EQ(status.conditions.size(), 4U);
  EXPECT_EQ(status.conditions[1].type, "Ready");
  const ContainerStatus& init = status.initContainerStatuses[0];
  EXPECT_EQ(init.state.kind, ContainerState::Kind::kTerminated);
  EXPECT_EQ(init.state.reason, "Completed");
  EXPECT_EQ(init.state.finishedAt, 1795255204);
  EXPECT_EQ(init.lastState.kind, ContainerState::Kind::kNone);
  const ContainerStatus& running = status.containerStatuses[0];
  EXPECT_EQ(running.state.kind, ContainerState::Kind::kRunning);
  EXPECT_EQ(running.state.startedAt, 1795255206);
  EXPECT_EQ(running.started, true);
  EXPECT_TRUE(running.ready);
  EXPECT_FALSE(podIsTerminal(*pod));
}

TEST(PodTest, ChangingOneFieldChangesOnlyIt) {
  const Json in = parse(testing::kRunningPodJson);
  Pod pod = *decodePod(in);
  pod.metadata.labels.erase("kubeslurm.io/rank");
  EXPECT_EQ(changedPaths(in, encodePod(pod)),
            std::vector<std::string>{"/metadata/labels/kubeslurm.io~1rank"});

  pod = *decodePod(in);
  pod.metadata.labels.clear();
  const Json cleared = encodePod(pod);
  EXPECT_FALSE(cleared["metadata"].contains("labels"));
  EXPECT_EQ(changedPaths(in, cleared), std::vector<std::string>{"/metadata/labels"});

  pod = *decodePod(in);
  pod.status.containerStatuses[0].state = ContainerState{
      ContainerState::Kind::kTerminated, "Error", "", 1795255206, 1795255300, 137, 9};
  const Json terminated = encodePod(pod);
  EXPECT_EQ(changedPaths(in, terminated),
            (std::vector<std::string>{"/status/containerStatuses/0/state/running",
                                      "/status/containerStatuses/0/state/terminated"}));
  EXPECT_EQ(terminated["status"]["containerStatuses"][0]["state"]["terminated"],
            parse(R"({"exitCode": 137, "signal": 9, "reason": "Error",
                      "startedAt": "2026-11-21T10:00:06Z",
                      "finishedAt": "2026-11-21T10:01:40Z"})"));

  pod = *decodePod(in);
  pod.spec.containers[0].resources.requests["nvidia.com/gpu"] = "4";
  pod.status.phase = "Failed";
  EXPECT_EQ(changedPaths(in, encodePod(pod)),
            (std::vector<std::string>{"/spec/containers/0/resources/requests/nvidia.com~1gpu",
                                      "/status/phase"}));
  EXPECT_TRUE(podIsTerminal(pod));
}

TEST(PodTest, NewPodEncodesWhatItSets) {
  Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespaceName = "ns";
  pod.spec.containers.push_back(Container{});
  pod.spec.containers[0].name = "c";
  pod.spec.containers[0].image = "busybox";
  pod.spec.containers[0].resources.limits["nvidia.com/gpu"] = "1";
  pod.spec.dnsSearches = {"x.ns.svc.cluster.local"};
  EXPECT_EQ(encodePod(pod), parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "busybox",
                             "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
             "dnsConfig": {"searches": ["x.ns.svc.cluster.local"]}}})"));
}

TEST(PodTest, WrongTypesNameThePath) {
  auto error = [](std::string_view text) {
    return decodePod(Json::parse(text)).status().message();
  };
  EXPECT_EQ(error(R"({"spec": {"containers": [{"name": "a", "resources": {"requests": []}}]}})"),
            "spec.containers[0].resources.requests: expected an object");
  EXPECT_EQ(error(R"({"spec": {"containers": [{}, {"resources": {"limits": {"cpu": true}}}]}})"),
            "spec.containers[1].resources.limits.cpu: expected a quantity (a string or a number)");
  EXPECT_EQ(error(R"({"spec": {"priority": 3000000000}})"), "spec.priority: integer out of range");
  EXPECT_EQ(error(R"({"spec": {"priority": 1.5}})"), "spec.priority: expected an integer");
  EXPECT_EQ(error(R"({"status": {"containerStatuses": [{"state": {"running": 1}}]}})"),
            "status.containerStatuses[0].state.running: expected an object");
  EXPECT_EQ(error(R"({"kind": "Node"})"), "kind: expected Pod, got \"Node\"");
  EXPECT_EQ(error(R"({"spec": []})"), "spec: expected an object");
  EXPECT_EQ(error(R"({"spec": {"initContainers": [3]}})"),
            "spec.initContainers[0]: expected an object");
  EXPECT_EQ(decodePod(Json("pod")).status().code(), StatusCode::kInvalidArgument);
}

TEST(PodTest, NumericQuantitiesAreKeptAsWritten) {
  // The API server's Quantity.UnmarshalJSON takes numbers too.
  const Json in = parse(R"({"spec": {"containers": [{"resources": {"requests": {"cpu": 2,
                           "memory": 1.5}}}]}})");
  const Pod pod = *decodePod(in);
  EXPECT_EQ(pod.spec.containers[0].resources.requests.at("cpu"), "2");
  EXPECT_EQ(*podRequestMilli(pod, "memory"), 1500);
  Json expected = in;
  expected["apiVersion"] = "v1";
  expected["kind"] = "Pod";
  EXPECT_EQ(encodePod(pod), expected);
}

Pod podWithResources(std::string_view specJson) {
  return *decodePod(Json::parse(R"({"spec": )" + std::string(specJson) + "}"));
}

TEST(PodRequestTest, SumOfContainersAgainstLargestInitContainer) {
  // computePodResourceRequest: max(sum(containers), max(initContainers)) + overhead.
  const Pod pod = podWithResources(R"({
    "initContainers": [{"resources": {"requests": {"cpu": "3", "nvidia.com/gpu": "1"}}},
                       {"resources": {"requests": {"cpu": "500m"}}}],
    "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                   {"resources": {"requests": {"cpu": "1500m", "memory": "512Mi"}}}],
    "overhead": {"cpu": "250m"}})");
  EXPECT_EQ(*podRequestMilli(pod, "cpu"), 3250);  // init 3 > sum 2.5, plus overhead
  EXPECT_EQ(*podRequest(pod, "cpu"), 4);          // per container: 1 + 2, vs 3, + 1
  EXPECT_EQ(*podRequest(pod, "memory"), 1610612736);
  EXPECT_EQ(*podRequest(pod, "nvidia.com/gpu"), 1);
  EXPECT_EQ(*podRequest(pod, "example.com/fpga"), 0);
}

TEST(PodRequestTest, LimitsStandInForMissingRequests) {
  // SetDefaults_Pod copies limits into absent requests; a request given stays.
  const Pod pod = podWithResources(R"({"containers": [
    {"resources": {"limits": {"nvidia.com/gpu": "4", "cpu": "8"}, "requests": {"cpu": "2"}}},
    {"resources": {"limits": {"nvidia.com/gpu": "2"}}}]})");
  EXPECT_EQ(*podRequest(pod, "nvidia.com/gpu"), 6);
  EXPECT_EQ(*podRequest(pod, "cpu"), 2);
}

TEST(PodRequestTest, BadQuantitiesAndOverflowAreErrors) {
  EXPECT_EQ(podRequest(podWithResources(R"({"containers": [{"resources": {"requests":
            {"nvidia.com/gpu": "two"}}}]})"),
                       "nvidia.com/gpu")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(podRequest(podWithResources(R"({"containers": [
            {"resources": {"requests": {"memory": "7Ei"}}},
            {"resources": {"requests": {"memory": "7Ei"}}}]})"),
                       "memory")
                .status()
                .code(),
            StatusCode::kOutOfRange);
}

// --- Node -------------------------------------------------------------------------------------

TEST(NodeTest, RealObjectRoundTripsAndDecodes) {
  const Json in = parse(testing::kGpuNodeJson);
  const StatusOr<Node> node = decodeNode(in);
  ASSERT_TRUE(node.isOk()) << node.status().toString();
  EXPECT_EQ(encodeNode(*node), in) << Json::diff(in, encodeNode(*node)).dump(1);
  EXPECT_EQ(node->metadata.name, "gpu-node-001");
  EXPECT_EQ(node->providerID, "kubeslurm-sim://gpu-node-001");
  EXPECT_FALSE(node->unschedulable);
  ASSERT_EQ(node->taints.size(), 1U);
  EXPECT_EQ(node->taints[0].effect, "NoSchedule");
  EXPECT_EQ(node->allocatable.at("cpu"), "95500m");
  EXPECT_EQ(node->capacity.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(nodeReadyStatus(*node), "True");
  EXPECT_EQ(node->conditions[3].lastHeartbeatTime, *parseTimestamp("2026-11-21T09:59:40Z"));
  ASSERT_EQ(node->addresses.size(), 2U);
  EXPECT_EQ(node->addresses[0].first, "InternalIP");
  EXPECT_EQ(node->addresses[0].second, "10.0.1.17");
}

TEST(NodeTest, CordonAndTaintChangeOnlyThoseFields) {
  const Json in = parse(testing::kGpuNodeJson);
  Node node = *decodeNode(in);
  node.unschedulable = true;
  node.taints.push_back(Taint{"node.kubernetes.io/unschedulable", "", "NoSchedule"});
  const Json out = encodeNode(node);
  EXPECT_EQ(changedPaths(in, out),
            (std::vector<std::string>{"/spec/taints/-", "/spec/unschedulable"}));
  EXPECT_EQ(out["spec"]["taints"][1],
            parse(R"({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})"));
  node.conditions[3].status = "Unknown";
  EXPECT_EQ(nodeReadyStatus(node), "Unknown");
  node.conditions.clear();
  EXPECT_EQ(nodeReadyStatus(node), "");
}

// --- The rest ---------------------------------------------------------------------------------

TEST(LeaseTest, MicroTimesRoundTrip) {
  const Json in = parse(R"({
    "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
    "metadata": {"name": "kubeslurm-operator", "namespace": "kubeslurm-system",
                 "resourceVersion": "901", "creationTimestamp": "2026-11-21T09:00:00Z"},
    "spec": {"holderIdentity": "operator-0_3f2a", "leaseDurationSeconds": 15,
             "acquireTime": "2026-11-21T09:00:00.123456Z",
             "renewTime": "2026-11-21T10:00:02.654321Z", "leaseTransitions": 2}})");
  Lease lease = *decodeLease(in);
  EXPECT_EQ(encodeLease(lease), in);
  EXPECT_EQ(lease.holderIdentity, "operator-0_3f2a");
  EXPECT_EQ(lease.leaseDurationSeconds, 15);
  EXPECT_EQ(lease.acquireTime, 1795251600123456);
  EXPECT_EQ(lease.leaseTransitions, 2);
  lease.renewTime = *lease.renewTime + 2'000'000;
  const Json out = encodeLease(lease);
  EXPECT_EQ(out["spec"]["renewTime"], "2026-11-21T10:00:04.654321Z");
  EXPECT_EQ(changedPaths(in, out), std::vector<std::string>{"/spec/renewTime"});
  EXPECT_EQ(decodeLease(parse(R"({"spec": {"renewTime": "2026-11-21"}})"))
                .status()
                .message()
                .rfind("spec.renewTime: ", 0),
            0U);
}

TEST(EventTest, CoreV1EventRoundTrips) {
  const Json in = parse(R"({
    "kind": "Event", "apiVersion": "v1",
    "metadata": {"name": "train-llm-x7k2p.17a8b9c0d1e2f3a4", "namespace": "team-a",
                 "uid": "e1", "resourceVersion": "48300",
                 "creationTimestamp": "2026-11-21T10:00:00Z"},
    "involvedObject": {"kind": "SlurmJob", "namespace": "team-a", "name": "train-llm-x7k2p",
                       "uid": "0b9d", "apiVersion": "kubeslurm.io/v1alpha1",
                       "resourceVersion": "48100", "fieldPath": "spec"},
    "reason": "Started", "message": "Job 1042 started on gpu-node-[001-002]",
    "source": {"component": "kubeslurm-operator"},
    "firstTimestamp": "2026-11-21T10:00:00Z", "lastTimestamp": "2026-11-21T10:00:00Z",
    "count": 1, "type": "Normal", "eventTime": null, "reportingComponent": "",
    "reportingInstance": ""})");
  Event event = *decodeEvent(in);
  EXPECT_EQ(encodeEvent(event), in);
  EXPECT_EQ(event.involvedObject.kind, "SlurmJob");
  EXPECT_EQ(event.sourceComponent, "kubeslurm-operator");
  EXPECT_EQ(event.count, 1);
  event.count = 2;
  event.lastTimestamp = *event.lastTimestamp + 60;
  EXPECT_EQ(changedPaths(in, encodeEvent(event)),
            (std::vector<std::string>{"/count", "/lastTimestamp"}));
}

TEST(ServiceTest, HeadlessServiceKeepsNamedTargetPort) {
  const Json in = parse(R"({
    "kind": "Service", "apiVersion": "v1",
    "metadata": {"name": "train-llm-x7k2p", "namespace": "team-a"},
    "spec": {"ports": [{"name": "rendezvous", "protocol": "TCP", "port": 29500,
                        "targetPort": "rendezvous"},
                       {"name": "agent", "protocol": "TCP", "port": 7000, "targetPort": 7000}],
             "selector": {"kubeslurm.io/job": "train-llm-x7k2p"},
             "clusterIP": "None", "clusterIPs": ["None"], "type": "ClusterIP",
             "sessionAffinity": "None", "publishNotReadyAddresses": true},
    "status": {"loadBalancer": {}}})");
  Service service = *decodeService(in);
  EXPECT_EQ(encodeService(service), in);
  EXPECT_EQ(service.clusterIP, "None");
  EXPECT_TRUE(service.publishNotReadyAddresses);
  EXPECT_FALSE(service.ports[0].targetPort);
  EXPECT_EQ(service.ports[1].targetPort, 7000);
  service.ports[1].port = 7001;
  EXPECT_EQ(changedPaths(in, encodeService(service)),
            std::vector<std::string>{"/spec/ports/1/port"});
  EXPECT_FALSE(decodeService(parse(R"({"spec": {"ports": [{"targetPort": true}]}})")).isOk());
}

TEST(NamespaceAndConfigMapTest, RoundTrip) {
  const Json ns = parse(R"({"kind": "Namespace", "apiVersion": "v1",
    "metadata": {"name": "team-a", "labels": {"kubeslurm.io/account": "physics"}},
    "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})");
  const Namespace decoded = *decodeNamespace(ns);
  EXPECT_EQ(decoded.phase, "Active");
  EXPECT_EQ(encodeNamespace(decoded), ns);

  const Json cm = parse(R"({"kind": "ConfigMap", "apiVersion": "v1",
    "metadata": {"name": "job-1042-script", "namespace": "team-a"},
    "data": {"batch": "#!/bin/bash\nsrun hostname\n"}, "binaryData": {"blob": "AAE="}})");
  ConfigMap map = *decodeConfigMap(cm);
  EXPECT_EQ(map.data.at("batch"), "#!/bin/bash\nsrun hostname\n");
  EXPECT_EQ(encodeConfigMap(map), cm);
  map.data["env"] = "A=1";
  EXPECT_EQ(changedPaths(cm, encodeConfigMap(map)), std::vector<std::string>{"/data/env"});
  EXPECT_EQ(decodeConfigMap(parse(R"({"data": {"x": 1}})")).status().message(),
            "data.x: expected a string");
}

}  // namespace
}  // namespace kubeslurm::api
