#!/usr/bin/env bash
# The issue's canonical script end to end through the in-pod runtime, with a real PyTorch from
# Debian (python3-torch, gloo on CPU): two ranks as rank pods run them (rank 1 `kubeslurm-inpod
# step-agent`, rank 0 `kubeslurm-inpod batch-step` running the sbatch script), on two loopback
# addresses of this host standing in for the pods' IPs. The script finds MASTER_ADDR with
# `scontrol show hostnames`, `srun torchrun` starts one torchrun per rank through the agents,
# torchrun's c10d rendezvous makes the 4 workers one process group, and their all_reduce must
# give 1+2+3+4 = 10 on every worker.
#
# With --backend nccl (a GPU machine; not part of ctest) the same job runs in a CUDA training
# image's PyTorch (TORCH_PYTHON, its torchrun beside it) with one worker per rank: the workers
# still all_reduce on the CPU through gloo (1+2 = 3), then on the GPU through NCCL, whose
# communicator is set up through the store that torchrun's rendezvous made. NCCL refuses two ranks
# of one communicator on one GPU ("Duplicate GPU detected"), so with fewer GPUs than workers each
# worker's NCCL group is itself (its sum is its own rank + 1); with as many, it is the world.
#
#   torchrun_test.sh KUBESLURM_INPOD [--backend gloo|nccl]     (TORCH_PYTHON=/usr/bin/python3)
set -euo pipefail

TOOL=$(realpath "$1")
BACKEND=gloo
[ "${2:-}" = --backend ] && BACKEND=${3:?--backend needs gloo or nccl}
case $BACKEND in gloo) WORKERS=2 ;; nccl) WORKERS=1 ;; *) echo "unknown backend $BACKEND" >&2; exit 2 ;; esac
PY=${TORCH_PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-torchrun.XXXXXX")
BIN=$WORK/tools
# shellcheck source=tests/support/inpod_tools.sh
. "$HERE/../support/inpod_tools.sh"
inpod_tools "$TOOL" "$BIN"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.out "$WORK"/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
  exit 1
}
"$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' ||
  fail "$PY has no PyTorch with gloo (./run deps installs Debian's python3-torch)"
if [ "$BACKEND" = nccl ]; then
  "$PY" -c 'import torch, torch.distributed as d; assert torch.cuda.is_available() and d.is_nccl_available()' ||
    fail "$PY has no CUDA PyTorch with NCCL"
fi

# The agents' port: free on both loopback addresses.
while :; do
  PORT=$((20000 + RANDOM % 12000))
  (exec 3<> "/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || break
done

cp "$HERE/train.py" "$WORK/train.py"
# Debian's torchrun (PyTorch 1.13) fails on Python 3.11 before it starts a worker
# (torchrun_py311_fix.py says why); the script still says `torchrun`, which finds the fixed one
# first on PATH. A PyTorch 2 has a working torchrun beside its python.
mkdir -p "$WORK/bin"
if "$PY" -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) >= 2)'; then
  install -m 755 "$HERE/torchrun_py311_fix.py" "$WORK/bin/torchrun"
fi
cat > "$WORK/train.sbatch" <<'SCRIPT'
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1
cd "$(dirname "$0")"
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
srun torchrun --nnodes=$SLURM_JOB_NUM_NODES --nproc_per_node=$WORKERS --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py
SCRIPT
chmod +x "$WORK/train.sbatch"

# What the operator puts in every rank pod (kubeslurm/podspec/environment.cc, rank_pods.cc); the
# ranks' "hostnames" are their addresses, as a pod's hostname resolves to its IP.
export PATH="$BIN:$WORK/bin:$(dirname "$PY"):/usr/bin:/bin" WORKERS TRAIN_BACKEND=$BACKEND
export SLURM_JOB_ID=9 SLURM_JOBID=9 SLURM_JOB_NAME=train
export SLURM_JOB_NODELIST='127.0.0.[1-2]' SLURM_NODELIST='127.0.0.[1-2]'
export SLURM_JOB_NUM_NODES=2 SLURM_NNODES=2 SLURM_NTASKS=2 SLURM_NPROCS=2
export SLURM_NTASKS_PER_NODE=1 SLURM_TASKS_PER_NODE='1(x2)' SLURM_CPUS_ON_NODE=2
export KUBESLURM_STEP_TOKEN=torchrun-e2e KUBESLURM_STEP_PORT=$PORT
# The partition's NCCL settings have a gloo counterpart: the interface to use.
export GLOO_SOCKET_IFNAME=lo NCCL_SOCKET_IFNAME=lo OMP_NUM_THREADS=1

SLURM_NODEID=1 SLURM_PROCID=1 SLURMD_NODENAME=127.0.0.2 \
  "$BIN/kubeslurm-inpod" step-agent --listen "127.0.0.2:$PORT" > "$WORK/rank1.out" 2> "$WORK/rank1.err" &
PIDS+=("$!")
set +e
SLURM_NODEID=0 SLURM_PROCID=0 SLURMD_NODENAME=127.0.0.1 timeout 240 \
  "$BIN/kubeslurm-inpod" batch-step --listen "127.0.0.1:$PORT" "$WORK/train.sbatch" \
  > "$WORK/batch.out" 2> "$WORK/batch.err"
rc=$?
set -e
[ "$rc" = 0 ] || fail "the job ended with $rc"
WORLD=$((2 * WORKERS))
SUM=$((WORLD * (WORLD + 1) / 2))
results=$(grep -c ": all_reduce=$SUM\$" "$WORK/batch.out" || true)
[ "$results" = "$WORLD" ] || fail "expected $WORLD workers with all_reduce=$SUM, got $results"
for node in 0 1; do
  grep -q "(node $node, local $((WORKERS - 1))): all_reduce=$SUM" "$WORK/batch.out" ||
    fail "no worker $((WORKERS - 1)) on node $node"
done
if [ "$BACKEND" = nccl ]; then
  for rank in $(seq 0 $((WORLD - 1))); do
    grep -Eq "rank $rank nccl all_reduce=($SUM|$((rank + 1)) alone) " "$WORK/batch.out" ||
      fail "rank $rank has no NCCL all_reduce"
  done
fi
sort "$WORK/batch.out"
echo "PASS: srun torchrun over the in-pod runtime, $BACKEND all_reduce on $WORLD workers"
