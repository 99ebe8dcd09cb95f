#!/usr/bin/env bash
# Smoke test of the sandbox's real control plane (sandbox/sandbox, docs/sandbox.md):
# build (cached), `sandbox up` in a temporary dir, use it with kubectl and curl, `sandbox down`,
# and check that no process it started is left. Exits non-zero on any failure.
#
#   tests/integration/sandbox_smoke.sh   KEEP=1 keeps the sandbox dir for a post-mortem;
#                                        KUBESLURM_BIN_DIR=DIR tests other binaries
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SANDBOX=$ROOT/sandbox/sandbox

step() { printf '\n--- %s\n' "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

if [ -n "${KUBESLURM_BIN_DIR:-}" ]; then
  BIN=$KUBESLURM_BIN_DIR   # binaries from elsewhere (e.g. to check a different build)
else
  step "build (cached after the first run)"
  BIN=$("$ROOT/sandbox/build-control-plane.sh" | tail -n1)
  export KUBESLURM_BIN_DIR=$BIN
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-sandbox-smoke.XXXXXX")
DIR=$(cd "$DIR" && pwd -P)
k() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" --request-timeout=20s "$@"; }

# Processes whose command line names the sandbox dir (everything `sandbox up` starts does).
leftovers() {
  local p cmd
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    cmd=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") 2>/dev/null || continue
    [[ $cmd == *"$DIR/"* ]] && echo "${p#/proc/} $cmd"
  done
  return 0
}

finish() {
  local rc=$?
  trap - EXIT
  if [ $rc -ne 0 ]; then
    echo "=== smoke test failed (rc $rc); component logs (tails):" >&2
    for f in "$DIR"/logs/*.log; do
      [ -f "$f" ] || continue
      echo "--- $f" >&2
      # A Go crash's first lines say more than the tail of its goroutine dump.
      grep -m 5 -A 3 -E '^(fatal error|panic:|F[0-9]{4} )' "$f" >&2 || tail -n 15 "$f" >&2
    done
  fi
  [ "${DOWN_DONE:-0}" = 1 ] || "$SANDBOX" down --dir "$DIR" >&2 || true
  if [ -n "$(leftovers)" ]; then
    echo "FAIL: processes left after sandbox down:" >&2
    leftovers >&2
    rc=1
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $DIR" >&2; else rm -rf "$DIR"; fi
  [ $rc -eq 0 ] && echo "PASS: sandbox smoke test" >&2
  exit $rc
}
trap finish EXIT

step "sandbox up --dir $DIR"
t0=$(date +%s%3N)
KUBECONFIG_PATH=$("$SANDBOX" up --dir "$DIR")
echo "warm start: $(($(date +%s%3N) - t0)) ms" >&2
[ "$KUBECONFIG_PATH" = "$DIR/kubeconfig" ] || fail "up printed '$KUBECONFIG_PATH', expected $DIR/kubeconfig"
"$SANDBOX" status --dir "$DIR" >&2 || fail "status says not all up"
eval "$("$SANDBOX" env --dir "$DIR")"
[ "$KUBECONFIG" = "$DIR/kubeconfig" ] || fail "env: KUBECONFIG=$KUBECONFIG"

step "kubectl version / get ns"
k version --short >&2 || fail "kubectl version"
k version -o json | grep -q '"gitVersion": "v1.20.2"' || fail "server is not v1.20.2"
k get ns >&2
k get ns default kube-system kube-public kube-node-lease >/dev/null || fail "system namespaces missing"

step "namespace, and its default service account (token controller at work)"
k create namespace smoke >&2
for _ in $(seq 1 100); do
  k -n smoke get serviceaccount default -o 'jsonpath={.secrets[0].name}' 2>/dev/null | grep -q . && break
  sleep 0.1
done
k -n smoke get serviceaccount default -o 'jsonpath={.secrets[0].name}' | grep -q . ||
  fail "no token for smoke/default service account"

step "CRD + custom object: schema validation, status subresource, server-side apply"
k apply -f - >&2 <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.smoke.kubeslurm.io
spec:
  group: smoke.kubeslurm.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              owner: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
EOF
k wait --for condition=established --timeout=30s crd/widgets.smoke.kubeslurm.io >&2
k -n smoke apply -f - >&2 <<'EOF'
apiVersion: smoke.kubeslurm.io/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3, owner: "smoke test ✓"}
EOF
k -n smoke get wdg >&2
[ "$(k -n smoke get widget w1 -o 'jsonpath={.spec.size}')" = 3 ] || fail "custom object round trip"
if k -n smoke apply -f - >/dev/null 2>&1 <<'EOF'
apiVersion: smoke.kubeslurm.io/v1
kind: Widget
metadata: {name: bad}
spec: {size: 0}
EOF
then fail "schema validation accepted size 0"; fi
# The status subresource over plain HTTPS with the static admin token.
curl -sf --cacert "$KUBESLURM_CA_FILE" -H "Authorization: Bearer $KUBESLURM_TOKEN" \
  -X PATCH -H 'Content-Type: application/merge-patch+json' -d '{"status":{"phase":"Ready"}}' \
  "$KUBESLURM_APISERVER/apis/smoke.kubeslurm.io/v1/namespaces/smoke/widgets/w1/status" >/dev/null ||
  fail "status patch with the token"
[ "$(k -n smoke get widget w1 -o 'jsonpath={.status.phase}')" = Ready ] || fail "status phase"
# Server-side apply on a custom resource (the operator's write path).
k -n smoke apply --server-side --field-manager=smoke -f - >&2 <<'EOF'
apiVersion: smoke.kubeslurm.io/v1
kind: Widget
metadata: {name: w2}
spec: {size: 5}
EOF
k -n smoke delete widget w1 w2 >&2

step "pretty JSON and YAML responses (the json-iterator/reflect2 fix)"
# With the json-iterator 1.1.10 / reflect2 1.0.1 that Kubernetes 1.20 vendors, built with
# Go >= 1.18, the API server dies (SIGSEGV in reflect2 UnsafeMapType.UnsafeIterate, from
# jsoniter's sortKeysMapEncoder) on the first pretty-printed or YAML response that holds a
# map: here, a namespace's labels. build-control-plane.sh swaps in Debian's fixed versions.
k label namespace smoke kubeslurm.io/smoke=yes >&2
api_get() {
  curl -sf --max-time 10 --cacert "$KUBESLURM_CA_FILE" -H "Authorization: Bearer $KUBESLURM_TOKEN" "$@"
}
api_get "$KUBESLURM_APISERVER/api/v1/namespaces/smoke?pretty=true" | grep -q '"kubeslurm.io/smoke": "yes"' ||
  fail "pretty JSON GET of a labelled namespace"
api_get -H 'Accept: application/yaml' "$KUBESLURM_APISERVER/api/v1/namespaces/smoke" |
  grep -q 'kubeslurm.io/smoke: "yes"' || fail "YAML GET of a labelled namespace"
api_get "$KUBESLURM_APISERVER/readyz" | grep -qx ok || fail "kube-apiserver not ready after pretty/YAML GETs"

step "a Node created by hand (no kubelet), a pod bound to it, a pod the scheduler places"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
k apply -f - >&2 <<EOF
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-0
  labels: {kubernetes.io/hostname: gpu-node-0, kubeslurm.io/simulated: "true"}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: simulated,
     lastHeartbeatTime: "$now", lastTransitionTime: "$now"}
EOF
[ "$(k get node gpu-node-0 -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}')" = 8 ] ||
  fail "node allocatable GPUs"
k -n smoke apply -f - >&2 <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: bound}
spec:
  nodeName: gpu-node-0
  containers:
  - {name: main, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}
---
apiVersion: v1
kind: Pod
metadata: {name: scheduled}
spec:
  containers:
  - {name: main, image: busybox, resources: {requests: {cpu: 100m}}}
EOF
[ "$(k -n smoke get pod bound -o 'jsonpath={.spec.nodeName}')" = gpu-node-0 ] || fail "bound pod"
node=
for _ in $(seq 1 100); do
  node=$(k -n smoke get pod scheduled -o 'jsonpath={.spec.nodeName}')
  [ -n "$node" ] && break
  sleep 0.2
done
[ "$node" = gpu-node-0 ] || fail "kube-scheduler did not place pod 'scheduled' (nodeName='$node')"
k -n smoke get pods -o wide >&2
# Without a kubelet nothing confirms a graceful stop: delete with grace period 0.
k -n smoke delete pod bound scheduled --grace-period=0 --force >&2 2>&1
k -n smoke get pods -o name | grep -q . && fail "pods still present after forced delete"
k delete node gpu-node-0 >&2
k delete namespace smoke --wait=false >&2

step "sandbox down"
"$SANDBOX" down --dir "$DIR" >&2
DOWN_DONE=1
[ -z "$(leftovers)" ] || { leftovers >&2; fail "processes left after sandbox down"; }
"$SANDBOX" status --dir "$DIR" >/dev/null 2>&1 && fail "status says up after down"
exit 0
