#!/usr/bin/env bash
# Every metric the dashboards and alerts use exists on a real server's /metrics.
# Starts SERVER on loopback with a 4 kB memory budget, sends traffic that makes every
# labelled series appear (health, Convert ok, garbage -> INVALID_ARGUMENT, a custom
# operator -> UNIMPLEMENTED, ConvertStream, Inspect, ListOperators, a Convert over HTTP,
# and a Convert shed for the memory budget while a stream holds it), scrapes /metrics,
# renders the chart's PrometheusRule, then runs promql-check.mjs on the dashboards and
# both rule sets.
#   metrics.sh SERVER_BINARY MODEL.tflite
source "$(dirname "$0")/common.sh"
server=$1 model=$2
need_node_modules
need_chartcheck
[ -x "$BUF" ] || skip_or_fail "buf is missing: run scripts/deps.sh (npm ci in tests/server)"
command -v flatc >/dev/null || skip_or_fail "flatc is missing (flatbuffers-compiler)"

dir=$(mktemp -d)
pid=
hold_pid=
cleanup() {
  exec 3>&- 2>/dev/null || true
  [ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null || true
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  [ -f "$dir/log" ] && { echo "--- server log"; cat "$dir/log"; }
  exit 1
}

flatc -b -o "$dir" "$REPO/core/tflite/schema.fbs" "$CHECKS/models/custom_op.json" ||
  fail "flatc could not build the custom-operator model"
model_bytes=$(stat -c %s "$model")
[ "$model_bytes" -lt 4000 ] || fail "$model is $model_bytes bytes: the test's budget is 4000"

"$server" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --port-file "$dir/ports" \
  --max-unary-bytes 4kb --max-inflight-bytes 4kb --drain-seconds 1 2>"$dir/log" &
pid=$!
for _ in $(seq 200); do [ -s "$dir/ports" ] && break; sleep 0.05; done
[ -s "$dir/ports" ] || fail "the server did not start"
url=http://127.0.0.1:$(sed -n 's/^grpc=//p' "$dir/ports")
metrics_url=http://127.0.0.1:$(sed -n 's/^metrics=//p' "$dir/ports")/metrics
http_url=http://127.0.0.1:$(sed -n 's/^http=//p' "$dir/ports")
call() { "$BUF" curl --protocol grpc --http2-prior-knowledge "$@"; }
expect_code() { # CODE METHOD REQUEST_FILE
  if call -d @"$3" "$url/lite2onnx.v1.Converter/$2" >"$dir/out" 2>&1; then
    [ "$1" = ok ] || fail "$2 of $3 succeeded, expected $1"
  else
    grep -q "\"$1\"" "$dir/out" || fail "$2 of $3: expected $1, got $(head -c 400 "$dir/out")"
  fi
}

# (Outputs go to variables before grep -q: in a pipe, grep's early exit fails the writer.)
health=$(call -d '{}' "$url/grpc.health.v1.Health/Check") || fail "health: $health"
grep -q '"SERVING"' <<<"$health" || fail "health: $health"
printf '{"model": "%s"}' "$(base64 -w0 "$model")" >"$dir/ok.json"
printf '{"model": "%s"}' "$(printf 'garbage!' | base64 -w0)" >"$dir/garbage.json"
printf '{"model": "%s"}' "$(base64 -w0 "$dir/custom_op.tflite")" >"$dir/custom.json"
printf '{"options": {"opset": 13}, "totalBytes": "%s"}\n{"data": "%s"}\n' "$model_bytes" \
  "$(base64 -w0 "$model")" >"$dir/stream.json"
echo '{}' >"$dir/empty.json"
expect_code ok Convert "$dir/ok.json"
expect_code invalid_argument Convert "$dir/garbage.json"
expect_code unimplemented Convert "$dir/custom.json"
expect_code ok ConvertStream "$dir/stream.json"
expect_code ok Inspect "$dir/ok.json"
expect_code ok ListOperators "$dir/empty.json"
status=$(curl -s -o "$dir/http.onnx" -w '%{http_code}' --data-binary @"$model" "$http_url/v1/convert") ||
  fail "HTTP POST /v1/convert: curl failed"
[ "$status" = 200 ] && [ -s "$dir/http.onnx" ] || fail "HTTP POST /v1/convert: $status $(head -c 300 "$dir/http.onnx")"

# A stream announcing the whole (tiny) budget reserves a first allotment of it (at most
# 1 MiB) while it waits for data; a Convert then is shed at once (memory_budget).
# Closing the stream ends it (INVALID_ARGUMENT, bad_stream).
mkfifo "$dir/hold"
call -d @- "$url/lite2onnx.v1.Converter/ConvertStream" <"$dir/hold" >"$dir/hold.out" 2>&1 &
hold_pid=$!
exec 3>"$dir/hold"
echo '{"options": {}, "totalBytes": "4000"}' >&3
reserved=
for _ in $(seq 100); do
  m=$(curl -sf "$metrics_url") || fail "no /metrics"
  grep -q '^lite2onnx_inflight_model_bytes 4000$' <<<"$m" && { reserved=1; break; }
  sleep 0.05
done
[ -n "$reserved" ] || fail "the stream did not reserve the budget"
expect_code resource_exhausted Convert "$dir/ok.json"
exec 3>&-
wait "$hold_pid" || true
hold_pid=

# The server counts a call just after answering it: wait for the last ones.
for _ in $(seq 100); do
  curl -sf "$metrics_url" >"$dir/metrics.txt" || fail "no /metrics"
  grep -q '^lite2onnx_requests_total{code="INVALID_ARGUMENT",method="ConvertStream",protocol="grpc",reason="bad_stream"} 1$' "$dir/metrics.txt" &&
    grep -q '^lite2onnx_requests_shed_total{reason="memory_budget"} 1$' "$dir/metrics.txt" && break
  sleep 0.05
done
grep -q '^lite2onnx_requests_shed_total{reason="memory_budget"} 1$' "$dir/metrics.txt" || fail "no shed counted"
grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="http",reason="ok"} 1$' "$dir/metrics.txt" ||
  fail "no HTTP Convert counted"
