#!/usr/bin/env bash
# Job arrays at sweep size (issue 20's benchmark): ARRAYS held arrays of TASKS one-GPU tasks each,
# submitted with the real sbatch to kubeslurm-operator (--max-array-size TASKS+1) on a sandbox of
# 8 simulated 8-GPU nodes. It measures, and asserts nothing:
#   tests/bench/scale/array_sweep.sh BUILD_DIR [--arrays 10] [--tasks 10000] [--settle 20]
# - how long each sbatch takes to return its array id (it waits for the operator to assign it);
# - SlurmJobs in the namespace right after the last sbatch, and once the operator has made what
#   it makes (after --settle seconds): tasks wait in their array's record, up to 256 per array
#   as SlurmJobs (ReconcilerOptions::arrayWaitingTasks);
# - the operator's mean cycle and plan time (its /metrics histograms) over 10 s with the arrays
#   pending, against 5 s of idle cycles before the first submission, in the same run, and the
#   slowest cycles it logged while tasks were made;
# - its VmRSS and VmHWM (/proc/PID/status).
# It ends with one line of JSON. BUILD_DIR holds bin/kubeslurm-operator, bin/kubeslurm-nodesim
# and bin/sbatch. About two minutes here (2 cores).
set -euo pipefail

usage() {
  sed -n '5p' "$0" >&2
  exit 2
}

[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
ARRAYS=10
TASKS=10000
SETTLE=20
while [ $# -gt 0 ]; do
  case $1 in
    --arrays) ARRAYS=$2; shift 2 ;;
    --tasks) TASKS=$2; shift 2 ;;
    --settle) SETTLE=$2; shift 2 ;;
    *) usage ;;
  esac
done

ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=tests/bench/scale/bench_operator.sh
. "$(dirname "$0")/bench_operator.sh"
bench_binaries sbatch
SBATCH=$BUILD/bin/sbatch
TMP=$BENCH_TMP
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
say() { echo "[$(date +%T)] $*"; }
# "cycle_sum cycle_count plan_sum plan_count" from the operator's /metrics.
scrape() {
  curl -fsS "$METRICS_URL" | awk '
    /^kubeslurm_scheduler_cycle_duration_seconds_sum/ { cs = $2 }
    /^kubeslurm_scheduler_cycle_duration_seconds_count/ { cc = $2 }
    /^kubeslurm_scheduler_plan_duration_seconds_sum/ { ps = $2 }
    /^kubeslurm_scheduler_plan_duration_seconds_count/ { pc = $2 }
    END { print cs + 0, cc + 0, ps + 0, pc + 0 }'
}
# The mean cycle and plan time (ms) over WINDOW seconds: "cycle plan cycles".
window_means() {
  local a b
  a=$(scrape)
  sleep "$1"
  b=$(scrape)
  echo "$a $b" | awk '{ n = $6 - $2; m = $8 - $4
    printf "%.1f %.1f %d\n", n ? 1000 * ($5 - $1) / n : 0, m ? 1000 * ($7 - $3) / m : 0, n }'
}

say "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
bench_sandbox_up 8x8-2leaf "$TMP/up.log"
kubectl create namespace sweep > /dev/null
kubectl apply -f - > /dev/null << EOF
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: batch
spec:
  nodes: gpu-[001-008]
  default: true
EOF
say "sandbox up: 8 nodes of 8 GPUs"

LOG=$TMP/operator.log
bench_start_operator "$LOG" --max-array-size $((TASKS + 1)) --webhook-bind-address 0 \
  --grpc-bind-address 0
read -r IDLE_CYCLE IDLE_PLAN IDLE_COUNT < <(window_means 5)
say "operator leads; idle: mean cycle $IDLE_CYCLE ms, plan $IDLE_PLAN ms ($IDLE_COUNT cycles)"

printf '#!/bin/sh\n#SBATCH --gres=gpu:1\nsleep 60\n' > "$TMP/shard.sbatch"
FROM=$(($(wc -l < "$LOG") + 1))
SUBMIT_TIMES=()
for a in $(seq "$ARRAYS"); do
  t0=$(now)
  id=$("$SBATCH" --namespace sweep --parsable --hold --array=0-$((TASKS - 1)) \
    --job-name "shards-$a" "$TMP/shard.sbatch")
  SUBMIT_TIMES+=("$(elapsed "$t0" "$(now)")")
  say "array $a: id $id in ${SUBMIT_TIMES[-1]} s"
done
OBJECTS_AT_SUBMIT=$(kubectl -n sweep get sj --no-headers 2> /dev/null | wc -l)
say "SlurmJobs right after the last sbatch: $OBJECTS_AT_SUBMIT"
sleep "$SETTLE"
OBJECTS=$(kubectl -n sweep get sj --no-headers | wc -l)
read -r PENDING_CYCLE PENDING_PLAN PENDING_COUNT < <(window_means 10)
RSS=$(awk '/^VmRSS/ { print $2 }' "/proc/$OP_PID/status")
HWM=$(awk '/^VmHWM/ { print $2 }' "/proc/$OP_PID/status")
say "SlurmJobs after ${SETTLE} s: $OBJECTS; with the arrays pending: mean cycle $PENDING_CYCLE ms," \
  "plan $PENDING_PLAN ms ($PENDING_COUNT cycles); operator VmRSS $((RSS / 1024)) MiB, VmHWM $((HWM / 1024)) MiB"
echo "slowest cycles while tasks were made:"
{ tail -n +"$FROM" "$LOG" | grep -E ' cycle [0-9.]+ ms' | sort -t' ' -k4 -g -r | head -3 |
  cut -c1-200 | sed 's/^/    /'; } || true # head closes the pipe early

printf '{"arrays":%d,"tasks_per_array":%d,"sbatch_s":[%s],"slurmjobs_after_sbatch":%d,' \
  "$ARRAYS" "$TASKS" "$(IFS=,; echo "${SUBMIT_TIMES[*]}")" "$OBJECTS_AT_SUBMIT"
printf '"slurmjobs_settled":%d,"idle_cycle_ms":%s,"idle_plan_ms":%s,"pending_cycle_ms":%s,' \
  "$OBJECTS" "$IDLE_CYCLE" "$IDLE_PLAN" "$PENDING_CYCLE"
printf '"pending_plan_ms":%s,' "$PENDING_PLAN"
printf '"operator_rss_mib":%d,"operator_hwm_mib":%d}\n' "$((RSS / 1024))" "$((HWM / 1024))"
