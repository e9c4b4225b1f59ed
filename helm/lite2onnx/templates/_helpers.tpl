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

{{/* "true" when the pods serve the HTTP endpoint (HTTPS with tls.enabled). */}}
{{- define "lite2onnx.httpEnabled" -}}
{{- if .Values.http.enabled }}true{{ end }}
{{- end }}

{{/* How the kubelet probes the pods: "grpc" (native gRPC probes, plaintext only),
     "https" (httpGet with scheme HTTPS on the HTTP port: /healthz for liveness,
     /readyz for startup and readiness) with TLS and the HTTP endpoint, or "tcp"
     (TCP checks of the gRPC port) when neither speaks to the kubelet: mutual TLS
     (the kubelet has no client certificate) or TLS without the HTTP endpoint. */}}
{{- define "lite2onnx.probeKind" -}}
{{- if not .Values.tls.enabled }}grpc
{{- else if and .Values.http.enabled (not .Values.tls.clientCA.enabled) }}https
{{- else }}tcp
{{- end }}
{{- end }}

{{/* Each endpoint served needs its own container port and its own Service port. */}}
{{- define "lite2onnx.checkPorts" -}}
{{- $http := include "lite2onnx.httpEnabled" . }}
{{- range $group := list (list "ports.grpc" .Values.ports.grpc "ports.http" .Values.ports.http "ports.metrics" .Values.ports.metrics) (list "service.grpcPort" .Values.service.grpcPort "service.httpPort" .Values.service.httpPort "service.metricsPort" .Values.service.metricsPort) }}
{{- $seen := dict }}
{{- range $i, $served := list true $http $.Values.metrics.enabled }}
{{- if $served }}
{{- $name := index $group (mul $i 2) }}
{{- $port := include "lite2onnx.str" (index $group (add (mul $i 2) 1)) }}
{{- if hasKey $seen $port }}
{{- fail (printf "%s and %s are both %s: each endpoint needs its own port" (get $seen $port) $name $port) }}
{{- end }}
{{- $_ := set $seen $port $name }}
{{- end }}
{{- end }}
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

{{/* A size of config.* (a byte count, or "512MiB", "64kb", ... as the server reads
     it: k/m/g/t/p/e are powers of 1000, with "i" of 1024, a trailing "b" is ignored)
     in bytes, as a float. */}}
{{- define "lite2onnx.sizeBytes" -}}
{{- $s := toString . | lower | replace " " "" | trimSuffix "b" }}
{{- $number := regexFind "^[0-9]+" $s | float64 }}
{{- $unit := trimPrefix (regexFind "^[0-9]+" $s) $s }}
{{- $base := ternary 1024.0 1000.0 (hasSuffix "i" $unit) }}
{{- $power := index (dict "" 0 "k" 1 "m" 2 "g" 3 "t" 4 "p" 5 "e" 6) (trimSuffix "i" $unit) | int }}
{{- range until $power }}{{ $number = mulf $number $base }}{{ end }}
{{- $number }}
{{- end }}

{{/* A Kubernetes quantity ("2Gi", "1500M", "2", "500m", "1e9") as a float. */}}
{{- define "lite2onnx.quantity" -}}
{{- $s := toString . | trimPrefix "+" }}
{{- $number := regexFind "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" $s }}
{{- $suffix := trimPrefix $number $s }}
{{- $value := float64 $number }}
{{- if regexMatch "^[eE]" $suffix }}
{{- $exponent := trimPrefix "e" (lower $suffix) | int }}
{{- range until (max $exponent (sub 0 $exponent) | int) }}{{ $value = ternary (mulf $value 10) (divf $value 10) (gt $exponent 0) }}{{ end }}
{{- else }}
{{- $factors := dict "" 1.0 "n" 1e-9 "u" 1e-6 "m" 1e-3 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 }}
{{- $value = mulf $value (index $factors $suffix) }}
{{- end }}
{{- $value }}
{{- end }}

{{/* The memory the server needs (docs/service.md, "Memory"): the server's base of
     128 MiB (itself, its threads and connections, allocator caches), each worker's
     48 MiB (its two reused memfds, which the server maps, included) plus its
     conversion limit, and the memory budget once (it counts every copy of a call's
     bytes the server holds, and the cache's answers). Fails when resources.limits.memory
     is below it. */}}
{{- define "lite2onnx.checkMemory" -}}
{{- $limit := dig "limits" "memory" "" .Values.resources }}
{{- $perConversion := include "lite2onnx.sizeBytes" .Values.config.conversionMemoryLimit | float64 }}
{{- if and $limit (gt $perConversion 0.0) }}
{{- $workers := .Values.config.workers | int }}
{{- if eq $workers 0 }}
{{- $cpu := dig "limits" "cpu" "" .Values.resources }}
{{- if not $cpu }}
{{- fail "config.workers 0 (one per CPU) needs resources.limits.cpu, or the chart cannot check resources.limits.memory" }}
{{- end }}
{{- $workers = include "lite2onnx.quantity" $cpu | float64 | ceil | int }}
{{- end }}
{{- $mib := 1048576.0 }}
{{- $inflight := include "lite2onnx.sizeBytes" .Values.config.maxInflightBytes | float64 }}
{{- $need := addf (mulf 128 $mib) (mulf (float64 $workers) (addf (mulf 48 $mib) $perConversion)) $inflight }}
{{- $have := include "lite2onnx.quantity" $limit | float64 }}
{{- if lt $have $need }}
{{- fail (printf "resources.limits.memory (%s = %.0f MiB) is below what the server needs: 128 MiB + %d workers x (48 MiB + config.conversionMemoryLimit %.0f MiB) + config.maxInflightBytes %.0f MiB (the cache is inside it) = %.0f MiB (docs/service.md, Memory)" (toString $limit) (divf $have $mib) $workers (divf $perConversion $mib) (divf $inflight $mib) (divf $need $mib)) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Fails on combinations the schema cannot express. */}}
{{- define "lite2onnx.validate" -}}
{{- include "lite2onnx.checkMemory" . }}
{{- include "lite2onnx.checkPorts" . }}
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
