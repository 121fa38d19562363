{{/* Chart name, overridable. */}}
{{- define "zc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-scoped base name of every object. */}}
{{- define "zc.fullname" -}}
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

{{/* Labels on every object. */}}
{{- define "zc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "zc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: zc
{{- end -}}

{{/* Selector labels of one service; call with (dict "root" $ "name" "gateway"). */}}
{{- define "zc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "zc.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/*
Name of an object: <fullname>-<suffix>, at most 63 characters (a Service name is a DNS label).
The release part is shortened, never the suffix, so names stay distinct. Call with
(dict "root" $ "suffix" "gateway-admin").
*/}}
{{- define "zc.objectName" -}}
{{- $room := int (sub 62 (len .suffix)) -}}
{{- printf "%s-%s" (include "zc.fullname" .root | trunc $room | trimSuffix "-") .suffix -}}
{{- end -}}

{{/* Object name of one service's resources: <fullname>-<service>. */}}
{{- define "zc.serviceName" -}}
{{- include "zc.objectName" (dict "root" .root "suffix" .name) -}}
{{- end -}}

{{/*
Labels of one service's pods: its selector labels, the chart's labels and podLabels (global,
then per service), each key once (kustomize, Flux and Argo CD refuse repeated keys). The
selector labels win over anything podLabels says.
*/}}
{{- define "zc.podLabels" -}}
{{- $l := merge (fromYaml (include "zc.selectorLabels" .)) (fromYaml (include "zc.labels" .root)) (deepCopy (.svc.podLabels | default dict)) (deepCopy (.root.Values.podLabels | default dict)) -}}
{{- toYaml $l -}}
{{- end -}}

{{/* Whether a service may run more than one replica (then it gets a PodDisruptionBudget). */}}
{{- define "zc.multiReplica" -}}
{{- if or (gt (int .svc.replicas) 1) (and .svc.autoscaling.enabled (gt (int .svc.autoscaling.maxReplicas) 1)) -}}true{{- end -}}
{{- end -}}

{{- define "zc.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "zc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "zc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret the chart creates for credentials that no existing Secret provides. */}}
{{- define "zc.credentialsSecret" -}}
{{- include "zc.objectName" (dict "root" . "suffix" "credentials") -}}
{{- end -}}

{{/*
The Secret holding one credential: credentials.existingSecrets.<cred>, else
credentials.existingSecret, else the chart's own. Call with (dict "root" $ "cred" "databaseUrl").
*/}}
{{- define "zc.secretFor" -}}
{{- $c := .root.Values.credentials -}}
{{- $own := index ($c.existingSecrets | default dict) .cred | default "" -}}
{{- $own | default $c.existingSecret | default (include "zc.credentialsSecret" .root) -}}
{{- end -}}

{{/* The credentials the chart's own Secret must hold (none of the existing Secrets does). */}}
{{- define "zc.ownCredentials" -}}
{{- $root := . -}}
{{- range $cred := list "databaseUrl" "redisUrl" "natsUrl" "secretKey" -}}
{{- if eq (include "zc.secretFor" (dict "root" $root "cred" $cred)) (include "zc.credentialsSecret" $root) }}{{ $cred }} {{ end -}}
{{- end -}}
{{- end -}}

{{/* The gateway's ZC_TRUST_PROXY: config.trustProxy, else one hop behind the chart's Ingress, else nobody. */}}
{{- define "zc.trustProxy" -}}
{{- if .Values.config.trustProxy -}}
{{- .Values.config.trustProxy -}}
{{- else if .Values.ingress.enabled -}}
1
{{- else -}}
false
{{- end -}}
{{- end -}}

{{/* Environment shared by every container; call with (dict "root" $ "name" "gateway" "svc" $svc). */}}
{{- define "zc.env" -}}
{{- $root := .root -}}
- name: NODE_ENV
  value: production
- name: ZC_INSTANCE
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: ZC_ADMIN_PORT
  value: {{ $root.Values.adminPort | quote }}
{{- range $cred, $var := dict "databaseUrl" "ZC_DATABASE_URL" "redisUrl" "ZC_REDIS_URL" "natsUrl" "ZC_NATS_URL" "secretKey" "ZC_SECRET_KEY" }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef: { name: {{ include "zc.secretFor" (dict "root" $root "cred" $cred) }}, key: {{ index $root.Values.credentials.keys $cred }} }
{{- end }}
- name: ZC_ROOT_DOMAIN
  value: {{ $root.Values.config.rootDomain | quote }}
- name: ZC_EXTERNAL_SCHEME
  value: {{ $root.Values.config.externalScheme | quote }}
- name: ZC_EXTERNAL_PORT
  value: {{ $root.Values.config.externalPort | quote }}
- name: ZC_SUBJECT_PREFIX
  value: {{ $root.Values.config.subjectPrefix | quote }}
- name: ZC_REDIS_PREFIX
  value: {{ $root.Values.config.subjectPrefix | quote }}
- name: LOG_LEVEL
  value: {{ $root.Values.config.logLevel | default "info" | quote }}
- name: ZC_DB_POOL_SIZE
  value: {{ $root.Values.config.dbPoolSize | default 10 | quote }}
{{- /* Upload limits: enforced by the uploads service, announced by the users service in /register. */}}
- name: ZC_MAX_FILE_UPLOAD_SIZE_MIB
  value: {{ $root.Values.uploads.maxFileUploadSizeMib | default 25 | quote }}
{{- if gt (int $root.Values.uploads.realmQuotaMib) 0 }}
- name: ZC_REALM_UPLOAD_QUOTA_MIB
  value: {{ $root.Values.uploads.realmQuotaMib | quote }}
{{- end }}
{{- with $root.Values.config.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "zc-%s" .name | quote }}
{{- range $k, $v := .svc.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- with $root.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- /* The uploads service's own environment: its internal listener and its storage backend. */ -}}
{{- define "zc.uploadsEnv" -}}
{{- $u := .Values.uploads -}}
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: ZC_UPLOADS_HTTP_HOST
  value: "0.0.0.0"
- name: ZC_UPLOADS_HTTP_PORT
  value: "9300"
- name: ZC_UPLOADS_ADVERTISE_URL
  value: "http://$(POD_IP):9300"
- name: ZC_UNCLAIMED_UPLOAD_GRACE_DAYS
  value: {{ $u.unclaimedGraceDays | quote }}
- name: ZC_UPLOADS_BACKEND
  value: {{ $u.backend | quote }}
{{- if eq $u.backend "local" }}
- name: ZC_UPLOADS_DIR
  value: /data/uploads
{{- else }}
- name: ZC_S3_BUCKET
  value: {{ $u.s3.bucket | quote }}
- name: ZC_S3_REGION
  value: {{ $u.s3.region | quote }}
{{- with $u.s3.endpoint }}
- name: ZC_S3_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: ZC_S3_FORCE_PATH_STYLE
  value: {{ $u.s3.forcePathStyle | quote }}
- name: ZC_S3_REDIRECT_DOWNLOADS
  value: {{ $u.s3.redirectDownloads | quote }}
- name: ZC_S3_SIGNED_URL_TTL_SECONDS
  value: {{ $u.s3.signedUrlTtlSeconds | quote }}
{{- with $u.s3.credentialsSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef: { name: {{ . }}, key: AWS_ACCESS_KEY_ID }
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef: { name: {{ . }}, key: AWS_SECRET_ACCESS_KEY }
{{- end }}
{{- end }}
{{- end }}
