#!/usr/bin/env bash
# The researcher's side end to end, through everything we ship: the sandbox's real API server,
# the operator (with the in-pod runtime), the CLI, and the node simulator in process mode, whose
# pods are real processes in namespaces of their own (a network namespace with its pod IP on a
# shared bridge, the kubelet's /etc/hosts plus the cluster DNS's records, the volumes, pid 1).
#
#   1. The issue's canonical script, unchanged but for the image: #SBATCH --nodes=2
#      --ntasks-per-node=1, MASTER_ADDR from `scontrol show hostnames`, `srun torchrun ... c10d`,
#      and a real PyTorch (python3-torch, gloo on CPU) doing an all_reduce that must give 10 on
#      all 4 workers. Output in slurm-N.out in the submission directory on the shared volume.
#   2. A job ends with its script's exit code; `afterok` on it: the dependant runs after a
#      success and pends DependencyNeverSatisfied after a failure. sacct shows the steps srun
#      ran (N.0, N.1 ...) with their own states and exit codes.
#   3. An array --array=0-7%2: never more than 2 tasks running, each with its SLURM_ARRAY_TASK_ID.
#   4. Pyxis --container-mounts on the partition's allowedMounts (read-only, relative to the
#      submit directory, tmpfs), --container-env and --export values from the submitter; a
#      mount the partition does not allow is refused at sbatch with the reason.
#   5. scancel of a running 2-node job stops every rank: no process of it is left on the host.
#   6. srun on the login host (this one): an interactive allocation, its step through the
#      operator's step proxy (labelled output from both ranks, the exit code srun's and the
#      job's), its stdin to every task, --pty (a shell on a terminal of its own, under
#      script(1), and driven through a pseudo-terminal: keystrokes timed, a window change),
#      and Ctrl-C while it waits revokes it; srun --jobid into a running batch job, refused to
#      another user of the namespace; 200 MB of output through the proxy and inside a job;
#      sattach to a running step, its stdin to a task that reads it.
#   7. salloc: an allocation, srun in its command, released with the command's exit code;
#      SIGHUP to salloc ends its command and the allocation, SIGTERM revokes the allocation;
#      without a command, the user's shell; --no-shell's allocation kept for srun --jobid; an
#      allocation scancel ends is said, and -K signals the command.
#   8. The operator killed during a step from the login host (its step proxy gone) and started
#      again: srun says it lost the step (its tasks killed, exit 137), waits for the new leader
#      and releases the allocation through it (FAILED, 137:0), no task is left; the job records
#      the operator keeps in PostgreSQL (a server of the test's own) have it, past the restart.
#
#   sandbox_e2e_test.sh BUILD_BIN_DIR   (kubeslurm, kubeslurm-operator, kubeslurm-nodesim)
# Needs root (network namespaces) and python3-torch (./run deps installs it). KEEP=1 keeps the
# work directory and the sandbox.
set -euo pipefail

