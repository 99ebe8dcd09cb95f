#!/usr/bin/env bash
# The shipped images (deploy/docker/*.Dockerfile) built and run for real, with podman (or a docker
# whose daemon answers):
#
#   base      debian:12 and debian:12-slim; where the registry cannot be reached, one image made
#             with debootstrap from Debian's package mirror and tagged as both (KUBESLURM_DEBIAN_IMAGE
#             names another)
#   build     the operator and the in-pod tools images, as docs/deploy.md builds them
#   run       in a sandbox with 8 simulated GPU nodes: the operator image as the chart runs it
#             (uid 65532, read-only root filesystem, no capabilities, no privilege escalation)
#             leads and is ready; the tools image's sbatch submits a 2-node job, the operator
#             runs it to COMPLETED, the tools image's squeue and sacct show it
#
# The node simulator plays the job (`sleep 2`: nodesim runs a pod for the sleeps of its command).
# Long (label `long`): it compiles the project twice inside the build stages, 15-30 min on two
# cores. Not in CI, whose machines have no container engine by default.
#
#   tests/integration/images_test.sh     KEEP=1 keeps the sandbox, the container and the work dir
# Env: KUBESLURM_NODESIM (default build/bin/kubeslurm-nodesim), KUBESLURM_BIN_DIR (control
#      plane; default sandbox/build-control-plane.sh), KUBESLURM_DEBIAN_IMAGE,
#      KUBESLURM_IMAGE_TAG (run images already built with this tag instead of building them).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SANDBOX=$ROOT/sandbox/sandbox
NODESIM=${KUBESLURM_NODESIM:-$ROOT/build/bin/kubeslurm-nodesim}
TAG=${KUBESLURM_IMAGE_TAG:-images-test}
START=$SECONDS
step() { printf '\n--- [%4ss] %s\n' $((SECONDS - START)) "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

ENGINE=""
if command -v docker >/dev/null && docker version >/dev/null 2>&1; then
  ENGINE=docker
elif command -v podman >/dev/null && podman version >/dev/null 2>&1; then
  ENGINE=podman
fi
[ -n "$ENGINE" ] || fail "no container engine: install podman (apt-get install podman runc), or start docker"
[ -x "$NODESIM" ] || fail "no node simulator at $NODESIM (build it, or set KUBESLURM_NODESIM)"

WORK=$(mktemp -d)
SB=$WORK/sandbox
OPERATOR_CONTAINER=kubeslurm-images-test-$$
cleanup() {
  local rc=$?
  if [ "${KEEP:-0}" = 1 ]; then
    echo "kept: $WORK (sandbox $SB, container $OPERATOR_CONTAINER)" >&2
    return
  fi
  "$ENGINE" rm -f "$OPERATOR_CONTAINER" >/dev/null 2>&1 || true
  "$SANDBOX" down --dir "$SB" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${KUBESLURM_IMAGE_TAG:-}" ]; then
step "base image"
BASE=${KUBESLURM_DEBIAN_IMAGE:-}
have() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }
if [ -z "$BASE" ]; then
  if have debian:12 && have debian:12-slim; then
    BASE=debian:12
  elif timeout 120 "$ENGINE" pull -q docker.io/library/debian:12 >/dev/null 2>&1 &&
    timeout 120 "$ENGINE" pull -q docker.io/library/debian:12-slim >/dev/null 2>&1; then
    BASE=debian:12
  elif have localhost/debian:12 && have localhost/debian:12-slim; then
    BASE=localhost/debian:12
  else
    command -v debootstrap >/dev/null || fail "no registry and no debootstrap (apt-get install debootstrap)"
    debootstrap --variant=minbase bookworm "$WORK/rootfs" http://deb.debian.org/debian >&2
    rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb
    tar -C "$WORK/rootfs" -c . | "$ENGINE" import - localhost/debian:12 >/dev/null
    "$ENGINE" tag localhost/debian:12 localhost/debian:12-slim
    rm -rf "$WORK/rootfs"
    BASE=localhost/debian:12
  fi
fi
echo "base: $BASE ($ENGINE)" >&2

for image in operator tools; do
  step "build the $image image"
  "$ENGINE" build --network host --build-arg "DEBIAN_IMAGE=$BASE" \
    -f "$ROOT/deploy/docker/$image.Dockerfile" -t "kubeslurm/kubeslurm-$image:$TAG" "$ROOT" >&2
done
fi
OPERATOR_IMAGE=kubeslurm/kubeslurm-operator:$TAG
TOOLS_IMAGE=kubeslurm/kubeslurm-tools:$TAG

step "sandbox with 8 GPU nodes"
if [ -z "${KUBESLURM_BIN_DIR:-}" ]; then
  KUBESLURM_BIN_DIR=$("$ROOT/sandbox/build-control-plane.sh" | tail -n1)
  export KUBESLURM_BIN_DIR
fi
export KUBESLURM_NODESIM=$NODESIM
"$SANDBOX" up --dir "$SB" --nodes 8x8-2leaf >/dev/null
eval "$("$SANDBOX" env --dir "$SB")"
kubectl apply -f "$ROOT/crds/" >/dev/null
kubectl create namespace kubeslurm-system >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: gpu
spec:
  nodes: gpu-[001-008]
  default: true
EOF
# Readable by uid 65532, as a mounted Secret would be.
install -m 0644 "$KUBECONFIG" "$WORK/kubeconfig"
run_as_pod() {  # the chart's securityContext: restricted, read-only root filesystem
  "$ENGINE" run --network host --read-only --user 65532:65532 --cap-drop ALL \
    --security-opt no-new-privileges -v "$WORK/kubeconfig:/kube/config:ro" \
    -e KUBECONFIG=/kube/config "$@"
}

step "the operator image runs, leads and is ready"
METRICS=$((20000 + RANDOM % 20000))
PROBES=$((METRICS + 1))
run_as_pod -d --name "$OPERATOR_CONTAINER" "$OPERATOR_IMAGE" \
  --namespace kubeslurm-system --metrics-bind-address "127.0.0.1:$METRICS" \
  --health-probe-bind-address "127.0.0.1:$PROBES" >/dev/null
ready=""
for _ in $(seq 60); do
  if [ "$(curl -s "127.0.0.1:$PROBES/readyz" || true)" = ok ]; then ready=1; break; fi
  sleep 1
done
[ -n "$ready" ] || { "$ENGINE" logs "$OPERATOR_CONTAINER" >&2; fail "the operator never became ready"; }
grep -q '^kubeslurm_leader 1' <<<"$(curl -s "127.0.0.1:$METRICS/metrics")" || fail "the operator does not lead"  # not curl | grep -q: SIGPIPE under pipefail

step "the tools image submits a 2-node job; the operator runs it"
printf '#!/bin/sh\n#SBATCH -N 2 --gres=gpu:8 -t 5:00 -J from-image\nsleep 2\n' >"$WORK/job.sbatch"
chmod 0644 "$WORK/job.sbatch"
out=$(run_as_pod --rm -v "$WORK/job.sbatch:/job.sbatch:ro" "$TOOLS_IMAGE" sbatch /job.sbatch)
echo "$out" >&2
id=$(echo "$out" | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p')
[ -n "$id" ] || fail "sbatch printed no job id: $out"
state=""
for _ in $(seq 90); do
  state=$(run_as_pod --rm "$TOOLS_IMAGE" sacct -j "$id" -X -n -P -o State 2>/dev/null | head -n1)
  [ "$state" = COMPLETED ] && break
  sleep 1
done
[ "$state" = COMPLETED ] || { "$ENGINE" logs "$OPERATOR_CONTAINER" | tail -20 >&2; fail "job $id is '$state', not COMPLETED"; }
run_as_pod --rm "$TOOLS_IMAGE" sacct -j "$id" -X -o JobID,JobName,NNodes,State,ExitCode >&2
nodes=$(run_as_pod --rm "$TOOLS_IMAGE" sacct -j "$id" -X -n -P -o NNodes | head -n1)
[ "$nodes" = 2 ] || fail "job $id ran on '$nodes' nodes, not 2"
step "the in-pod tool runs in a bare image"
# What a rank pod's init container does: copy /opt/kubeslurm out of the tools image, then run it
# in the bare base image as the user's image would, as the rank pod's uid, with two ranks of a
# job running the in-pod runtime's scenarios (inpod_rootfs_test.sh runs them in Debian 11 and
# busybox root filesystems without a container engine).
mkdir -p "$WORK/tools"
tools_cid=$("$ENGINE" create "$TOOLS_IMAGE")
"$ENGINE" cp "$tools_cid:/opt/kubeslurm/." "$WORK/tools/"
"$ENGINE" rm "$tools_cid" >/dev/null
! readelf -l "$WORK/tools/bin/kubeslurm-inpod" | grep -q 'program interpreter' ||
  fail "the tools image's kubeslurm-inpod is not static"
. "$ROOT/tests/support/free_port.sh"
P0=$(free_port)
P1=$(free_port)
while [ "$P1" = "$P0" ]; do P1=$(free_port); done
"$ENGINE" run --rm --network host --user 65532:65532 -e P0="$P0" -e P1="$P1" \
  -v "$WORK/tools:/kubeslurm:ro" -v "$ROOT/tests/integration:/t:ro" \
  "${BASE:-${KUBESLURM_DEBIAN_IMAGE:-debian:12}}-slim" \
  sh /t/step_scenarios.sh /kubeslurm/bin >&2 || fail "the runtime does not run in a bare image"
step "images: both built and ran ($((SECONDS - START)) s)"
