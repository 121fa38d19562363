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

{{/* Object name of one service's resources: <fullname>-<service>. */}}
{{- define "zc.serviceName" -}}
{{- printf "%s-%s" (include "zc.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
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

{{/* The Secret holding connection strings and the server secret. */}}
{{- define "zc.credentialsSecret" -}}
{{- default (printf "%s-credentials" (include "zc.fullname" .)) .Values.credentials.existingSecret -}}
{{- end -}}

{{/* Environment shared by every container; call with (dict "root" $ "name" "gateway" "svc" $svc). */}}
{{- define "zc.env" -}}
{{- $root := .root -}}
{{- $secret := include "zc.credentialsSecret" $root -}}
- name: NODE_ENV
  value: production
- name: ZC_INSTANCE
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: ZC_ADMIN_PORT
  value: {{ $root.Values.adminPort | quote }}
- name: ZC_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: {{ $root.Values.credentials.keys.databaseUrl }} }
- name: ZC_REDIS_URL
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: {{ $root.Values.credentials.keys.redisUrl }} }
- name: ZC_NATS_URL
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: {{ $root.Values.credentials.keys.natsUrl }} }
- name: ZC_SECRET_KEY
  valueFrom:
    secretKeyRef: { name: {{ $secret }}, key: {{ $root.Values.credentials.keys.secretKey }} }
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
