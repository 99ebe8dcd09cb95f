#!/usr/bin/env bash
# Operator at scale: gang scheduling throughput and latency of kubeslurm-operator on a sandbox of
# 1,000 simulated 8-GPU nodes, against the sandbox's kube-scheduler v1.20.2 in the same run.
#
#   tests/bench/scale/operator_scale.sh BUILD_DIR [--nodes 1000] [--gpus 8] [--leaves 8]
#       [--gangs 200] [--ranks 4] [--fast-qps 1000,2000|none] [--threads 16] [--timeout 300]
#       [--binding-phase] [--in-cycle-phase] [--operator-args 'ARGS'] [--keep-logs DIR]
#       [--latency-loads 25,50,80 [--latency-gangs N]]
#
# BUILD_DIR holds bin/kubeslurm-operator and bin/kubeslurm-nodesim ($KUBESLURM_NODESIM wins;
# `ninja -C BUILD_DIR -j2 kubeslurm-operator kubeslurm-nodesim` if one is missing). The
# control-plane binaries come from ${KUBESLURM_CACHE:-~/.cache/kubeslurm}/bin (KUBESLURM_BIN_DIR
# wins). The helper operator_scale.py (beside this script, Python 3, no packages) talks to the
# API server with the sandbox's admin token: it creates objects on --threads connections and
# watches the pods, so times are this machine's clock in ms, not kubectl's 1 s timestamps.
#
# Phases, on one sandbox (`sandbox up --nodes NxG-Lleaf`, timed; always `sandbox down --purge`):
#   operator       kubeslurm-operator with its default client limit (qps 200, burst 400);
#                  --gangs SlurmJobs of --ranks nodes x --gpus GPUs (all fit at once) are created,
#                  clock from the first POST to the watch event after which all their rank pods
#                  are bound at once (a bound pod deleted or Failed again stops counting; the
#                  summary says how many did and the namespace's Warning events).
#   kube-scheduler the operator stopped, the same number of plain pods (--gpus GPUs each,
#                  schedulerName default-scheduler; the sandbox's scheduler has qps 100 / burst
#                  200), clock from the first POST to the last bind: creation is included in both.
#   operator-fast  (unless --fast-qps none) a fresh operator with --kube-api-qps/--kube-api-burst.
#   operator-binding (with --binding-phase) the operator phase again with --gang-placement
#                  binding (pods created unbound, then bound), to compare with the default
#                  create placement (one write per rank) in the same run.
#   operator-at-P% (with --latency-loads) the operator phase again with open-loop arrivals: gangs
#                  submitted at P% of the pods/s the first operator phase measured (one every
#                  RANKS * 100 / (P * pods/s) seconds, whatever became of the ones before), each
#                  gang's submit -> all ranks bound reported as p50/p99 (--latency-gangs gangs,
#                  default --gangs; each holds its nodes for the phase, so at most nodes/ranks).
#                  The summary's p99_bound_ms_at_50pct is the 50% phase's p99.
#   operator-in-cycle (with --in-cycle-phase) the operator phase again with --admissions
#                  in-cycle (each cycle waits for its own admissions), to compare with the default
#                  background admissions (controllers/assumed_gangs.h) in the same run.
# Between phases every SlurmJob and pod is deleted (pods with grace 0) and the lists are empty.
# After each operator phase, with its pods still there: VmRSS/VmHWM from /proc/PID/status, and
# the means of its cycle/plan/gang-admission histograms from /metrics. Each phase also counts the
# API server's own requests (its apiserver_request_total) from the first create until every pod
# is bound and, for SlurmJobs, every job RUNNING: API writes per pod by verb and resource; and
# the CPU seconds the API server, etcd, the controllers, the simulator and the operator used in
# that window (/proc/PID/stat), to show which of them is the limit. The
# report ends with one line of JSON to compare runs by. Measures; asserts nothing.
set -euo pipefail

usage() {
  sed -n '4,6p' "$0" >&2
  exit 2
}

