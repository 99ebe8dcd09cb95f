{{/* Names and labels shared by every template. */}}

{{- define "kubeslurm.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's object name: "<release>-kubeslurm", or the release name if it already says kubeslurm. */}}
{{- define "kubeslurm.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubeslurm.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels: stable across upgrades (a Deployment's selector is immutable). */}}
{{- define "kubeslurm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubeslurm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "kubeslurm.labels" -}}
helm.sh/chart: {{ include "kubeslurm.chart" . }}
{{ include "kubeslurm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubeslurm
{{- end -}}

{{- define "kubeslurm.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubeslurm.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kubeslurm.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
The operator's command-line flags, one list item each, built from .Values.operator. Every flag
here is one `kubeslurm-operator --help` lists; tests/integration/chart_test.sh runs the real
binary with the rendered args (plus --help, which it parses last) to prove it accepts them.
*/}}
{{- define "kubeslurm.args" -}}
{{- $o := .Values.operator -}}
- {{ printf "--leader-elect=%v" (.Values.leaderElection.enabled) | quote }}
{{- if .Values.leaderElection.enabled }}
- {{ printf "--leader-election-id=%v" (.Values.leaderElection.leaseName) | quote }}
{{- end }}
{{- with $o.watchNamespace }}
- {{ printf "--watch-namespace=%v" (.) | quote }}
{{- end }}
- {{ printf "--scheduler-name=%v" ($o.schedulerName) | quote }}
- {{ printf "--scheduling-interval=%v" ($o.schedulingInterval) | quote }}
- {{ printf "--min-cycle-interval=%v" ($o.minCycleInterval) | quote }}
{{- with $o.backfill }}
{{- if not (kindIs "invalid" .maxJobTest) }}
- {{ printf "--bf-max-job-test=%v" (int64 .maxJobTest) | quote }}
{{- end }}
{{- if not (kindIs "invalid" .window) }}
- {{ printf "--bf-window=%v" (int64 .window) | quote }}
{{- end }}
{{- if not (kindIs "invalid" .resolution) }}
- {{ printf "--bf-resolution=%v" (int64 .resolution) | quote }}
{{- end }}
{{- if not (kindIs "invalid" .maxTime) }}
- {{ printf "--bf-max-time=%v" (.maxTime) | quote }}
{{- end }}
{{- end }}
- {{ printf "--default-image=%v" ($o.defaultImage) | quote }}
{{- if $o.tools.enabled }}
- {{ printf "--tools-image=%s:%s" $o.tools.repository (default .Chart.AppVersion $o.tools.tag) | quote }}
- {{ printf "--step-token-key-file=%s/key" (include "kubeslurm.stepTokenKey.dir" .) | quote }}
{{- end }}
- {{ printf "--cluster-name=%v" ($o.clusterName) | quote }}
- {{ printf "--cluster-domain=%v" ($o.clusterDomain) | quote }}
- {{ printf "--kill-wait=%v" (int64 $o.killWait) | quote }}
- {{ printf "--first-job-id=%v" (int64 $o.firstJobId) | quote }}
- {{ printf "--max-array-size=%v" (int64 $o.maxArraySize) | quote }}
- {{ printf "--job-retention=%v" (int64 $o.jobRetention) | quote }}
{{- if .Values.accounting.sqlite.enabled }}
- {{ printf "--accounting-db=%s/accounting.db" (include "kubeslurm.accounting.dir" .) | quote }}
{{- end }}
{{- if .Values.accounting.postgres.enabled }}
- {{ printf "--accounting-postgres-dsn-file=%s/dsn" (include "kubeslurm.accounting.dsnDir" .) | quote }}
{{- end }}
- {{ printf "--gang-start-timeout=%v" (int64 $o.gangStartTimeout) | quote }}
- {{ printf "--gang-start-retries=%v" (int64 $o.gangStartRetries) | quote }}
- {{ printf "--gang-placement=%v" ($o.gangPlacement) | quote }}
- {{ printf "--gang-write-parallelism=%v" (int64 $o.gangWriteParallelism) | quote }}
- {{ printf "--kube-api-qps=%v" ($o.kubeApiQps) | quote }}
- {{ printf "--kube-api-burst=%v" (int64 $o.kubeApiBurst) | quote }}
- {{ printf "--metrics-bind-address=0.0.0.0:%v" .Values.ports.metrics | quote }}
- {{ printf "--health-probe-bind-address=0.0.0.0:%v" .Values.ports.probes | quote }}
{{- if .Values.queryApi.enabled }}
- {{ printf "--grpc-bind-address=0.0.0.0:%v" .Values.queryApi.port | quote }}
- {{ printf "--grpc-tls-cert=%s/tls.crt" (include "kubeslurm.queryApi.tlsDir" .) | quote }}
- {{ printf "--grpc-tls-key=%s/tls.key" (include "kubeslurm.queryApi.tlsDir" .) | quote }}
{{- else }}
- "--grpc-bind-address=0"
{{- end }}
{{- if .Values.admissionWebhook.enabled }}
- {{ printf "--webhook-bind-address=0.0.0.0:%v" .Values.admissionWebhook.port | quote }}
- {{ printf "--webhook-tls-cert=%s/tls.crt" (include "kubeslurm.webhook.tlsDir" .) | quote }}
- {{ printf "--webhook-tls-key=%s/tls.key" (include "kubeslurm.webhook.tlsDir" .) | quote }}
{{- else }}
- "--webhook-bind-address=0"
{{- end }}
- {{ printf "--log-format=%v" ($o.logFormat) | quote }}
- {{ printf "--log-level=%v" ($o.logLevel) | quote }}
{{- range $o.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The query API (templates/query-api.yaml): its Service, and the Secret with its certificate. */}}
{{- define "kubeslurm.queryApi.serviceName" -}}
{{- printf "%s-scheduler" (include "kubeslurm.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubeslurm.queryApi.secretName" -}}
{{- default (printf "%s-tls" (include "kubeslurm.queryApi.serviceName" .)) .Values.queryApi.tls.secretName -}}
{{- end -}}

{{/* Where the operator container mounts that Secret (read-only). */}}
{{- define "kubeslurm.queryApi.tlsDir" -}}
/etc/kubeslurm/tls
{{- end -}}

{{/* The admission webhook (templates/admission-webhook.yaml): its Service and certificate. */}}
{{- define "kubeslurm.webhook.serviceName" -}}
{{- printf "%s-webhook" (include "kubeslurm.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubeslurm.webhook.secretName" -}}
{{- default (printf "%s-tls" (include "kubeslurm.webhook.serviceName" .)) .Values.admissionWebhook.tls.secretName -}}
{{- end -}}

{{- define "kubeslurm.webhook.tlsDir" -}}
/etc/kubeslurm/webhook-tls
{{- end -}}

{{/* The accounting store (values accounting.sqlite): the claim, and where the operator mounts it. */}}
{{- define "kubeslurm.accounting.claimName" -}}
{{- default (printf "%s-accounting" (include "kubeslurm.fullname" .) | trunc 63 | trimSuffix "-") .Values.accounting.sqlite.existingClaim -}}
{{- end -}}

{{- define "kubeslurm.accounting.dir" -}}
/var/lib/kubeslurm
{{- end -}}

{{/* Where the PostgreSQL connection string's Secret is mounted (values accounting.postgres). */}}
{{- define "kubeslurm.accounting.dsnDir" -}}
/etc/kubeslurm/accounting
{{- end -}}

{{/* The key the jobs' step tokens derive from (templates/step-token-key.yaml). */}}
{{- define "kubeslurm.stepTokenKey.secretName" -}}
{{- default (printf "%s-step-token-key" (include "kubeslurm.fullname" .) | trunc 63 | trimSuffix "-") .Values.operator.tools.stepTokenKey.secretName -}}
{{- end -}}

{{/* Where the operator container mounts that Secret (read-only). */}}
{{- define "kubeslurm.stepTokenKey.dir" -}}
/etc/kubeslurm/step-token-key
{{- end -}}
