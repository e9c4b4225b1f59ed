#!/usr/bin/env bash
# One command from a fresh Debian 12 machine: install dependencies, build, and
# convert the example model (a small MobileNet-like CNN written as JSON).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build
./build/lite2onnx convert build/examples/mini_mobilenet.tflite -o build/examples/mini_mobilenet.onnx -v
echo "setup: done; the CLI is build/lite2onnx"
