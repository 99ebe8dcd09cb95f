#!/usr/bin/env bash
# How long a job step takes to launch and how fast its output comes back, through the in-pod
# runtime: two `kubeslurm-inpod step-agent`s on this host as a job's two ranks, then `srun true`
# ROUNDS x RUNS times, with a fork+exec of /bin/true measured in the same round as the baseline,
# and one 200 MB output relay. Reports figures; asserts nothing.
#
#   tests/bench/step/step_launch.sh build/bin/kubeslurm-inpod [RUNS] [ROUNDS]
set -euo pipefail

BIN=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-bench-tools.XXXXXX")
# shellcheck source=tests/support/inpod_tools.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../support/inpod_tools.sh"
inpod_tools "$(realpath "$1")" "$BIN"
RUNS=${2:-20}
ROUNDS=${3:-3}
while :; do
  P0=$((20000 + RANDOM % 12000))
  P1=$((P0 + 1))
  (exec 3<> "/dev/tcp/127.0.0.1/$P0") 2>/dev/null || (exec 3<> "/dev/tcp/127.0.0.1/$P1") 2>/dev/null || break
done
export PATH="$BIN:$PATH" SLURM_JOB_ID=5 SLURM_JOB_NODELIST='n-[0-1]' SLURM_JOB_NUM_NODES=2
export SLURM_NNODES=2 SLURM_NTASKS=2 SLURM_CPUS_ON_NODE=2 KUBESLURM_STEP_TOKEN=bench
export KUBESLURM_STEP_AGENTS="127.0.0.1:$P0,127.0.0.1:$P1"
"$BIN/kubeslurm-inpod" step-agent --listen "127.0.0.1:$P0" &
A0=$!
"$BIN/kubeslurm-inpod" step-agent --listen "127.0.0.1:$P1" &
A1=$!
trap 'kill $A0 $A1 2>/dev/null; wait 2>/dev/null || true; rm -rf "$BIN"' EXIT
srun true  # waits for both agents to answer

now_ns() { date +%s%N; }
for round in $(seq "$ROUNDS"); do
  start=$(now_ns)
  for _ in $(seq "$RUNS"); do srun true; done
  step_us=$((($(now_ns) - start) / RUNS / 1000))
  start=$(now_ns)
  for _ in $(seq "$RUNS"); do /bin/true; done
  base_us=$((($(now_ns) - start) / RUNS / 1000))
  echo "round $round: srun true on 2 ranks ${step_us} us/step; fork+exec of /bin/true ${base_us} us"
done
start=$(now_ns)
bytes=$(srun -n 2 bash -c 'head -c 100000000 /dev/zero' | wc -c)
echo "relayed $bytes bytes of task output in $((($(now_ns) - start) / 1000000)) ms"
