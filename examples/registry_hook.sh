#!/usr/bin/env bash
# A model-registry hook (MLflow, Kubeflow Model Registry, a CI step): fetch the
# artifact, convert it on lite2onnx-server's HTTP endpoint, fail loudly on any
# error, and retry only what the error table marks retryable (429: queue full
# or memory budget; 503: draining; no connection), after Retry-After.
#   registry_hook.sh ARTIFACT_URL OUT.onnx [QUERY]    e.g. QUERY='opset=17&keep_io_layout=true'
# LITE2ONNX_HTTP: the server (default http://127.0.0.1:8080). Exit 0 with OUT.onnx
# written, or 1 with the server's error on stderr.
set -euo pipefail
artifact=$1 out=$2 query=${3:-}
server=${LITE2ONNX_HTTP:-http://127.0.0.1:8080}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

curl --fail --silent --show-error --location --retry 3 -o "$tmp/model.tflite" "$artifact"

for attempt in 1 2 3 4 5 6; do
  status=$(curl --silent --show-error --data-binary @"$tmp/model.tflite" \
    -H 'Content-Type: application/octet-stream' -D "$tmp/headers" -o "$tmp/answer" \
    -w '%{http_code}' "$server/v1/convert?$query") || status=000
  case $status in
    200)
      mv "$tmp/answer" "$out"
      grep -i '^x-lite2onnx-diagnostics:' "$tmp/headers" | tr -d '\r' >&2 || true
      exit 0
      ;;
    429 | 503 | 000)
      wait=$(grep -i '^retry-after:' "$tmp/headers" 2>/dev/null | tr -dc '0-9' || true)
      echo "lite2onnx: HTTP $status, retrying (attempt $attempt)" >&2
      sleep "${wait:-$attempt}"
      ;;
    *)
      # 400 options, 413 too large, 422 invalid or unsupported model, 504 deadline,
      # 500 internal: the same request fails again. The body is the ConversionError.
      echo "lite2onnx: HTTP $status: $(cat "$tmp/answer")" >&2
      exit 1
      ;;
  esac
done
echo "lite2onnx: the server stayed busy; giving up" >&2
exit 1
