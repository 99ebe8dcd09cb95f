#!/usr/bin/env bash
# The in-pod runtime as rank pods run it, with real processes on this host: rank 1 runs
# `kubeslurm step-agent`, rank 0 runs its batch script under `kubeslurm batch-step`, and the script
# uses `scontrol show hostnames`, `srun` (foreground, failing, in the background with `wait`) as
# an sbatch script does. Then scancel as the kubelet delivers it: SIGTERM to rank 0's launcher
# must end the script, its srun and the tasks on the other rank. Then --output/--error on the
# shared volume (KUBESLURM_STDOUT/STDERR, as the operator sets them).
#
#   step_runtime_test.sh BIN_DIR     (BIN_DIR holds kubeslurm and its srun/scontrol links)
set -euo pipefail

BIN=$(cd "$1" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-step-e2e.XXXXXX")
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  pkill -KILL -f "$WORK/" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.out "$WORK"/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}

# shellcheck source=tests/support/free_port.sh
. "$(dirname "${BASH_SOURCE[0]}")/../support/free_port.sh"
P0=$(free_port)
P1=$(free_port)
while [ "$P1" = "$P0" ]; do P1=$(free_port); done

# The batch environment the operator gives every rank (kubeslurm/podspec/environment.cc), and
# the agents' addresses: both ranks live on this host, so they differ by port.
export PATH="$BIN:$PATH"
export SLURM_JOB_ID=42 SLURM_JOBID=42 SLURM_JOB_NAME=e2e
export SLURM_JOB_NODELIST='e2e-[0-1]' SLURM_NODELIST='e2e-[0-1]'
export SLURM_JOB_NUM_NODES=2 SLURM_NNODES=2 SLURM_NTASKS=2 SLURM_NPROCS=2
export SLURM_TASKS_PER_NODE='1(x2)' SLURM_CPUS_ON_NODE=2
export KUBESLURM_STEP_TOKEN=e2e-token
export KUBESLURM_STEP_AGENTS="127.0.0.1:$P0,127.0.0.1:$P1"

start_rank1() {
  SLURM_NODEID=1 SLURM_PROCID=1 SLURMD_NODENAME=e2e-1 \
    "$BIN/kubeslurm" step-agent --listen "127.0.0.1:$P1" --kill-wait 2 \
    > "$WORK/rank1.out" 2> "$WORK/rank1.err" &
  RANK1=$!
  PIDS+=("$RANK1")
}
stop_rank1() {
  kill -TERM "$RANK1"
  wait "$RANK1" || fail "rank 1's agent did not end cleanly on SIGTERM"
}

# --- a script as a researcher writes it ----------------------------------------------------
cat > "$WORK/job.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1
cd "$(dirname "$0")"
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
echo "master=$MASTER_ADDR"
srun -l bash -c 'echo "rank $SLURM_PROCID of $SLURM_NTASKS on node $SLURM_NODEID, step $SLURM_STEP_ID"' | sort
srun -N1 -n1 bash -c 'exit 3' || echo "the failing step returned $?"
srun bash -c 'sleep 0.5; echo "slow $SLURM_PROCID"' > slow.txt &
srun bash -c 'echo "fast $SLURM_PROCID"' > fast.txt &
wait
sort slow.txt fast.txt
exit 7
EOF
chmod +x "$WORK/job.sbatch"

start_rank1
set +e
SLURM_NODEID=0 SLURM_PROCID=0 SLURMD_NODENAME=e2e-0 \
  "$BIN/kubeslurm" batch-step --listen "127.0.0.1:$P0" --kill-wait 2 "$WORK/job.sbatch" \
  > "$WORK/batch.out" 2> "$WORK/batch.err"
rc=$?
set -e
[ "$rc" = 7 ] || fail "the job's exit code is the script's (7), got $rc"
expected="master=e2e-0
0: rank 0 of 2 on node 0, step 0
1: rank 1 of 2 on node 1, step 0
the failing step returned 3
fast 0
fast 1
slow 0
slow 1"
[ "$(cat "$WORK/batch.out")" = "$expected" ] ||
  fail "script output differs: $(diff <(echo "$expected") "$WORK/batch.out")"
