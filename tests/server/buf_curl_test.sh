#!/usr/bin/env bash
# The docs/service.md examples with a stock client: buf curl (npm @bufbuild/buf)
# finds the service through server reflection, with no .proto files.
#   buf_curl_test.sh SERVER_BINARY MODEL.tflite
set -euo pipefail
server=$1 model=$2
buf="$(dirname "$0")/node_modules/.bin/buf"
if [ ! -x "$buf" ]; then
  [ "${CI:-}" = true ] && { echo "buf is missing: run scripts/deps.sh"; exit 1; }
  echo "SKIP: buf is not installed (npm ci in tests/server, done by scripts/deps.sh)"
  exit 77
fi
source "$(dirname "$0")/script_server.sh"
start_server "$server" --http-listen ""

url=http://127.0.0.1:$grpc_port
curl_grpc() { "$buf" curl --protocol grpc --http2-prior-knowledge "$@"; }

methods=$(curl_grpc --list-methods "$url")
for m in lite2onnx.v1.Converter/Convert lite2onnx.v1.Converter/ConvertStream \
  lite2onnx.v1.Converter/Inspect lite2onnx.v1.Converter/ListOperators grpc.health.v1.Health/Check; do
  grep -qx "$m" <<<"$methods" || fail "reflection does not list $m: $methods"
done

# (Outputs go to variables first: grep -q in a pipe would end the writer with SIGPIPE.)
health=$(curl_grpc -d '{}' "$url/grpc.health.v1.Health/Check")
grep -q '"SERVING"' <<<"$health" || fail "health: $health"

printf '{"model": "%s"}' "$(base64 -w0 "$model")" >"$dir/request.json"
curl_grpc -d @"$dir/request.json" "$url/lite2onnx.v1.Converter/Convert" >"$dir/response.json" ||
  fail "Convert"
grep -q '"onnxModel"' "$dir/response.json" || fail "no onnxModel in $(head -c 300 "$dir/response.json")"
grep -q '"CONV_2D"' "$dir/response.json" || fail "no diagnostics"

if curl_grpc -d '{"model": "Z2FyYmFnZQ=="}' "$url/lite2onnx.v1.Converter/Convert" >"$dir/error.json" 2>&1; then
  fail "garbage converted"
fi
grep -q '"invalid_argument"' "$dir/error.json" || fail "garbage: $(cat "$dir/error.json")"
grep -q '"lite2onnx.v1.ConversionError"' "$dir/error.json" || fail "no details: $(cat "$dir/error.json")"

operators=$(curl_grpc -d '{}' "$url/lite2onnx.v1.Converter/ListOperators")
grep -q '"CONV_2D"' <<<"$operators" || fail "ListOperators"

metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics")
grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="grpc",reason="ok"} 1$' <<<"$metrics" ||
  fail "metrics"

kill -TERM "$pid"
wait "$pid" || fail "exit code $?"
pid=
echo "buf curl: reflection, health, Convert, error details, ListOperators, metrics: OK"
