#!/usr/bin/env bash
# Batch conversion through the CLI (`lite2onnx convert DIR_OR_FILES... -o OUT_DIR`):
# a folder of generated models, a file that is no model, a model that fails
# (unsupported) and one that is broken (invalid); mirrored paths, summary.json,
# exit codes, plain lines off a terminal and a bar on one, single-file mode as
# before, usage errors, and the same batch through --server.
#   batch_test.sh CLI SERVER TEST_MODELS_DIR SCRIPT_SERVER_SH
set -euo pipefail
cli=$1 server_bin=$2 models=$3
source "$4"  # start_server, fail, $dir (removed on exit)

in=$dir/in
mkdir -p "$in/a/b" "$in/c"
cp "$models/mini_mobilenet.tflite" "$in/mini.tflite"
cp "$models/conv2d_relu6.tflite" "$in/a/conv.tflite"
cp "$models/sig_conv_fc.tflite" "$in/a/b/sig.tflite"
cp "$models/add.tflite" "$in/c/add.model"        # any extension: the identifier decides
cp "$models/unsupported_custom_op.tflite" "$in/c/while.tflite"   # unsupported: a custom op
head -c 200 "$models/mini_mobilenet.tflite" > "$in/c/broken.tflite"  # TFL3, truncated
echo "not a model" > "$in/a/notes.txt"

# ---- the batch: 6 models, 4 converted, 2 failed, 1 skipped; exit 10
status=0
"$cli" convert "$in" -o "$dir/out" -j 2 > "$dir/stdout" 2> "$dir/stderr" || status=$?
[ "$status" -eq 10 ] || fail "exit $status, expected 10: $(cat "$dir/stderr")"
summary=$dir/out/summary.json
jq -e '.counts == {"models": 6, "converted": 4, "failed": 2, "skipped": 1}' "$summary" >/dev/null ||
  fail "counts: $(jq -c .counts "$summary")"
jq -e '.failed_by_reason == {"invalid_model": 1, "unsupported": 1} and .exit_code == 10 and .jobs == 2' \
  "$summary" >/dev/null || fail "summary: $(jq -c '{failed_by_reason, exit_code, jobs}' "$summary")"
jq -e '[.models[] | select(.name == "c/while.tflite")][0] |
       .outcome == "failed" and .error.reason == "unsupported" and .error.exit_code == 4 and
       .error.retryable == false and ([.unsupported[].op] == ["Lite2OnnxNoSuchOp"]) and
       ([.unsupported[].reason_code] == ["custom_op"])' "$summary" >/dev/null ||
  fail "while: $(jq -c '.models[] | select(.name == "c/while.tflite")' "$summary")"
jq -e '[.models[] | select(.name == "c/broken.tflite")][0] |
       .outcome == "failed" and .error.reason == "invalid_model" and .error.exit_code == 3' \
  "$summary" >/dev/null || fail "broken: $(jq -c '.models[] | select(.name == "c/broken.tflite")' "$summary")"
jq -e '[.models[] | select(.outcome == "skipped")] | length == 1 and .[0].name == "a/notes.txt"' \
  "$summary" >/dev/null || fail "skipped: $(jq -c '[.models[] | select(.outcome == "skipped")]' "$summary")"
jq -e '[.models[] | select(.outcome == "converted") | .nodes > 0 and .timings.total_ms > 0 and
        .transposes >= 0 and .onnx_bytes > 0] | all' "$summary" >/dev/null || fail "converted fields"
# Mirrored paths, each file the single-file conversion's bytes, nothing left half-written.
for name in mini a/conv a/b/sig c/add; do
  src=$(ls "$in/$name".*)
  "$cli" convert "$src" -o "$dir/single.onnx" > /dev/null 2>&1
  cmp -s "$dir/single.onnx" "$dir/out/$name.onnx" || fail "out/$name.onnx differs from $src's conversion"
  jq -e --arg n "$name" --arg o "$dir/out/$name.onnx" \
    '[.models[] | select(.output == $o)] | length == 1' "$summary" >/dev/null ||
    fail "no summary entry for $dir/out/$name.onnx"
done
[ ! -e "$dir/out/c/while.onnx" ] && [ ! -e "$dir/out/c/broken.onnx" ] || fail "a failed model has an output"
[ -z "$(find "$dir/out" -name '.*')" ] || fail "temporary files left: $(find "$dir/out" -name '.*')"
# Off a terminal: one plain line per model on stdout, then the table; the skip note on stderr.
[ "$(grep -c '^\[[0-9]/6\] ' "$dir/stdout")" -eq 6 ] || fail "lines: $(cat "$dir/stdout")"
grep -q '^\[[0-9]/6\] failed    c/while.tflite: unsupported: ' "$dir/stdout" || fail "no failure line"
grep -q '^6 models in .* with 2 jobs: 4 converted, 2 failed; 1 other file skipped$' "$dir/stdout" ||
  fail "no summary line: $(cat "$dir/stdout")"
grep -q '^  unsupported  *4  no  *1$' "$dir/stdout" || fail "no reason row: $(cat "$dir/stdout")"
grep -q "skipping $in/a/notes.txt: not a TFLite model" "$dir/stderr" || fail "no skip note"
! grep -q $'\r' "$dir/stdout" "$dir/stderr" || fail "a progress bar off a terminal"

