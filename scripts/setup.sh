#!/usr/bin/env bash
# One command from a fresh Debian 12 machine: install dependencies, build,
# convert the example model (a small MobileNet-like CNN written as JSON), then
# run lite2onnx-server on localhost in the foreground (Ctrl-C stops it).
#
# The server runs with its embedded defaults; only the addresses are set, to
# localhost. Any LITE2ONNX_<FLAG> variable configures it further (docs/service.md),
# e.g. LITE2ONNX_WORKERS=4 ./scripts/setup.sh. Nothing else calls this script:
# CI runs scripts/test.sh, which builds without starting a server.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
./build/lite2onnx convert build/examples/mini_mobilenet.tflite -o build/examples/mini_mobilenet.onnx -v
echo "setup: built; the CLI is build/lite2onnx, the server build/server/lite2onnx-server"

listen="${LITE2ONNX_LISTEN:-127.0.0.1:50051}"
metrics="${LITE2ONNX_METRICS_LISTEN:-127.0.0.1:9464}"
http="${LITE2ONNX_HTTP_LISTEN-127.0.0.1:8080}"
cat <<EOF
setup: starting lite2onnx-server (gRPC on $listen, HTTP on ${http:-(off)}, metrics on http://$metrics/metrics); Ctrl-C stops it.
       From a second terminal:
         build/lite2onnx convert build/examples/mini_mobilenet.tflite -o /tmp/mini.onnx --server $listen
         curl --fail-with-body --data-binary @build/examples/mini_mobilenet.tflite http://$http/v1/convert -o /tmp/mini.onnx
EOF
exec ./build/server/lite2onnx-server --listen "$listen" --metrics-listen "$metrics" --http-listen "$http"
