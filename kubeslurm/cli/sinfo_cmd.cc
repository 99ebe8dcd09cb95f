// `sinfo`, and the node reads scontrol and sacct share (cluster_nodes.h): lists the Partitions, the
// Nodes and every pod (all namespaces: a node's load is whoever runs there) and prints them through
// sinfo_format.h.
#include <algorithm>
#include <ostream>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/cli/cluster_nodes.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sinfo_format.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::cli {

namespace {

template <typename T, typename Decode>
std::vector<T> decodeItems(const kube::Json& list, Decode decode) {
  std::vector<T> out;
  if (!list.contains("items") || !list["items"].is_array()) return out;
  for (const kube::Json& item : list["items"]) {
    auto decoded = decode(item);
    if (decoded.isOk()) out.push_back(std::move(decoded).value());
  }
  return out;
}

}  // namespace

StatusOr<ClusterNodes> loadClusterNodes(kube::Reader& reader) {
  ClusterNodes cluster;
  auto partitions = kube::listAll(reader, kube::resources::partitions(), "", kube::ListOptions{});
  if (!partitions.isOk()) return partitions.status();
  cluster.partitions = decodeItems<api::Partition>(*partitions, api::decodePartition);
  auto nodes = loadNodes(reader);
  if (!nodes.isOk()) return nodes.status();
  cluster.nodes = std::move(nodes).value();
  auto pods = kube::listAll(reader, kube::resources::pods(), "", kube::ListOptions{});
  if (!pods.isOk()) return pods.status();
  const std::vector<api::Pod> all = decodeItems<api::Pod>(*pods, api::decodePod);
  for (const api::Node& node : cluster.nodes) {
    std::vector<api::Pod> bound;
    for (const api::Pod& pod : all) {
      if (pod.spec.nodeName == node.metadata.name) bound.push_back(pod);
    }
    cluster.facts.push_back(nodeFacts(node, bound));
  }
  return cluster;
}

StatusOr<std::vector<api::Node>> loadNodes(kube::Reader& reader) {
  auto list = kube::listAll(reader, kube::resources::nodes(), "", kube::ListOptions{});
  if (!list.isOk()) return list.status();
  std::vector<api::Node> nodes = decodeItems<api::Node>(*list, api::decodeNode);
  std::ranges::sort(nodes, [](const api::Node& a, const api::Node& b) {
    return slurm::naturalCompare(a.metadata.name, b.metadata.name) < 0;
  });
  return nodes;
}

std::optional<std::uint64_t> firstNodeMemoryMb(const api::PartitionSpec& partition,
                                               const std::vector<api::Node>& nodes) {
  const std::vector<std::string> members = partitionNodeNames(partition, nodes);
  if (members.empty()) return std::nullopt;
  const auto first =
      std::ranges::find(nodes, members.front(), [](const api::Node& n) { return n.metadata.name; });
  const std::int64_t mb = nodeFacts(*first, {}).memoryMb;
  return mb > 0 ? std::optional<std::uint64_t>(mb) : std::nullopt;
}

int runSinfoWith(const std::vector<std::string>& args, CliIo& io, const Connector& connect) {
  std::vector<std::string> sinfoArgs = args;
  auto flags = takeKubeFlags(sinfoArgs, /*allowAllNamespaces=*/false);
  if (!flags.isOk()) {
    io.err << "sinfo: error: " << flags.status().message() << "\n";
    return 1;
  }
  const SinfoParse parse = parseSinfoArgs(sinfoArgs);
  if (parse.exit) {
    return emit(*parse.exit, io);
  }
  auto session = connect(*flags, io);
  if (!session.isOk()) {
    io.err << "sinfo: error: " << session.status().message() << "\n";
    return 1;
  }
  auto cluster = loadClusterNodes(*session->reader);
  if (!cluster.isOk()) {
    if (cluster.status().code() == StatusCode::kUnavailable) {
      io.err << "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n";
    }
    io.err << "sinfo: error: " << cluster.status().message() << "\n";
    return 1;
  }
  SinfoContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  const CommandOutput output =
      formatSinfo(cluster->partitions, cluster->nodes, cluster->facts, parse.options, context);
  return emit(output, io);
}

int runSinfo(const std::vector<std::string>& args, CliIo& io) {
  return runSinfoWith(args, io, kubeConnector());
}

}  // namespace kubeslurm::cli
