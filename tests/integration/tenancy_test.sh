#!/usr/bin/env bash
# The trust boundary against the real API server (v1.20.2, the sandbox): two tenants who may only
# edit their own namespace (the chart's user roles, bound as a platform team would) try every way
# the security review found to escalate, impersonate, jump the queue or stop the scheduler with a
# SlurmJob, plus variants. Each must fail with a clear message, in Slurm's words where Slurm has
# them; meanwhile the operator keeps its PID and its leadership, and the other tenant's ordinary
# job runs to COMPLETED.
#
#   tests/integration/tenancy_test.sh [BIN_DIR]     (ctest: tenancy_integration)
#
# The operator runs as the sandbox's admin beside it, serving the chart's admission webhook
# (rendered from charts/kubeslurm, pointed at 127.0.0.1). The tenants are ServiceAccounts
# (system:serviceaccount:team-a:alice, ...): real tokens, authenticated by the API server.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${1:-$ROOT/build/bin}
OPERATOR=$BIN/kubeslurm-operator
NODESIM=$BIN/kubeslurm-nodesim
SANDBOX=$ROOT/sandbox/sandbox
CHART=$ROOT/charts/kubeslurm
NS=kubeslurm-system
START=$SECONDS
step() { printf '\n--- [%3ss] %s\n' $((SECONDS - START)) "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
[ -x "$OPERATOR" ] && [ -x "$NODESIM" ] || fail "build kubeslurm-operator and kubeslurm-nodesim first"

# shellcheck source=tests/support/free_port.sh
source "$ROOT/tests/support/free_port.sh"
# shellcheck source=tests/support/webhook.sh
source "$ROOT/tests/support/webhook.sh"
# shellcheck source=tests/support/tenant.sh
source "$ROOT/tests/support/tenant.sh"

HELM=$("$ROOT/charts/tools/get-helm.sh")
if [ -z "${KUBESLURM_BIN_DIR:-}" ]; then
  KUBESLURM_BIN_DIR=$("$ROOT/sandbox/build-control-plane.sh" | tail -n1)
  export KUBESLURM_BIN_DIR
fi
KUBECTL=$KUBESLURM_BIN_DIR/kubectl
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-tenancy.XXXXXX")
DIR=$WORK/sandbox
OPERATOR_PID=''
export HELM_CACHE_HOME=$WORK/helm HELM_CONFIG_HOME=$WORK/helm HELM_DATA_HOME=$WORK/helm

# shellcheck disable=SC2317  # run by the EXIT trap
finish() {
  local rc=$?
  trap - EXIT
  if [ -n "$OPERATOR_PID" ]; then
    kill -TERM "$OPERATOR_PID" 2>/dev/null || true
    { wait "$OPERATOR_PID"; } 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -f "$WORK/operator.log" ]; then
    echo "--- the operator's log (tail):" >&2
    tail -n 30 "$WORK/operator.log" >&2
  fi
  [ -d "$DIR" ] && { "$SANDBOX" down --purge --dir "$DIR" >/dev/null 2>&1 || true; }
  rm -rf "$WORK"
  [ "$rc" -eq 0 ] && echo "PASS: tenancy test ($((SECONDS - START)) s)" >&2
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

k() { "$KUBECTL" --request-timeout=20s "$@"; }

step "sandbox up: 2 simulated 8-GPU nodes"
"$SANDBOX" up --dir "$DIR" --nodes 2x8 --nodesim-binary "$NODESIM" \
  --nodesim-args '--start-delay 0.2' >/dev/null
eval "$("$SANDBOX" env --dir "$DIR")"
k apply -f "$ROOT/crds/" >/dev/null
k wait --for condition=established --timeout=60s crd --all >/dev/null
k create namespace "$NS" >/dev/null

step "the chart's user roles and admission webhook; two tenants"
"$HELM" template kubeslurm "$CHART" -n "$NS" --show-only templates/user-rbac.yaml \
  --show-only templates/admission-webhook.yaml 2>/dev/null | k apply -f - >/dev/null
for tenant in team-a:alice team-b:mallory team-b:bot; do
  ns=${tenant%%:*} sa=${tenant##*:}
  k get namespace "$ns" >/dev/null 2>&1 || k create namespace "$ns" >/dev/null
  k -n "$ns" create serviceaccount "$sa" >/dev/null
done
# alice and mallory have the built-in `edit` role in their namespace (SlurmJobs aggregated into it
# by the chart); bot may only use SlurmJobs (the chart's -edit role alone): no pods of its own.
k -n team-a create rolebinding alice-edit --clusterrole=edit --serviceaccount=team-a:alice >/dev/null
k -n team-b create rolebinding mallory-edit --clusterrole=edit --serviceaccount=team-b:mallory >/dev/null
k -n team-b create rolebinding bot-jobs --clusterrole=kubeslurm-edit --serviceaccount=team-b:bot >/dev/null
k apply -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata: {name: gpu}
spec:
  default: true
  defaultTime: "1:00:00"
  maxTime: "1-00:00:00"
  nodeSelector: {matchLabels: {nodesim.kubeslurm.io/simulated: "true"}}
---
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata: {name: vip}
spec:
  nodeSelector: {matchLabels: {nodesim.kubeslurm.io/simulated: "true"}}
  allowedAccounts: [acct-a]
---
apiVersion: kubeslurm.io/v1alpha1
kind: Account
metadata: {name: acct-a}
spec: {shares: 1, namespaces: [team-a], allowedQos: [normal]}
---
apiVersion: kubeslurm.io/v1alpha1
kind: Account
metadata: {name: acct-b}
spec: {shares: 1, namespaces: [team-b], allowedQos: [normal]}
EOF
umask 077
for tenant in team-a:alice team-b:mallory team-b:bot; do
  tenant_kubeconfig "${tenant%%:*}" "${tenant##*:}" "$WORK/${tenant##*:}.kubeconfig" ||
    fail "no kubeconfig for $tenant"
done
as() { local who=$1; shift; KUBECONFIG=$WORK/$who.kubeconfig k "$@"; }

step "the operator, serving the webhook on 127.0.0.1"
port=$(free_port)
local_webhook_cert "$WORK/webhook"
point_webhooks mutatingwebhookconfiguration "$port" "$WORK/webhook/tls.crt"
point_webhooks validatingwebhookconfiguration "$port" "$WORK/webhook/tls.crt"
: >"$WORK/operator.log"
"$OPERATOR" --kubeconfig "$KUBECONFIG" --namespace "$NS" --identity tenancy-test \
  --scheduling-interval 1 --metrics-bind-address 127.0.0.1:0 \
  --health-probe-bind-address 127.0.0.1:0 --grpc-bind-address 0 \
  --webhook-bind-address "127.0.0.1:$port" --webhook-tls-cert "$WORK/webhook/tls.crt" \
  --webhook-tls-key "$WORK/webhook/tls.key" --operator-username kubernetes-admin \
  </dev/null >"$WORK/operator.log" 2>&1 &
OPERATOR_PID=$!
for _ in $(seq 1 150); do
  kill -0 "$OPERATOR_PID" 2>/dev/null || fail "the operator exited"
  grep -q 'became leader as tenancy-test' "$WORK/operator.log" &&
    grep -q 'caches synced' "$WORK/operator.log" && break
  sleep 0.2
done
grep -q 'became leader as tenancy-test' "$WORK/operator.log" || fail "the operator did not lead"
leader() { k -n "$NS" get lease kubeslurm-operator -o 'jsonpath={.spec.holderIdentity}'; }
# The webhook answers once the caches are synced ("try again" before): wait for a dry run to pass.
for _ in $(seq 1 50); do
  as alice create --dry-run=server -f - >/dev/null 2>&1 <<'EOF' && break
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {generateName: probe-}
spec: {nodes: 1, script: "#!/bin/sh\ntrue\n"}
EOF
  sleep 0.2
done

# job YAML: a SlurmJob with the given spec lines (indented by two) and metadata lines.
job() {
  printf 'apiVersion: kubeslurm.io/v1alpha1\nkind: SlurmJob\nmetadata:\n  generateName: job-\n'
  [ -z "${2:-}" ] || printf '%s\n' "$2"
  printf 'spec:\n  nodes: 1\n  script: "#!/bin/sh\\nsleep 1\\n"\n%s\n' "$1"
}
# refused WHO WHAT EXPECTED SPEC [METADATA]: WHO's create is refused, with EXPECTED in the answer.
REFUSED=0
refused() {
  local who=$1 what=$2 expected=$3 out
  if out=$(job "$4" "${5:-}" | as "$who" create -f - 2>&1); then
    fail "$what: $who's job was admitted ($out)"
  fi
  [[ $out == *"$expected"* ]] || fail "$what: refused, but not with '$expected': $out"
  REFUSED=$((REFUSED + 1))
  printf '  refused: %-58s %s\n' "$what" "${out##*denied the request: }" | cut -c1-160 >&2
}

step "escalation through a pod template (review C1)"
tmpl() {
  printf '  podTemplate:\n    spec:\n%s\n      containers:\n      - name: main\n        image: busybox:1.36\n%s' "$1" "${2:-}"
}
refused mallory "privileged container" "privileged containers are not allowed" \
  "$(tmpl "" "        securityContext: {privileged: true}")"
refused mallory "hostPID" "host namespaces are not allowed" "$(tmpl "      hostPID: true")"
refused mallory "hostNetwork" "host namespaces are not allowed" "$(tmpl "      hostNetwork: true")"
refused mallory "hostPath /" "a hostPath volume (/)" \
  "$(tmpl "      volumes: [{name: root, hostPath: {path: /}}]")"
refused mallory "another ServiceAccount" 'ServiceAccount "mallory" is not one partition gpu lets jobs run as' \
  "$(tmpl "      serviceAccountName: mallory")"
refused mallory "SYS_ADMIN" "capability SYS_ADMIN" \
  "$(tmpl "" "        securityContext: {capabilities: {add: [SYS_ADMIN]}}")"
refused mallory "priorityClassName" "podPolicy.priorityClasses" \
  "$(tmpl "      priorityClassName: system-node-critical")"
refused mallory "a ServiceAccount token" "does not mount ServiceAccount tokens" \
  "$(tmpl "      automountServiceAccountToken: true")"
refused bot "a template without create pods" "needs \`create pods\` in namespace team-b" "$(tmpl "")"

step "impersonation and queue jumping (review H1)"
refused mallory "another team's account" \
  "Invalid account or account/partition combination specified" "  account: acct-a"
refused mallory "a partition its account may not use" \
  "Invalid account or account/partition combination specified" "  partition: vip"
refused mallory "a QOS its account does not allow" "Invalid qos specification" "  qos: preempt"
refused mallory "--priority TOP" "Access/permission denied" "  priority: 4294967293"
refused mallory "a negative --nice" "Access/permission denied" "  nice: -2147483645"
# spec.user is overwritten with the authenticated identity, whatever the object said.
name=$(job "  user: alice" | as mallory create -o 'jsonpath={.metadata.name}' -f -)
[ "$(k -n team-b get sj "$name" -o 'jsonpath={.spec.user}')" = mallory ] ||
  fail "spec.user is not the submitter's: $(k -n team-b get sj "$name" -o 'jsonpath={.spec.user}')"
[ "$(k -n team-b get sj "$name" -o 'jsonpath={.spec.submitter.username}')" = \
  system:serviceaccount:team-b:mallory ] || fail "spec.submitter is not the authenticated identity"
echo "  stamped: user: alice became user: mallory (system:serviceaccount:team-b:mallory)" >&2
# ... and can never be changed afterwards, nor a limit raised, by the tenant.
out=$(as mallory patch sj "$name" --type=merge -p '{"spec":{"user":"alice"}}' 2>&1) &&
  fail "mallory changed spec.user: $out"
[[ $out == *"set at submission"* ]] || fail "unexpected refusal of a changed user: $out"
out=$(as mallory patch sj "$name" --type=merge -p '{"spec":{"timeLimit":"UNLIMITED"}}' 2>&1) &&
  fail "mallory raised a time limit: $out"
[[ $out == *"a longer time limit is for administrators"* ]] || fail "unexpected: $out"
out=$(as mallory patch sj "$name" --subresource=status --type=merge -p '{"status":{"state":"COMPLETED"}}' 2>&1) &&
  fail "mallory wrote status: $out"
REFUSED=$((REFUSED + 3))
echo "  refused: changing spec.user, raising the time limit, writing status" >&2

step "forged array tasks (review H2)"
refused mallory "array-task labels" "only the operator creates array tasks" \
  "  array: \"0-1\"" "  labels: {kubeslurm.io/array-job: sweep, kubeslurm.io/array-task: \"0\"}"
refused mallory "a backdated submit time" "only the operator creates array tasks" "" \
  "  annotations: {kubeslurm.io/array-submit-time: \"1\"}"

step "one object that would stop the scheduler (reviews C2, C3, H8)"
refused mallory "a 17-byte --nodelist of 4 M hosts" "Invalid node name specified" \
  "  nodeList: a[0-65535]b[0-63]"
refused mallory "a template field of the wrong type" "the job's pods would be refused" \
  "$(tmpl "" "        volumeMounts: [{name: 7, mountPath: 5}]")"
# A script past the CRD's limit (1 MiB): the API server refuses it before any webhook.
big=$(head -c 1100000 /dev/zero | tr '\0' 'x')
out=$(printf 'apiVersion: kubeslurm.io/v1alpha1\nkind: SlurmJob\nmetadata: {generateName: big-}\nspec: {nodes: 1, script: "%s"}\n' \
  "$big" | as mallory create -f - 2>&1) && fail "a 1.1 MB script was admitted"
[[ $out == *"spec.script in body should be at most 1048576 chars long"* ]] ||
  fail "unexpected refusal of a big script: ${out: -300}"
REFUSED=$((REFUSED + 1))
echo "  refused: a 1.1 MB script (the CRD: spec.script in body should be at most 1048576 chars long)" >&2

step "planted rank pods (a pod the operator would take for a job's rank)"
# mallory may create pods in team-b, but not ones carrying a rank pod's labels: the operator
# finds a job's ranks by them and trusts their phase, mounts and step Secret.
out=$(as mallory create -f - 2>&1 <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: planted-0
  labels: {kubeslurm.io/job-name: planted, kubeslurm.io/attempt: "0", kubeslurm.io/rank: "0"}
spec:
  containers: [{name: rank, image: busybox:1.36}]
EOF
) && fail "mallory planted a rank pod: $out"
[[ $out == *"is the kubeslurm operator's: only it makes and labels a job's pods"* ]] ||
  fail "unexpected refusal of a planted rank pod: $out"
REFUSED=$((REFUSED + 1))
echo "  refused: a pod labelled as a job's rank (${out##*denied the request: })" | cut -c1-160 >&2

step "the operator kept its PID and leadership; alice's ordinary job completes"
kill -0 "$OPERATOR_PID" 2>/dev/null || fail "the operator died"
[ "$(leader)" = tenancy-test ] || fail "the operator lost its leadership ($(leader))"
for _ in $(seq 1 100); do
  [ -n "$(k -n team-a get serviceaccount default -o 'jsonpath={.secrets[0].name}' 2>/dev/null)" ] && break
  sleep 0.1
done
ok=$(job "" | as alice create -o 'jsonpath={.metadata.name}' -f -)
state=''
for _ in $(seq 1 300); do
  state=$(k -n team-a get sj "$ok" -o 'jsonpath={.status.state}')
  [ "$state" = COMPLETED ] && break
  [[ $state == FAILED || $state == CANCELLED ]] && fail "alice's job ended $state"
  sleep 0.2
done
[ "$state" = COMPLETED ] || fail "alice's job did not complete ($state)"
[ "$(k -n team-a get sj "$ok" -o 'jsonpath={.spec.user}')" = alice ] || fail "alice's job is not alice's"
# No -p: the webhook recorded the default partition at submission, as Slurm does.
[ "$(k -n team-a get sj "$ok" -o 'jsonpath={.spec.partition}')" = gpu ] ||
  fail "alice's job does not name its partition: '$(k -n team-a get sj "$ok" -o 'jsonpath={.spec.partition}')'"
# The operator made its rank pods through the pod webhook; alice may not move one to another job.
rank=$(k -n team-a get pods -l "kubeslurm.io/job-name=$ok" -o 'jsonpath={.items[0].metadata.name}')
[ -n "$rank" ] || fail "alice's job has no rank pod"
out=$(as alice label pod "$rank" --overwrite kubeslurm.io/job-name=elsewhere 2>&1) &&
  fail "alice relabelled a rank pod: $out"
[[ $out == *"label kubeslurm.io/job-name is the kubeslurm operator's"* ]] ||
  fail "unexpected refusal of a relabelled rank pod: $out"
as alice label pod "$rank" team=vision >/dev/null || fail "alice could not add her own label"
REFUSED=$((REFUSED + 1))
kill -0 "$OPERATOR_PID" 2>/dev/null || fail "the operator died"
[ "$(leader)" = tenancy-test ] || fail "the operator lost its leadership ($(leader))"
if grep -E 'terminate|Aborted|exception' "$WORK/operator.log"; then
  fail "the operator's log shows a crash (lines above)"
fi
echo "  $REFUSED attempts refused; operator pid $OPERATOR_PID still leading; alice's job COMPLETED" >&2
