#include "kubeslurm/api/shared_json.h"

#include <utility>

namespace kubeslurm::api {

SharedJson::SharedJson(nlohmann::json document)
    : document_(std::make_shared<nlohmann::json>(std::move(document))), owned_(true) {}

SharedJson::SharedJson(std::shared_ptr<const nlohmann::json> document)
    : document_(std::move(document)) {}

nlohmann::json& SharedJson::edit() {
  if (!document_ || !owned_ || document_.use_count() != 1) {
    document_ = std::make_shared<nlohmann::json>(document_ ? *document_ : empty());
    owned_ = true;
  }
  // Made above or by the constructor as a non-const object, and held by nobody else.
  return const_cast<nlohmann::json&>(*document_);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

const nlohmann::json& SharedJson::empty() {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return kEmpty;
}

}  // namespace kubeslurm::api
