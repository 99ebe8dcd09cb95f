// Which REST collection an object lives in, and the URLs of its verbs. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kubeslurm::kube {

// A generic resource: enough to address any built-in or custom resource without a codec.
struct ResourceType {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;
  bool namespaced = true;

  // "group/version" or "v1" for the core group: an object's apiVersion.
  std::string apiVersion() const;
};

// Built-in resources the operator touches.
namespace resources {
ResourceType configMaps();
ResourceType pods();
ResourceType services();
ResourceType secrets();
ResourceType networkPolicies();
ResourceType nodes();
ResourceType namespaces();
ResourceType events();
ResourceType leases();
ResourceType customResourceDefinitions();
// kubeslurm.io/v1alpha1 (crds/).
ResourceType slurmJobs();
ResourceType partitions();
ResourceType accounts();
}  // namespace resources

// /api/v1/namespaces/NS/pods/NAME/SUB or /apis/G/V/...; `ns` ignored for cluster-scoped types;
// an empty `ns` on a namespaced type addresses all namespaces (list and watch only).
std::string resourcePath(const ResourceType& type, std::string_view ns, std::string_view name = {},
                         std::string_view subresource = {});

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string percentEncode(std::string_view text);

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// path?k=v&... with keys and values percent-encoded; no '?' when there are no parameters.
std::string withQuery(std::string path, const QueryParams& params);

}  // namespace kubeslurm::kube
