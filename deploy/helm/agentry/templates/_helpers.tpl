{{/* Names and labels. */}}
{{- define "agentry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "agentry.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "agentry.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "agentry.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* selector labels of a component: (dict "root" $ "component" "api") */}}
{{- define "agentry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agentry.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "agentry.labels" -}}
{{ include "agentry.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "agentry.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "agentry.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "agentry.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The worker pools: one ("worker", both queues) or two ("worker-executions", "worker-tasks").
Each: name suffix, AGENTRY_WORKER_QUEUES, and the values key of its sizes.
*/}}
{{- define "agentry.pools" -}}
{{- if .Values.workers.split -}}
- { suffix: worker-executions, queues: executions, key: executions }
- { suffix: worker-tasks, queues: tasks, key: tasks }
{{- else -}}
- { suffix: worker, queues: "executions,tasks", key: executions }
{{- end -}}
{{- end -}}

{{/* One secret value as an env entry: (dict "root" $ "env" "DATABASE_URL" "value" "databaseUrl" "optional" false) */}}
{{- define "agentry.secretEnvEntry" -}}
{{- $ref := get .root.Values.secrets.refs .value | default dict -}}
{{- $name := $ref.name | default .root.Values.secrets.existingSecret -}}
{{- $key := $ref.key | default (get .root.Values.secrets.keys .value) -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "secrets.existingSecret (or secrets.refs.%s.name) names the Secret holding %s" .value .env) $name }}
      key: {{ $key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* The secret values every process reads, each from a Secret of yours. */}}
{{- define "agentry.secretEnv" -}}
{{- $root := . -}}
{{- range $pair := list (list "DATABASE_URL" "databaseUrl") (list "REDIS_URL" "redisUrl") (list "AGENTRY_APPLICATION_SECRET" "applicationSecret") }}
{{ include "agentry.secretEnvEntry" (dict "root" $root "env" (index $pair 0) "value" (index $pair 1)) }}
{{- end }}
{{- if .Values.secrets.previousApplicationSecret }}
{{ include "agentry.secretEnvEntry" (dict "root" . "env" "AGENTRY_APPLICATION_SECRET_PREVIOUS" "value" "applicationSecretPrevious" "optional" true) }}
{{- end }}
{{- if .Values.secrets.adminKey }}
{{ include "agentry.secretEnvEntry" (dict "root" . "env" "AGENTRY_ADMIN_KEY_ID" "value" "adminKeyId") }}
{{ include "agentry.secretEnvEntry" (dict "root" . "env" "AGENTRY_ADMIN_KEY_SECRET" "value" "adminKeySecret") }}
{{- end }}
{{- with .Values.temporal.apiKey.secretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.temporal.apiKey.key }}
{{- end }}
{{- end -}}

{{/* Settings that are not secrets, for the ConfigMap and for the hook Job (which runs before it exists). */}}
{{- define "agentry.settings" -}}
TEMPORAL_ADDRESS: {{ .Values.temporal.address | quote }}
TEMPORAL_NAMESPACE: {{ .Values.temporal.namespace | quote }}
AGENTRY_TASK_QUEUE: {{ .Values.temporal.taskQueue | quote }}
AGENTRY_MIGRATE_ON_START: {{ (not .Values.migrations.job) | quote }}
{{- if or .Values.temporal.tls.enabled .Values.temporal.mtls.secretName .Values.temporal.apiKey.secretName }}
TEMPORAL_TLS: "true"
{{- end }}
{{- with .Values.temporal.tls.serverName }}
TEMPORAL_TLS_SERVER_NAME: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.tls.caSecret }}
TEMPORAL_TLS_SERVER_CA_CERT_PATH: /etc/agentry/tls/temporal-ca/ca.crt
{{- end }}
{{- if .Values.temporal.mtls.secretName }}
TEMPORAL_TLS_CLIENT_CERT_PATH: /etc/agentry/tls/temporal/tls.crt
TEMPORAL_TLS_CLIENT_KEY_PATH: /etc/agentry/tls/temporal/tls.key
{{- end }}
{{- if .Values.tls.redis.caSecret }}
AGENTRY_REDIS_TLS_CA_PATH: /etc/agentry/tls/redis/ca.crt
{{- end }}
{{- range $name, $value := .Values.config }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* Mounted certificates: (name, Secret, mount path) for each one configured. */}}
{{- define "agentry.certificates" -}}
{{- with .Values.tls.database.caSecret }}
- { name: database-ca, secret: {{ . }}, path: /etc/agentry/tls/database }
{{- end }}
{{- with .Values.tls.redis.caSecret }}
- { name: redis-ca, secret: {{ . }}, path: /etc/agentry/tls/redis }
{{- end }}
{{- with .Values.temporal.tls.caSecret }}
- { name: temporal-ca, secret: {{ . }}, path: /etc/agentry/tls/temporal-ca }
{{- end }}
{{- with .Values.temporal.mtls.secretName }}
- { name: temporal-mtls, secret: {{ . }}, path: /etc/agentry/tls/temporal }
{{- end }}
{{- end -}}
