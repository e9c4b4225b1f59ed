#!/usr/bin/env bash
# Batch conversion against one CLI process per model (docs/cli.md, "Batch
# conversion"): converts every model of a folder (default ../shared/models)
#   - one `lite2onnx convert MODEL -o OUT` process per model, one at a time,
#   - the same, two processes at a time (xargs -P 2),
#   - `lite2onnx convert FOLDER -o OUT -j 1`, and -j 2,
# with hyperfine (Debian package; scripts/deps.sh), RUNS runs each (default 5)
# after one warm-up. Failing models count alike in every form (the corpus has
# unsupported ones), so every command's exit status is ignored.
#   bench/batch.sh BUILD_DIR [MODELS_DIR]
set -euo pipefail
build=$(cd "$1" && pwd)
models=$(cd "${2:-$(dirname "$0")/../../shared/models}" && pwd)
cli=$build/lite2onnx
runs=${RUNS:-5}
command -v hyperfine > /dev/null || { echo "batch.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every TFLite model of the folder (the files the batch converts).
find "$models" -type f -print0 | sort -z |
  while IFS= read -r -d '' f; do
    [ "$(dd if="$f" bs=1 skip=4 count=4 2>/dev/null)" = TFL3 ] && printf '%s\0' "$f"
  done > "$tmp/list"
count=$(tr -cd '\0' < "$tmp/list" | wc -c)
echo "$count models in $models; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
one="'$cli' convert \"\$1\" -o \"$tmp/per-model/\$(echo \"\$1\" | tr / _).onnx\" > /dev/null 2>&1; true"
mkdir -p "$tmp/per-model"
hyperfine --warmup 1 --runs "$runs" --ignore-failure --export-markdown "$tmp/table.md" \
  -n "one process per model" "xargs -0 -n1 sh -c '$one' sh < '$tmp/list'" \
  -n "one process per model, 2 at a time" "xargs -0 -n1 -P2 sh -c '$one' sh < '$tmp/list'" \
  -n "lite2onnx convert FOLDER -j 1" "'$cli' convert '$models' -o '$tmp/batch1' -j 1 > /dev/null 2>&1" \
  -n "lite2onnx convert FOLDER -j 2" "'$cli' convert '$models' -o '$tmp/batch2' -j 2 > /dev/null 2>&1"
cat "$tmp/table.md"
jq -c .counts "$tmp/batch2/summary.json"