# ---- every model converted: exit 0; --json prints the summary
status=0
"$cli" convert "$in/mini.tflite" "$in/a" -o "$dir/ok" --json > "$dir/ok.json" 2> "$dir/stderr" ||
  status=$?
[ "$status" -eq 0 ] || fail "exit $status for models that all convert: $(cat "$dir/stderr")"
jq -e '.counts.converted == 3 and .counts.failed == 0 and .exit_code == 0' "$dir/ok.json" > /dev/null ||
  fail "--json: $(head -c 300 "$dir/ok.json")"
cmp -s "$dir/ok.json" <(cat "$dir/ok/summary.json") || fail "--json is not summary.json"
[ -f "$dir/ok/mini.onnx" ] && [ -f "$dir/ok/conv.onnx" ] && [ -f "$dir/ok/b/sig.onnx" ] ||
  fail "files given and folders: $(cd "$dir/ok" && find . -type f)"

# ---- on a terminal: a progress bar on stderr (script gives the CLI a pty)
if command -v script > /dev/null; then
  script -qec "'$cli' convert '$in' -o '$dir/tty' -j 1" /dev/null > "$dir/tty.txt" 2>&1 || true
  grep -q '\[##############################\] 6/6 models, 2 failed' "$dir/tty.txt" ||
    fail "no progress bar on a terminal: $(tr '\r' '\n' < "$dir/tty.txt" | head -20)"
  ! grep -q '^\[[0-9]/6\] converted' "$dir/tty.txt" || fail "converted lines on a terminal"
fi

# ---- single-file mode is as before; usage errors
"$cli" convert "$in/mini.tflite" -o "$dir/one.onnx" > "$dir/one.txt"
grep -q "^$in/mini.tflite -> $dir/one.onnx: " "$dir/one.txt" || fail "single file: $(cat "$dir/one.txt")"
[ ! -e "$dir/summary.json" ] || fail "single file wrote a summary"
expect_exit() {
  local want=$1
  shift
  local got=0
  "$cli" "$@" > /dev/null 2> "$dir/err" || got=$?
  [ "$got" -eq "$want" ] || fail "lite2onnx $*: exit $got, expected $want: $(cat "$dir/err")"
}
expect_exit 2 convert "$in/mini.tflite" "$in/a/conv.tflite"       # several inputs need -o DIR
expect_exit 2 convert "$in" -o "$dir/one.onnx"                      # -o is a file
expect_exit 6 convert "$in/missing.tflite" "$in/mini.tflite" -o "$dir/x"
mkdir -p "$dir/clash"
cp "$models/add.tflite" "$dir/clash/m.tflite"
cp "$models/add.tflite" "$dir/clash/m.lite"
expect_exit 2 convert "$dir/clash" -o "$dir/clash-out"
grep -q "would both be written" "$dir/err" || fail "clash: $(cat "$dir/err")"
# A failed model's output of an earlier run goes: the folder holds what this run converted.
echo stale > "$dir/out/c/while.onnx"
"$cli" convert "$in" -o "$dir/out" > /dev/null 2>&1 || true
[ ! -e "$dir/out/c/while.onnx" ] || fail "a stale output of a failed model was left"
# The output folder inside the input folder is not converted again.
"$cli" convert "$in" -o "$in/onnx" > /dev/null 2>&1 || true
status=0
"$cli" convert "$in" -o "$in/onnx" > /dev/null 2>&1 || status=$?
[ "$status" -eq 10 ] || fail "second run: exit $status"
jq -e '.counts == {"models": 6, "converted": 4, "failed": 2, "skipped": 1}' "$in/onnx/summary.json" \
  > /dev/null || fail "second run walked its output: $(jq -c .counts "$in/onnx/summary.json")"

# ---- through a server: the same files
start_server "$server_bin" --http-listen ""
status=0
"$cli" convert "$in" -o "$dir/remote" -j 2 --server "127.0.0.1:$grpc_port" --deadline 60 \
  > /dev/null 2> "$dir/stderr" || status=$?
[ "$status" -eq 10 ] || fail "--server: exit $status: $(cat "$dir/stderr")"
jq -e --arg s "127.0.0.1:$grpc_port" '.server == $s and .counts.converted == 4 and
      .failed_by_reason == {"invalid_model": 1, "unsupported": 1}' "$dir/remote/summary.json" \
  > /dev/null || fail "--server summary: $(jq -c '{server, counts, failed_by_reason}' "$dir/remote/summary.json")"
for name in mini a/conv a/b/sig c/add; do
  cmp -s "$dir/out/$name.onnx" "$dir/remote/$name.onnx" || fail "--server: $name.onnx differs"
done
# Nothing listening: every model fails as unavailable (retried), exit 10.
kill -9 "$pid"
wait "$pid" 2> /dev/null || true
pid=
status=0
"$cli" convert "$in/a" -o "$dir/down" --server "127.0.0.1:$grpc_port" --retries 1 \
  > /dev/null 2>&1 || status=$?
[ "$status" -eq 10 ] || fail "server down: exit $status"
jq -e '.failed_by_reason == {"unavailable": 2} and ([.models[] | select(.outcome == "failed") |
       .attempts == 2 and .error.retryable] | all)' "$dir/down/summary.json" > /dev/null ||
  fail "server down: $(jq -c . "$dir/down/summary.json" | head -c 600)"
echo "batch: all checks passed"