BIN=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SANDBOX=$ROOT/sandbox/sandbox
START=$SECONDS
step() { printf '\n--- [%4ss] %s\n' $((SECONDS - START)) "$*" >&2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-e2e.XXXXXX")
SB=$WORK/sandbox
STATE=$WORK/nodesim
SHARED=$WORK/volumes/default/shared  # the partition's shared volume, at the same path everywhere
OPERATOR_PID=""
PGDIR=""
cleanup() {
  local rc=$?
  [ -n "$OPERATOR_PID" ] && kill -TERM "$OPERATOR_PID" 2>/dev/null && wait "$OPERATOR_PID" || true
  if [ -n "$PGDIR" ]; then
    "$ROOT/tests/support/postgres.sh" stop "$PGDIR" || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$PGDIR"
  fi
  if [ "${KEEP:-0}" = 1 ]; then
    echo "kept: $WORK" >&2
  else
    "$SANDBOX" down --dir "$SB" >/dev/null 2>&1 || true
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "FAIL: $*" >&2
  {
    echo "--- squeue / sacct"
    "$BIN/squeue" 2>&1 || true
    "$BIN/sacct" -X 2>&1 || true
    echo "--- operator log (tail)"
    tail -n 40 "$WORK/operator.log"
    echo "--- node simulator log (tail)"
    tail -n 20 "$SB/logs/kubeslurm-nodesim.log"
    for log in "$STATE"/pods/*/*/*.log "$SHARED"/*.out; do
      [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }
    done
  } >&2 2>/dev/null
  exit 1
}

skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "process mode needs root (network namespaces, mounts)"
command -v ip >/dev/null || fail "no ip(8): apt-get install iproute2"
ip link add "ksprobe$$" type bridge 2>/dev/null && ip link del "ksprobe$$" ||
  skip "no CAP_NET_ADMIN here: process mode cannot make its bridge"
/usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' ||
  fail "python3-torch with gloo is not installed (./run deps installs it)"

step "the tools image's content, and the user's image"
# What the tools image holds in /opt/kubeslurm (deploy/docker/tools.Dockerfile): the static
# in-pod tool and its srun and scontrol links.
mkdir -p "$SHARED"
# shellcheck source=tests/support/inpod_tools.sh
. "$ROOT/tests/support/inpod_tools.sh"
inpod_tools "$BIN/kubeslurm-inpod" "$WORK/tools/bin"
# The user's image is this host, whose Debian torchrun fails on Python 3.11 before it starts a
# worker (torchrun_py311_fix.py): the image e2e/pytorch carries a fixed /usr/local/bin/torchrun.
install -m 755 "$HERE/torchrun_py311_fix.py" "$WORK/torchrun"
cp "$HERE/train.py" "$SHARED/train.py"

step "sandbox, two nodes in process mode"
if [ -z "${KUBESLURM_BIN_DIR:-}" ]; then
  KUBESLURM_BIN_DIR=$("$ROOT/sandbox/build-control-plane.sh" | tail -n1)
  export KUBESLURM_BIN_DIR
fi
export KUBESLURM_NODESIM=$BIN/kubeslurm-nodesim
"$SANDBOX" up --dir "$SB" --nodes 'node-[1-2]' --nodesim-args "--gpus 0 --cpu 8 --start-delay 0 \
  --process-mode --state-dir $STATE --volume-root $WORK/volumes \
  --image-content kubeslurm/kubeslurm-tools:e2e=$WORK/tools:/opt/kubeslurm \
  --image-content e2e/pytorch:1=$WORK/torchrun:/usr/local/bin/torchrun" >/dev/null
eval "$("$SANDBOX" env --dir "$SB")"
kubectl apply -f "$ROOT/crds/" >/dev/null
kubectl create namespace kubeslurm-system >/dev/null
kubectl apply -f - >/dev/null <<EOF
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: cpu
spec:
  nodes: node-[1-2]
  default: true
  defaultTime: "10:00"
  sharedVolume:
    claimName: shared
    mountPath: $SHARED
  allowedMounts:
  - path: /datasets
    readOnly: true
    volume:
      hostPath: {path: $WORK/datasets}
  - path: /scratch
    volume:
      hostPath: {path: $WORK/scratch}
EOF
mkdir -p "$WORK/datasets/mnist" "$WORK/scratch"
echo 42 >"$WORK/datasets/mnist/labels.txt"

step "the operator, with the in-pod runtime"
# shellcheck source=tests/support/free_port.sh
. "$ROOT/tests/support/free_port.sh"
# shellcheck source=tests/support/webhook.sh
. "$ROOT/tests/support/webhook.sh"
# shellcheck source=tests/support/tenant.sh
. "$ROOT/tests/support/tenant.sh"
METRICS=$(free_port)
PROBES=$(free_port)
while [ "$PROBES" = "$METRICS" ]; do PROBES=$(free_port); done
GRPC=$(free_port)
while [ "$GRPC" = "$METRICS" ] || [ "$GRPC" = "$PROBES" ]; do GRPC=$(free_port); done
# The query API, which also serves the step proxy that srun on the login host goes through.
local_webhook_cert "$WORK/tls"
# Not `curl | grep -q` under pipefail: grep stops at the match and curl, still writing a long
# exposition, fails with SIGPIPE.
leads() { grep -q '^kubeslurm_leader 1' <<<"$(curl -s "127.0.0.1:$METRICS/metrics" 2>/dev/null)"; }
# A fixed identity: an operator started again after a crash holds the Lease at once (step 8);
# and the step-token key of a chart install (its kept Secret), so that it derives the tokens of
# the jobs started before it, as a new leader does.
head -c 48 /dev/urandom | base64 >"$WORK/step-token.key"
# Job records in PostgreSQL, the store an HA install keeps (docs/accounting.md), on a server of
# this run's own: the operator killed in step 8 and started again writes on into it.
PGDIR=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-e2e-pg.XXXXXX")
PGPORT=$("$ROOT/tests/support/postgres.sh" start "$PGDIR") || fail "PostgreSQL did not start"
records() { psql -h 127.0.0.1 -p "$PGPORT" -U postgres -d accounting -X -q -t -A -F'|' -c "$1"; }
psql -h 127.0.0.1 -p "$PGPORT" -U postgres -X -q -c 'CREATE DATABASE accounting' >/dev/null
echo "host=127.0.0.1 port=$PGPORT user=postgres dbname=accounting" >"$WORK/accounting.dsn"
start_operator() {
  "$BIN/kubeslurm-operator" --namespace kubeslurm-system --identity e2e-operator \
    --step-token-key-file "$WORK/step-token.key" \
    --accounting-postgres-dsn-file "$WORK/accounting.dsn" \
    --metrics-bind-address "127.0.0.1:$METRICS" \
    --health-probe-bind-address "127.0.0.1:$PROBES" --grpc-bind-address "127.0.0.1:$GRPC" \
    --grpc-tls-cert "$WORK/tls/tls.crt" --grpc-tls-key "$WORK/tls/tls.key" \
    --tools-image kubeslurm/kubeslurm-tools:e2e >>"$WORK/operator.log" 2>&1 &
  OPERATOR_PID=$!
  for _ in $(seq 120); do
    leads && break
    kill -0 "$OPERATOR_PID" 2>/dev/null || { wait "$OPERATOR_PID" || fail "the operator exited with $?"; }
    sleep 0.5
  done
  leads || fail "the operator does not lead after 60 s (metrics port $METRICS)"
}
start_operator

export PATH="$BIN:$PATH"
cd "$SHARED"  # sbatch's working directory, as a researcher submits from their project directory
state_of() { sacct -j "$1" -X -n -P -o State 2>/dev/null | head -n1; }
wait_state() {  # JOB STATE SECONDS   (CANCELLED matches "CANCELLED by UID")
  local deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    case "$(state_of "$1")" in "$2" | "$2 by "*) return 0 ;; esac
    sleep 0.5
  done
  fail "job $1 is $(state_of "$1"), not $2, after $3 s"
}
submit() { sbatch --parsable "$@" | cut -d';' -f1; }

step "1. the canonical script: srun torchrun, c10d rendezvous, gloo all_reduce"
cat >train.sbatch <<'SCRIPT'
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1
#SBATCH --container-image=e2e/pytorch:1
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
srun torchrun --nnodes=$SLURM_JOB_NUM_NODES --nproc_per_node=2 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py
SCRIPT
train=$(submit train.sbatch)
wait_state "$train" COMPLETED 180
results=$(grep -c ': all_reduce=10$' "slurm-$train.out" || true)
[ "$results" = 4 ] || fail "expected 4 workers with all_reduce=10 in slurm-$train.out, got $results"
for node in 0 1; do
  grep -q "(node $node, local 1): all_reduce=10" "slurm-$train.out" || fail "no second worker on node $node"
done
[ "$(sacct -j "$train" -X -n -P -o ExitCode)" = "0:0" ] || fail "exit code $(sacct -j "$train" -X -n -P -o ExitCode)"
sort "slurm-$train.out" | grep all_reduce >&2
# The step srun ran, as rank 0 reported it through its termination message (sacct's N.0).
steps=$(sacct -j "$train" -n -P -o JobID,JobName,State,ExitCode,NNodes,NTasks)
grep -qx "$train.0|torchrun|COMPLETED|0:0|2|2" <<<"$steps" || fail "sacct's steps: $steps"

step "2. exit codes and afterok"
printf '#!/bin/sh\n#SBATCH -N 1\nexit 3\n' >fails.sbatch
printf '#!/bin/sh\n#SBATCH -N 1\necho ok from $(hostname)\n' >succeeds.sbatch
failed=$(submit fails.sbatch)
after_failed=$(submit --dependency="afterok:$failed" succeeds.sbatch)
wait_state "$failed" FAILED 60
[ "$(sacct -j "$failed" -X -n -P -o ExitCode)" = "3:0" ] || fail "exit code of $failed: $(sacct -j "$failed" -X -n -P -o ExitCode)"
for _ in $(seq 20); do
  reason=$(squeue -h -j "$after_failed" -o %r)
  [ "$reason" = DependencyNeverSatisfied ] && break
  sleep 0.5
done
[ "$reason" = DependencyNeverSatisfied ] || fail "job $after_failed pends for '$reason'"
scancel "$after_failed"
first=$(submit succeeds.sbatch)
second=$(submit --dependency="afterok:$first" succeeds.sbatch)
wait_state "$second" COMPLETED 60
grep -q '^ok from ' "slurm-$second.out" || fail "slurm-$second.out: $(cat "slurm-$second.out")"
printf '#!/bin/sh\n#SBATCH -N 2\nsrun -N1 -n1 true\nsrun -J bad sh -c "exit 5"\nexit 0\n' >steps.sbatch
steps_job=$(submit steps.sbatch)
wait_state "$steps_job" COMPLETED 60
steps=$(sacct -j "$steps_job" -n -P -o JobID,JobName,State,ExitCode,NNodes)
expected="$steps_job|steps.sbatch|COMPLETED|0:0|2
$steps_job.batch|batch|COMPLETED|0:0|1
$steps_job.0|true|COMPLETED|0:0|1
$steps_job.1|bad|FAILED|5:0|2"
[ "$steps" = "$expected" ] || fail "sacct -j $steps_job: $steps"

step "3. an array, at most 2 tasks at once (the issue's --array=0-7%2)"
printf '#!/bin/sh\n#SBATCH -N 1 --array=0-7%%2\necho task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID\nsleep 1\n' >array.sbatch
array=$(submit array.sbatch)
most=0
for _ in $(seq 240); do
  running=$(squeue -h -r -t R -o %i | grep -c "^${array}_" || true)
  [ "$running" -gt "$most" ] && most=$running
  left=$(squeue -h -r -o %i | grep -c "^${array}_" || true)
  [ "$left" = 0 ] && break
  sleep 0.25
done
[ "$most" -le 2 ] || fail "$most array tasks ran at once under %2"
[ "$most" -ge 1 ] || fail "no array task was ever seen running"
echo "at most $most array tasks ran at once" >&2
for task in 0 1 2 3 4 5 6 7; do
  [ "$(state_of "${array}_$task")" = COMPLETED ] || fail "task $task is $(state_of "${array}_$task")"
  grep -q "^task $task of $array\$" "slurm-${array}_$task.out" || fail "slurm-${array}_$task.out"
done

step "4. Pyxis mounts and environment: the partition's paths, the submitter's variables"
cat >pyxis.sbatch <<'SCRIPT'
#!/bin/sh
#SBATCH -N 2
#SBATCH --container-mounts=/datasets/mnist:/data,./ckpt:/ckpt,/scratch:/scratch:rw,tmpfs:/fast
#SBATCH --container-env=E2E_FROM_SUBMITTER
#SBATCH --export=ALL,E2E_LR=0.5
srun sh -c 'r=$SLURM_PROCID
  echo "$r data=$(cat /data/labels.txt) env=$E2E_FROM_SUBMITTER lr=$E2E_LR"
  echo "$r" >/ckpt/rank-$r && echo "$r" >/scratch/rank-$r && touch /fast/x && echo "$r wrote"
  touch /data/x 2>/dev/null && echo "$r data is writable"; true'
SCRIPT
pyxis=$(E2E_FROM_SUBMITTER=hello E2E_NOT_NAMED=x submit pyxis.sbatch)
wait_state "$pyxis" COMPLETED 60
cat "slurm-$pyxis.out" >&2
for r in 0 1; do
  grep -qx "$r data=42 env=hello lr=0.5" "slurm-$pyxis.out" || fail "rank $r's line in slurm-$pyxis.out"
  grep -qx "$r wrote" "slurm-$pyxis.out" || fail "rank $r could not write its mounts"
  [ "$(cat "$SHARED/ckpt/rank-$r")" = "$r" ] || fail "./ckpt is not the submit directory's ckpt"
  [ "$(cat "$WORK/scratch/rank-$r")" = "$r" ] || fail "/scratch is not the partition's volume"
done
if grep -q "writable" "slurm-$pyxis.out"; then fail "/datasets is read-only in the partition"; fi
[ ! -e "$WORK/datasets/mnist/x" ] || fail "a rank wrote into the read-only dataset"
if grep -q E2E_NOT_NAMED <<<"$(kubectl get slurmjob -o json)"; then fail "an unnamed variable was shipped"; fi
# A path the partition does not list: the operator judges the job in the cycle that numbers it,
# so sbatch sees Valid=False, prints the reason as slurmctld's refusal, and deletes the job.
if refused=$(sbatch --container-mounts=/etc:/host-etc succeeds.sbatch 2>&1); then
  fail "sbatch accepted a mount the partition does not allow: $refused"
fi
grep -qx "sbatch: error: Batch job submission failed: --container-mounts: /etc:/host-etc: /etc is not a path partition cpu allows to mount (allowed: /datasets, /scratch, $SHARED)" <<<"$refused" ||
  fail "sbatch's refusal: $refused"

step "5. scancel stops every rank"
printf '#!/bin/sh\n#SBATCH -N 2\nsrun sleep 3107\n' >long.sbatch
long=$(submit long.sbatch)
wait_state "$long" RUNNING 60
tasks() { pgrep -x -f 'sleep 3107' | wc -l; }
wait_tasks() {  # COUNT SECONDS
  local deadline=$((SECONDS + $2))
  while [ "$(tasks)" != "$1" ] && [ $SECONDS -lt $deadline ]; do sleep 0.25; done
  [ "$(tasks)" = "$1" ]
}
wait_tasks 2 20 || fail "the step's two tasks are not running ($(tasks))"
scancel "$long"
wait_state "$long" CANCELLED 60
wait_tasks 0 30 || fail "tasks of the cancelled job still run: $(pgrep -a -f 'sleep 3107')"
sleep 1
[ -z "$(pgrep -f 'sleep 3107')" ] || fail "left behind: $(pgrep -a -f 'sleep 3107')"

step "6. srun from the login host: an allocation, one step through the operator's step proxy"
# The login side authenticates to the operator with a bearer token (the sandbox's token context).
export KUBESLURM_CONTEXT=kubeslurm-sandbox-token KUBESLURM_SCHEDULER="127.0.0.1:$GRPC" \
  KUBESLURM_SCHEDULER_CA="$WORK/tls/tls.crt"
started=$SECONDS
out=$(srun -N2 -l hostname 2>"$WORK/srun.err") || fail "srun -N2 -l hostname: rc $?: $(cat "$WORK/srun.err")"
echo "srun -N2 -l hostname took $((SECONDS - started)) s:" >&2
echo "$out" >&2
grep -Eq '^0: hostname-[a-z0-9]+-0$' <<<"$out" || fail "no task 0 on rank 0: $out"
grep -Eq '^1: hostname-[a-z0-9]+-1$' <<<"$out" || fail "no task 1 on rank 1: $out"
login=$(sacct -a -X -n -P -o JobID,JobName | grep '|hostname$' | tail -n1 | cut -d'|' -f1)
# Released: rank 0 exits with srun's status, and the job ends with it.
wait_state "$login" COMPLETED 30
[ "$(sacct -j "$login" -X -n -P -o ExitCode,NNodes)" = "0:0|2" ] ||
  fail "the allocation's record: $(sacct -j "$login" -X -n -P -o ExitCode,NNodes)"
# No batch step (it ran no script), and srun's step as rank 0 recorded it (the steps may come a
# status write after the end).
expected="$login|hostname|COMPLETED|
$login.0|hostname|COMPLETED|2"
for _ in $(seq 20); do
  [ "$(sacct -j "$login" -n -P -o JobID,JobName,State,NTasks)" = "$expected" ] && break
  sleep 0.5
done
[ "$(sacct -j "$login" -n -P -o JobID,JobName,State,NTasks)" = "$expected" ] || fail "the allocation's steps: $(sacct -j "$login" -n -P -o JobID,JobName,State,NTasks)"
# Issue 19's figure: `srun -N1 true` from the login side with free capacity, submit to exit
# (measured, not asserted: 10 runs on this machine).
times=()
for _ in $(seq 10); do
  t0=$(date +%s%N)
  srun -N1 true 2>>"$WORK/srun-true.err" || fail "srun -N1 true: $(cat "$WORK/srun-true.err")"
  times+=($((($(date +%s%N) - t0) / 1000000)))
done
mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
echo "srun -N1 true from the login host, 10 runs: p50 ${sorted[4]} ms, max ${sorted[9]} ms (all: ${sorted[*]})" >&2
# The step's exit code is srun's and the job's (slurm_complete_job with srun's status).
set +e
srun -N1 sh -c 'echo from $SLURM_JOB_NUM_NODES node; exit 3' >"$WORK/srun3.out" 2>"$WORK/srun3.err"
rc=$?
set -e
[ "$rc" = 3 ] || fail "srun sh -c 'exit 3' exited $rc: $(cat "$WORK/srun3.err")"
grep -qx 'from 1 node' "$WORK/srun3.out" || fail "the step's output: $(cat "$WORK/srun3.out")"
grep -q 'srun: error: .*: task 0: Exited with exit code 3' "$WORK/srun3.err" ||
  fail "srun's report of the failed task: $(cat "$WORK/srun3.err")"
failed=$(sacct -a -X -n -P -o JobID,JobName | grep '|sh$' | tail -n1 | cut -d'|' -f1)
wait_state "$failed" FAILED 30
[ "$(sacct -j "$failed" -X -n -P -o ExitCode)" = "3:0" ] ||
  fail "the failed allocation's exit code: $(sacct -j "$failed" -X -n -P -o ExitCode)"
# srun's stdin goes to every task (srun(1), IO Redirection), through the proxy.
got=$(printf 'line one\nline two\n' | srun -N2 -l cat 2>"$WORK/stdin.err") ||
  fail "srun -N2 -l cat: $(cat "$WORK/stdin.err")"
[ "$(sort <<<"$got")" = "$(printf '0: line one\n0: line two\n1: line one\n1: line two')" ] ||
  fail "srun's stdin to both tasks: $got"
# --pty: a shell on a terminal of its own, sized as the one srun runs in (script(1)'s here),
# typed into, exiting with its code.
set +e
printf 'stty size\necho typed-$((6*7))\nexit 5\n' |
  script -qefc "stty cols 91 rows 29; srun -N1 --pty sh" /dev/null >"$WORK/pty.out" 2>&1
rc=$?
set -e
[ "$rc" = 5 ] || fail "srun --pty sh exited $rc: $(cat "$WORK/pty.out")"
grep -q '29 91' "$WORK/pty.out" || fail "srun --pty's window size: $(cat "$WORK/pty.out")"
grep -q 'typed-42' "$WORK/pty.out" || fail "srun --pty's keystrokes: $(cat "$WORK/pty.out")"
# Issue 19's check through a pseudo-terminal this test holds (pty_session.py): a shell typed
# into, each keystroke's round trip timed, a window change reaching `stty size`, the job's
# variables, the shell's exit code.
python3 "$HERE/pty_session.py" --keystrokes 200 -- srun -N1 --pty bash --norc --noprofile \
  >"$WORK/pty-session.json" 2>"$WORK/pty-session.err" ||
  fail "srun --pty driven through a pseudo-terminal: $(tail -n 40 "$WORK/pty-session.err")"
echo "srun --pty bash, keystroke round trips through the step proxy: $(cat "$WORK/pty-session.json")" >&2
# Ctrl-C while the allocation waits revokes it (srun's allocate.c: "Job allocation N has been
# revoked"), and nothing of it is left.
long=$(submit long.sbatch)
wait_state "$long" RUNNING 60
srun -N2 true 2>"$WORK/pending.err" &
pending=$!
for _ in $(seq 100); do
  grep -q 'queued and waiting for resources' "$WORK/pending.err" && break
  sleep 0.2
done
grep -q 'queued and waiting for resources' "$WORK/pending.err" ||
  fail "srun did not say it waits: $(cat "$WORK/pending.err")"
revoked=$(sed -n 's/^srun: job \([0-9]*\) queued and waiting for resources$/\1/p' "$WORK/pending.err")
kill -INT "$pending"
set +e
wait "$pending"
rc=$?
set -e
[ "$rc" != 0 ] || fail "srun interrupted while pending exited 0"
grep -qx "srun: Job allocation $revoked has been revoked" "$WORK/pending.err" ||
  fail "srun's revocation: $(cat "$WORK/pending.err")"
wait_state "$revoked" CANCELLED 30
# srun --jobid into the running batch job: a step beside its own, on its first node.
inside=$(srun --jobid="$long" --overlap -N1 -n1 sh -c 'echo "$SLURM_JOB_ID $(hostname)"' 2>"$WORK/jobid.err") ||
  fail "srun --jobid=$long: $(cat "$WORK/jobid.err")"
grep -Eqx "$long long-sbatch-[a-z0-9]+-0" <<<"$inside" || fail "srun --jobid=$long ran: $inside"
if srun --jobid=999999 true 2>"$WORK/nojob.err"; then fail "srun --jobid of no job succeeded"; fi
grep -qx 'srun: error: Unable to confirm allocation for job 999999: Invalid job id specified' \
  "$WORK/nojob.err" || fail "srun --jobid of no job: $(cat "$WORK/nojob.err")"
# Another user of the namespace, who may read its jobs and pods but not `attach` to them, is
# refused by the step proxy: a job's steps are its submitter's (and RBAC's attach).
kubectl create serviceaccount carol >/dev/null
kubectl create role job-reader --verb=get,list,watch --resource=slurmjobs.kubeslurm.io,pods >/dev/null
kubectl create rolebinding carol-reads --role=job-reader --serviceaccount=default:carol >/dev/null
tenant_kubeconfig default carol "$WORK/carol.kubeconfig" || fail "no kubeconfig for carol"
if KUBECONFIG=$WORK/carol.kubeconfig KUBESLURM_CONTEXT=carol \
  srun --jobid="$long" --overlap true 2>"$WORK/carol.err"; then
  fail "carol ran a step in $long, a job she did not submit"
fi
grep -q "srun: error: .*Access/permission denied" "$WORK/carol.err" ||
  fail "carol's refusal: $(cat "$WORK/carol.err")"
# Output throughput: through the proxy from here, and srun inside a job (the agents directly).
t0=$(date +%s%N)
bytes=$(srun --jobid="$long" --overlap -N1 -n1 head -c 200000000 /dev/zero | wc -c)
proxied_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$bytes" = 200000000 ] || fail "srun --jobid head -c 200000000 gave $bytes bytes"
scancel "$long"
wait_state "$long" CANCELLED 60
cat >throughput.sbatch <<'SCRIPT'
#!/bin/sh
#SBATCH -N 1
t0=$(date +%s%N)
bytes=$(srun head -c 200000000 /dev/zero | wc -c)
echo "bytes=$bytes ms=$((($(date +%s%N) - t0) / 1000000))"
SCRIPT
injob=$(submit throughput.sbatch)
wait_state "$injob" COMPLETED 120
grep -q '^bytes=200000000 ' "slurm-$injob.out" || fail "the in-job throughput run: $(cat "slurm-$injob.out")"
injob_ms=$(sed -n 's/^bytes=200000000 ms=\([0-9]*\)$/\1/p' "slurm-$injob.out")
echo "200 MB of task output: srun inside a job ${injob_ms} ms, srun --jobid from the login host (through the step proxy) ${proxied_ms} ms" >&2
# sattach: a running step's layout, then its output from then on, labelled, each failed task
# said, the highest code sattach's.
cat >ticks.sbatch <<'SCRIPT'
#!/bin/sh
#SBATCH -N 2
srun sh -c ': > ticking.$SLURM_PROCID; for i in $(seq 25); do echo tick $i; sleep 0.2; done; exit $((SLURM_PROCID + 2))'
SCRIPT
rm -f ticking.0 ticking.1
ticks=$(submit ticks.sbatch)
wait_state "$ticks" RUNNING 60
for _ in $(seq 100); do [ -e ticking.0 ] && [ -e ticking.1 ] && break; sleep 0.1; done
layout=$(sattach --layout "$ticks.0" 2>&1) || fail "sattach --layout $ticks.0: $layout"
grep -q '^	2 tasks, 2 nodes (ticks-sbatch-[a-z0-9]*-\[0-1\])$' <<<"$layout" ||
  fail "sattach --layout: $layout"
set +e
sattach -l "$ticks.0" >"$WORK/sattach.out" 2>"$WORK/sattach.err"
rc=$?
set -e
[ "$rc" = 3 ] || fail "sattach exited $rc, not the step's highest task code 3: $(cat "$WORK/sattach.err")"
grep -q '^0: tick 2[0-9]$' "$WORK/sattach.out" && grep -q '^1: tick 2[0-9]$' "$WORK/sattach.out" ||
  fail "sattach's output: $(cat "$WORK/sattach.out")"
grep -qx 'sattach: error: task 1 exited with exit code 3' "$WORK/sattach.err" ||
  fail "sattach's report of the failed tasks: $(cat "$WORK/sattach.err")"
if sattach "$ticks.7" 2>"$WORK/nostep.err"; then fail "sattach to no step succeeded"; fi
grep -qx 'sattach: error: Could not get job step info: .*' "$WORK/nostep.err" ||
  fail "sattach to no step: $(cat "$WORK/nostep.err")"
# sattach's stdin reaches a step whose tasks read theirs (the srun's own stdin held open).
mkfifo "$WORK/held.fifo"
sleep 120 >"$WORK/held.fifo" &
holder=$!
rm -f reading.0
srun -N1 -J typed-into sh -c ': > reading.0; read line; echo "read: $line"' \
  <"$WORK/held.fifo" >"$WORK/reader.out" 2>&1 &
reader=$!
for _ in $(seq 300); do [ -e reading.0 ] && break; sleep 0.1; done
[ -e reading.0 ] || fail "the step that reads its stdin did not start: $(cat "$WORK/reader.out")"
typed_job=$(squeue -h -n typed-into -t R -o %i | head -n1)
echo "from sattach" | sattach "$typed_job.0" >"$WORK/typed.out" 2>&1 ||
  fail "sattach with stdin: $(cat "$WORK/typed.out")"
wait "$reader" || fail "the step sattach typed into: $(cat "$WORK/reader.out")"
kill "$holder" 2>/dev/null || true
grep -qx 'read: from sattach' "$WORK/reader.out" || fail "sattach's stdin: $(cat "$WORK/reader.out")"
grep -qx 'read: from sattach' "$WORK/typed.out" || fail "sattach's view: $(cat "$WORK/typed.out")"

step "7. salloc: an allocation, srun inside its shell, released with the command's exit code"
set +e
salloc -N2 sh -c 'srun -l hostname; echo nodes=$SLURM_JOB_NUM_NODES; exit 4' \
  >"$WORK/salloc.out" 2>"$WORK/salloc.err"
rc=$?
set -e
cat "$WORK/salloc.out" "$WORK/salloc.err" >&2
[ "$rc" = 4 ] || fail "salloc exited $rc, not its command's 4"
grep -Eq '^0: interactive-[a-z0-9]+-0$' "$WORK/salloc.out" || fail "srun in salloc, rank 0"
grep -Eq '^1: interactive-[a-z0-9]+-1$' "$WORK/salloc.out" || fail "srun in salloc, rank 1"
grep -qx 'nodes=2' "$WORK/salloc.out" || fail "salloc's command lacks the job's variables"
granted=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$WORK/salloc.err")
[ -n "$granted" ] || fail "salloc did not say it was granted an allocation"
grep -qx "salloc: Relinquishing job allocation $granted" "$WORK/salloc.err" ||
  fail "salloc did not relinquish $granted"
wait_state "$granted" FAILED 30
[ "$(sacct -j "$granted" -X -n -P -o JobName,ExitCode)" = "interactive|4:0" ] ||
  fail "salloc's job: $(sacct -j "$granted" -X -n -P -o JobName,ExitCode)"
# After the grant (salloc.c): SIGHUP, a login session gone, reaches the command's process group
# and ends the allocation at once; SIGTERM revokes it (the job CANCELLED) while the command runs
# on, and salloc exits with the command's code.
granted_of() {  # FILE: the job id salloc was granted, once it says so
  for _ in $(seq 120); do
    grep -q '^salloc: Granted job allocation' "$1" && break
    sleep 0.5
  done
  sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$1"
}
salloc -N1 sleep 3111 >/dev/null 2>"$WORK/hup.err" &
hup=$!
held=$(granted_of "$WORK/hup.err")
[ -n "$held" ] || fail "salloc sleep 3111 was never granted: $(cat "$WORK/hup.err")"
kill -HUP "$hup"
set +e
wait "$hup"
rc=$?
set -e
[ "$rc" = 1 ] || fail "salloc exited $rc after SIGHUP, not 1"
grep -qx "salloc: Relinquishing job allocation $held" "$WORK/hup.err" ||
  fail "salloc did not relinquish $held after SIGHUP: $(cat "$WORK/hup.err")"
wait_state "$held" COMPLETED 30
sleep 0.5
[ -z "$(pgrep -f 'sleep 3111')" ] || fail "salloc's command outlived SIGHUP: $(pgrep -a -f 'sleep 3111')"
salloc -N1 sh -c 'sleep 3; exit 6' >/dev/null 2>"$WORK/term.err" &
term=$!
held=$(granted_of "$WORK/term.err")
[ -n "$held" ] || fail "salloc sh -c 'sleep 3; exit 6' was never granted: $(cat "$WORK/term.err")"
kill -TERM "$term"
wait_state "$held" CANCELLED 30
set +e
wait "$term"
rc=$?
set -e
[ "$rc" = 6 ] || fail "salloc exited $rc after SIGTERM, not its command's 6: $(cat "$WORK/term.err")"
grep -qx "salloc: Job allocation $held has been revoked." "$WORK/term.err" ||
  fail "salloc's revocation: $(cat "$WORK/term.err")"
! grep -q Relinquishing "$WORK/term.err" || fail "salloc relinquished a revoked allocation"
# Without a command salloc runs the user's shell, which reads its commands from stdin here (so
# srun's stdin is kept off it, or srun would forward the rest of the script to its task).
set +e
printf 'srun hostname </dev/null\nexit 2\n' | salloc -N1 >"$WORK/shell.out" 2>"$WORK/shell.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "salloc's shell exited $rc, not 2: $(cat "$WORK/shell.err")"
grep -Eq '^interactive-[a-z0-9]+-0$' "$WORK/shell.out" || fail "srun in salloc's shell: $(cat "$WORK/shell.out")"
# --no-shell: granted, salloc gone, the allocation kept for srun --jobid until scancel ends it.
salloc -N1 --no-shell 2>"$WORK/noshell.err" || fail "salloc --no-shell: $(cat "$WORK/noshell.err")"
kept=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$WORK/noshell.err")
[ -n "$kept" ] || fail "salloc --no-shell was not granted: $(cat "$WORK/noshell.err")"
[ "$(state_of "$kept")" = RUNNING ] || fail "--no-shell's allocation is $(state_of "$kept"), not RUNNING"
srun --jobid="$kept" hostname | grep -Eq '^interactive-[a-z0-9]+-0$' || fail "srun --jobid into --no-shell's allocation"
# An allocation ended under its command (scancel here): said, and -K's SIGTERM ends the command.
salloc -N1 -K sh -c 'trap "exit 5" TERM; while :; do sleep 0.1; done' >/dev/null 2>"$WORK/ended.err" &
ending=$!
held=$(granted_of "$WORK/ended.err")
[ -n "$held" ] || fail "salloc -K was never granted: $(cat "$WORK/ended.err")"
scancel "$held" "$kept"
set +e
wait "$ending"
rc=$?
set -e
[ "$rc" = 5 ] || fail "salloc -K exited $rc, not its command's 5 after SIGTERM: $(cat "$WORK/ended.err")"
grep -qx "salloc: Job allocation $held has been revoked." "$WORK/ended.err" ||
  fail "salloc did not say its allocation ended: $(cat "$WORK/ended.err")"
! grep -q Relinquishing "$WORK/ended.err" || fail "salloc relinquished an allocation scancel ended"
wait_state "$kept" CANCELLED 30

step "8. the operator crashes during a step from the login host: the step ends saying so, and so does its allocation"
srun -N1 sh -c 'echo started; exec sleep 3121' >"$WORK/failover.out" 2>"$WORK/failover.err" &
failing=$!
for _ in $(seq 120); do
  grep -q started "$WORK/failover.out" && break
  sleep 0.5
done
grep -q started "$WORK/failover.out" || fail "the step never started: $(cat "$WORK/failover.err")"
crashed=$(sed -n 's/^srun: job \([0-9]*\) .*/\1/p' "$WORK/failover.err" | head -n1)
[ -n "$crashed" ] || crashed=$(sacct -a -X -n -P -o JobID,JobName,State | grep '|sh|RUNNING$' | tail -n1 | cut -d'|' -f1)
[ -n "$crashed" ] || fail "no running allocation for the step"
kill -KILL "$OPERATOR_PID"
wait "$OPERATOR_PID" 2>/dev/null || true
start_operator
set +e
wait "$failing"
rc=$?
set -e
cat "$WORK/failover.err" >&2
[ "$rc" = 137 ] || fail "srun exited $rc after losing its step, not 137 (its tasks killed)"
grep -q 'srun: error: .*: task 0: lost the connection to the step' "$WORK/failover.err" ||
  fail "srun did not say it lost the step: $(cat "$WORK/failover.err")"
# Released through the new leader, which srun waits for (FAILED with srun's 137): never left
# holding its node.
wait_state "$crashed" FAILED 60
[ "$(sacct -j "$crashed" -X -n -P -o ExitCode)" = "137:0" ] ||
  fail "the lost step's allocation: $(sacct -j "$crashed" -X -n -P -o State,ExitCode)"
grep -q 'Unable to release' "$WORK/failover.err" && fail "srun did not wait for the new leader"
for _ in $(seq 60); do
  [ -z "$(pgrep -f 'sleep 3121')" ] && break
  sleep 0.5
done
[ -z "$(pgrep -f 'sleep 3121')" ] || fail "the lost step's task still runs: $(pgrep -a -f 'sleep 3121')"
# The records in PostgreSQL, past the restart: the lost step's allocation as its new leader
# ended it (an interactive job), salloc's released one, and one record per run of each job.
crashed_record=''
for _ in $(seq 60); do
  crashed_record=$(records "SELECT state, exit_code, interactive FROM jobs WHERE job_id = $crashed")
  [ "$crashed_record" = "FAILED|137:0|1" ] && break
  sleep 0.5
done
[ "$crashed_record" = "FAILED|137:0|1" ] ||
  fail "the lost step's record in PostgreSQL: '$crashed_record', not FAILED|137:0|1"
[ "$(records "SELECT name, state, exit_code FROM jobs WHERE job_id = $granted")" = "interactive|FAILED|4:0" ] ||
  fail "salloc's record in PostgreSQL: $(records "SELECT * FROM jobs WHERE job_id = $granted")"
[ "$(records 'SELECT max(version) FROM schema_migrations')" = 3 ] || fail "the store's schema version"
echo "job records in PostgreSQL: $(records 'SELECT count(*) FROM jobs') runs of $(records 'SELECT count(DISTINCT job_id) FROM jobs') jobs" >&2
unset KUBESLURM_CONTEXT KUBESLURM_SCHEDULER KUBESLURM_SCHEDULER_CA

step "done"
echo "PASS: canonical torchrun script, exit codes and afterok, array %2, Pyxis mounts and env, scancel, srun and salloc from the login host, in process mode"
