#!/usr/bin/env bash
# The Helm chart (charts/kubeslurm) checked by real tools: helm 3 (charts/tools/get-helm.sh),
# the sandbox's real kube-apiserver v1.20.2 and kubectl, and the real kubeslurm-operator binary.
#
#  offline   helm lint --strict and helm template, default values and values-all.yaml; what the
#            templates must and must not render (monitoring objects only with their API, the
#            restricted security context, RBAC without secrets/exec/wildcards); the schema
#            refuses bad values; the chart's CRDs, also inside `helm package`, are crds/;
#            deploy/manifests/ is a fresh render of the chart; the query API (gRPC over TLS):
#            its Service selects the leader only, the generated certificate is valid for the
#            Service's names and signed by the ConfigMap's ca.crt; queryApi.enabled=false turns
#            it all off.
#  sandbox   server-side dry-run of the rendered manifests; `helm install` (CRDs Established,
#            PDB policy/v1beta1 on v1.20); `kubectl auth can-i` as the chart's ServiceAccount:
#            what the operator needs yes, secrets/exec/node writes no; the operator binary runs
#            with the ServiceAccount's token and the Deployment's args as the API server stored
#            them: it leads, runs a 2-node gang to COMPLETED (ids, binds, Service, events,
#            Partition/Account status, retention), expands and cancels an array, and is
#            never refused; it labels a pod of the Deployment as the leader (the query API's
#            Service selects it) and serves the query API with the chart's certificate, which
#            sprio reaches through the chart's ConfigMap (TokenReview, SubjectAccessReview);
#            `helm upgrade` keeps the generated certificate (lookup);
#            `helm uninstall` leaves nothing behind; values-all.yaml installed,
#            with monitoring objects once (stand-in) monitoring CRDs exist; deploy/manifests/
#            applied and deleted with kubectl. docs/deploy.md has the details.
#
#   tests/integration/chart_test.sh     KEEP=1 keeps the sandbox and work dir for a post-mortem
# Env: KUBESLURM_OPERATOR, KUBESLURM_NODESIM, KUBESLURM_CLI (binaries; default
#      build/bin/kubeslurm-operator, build/bin/kubeslurm-nodesim, and the CLI `kubeslurm`
#      beside the operator),
#      KUBESLURM_BIN_DIR (control-plane binaries; default: sandbox/build-control-plane.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHART=$ROOT/charts/kubeslurm
VALUES_ALL=$ROOT/tests/integration/chart/values-all.yaml
SANDBOX=$ROOT/sandbox/sandbox
OPERATOR=${KUBESLURM_OPERATOR:-$ROOT/build/bin/kubeslurm-operator}
NODESIM=${KUBESLURM_NODESIM:-$ROOT/build/bin/kubeslurm-nodesim}
CLI=${KUBESLURM_CLI:-$(dirname "$OPERATOR")/kubeslurm}
NS=kubeslurm-system        # where a platform team installs it
RELEASE=kubeslurm
NS_ALL=kubeslurm-all       # the everything-on release, installed after the first is gone
RELEASE_ALL=everything

START=$SECONDS
step() { printf '\n--- [%3ss] %s\n' $((SECONDS - START)) "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

[ -x "$OPERATOR" ] || fail "no operator binary at $OPERATOR (build it, or set KUBESLURM_OPERATOR)"
[ -x "$NODESIM" ] || fail "no node simulator at $NODESIM (build it, or set KUBESLURM_NODESIM)"
[ -x "$CLI" ] || fail "no CLI at $CLI (build the kubeslurm target, or set KUBESLURM_CLI)"

step "helm (fetched once into ~/.cache/kubeslurm/helm)"
HELM_BIN=$("$ROOT/charts/tools/get-helm.sh")
if [ -z "${KUBESLURM_BIN_DIR:-}" ]; then
  KUBESLURM_BIN_DIR=$("$ROOT/sandbox/build-control-plane.sh" | tail -n1)
  export KUBESLURM_BIN_DIR
fi
KUBECTL=$KUBESLURM_BIN_DIR/kubectl   # the same version as the API server (v1.20.2)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-chart-test.XXXXXX")
DIR=$WORK/sandbox
OPERATOR_PID=''
# helm keeps repositories, plugins and its cache under these: never the user's.
export HELM_CACHE_HOME=$WORK/helm/cache HELM_CONFIG_HOME=$WORK/helm/config
export HELM_DATA_HOME=$WORK/helm/data

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
    tail -n 20 "$WORK/operator.log" >&2
  fi
  if [ -d "$DIR" ]; then
    if [ "${KEEP:-0}" = 1 ]; then
      echo "kept the sandbox: eval \"\$($SANDBOX env --dir $DIR)\"; $SANDBOX down --purge --dir $DIR" >&2
    else
      "$SANDBOX" down --purge --dir "$DIR" >/dev/null 2>&1 || true
    fi
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
  if [ "$rc" -eq 0 ]; then echo "PASS: chart test ($((SECONDS - START)) s)" >&2; fi
  exit "$rc"
}
trap finish EXIT
# Ctrl-C or a kill: exit, so that finish stops the operator and the sandbox.
trap 'exit 130' INT
trap 'exit 143' TERM

# helm warns on stderr each time it follows the crds symlink; that is expected (see docs/deploy.md).
helm() {
  local rc=0
  "$HELM_BIN" "$@" 2>"$WORK/helm.err" || rc=$?
  grep -v 'found symbolic link in path' "$WORK/helm.err" >&2 || true
  return $rc
}
k() { "$KUBECTL" --request-timeout=20s "$@"; }

# count KIND FILE: how many objects of that kind a rendered stream holds.
count() { grep -c "^kind: $1\$" "$2" || true; }
expect_kind() { # expect_kind KIND N FILE
  local n; n=$(count "$1" "$3")
  [ "$n" = "$2" ] || fail "$(basename "$3"): $n objects of kind $1, expected $2"
}
# doc KIND NAME FILE: the rendered object of that kind and metadata.name (its YAML document).
doc() {
  awk -v kind="kind: $1" -v name="  name: $2" '
    /^---/ { if (k && n) { printf "%s", buf; found = 1; exit } buf = ""; k = 0; n = 0; next }
    { buf = buf $0 "\n" }
    $0 == kind { k = 1 }
    $0 == name { n = 1 }
    END { if (!found && k && n) printf "%s", buf }' "$3"
}
# The query API's certificate files from a rendered stream: DIR/{tls.crt,tls.key,secret-ca.crt}
# from the Secret SECRET, DIR/ca.crt from the ConfigMap kubeslurm-scheduler (what the CLI trusts).
rendered_tls() { # rendered_tls FILE SECRET DIR
  local secret key
  secret=$(doc Secret "$2" "$1")
  [ -n "$secret" ] || fail "$(basename "$1"): no Secret $2"
  mkdir -p "$3"
  for key in tls.crt tls.key; do
    sed -n "s/^  $key: \"\\(.*\\)\"\$/\\1/p" <<<"$secret" | base64 -d >"$3/$key"
  done
  sed -n 's/^  ca\.crt: "\(.*\)"$/\1/p' <<<"$secret" | base64 -d >"$3/secret-ca.crt"
  doc ConfigMap kubeslurm-scheduler "$1" |
    awk '/^  ca\.crt: \|/ { on = 1; next } on && /^    / { print substr($0, 5); next } { on = 0 }' \
      >"$3/ca.crt"
}
# check_cert DIR SERVICE NS: DIR/tls.crt is signed by DIR/ca.crt (the ConfigMap's), names the
# Service's 4 DNS names, is a serving certificate, and DIR/tls.key is its key.
check_cert() {
  local d=$1 name
  [ -s "$d/ca.crt" ] || fail "the ConfigMap kubeslurm-scheduler has no ca.crt"
  if [ -f "$d/secret-ca.crt" ]; then
    cmp -s "$d/ca.crt" "$d/secret-ca.crt" || fail "the ConfigMap's ca.crt is not the Secret's"
  fi
  openssl verify -CAfile "$d/ca.crt" -purpose sslserver -verify_hostname "$2.$3.svc" \
    "$d/tls.crt" >&2 || fail "the query API's certificate does not verify against ca.crt as $2.$3.svc"
  for name in "$2" "$2.$3" "$2.$3.svc" "$2.$3.svc.cluster.local"; do
    openssl x509 -in "$d/tls.crt" -noout -checkhost "$name" | grep -q 'does match' ||
      fail "the query API's certificate lacks the SAN $name"
  done
  [ "$(openssl x509 -in "$d/tls.crt" -noout -pubkey)" = "$(openssl pkey -in "$d/tls.key" -pubout)" ] ||
    fail "tls.key is not the key of tls.crt"
}

