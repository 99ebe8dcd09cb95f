#!/bin/sh
# The in-pod runtime as rank pods run it, with real processes: rank 1 runs
# `kubeslurm-inpod step-agent`, rank 0 runs its batch script under `kubeslurm-inpod batch-step`,
# and the script uses `scontrol show hostnames`, `srun` (foreground, failing, in the background
# with `wait`) as an sbatch script does. Then scancel as the kubelet delivers it: SIGTERM to rank
# 0's launcher must end the script, its srun and the tasks on the other rank. Then
# --output/--error on the shared volume (KUBESLURM_STDOUT/STDERR, as the operator sets them).
#
#   P0=PORT P1=PORT [AGENT_HOST0=NAME AGENT_HOST1=NAME] step_scenarios.sh TOOLS_BIN
#
# TOOLS_BIN is what a rank pod's /kubeslurm/bin holds: kubeslurm-inpod and its srun and scontrol
# links. POSIX sh and the tools of busybox, so that the same scenarios run on this host
# (step_runtime_test.sh) and inside a Debian 11 and a busybox-only root filesystem
# (inpod_rootfs_test.sh). The agents listen on 127.0.0.1:P0 and :P1; srun reaches them at
# AGENT_HOST0:P0 and AGENT_HOST1:P1 (127.0.0.1 unless given: names go through the resolver).
set -eu

BIN=$(cd "$1" && pwd)
: "${P0:?}" "${P1:?}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-step-e2e.XXXXXX")
PIDS=""
cleanup() {
  for pid in $PIDS; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.out "$WORK"/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}

# The batch environment the operator gives every rank (kubeslurm/podspec/environment.cc), and
# the agents' addresses: both ranks live on this host, so they differ by port.
export PATH="$BIN:$PATH"
export SLURM_JOB_ID=42 SLURM_JOBID=42 SLURM_JOB_NAME=e2e
export SLURM_JOB_NODELIST='e2e-[0-1]' SLURM_NODELIST='e2e-[0-1]'
export SLURM_JOB_NUM_NODES=2 SLURM_NNODES=2 SLURM_NTASKS=2 SLURM_NPROCS=2
export SLURM_TASKS_PER_NODE='1(x2)' SLURM_CPUS_ON_NODE=2
export KUBESLURM_STEP_TOKEN=e2e-token
export KUBESLURM_STEP_AGENTS="${AGENT_HOST0:-127.0.0.1}:$P0,${AGENT_HOST1:-127.0.0.1}:$P1"

start_rank1() {
  SLURM_NODEID=1 SLURM_PROCID=1 SLURMD_NODENAME=e2e-1 \
    "$BIN/kubeslurm-inpod" step-agent --listen "127.0.0.1:$P1" --kill-wait 2 \
    > "$WORK/rank1.out" 2> "$WORK/rank1.err" &
  RANK1=$!
  PIDS="$PIDS $RANK1"
}
stop_rank1() {
  kill -TERM "$RANK1"
  wait "$RANK1" || fail "rank 1's agent did not end cleanly on SIGTERM"
}

# --- scontrol without a controller ------------------------------------------------------------
[ "$(scontrol show hostlist e2e-1,e2e-0,e2e-2)" = "e2e-[1,0,2]" ] || fail "scontrol show hostlist"
[ "$(scontrol show hostlistsorted e2e-1,e2e-0,e2e-2)" = "e2e-[0-2]" ] ||
  fail "scontrol show hostlistsorted"
if ! command -v kubeslurm >/dev/null; then
  # No full CLI in this image: the cluster's commands say so, in scontrol's words.
  if scontrol show job 42 > "$WORK/scontrol.out" 2> "$WORK/scontrol.err"; then
    fail "scontrol show job succeeded without a cluster"
  fi
  grep -q '^scontrol: error: this job.s image has kubeslurm.s in-pod tools only' "$WORK/scontrol.err" ||
    fail "scontrol show job without the CLI: $(cat "$WORK/scontrol.err")"
fi
echo "ok: scontrol show hostlist|hostlistsorted, and the cluster's commands without the CLI"

