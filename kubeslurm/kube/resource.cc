#include "kubeslurm/kube/resource.h"

namespace kubeslurm::kube {

std::string ResourceType::apiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

namespace resources {
ResourceType configMaps() { return {"", "v1", "configmaps", true}; }
ResourceType pods() { return {"", "v1", "pods", true}; }
ResourceType services() { return {"", "v1", "services", true}; }
ResourceType secrets() { return {"", "v1", "secrets", true}; }
ResourceType networkPolicies() { return {"networking.k8s.io", "v1", "networkpolicies", true}; }
ResourceType nodes() { return {"", "v1", "nodes", false}; }
ResourceType namespaces() { return {"", "v1", "namespaces", false}; }
ResourceType events() { return {"", "v1", "events", true}; }
ResourceType leases() { return {"coordination.k8s.io", "v1", "leases", true}; }
ResourceType customResourceDefinitions() {
  return {"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
}
ResourceType slurmJobs() { return {"kubeslurm.io", "v1alpha1", "slurmjobs", true}; }
ResourceType partitions() { return {"kubeslurm.io", "v1alpha1", "partitions", false}; }
ResourceType accounts() { return {"kubeslurm.io", "v1alpha1", "accounts", false}; }
}  // namespace resources

std::string percentEncode(std::string_view text) {
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(c);
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out.push_back('%');
    out.push_back(kHex[byte >> 4U]);
    out.push_back(kHex[byte & 0xFU]);
  }
  return out;
}

std::string resourcePath(const ResourceType& type, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  std::string path =
      type.group.empty() ? "/api/" + type.version : "/apis/" + type.group + "/" + type.version;
  if (type.namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += percentEncode(ns);
  }
  path += '/';
  path += type.plural;
  if (!name.empty()) {
    path += '/';
    path += percentEncode(name);
    if (!subresource.empty()) {
      path += '/';
      path += subresource;
    }
  }
  return path;
}

std::string withQuery(std::string path, const QueryParams& params) {
  char separator = '?';
  for (const auto& [key, value] : params) {
    path += separator;
    path += percentEncode(key);
    path += '=';
    path += percentEncode(value);
    separator = '&';
  }
  return path;
}

}  // namespace kubeslurm::kube
