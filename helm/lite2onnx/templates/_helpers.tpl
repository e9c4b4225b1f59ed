{{/* Names ------------------------------------------------------------------- */}}
{{- define "lite2onnx.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* release-chart, or the release name alone when it already holds the chart name;
     54 characters leave room for the "-headless" suffix. */}}
{{- define "lite2onnx.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 54 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "lite2onnx.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "lite2onnx.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lite2onnx.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "lite2onnx.labels" -}}
helm.sh/chart: {{ include "lite2onnx.chart" . }}
{{ include "lite2onnx.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: converter
app.kubernetes.io/part-of: lite2onnx
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "lite2onnx.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lite2onnx.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "lite2onnx.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* A value as a string: whole numbers without an exponent (values files give float64). */}}
{{- define "lite2onnx.str" -}}
{{- if kindIs "float64" . }}
{{- if eq (floor .) . }}{{ printf "%.0f" . }}{{ else }}{{ . }}{{ end }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}

{{/* Seconds the pod gets after SIGTERM: above the preStop sleep plus the drain. */}}
{{- define "lite2onnx.terminationGracePeriodSeconds" -}}
{{- $drain := ceil .Values.config.drainSeconds | int }}
{{- $floor := add $drain (.Values.preStopSleepSeconds | int) }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $floor 15 }}
{{- else }}
{{- $t := .Values.terminationGracePeriodSeconds | int }}
{{- if le $t $floor }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be above config.drainSeconds + preStopSleepSeconds (%d), or the kubelet kills the server mid-drain" $t $floor) }}
{{- end }}
{{- $t }}
{{- end }}
{{- end }}

{{/* Label matchers of the server's series in the alerts. */}}
{{- define "lite2onnx.alertSelector" -}}
{{- if .Values.prometheusRule.selector }}
{{- .Values.prometheusRule.selector }}
{{- else }}
{{- printf "job=\"%s\",namespace=\"%s\"" (include "lite2onnx.fullname" .) .Release.Namespace }}
{{- end }}
{{- end }}

{{/* Fails on combinations the schema cannot express. */}}
{{- define "lite2onnx.validate" -}}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) }}
{{- fail "tls.enabled needs tls.secretName: a Secret with the certificate chain and key" }}
{{- end }}
{{- if and .Values.tls.clientCA.enabled (not .Values.tls.enabled) }}
{{- fail "tls.clientCA.enabled (mutual TLS) needs tls.enabled" }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "serviceMonitor.enabled needs metrics.enabled" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (.Values.autoscaling.minReplicas | int) (.Values.autoscaling.maxReplicas | int)) }}
{{- fail "autoscaling.minReplicas must not exceed autoscaling.maxReplicas" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not .Values.autoscaling.targetCPUUtilizationPercentage) (not .Values.autoscaling.targetMemoryUtilizationPercentage) }}
{{- fail "autoscaling.enabled needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage" }}
{{- end }}
{{- end }}
