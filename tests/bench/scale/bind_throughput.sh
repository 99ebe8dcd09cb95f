#!/usr/bin/env bash
# Bind throughput: our Client::bind at several parallelisms against kube-scheduler v1.20.2,
# on a sandbox of its own (docs/sandbox.md, "Bind throughput").
#
#   tests/bench/scale/bind_throughput.sh BUILD_DIR [--nodes 100] [--gpus 8] [--leaves 4]
#       [--pods 800] [--parallelism 1,4,16,64] [--repeat 3] [--up-nodes '1000 ...']
#       [-- HARNESS_FLAGS...]
#
# BUILD_DIR holds bin/bind_throughput and bin/kubeslurm-nodesim ($KUBESLURM_NODESIM wins).
# The control-plane binaries come from ${KUBESLURM_CACHE:-~/.cache/kubeslurm}/bin
# (KUBESLURM_BIN_DIR wins; if neither exists, `sandbox up` builds them first).
# The script times its `sandbox up`, runs the harness, and always runs `sandbox down --purge`.
# Baselines: the sandbox's kube-scheduler as it runs there (client limit --kube-api-qps 100
# --kube-api-burst 200), and a second kube-scheduler, the same v1.20.2 binary started here with
# the same credentials but qps/burst 100000 and its own schedulerName ("unlimited"): the first
# is what a sandbox user sees, the second what the scheduler does without its client limit.
# --up-nodes N...: afterwards, also time `sandbox up --nodes Nx8` on a fresh dir for each N
# (the benchmark's sandbox is down by then), and take it down again.
set -euo pipefail

usage() {
  sed -n '4,7p' "$0" >&2
  exit 2
}

[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
NODES=100
GPUS=8
LEAVES=4
PODS=800
PARALLELISM=1,4,16,64
REPEAT=3
UP_NODES=""
HARNESS_ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --gpus) GPUS=$2; shift 2 ;;
    --leaves) LEAVES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --parallelism) PARALLELISM=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --up-nodes) UP_NODES=$2; shift 2 ;;
    --) shift; HARNESS_ARGS=("$@"); break ;;
    *) usage ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SANDBOX=$ROOT/sandbox/sandbox
HARNESS=$BUILD/bin/bind_throughput
NODESIM=${KUBESLURM_NODESIM:-$BUILD/bin/kubeslurm-nodesim}
CACHE_BIN=${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}/bin
if [ -z "${KUBESLURM_BIN_DIR:-}" ] && [ -x "$CACHE_BIN/kube-apiserver" ]; then
  export KUBESLURM_BIN_DIR=$CACHE_BIN
fi
for f in "$HARNESS" "$NODESIM"; do
  [ -x "$f" ] || { echo "missing $f (ninja -C $BUILD bind_throughput kubeslurm-nodesim)" >&2; exit 2; }
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bind-throughput.XXXXXX")
STARTED=()
FAST_PID=
UP_SECS=
cleanup() {
  local dir
  set +e
  if [ -n "$FAST_PID" ]; then
    kill "$FAST_PID" 2> /dev/null
    wait "$FAST_PID" 2> /dev/null
  fi
  for dir in "${STARTED[@]}"; do
    "$SANDBOX" down --dir "$dir" --purge > /dev/null 2>&1 || echo "sandbox down failed: $dir" >&2
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# up DIR NODES: starts a sandbox with NODES simulated nodes; UP_SECS = the seconds `up` took.
# (Not run in $(...): STARTED must be updated in this shell for the trap.)
up() {
  local dir=$1 nodes=$2 shape t0 t1
  shape=${nodes}x${GPUS}-${LEAVES}leaf
  STARTED+=("$dir")
  t0=$(now)
  if ! "$SANDBOX" up --dir "$dir" --nodes "$shape" --nodesim-binary "$NODESIM" \
    > "$TMP/up-$nodes.log" 2>&1; then
    cat "$TMP/up-$nodes.log" >&2
    return 1
  fi
  t1=$(now)
  UP_SECS=$(elapsed "$t0" "$t1")
}

down() {
  local dir=$1 kept=() d
  "$SANDBOX" down --dir "$dir" --purge > /dev/null 2>&1
  for d in "${STARTED[@]}"; do [ "$d" = "$dir" ] || kept+=("$d"); done
  STARTED=("${kept[@]+"${kept[@]}"}")
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
UP_TIMES=()
DIR=$TMP/sandbox
up "$DIR" "$NODES"
UP_TIMES+=("${NODES}x${GPUS}-${LEAVES}leaf: ${UP_SECS} s")
echo "sandbox up --nodes ${NODES}x${GPUS}-${LEAVES}leaf: ${UP_SECS} s"

# The unlimited scheduler: secure serving off, /healthz (plain HTTP) on a free loopback port.
BIN=${KUBESLURM_BIN_DIR:-$CACHE_BIN}
FAST_NAME=kubeslurm-bench-unlimited
FAST_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$TMP/unlimited-scheduler.yaml" << EOF
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $DIR/run/scheduler.kubeconfig
  qps: 100000
  burst: 100000
leaderElection:
  leaderElect: false
healthzBindAddress: 127.0.0.1:$FAST_PORT
metricsBindAddress: 127.0.0.1:$FAST_PORT
profiles:
- schedulerName: $FAST_NAME
EOF
"$BIN/kube-scheduler" --config "$TMP/unlimited-scheduler.yaml" --secure-port 0 --v 1 \
  > "$TMP/unlimited-scheduler.log" 2>&1 < /dev/null &
FAST_PID=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$FAST_PORT/healthz" > /dev/null 2>&1 && break
  if ! kill -0 "$FAST_PID" 2> /dev/null; then
    echo "the unlimited kube-scheduler exited:" >&2
    tail -5 "$TMP/unlimited-scheduler.log" >&2
    exit 1
  fi
  sleep 0.2
done
sleep 1 # /healthz answers before its informers have synced

"$HARNESS" --kubeconfig "$DIR/kubeconfig" --pods "$PODS" --parallelism "$PARALLELISM" \
  --repeat "$REPEAT" \
  --baseline "kube-scheduler=default-scheduler:$(cat "$DIR/run/kube-scheduler.pid")" \
  --baseline "unlimited=$FAST_NAME:$FAST_PID" \
  "${HARNESS_ARGS[@]+"${HARNESS_ARGS[@]}"}"
kill "$FAST_PID" 2> /dev/null || true
wait "$FAST_PID" 2> /dev/null || true
FAST_PID=
down "$DIR"

for n in $UP_NODES; do
  d=$TMP/up-$n
  up "$d" "$n"
  UP_TIMES+=("${n}x${GPUS}-${LEAVES}leaf: ${UP_SECS} s")
  echo "sandbox up --nodes ${n}x${GPUS}-${LEAVES}leaf: ${UP_SECS} s"
  down "$d"
done

echo
echo "sandbox up (warm: control-plane binaries cached; fresh dir; returns when every node is Ready):"
for line in "${UP_TIMES[@]}"; do echo "  --nodes $line"; done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
