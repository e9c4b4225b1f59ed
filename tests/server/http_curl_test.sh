#!/usr/bin/env bash
# The curl examples of docs/http-api.md and examples/registry_hook.sh against the real
# server's HTTP endpoint: the CLI's bytes, the JSON errors, the metrics,
# keep-alive; then over HTTPS and mutual TLS (docs/service.md's curl lines).
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

# A multipart upload (curl -F) gives the same bytes.
curl --fail-with-body -sS -F model=@"$model" "$http/v1/convert?opset=17" -o "$dir/form.onnx" ||
  fail "convert a multipart upload"
cmp -s "$dir/form.onnx" "$dir/cli.onnx" || fail "the multipart answer differs from the CLI's output"

# A bad model: 422 and the error envelope.
head -c 1000 /dev/urandom >"$dir/bad.tflite"
status=$(curl -sS --data-binary @"$dir/bad.tflite" -o "$dir/bad.json" -w '%{http_code}' \
  "$http/v1/convert")
[ "$status" = 422 ] || fail "a bad model answered $status"
grep -q '^{"error":{"reason":"invalid_model","status":422,' "$dir/bad.json" ||
  fail "error body: $(cat "$dir/bad.json")"

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
grep -q '^lite2onnx_requests_total{code="OK",method="Convert",protocol="http",reason="ok"} 3$' \
  <<<"$metrics" ||
  fail "metrics: $(grep requests_total <<<"$metrics")"

# Keep-alive: curl sends its second request on the first connection.
connects=$(curl -sS -o /dev/null -o /dev/null -w '%{num_connects} ' "$http/healthz" "$http/readyz")
[ "$connects" = "1 0 " ] || fail "keep-alive: connections per request: $connects"

# HTTPS, then mutual TLS, with a CA made here.
kill "$pid" && wait "$pid" 2>/dev/null || true
(
  cd "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ca.key -out ca.pem
  for name in server client; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout $name.key -out $name.csr
    printf 'subjectAltName=DNS:localhost\n' >$name.ext
    openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
      -extfile $name.ext -out $name.pem
  done
) >/dev/null 2>&1 || fail "openssl could not make the test certificates"
rm -f "$dir/ports"
start_server "$server" --http-listen 127.0.0.1:0 --tls-cert "$dir/server.pem" --tls-key "$dir/server.key"
https=https://localhost:$http_port
curl --fail-with-body -sS --cacert "$dir/ca.pem" --data-binary @"$model" "$https/v1/convert?opset=17" \
  -o "$dir/https.onnx" || fail "convert over HTTPS"
cmp -s "$dir/https.onnx" "$dir/cli.onnx" || fail "the HTTPS answer differs from the CLI's output"
if curl -sS "http://127.0.0.1:$http_port/readyz" -o /dev/null 2>/dev/null; then
  fail "plain HTTP was answered on the TLS port"
fi
curl -sS --cacert "$dir/ca.pem" "$https/readyz" | grep -qx ready || fail "readyz over HTTPS"

kill "$pid" && wait "$pid" 2>/dev/null || true
rm -f "$dir/ports"
start_server "$server" --http-listen 127.0.0.1:0 --tls-cert "$dir/server.pem" \
  --tls-key "$dir/server.key" --tls-client-ca "$dir/ca.pem"
https=https://localhost:$http_port
curl --fail-with-body -sS --cacert "$dir/ca.pem" --cert "$dir/client.pem" --key "$dir/client.key" \
  --data-binary @"$model" "$https/v1/convert?opset=17" -o "$dir/mtls.onnx" ||
  fail "convert over mutual TLS"
cmp -s "$dir/mtls.onnx" "$dir/cli.onnx" || fail "the mutual-TLS answer differs from the CLI's output"
if curl -sS --cacert "$dir/ca.pem" "$https/readyz" -o /dev/null 2>/dev/null; then
  fail "a client without a certificate was answered"
fi
echo "PASS"
