// Watch framing: the same bytes fed whole and cut at a data-chosen point must give the same
// events and the same resume point; nothing may crash or hang on any input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "kubeslurm/kube/watch_framing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kubeslurm::kube::WatchDecoder whole(/*maxLineBytes=*/1U << 20U);
  std::vector<kubeslurm::kube::WatchEvent> wholeEvents;
  const kubeslurm::Status wholeStatus = whole.feed(text, wholeEvents);
  (void)whole.finish();
  for (const auto& event : wholeEvents) (void)event.errorStatus();

  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  kubeslurm::kube::WatchDecoder split(/*maxLineBytes=*/1U << 20U);
  std::vector<kubeslurm::kube::WatchEvent> splitEvents;
  kubeslurm::Status splitStatus = split.feed(text.substr(0, cut), splitEvents);
  if (splitStatus.isOk()) splitStatus = split.feed(text.substr(cut), splitEvents);
  if (splitEvents.size() != wholeEvents.size()) std::abort();
  if (splitStatus.code() != wholeStatus.code()) std::abort();
  if (split.resourceVersion() != whole.resourceVersion()) std::abort();
  for (std::size_t i = 0; i < splitEvents.size(); ++i) {
    if (splitEvents[i].type != wholeEvents[i].type) std::abort();
  }
  return 0;
}