kill -TERM "$pid"
wait "$pid" || fail "server exit code $?"
pid=
echo "traffic: health, Convert (ok, garbage, custom op), ConvertStream, Inspect, ListOperators, HTTP Convert, a shed call;" \
  "$(grep -c '^lite2onnx_' "$dir/metrics.txt") lite2onnx_* samples scraped"

# The chart's PrometheusRule: with every option (its own thresholds and an extra rule)
# and with the default thresholds (compared with deploy/prometheus/alerts.yaml).
"$CHARTCHECK" "$CHART" -f "$CHART/ci/all-features-values.yaml" -a monitoring.coreos.com/v1 -q \
  -o "$dir/all.yaml" >/dev/null 2>"$dir/render.log" || { cat "$dir/render.log"; fail "render"; }
"$CHARTCHECK" "$CHART" --set prometheusRule.enabled=true -a monitoring.coreos.com/v1 -q \
  -o "$dir/rules.yaml" >/dev/null 2>"$dir/render.log" || { cat "$dir/render.log"; fail "render"; }

node "$CHECKS/promql-check.mjs" --metrics "$dir/metrics.txt" --allow "$CHECKS/external-metrics.txt" \
  --dashboard "$REPO/deploy/grafana/lite2onnx.json" --dashboard "$CHART/dashboards/lite2onnx.json" \
  --rules "$REPO/deploy/prometheus/alerts.yaml" --rendered "$dir/all.yaml" --rendered "$dir/rules.yaml" \
  --same-alerts "$REPO/deploy/prometheus/alerts.yaml" "$dir/rules.yaml"

# The checker itself: every rule of bad-promql/rules.yaml must be reported.
set +e
node "$CHECKS/promql-check.mjs" --metrics "$dir/metrics.txt" --allow "$CHECKS/external-metrics.txt" \
  --rules "$CHECKS/bad-promql/rules.yaml" >"$dir/bad.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$dir/bad.out"; fail "promql-check accepted bad-promql/rules.yaml (exit $rc)"; }
for alert in $(sed -n 's/^ *- alert: //p' "$CHECKS/bad-promql/rules.yaml"); do
  grep -q "^FAIL: rules.yaml bad/$alert:" "$dir/bad.out" || { cat "$dir/bad.out"; fail "promql-check missed $alert"; }
done
echo "promql-check rejects all $(grep -c '^ *- alert: ' "$CHECKS/bad-promql/rules.yaml") rules of bad-promql/rules.yaml"
