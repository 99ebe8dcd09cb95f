// Informer caches -> ReconcileInput, decoding each object once per version.
//
// Decoding every cached pod on every cycle would cost the scheduling loop time proportional to
// the cluster (about 30 µs per pod), although between two cycles few objects change. The
// operator's informers decode each object as they store it (the holders below), and the view
// keeps each record beside the stored object it came with, taking (or, for an object stored as
// JSON, decoding) again only what the store replaced; objects gone from the caches are dropped
// from it. A read hands the cycle the view's records themselves (SharedList), not copies.
//
// Pods and nodes are most of what the operator caches (every one of the cluster, each a JSON tree
// several times the size of its text), and the controllers read a small part of each: who owns a
// pod, where it is bound, what it requests, how its containers ended; a node's labels, taints,
// capacity and readiness. leanPod() and leanNode() keep that part as the informers store them,
// and the view keeps decoded pods and nodes without their `raw` JSON, which only encoding needs:
// the operator never encodes a pod or node it read from the cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "controllers/reconciler.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/kube/object_store.h"

namespace kubeslurm::controllers {

// The pod informer's transform: keeps of a pod what decodePod needs for the fields the
// controllers read, and drops the rest (managedFields, env, volumes, probes, affinity, ...):
//   metadata  identity, resourceVersion, times, labels, owner references, finalizers, and the
//             operator's own annotations (kubeslurm.io/...), not a user's
//   spec      nodeName, schedulerName, priority, restartPolicy, hostname, subdomain, overhead,
//             and each container's name and resources (what the scheduler's fit counts)
//   status    as written (phase, reasons, container states and exit codes)
// Anything that is not a JSON object is left alone for decodePod to refuse.
void leanPod(api::Json& pod);

// The node informer's transform, in the same spirit: identity, labels, spec.unschedulable,
// taints and providerID, and status.capacity, allocatable, conditions and addresses. Not a
// kubelet's images, nodeInfo, volumes or daemon endpoints, nor any annotation but ours.
void leanNode(api::Json& node);

// The SlurmJob informer's transform: managedFields dropped, spec.script (a non-empty string)
// replaced by kScriptNotCached (job_object.h). Anything else is left for decodeSlurmJob to judge.
void leanSlurmJob(api::Json& job);

// The informers' holders (kube::Holder), after the transforms above: each object decoded once
// per version, on the reflector thread, and held as that typed record, with as JSON only what
// nothing reads from a record. Held as JSON trees, SlurmJobs were most of the operator's memory
// (a tree is about twice its text: 4.2 KB a job in operator_cache_bench, with the decoded job
// beside it), and nodes and pods were twice over (the tree in the store, the record in the view).
//   SlurmJob  the record; the store points at the record's `raw`, which keeps only what the
//             codec does not model (api::dropModelledFields: the metadata whole, conditions, a
//             pod template). Code that reads a cached job's spec or status reads the record.
//   Node, Pod the record without its `raw` (dropRaw); the store points at the kind and metadata.
// An object that does not decode is held whole, for the view to report (jobs) or skip.
kube::ObjectPtr holdSlurmJob(api::Json&& job);
kube::ObjectPtr holdNode(api::Json&& node);
kube::ObjectPtr holdPod(api::Json&& pod);

// The record a holder stored `object` with; nullptr for an object held as JSON.
std::shared_ptr<api::SlurmJobObject> heldSlurmJob(const kube::ObjectPtr& object);
std::shared_ptr<api::Node> heldNode(const kube::ObjectPtr& object);
std::shared_ptr<api::Pod> heldPod(const kube::ObjectPtr& object);

// A decoded object without its `raw` JSON at any depth.
void dropRaw(api::Node& node);
void dropRaw(api::Pod& pod);

// A decoded object and the stored object it was decoded from. An informer's store never changes
// an object it holds: a change is a new object, so the stored object's address names one version
// of it, and holding `source` keeps that address from being reused while the entry lives.
template <typename Record>
struct ViewEntry {
  kube::ObjectPtr source;
  Record record;
  std::uint64_t pass = 0;  // the last read that saw it
};

template <typename Record>
struct ViewCache {
  std::unordered_map<const nlohmann::json*, ViewEntry<Record>> entries;  // by source
  std::uint64_t passes = 0;                                              // reads so far
};

struct ViewStats {
  std::size_t decoded = 0;  // objects decoded by the last read()
  std::size_t reused = 0;   // objects taken from the view unchanged
  std::size_t failed = 0;   // objects that did not decode (undecodable jobs are reported)
};

class ClusterView {
 public:
  // Not thread-safe: one reader (the scheduling loop).
  ReconcileInput read(const kube::ObjectStore& nodes, const kube::ObjectStore& pods,
                      const kube::ObjectStore& jobs, const kube::ObjectStore& partitions,
                      const kube::ObjectStore& accounts);
  ViewStats stats() const { return stats_; }

 private:
  // Nodes, pods and jobs are handed to each cycle, not copied (SharedList); partitions and
  // accounts are few.
  ViewCache<std::shared_ptr<api::Node>> nodes_;
  ViewCache<std::shared_ptr<api::Pod>> pods_;
  ViewCache<std::shared_ptr<api::SlurmJobObject>> jobs_;
  ViewCache<api::Partition> partitions_;
  ViewCache<api::Account> accounts_;
  ViewStats stats_;
};

}  // namespace kubeslurm::controllers
