// The admission webhook from the body up: an AdmissionReview as anyone reaching the port could
// send it, decoded within limits (webhook/admission_review.h), then every handler the operator
// registers (controllers/submission_rules.h: mutate and validate SlurmJobs, validate Partitions,
// Accounts and rank-labelled pods), then the answer encoded. Whatever the bytes: a value or a
// refusal, no exception, no abort, within the chart's memory and a fraction of the API server's 10
// s webhook timeout (-rss_limit_mb=512 -timeout=2, tests/fuzz/limits).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controllers/submission_rules.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/webhook/admission_review.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

namespace api = kubeslurm::api;
namespace controllers = kubeslurm::controllers;
namespace webhook = kubeslurm::webhook;
using api::Json;
using kubeslurm::Status;
using kubeslurm::StatusCode;
using kubeslurm::fuzz::check;

// RBAC as a small cluster would answer: "admin" is an administrator, "bot" may not create pods,
// and the dry run refuses privileged pods (as Pod Security would).
class Checks final : public controllers::SubmissionChecks {
 public:
  Status mayCreatePods(const kubeslurm::access::Identity& user, const std::string&) override {
    return user.user == "bot" ? Status(StatusCode::kPermissionDenied, "no") : Status::ok();
  }
  Status isAdmin(const kubeslurm::access::Identity& user, const std::string&) override {
    return user.user == "admin" ? Status::ok() : Status(StatusCode::kPermissionDenied, "no");
  }
  Status dryRunPod(const api::Pod& pod) override {
    return pod.raw.dump().find("privileged") == std::string::npos
               ? Status::ok()
               : Status(StatusCode::kInvalidArgument, "violates PodSecurity");
  }
};

template <typename T>
T ok(kubeslurm::StatusOr<T> value) {
  check(value.isOk());
  return std::move(value).value();
}

const std::vector<api::Partition>& partitions() {
  static const std::vector<api::Partition> list = {
      ok(api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                               {"kind", "Partition"},
                               {"metadata", {{"name", "train"}}},
                               {"spec",
                                {{"nodes", "gpu-[1-4]"},
                                 {"default", true},
                                 {"allowedAccounts", {"nlp"}},
                                 {"podPolicy", {{"serviceAccounts", {"trainer"}}}}}}}))};
  return list;
}

const std::vector<api::Account>& accounts() {
  static const std::vector<api::Account> list = {
      ok(api::decodeAccount({{"apiVersion", "kubeslurm.io/v1alpha1"},
                             {"kind", "Account"},
                             {"metadata", {{"name", "nlp"}}},
                             {"spec", {{"namespaces", {"team-a"}}, {"users", {"alice"}}}}}))};
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);  // NOLINT
  webhook::ReviewLimits limits;
  limits.maxBytes = std::size_t{1} << 20;  // keeps libFuzzer's inputs in range of the real limit
  auto request = webhook::decodeAdmissionReview(body, limits);
  if (!request.isOk()) {
    check(request.status().code() == StatusCode::kInvalidArgument ||
          request.status().code() == StatusCode::kResourceExhausted);
    return 0;
  }
  controllers::AdmissionOptions admission;
  admission.defaultImage = "busybox:1.36";
  admission.toolsImage = "kubeslurm/kubeslurm-tools:fuzz";
  // Names and features for hostile --nodelist, --exclude and --constraint to be checked against.
  const auto nodes = [] {
    return controllers::NodeCatalog{{"gpu-1", "gpu-2", "gpu-3", "gpu-4"}, {"a100", "ib"}};
  };
  const controllers::SubmissionContext context{
      partitions(), accounts(), 4,    "system:serviceaccount:kubeslurm:operator",
      admission,    {},         nodes};
  Checks checks;

  const webhook::AdmissionResponse mutated = controllers::mutateSlurmJob(*request, context);
  check(mutated.allowed);  // the mutating webhook stamps; refusing is the validator's
  webhook::AdmissionRequest stamped = *request;
  if (!mutated.patch.empty()) {
    // The API server applies the patch to the object it sent: it must apply.
    stamped.object = request->object.patch(mutated.patch);
    check(stamped.object["spec"]["user"].is_string());
  }
  const std::vector<webhook::AdmissionResponse> answers = {
      mutated, controllers::validateSlurmJob(stamped, context, checks),
      controllers::validatePartition(*request), controllers::validateAccount(*request),
      controllers::validateLabelledPod(*request, context.operatorUser)};
  for (const webhook::AdmissionResponse& answer : answers) {
    // A refusal says why, in a message the API server will pass on whole.
    if (!answer.allowed) check(!answer.message.empty() && answer.message.size() <= (64 << 10));
    const std::string text = webhook::encodeAdmissionReview(*request, answer);
    auto back = Json::parse(text, nullptr, false);
    check(!back.is_discarded() && back["response"]["uid"] == request->uid);
  }
  return 0;
}
