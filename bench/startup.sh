#!/usr/bin/env bash
# Whole-process figures of the CLI: `lite2onnx --version` and `lite2onnx convert`
# of the small MobileNets (float and quantized), each run RUNS times interleaved
# with /bin/true (bench/startup.py); medians in ms, and the excess over
# /bin/true in the same round. Then what the dynamic loader does at start-up
# (LD_DEBUG=statistics: relocations, and the libraries loaded).
#
#   bench/startup.sh BUILD_DIR [OTHER_LITE2ONNX...]
#
# OTHER_LITE2ONNX: more lite2onnx programs (e.g. an older build's) run in the
# same rounds, for a side-by-side comparison. Environment: RUNS (default 101),
# LITE2ONNX_TEST_MODELS (model corpus directory, default <repo>/../shared/models).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [OTHER_LITE2ONNX...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
cli=$(cd "$1" && pwd)/lite2onnx
shift
[[ -x $cli ]] || { echo "$cli not found: build the lite2onnx target" >&2; exit 1; }
models=${LITE2ONNX_TEST_MODELS:-$here/../../shared/models}
float=$models/tflite2onnx/mobilenet_v1_0.25_128.tflite
quant=$models/tflite2onnx/mobilenet_v1_0.25_128_quant.tflite
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

labels=()
add() {  # NAME PROGRAM
  local name=$1 program=$2
  labels+=(--label "$name --version=$program --version")
  for m in "$float" "$quant"; do
    [[ -f $m ]] || continue
    labels+=(--label "$name convert $(basename "$m" .tflite)=$program convert $m -o $tmp/out.onnx")
  done
}
add lite2onnx "$cli"
n=1
for other in "$@"; do
  add "other$n" "$other"
  n=$((n + 1))
done
for m in "$float" "$quant"; do
  [[ -f $m ]] || echo "note: $m not found: its conversion is left out" >&2
done

python3 "$here/startup.py" -n "${RUNS:-101}" "${labels[@]}"
echo
for program in "$cli" "$@"; do
  stats=$(LD_DEBUG=statistics "$program" --version 2>&1 >/dev/null)
  relocs=$(sed -n "s/.*[^l] number of relocations: *//p" <<<"$stats" | head -1)
  libs=$(ldd "$program" | grep -c '=>')
  echo "$program: $libs shared libraries, $relocs relocations at start-up"
done
