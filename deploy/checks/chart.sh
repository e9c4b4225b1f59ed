#!/usr/bin/env bash
# The Helm chart, offline (chartcheck: helm-render + the Kubernetes schemas):
#  - renders and validates with the defaults and with every ci/*-values.yaml
#    (the all-features file with -a monitoring.coreos.com/v1, so the ServiceMonitor
#    and PrometheusRule render and are validated against prometheus-operator's CRDs);
#  - NOTES.txt renders for each;
#  - the HTTP endpoint is on by default and stays on with TLS (HTTPS, appProtocol
#    https); the probes are native gRPC without TLS, HTTPS GETs of /healthz and
#    /readyz with TLS alone, TCP checks with mutual TLS (the kubelet has no client
#    certificate);
#  - every bad-render/*.yaml fails to render with the message its "# expect:" names;
#  - the rendered YAML passes yamllint (.yamllint, relaxed for toYaml's indentation);
#  - with every option on, the ConfigMap sets every LITE2ONNX_* variable that
#    `SERVER --help` lists (no server flag without a chart value).
#   chart.sh [SERVER_BINARY]
source "$(dirname "$0")/common.sh"
server=${1:-}
need_chartcheck
command -v yamllint >/dev/null || skip_or_fail "yamllint is missing (Debian package yamllint)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
RENDERED_LINT='{extends: default, rules: {document-start: disable, line-length: disable,
  indentation: {spaces: 2, indent-sequences: whatever}, truthy: {allowed-values: ["true", "false"], check-keys: false},
  octal-values: {forbid-implicit-octal: true, forbid-explicit-octal: true}}}'

# Gateway API objects: chartcheck has no schemas for them (--strict reports them
# as not validated); gateway-validate.mjs checks them against
# @kubernetes-models/gateway-api (deploy/checks/package.json) instead.
only_gateway_unvalidated() { # LOG: chartcheck failed only for Gateway API objects it could not validate
  local summary
  summary=$(grep '^k8s-validate: ' "$1" | tail -1)
  [[ $summary == *" 0 invalid, "* && $summary != *"input error"* ]] || return 1
  local kinds=${summary#*\[}
  kinds=${kinds%%\]*}
  [ -n "$kinds" ] || return 1
  ! tr ';' '\n' <<<"$kinds" | grep -v '^ *gateway\.networking\.k8s\.io/' | grep -q .
}

render() { # NAME ARGS...: render + validate (--strict), lint the output, render NOTES.txt
  local name=$1
  shift
  if "$CHARTCHECK" "$CHART" --strict "$@" -o "$dir/$name.yaml" >"$dir/$name.log" 2>&1; then
    echo "chart $name: $(grep -c '^# Source: ' "$dir/$name.yaml") objects render and validate, --strict ($*)"
  elif only_gateway_unvalidated "$dir/$name.log" &&
    node "$CHECKS/gateway-validate.mjs" "$dir/$name.yaml" >"$dir/$name.gateway.log" 2>&1; then
    echo "chart $name: $(grep -c '^# Source: ' "$dir/$name.yaml") objects render and validate, --strict;" \
      "$(tail -1 "$dir/$name.gateway.log" | sed 's/^gateway-validate: //') by gateway-validate.mjs ($*)"
  else
    cat "$dir/$name.log"
    [ -f "$dir/$name.gateway.log" ] && cat "$dir/$name.gateway.log"
    fail "chart $name ($*)"
    return
  fi
  yamllint -s -d "$RENDERED_LINT" "$dir/$name.yaml" || fail "chart $name: yamllint of the rendered output"
  "$HELM_RENDER" "$CHART" "$@" --notes 2>"$dir/$name.notes" >/dev/null || fail "chart $name: NOTES.txt"
  grep -q 'port-forward' "$dir/$name.notes" || fail "chart $name: NOTES.txt has no port-forward"
}

# chartcheck's renderer, for NOTES.txt: beside chartcheck, or in the cache copy it
# makes of itself when its folder is read-only.
"$CHARTCHECK" --setup >/dev/null 2>&1 || fail "chartcheck --setup"
HELM_RENDER=$(dirname "$(readlink -f "$CHARTCHECK")")/bin/helm-render
[ -x "$HELM_RENDER" ] || HELM_RENDER=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/chartcheck/bin/helm-render
[ -x "$HELM_RENDER" ] || skip_or_fail "chartcheck's bin/helm-render was not found"

