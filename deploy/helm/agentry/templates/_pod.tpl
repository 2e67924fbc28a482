{{/*
The pod template every workload shares (API, worker pools, migration Job): restricted security
context, a writable /tmp only (the root file system is read-only), mounted certificates, secrets
by reference, extension points. Arguments (dict):
  root         the chart's context
  component    api | worker | worker-executions | worker-tasks | migrations
  command      the container's command (list)
  env          more env entries (list of maps)
  settingsEnv  true: the settings as env entries (a hook Job runs before the ConfigMap exists)
  ports, probes, resources, terminationGracePeriodSeconds, restartPolicy
  serviceAccountName  instead of the chart's (the migration Job's, made before the release's)
*/}}
{{- define "agentry.podTemplate" -}}
{{- $root := .root -}}
{{- $values := $root.Values -}}
metadata:
  labels:
    {{- include "agentry.selectorLabels" (dict "root" $root "component" .component) | nindent 4 }}
    {{- with $values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/settings: {{ include "agentry.settings" $root | sha256sum }}
    {{- with $values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ .serviceAccountName | default (include "agentry.serviceAccountName" $root) }}
  # The processes never call the Kubernetes API.
  automountServiceAccountToken: false
  securityContext:
    {{- toYaml $values.podSecurityContext | nindent 4 }}
  {{- with .terminationGracePeriodSeconds }}
  terminationGracePeriodSeconds: {{ . }}
  {{- end }}
  {{- with .restartPolicy }}
  restartPolicy: {{ . }}
  {{- end }}
  {{- with $values.image.pullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with $values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if and $values.topologySpread.enabled (ne .component "migrations") }}
  topologySpreadConstraints:
    {{- range $key, $policy := dict "topology.kubernetes.io/zone" $values.topologySpread.zone "kubernetes.io/hostname" $values.topologySpread.node }}
    - maxSkew: 1
      topologyKey: {{ $key }}
      whenUnsatisfiable: {{ $policy }}
      labelSelector:
        matchLabels:
          {{- include "agentry.selectorLabels" (dict "root" $root "component" $.component) | nindent 10 }}
      # Per rollout: a new ReplicaSet spreads by itself.
      matchLabelKeys: [pod-template-hash]
    {{- end }}
  {{- end }}
  {{- with $values.initContainers }}
  initContainers:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ .component }}
      image: {{ include "agentry.image" $root }}
      imagePullPolicy: {{ $values.image.pullPolicy }}
      command: {{ toJson .command }}
      {{- with .ports }}
      ports:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if not .settingsEnv }}
      envFrom:
        - configMapRef:
            name: {{ include "agentry.fullname" $root }}
        {{- with $values.extraEnvFrom }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      env:
        {{- if .settingsEnv }}
        {{- range $name, $value := include "agentry.settings" $root | fromYaml }}
        - name: {{ $name }}
          value: {{ $value | toString | quote }}
        {{- end }}
        {{- end }}
        {{- include "agentry.secretEnv" $root | trim | nindent 8 }}
        {{- with .env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .probes }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
      resources:
        {{- toYaml .resources | nindent 8 }}
      securityContext:
        {{- toYaml $values.securityContext | nindent 8 }}
      volumeMounts:
        - { name: tmp, mountPath: /tmp }
        {{- range include "agentry.certificates" $root | fromYamlArray }}
        - { name: {{ .name }}, mountPath: {{ .path }}, readOnly: true }
        {{- end }}
        {{- with $values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    {{- with $values.extraContainers }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  volumes:
    # The one writable place (os.tmpdir()); everything else is the read-only image.
    - name: tmp
      emptyDir: { sizeLimit: 256Mi }
    {{- range include "agentry.certificates" $root | fromYamlArray }}
    - name: {{ .name }}
      secret: { secretName: {{ .secret }} }
    {{- end }}
    {{- with $values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}
