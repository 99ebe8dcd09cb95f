// kubeslurm/api codecs: any JSON decodes as each kind to a value or an error Status, never an
// exception or a crash. For every successful decode, encoding is idempotent: decode(encode(v))
// succeeds and encodes to the same JSON. The quantity and timestamp parsers take the raw bytes;
// whatever they accept formats back to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::StatusOr;
using kubeslurm::api::Json;

using kubeslurm::fuzz::check;

template <typename Decode, typename Encode>
void checkIdempotent(const Json& in, Decode decode, Encode encode) {
  auto first = decode(in);
  if (!first.isOk()) return;
  const Json once = encode(*first);
  auto second = decode(once);
  check(second.isOk());
  check(encode(*second) == once);
}

void checkKinds(const Json& in) {
  using namespace kubeslurm::api;  // NOLINT(google-build-using-namespace)
  checkIdempotent(in, decodeNode, encodeNode);
  checkIdempotent(in, decodePod, encodePod);
  checkIdempotent(in, decodeService, encodeService);
  checkIdempotent(in, decodeEvent, encodeEvent);
  checkIdempotent(in, decodeNamespace, encodeNamespace);
  checkIdempotent(in, decodeConfigMap, encodeConfigMap);
  checkIdempotent(in, decodeLease, encodeLease);
  checkIdempotent(in, decodePartition, encodePartition);
  checkIdempotent(in, decodeAccount, encodeAccount);
  // Both overloads: a job decoded from text (copied) and one sharing a stored object.
  checkIdempotent(
      in, [](const Json& object) { return decodeSlurmJob(object); }, encodeSlurmJob);
  checkIdempotent(
      in, [](const Json& object) { return decodeSlurmJob(std::make_shared<const Json>(object)); },
      encodeSlurmJob);
  if (const StatusOr<Pod> pod = decodePod(in); pod.isOk()) {
    for (const char* resource : {"cpu", "memory", "nvidia.com/gpu"}) {
      (void)podRequest(*pod, resource);
      (void)podRequestMilli(*pod, resource);
    }
    (void)podIsTerminal(*pod);
  }
  if (in.is_object() && in.contains("metadata")) {
    const StatusOr<ObjectMeta> meta = decodeObjectMeta(in["metadata"]);
    if (meta.isOk()) {
      Json out = in["metadata"];
      encodeObjectMeta(*meta, out);
      check(out == in["metadata"]);  // nothing changed, so nothing is rewritten
    }
  }
}

void checkScalars(std::string_view text) {
  using namespace kubeslurm::api;  // NOLINT(google-build-using-namespace)
  (void)parseQuantityMilli(text);
  (void)parseQuantityValue(text);
  if (const StatusOr<std::int64_t> t = parseTimestamp(text); t.isOk()) {
    const StatusOr<std::int64_t> again = parseTimestamp(formatTimestamp(*t));
    check(again.isOk() && *again == *t);
  }
  if (const StatusOr<std::int64_t> t = parseMicroTime(text); t.isOk()) {
    const StatusOr<std::int64_t> again = parseMicroTime(formatMicroTime(*t));
    check(again.isOk() && *again == *t);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  checkScalars(text);
  const Json in = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (in.is_discarded()) return 0;
  checkKinds(in);
  // The same object with each kind's type removed, so that every decoder reads every input.
  if (in.is_object() && (in.contains("kind") || in.contains("apiVersion"))) {
    Json untyped = in;
    untyped.erase("kind");
    untyped.erase("apiVersion");
    checkKinds(untyped);
  }
  return 0;
}