grep -qx 'srun: error: e2e-0: task 0: Exited with exit code 3' "$WORK/batch.err" ||
  fail "srun did not report the failed task as Slurm does"
stop_rank1
echo "ok: a batch script with foreground, failing and background steps"

# --- scancel: SIGTERM to rank 0's launcher ends the step on every rank -----------------------
cat > "$WORK/long.sbatch" <<EOF
#!/bin/bash
srun bash -c 'echo \$\$ > "$WORK/task.\$SLURM_PROCID"; exec sleep 300'
EOF
chmod +x "$WORK/long.sbatch"
start_rank1
SLURM_NODEID=0 "$BIN/kubeslurm" batch-step --listen "127.0.0.1:$P0" --kill-wait 2 \
  "$WORK/long.sbatch" > "$WORK/long.out" 2> "$WORK/long.err" &
BATCH=$!
PIDS+=("$BATCH")
for _ in $(seq 1 100); do
  [ -s "$WORK/task.0" ] && [ -s "$WORK/task.1" ] && break
  sleep 0.1
done
[ -s "$WORK/task.0" ] && [ -s "$WORK/task.1" ] || fail "the step's tasks did not start on both ranks"
TASKS="$(cat "$WORK/task.0") $(cat "$WORK/task.1")"
kill -TERM "$BATCH"
set +e
wait "$BATCH"
rc=$?
set -e
# The script's shell dies of the SIGTERM (bash, waiting on srun in the foreground).
[ "$rc" -ge 128 ] || [ "$rc" -ne 0 ] || fail "a cancelled job ended with $rc"
alive() { for pid in $TASKS; do kill -0 "$pid" 2>/dev/null && return 0; done; return 1; }
for _ in $(seq 1 50); do alive || break; sleep 0.1; done
! alive || fail "tasks outlived the cancelled job: $(ps -o pid,args -p "${TASKS// /,}")"

stop_rank1
echo "ok: SIGTERM to the batch launcher ended the step on every rank"
# --- --output/--error on the shared volume: the script's and its steps' output in the files ------
mkdir -p "$WORK/shared"
echo "from an earlier run" > "$WORK/shared/slurm-42.out"
cat > "$WORK/files.sbatch" <<'EOF'
#!/bin/bash
echo "batch line"
echo "batch error" >&2
srun -l bash -c 'echo "step line $SLURM_PROCID"; echo "step error $SLURM_PROCID" >&2' | sort
EOF
chmod +x "$WORK/files.sbatch"
start_rank1
SLURM_NODEID=0 KUBESLURM_STDOUT="$WORK/shared/slurm-42.out" \
  KUBESLURM_STDERR="$WORK/shared/slurm-42.err" KUBESLURM_OPEN_MODE=truncate \
  "$BIN/kubeslurm" batch-step --listen "127.0.0.1:$P0" --kill-wait 2 "$WORK/files.sbatch" \
  > "$WORK/files.out" 2> "$WORK/files.err" || fail "the job with output files failed"
[ ! -s "$WORK/files.out" ] && [ ! -s "$WORK/files.err" ] || fail "output reached the pod's log"
[ "$(cat "$WORK/shared/slurm-42.out")" = "batch line
0: step line 0
1: step line 1" ] || fail "stdout file: $(cat "$WORK/shared/slurm-42.out")"
[ "$(sort "$WORK/shared/slurm-42.err")" = "0: step error 0
1: step error 1
batch error" ] || fail "stderr file: $(cat "$WORK/shared/slurm-42.err")"
# A file that cannot be opened fails the job with slurmstepd's message on the pod's log.
set +e
SLURM_NODEID=0 KUBESLURM_STDOUT="$WORK/no-such-dir/slurm-42.out" \
  "$BIN/kubeslurm" batch-step --listen "127.0.0.1:$P0" "$WORK/files.sbatch" \
  > "$WORK/nodir.out" 2> "$WORK/nodir.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "an unopenable output file should fail the job (rc $rc)"
grep -qxF "slurmstepd: error: Could not open stdout file $WORK/no-such-dir/slurm-42.out: No such file or directory" \
  "$WORK/nodir.err" || fail "no slurmstepd message for the unopenable file"
stop_rank1
echo "ok: --output/--error files on the shared volume"
echo "PASS: in-pod runtime"
