# shellcheck shell=bash
# The operator and its sandbox as the scale benchmarks start them (operator_scale.sh,
# array_sweep.sh). Sourced; the caller has `set -euo pipefail`, ROOT (the repository) and BUILD
# (a build directory) set, and calls bench_cleanup from its EXIT trap.
#
#   bench_binaries [BIN...]          OPERATOR, NODESIM and each bin/BIN under BUILD must exist;
#                                    the control plane comes from the cache when it is there
#   bench_sandbox_up SHAPE LOG       `sandbox up --nodes SHAPE` in BENCH_TMP, its environment,
#                                    the CRDs and the operator's namespace
#   bench_start_operator LOG ARGS... the operator with ARGS, once it leads and recovered;
#                                    OP_PID and METRICS_URL
#   bench_stop_operator              SIGTERM, then SIGKILL after 10 s

SANDBOX=$ROOT/sandbox/sandbox
OPERATOR=$BUILD/bin/kubeslurm-operator
NODESIM=${KUBESLURM_NODESIM:-$BUILD/bin/kubeslurm-nodesim}
BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-operator.XXXXXX")
DIR=$BENCH_TMP/sandbox
SANDBOX_UP=0
OP_PID=
# shellcheck disable=SC2034 # the caller's: its /metrics
METRICS_URL=
# shellcheck source=tests/support/free_port.sh
. "$ROOT/tests/support/free_port.sh"

bench_binaries() {
  local cache=${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}/bin f
  if [ -z "${KUBESLURM_BIN_DIR:-}" ] && [ -x "$cache/kube-apiserver" ]; then
    export KUBESLURM_BIN_DIR=$cache
  fi
  for f in "$OPERATOR" "$NODESIM" "${@/#/$BUILD/bin/}"; do
    [ -x "$f" ] || { echo "missing $f (ninja -C $BUILD kubeslurm-operator kubeslurm-nodesim $*)" >&2; exit 2; }
  done
}

bench_sandbox_up() {
  local shape=$1 log=$2
  SANDBOX_UP=1
  if ! "$SANDBOX" up --dir "$DIR" --nodes "$shape" --nodesim-binary "$NODESIM" > "$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
  eval "$("$SANDBOX" env --dir "$DIR")"
  kubectl apply -f "$ROOT/crds/" > /dev/null
  kubectl wait --for condition=established --timeout=60s crd --all > /dev/null
  kubectl create namespace kubeslurm-system > /dev/null
}

bench_start_operator() {
  local log=$1 mport hport
  shift
  mport=$(free_port)
  hport=$(free_port)
  while [ "$hport" = "$mport" ]; do hport=$(free_port); done
  "$OPERATOR" --kubeconfig "$KUBECONFIG" --namespace kubeslurm-system \
    --scheduling-interval 1 --min-cycle-interval 0.2 \
    --metrics-bind-address "127.0.0.1:$mport" --health-probe-bind-address "127.0.0.1:$hport" \
    "$@" > "$log" 2>&1 < /dev/null &
  OP_PID=$!
  # shellcheck disable=SC2034 # the caller reads it
  METRICS_URL=http://127.0.0.1:$mport/metrics
  for _ in $(seq 300); do
    grep -q "recovery:" "$log" && curl -fsS "http://127.0.0.1:$hport/readyz" > /dev/null 2>&1 && break
    if ! kill -0 "$OP_PID" 2> /dev/null; then
      echo "the operator exited:" >&2
      tail -20 "$log" >&2
      exit 1
    fi
    sleep 0.2
  done
  grep -q "recovery:" "$log" || { echo "the operator did not become leader:" >&2; tail -20 "$log" >&2; exit 1; }
  sleep 2 # a few idle cycles: caches warm, nothing in flight
}

bench_stop_operator() {
  [ -n "$OP_PID" ] || return 0
  kill -TERM "$OP_PID" 2> /dev/null || true
  for _ in $(seq 50); do kill -0 "$OP_PID" 2> /dev/null || break; sleep 0.2; done
  kill -KILL "$OP_PID" 2> /dev/null || true
  wait "$OP_PID" 2> /dev/null || true
  OP_PID=
}

bench_cleanup() {
  set +e
  bench_stop_operator
  if [ "$SANDBOX_UP" = 1 ]; then
    "$SANDBOX" down --dir "$DIR" --purge > /dev/null 2>&1 || echo "sandbox down failed: $DIR" >&2
  fi
  rm -rf "$BENCH_TMP"
}