# --- a script as a researcher writes it ----------------------------------------------------
cat > "$WORK/job.sbatch" <<'EOF'
#!/bin/sh
#SBATCH --nodes=2 --ntasks-per-node=1
cd "$(dirname "$0")"
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
echo "master=$MASTER_ADDR"
srun -l sh -c 'echo "rank $SLURM_PROCID of $SLURM_NTASKS on node $SLURM_NODEID, step $SLURM_STEP_ID"' | sort
srun -N1 -n1 sh -c 'exit 3' || echo "the failing step returned $?"
srun sh -c 'sleep 0.5; echo "slow $SLURM_PROCID"' > slow.txt &
srun sh -c 'echo "fast $SLURM_PROCID"' > fast.txt &
wait
sort slow.txt fast.txt
exit 7
EOF
chmod +x "$WORK/job.sbatch"

start_rank1
set +e
SLURM_NODEID=0 SLURM_PROCID=0 SLURMD_NODENAME=e2e-0 \
  "$BIN/kubeslurm-inpod" batch-step --listen "127.0.0.1:$P0" --kill-wait 2 "$WORK/job.sbatch" \
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
echo "$expected" > "$WORK/expected.txt"
[ "$(cat "$WORK/batch.out")" = "$expected" ] ||
  fail "script output differs: $(diff "$WORK/expected.txt" "$WORK/batch.out")"
grep -qx 'srun: error: e2e-0: task 0: Exited with exit code 3' "$WORK/batch.err" ||
  fail "srun did not report the failed task as Slurm does"
stop_rank1
echo "ok: a batch script with foreground, failing and background steps"

# --- scancel: SIGTERM to rank 0's launcher ends the step on every rank -----------------------
cat > "$WORK/long.sbatch" <<EOF
#!/bin/sh
srun sh -c 'echo \$\$ > "$WORK/task.\$SLURM_PROCID"; exec sleep 300'
EOF
chmod +x "$WORK/long.sbatch"
start_rank1
SLURM_NODEID=0 "$BIN/kubeslurm-inpod" batch-step --listen "127.0.0.1:$P0" --kill-wait 2 \
  "$WORK/long.sbatch" > "$WORK/long.out" 2> "$WORK/long.err" &
BATCH=$!
PIDS="$PIDS $BATCH"
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
# The script's shell dies of the SIGTERM (waiting on srun in the foreground).
[ "$rc" -ge 128 ] || [ "$rc" -ne 0 ] || fail "a cancelled job ended with $rc"
alive() { for pid in $TASKS; do kill -0 "$pid" 2>/dev/null && return 0; done; return 1; }
for _ in $(seq 1 50); do alive || break; sleep 0.1; done
! alive || fail "tasks outlived the cancelled job: $TASKS"

stop_rank1
echo "ok: SIGTERM to the batch launcher ended the step on every rank"
# --- --output/--error on the shared volume: the script's and its steps' output in the files ------
mkdir -p "$WORK/shared"
echo "from an earlier run" > "$WORK/shared/slurm-42.out"
cat > "$WORK/files.sbatch" <<'EOF'
#!/bin/sh
echo "batch line"
echo "batch error" >&2
srun -l sh -c 'echo "step line $SLURM_PROCID"; echo "step error $SLURM_PROCID" >&2' | sort
EOF
chmod +x "$WORK/files.sbatch"
start_rank1
SLURM_NODEID=0 KUBESLURM_STDOUT="$WORK/shared/slurm-42.out" \
  KUBESLURM_STDERR="$WORK/shared/slurm-42.err" KUBESLURM_OPEN_MODE=truncate \
  "$BIN/kubeslurm-inpod" batch-step --listen "127.0.0.1:$P0" --kill-wait 2 "$WORK/files.sbatch" \
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
  "$BIN/kubeslurm-inpod" batch-step --listen "127.0.0.1:$P0" "$WORK/files.sbatch" \
  > "$WORK/nodir.out" 2> "$WORK/nodir.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "an unopenable output file should fail the job (rc $rc)"
grep -qxF "slurmstepd: error: Could not open stdout file $WORK/no-such-dir/slurm-42.out: No such file or directory" \
  "$WORK/nodir.err" || fail "no slurmstepd message for the unopenable file"
stop_rank1
echo "ok: --output/--error files on the shared volume"
echo "PASS: in-pod runtime"
