// Objects as a v1.20.2 kube-apiserver returns them to a GET (managedFields, defaulted fields,
// status written by the kubelet and the node controller), for round-trip tests and benchmarks.
#pragma once

#include <string_view>

namespace kubeslurm::api::testing {

// A rank pod of a 2-node job: one init container, one GPU container, Running.
inline constexpr std::string_view kRunningPodJson = R"json({
  "kind": "Pod",
  "apiVersion": "v1",
  "metadata": {
    "name": "train-llm-x7k2p-0",
    "generateName": "train-llm-x7k2p-",
    "namespace": "team-a",
    "uid": "6f1c2b8e-0d0a-4b5e-9c7e-2f0d1e3a4b5c",
    "resourceVersion": "48213",
    "creationTimestamp": "2026-11-21T10:00:00Z",
    "labels": {
      "app.kubernetes.io/managed-by": "kubeslurm",
      "kubeslurm.io/job": "train-llm-x7k2p",
      "kubeslurm.io/rank": "0"
    },
    "annotations": {
      "kubeslurm.io/job-id": "1042",
      "kubernetes.io/psp": "restricted"
    },
    "ownerReferences": [
      {
        "apiVersion": "kubeslurm.io/v1alpha1",
        "kind": "SlurmJob",
        "name": "train-llm-x7k2p",
        "uid": "0b9d8c7e-6f5a-4e3d-8c2b-1a0f9e8d7c6b",
        "controller": true,
        "blockOwnerDeletion": true
      }
    ],
    "finalizers": ["kubeslurm.io/gang"],
    "managedFields": [
      {
        "manager": "kubeslurm-operator",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-11-21T10:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
          "f:metadata": {
            "f:generateName": {},
            "f:labels": {".": {}, "f:app.kubernetes.io/managed-by": {}, "f:kubeslurm.io/job": {}},
            "f:ownerReferences": {".": {}, "k:{\"uid\":\"0b9d8c7e-6f5a-4e3d-8c2b-1a0f9e8d7c6b\"}": {}}
          },
          "f:spec": {"f:containers": {"k:{\"name\":\"rank\"}": {".": {}, "f:image": {}}}}
        }
      },
      {
        "manager": "kubelet",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-11-21T10:00:07Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:phase": {}}}
      }
    ]
  },
  "spec": {
    "volumes": [
      {"name": "home", "persistentVolumeClaim": {"claimName": "home"}},
      {
        "name": "default-token-9x8wz",
        "secret": {"secretName": "default-token-9x8wz", "defaultMode": 420}
      }
    ],
    "initContainers": [
      {
        "name": "stage-script",
        "image": "busybox:1.36",
        "command": ["sh", "-c", "cp /script/batch /home/alice/.kubeslurm/1042"],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
        "volumeMounts": [{"name": "home", "mountPath": "/home"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent"
      }
    ],
    "containers": [
      {
        "name": "rank",
        "image": "nvcr.io/nvidia/pytorch:23.10-py3",
        "command": ["/opt/kubeslurm/step-agent"],
        "args": ["--rank", "0"],
        "workingDir": "/home/alice/llm",
        "env": [
          {"name": "SLURM_JOB_ID", "value": "1042"},
          {"name": "SLURM_JOB_NODELIST", "value": "train-llm-x7k2p-[0-1]"},
          {"name": "MASTER_ADDR", "value": "train-llm-x7k2p-0"},
          {
            "name": "POD_IP",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}
          }
        ],
        "resources": {
          "limits": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"},
          "requests": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"}
        },
        "ports": [{"name": "rendezvous", "containerPort": 29500, "protocol": "TCP"}],
        "volumeMounts": [
          {"name": "home", "mountPath": "/home"},
          {
            "name": "default-token-9x8wz",
            "readOnly": true,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"
          }
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}
      }
    ],
    "restartPolicy": "Never",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "dnsConfig": {"searches": ["train-llm-x7k2p.team-a.svc.cluster.local"]},
    "nodeSelector": {"kubeslurm.io/partition": "gpu"},
    "serviceAccountName": "default",
    "serviceAccount": "default",
    "nodeName": "gpu-node-001",
    "hostname": "train-llm-x7k2p-0",
    "subdomain": "train-llm-x7k2p",
    "securityContext": {},
    "schedulerName": "kubeslurm",
    "tolerations": [
      {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
      {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300
      },
      {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300
      }
    ],
    "priorityClassName": "kubeslurm-batch",
    "priority": 1000,
    "enableServiceLinks": true,
    "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {
    "phase": "Running",
    "conditions": [
      {
        "type": "Initialized",
        "status": "True",
        "lastProbeTime": null,
        "lastTransitionTime": "2026-11-21T10:00:05Z"
      },
      {
        "type": "Ready",
        "status": "True",
        "lastProbeTime": null,
        "lastTransitionTime": "2026-11-21T10:00:07Z"
      },
      {
        "type": "ContainersReady",
        "status": "True",
        "lastProbeTime": null,
        "lastTransitionTime": "2026-11-21T10:00:07Z"
      },
      {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": null,
        "lastTransitionTime": "2026-11-21T10:00:00Z"
      }
    ],
    "hostIP": "10.0.1.17",
    "podIP": "10.244.3.12",
    "podIPs": [{"ip": "10.244.3.12"}],
    "startTime": "2026-11-21T10:00:01Z",
    "initContainerStatuses": [
      {
        "name": "stage-script",
        "state": {
          "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": "2026-11-21T10:00:03Z",
            "finishedAt": "2026-11-21T10:00:04Z",
            "containerID": "containerd://aa11"
          }
        },
        "lastState": {},
        "ready": true,
        "restartCount": 0,
        "image": "docker.io/library/busybox:1.36",
        "imageID": "docker.io/library/busybox@sha256:5eef",
        "containerID": "containerd://aa11"
      }
    ],
    "containerStatuses": [
      {
        "name": "rank",
        "state": {"running": {"startedAt": "2026-11-21T10:00:06Z"}},
        "lastState": {},
        "ready": true,
        "restartCount": 0,
        "image": "nvcr.io/nvidia/pytorch:23.10-py3",
        "imageID": "nvcr.io/nvidia/pytorch@sha256:9a1f",
        "containerID": "containerd://bb22",
        "started": true
      }
    ],
    "qosClass": "Guaranteed"
  }
})json";