[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
NODES=1000
GPUS=8
LEAVES=8
GANGS=200
RANKS=4
FAST_QPS=1000,2000
THREADS=16
TIMEOUT=300
KEEP_LOGS=
BINDING_PHASE=
IN_CYCLE_PHASE=
LATENCY_LOADS=
LATENCY_GANGS=
OPERATOR_ARGS=
PLACEMENT=create
ADMISSIONS=background
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --gpus) GPUS=$2; shift 2 ;;
    --leaves) LEAVES=$2; shift 2 ;;
    --gangs) GANGS=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --fast-qps) FAST_QPS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --keep-logs) KEEP_LOGS=$2; shift 2 ;;
    --binding-phase) BINDING_PHASE=1; shift ;;
    --in-cycle-phase) IN_CYCLE_PHASE=1; shift ;;
    --latency-loads) LATENCY_LOADS=$2; shift 2 ;;
    --latency-gangs) LATENCY_GANGS=$2; shift 2 ;;
    --operator-args) OPERATOR_ARGS=$2; shift 2 ;;
    *) usage ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
HELPER=$HERE/operator_scale.py
# shellcheck source=tests/bench/scale/bench_operator.sh
. "$HERE/bench_operator.sh"
# shellcheck disable=SC2119 # no binaries beyond the operator and the simulator
bench_binaries
TMP=$BENCH_TMP
cleanup() {
  set +e
  bench_stop_operator
  if [ -n "$KEEP_LOGS" ]; then
    mkdir -p "$KEEP_LOGS" && cp "$TMP"/*.log "$TMP"/*.json "$KEEP_LOGS"/ 2> /dev/null
  fi
  bench_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "[$(date +%T)] $*"; }

# start_operator LOG [QPS BURST]: starts the operator (bench_start_operator) with this run's
# placement, admissions and extra arguments.
start_operator() {
  local log=$1 qps=${2:-} burst=${3:-} extra=()
  [ -z "$qps" ] || extra=(--kube-api-qps "$qps" --kube-api-burst "$burst")
  # shellcheck disable=SC2206 # --operator-args is split into words on purpose
  [ -z "$OPERATOR_ARGS" ] || extra+=($OPERATOR_ARGS)
  bench_start_operator "$log" --gang-placement "$PLACEMENT" --admissions "$ADMISSIONS" \
    "${extra[@]+"${extra[@]}"}"
}

# operator_phase LABEL NAMESPACE [QPS BURST]; PHASE_RATE (gangs/s, open loop), PHASE_LOAD (its
# share of capacity, %) and PHASE_COUNT (gangs) when set.
operator_phase() {
  local label=$1 ns=$2 log=$TMP/$1.log out=$TMP/$1.json count=${PHASE_COUNT:-$GANGS} open=()
  [ -z "${PHASE_RATE:-}" ] || open=(--rate "$PHASE_RATE" --load-pct "$PHASE_LOAD")
  say "$label: starting the operator${3:+ (--kube-api-qps $3 --kube-api-burst $4)}"
  start_operator "$log" "${3:-}" "${4:-}"
  say "$label: submitting $count SlurmJobs of $RANKS x $GPUS GPUs${PHASE_RATE:+, $PHASE_RATE a second}"
  python3 "$HELPER" submit --kind slurmjob --namespace "$ns" --count "$count" --ranks "$RANKS" \
    --gpus "$GPUS" --threads "$THREADS" --timeout "$TIMEOUT" --out "$out" \
    --cpu "$(cpu_pids),operator=$OP_PID" "${open[@]+"${open[@]}"}" > /dev/null ||
    echo "$label: not every pod was bound (see the summary)" >&2
  python3 "$HELPER" annotate "$out" --label "$label (qps ${3:-200}, burst ${4:-400}, $PLACEMENT, $ADMISSIONS)" \
    --pid "$OP_PID" --metrics-url "$METRICS_URL" --log "$log"
  PHASES+=("$out")
  bench_stop_operator # first: it would admit gangs of jobs being deleted
  say "$label: cleaning up"
  python3 "$HELPER" cleanup --namespace "$ns" --timeout 180
  # Warnings and errors before the operator was told to stop (SIGTERM logs "leadership lost").
  if sed '/^[^ ]* I stopping$/q' "$log" | grep -E '^[^ ]+ [WEC] ' > "$TMP/$label.warnings"; then
    echo "$label: $(wc -l < "$TMP/$label.warnings") warning/error lines in the operator log, e.g.:"
    sort -k2 "$TMP/$label.warnings" | cut -c1-220 | awk '{ k = $2 " " $3 " " $4; if (!seen[k]++) print "    " $0 }' | head -8 || true
  fi
  echo "$label: slowest cycles:"
  grep -E ' cycle [0-9.]+ ms' "$log" | sort -t' ' -k4 -g -r | head -3 | cut -c1-220 | sed 's/^/    /' || true
}

# The sandbox's processes whose CPU each phase reports: NAME=PID,...
cpu_pids() {
  local name pid out=
  for name in kube-apiserver etcd kube-controller-manager kube-scheduler kubeslurm-nodesim; do
    pid=$(cat "$DIR/run/$name.pid" 2> /dev/null) || continue
    out+="${out:+,}$name=$pid"
  done
  echo "$out"
}

wait_sa() {
  local ns=$1
  for _ in $(seq 100); do
    [ -n "$(kubectl -n "$ns" get sa default -o jsonpath='{.secrets[0].name}' 2> /dev/null)" ] && return 0
    sleep 0.2
  done
  echo "namespace $ns: no default service account token" >&2
  exit 1
}

T_START=$(now)
say "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
SHAPE=${NODES}x${GPUS}-${LEAVES}leaf
t0=$(now)
bench_sandbox_up "$SHAPE" "$TMP/up.log"
UP_SECS=$(elapsed "$t0" "$(now)")
say "sandbox up --nodes $SHAPE: $UP_SECS s"

# Node names as the simulator makes them (kubeslurm/nodesim/shape.cc): gpu-001.., at least 3 digits.
WIDTH=$((${#NODES} > 3 ? ${#NODES} : 3))
HOSTLIST=$(printf "gpu-[%0${WIDTH}d-%0${WIDTH}d]" 1 "$NODES")
READY=$(kubectl get nodes --no-headers | awk '$2 == "Ready"' | wc -l)
say "$READY nodes Ready ($(kubectl get nodes --no-headers | head -1 | cut -d' ' -f1) ..), partition nodes $HOSTLIST"

kubectl apply -f - > /dev/null << EOF
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: batch
spec:
  nodes: $HOSTLIST
  default: true
  topology:
    labelKeys: [kubeslurm.io/spine, kubeslurm.io/leaf]
EOF
NAMESPACES=(bench-op bench-ks bench-op-fast bench-op-binding bench-op-in-cycle)
IFS=, read -r -a LOADS <<< "$LATENCY_LOADS"
for pct in "${LOADS[@]+"${LOADS[@]}"}"; do NAMESPACES+=("bench-op-load-$pct"); done
for ns in "${NAMESPACES[@]}"; do kubectl create namespace "$ns" > /dev/null; done
for ns in "${NAMESPACES[@]}"; do wait_sa "$ns"; done

PHASES=()
operator_phase operator bench-op

say "kube-scheduler: creating $((GANGS * RANKS)) pods of $GPUS GPUs"
python3 "$HELPER" submit --kind pod --namespace bench-ks --count $((GANGS * RANKS)) \
  --gpus "$GPUS" --threads "$THREADS" --timeout "$TIMEOUT" --out "$TMP/kube-scheduler.json" \
  --cpu "$(cpu_pids)" > /dev/null ||
  echo "kube-scheduler: not every pod was bound (see the summary)" >&2
python3 "$HELPER" annotate "$TMP/kube-scheduler.json" --label "kube-scheduler (qps 100, burst 200)"
PHASES+=("$TMP/kube-scheduler.json")
say "kube-scheduler: cleaning up"
python3 "$HELPER" cleanup --namespace bench-ks --timeout 180

if [ "$FAST_QPS" != none ]; then
  operator_phase operator-fast bench-op-fast "${FAST_QPS%,*}" "${FAST_QPS#*,}"
fi

if [ -n "$BINDING_PHASE" ]; then
  PLACEMENT=binding
  operator_phase operator-binding bench-op-binding
  PLACEMENT=create
fi

if [ -n "$IN_CYCLE_PHASE" ]; then
  ADMISSIONS=in-cycle
  operator_phase operator-in-cycle bench-op-in-cycle
  ADMISSIONS=background
fi

if [ ${#LOADS[@]} -gt 0 ]; then
  capacity=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pods_per_s"] or 0)' \
    "$TMP/operator.json")
  for pct in "${LOADS[@]}"; do
    PHASE_LOAD=$pct PHASE_COUNT=${LATENCY_GANGS:-$GANGS} \
      PHASE_RATE=$(awk -v c="$capacity" -v p="$pct" -v r="$RANKS" 'BEGIN { printf "%.3f", c * p / 100 / r }') \
      operator_phase "operator-at-$pct%" "bench-op-load-$pct"
  done
fi

python3 "$HELPER" report --nodes "$NODES" "${PHASES[@]}"
echo "sandbox up --nodes $SHAPE: $UP_SECS s; total $(elapsed "$T_START" "$(now)") s;" \
  "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
