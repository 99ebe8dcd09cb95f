#!/usr/bin/env bash
# Monitoring as shipped (issue 7): deploy/prometheus/kubeslurm-rules.yaml and the Grafana
# dashboards deploy/grafana/*.json, checked by real tools against the real operator.
#
#  offline   promtool check rules; promtool test rules (tests/integration/monitoring/*.test.yaml:
#            each alert fires, and stays silent on the nearest healthy case); the dashboards are
#            JSON of a current schema with a ${datasource} variable and no hard-coded data
#            source; the chart renders the same rules and dashboards (one source of truth).
#  live      its own sandbox (real kube-apiserver, three simulated 8-GPU nodes), the real
#            operator, SlurmJobs that complete, fail, run (a 2-node gang) and pend (Resources,
#            Dependency); a real Prometheus (Debian's) on 127.0.0.1 scraping the operator every
#            second with the rules loaded. Then: every metric name in every panel, variable and
#            rule is one the operator's scrape has; every panel expression and recording rule,
#            evaluated through /api/v1/query, returns a series with a number (no error, no empty
#            panel, no NaN); every alert expression evaluates, every selector in it has data,
#            and the alerts whose condition this scenario holds (and only those) return series.
#
#   tests/integration/monitoring_test.sh    KEEP=1 keeps the sandbox, Prometheus and work dir
# Env: KUBESLURM_OPERATOR, KUBESLURM_NODESIM (default build/bin/...), KUBESLURM_BIN_DIR
#      (control plane; default sandbox/build-control-plane.sh), PROMETHEUS, PROMTOOL (default:
#      Debian's `prometheus` package on PATH). helm: charts/tools/get-helm.sh (cached).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RULES=$ROOT/deploy/prometheus/kubeslurm-rules.yaml
DASHBOARDS=("$ROOT"/deploy/grafana/*.json)
SANDBOX=$ROOT/sandbox/sandbox
OPERATOR=${KUBESLURM_OPERATOR:-$ROOT/build/bin/kubeslurm-operator}
NODESIM=${KUBESLURM_NODESIM:-$ROOT/build/bin/kubeslurm-nodesim}
PROMETHEUS=${PROMETHEUS:-prometheus}
PROMTOOL=${PROMTOOL:-promtool}
# Debian's python3 has PyYAML (python3-yaml, a dependency of clang-tidy-14): YAML -> JSON only.
PY=/usr/bin/python3

START=$SECONDS
step() { printf '\n--- [%3ss] %s\n' $((SECONDS - START)) "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

for tool in "$PROMETHEUS" "$PROMTOOL" jq curl; do
  command -v "$tool" >/dev/null || fail "$tool not found (Debian packages: prometheus, jq, curl)"
done
"$PY" -c 'import yaml' 2>/dev/null || fail "$PY cannot import yaml (Debian package python3-yaml)"
[ -x "$OPERATOR" ] || fail "no operator binary at $OPERATOR (build it, or set KUBESLURM_OPERATOR)"
[ -x "$NODESIM" ] || fail "no node simulator at $NODESIM (build it, or set KUBESLURM_NODESIM)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-monitoring-test.XXXXXX")
DIR=$WORK/sandbox
OPERATOR_PID=''
PROM_PID=''
SANDBOX_UP_PID=''

# shellcheck disable=SC2317  # run by the EXIT trap
finish() {
  local rc=$?
  trap - EXIT
  if [ "${KEEP:-0}" != 1 ]; then
    local pid
    for pid in "$PROM_PID" "$OPERATOR_PID"; do
      [ -n "$pid" ] || continue
      kill -TERM "$pid" 2>/dev/null || true
      { wait "$pid"; } 2>/dev/null || true
    done
  fi
  # A sandbox still coming up is let finish (bounded by its own readiness timeouts), so that
  # `down` finds the pid files of everything it started.
  if [ -n "$SANDBOX_UP_PID" ]; then wait "$SANDBOX_UP_PID" 2>/dev/null || true; fi
  if [ "$rc" -ne 0 ]; then
    for log in operator prometheus; do
      [ -s "$WORK/$log.log" ] || continue
      echo "--- $log's log (tail):" >&2
      tail -n 15 "$WORK/$log.log" >&2
    done
  fi
  if [ -d "$DIR" ]; then
    if [ "${KEEP:-0}" = 1 ]; then
      echo "kept: eval \"\$($SANDBOX env --dir $DIR)\"; Prometheus on ${PROM_URL:-?} (pid $PROM_PID), operator pid $OPERATOR_PID; $SANDBOX down --purge --dir $DIR" >&2
    else
      "$SANDBOX" down --purge --dir "$DIR" >/dev/null 2>&1 || true
    fi
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
  if [ "$rc" -eq 0 ]; then echo "PASS: monitoring test ($((SECONDS - START)) s)" >&2; fi
  exit "$rc"
}
trap finish EXIT
# bash skips the EXIT trap when a signal kills it: turn Ctrl-C and SIGTERM into an exit.
trap 'exit 130' INT
trap 'exit 143' TERM

yaml2json() { "$PY" -c 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'; }

# promql_names: the metric names an expression (stdin, one line) selects. Drops string
# literals, label matchers, ranges and grouping label lists, then keeps the identifiers that are
# neither function calls nor PromQL keywords. (The expressions here use no exponent notation
# and no `offset`; both would leave stray identifiers behind.)
promql_names() {
  sed -E 's/"([^"\\]|\\.)*"//g; s/\{[^}]*\}//g; s/\[[^]]*\]//g' |
    sed -E 's/\b(by|without|on|ignoring|group_left|group_right)[[:space:]]*\([^)]*\)//g' |
    grep -oE '[A-Za-z_:][A-Za-z0-9_:]*[[:space:]]*\(?' |
    grep -vE '\($' | sed -E 's/[[:space:]]+$//' |
    grep -vxE 'by|without|on|ignoring|group_left|group_right|and|or|unless|bool|offset|inf|nan|Inf|NaN' ||
    true
}
# promql_selectors: each `name{matchers}` (or bare name) of kubeslurm's metrics and recording
# rules in an expression (stdin), one per line.
promql_selectors() { grep -oE '([a-z_]+:)?kubeslurm_[a-z0-9_:]*(\{[^}]*\})?' || true; }

# The sandbox takes ~7-10 s to come up: start it now, beside the offline checks.
if [ -z "${KUBESLURM_BIN_DIR:-}" ]; then
  KUBESLURM_BIN_DIR=$("$ROOT/sandbox/build-control-plane.sh" 2>/dev/null | tail -n1)
  export KUBESLURM_BIN_DIR
fi
KUBECTL=$KUBESLURM_BIN_DIR/kubectl
k() { "$KUBECTL" --request-timeout=20s "$@"; }
"$SANDBOX" up --dir "$DIR" --nodes 3x8 --nodesim-binary "$NODESIM" \
  --nodesim-args '--start-delay 0.2' >"$WORK/sandbox-up.log" 2>&1 &
SANDBOX_UP_PID=$!

# ---------------------------------------------------------------------------------------------
step "promtool check rules; promtool test rules (tests/integration/monitoring/*.test.yaml)"
"$PROMTOOL" check rules "$RULES" >&2
"$PROMTOOL" test rules "$ROOT"/tests/integration/monitoring/*.test.yaml >&2
RULES_JSON=$WORK/rules-file.json
yaml2json <"$RULES" >"$RULES_JSON"
# Every alert of the file has a unit test that expects it to fire.
for alert in $(jq -r '.groups[].rules[] | .alert // empty' "$RULES_JSON"); do
  grep -q "alertname: $alert\$" "$ROOT"/tests/integration/monitoring/*.test.yaml ||
    fail "alert $alert has no promtool unit test"
  jq -e --arg a "$alert" '.groups[].rules[] | select(.alert == $a) |
    (.for != null) and (.labels.severity | IN("critical", "warning", "info")) and
    (.annotations.summary | length > 0) and (.annotations.description | length > 0)' \
    "$RULES_JSON" >/dev/null ||
    fail "alert $alert lacks for:, a severity of critical/warning/info, a summary or a description"
done

step "dashboards: valid JSON, current schema, \${datasource} everywhere, no hard-coded data source"
for d in "${DASHBOARDS[@]}"; do
  name=$(basename "$d")
  jq -e . "$d" >/dev/null || fail "$name is not valid JSON"
  jq -e '.schemaVersion >= 36 and (.uid | length > 0) and (.title | length > 0)' "$d" >/dev/null ||
    fail "$name: schemaVersion < 36, or no uid/title"
  jq -e '[.templating.list[] | select(.name == "datasource" and .type == "datasource" and
    .query == "prometheus")] | length == 1' "$d" >/dev/null ||
    fail "$name: no Prometheus data source variable named 'datasource'"
  # Every Prometheus data source reference is the variable, never a uid of some Grafana.
  bad=$(jq -c '[.. | objects | select(has("datasource")) | .datasource |
    select(type != "object" or (.type == "prometheus" and .uid != "${datasource}") or
      (.type != "prometheus" and .type != "grafana"))] | unique' "$d")
  [ "$bad" = '[]' ] || fail "$name: hard-coded or foreign data sources: $bad"
  jq -e '[.panels[] | .id] | length == (unique | length)' "$d" >/dev/null ||
    fail "$name: duplicate panel ids"
  jq -e '[.panels[] | select(.type != "row") | select((.targets // []) | length == 0)] | length == 0' \
    "$d" >/dev/null || fail "$name: a panel without a query"
done
jq -e -s '[.[].uid] | length == (unique | length)' "${DASHBOARDS[@]}" >/dev/null ||
  fail "two dashboards share a uid"

step "the chart renders these rules and dashboards (one source of truth)"
HELM_BIN=$("$ROOT/charts/tools/get-helm.sh")
export HELM_CACHE_HOME=$WORK/helm HELM_CONFIG_HOME=$WORK/helm HELM_DATA_HOME=$WORK/helm
"$HELM_BIN" template kubeslurm "$ROOT/charts/kubeslurm" -n kubeslurm-system \
  --api-versions monitoring.coreos.com/v1 --set metrics.prometheusRule.enabled=true \
  2>"$WORK/helm.err" | "$PY" -c 'import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)' >"$WORK/chart.json" ||
  { grep -v 'found symbolic link' "$WORK/helm.err" >&2; fail "helm template"; }
jq -S .groups "$RULES_JSON" >"$WORK/rules.groups.json"
jq -S '.[] | select(.kind == "PrometheusRule") | .spec.groups' "$WORK/chart.json" \
  >"$WORK/chart.groups.json"
cmp -s "$WORK/rules.groups.json" "$WORK/chart.groups.json" ||
  fail "the chart's PrometheusRule is not deploy/prometheus/kubeslurm-rules.yaml: $(diff \
    "$WORK/rules.groups.json" "$WORK/chart.groups.json" | head -20)"
for d in "${DASHBOARDS[@]}"; do
  name=$(basename "$d")
  jq -r --arg f "$name" '.[] | select(.kind == "ConfigMap" and
    .metadata.labels.grafana_dashboard == "1") | .data[$f] // empty' "$WORK/chart.json" \
    >"$WORK/cm-$name"
  # The ConfigMap's block scalar (|-) drops the file's final newline.
  cmp -s <(printf '%s\n' "$(cat "$d")") "$WORK/cm-$name" ||
    fail "no ConfigMap labelled grafana_dashboard=1 holds deploy/grafana/$name as it is"
done

# ---------------------------------------------------------------------------------------------
step "sandbox up (started with the offline checks): a real kube-apiserver, three 8-GPU nodes"
wait "$SANDBOX_UP_PID" || { cat "$WORK/sandbox-up.log" >&2; SANDBOX_UP_PID=''; fail "sandbox up"; }
SANDBOX_UP_PID=''
eval "$("$SANDBOX" env --dir "$DIR")"
k apply -f "$ROOT/crds/" >/dev/null
k create namespace kubeslurm-system >/dev/null
k create namespace team-a >/dev/null
k create namespace team-b >/dev/null
k wait --for condition=established --timeout=30s crd --all >/dev/null

step "the operator (leading, a cycle every second), then Prometheus scraping it every second"
: >"$WORK/operator.log"
# --job-retention=0 keeps finished jobs, so kubeslurm_jobs has COMPLETED and FAILED series.
"$OPERATOR" --kubeconfig "$KUBECONFIG" --namespace kubeslurm-system --scheduling-interval 1 \
  --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 \
  --job-retention 0 --identity monitoring-test </dev/null >"$WORK/operator.log" 2>&1 &
OPERATOR_PID=$!
# wait_for SECONDS WHAT CONDITION: CONDITION (shell code) holds within SECONDS, else fail.
wait_for() {
  local deadline=$((SECONDS + $1))
  until eval "$3"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$2 (not within $1 s)"
    kill -0 "$OPERATOR_PID" 2>/dev/null || fail "$2: the operator exited"
    if [ -n "$PROM_PID" ]; then kill -0 "$PROM_PID" 2>/dev/null || fail "$2: Prometheus exited"; fi
    sleep 0.2
  done
}
# shellcheck disable=SC2016  # wait_for evaluates its conditions
wait_for 30 "the operator's lead" 'grep -q "recovery: " "$WORK/operator.log"'
METRICS_PORT=$(sed -n 's/.* metrics on port \([0-9]*\)$/\1/p' "$WORK/operator.log")
[ -n "$METRICS_PORT" ] || fail "the operator did not log its metrics port"

# A free port for Prometheus: bind port 0, read what the kernel chose, release it.
PROM_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PROM_URL=http://127.0.0.1:$PROM_PORT
mkdir -p "$WORK/prometheus"
cat >"$WORK/prometheus/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$RULES"]
scrape_configs:
  - job_name: kubeslurm-operator
    static_configs: [{targets: ["127.0.0.1:$METRICS_PORT"]}]
EOF
"$PROMETHEUS" --config.file="$WORK/prometheus/prometheus.yml" \
  --storage.tsdb.path="$WORK/prometheus/data" --web.listen-address="127.0.0.1:$PROM_PORT" \
  </dev/null >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!

# query EXPR: Prometheus' JSON answer for an instant query at "now" (used while waiting).
# shellcheck disable=SC2317  # called from wait_for's conditions
query() { curl -sS --max-time 10 --data-urlencode "query=$1" "$PROM_URL/api/v1/query"; }

step "SlurmJobs: a running gang, one that completes, one that fails, two that pend"
k apply -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata: {name: batch}
spec:
  default: true
  nodeSelector: {matchLabels: {nodesim.kubeslurm.io/simulated: "true"}}
---
apiVersion: kubeslurm.io/v1alpha1
kind: Account
metadata: {name: team}
spec: {shares: 1, namespaces: [team-a]}
---
apiVersion: kubeslurm.io/v1alpha1
kind: Account
metadata: {name: vision}
spec: {shares: 1, namespaces: [team-b]}
EOF
# Rank pods need their namespace's default ServiceAccount token (controller-manager adds it).
# shellcheck disable=SC2016
{
  wait_for 20 "team-a's default ServiceAccount token" \
    '[ -n "$(k -n team-a get serviceaccount default -o "jsonpath={.secrets[0].name}" 2>/dev/null)" ]'
  wait_for 20 "team-b's default ServiceAccount token" \
    '[ -n "$(k -n team-b get serviceaccount default -o "jsonpath={.secrets[0].name}" 2>/dev/null)" ]'
}
# gang: 2 nodes x 8 GPUs for 10 minutes (RUNNING); short: done in a second (COMPLETED); fails:
# exit 3 (FAILED). All on partition batch's three nodes.
k -n team-a create -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: gang}
spec: {nodes: 2, gpusPerNode: 8, timeLimit: "10:00", script: "#!/bin/sh\nsleep 600\n"}
---
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: short}
spec: {nodes: 1, gpusPerNode: 1, timeLimit: "1:00", script: "#!/bin/sh\nsleep 1\n"}
---
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: fails}
spec: {nodes: 1, gpusPerNode: 1, timeLimit: "1:00", script: "#!/bin/sh\nexit 3\n"}
EOF
sj() { k -n "$1" get sj "$2" -o "jsonpath={$3}" 2>/dev/null || true; }
# shellcheck disable=SC2016
{
  wait_for 30 "the gang's start" '[ "$(sj team-a gang .status.state)" = RUNNING ]'
  wait_for 30 "short's end" '[ "$(sj team-a short .status.state)" = COMPLETED ]'
  wait_for 30 "fails' failure" '[ "$(sj team-a fails .status.state)" = FAILED ]'
}
gang_id=$(sj team-a gang .status.jobId)
# big: two whole nodes while one is free (Resources); after: waits for the gang (Dependency).
k -n team-a create -f - >/dev/null <<EOF
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: big}
spec: {nodes: 2, gpusPerNode: 8, timeLimit: "10:00", script: "#!/bin/sh\nsleep 1\n"}
---
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: after}
spec: {nodes: 1, gpusPerNode: 1, dependency: "afterok:$gang_id", script: "#!/bin/sh\nsleep 1\n"}
EOF
# shellcheck disable=SC2016
{
  wait_for 30 "big pending for Resources" '[ "$(sj team-a big .status.reason)" = Resources ]'
  wait_for 30 "after pending for Dependency" '[ "$(sj team-a after .status.reason)" = Dependency ]'
  # A rate needs two samples of a series: the queue-wait histogram per partition appears with
  # the first start, so the next start must come after Prometheus has scraped it once.
  wait_for 30 "Prometheus' first scrapes of the queue-wait histogram" \
    '[ "$(query "kubeslurm_job_queue_wait_seconds_count" | jq ".data.result | length")" = 1 ]'
}
# late: Account vision's job, started (by backfill or in order) on the free node beside the
# pending big job, and done in a second.
k -n team-b create -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: late}
spec: {nodes: 1, gpusPerNode: 1, timeLimit: "1:00", script: "#!/bin/sh\nsleep 1\n"}
EOF
# shellcheck disable=SC2016
{
  wait_for 30 "late's end" '[ "$(sj team-b late .status.state)" = COMPLETED ]'
  # Usage is charged when a running job ends (and every 60 s): the root's is the total, by
  # which the usage-share panel divides.
  wait_for 20 "the scrape of charged usage" \
    '[ "$(query "kubeslurm_account_usage{account=\"root\"} > 0" | jq ".data.result | length")" = 1 ]'
  # Enough samples for every rate and for the rules (evaluated every second) to have run.
  wait_for 20 "10 scrapes of the operator" \
    '[ "$(query "count_over_time(kubeslurm_leader[1m]) >= 10" | jq ".data.result | length")" = 1 ]'
}
k get sj -A >&2

step "chargeback: GPU-seconds counted at the rate the running jobs hold GPUs, by account"
# The operator's kubeslurm_account_gpu_seconds_total summed over the users of account $1.
gpu_seconds() {
  curl -fsS --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk -v a="account=\"$1\"" '$1 ~ /^kubeslurm_account_gpu_seconds_total[{]/ && index($1, a) {
      s += $2 } END { printf "%.3f", s }'
}
t0=$(date +%s.%N)
v0=$(gpu_seconds team)
sleep 5
v1=$(gpu_seconds team)
t1=$(date +%s.%N)
# Only the gang (2 x 8 GPUs) runs in team now: 16 GPU-seconds a second, give or take a cycle
# at each end of the window.
ratio=$(awk -v a="$v0" -v b="$v1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.2f", (b - a) / (16 * (e - s)) }')
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.6 && r <= 1.4) }' ||
  fail "team's GPU-seconds grew $v0 -> $v1 in $t0..$t1: $ratio of the gang's 16 GPUs"
vision=$(gpu_seconds vision)
awk -v v="$vision" 'BEGIN { exit !(v > 0) }' || fail "vision's finished job counted no GPU-seconds"
echo "  team: $v0 -> $v1 GPU-seconds ($ratio x 16 GPUs); vision: $vision" >&2

# ---------------------------------------------------------------------------------------------
step "every metric name in the dashboards and rules is one the operator exports (its scrape)"
curl -fsS --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/scrape.txt"
{
  # Sample names, and a histogram's series names also from its TYPE line.
  grep -v '^#' "$WORK/scrape.txt" | sed -E 's/[{ ].*//'
  sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$WORK/scrape.txt"
  sed -n 's/^# TYPE \([^ ]*\) histogram$/\1_bucket\n\1_sum\n\1_count/p' "$WORK/scrape.txt"
} | sort -u >"$WORK/exported.txt"
jq -r '.groups[].rules[] | .record // empty' "$RULES_JSON" | sort -u >"$WORK/recorded.txt"
# Every expression, as "SOURCE<TAB>KIND<TAB>EXPR": dashboards' targets and variable queries,
# rules' records and alerts.
{
  for d in "${DASHBOARDS[@]}"; do
    jq -r --arg f "$(basename "$d")" '.panels[] | select(.targets) | .title as $t |
      .targets[] | [$f + ": " + $t + " (" + .refId + ")", "panel", .expr] | @tsv' "$d"
    jq -r --arg f "$(basename "$d")" '.templating.list[] | select(.type == "query") |
      [$f + ": variable " + .name, "variable",
        (if (.query | type) == "object" then .query.query else .query end)] | @tsv' "$d"
  done
  jq -r '.groups[].rules[] |
    [if .record then "record " + .record else "alert " + .alert end,
     if .record then "record" else "alert" end, (.expr | gsub("\n"; " "))] | @tsv' "$RULES_JSON"
} >"$WORK/exprs.tsv"
[ "$(wc -l <"$WORK/exprs.tsv")" -ge 40 ] || fail "only $(wc -l <"$WORK/exprs.tsv") expressions found"
while IFS=$'\t' read -r where kind expr; do
  if [ "$kind" = variable ]; then
    # label_values(metric{...}, label): the metric.
    names=$(sed -nE 's/^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*).*/\1/p' <<<"$expr")
    [ -n "$names" ] || fail "$where: not a label_values(metric, label) query: $expr"
  else
    names=$(promql_names <<<"$expr")
    [ -n "$names" ] || fail "$where: no metric name found in $expr"
  fi
  for n in $names; do
    grep -qxF "$n" "$WORK/exported.txt" && continue
    # Only rules may use the recording rules' names (a dashboard must work without the rules).
    if [ "$kind" = alert ] || [ "$kind" = record ]; then grep -qxF "$n" "$WORK/recorded.txt" && continue; fi
    fail "$where: metric '$n' is not in the operator's scrape (nor a recording rule of the file)"
  done