# ---------------------------------------------------------------------------------------------
step "helm lint --strict: default values, and values-all.yaml"
helm lint --strict "$CHART" >&2
helm lint --strict "$CHART" -f "$VALUES_ALL" >&2

step "helm template: default values"
helm template "$RELEASE" "$CHART" -n "$NS" >"$WORK/default.yaml"
for kind in ServiceAccount Deployment PodDisruptionBudget MutatingWebhookConfiguration \
  ValidatingWebhookConfiguration NetworkPolicy; do
  expect_kind "$kind" 1 "$WORK/default.yaml"
done
expect_kind Secret 3 "$WORK/default.yaml"       # the query API's and the webhook's certificates, the step-token key
# The operator's ClusterRole, and system:auth-delegator for the query API.
expect_kind ClusterRoleBinding 2 "$WORK/default.yaml"
# The operator's Role, and the one that lets users read the ConfigMap kubeslurm-scheduler.
expect_kind Role 2 "$WORK/default.yaml"
expect_kind RoleBinding 2 "$WORK/default.yaml"
expect_kind Service 3 "$WORK/default.yaml"      # metrics, the query API, the admission webhook
# The operator's, and the users' edit, view, cluster-reader and slurm-admin roles.
expect_kind ClusterRole 5 "$WORK/default.yaml"
# One ConfigMap per Grafana dashboard of deploy/grafana/, for the Grafana sidecar (on by default),
# and kubeslurm-scheduler, where the CLI finds the query API.
DASHBOARD_COUNT=$(find "$ROOT/deploy/grafana" -name '*.json' | wc -l)
expect_kind ConfigMap "$((DASHBOARD_COUNT + 1))" "$WORK/default.yaml"
[ "$(grep -c '^    grafana_dashboard: "1"$' "$WORK/default.yaml")" = "$DASHBOARD_COUNT" ] ||
  fail "the dashboards' ConfigMaps lack the sidecar's label grafana_dashboard: \"1\""
helm template "$RELEASE" "$CHART" -n "$NS" --set grafana.dashboards.enabled=false \
  >"$WORK/nodash.yaml"
expect_kind ConfigMap 1 "$WORK/nodash.yaml"
for kind in ServiceMonitor PrometheusRule Partition Account CustomResourceDefinition; do
  expect_kind "$kind" 0 "$WORK/default.yaml"
done
# helm's built-in capabilities are a current cluster's: there the PDB is policy/v1.
grep -q '^apiVersion: policy/v1$' "$WORK/default.yaml" || fail "PDB is not policy/v1 by default"
for want in 'replicas: 2' '"--leader-elect=true"' 'fieldPath: metadata.namespace' \
  'path: /healthz' 'path: /readyz' 'containerPort: 8080' 'containerPort: 8081' \
  'runAsNonRoot: true' 'readOnlyRootFilesystem: true' 'allowPrivilegeEscalation: false' \
  '- ALL' 'type: RuntimeDefault' 'fieldPath: metadata.name' 'containerPort: 9443' \
  '"--grpc-bind-address=0.0.0.0:9443"' '"--grpc-tls-cert=/etc/kubeslurm/tls/tls.crt"' \
  '"--grpc-tls-key=/etc/kubeslurm/tls/tls.key"' 'mountPath: /etc/kubeslurm/tls' \
  'secretName: kubeslurm-scheduler-tls' 'name: system:auth-delegator' \
  '"--webhook-bind-address=0.0.0.0:9444"' 'containerPort: 9444' \
  'mountPath: /etc/kubeslurm/webhook-tls' 'fieldPath: spec.serviceAccountName' \
  'path: /mutate/slurmjobs' 'path: /validate/slurmjobs' 'path: /validate/partitions' \
  'path: /validate/accounts' 'verbs: [admin, attach, get, list'; do
  grep -qF -- "$want" "$WORK/default.yaml" || fail "default render lacks '$want'"
done
# Off: nothing of the webhook, and the operator does not serve it.
helm template "$RELEASE" "$CHART" -n "$NS" --set admissionWebhook.enabled=false >"$WORK/nohook.yaml"
expect_kind MutatingWebhookConfiguration 0 "$WORK/nohook.yaml"
expect_kind ValidatingWebhookConfiguration 0 "$WORK/nohook.yaml"
expect_kind Secret 2 "$WORK/nohook.yaml"
grep -qF -- '"--webhook-bind-address=0"' "$WORK/nohook.yaml" ||
  fail "admissionWebhook.enabled=false does not pass --webhook-bind-address=0"

step "the step-token key: generated, mounted, passed; tools off: none"
key=$(doc Secret kubeslurm-step-token-key "$WORK/default.yaml")
[ "$(sed -n 's/^  key: "\(.*\)"$/\1/p' <<<"$key" | base64 -d | wc -c)" = 64 ] ||
  fail "the generated step-token key is not 64 characters: $key"
for want in '"--step-token-key-file=/etc/kubeslurm/step-token-key/key"' \
  'mountPath: /etc/kubeslurm/step-token-key' 'secretName: kubeslurm-step-token-key'; do
  grep -qF -- "$want" "$WORK/default.yaml" || fail "default render lacks '$want'"
done
helm template "$RELEASE" "$CHART" -n "$NS" --set operator.tools.enabled=false >"$WORK/notools.yaml"
expect_kind Secret 2 "$WORK/notools.yaml"
if grep -qF -- 'step-token-key' "$WORK/notools.yaml"; then
  fail "operator.tools.enabled=false still renders the step-token key"
fi

step "the query API: the leader's Service, the generated certificate, the CLI's ConfigMap"
svc=$(doc Service kubeslurm-scheduler "$WORK/default.yaml")
for want in '    kubeslurm.io/leader: "true"' '    app.kubernetes.io/instance: kubeslurm' \
  '    - name: grpc' '      port: 9443' '      targetPort: grpc'; do
  grep -qxF -- "$want" <<<"$svc" || fail "the Service kubeslurm-scheduler lacks '$want'"
done
cm=$(doc ConfigMap kubeslurm-scheduler "$WORK/default.yaml")
for want in '  address: "kubeslurm-scheduler.kubeslurm-system.svc:9443"' \
  '  serverName: "kubeslurm-scheduler.kubeslurm-system.svc"'; do
  grep -qxF -- "$want" <<<"$cm" || fail "the ConfigMap kubeslurm-scheduler lacks '$want'"
done
grep -qxF 'type: kubernetes.io/tls' <<<"$(doc Secret kubeslurm-scheduler-tls "$WORK/default.yaml")" ||
  fail "the query API's Secret is not of type kubernetes.io/tls"
rendered_tls "$WORK/default.yaml" kubeslurm-scheduler-tls "$WORK/tls-template"
check_cert "$WORK/tls-template" kubeslurm-scheduler "$NS"
# Off: no Service, Secret, ConfigMap or auth-delegator binding, and the operator's API is off.
helm template "$RELEASE" "$CHART" -n "$NS" --set queryApi.enabled=false >"$WORK/noquery.yaml"
expect_kind Secret 2 "$WORK/noquery.yaml"    # the webhook's, the step-token key
expect_kind Service 2 "$WORK/noquery.yaml"
expect_kind ConfigMap "$DASHBOARD_COUNT" "$WORK/noquery.yaml"
expect_kind ClusterRoleBinding 1 "$WORK/noquery.yaml"
grep -qF -- '"--grpc-bind-address=0"' "$WORK/noquery.yaml" ||
  fail "queryApi.enabled=false does not pass --grpc-bind-address=0"
if sed 's/#.*//' "$WORK/noquery.yaml" |
  grep -nE 'kubeslurm\.io/leader|grpc-tls|/etc/kubeslurm/tls|containerPort: 9443|auth-delegator|name: kubeslurm-scheduler$'; then
  fail "queryApi.enabled=false still renders parts of the query API (lines above)"
