#!/usr/bin/env bash
# Peak memory of lite2onnx-server and its worker process answering the
# generated float CNN (~108 MiB, bench/cnn_model.h, written by
# lite2onnx_make_cnn) through ConvertStream (`lite2onnx convert --server`,
# which streams models above 32 MiB) and through HTTP (curl, POST /v1/convert,
# the ONNX bytes as the body). Each call runs on a fresh server on loopback
# (one worker, no cache), so that VmHWM is that call's: the server's and the
# worker's peak RSS, and the call's wall time. RUNS rounds, every build and
# transport interleaved in each; medians.
#
#   bench/server_large_model.sh BUILD_DIR [OTHER_BIN_DIR...]
#
# BUILD_DIR: a build with lite2onnx, lite2onnx-remote, server/lite2onnx-server,
# server/lite2onnx-worker and bench/lite2onnx_make_cnn. OTHER_BIN_DIR: directories
# holding another lite2onnx-server and its lite2onnx-worker (e.g. an older
# build's), measured in the same rounds. Environment: RUNS (default 7), TMPDIR,
# CNN ("LAYERS CHANNELS SIDE" of lite2onnx_make_cnn; default its 12 512 32).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [OTHER_BIN_DIR...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
servers=("$build/server")
for other in "$@"; do servers+=("$(cd "$other" && pwd)"); done
for program in "$build/lite2onnx" "$build/lite2onnx-remote" "$build/bench/lite2onnx_make_cnn"; do
  [[ -x $program ]] || { echo "$program not found: build it" >&2; exit 1; }
done
for dir in "${servers[@]}"; do
  for program in lite2onnx-server lite2onnx-worker; do
    [[ -x $dir/$program ]] || { echo "$dir/$program not found" >&2; exit 1; }
  done
done
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }

tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then kill -9 "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
model=$tmp/cnn.tflite
# shellcheck disable=SC2086  # CNN: three numbers
"$build/bench/lite2onnx_make_cnn" "$model" ${CNN:-}
model_bytes=$(stat -c %s "$model")

status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# One call on a fresh server: prints "wall_ms server_hwm_kib worker_hwm_kib onnx_bytes".
one_call() {
  local dir=$1 transport=$2
  rm -f "$tmp/ports" "$tmp/out.onnx"
  "$dir/lite2onnx-server" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --metrics-listen "" \
    --port-file "$tmp/ports" --workers 1 --cache-bytes 0 --log-level error \
    >"$tmp/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 200); do [[ -s $tmp/ports ]] && break; sleep 0.05; done
  [[ -s $tmp/ports ]] || { echo "the server did not start: $(cat "$tmp/server.log")" >&2; exit 1; }
  local grpc http start end
  grpc=$(sed -n 's/^grpc=//p' "$tmp/ports")
  http=$(sed -n 's/^http=//p' "$tmp/ports")
  start=$(date +%s%N)
  if [[ $transport == stream ]]; then
    "$build/lite2onnx" convert "$model" -o "$tmp/out.onnx" --server "127.0.0.1:$grpc" >/dev/null
  else
    curl -sf --data-binary "@$model" -H 'Content-Type: application/octet-stream' \
      -o "$tmp/out.onnx" "http://127.0.0.1:$http/v1/convert"
  fi
  end=$(date +%s%N)
  local worker
  worker=$(cat "/proc/$server_pid/task/"*/children 2>/dev/null | tr ' ' '\n' | grep . | head -1)
  echo "$(( (end - start) / 1000000 )) $(status_kib "$server_pid" VmHWM)" \
    "$(status_kib "$worker" VmHWM) $(stat -c %s "$tmp/out.onnx")"
  kill -9 "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

echo "model: $((model_bytes / 1048576)) MiB ($model_bytes bytes); ${RUNS:-7} rounds, interleaved"
results=$tmp/results
: >"$results"
for _ in $(seq "${RUNS:-7}"); do
  for i in "${!servers[@]}"; do
    for transport in stream http; do
      echo "$i $transport $(one_call "${servers[$i]}" "$transport")" >>"$results"
    done
  done
done

printf '%-44s %-7s %9s %17s %17s %10s\n' "server" "via" "wall ms" "server VmHWM MiB" \
  "worker VmHWM MiB" "onnx MiB"
for i in "${!servers[@]}"; do
  for transport in stream http; do
    awk -v i="$i" -v t="$transport" '$1 == i && $2 == t' "$results" | python3 -c '
import statistics, sys
rows = [list(map(float, line.split()[2:])) for line in sys.stdin]
med = [statistics.median(c) for c in zip(*rows)]
print("%-44s %-7s %9.0f %17.1f %17.1f %10.1f" % (sys.argv[1][-44:], sys.argv[2], med[0],
      med[1] / 1024, med[2] / 1024, med[3] / 1048576))' "${servers[$i]}" "$transport"
  done
done
