{{/*
What each pool scales on (issue 36 item 3; the figures behind the numbers are in
docs/decisions.md, "Kubernetes"). Arguments (dict): root, pool (from "agentry.pools"), name.
*/}}

{{/* Model streams per pod at which the model-call pool scales out: a share of its slots. */}}
{{- define "agentry.streamsTarget" -}}
{{- $a := .root.Values.workers.executions.autoscaling -}}
{{- div (mul .root.Values.workers.executions.modelStreams $a.streamsPercent) 100 -}}
{{- end -}}

{{/* The HPA behaviour of a pool (its autoscaling values): fast up, slow down. */}}
{{- define "agentry.behavior" -}}
scaleUp:
  stabilizationWindowSeconds: {{ .scaleUp.stabilizationSeconds }}
  selectPolicy: Max
  policies:
    - { type: Percent, value: {{ .scaleUp.percent }}, periodSeconds: {{ .scaleUp.periodSeconds }} }
    - { type: Pods, value: {{ .scaleUp.pods }}, periodSeconds: {{ .scaleUp.periodSeconds }} }
scaleDown:
  stabilizationWindowSeconds: {{ .scaleDown.stabilizationSeconds }}
  selectPolicy: Min
  policies:
    - { type: Percent, value: {{ .scaleDown.percent }}, periodSeconds: {{ .scaleDown.periodSeconds }} }
{{- end -}}

{{/* An HPA's spec without its target (the Worker Controller injects that per version). */}}
{{- define "agentry.hpaSpec" -}}
{{- $a := (get .root.Values.workers .pool.key).autoscaling -}}
minReplicas: {{ max 1 $a.minReplicas }}
maxReplicas: {{ $a.maxReplicas }}
metrics:
  {{- if eq .pool.key "executions" }}
  # agentry_model_streams through the Prometheus Adapter (docs/operations.md, "Kubernetes").
  - type: Pods
    pods:
      metric: { name: agentry_model_streams }
      target: { type: AverageValue, averageValue: {{ include "agentry.streamsTarget" . | quote }} }
  {{- end }}
  - type: Resource
    resource:
      name: cpu
      target: { type: Utilization, averageUtilization: {{ $a.cpuPercent }} }
behavior:
  {{- include "agentry.behavior" $a | nindent 2 }}
{{- end -}}

{{/* A KEDA ScaledObject's spec; its scaleTargetRef is given by the caller. */}}
{{- define "agentry.scaledObjectSpec" -}}
{{- $root := .root -}}
{{- $a := (get $root.Values.workers .pool.key).autoscaling -}}
{{- $t := $root.Values.temporal -}}
{{- if eq .pool.key "executions" }}
# Never to zero: a model stream needs a worker at once, and the backlog is the wrong signal.
minReplicaCount: {{ max 1 $a.minReplicas }}
{{- else }}
minReplicaCount: {{ $a.minReplicas }}
pollingInterval: {{ $a.pollingInterval }}
cooldownPeriod: {{ $a.cooldownPeriod }}
{{- end }}
maxReplicaCount: {{ $a.maxReplicas }}
advanced:
  horizontalPodAutoscalerConfig:
    behavior:
      {{- include "agentry.behavior" $a | nindent 6 }}
triggers:
  {{- if eq .pool.key "executions" }}
  - type: prometheus
    metadata:
      serverAddress: {{ $a.prometheusAddress }}
      query: {{ printf "sum(agentry_model_streams{namespace=\"%s\",pod=~\"%s-.*\"})" $root.Release.Namespace .name | quote }}
      threshold: {{ include "agentry.streamsTarget" . | quote }}
  - type: cpu
    metricType: Utilization
    metadata: { value: {{ $a.cpuPercent | quote }} }
  {{- else }}
  # Activity tasks waiting on the -tasks queue (its workflows run on the executions pool).
  - type: temporal
    metadata:
      endpoint: {{ $t.address }}
      namespace: {{ $t.namespace }}
      taskQueue: {{ printf "%s-tasks" $t.taskQueue }}
      queueTypes: activity
      targetQueueSize: {{ $a.targetBacklog | quote }}
      activationTargetQueueSize: {{ $a.activationBacklog | quote }}
      enableTLS: {{ if or $t.tls.enabled $t.apiKey.secretName $t.mtls.secretName }}"true"{{ else }}"false"{{ end }}
      {{- with $t.tls.serverName }}
      tlsServerName: {{ . }}
      {{- end }}
    {{- if or $t.apiKey.secretName $t.mtls.secretName }}
    authenticationRef: { name: {{ include "agentry.fullname" $root }}-temporal }
    {{- end }}
  {{- end }}
{{- end -}}