// A GPU node as the kubelet and the node controller leave it.
inline constexpr std::string_view kGpuNodeJson = R"json({
  "kind": "Node",
  "apiVersion": "v1",
  "metadata": {
    "name": "gpu-node-001",
    "uid": "c5a1e2d3-4b5c-6d7e-8f90-a1b2c3d4e5f6",
    "resourceVersion": "48190",
    "creationTimestamp": "2026-11-20T08:00:00Z",
    "labels": {
      "beta.kubernetes.io/arch": "amd64",
      "beta.kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "kubernetes.io/hostname": "gpu-node-001",
      "kubernetes.io/os": "linux",
      "network.example.com/leaf": "leaf1",
      "network.example.com/spine": "spine1",
      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"
    },
    "annotations": {
      "node.alpha.kubernetes.io/ttl": "0",
      "volumes.kubernetes.io/controller-managed-attach-detach": "true"
    },
    "managedFields": [
      {
        "manager": "kubelet",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-11-21T09:59:40Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {"f:allocatable": {"f:nvidia.com/gpu": {}}, "f:conditions": {}}}
      }
    ]
  },
  "spec": {
    "podCIDR": "10.244.3.0/24",
    "podCIDRs": ["10.244.3.0/24"],
    "providerID": "kubeslurm-sim://gpu-node-001",
    "taints": [
      {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
  },
  "status": {
    "capacity": {
      "cpu": "96",
      "ephemeral-storage": "1843230352Ki",
      "hugepages-1Gi": "0",
      "hugepages-2Mi": "0",
      "memory": "2113464428Ki",
      "nvidia.com/gpu": "8",
      "pods": "110"
    },
    "allocatable": {
      "cpu": "95500m",
      "ephemeral-storage": "1698708761445",
      "hugepages-1Gi": "0",
      "hugepages-2Mi": "0",
      "memory": "2112313452Ki",
      "nvidia.com/gpu": "8",
      "pods": "110"
    },
    "conditions": [
      {
        "type": "MemoryPressure",
        "status": "False",
        "lastHeartbeatTime": "2026-11-21T09:59:40Z",
        "lastTransitionTime": "2026-11-20T08:00:10Z",
        "reason": "KubeletHasSufficientMemory",
        "message": "kubelet has sufficient memory available"
      },
      {
        "type": "DiskPressure",
        "status": "False",
        "lastHeartbeatTime": "2026-11-21T09:59:40Z",
        "lastTransitionTime": "2026-11-20T08:00:10Z",
        "reason": "KubeletHasNoDiskPressure",
        "message": "kubelet has no disk pressure"
      },
      {
        "type": "PIDPressure",
        "status": "False",
        "lastHeartbeatTime": "2026-11-21T09:59:40Z",
        "lastTransitionTime": "2026-11-20T08:00:10Z",
        "reason": "KubeletHasSufficientPID",
        "message": "kubelet has sufficient PID available"
      },
      {
        "type": "Ready",
        "status": "True",
        "lastHeartbeatTime": "2026-11-21T09:59:40Z",
        "lastTransitionTime": "2026-11-20T08:00:20Z",
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status"
      }
    ],
    "addresses": [
      {"type": "InternalIP", "address": "10.0.1.17"},
      {"type": "Hostname", "address": "gpu-node-001"}
    ],
    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
    "nodeInfo": {
      "machineID": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
      "systemUUID": "4C4C4544-0042-3510-8052-B4C04F565432",
      "bootID": "a1b2c3d4-e5f6-4788-99aa-bbccddeeff00",
      "kernelVersion": "5.15.0-88-generic",
      "osImage": "Ubuntu 22.04.3 LTS",
      "containerRuntimeVersion": "containerd://1.7.2",
      "kubeletVersion": "v1.20.2",
      "kubeProxyVersion": "v1.20.2",
      "operatingSystem": "linux",
      "architecture": "amd64"
    },
    "images": [
      {"names": ["nvcr.io/nvidia/pytorch@sha256:9a1f", "nvcr.io/nvidia/pytorch:23.10-py3"],
       "sizeBytes": 9876543210}
    ]
  }
})json";

}  // namespace kubeslurm::api::testing