render defaults
render defaults-with-crds -a monitoring.coreos.com/v1
render defaults-1.30 --kube-version 1.30
for f in "$CHART"/ci/*-values.yaml; do
  render "ci-$(basename "$f" -values.yaml)" -f "$f" -a monitoring.coreos.com/v1
done
grep -q '^kind: ServiceMonitor$' "$dir/ci-all-features.yaml" || fail "all-features renders no ServiceMonitor"
grep -q '^kind: PrometheusRule$' "$dir/ci-all-features.yaml" || fail "all-features renders no PrometheusRule"
for kind in Deployment Service ConfigMap HorizontalPodAutoscaler PodDisruptionBudget ServiceAccount NetworkPolicy; do
  grep -q "^kind: $kind$" "$dir/ci-all-features.yaml" || fail "all-features renders no $kind"
done
[ "$(grep -c '^kind: Service$' "$dir/ci-all-features.yaml")" -eq 2 ] || fail "all-features renders no headless Service"
# Issue 32: Ingress, Gateway API routes, the helm test pod, the queue-depth metric, preStop.
for kind in Ingress GRPCRoute HTTPRoute Pod; do
  grep -q "^kind: $kind$" "$dir/ci-all-features.yaml" || fail "all-features renders no $kind"
done
grep -q '^    helm.sh/hook: test$' "$dir/ci-all-features.yaml" || fail "the test pod is no helm test hook"
grep -q 'mini_mobilenet.tflite' "$dir/defaults.yaml" || fail "the defaults have no helm test pod converting the example"
grep -q 'name: lite2onnx_queue_depth$' "$dir/ci-all-features.yaml" || fail "all-features: no HPA metric on the queue depth"
! grep -q 'lite2onnx_queue_depth' "$dir/defaults.yaml" || fail "the defaults scale on the queue depth (needs an adapter)"
grep -q 'command: \["sleep", "5"\]' "$dir/defaults.yaml" || fail "the defaults have no 5 s preStop sleep (exec before 1.30)"
grep -A1 '^ *sleep:$' "$dir/defaults-1.30.yaml" | grep -q 'seconds: 5' || fail "1.30: no preStop sleep action of 5 s"
grep -q 'appProtocol: grpc' "$dir/defaults.yaml" || fail "the Service has no appProtocol: grpc"
grep -q '^ *grpc:$' "$dir/defaults.yaml" || fail "the default probes are not native gRPC probes"
# HTTP: on by default (container port, Service port), and with TLS too (HTTPS).
grep -q '^  LITE2ONNX_HTTP_LISTEN: "0.0.0.0:8080"$' "$dir/defaults.yaml" || fail "the defaults do not serve HTTP on 8080"
[ "$(grep -c '^ *- name: http$' "$dir/defaults.yaml")" -eq 2 ] || fail "the defaults have no http container and Service port"
for f in ci-all-features ci-tls-http; do
  grep -q '^  LITE2ONNX_HTTP_LISTEN: "0.0.0.0:8080"$' "$dir/$f.yaml" || fail "$f: TLS turns HTTP off"
  [ "$(grep -c '^ *- name: http$' "$dir/$f.yaml")" -eq 2 ] || fail "$f: no http container and Service port"
  grep -q '^ *appProtocol: https$' "$dir/$f.yaml" || fail "$f: the http Service port is not appProtocol https"
done
# Probes: HTTPS GETs with TLS alone, TCP checks with mutual TLS.
[ "$(grep -c '^ *scheme: HTTPS$' "$dir/ci-tls-http.yaml")" -eq 3 ] || fail "tls-http: the probes are not HTTPS GETs"
grep -q '^ *path: /readyz$' "$dir/ci-tls-http.yaml" || fail "tls-http: no probe of /readyz"
! grep -q '^ *tcpSocket:$' "$dir/ci-tls-http.yaml" || fail "tls-http: TCP probes"
[ "$(grep -c '^ *tcpSocket:$' "$dir/ci-all-features.yaml")" -eq 3 ] || fail "all-features (mutual TLS): the probes are not TCP checks"
grep -q '^ *- port: http$' "$dir/ci-plaintext-http.yaml" || fail "plaintext-http: the NetworkPolicy does not admit the http port"

for f in "$CHECKS"/bad-render/*.yaml; do
  expect=$(sed -n 's/^# expect: //p' "$f")
  if "$CHARTCHECK" "$CHART" -f "$f" -o "$dir/bad.yaml" >"$dir/bad.log" 2>&1; then
    fail "bad-render/$(basename "$f") renders; expected: $expect"
  elif ! grep -qF -- "$expect" "$dir/bad.log"; then
    cat "$dir/bad.log"
    fail "bad-render/$(basename "$f") fails, but not with: $expect"
  fi
done
echo "chart: $(find "$CHECKS"/bad-render -name '*.yaml' | wc -l) bad value sets fail to render with their message"

if [ -n "$server" ]; then
  flags=$("$server" --help | grep -o 'Env:LITE2ONNX_[A-Z_]*' | sed 's/^Env://' | sort -u)
  [ -n "$flags" ] || fail "$server --help lists no LITE2ONNX_* variable"
  for v in $flags; do
    grep -q "^  $v: " "$dir/ci-all-features.yaml" || fail "the chart cannot set $v (no value renders it)"
  done
  echo "chart: all $(wc -w <<<"$flags") server variables of --help are set by the all-features ConfigMap"
fi

[ "$fails" -eq 0 ] || { echo "chart: $fails problem(s)"; exit 1; }
echo "chart: OK"
