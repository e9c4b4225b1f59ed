#!/usr/bin/env bash
# Whole-process figures of the CLI on a large model: `lite2onnx convert` of the
# generated float CNN (bench/cnn_model.h: 12 CONV_2D of 512x3x3x512 float32
# filters, OHWI, permuted to OIHW on the way; ~108 MiB; written by
# lite2onnx_make_cnn, the in-process BM_Convert/large_cnn's model) into a file
# beside it, RUNS times interleaved with /bin/true (bench/startup.py): medians of
# wall time, CPU time and peak RSS, then peak RSS over the model's size.
#
#   bench/large_model.sh BUILD_DIR [OTHER_LITE2ONNX...]
#
# OTHER_LITE2ONNX: more lite2onnx programs (e.g. an older build's) run in the
# same rounds, for a side-by-side comparison. Environment: RUNS (default 21),
# TMPDIR (where the model and the ONNX files go; the file system matters).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [OTHER_LITE2ONNX...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shift
cli=$build/lite2onnx
make_cnn=$build/bench/lite2onnx_make_cnn
for program in "$cli" "$make_cnn"; do
  [[ -x $program ]] || { echo "$program not found: build the lite2onnx and lite2onnx_make_cnn targets" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model=$tmp/cnn.tflite
"$make_cnn" "$model"
model_mib=$(( $(stat -c %s "$model") / 1048576 ))

labels=(--label "lite2onnx convert cnn=$cli convert $model -o $tmp/out.onnx")
n=1
for other in "$@"; do
  labels+=(--label "other$n convert cnn=$other convert $model -o $tmp/out$n.onnx")
  n=$((n + 1))
done
echo "model: $model_mib MiB ($(stat -c %s "$model") bytes), output in $(df --output=fstype "$tmp" | tail -1) ($tmp)"
report=$(python3 "$here/startup.py" -n "${RUNS:-21}" --warmup 2 "${labels[@]}")
echo "$report"
# Peak RSS over the model's size, per command (the last column of the report).
awk -v m="$model_mib" 'NR > 2 && $1 != "/bin/true" {
  printf "%s: peak RSS %.2fx the model\n", $1 == "lite2onnx" ? "lite2onnx" : $1, $NF / m }' <<<"$report"