fi
# Least privilege, as written: no exec/attach/port-forward, no wildcards, no escalate, and of
# Secrets only create (the step tokens: the operator never reads a Secret back).
if sed 's/#.*//' "$WORK/default.yaml" |
  grep -nE 'pods/(exec|attach|portforward)|"\*"|- \*|\[\*\]|escalate|impersonate|bind\]|bind,'; then
  fail "the RBAC grants something the operator does not use (lines above)"
fi
secret_rules=$(sed 's/#.*//' "$WORK/default.yaml" | grep -A1 -E 'resources: \[.*secrets' || true)
[ "$secret_rules" = "    resources: [secrets]
    verbs: [create]" ] ||
  fail "the RBAC on Secrets is not create-only: $secret_rules"

# Accounting in SQLite: a kept claim, the flag, the volume, and a pod replaced rather than
# surged (one writer); a claim of the user's is used as it is; two replicas are refused.
helm template "$RELEASE" "$CHART" -n "$NS" --set accounting.sqlite.enabled=true \
  --set replicaCount=1 --set accounting.sqlite.size=2Gi >"$WORK/accounting.yaml"
expect_kind PersistentVolumeClaim 1 "$WORK/accounting.yaml"
for want in '"--accounting-db=/var/lib/kubeslurm/accounting.db"' 'mountPath: /var/lib/kubeslurm' \
  'claimName: kubeslurm-accounting' 'type: Recreate' 'helm.sh/resource-policy: keep' \
  'storage: "2Gi"'; do
  grep -qF -- "$want" "$WORK/accounting.yaml" || fail "accounting.sqlite render lacks '$want'"
done
expect_kind PersistentVolumeClaim 0 "$WORK/default.yaml"
grep -q -- '--accounting-db' "$WORK/default.yaml" && fail "the default render keeps accounting"
helm template "$RELEASE" "$CHART" -n "$NS" --set accounting.sqlite.enabled=true \
  --set replicaCount=1 --set accounting.sqlite.existingClaim=records >"$WORK/accounting-own.yaml"
expect_kind PersistentVolumeClaim 0 "$WORK/accounting-own.yaml"
grep -qF 'claimName: records' "$WORK/accounting-own.yaml" || fail "existingClaim is not mounted"
if helm template "$RELEASE" "$CHART" --set accounting.sqlite.enabled=true >/dev/null 2>&1; then
  fail "the chart accepted SQLite accounting with two replicas"
fi
# Accounting in PostgreSQL: every replica reaches the database, the connection string a file
# from the user's Secret; not without the Secret, and not beside SQLite.
helm template "$RELEASE" "$CHART" -n "$NS" --set accounting.postgres.enabled=true \
  --set accounting.postgres.dsnSecret.name=records-db >"$WORK/accounting-pg.yaml"
for want in '"--accounting-postgres-dsn-file=/etc/kubeslurm/accounting/dsn"' 'secretName: records-db' \
  'mountPath: /etc/kubeslurm/accounting' 'replicas: 2' 'type: RollingUpdate'; do
  grep -qF -- "$want" "$WORK/accounting-pg.yaml" || fail "accounting.postgres render lacks '$want'"
done
expect_kind PersistentVolumeClaim 0 "$WORK/accounting-pg.yaml"
if helm template "$RELEASE" "$CHART" --set accounting.postgres.enabled=true >/dev/null 2>&1; then
  fail "the chart accepted PostgreSQL accounting without a Secret"
fi
if helm template "$RELEASE" "$CHART" --set replicaCount=1 --set accounting.sqlite.enabled=true \
  --set accounting.postgres.enabled=true --set accounting.postgres.dsnSecret.name=x >/dev/null 2>&1; then
  fail "the chart accepted two accounting stores"
fi

step "helm template: values-all.yaml, without and with the Prometheus Operator's API"
helm template "$RELEASE_ALL" "$CHART" -n "$NS_ALL" -f "$VALUES_ALL" >"$WORK/all-nomon.yaml"
expect_kind ServiceMonitor 0 "$WORK/all-nomon.yaml"
expect_kind PrometheusRule 0 "$WORK/all-nomon.yaml"
helm template "$RELEASE_ALL" "$CHART" -n "$NS_ALL" -f "$VALUES_ALL" \
  --api-versions monitoring.coreos.com/v1 >"$WORK/all.yaml"
expect_kind ServiceMonitor 1 "$WORK/all.yaml"
expect_kind PrometheusRule 1 "$WORK/all.yaml"
expect_kind Partition 1 "$WORK/all.yaml"
expect_kind Account 2 "$WORK/all.yaml"
# + cluster-reader groups, slurm-admin groups, auth-delegator
expect_kind ClusterRoleBinding 4 "$WORK/all.yaml"
expect_kind Secret 0 "$WORK/all.yaml"   # tls.secretName and stepTokenKey.secretName: the user's
for want in 'replicas: 3' 'name: regcred' 'kubernetes.io/os: linux' \
  'secretName: test-step-token-key' \
  '"--tools-image=registry.example.com/kubeslurm/kubeslurm-tools:0.1.0-test"' \
  'node-role.kubernetes.io/control-plane' 'podAntiAffinity:' \
  'image: "registry.example.com/kubeslurm/kubeslurm-operator:0.1.0-test"' \
  'imagePullPolicy: Always' '"--watch-namespace=team-nlp"' '"--first-job-id=10000000"' \
  '"--max-array-size=100001"' \
  'name: kubeslurm-operator-sa' 'containerPort: 9091' 'minAvailable: 2' \
  'grafana_folder: kubeslurm' 'namespace: monitoring' 'team: platform' 'for: 2h' \
  'severity: critical' '"--grpc-bind-address=0.0.0.0:9444"' 'containerPort: 9444' \
  'secretName: everything-query-tls' 'example.com/api: query' \
  'address: "everything-kubeslurm-scheduler.kubeslurm-all.svc:443"' \
  'serverName: "everything-kubeslurm-scheduler.kubeslurm-all.svc"' \
  '"--webhook-bind-address=0.0.0.0:9445"' 'secretName: everything-webhook-tls' \
  'timeoutSeconds: 5' 'name: "hpc-admins"' 'kubernetes.io/metadata.name: monitoring' \
  'ipBlock:'; do
  grep -qF -- "$want" "$WORK/all.yaml" || fail "values-all render lacks '$want'"
done
# queryApi.tls.caBundle is what the ConfigMap publishes as ca.crt.
rendered_ca=$(doc ConfigMap kubeslurm-scheduler "$WORK/all.yaml" |
  awk '/^  ca\.crt: \|/ { on = 1; next } on && /^    / { print substr($0, 5); next } { on = 0 }')
[ "$rendered_ca" = "$(sed -n '/^    caBundle: |/,/END CERTIFICATE/{p;/END CERTIFICATE/q}' "$VALUES_ALL" |
  sed '1d; s/^      //')" ] ||
  fail "values-all: the ConfigMap's ca.crt is not queryApi.tls.caBundle"
# values-all switches KubeslurmFairShareStarvation off and overrides two others (see the file).
grep -q 'alert: KubeslurmFairShareStarvation' "$WORK/all.yaml" &&
  fail "values-all: the PrometheusRule still has the alert it disables"
grep -q 'alert: KubeslurmNoLeader' "$WORK/all.yaml" || fail "values-all: alerts missing"

step "values.schema.json (and the templates) refuse bad values"
# The same command with good values renders: a refusal below is the value's, not helm's.
helm template x "$CHART" --set operator.logLevel=debug --set leaderElection.enabled=false \
  --set replicaCount=1 --set 'operator.extraArgs={--identity=x}' >/dev/null
for bad in operator.logLevel=verbose operator.logFormat=xml replicas=2 ports.metrics=0 \
  image.pullPolicy=Sometimes operator.firstJobId=0 operator.maxArraySize=4000002 \
  'operator.extraArgs={-v}' \
  leaderElection.enabled=false queryApi.port=0 queryApi.service.type=External \
  queryApi.tls.secretName=Bad_Secret queryApi.tls.caBundle=not-a-pem queryApi.tls.ca=x; do
  if helm template x "$CHART" --set "$bad" >/dev/null 2>&1; then
    fail "the chart accepted --set $bad"
  fi
done

# An override for an alert the rules file does not have is a typo: the template refuses it.
if helm template x "$CHART" --api-versions monitoring.coreos.com/v1 \
  --set metrics.prometheusRule.enabled=true \
  --set metrics.prometheusRule.alerts.KubeslurmNoLeadr.for=1h >/dev/null 2>&1; then
  fail "the chart accepted an override of an alert that does not exist"
fi
for bad in metrics.prometheusRule.alerts.KubeslurmNoLeader.severity=page \
  metrics.prometheusRule.alerts.KubeslurmNoLeader.for=soon grafana.dashboards.enabled=maybe \
  grafana.dashboards.namespace=Bad_NS; do
  if helm template x "$CHART" --set "$bad" >/dev/null 2>&1; then
    fail "the chart accepted --set $bad"
  fi
done

# Chart.yaml's kubeVersion: the sandbox's v1.20 is the oldest the chart is tested on.
helm template x "$CHART" --kube-version 1.20.2 >/dev/null
if helm template x "$CHART" --kube-version 1.19.9 >/dev/null 2>&1; then
  fail "the chart accepted Kubernetes 1.19"
fi

step "one source of truth: the chart's CRDs are crds/, also inside the packaged chart"
for f in "$ROOT"/crds/*.yaml; do
  cmp -s "$f" "$CHART/crds/$(basename "$f")" || fail "charts/kubeslurm/crds/$(basename "$f") differs from crds/"
done
[ "$(find "$CHART/crds/" -name '*.yaml' | wc -l)" = "$(find "$ROOT/crds" -name '*.yaml' | wc -l)" ] ||
  fail "charts/kubeslurm/crds/ and crds/ hold different files"
helm package "$CHART" -d "$WORK/pkg" >/dev/null
mkdir -p "$WORK/pkg/x"
tar -xmzf "$WORK"/pkg/kubeslurm-*.tgz -C "$WORK/pkg/x"   # -m: helm stamps the files "now"
for f in "$ROOT"/crds/*.yaml; do
  cmp -s "$f" "$WORK/pkg/x/kubeslurm/crds/$(basename "$f")" ||
    fail "the packaged chart's crds/$(basename "$f") is not crds/'s"
done
[ -L "$WORK/pkg/x/kubeslurm/crds" ] && fail "helm package kept the symlink instead of the files"
# The same for the monitoring files (files/prometheus, files/grafana -> deploy/...): the
# PrometheusRule and the dashboards' ConfigMaps are rendered from them.
for f in "$ROOT"/deploy/prometheus/*.yaml "$ROOT"/deploy/grafana/*.json; do
  rel=files/$(basename "$(dirname "$f")")/$(basename "$f")
  cmp -s "$f" "$WORK/pkg/x/kubeslurm/$rel" || fail "the packaged chart's $rel is not deploy/'s"
done

step "deploy/manifests/ equals a fresh render of the chart, and kustomize builds it"
"$ROOT/charts/tools/render-manifests.sh" --check
k kustomize "$ROOT/deploy/manifests" >"$WORK/kustomized.yaml"
for kind in Namespace:1 CustomResourceDefinition:3 ServiceAccount:1 ClusterRole:5 \
  ClusterRoleBinding:2 Role:2 RoleBinding:2 Service:3 Deployment:1 PodDisruptionBudget:1 \
  "ConfigMap:$((DASHBOARD_COUNT + 1))" Secret:0 MutatingWebhookConfiguration:1 \
  ValidatingWebhookConfiguration:1; do
  expect_kind "${kind%%:*}" "${kind##*:}" "$WORK/kustomized.yaml"
done
# No generated key in git: the manifests mount the Secret the installer provides.
grep -qF 'secretName: kubeslurm-scheduler-tls' "$WORK/kustomized.yaml" ||
  fail "deploy/manifests/ does not mount the Secret kubeslurm-scheduler-tls"
grep -qF 'secretName: kubeslurm-webhook-tls' "$WORK/kustomized.yaml" ||
  fail "deploy/manifests/ does not mount the Secret kubeslurm-webhook-tls"
grep -qF 'secretName: kubeslurm-step-token-key' "$WORK/kustomized.yaml" ||
  fail "deploy/manifests/ does not mount the Secret kubeslurm-step-token-key"

# ---------------------------------------------------------------------------------------------
step "sandbox up (a real kube-apiserver v1.20.2)"
# Two simulated 8-GPU nodes for the operator's jobs (the node simulator plays their kubelets).
"$SANDBOX" up --dir "$DIR" --nodes 2x8 --nodesim-binary "$NODESIM" \
  --nodesim-args '--start-delay 0.2' >/dev/null
eval "$("$SANDBOX" env --dir "$DIR")"
k create namespace "$NS" >/dev/null

step "server-side dry-run of the manifests rendered for this cluster (default values + CRDs)"
# --validate renders with the cluster's own API versions (as install does) and checks the
# objects against its OpenAPI schema.
helm template "$RELEASE" "$CHART" -n "$NS" --validate --include-crds >"$WORK/default-cluster.yaml"
grep -q '^apiVersion: policy/v1beta1$' "$WORK/default-cluster.yaml" ||
  fail "on v1.20 the PDB must be policy/v1beta1"
k apply --dry-run=server -f "$WORK/default-cluster.yaml" >&2

step "helm install $RELEASE -n $NS"
helm install "$RELEASE" "$CHART" -n "$NS" >"$WORK/install.out"
grep -q 'kubectl get partitions' "$WORK/install.out" || fail "NOTES.txt not shown by helm install"
grep -qF 'port-forward svc/kubeslurm-scheduler 9443' "$WORK/install.out" ||
  fail "NOTES.txt does not say how to reach the query API"
for crd in slurmjobs partitions accounts; do
  k wait --for condition=established --timeout=30s "crd/$crd.kubeslurm.io" >/dev/null ||
    fail "CRD $crd.kubeslurm.io not Established"
done
k -n "$NS" get deployment/kubeslurm serviceaccount/kubeslurm role/kubeslurm rolebinding/kubeslurm \
  service/kubeslurm-metrics service/kubeslurm-scheduler secret/kubeslurm-scheduler-tls \
  configmap/kubeslurm-scheduler poddisruptionbudget/kubeslurm >&2
k get clusterrole/kubeslurm clusterrolebinding/kubeslurm clusterrolebinding/kubeslurm-auth-delegator \
  >/dev/null
[ "$(k -n "$NS" get deployment kubeslurm -o 'jsonpath={.spec.replicas}')" = 2 ] ||
  fail "the Deployment does not have 2 replicas"

step "the query API's certificate as installed, and kept by helm upgrade (lookup)"
# installed_tls DIR: the Secret and ConfigMap as the API server has them.
installed_tls() {
  mkdir -p "$1"
  k -n "$NS" get secret kubeslurm-scheduler-tls -o 'jsonpath={.data.tls\.crt}' | base64 -d >"$1/tls.crt"
  k -n "$NS" get secret kubeslurm-scheduler-tls -o 'jsonpath={.data.tls\.key}' | base64 -d >"$1/tls.key"
  k -n "$NS" get secret kubeslurm-scheduler-tls -o 'jsonpath={.data.ca\.crt}' | base64 -d >"$1/secret-ca.crt"
  k -n "$NS" get configmap kubeslurm-scheduler -o 'jsonpath={.data.ca\.crt}' >"$1/ca.crt"
}
installed_tls "$WORK/tls"
check_cert "$WORK/tls" kubeslurm-scheduler "$NS"
[ "$(k -n "$NS" get secret kubeslurm-scheduler-tls -o 'jsonpath={.type}')" = kubernetes.io/tls ] ||
  fail "the Secret kubeslurm-scheduler-tls is not of type kubernetes.io/tls"
step_key=$(k -n "$NS" get secret kubeslurm-step-token-key -o 'jsonpath={.data.key}')
[ -n "$step_key" ] || fail "no step-token key installed"
helm upgrade "$RELEASE" "$CHART" -n "$NS" >/dev/null
[ "$(k -n "$NS" get secret kubeslurm-step-token-key -o 'jsonpath={.data.key}')" = "$step_key" ] ||
  fail "helm upgrade changed the step-token key: running jobs' tokens would no longer derive"
installed_tls "$WORK/tls-upgraded"
for f in tls.crt tls.key secret-ca.crt ca.crt; do
  cmp -s "$WORK/tls/$f" "$WORK/tls-upgraded/$f" || fail "helm upgrade changed the query API's $f"
done
echo "  certificate for kubeslurm-scheduler.$NS.svc verifies against the ConfigMap's ca.crt;" \
  "unchanged by helm upgrade" >&2

step "the admission webhook as installed: certificate, Service, configurations, kept by upgrade"
# webhook_tls DIR: the Secret and the caBundle of each configuration, as installed.
webhook_tls() {
  mkdir -p "$1"
  local f
  for f in tls.crt tls.key ca.crt; do
    k -n "$NS" get secret kubeslurm-webhook-tls -o "jsonpath={.data.${f//./\\.}}" | base64 -d >"$1/$f"
  done
  k get mutatingwebhookconfiguration kubeslurm \
    -o 'jsonpath={.webhooks[0].clientConfig.caBundle}' | base64 -d >"$1/mutating-ca.crt"
  k get validatingwebhookconfiguration kubeslurm \
    -o 'jsonpath={.webhooks[*].clientConfig.caBundle}' | tr ' ' '\n' | sort -u >"$1/validating-ca.b64"
}
webhook_tls "$WORK/webhook"
check_cert "$WORK/webhook" kubeslurm-webhook "$NS"
cmp -s "$WORK/webhook/ca.crt" "$WORK/webhook/mutating-ca.crt" ||
  fail "the MutatingWebhookConfiguration's caBundle is not the webhook Secret's ca.crt"
[ "$(wc -l <"$WORK/webhook/validating-ca.b64")" = 1 ] &&
  [ "$(base64 -d <"$WORK/webhook/validating-ca.b64")" = "$(cat "$WORK/webhook/ca.crt")" ] ||
  fail "the ValidatingWebhookConfiguration's caBundles are not the webhook Secret's ca.crt"
# SlurmJobs and rank-labelled pods fail closed; Partitions and Accounts (administrators'
# objects) do not block installs.
[ "$(k get validatingwebhookconfiguration kubeslurm -o 'jsonpath={.webhooks[*].failurePolicy}')" = \
  "Fail Fail Fail Fail Fail Ignore Ignore" ] || fail "unexpected failure policies on the validating webhooks"
# Pods reach the webhook only when they carry a rank label: one webhook per label, selected by it.
[ "$(k get validatingwebhookconfiguration kubeslurm \
  -o 'jsonpath={.webhooks[*].objectSelector.matchExpressions[*].key}')" = \
  "kubeslurm.io/job-name kubeslurm.io/job-id kubeslurm.io/rank kubeslurm.io/attempt" ] ||
  fail "the pod webhooks do not select exactly the rank labels"
[ "$(k -n "$NS" get service kubeslurm-webhook -o 'jsonpath={.spec.selector.kubeslurm\.io/leader}')" = "" ] ||
  fail "the webhook's Service must select every replica, not only the leader"
helm upgrade "$RELEASE" "$CHART" -n "$NS" >/dev/null
webhook_tls "$WORK/webhook-upgraded"
for f in tls.crt tls.key ca.crt mutating-ca.crt validating-ca.b64; do
  cmp -s "$WORK/webhook/$f" "$WORK/webhook-upgraded/$f" || fail "helm upgrade changed the webhook's $f"
done
echo "  certificate for kubeslurm-webhook.$NS.svc, in both configurations; unchanged by upgrade" >&2

step "RBAC: what the chart's ServiceAccount may do (kubectl auth can-i --as)"
SA_USER=system:serviceaccount:$NS:kubeslurm
# can yes|no VERB TYPE[/NAME] [--subresource=S] [-n NS|-A]: queues one question (as $SA_USER);
# can_check asks them, 6 at a time (each is a kubectl process), and fails unless each answer is
# the one expected.
mkdir -p "$WORK/can"
CAN_N=0
can() {
  local want=$1; shift
  CAN_N=$((CAN_N + 1))
  local file
  file=$WORK/can/$(printf '%03d' "$CAN_N")
  printf '%s\n%s\n%s\n' "$want" "$*" "$SA_USER" >"$file.q"
  if [ "$(jobs -rp | wc -l)" -ge 6 ]; then wait -n || true; fi
  (k auth can-i --as="$SA_USER" "$@" >"$file.a" 2>/dev/null || true) &
}
can_check() {
  wait
  local q want question user got
  for q in "$WORK"/can/*.q; do
    { read -r want; read -r question; read -r user; } <"$q"
    got=$(cat "${q%.q}.a")
    [ "$got" = "$want" ] || fail "can-i $question as $user: '$got', expected $want"
    printf '  %-3s %s (%s)\n' "$got" "$question" "${user##*:}" >&2
  done
}
# What the operator's code calls (rbac.yaml says where); team-a is any user namespace.
can yes list nodes;                           can yes watch nodes
can yes list pods -A;                         can yes watch pods -A
for v in get create delete; do can yes "$v" pods -n team-a; done
can yes create pods --subresource=binding -n team-a
can yes get services -n team-a;               can yes create services -n team-a
can yes get networkpolicies.networking.k8s.io -n team-a
can yes create networkpolicies.networking.k8s.io -n team-a
can no update networkpolicies.networking.k8s.io -n team-a
can no delete secrets -n team-a;              can no update secrets -n team-a
can yes create events -n team-a;              can yes patch events -n team-a
can yes list slurmjobs.kubeslurm.io -A;       can yes watch slurmjobs.kubeslurm.io -A
for v in get create patch delete; do can yes "$v" slurmjobs.kubeslurm.io -n team-a; done
can yes update slurmjobs.kubeslurm.io --subresource=status -n team-a
can yes patch slurmjobs.kubeslurm.io --subresource=status -n team-a
can yes update slurmjobs.kubeslurm.io --subresource=finalizers -n team-a
for r in partitions accounts; do
  can yes list "$r.kubeslurm.io";  can yes watch "$r.kubeslurm.io"
  can yes update "$r.kubeslurm.io" --subresource=status
done
can yes create leases.coordination.k8s.io -n "$NS"
can yes get leases.coordination.k8s.io/kubeslurm-operator -n "$NS"
can yes update leases.coordination.k8s.io/kubeslurm-operator -n "$NS"
can yes create configmaps -n "$NS"
can yes get configmaps/kubeslurm-job-ids -n "$NS"
can yes update configmaps/kubeslurm-job-ids -n "$NS"
# The query API: its leader label on the operator's own pod (operator/main.cc labelOwnPod),
# and each caller checked by TokenReview and SubjectAccessReview (kubeslurm/access/access_review.cc).
can yes patch pods -n "$NS"
can yes create tokenreviews.authentication.k8s.io
can yes create subjectaccessreviews.authorization.k8s.io
can no create localsubjectaccessreviews.authorization.k8s.io -n team-a
# What it must not do.
for v in get list watch; do can no "$v" secrets -A; can no "$v" secrets -n "$NS"; done
can no create pods --subresource=exec -n team-a; can no get pods --subresource=exec -n team-a
can no create pods --subresource=attach -n team-a
can no create pods --subresource=portforward -n team-a
can no delete nodes;                  can no update nodes;    can no patch nodes
can no create nodes
can no update pods -n team-a
can no delete services -n team-a;     can no list services -A
can no update slurmjobs.kubeslurm.io -n team-a; can no deletecollection slurmjobs.kubeslurm.io -n team-a
can no update partitions.kubeslurm.io;          can no delete accounts.kubeslurm.io
can no get configmaps -n team-a;      can no list configmaps -n "$NS"
can no get configmaps/other -n "$NS"; can no update leases.coordination.k8s.io/other -n "$NS"
can no create leases.coordination.k8s.io -n team-a
can no create serviceaccounts --subresource=token -n "$NS"
can no create clusterroles.rbac.authorization.k8s.io; can no escalate clusterroles.rbac.authorization.k8s.io
can no create customresourcedefinitions.apiextensions.k8s.io
can no update pods --subresource=status -n team-a
can no update nodes --subresource=status
can no create namespaces;             can no delete namespaces
can no '*' '*'
can_check

step "RBAC for users: SlurmJobs aggregated into the built-in edit and view roles"
# alice may edit team-a, bob may view it: the built-in roles, bound as a platform team would.
k create namespace team-a >/dev/null
k -n team-a create rolebinding alice-edit --clusterrole=edit --user=alice >/dev/null
k -n team-a create rolebinding bob-view --clusterrole=view --user=bob >/dev/null
# controller-manager's clusterrole-aggregation controller copies the rules in, asynchronously.
for _ in $(seq 1 100); do
  [ "$(k auth can-i --as=alice create slurmjobs.kubeslurm.io -n team-a 2>/dev/null)" = yes ] && break
  sleep 0.1
done
rm -f "$WORK"/can/*   # the ServiceAccount's answers were checked above
SA_USER=alice
can yes create slurmjobs.kubeslurm.io -n team-a;  can yes patch slurmjobs.kubeslurm.io -n team-a
can yes delete slurmjobs.kubeslurm.io -n team-a;  can yes list slurmjobs.kubeslurm.io -n team-a
can no update slurmjobs.kubeslurm.io --subresource=status -n team-a
can no patch slurmjobs.kubeslurm.io --subresource=status -n team-a
can no create slurmjobs.kubeslurm.io -n team-b;   can no list partitions.kubeslurm.io
# Running steps in someone else's job (the step proxy's `attach`) is not edit's.
can no attach slurmjobs.kubeslurm.io -n team-a
SA_USER=bob
can yes list slurmjobs.kubeslurm.io -n team-a;    can yes watch slurmjobs.kubeslurm.io -n team-a
can no create slurmjobs.kubeslurm.io -n team-a;   can no patch slurmjobs.kubeslurm.io -n team-a
# Any authenticated user finds the query API (sprio, sshare), and reads nothing else there.
can yes get configmaps/kubeslurm-scheduler -n "$NS"
can no get configmaps/kubeslurm-job-ids -n "$NS"; can no list configmaps -n "$NS"
can no get secrets/kubeslurm-scheduler-tls -n "$NS"
can_check
SA_USER=system:serviceaccount:$NS:kubeslurm

step "the operator under the chart's ServiceAccount (its token, the Deployment's args)"
# v1.20's token controller (controller-manager) writes the ServiceAccount's token Secret.
# shellcheck source=tests/support/tenant.sh
source "$ROOT/tests/support/tenant.sh"
tenant_kubeconfig "$NS" kubeslurm "$WORK/sa.kubeconfig" ||
  fail "no token Secret for ServiceAccount $NS/kubeslurm"
umask 077
# Authenticated as the ServiceAccount: it may list nodes, and the refusal of secrets names it.
out=$(KUBECONFIG=$WORK/sa.kubeconfig k get nodes -o name 2>&1) ||
  fail "the ServiceAccount cannot list nodes: $out"
refusal=$(KUBECONFIG=$WORK/sa.kubeconfig k -n "$NS" get secrets 2>&1) &&
  fail "the ServiceAccount can read secrets"
[[ $refusal == *"\"$SA_USER\" cannot list resource \"secrets\""* ]] ||
  fail "unexpected answer to the ServiceAccount's secrets list: $refusal"
# The args exactly as the API server stored them, then local listen addresses (the last of a
# repeated flag wins) and a pinned identity to find in the Lease.
mapfile -t args < <(k -n "$NS" get deployment kubeslurm \
  -o 'jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')
[ "${#args[@]}" -ge 10 ] || fail "the Deployment has ${#args[@]} args"
"$OPERATOR" "${args[@]}" --help >/dev/null || fail "the operator refuses the chart's args: ${args[*]}"
# The query API with the chart's generated certificate (the files the pod would mount), and one
# of the Deployment's pods as its own: the operator labels that pod as the leader.
for want in --grpc-tls-cert=/etc/kubeslurm/tls/tls.crt --grpc-tls-key=/etc/kubeslurm/tls/tls.key; do
  printf -- '%s\n' "${args[@]}" | grep -qxF -- "$want" || fail "the Deployment does not pass $want"
done
SELECTOR=app.kubernetes.io/instance=$RELEASE,app.kubernetes.io/component=operator
pod=''
for _ in $(seq 1 100); do
  pod=$(k -n "$NS" get pods -l "$SELECTOR" -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null) || true
  [ -n "$pod" ] && break
  sleep 0.1
done
[ -n "$pod" ] || fail "no pod of the Deployment kubeslurm"
# The admission webhook: the sandbox's API server cannot reach a Service (no cluster network),
# so the configurations the chart installed are pointed at this process on 127.0.0.1, with a
# certificate for that address; everything else about them stays the chart's.
# shellcheck source=tests/support/free_port.sh
source "$ROOT/tests/support/free_port.sh"
# shellcheck source=tests/support/webhook.sh
source "$ROOT/tests/support/webhook.sh"
webhook_port=$(free_port)
local_webhook_cert "$WORK/local-webhook"
point_webhooks mutatingwebhookconfiguration "$webhook_port" "$WORK/local-webhook/tls.crt"
point_webhooks validatingwebhookconfiguration "$webhook_port" "$WORK/local-webhook/tls.crt"
for want in --webhook-tls-cert=/etc/kubeslurm/webhook-tls/tls.crt \
  --webhook-tls-key=/etc/kubeslurm/webhook-tls/tls.key; do
  printf -- '%s\n' "${args[@]}" | grep -qxF -- "$want" || fail "the Deployment does not pass $want"
done
# The step-token key as the pod would mount it (the installed Secret's `key`).
printf -- '%s\n' "${args[@]}" | grep -qxF -- --step-token-key-file=/etc/kubeslurm/step-token-key/key ||
  fail "the Deployment does not pass --step-token-key-file"
k -n "$NS" get secret kubeslurm-step-token-key -o 'jsonpath={.data.key}' | base64 -d >"$WORK/step-token-key"
k -n "$NS" get deployment kubeslurm \
  -o 'jsonpath={.spec.template.spec.containers[0].env[?(@.name=="SERVICE_ACCOUNT_NAME")].valueFrom.fieldRef.fieldPath}' |
  grep -qx spec.serviceAccountName || fail "the Deployment does not tell the operator its ServiceAccount"
# The log exists before the loop below reads it (the child opens it only when it runs).
: >"$WORK/operator.log"
POD_NAMESPACE=$NS POD_NAME=$pod SERVICE_ACCOUNT_NAME=kubeslurm \
  "$OPERATOR" --kubeconfig "$WORK/sa.kubeconfig" "${args[@]}" \
  --metrics-bind-address=127.0.0.1:0 --health-probe-bind-address=127.0.0.1:0 \
  --grpc-bind-address=127.0.0.1:0 --grpc-tls-cert="$WORK/tls/tls.crt" \
  --grpc-tls-key="$WORK/tls/tls.key" --webhook-bind-address="127.0.0.1:$webhook_port" \
  --webhook-tls-cert="$WORK/local-webhook/tls.crt" --webhook-tls-key="$WORK/local-webhook/tls.key" \
  --identity=chart-test --scheduling-interval=1 --log-format=text --job-retention=2 \
  --accounting-db="$WORK/accounting.db" --step-token-key-file="$WORK/step-token-key" \
  </dev/null >"$WORK/operator.log" 2>&1 &
OPERATOR_PID=$!
probes=''
for _ in $(seq 1 150); do
  kill -0 "$OPERATOR_PID" 2>/dev/null || fail "the operator exited"
  probes=$(sed -n 's/.* probes on port \([0-9]*\)$/\1/p' "$WORK/operator.log")
  if [ -n "$probes" ] && grep -q 'became leader as chart-test' "$WORK/operator.log" &&
    curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$probes/readyz" 2>/dev/null; then
    break
  fi
  sleep 0.2
done
grep -q 'became leader as chart-test' "$WORK/operator.log" || fail "the operator did not lead"
grep -qF "the operator is \"$SA_USER\"" "$WORK/operator.log" ||
  fail "the webhook does not know the operator as $SA_USER"
curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$probes/readyz" || fail "/readyz"
[ "$(k -n "$NS" get lease kubeslurm-operator -o 'jsonpath={.spec.holderIdentity}')" = chart-test ] ||
  fail "the Lease is not held by the operator"
grpc_port=$(sed -n 's/.*query API (gRPC, TLS) on port \([0-9]*\)$/\1/p' "$WORK/operator.log")
[ -n "$grpc_port" ] || fail "the operator does not serve the query API with the chart's certificate"
# The Service kubeslurm-scheduler selects the leader's pod, and only it (the label is patched in
# by the operator: pods patch).
# shellcheck disable=SC2016  # a go-template, not shell
leader_selector=$(k -n "$NS" get service kubeslurm-scheduler \
  -o 'go-template={{range $k, $v := .spec.selector}}{{$k}}={{$v}},{{end}}')
selected=''
for _ in $(seq 1 50); do
  selected=$(k -n "$NS" get pods -l "${leader_selector%,}" -o 'jsonpath={.items[*].metadata.name}')
  [ "$selected" = "$pod" ] && break
  sleep 0.2
done
[ "$selected" = "$pod" ] ||
  fail "the Service kubeslurm-scheduler selects '$selected', not the leader's pod $pod"
# Jobs run in team-a, charged to Account "team", on Partition "batch" (the simulated nodes).
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
EOF
# Rank pods need the namespace's default ServiceAccount, whose token controller-manager adds.
for _ in $(seq 1 100); do
  [ -n "$(k -n team-a get serviceaccount default -o 'jsonpath={.secrets[0].name}' 2>/dev/null)" ] && break
  sleep 0.1
done
# wait_for SECONDS WHAT CONDITION: CONDITION (shell code) holds within SECONDS, else fail.
wait_for() {
  local deadline=$((SECONDS + $1))
  until eval "$3"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$2 (not within $1 s)"
    kill -0 "$OPERATOR_PID" 2>/dev/null || fail "$2: the operator exited"
    sleep 0.2
  done
}
sj() { k -n team-a get sj "$1" -o "jsonpath={$2}" 2>/dev/null || true; }
# A 2-node x 8-GPU gang: a job id (the ConfigMap counter), its status (slurmjobs/status), rank
# pods created and bound (pods, pods/binding), its headless Service, events, then COMPLETED;
# the Partition's and Account's status; and, --job-retention=2 later, the job deleted.
k -n team-a create -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: gang}
spec:
  nodes: 2
  gpusPerNode: 8
  script: "#!/bin/sh\nsleep 1\n"
EOF
# shellcheck disable=SC2016  # wait_for evaluates its conditions
{
  wait_for 30 "the gang's job id" '[ -n "$(sj gang .status.jobId)" ]'
  id=$(sj gang .status.jobId)
  # The webhook stamped the submitter: the sandbox's admin, authenticated by its certificate.
  [ "$(sj gang .spec.submitter.username)" = kubernetes-admin ] && [ "$(sj gang .spec.user)" = kubernetes-admin ] ||
    fail "the admission webhook did not stamp the gang with its submitter"
  wait_for 60 "the gang's end" '[ "$(sj gang .status.state)" = COMPLETED ]'
  nodelist=$(sj gang .status.nodeList)
  k -n team-a get service gang -o name >/dev/null || fail "no headless Service for the gang"
  k -n "$NS" get configmap kubeslurm-job-ids -o name >/dev/null || fail "no job-id ConfigMap"
  wait_for 10 "events on the gang" \
    '[ -n "$(k -n team-a get events --field-selector involvedObject.name=gang -o name 2>/dev/null)" ]'
  wait_for 20 "the Partition's status" '[ -n "$(k get partition batch -o "jsonpath={.status.gpus}")" ]'
  wait_for 20 "the Account's status" '[ -n "$(k get account team -o "jsonpath={.status.rawUsage}")" ]'
  echo "  job $id ran on $nodelist and COMPLETED; partition batch: $(k get partition batch \
    -o 'jsonpath={.status.gpus}') GPUs; account team: rawUsage $(k get account team \
    -o 'jsonpath={.status.rawUsage}')" >&2
  wait_for 30 "the finished job's removal after --job-retention" \
    '! k -n team-a get sj gang -o name >/dev/null 2>&1'
  # Its accounting record outlives it (issue 21): retention waited for the ended record.
  record=$(python3 - "$WORK/accounting.db" "$id" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("SELECT state, user, account, partition, nodes, node_list, end_time IS NOT NULL"
                 " FROM jobs WHERE cluster = 'kubeslurm' AND job_id = ?", (int(sys.argv[2]),)).fetchone()
print("|".join(map(str, row)) if row else "none")
PY
)
  case $record in
    "COMPLETED|kubernetes-admin|"*"|2|$nodelist|1") echo "  job $id's record: $record" >&2 ;;
    *) fail "job $id's accounting record after retention: $record" ;;
  esac
}
# A database outage loses no record (issue 21): another process holds the store's write lock
# while a job runs and ends. The writer's batches fail and are kept (counted in
# kubeslurm_accounting_write_failures_total), the job outlives its --job-retention until its
# ended record is committed, and once the lock goes the record is written, once.
python3 - "$WORK/accounting.db" "$WORK/db-locked" <<'PY' &
import pathlib, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN EXCLUSIVE")
pathlib.Path(sys.argv[2]).write_text("locked")
deadline = time.time() + 120  # held at most two minutes, should the test stop first
while pathlib.Path(sys.argv[2]).exists() and time.time() < deadline:
    time.sleep(0.1)
db.execute("ROLLBACK")
PY
LOCK_PID=$!
# shellcheck disable=SC2016  # wait_for evaluates its conditions
{
  wait_for 10 "the store's lock" '[ -s "$WORK/db-locked" ]'
  k -n team-a create -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: outage}
spec: {nodes: 1, gpusPerNode: 1, script: "#!/bin/sh\nsleep 1\n"}
EOF
  wait_for 60 "outage's end while the store is locked" '[ "$(sj outage .status.state)" = COMPLETED ]'
  outage_id=$(sj outage .status.jobId)
  metrics_port=$(sed -n 's/.* metrics on port \([0-9]*\)$/\1/p' "$WORK/operator.log")
  failures() {
    curl -fsS --max-time 5 "http://127.0.0.1:$metrics_port/metrics" |
      awk '$1 == "kubeslurm_accounting_write_failures_total" { print int($2) }'
  }
  wait_for 20 "a failed batch while the store is locked" '[ "$(failures)" -gt 0 ]'
  sleep 4  # twice --job-retention past its end: kept, since its ended record is not committed
  k -n team-a get sj outage -o name >/dev/null 2>&1 ||
    fail "job $outage_id was deleted before its record was written (the store was locked)"
  rm -f "$WORK/db-locked"
  wait "$LOCK_PID" || fail "the process holding the store's lock failed"
  wait_for 60 "outage's removal once its record is written" \
    '! k -n team-a get sj outage -o name >/dev/null 2>&1'
  outage_records=$(python3 - "$WORK/accounting.db" "$outage_id" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT state FROM jobs WHERE cluster = 'kubeslurm' AND job_id = ?",
                  (int(sys.argv[2]),)).fetchall()
print(",".join(r[0] for r in rows))
PY
)
  [ "$outage_records" = COMPLETED ] ||
    fail "job $outage_id's records after the store's outage: '$outage_records' (want one, COMPLETED)"
  echo "  store locked: $(failures) failed batches kept; job $outage_id kept until its record, then written once" >&2
}
# An array: the operator creates one SlurmJob per task (create), and cancelling the array
# patches spec.cancel onto each running task (patch), whose rank pods it deletes.
k -n team-a create -f - >/dev/null <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: SlurmJob
metadata: {name: sweep}
spec:
  nodes: 1
  array: "0-1"
  script: "#!/bin/sh\nsleep 600\n"
EOF
tasks=''
for _ in $(seq 1 100); do
  tasks=$(k -n team-a get sj -l kubeslurm.io/array-job=sweep -o name 2>/dev/null | wc -l)
  [ "$tasks" = 2 ] && break
  sleep 0.2
done
[ "$tasks" = 2 ] || fail "the array's 2 task SlurmJobs were not created ($tasks)"
k -n team-a patch sj sweep --type=merge -p '{"spec":{"cancel":true}}' >/dev/null
cancelled=''
for _ in $(seq 1 100); do
  cancelled=$(k -n team-a get sj -l kubeslurm.io/array-job=sweep -o 'jsonpath={.items[*].spec.cancel}')
  [ "$cancelled" = "true true" ] && break
  sleep 0.2
done
[ "$cancelled" = "true true" ] || fail "cancelling the array did not cancel its tasks ($cancelled)"
# shellcheck disable=SC2016
wait_for 30 "the cancelled tasks' end" \
  '[ "$(k -n team-a get sj -l kubeslurm.io/array-job=sweep -o "jsonpath={.items[*].status.state}")" = "CANCELLED CANCELLED" ]'
echo "  array: 2 tasks created, then cancelled" >&2
# sprio as a user of the sandbox's token context: the address is the port here, the CA and the
# name the certificate must carry come from the chart's ConfigMap; the operator checks the
# token with TokenReview and the caller with SubjectAccessReview (system:auth-delegator).
sprio_out=$(KUBESLURM_SCHEDULER=127.0.0.1:$grpc_port KUBESLURM_OPERATOR_NAMESPACE=$NS \
  "$CLI" sprio --context kubeslurm-sandbox-token 2>&1) ||
  fail "sprio through the chart's ConfigMap failed: $sprio_out"
[[ $sprio_out == *JOBID*PRIORITY* ]] || fail "unexpected sprio output: $sprio_out"
echo "  sprio reached the query API with the ConfigMap's ca.crt and serverName" >&2
# sacct finds the gang job, whose SlurmJob retention deleted, in the operator's accounting store
# through the same API (issue 21).
sacct_out=$(KUBESLURM_SCHEDULER=127.0.0.1:$grpc_port KUBESLURM_OPERATOR_NAMESPACE=$NS \
  "$CLI" sacct --context kubeslurm-sandbox-token --namespace team-a -j "$id" -X -n -P \
  -o JobID,State,User,NNodes 2>&1) || fail "sacct through the query API failed: $sacct_out"
[ "$sacct_out" = "$id|COMPLETED|kubernetes-admin|2" ] ||
  fail "sacct -j $id after retention: '$sacct_out', expected its record from the store"
echo "  sacct -j $id read the deleted job's record from the store: $sacct_out" >&2
if grep -niE 'forbidden|\b403\b' "$WORK/operator.log"; then
  fail "the operator was refused something under the chart's RBAC (lines above)"
fi
kill -TERM "$OPERATOR_PID"
wait "$OPERATOR_PID" || true
OPERATOR_PID=''
# Stepping down removes the label: the Service selects no pod until a new leader labels its own.
[ -z "$(k -n "$NS" get pod "$pod" -o 'jsonpath={.metadata.labels.kubeslurm\.io/leader}')" ] ||
  fail "the operator left its pod labelled kubeslurm.io/leader after stepping down"

step "helm uninstall $RELEASE: nothing of the release is left (the CRDs stay, as Helm intends)"
helm uninstall "$RELEASE" -n "$NS" --wait --timeout 60s >&2
left=$(k get deployments,serviceaccounts,roles,rolebindings,services,poddisruptionbudgets,configmaps,secrets \
  -n "$NS" -l "app.kubernetes.io/instance=$RELEASE" -o name)
left+=$(k get clusterroles,clusterrolebindings -l "app.kubernetes.io/instance=$RELEASE" -o name)
[ -z "$left" ] || fail "left after helm uninstall: $left"
k get clusterrole kubeslurm >/dev/null 2>&1 && fail "ClusterRole kubeslurm left after uninstall"
k get crd slurmjobs.kubeslurm.io >/dev/null || fail "helm uninstall removed a CRD (it must not)"

step "values-all.yaml on the cluster: dry-run (with examples, CRDs present), install, uninstall"
k create namespace "$NS_ALL" >/dev/null
k create namespace monitoring >/dev/null   # values-all puts the dashboards where Grafana looks
helm template "$RELEASE_ALL" "$CHART" -n "$NS_ALL" -f "$VALUES_ALL" --validate >"$WORK/all-cluster.yaml"
# The sandbox has no monitoring.coreos.com/v1: the monitoring objects must not be rendered.
expect_kind ServiceMonitor 0 "$WORK/all-cluster.yaml"
expect_kind Partition 1 "$WORK/all-cluster.yaml"
k apply --dry-run=server -f "$WORK/all-cluster.yaml" >&2
helm install "$RELEASE_ALL" "$CHART" -n "$NS_ALL" -f "$VALUES_ALL" >"$WORK/install-all.out"
grep -q 'no ServiceMonitor was created' "$WORK/install-all.out" ||
  fail "NOTES.txt does not say the ServiceMonitor was skipped"
k get partition train >/dev/null || fail "example Partition not created"
k get accounts vision nlp >/dev/null || fail "example Accounts not created"
[ "$(k -n monitoring get configmaps -l grafana_dashboard=1 -o name | wc -l)" = "$DASHBOARD_COUNT" ] ||
  fail "the dashboards' ConfigMaps are not in namespace monitoring"
# values-all binds the Partition/Account reader role to system:authenticated (sinfo for all).
[ "$(k auth can-i --as=carol --as-group=system:authenticated list partitions.kubeslurm.io)" = yes ] ||
  fail "an authenticated user cannot list partitions with clusterReaderGroups set"
[ "$(k auth can-i --as=carol --as-group=system:authenticated create slurmjobs.kubeslurm.io \
  -n team-a 2>/dev/null)" = no ] || fail "an authenticated user can create SlurmJobs in team-a"
mapfile -t args < <(k -n "$NS_ALL" get deployment "$RELEASE_ALL-kubeslurm" \
  -o 'jsonpath={range .spec.template.spec.containers[0].args[*]}{@}{"\n"}{end}')
[ "${#args[@]}" -ge 20 ] || fail "the values-all Deployment has ${#args[@]} args"
"$OPERATOR" "${args[@]}" --help >/dev/null || fail "the operator refuses values-all's args: ${args[*]}"
# Once the cluster serves monitoring.coreos.com/v1, an upgrade adds the ServiceMonitor and
# PrometheusRule (helm asks the API server's discovery, as a real cluster's would answer).
k apply -f "$ROOT/tests/integration/chart/monitoring-crds-stub.yaml" >/dev/null
k wait --for condition=established --timeout=30s crd/servicemonitors.monitoring.coreos.com \
  crd/prometheusrules.monitoring.coreos.com >/dev/null
helm upgrade "$RELEASE_ALL" "$CHART" -n "$NS_ALL" -f "$VALUES_ALL" >/dev/null
k -n "$NS_ALL" get servicemonitor "$RELEASE_ALL-kubeslurm" -o name >/dev/null ||
  fail "no ServiceMonitor although the cluster serves monitoring.coreos.com/v1"
k -n "$NS_ALL" get prometheusrule "$RELEASE_ALL-kubeslurm" -o name >/dev/null ||
  fail "no PrometheusRule although the cluster serves monitoring.coreos.com/v1"
helm uninstall "$RELEASE_ALL" -n "$NS_ALL" --wait --timeout 60s >&2
k get partition train >/dev/null 2>&1 && fail "example Partition left after uninstall"
left=$(k get deployments,serviceaccounts,roles,rolebindings,services,poddisruptionbudgets \
  -n "$NS_ALL" -l "app.kubernetes.io/instance=$RELEASE_ALL" -o name)
left+=$(k get servicemonitors,prometheusrules -n "$NS_ALL" -o name)
left+=$(k get configmaps -n monitoring -l "app.kubernetes.io/instance=$RELEASE_ALL" -o name)
left+=$(k get clusterroles,clusterrolebindings -l "app.kubernetes.io/instance=$RELEASE_ALL" -o name)
[ -z "$left" ] || fail "left after helm uninstall: $left"

step "deploy/manifests/ with real kubectl apply, then kubectl delete"
# pdb.yaml is policy/v1, which v1.20 does not serve (docs/deploy.md): the rest is applied.
M=$ROOT/deploy/manifests
k apply -f "$M/namespace.yaml" -f "$M/crds.yaml" -f "$M/kubeslurm.yaml" >&2
k -n "$NS" get deployment/kubeslurm serviceaccount/kubeslurm role/kubeslurm rolebinding/kubeslurm \
  service/kubeslurm-metrics service/kubeslurm-scheduler configmap/kubeslurm-scheduler -o name >/dev/null
k get clusterrole/kubeslurm clusterrolebinding/kubeslurm clusterrolebinding/kubeslurm-auth-delegator \
  -o name >/dev/null
k delete -f "$M/kubeslurm.yaml" --wait=true >/dev/null
left=$(k get deployments,serviceaccounts,roles,rolebindings,services,configmaps -n "$NS" \
  -l app.kubernetes.io/instance=kubeslurm -o name)
left+=$(k get clusterroles,clusterrolebindings -l app.kubernetes.io/instance=kubeslurm -o name)
[ -z "$left" ] || fail "left after kubectl delete: $left"
exit 0
