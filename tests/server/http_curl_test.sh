#!/usr/bin/env bash
# The README's curl examples and examples/registry_hook.sh against the real
# server's HTTP endpoint: the CLI's bytes, the JSON errors, the metrics.
#   http_curl_test.sh SERVER_BINARY CLI_BINARY MODEL.tflite
set -euo pipefail
server=$1 cli=$2 model=$3
hook="$(dirname "$0")/../../examples/registry_hook.sh"
source "$(dirname "$0")/script_server.sh"
start_server "$server" --http-listen 127.0.0.1:0
http=http://127.0.0.1:$http_port

# The CLI's bytes.
curl --fail-with-body -sS --data-binary @"$model" "$http/v1/convert?opset=17" -o "$dir/http.onnx" ||
  fail "convert"
"$cli" convert "$model" -o "$dir/cli.onnx" --opset 17 >/dev/null
cmp -s "$dir/http.onnx" "$dir/cli.onnx" || fail "the HTTP answer differs from the CLI's output"

# A bad model: 422 and the ConversionError as JSON.
head -c 1000 /dev/urandom >"$dir/bad.tflite"
status=$(curl -sS --data-binary @"$dir/bad.tflite" -o "$dir/bad.json" -w '%{http_code}' \
  "$http/v1/convert")
[ "$status" = 422 ] || fail "a bad model answered $status"
grep -q '"reason":"REASON_INVALID_MODEL"' "$dir/bad.json" || fail "error body: $(cat "$dir/bad.json")"

# The hook: converts a fetched artifact, fails loudly on a bad one.
LITE2ONNX_HTTP=$http "$hook" "file://$(realpath "$model")" "$dir/hook.onnx" 'opset=17' 2>"$dir/hook.err" ||
  fail "hook: $(cat "$dir/hook.err")"
cmp -s "$dir/hook.onnx" "$dir/cli.onnx" || fail "the hook's output differs from the CLI's"
grep -q 'opset=17' "$dir/hook.err" || fail "the hook printed no diagnostics: $(cat "$dir/hook.err")"
if LITE2ONNX_HTTP=$http "$hook" "file://$dir/bad.tflite" "$dir/bad.onnx" 2>"$dir/hook.err"; then
  fail "the hook accepted a bad model"
fi
grep -q 'HTTP 422' "$dir/hook.err" || fail "hook error: $(cat "$dir/hook.err")"
[ ! -e "$dir/bad.onnx" ] || fail "the hook wrote an output for a bad model"

curl -sS "$http/readyz" | grep -qx ready || fail "readyz"
metrics=$(curl -sS "http://127.0.0.1:$metrics_port/metrics")
grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="http"} 2$' <<<"$metrics" ||
  fail "metrics: $(grep requests_total <<<"$metrics")"
echo "PASS"