done <"$WORK/exprs.tsv"
echo "  $(wc -l <"$WORK/exprs.tsv") expressions; names from a scrape of $(grep -c '^kubeslurm_' \
  "$WORK/exported.txt") kubeslurm_* series names" >&2

step "Prometheus loaded every rule"
curl -fsS "$PROM_URL/api/v1/rules" >"$WORK/rules.json"
loaded=$(jq '[.data.groups[].rules[] | select(.health == "ok")] | length' "$WORK/rules.json")
want=$(jq '[.groups[].rules[]] | length' "$RULES_JSON")
[ "$loaded" = "$want" ] || fail "Prometheus has $loaded healthy rules, the file $want: $(jq -c \
  '[.data.groups[].rules[] | select(.health != "ok") | {name, lastError}]' "$WORK/rules.json")"

step "every panel and rule expression through /api/v1/query"
# Dashboard variables as Grafana would expand them, with short windows (this Prometheus holds
# a minute of data): rate intervals and the queue-wait window -> 1m, $partition -> All (.*).
expand() {
  # shellcheck disable=SC2016  # Grafana's variables, not the shell's
  sed -E 's/\$(__rate_interval|__interval|__range|wait_window)\b/1m/g;
          s/\$\{(__rate_interval|__interval|__range|wait_window)\}/1m/g;
          s/\$\{?(partition|account)\}?/.*/g'
}
# Alerts whose condition holds in this scenario (before their `for:`), and those that must
# not: a partition with 8 free GPUs while big pends for Resources; a leader that cycles, starts
# jobs, binds without rollbacks, within budget, without API errors.
# KubeslurmFairShareStarvation depends on the accounts' usage when the test looks (whether the
# team account has used anything yet), so it is only evaluated, not judged; promtool's unit
# tests judge it.
declare -A expect_alert=(
  [KubeslurmGpusIdleWhileJobsPend]=active [KubeslurmNoLeader]=inactive
  [KubeslurmMultipleLeaders]=inactive [KubeslurmSchedulerNotCycling]=inactive
  [KubeslurmQueueStuck]=inactive [KubeslurmGangRollbacks]=inactive
  [KubeslurmSchedulerCyclesSlow]=inactive [KubeslurmSchedulerBudgetExhausted]=inactive
  [KubeslurmApiErrors]=inactive
)
# Queries go out 8 at a time (xargs -P), each expression from its own file (curl's
# --data-urlencode query@FILE); one jq then sums up every answer. A process per query and
# answer in sequence would cost seconds of the test's minute on a loaded 2-core machine.
A=$WORK/answers
mkdir -p "$A"
ask_all() { # ask_all DIR: DIR/*.q -> DIR/*.json, then DIR/summary.tsv (file status series nans values error)
  # shellcheck disable=SC2016  # $1 and $2 are sh -c's arguments
  find "$1" -name '*.q' -print0 |
    xargs -0 -P 8 -I{} sh -c 'curl -sS --max-time 10 --data-urlencode "query@$1" "$2/api/v1/query" >"${1%.q}.json"' \
      _ {} "$PROM_URL"
  jq -r '[(input_filename | sub(".*/"; "") | sub("\\.json$"; "")), .status, (.data.result | length),
    ([.data.result[] | .value[1] | select(. == "NaN" or . == "+Inf" or . == "-Inf")] | length),
    ([.data.result[] | .value[1]] | .[:4] | join(" ")), (.error // "")] | @tsv' "$1"/*.json \
    >"$1/summary.tsv" || fail "Prometheus' answers in $1 are not all JSON"
}
i=0
while IFS=$'\t' read -r where kind expr; do
  [ "$kind" = variable ] && continue
  i=$((i + 1))
  f=$A/$(printf '%03d' "$i")
  expand <<<"$expr" >"$f.q"
  printf '%s\t%s\n' "$where" "$kind" >"$f.meta"
  # An alert's selectors, each asked on its own below.
  if [ "$kind" = alert ]; then promql_selectors <<<"$expr" >>"$WORK/selectors.txt"; fi
done <"$WORK/exprs.tsv"
ask_all "$A"
S=$WORK/selectors
mkdir -p "$S"
j=0
while read -r sel; do
  j=$((j + 1))
  printf '%s\n' "$sel" >"$S/$(printf '%03d' "$j").q"
done < <(sort -u "$WORK/selectors.txt")
ask_all "$S"
while IFS=$'\t' read -r id status series _ _ error; do
  [ "$status" = success ] && [ "$series" -gt 0 ] && continue
  fail "selector $(cat "$S/$id.q") of an alert has no data${error:+ ($error)}"
done <"$S/summary.tsv"
echo "  $j selectors of the alerts: each has data" >&2
while IFS=$'\t' read -r id status series nans values error; do
  IFS=$'\t' read -r where kind <"$A/$id.meta"
  q=$(cat "$A/$id.q")
  [ "$status" = success ] || fail "$where: ${error:-no answer} in: $q"
  case $kind in
    panel | record)
      [ "$series" -gt 0 ] || fail "$where: no data (an empty panel): $q"
      [ "$nans" = 0 ] || fail "$where: NaN/Inf (a panel without a value): $q => $values"
      printf '  %-70.70s %s series: %s\n' "$where" "$series" "$values" >&2
      ;;
    alert)
      name=${where#alert }
      state=inactive
      [ "$series" -gt 0 ] && state=active
      if [ -n "${expect_alert[$name]:-}" ] && [ "${expect_alert[$name]}" != "$state" ]; then
        fail "$where: condition is $state, expected ${expect_alert[$name]} in this scenario: $q => $values"
      fi
      printf '  %-70.70s condition %s\n' "$where" "$state" >&2
      ;;
  esac
done <"$A/summary.tsv"
echo "  $i expressions evaluated" >&2
exit 0
