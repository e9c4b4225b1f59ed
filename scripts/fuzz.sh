#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan; fuzz/README.md) in
# build-fuzz and runs each for a bounded time:
#
#   scripts/fuzz.sh [--seconds N] [--no-build] [TARGET...] [-- LIBFUZZER_FLAG...]
#
# TARGET is read, convert, inspect, graph, metadata, custom_options or http
# (default: all seven, 30 s each). Seeds are gathered at run time into build-fuzz/seeds/<target> (never
# committed): every generated test model (tests/models/json, compiled here with
# flatc), every model of the third-party corpus ($LITE2ONNX_TEST_MODELS, else
# ../shared/models) and the committed regression inputs; metadata gets the
# corpus models that carry TFLite Metadata and the small models
# fuzz_metadata_seeds writes (metadata, labels, a zip bomb); custom_options gets
# the custom options of the generated models' custom ops; http gets the
# committed requests of fuzz/seeds/http. New inputs go to
# build-fuzz/corpus/<target>, kept between runs. A crash, sanitizer report,
# timeout, leak or out-of-memory fails the run; the input is left in
# build-fuzz/findings/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=30
build=1
targets=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --) shift; extra=("$@"); break ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(read convert inspect graph metadata custom_options http)
B=${LITE2ONNX_FUZZ_BUILD:-build-fuzz}

if [ "$build" = 1 ]; then
  CC=clang CXX=clang++ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DLITE2ONNX_FUZZ=ON -DLITE2ONNX_WERROR=ON -DLITE2ONNX_BUILD_TESTS=OFF \
    -DLITE2ONNX_BUILD_BENCH=OFF -DLITE2ONNX_BUILD_SERVER=ON
  cmake --build "$B" -j "$(nproc)" --target fuzz_targets
fi

# ---- seeds ----------------------------------------------------------------------
models="$B/seeds/models"
rm -rf "$B/seeds"
mkdir -p "$models"
flatc -b -o "$models" core/tflite/schema.fbs tests/models/json/*.json
corpus=${LITE2ONNX_TEST_MODELS:-../shared/models}
if [ -d "$corpus" ]; then
  find "$corpus" -name '*.tflite' -print0 | while IFS= read -r -d '' f; do
    cp "$f" "$models/corpus_$(echo "$f" | sha1sum | cut -c1-12).tflite"
  done
else
  echo "fuzz: no model corpus at $corpus; seeding from the generated models only"
fi
for t in "${targets[@]}"; do
  seeds="$B/seeds/$t"
  mkdir -p "$seeds" "$B/corpus/$t" "$B/findings/$t"
  case "$t" in
    read | inspect) cp "$models"/*.tflite "$seeds"/ ;;
    # convert: byte 0 = number of option bytes (0: default options), then the model.
    convert) for f in "$models"/*.tflite; do
        { printf '\0'; cat "$f"; } > "$seeds/$(basename "$f")"
      done ;;
    graph) for i in $(seq 16); do head -c 512 /dev/urandom > "$seeds/random_$i"; done ;;
    # metadata: the models with a TFLITE_METADATA buffer, and generated ones.
    metadata) { grep -l TFLITE_METADATA "$models"/*.tflite || true; } | xargs -r cp -t "$seeds"/
      "$B/fuzz/fuzz_metadata_seeds" "$seeds" ;;
    # custom_options: "<custom code>\0<custom_options bytes>" of each custom op.
    custom_options) i=0
      for f in tests/models/json/*.json; do
        jq -r '. as $m | .subgraphs[].operators[] | select(.custom_options)
          | "\($m.operator_codes[.opcode_index // 0].custom_code) \(.custom_options | map(tostring) | join(" "))"' "$f"
      done | while read -r code bytes; do
        i=$((i + 1))
        { printf '%s\0' "$code"; for b in $bytes; do printf "\\$(printf %03o "$b")"; done; } > "$seeds/op_$i"
      done ;;
    # http: byte 0 chooses the parser (fuzz/http_fuzzer.cc), then a request.
    http) cp fuzz/seeds/http/* "$seeds"/ ;;
    *) echo "fuzz: unknown target '$t' (read, convert, inspect, graph, metadata, custom_options, http)"; exit 2 ;;
  esac
  if [ -d "tests/fuzz_regressions/$t" ]; then
    find "tests/fuzz_regressions/$t" -type f ! -name README.md -exec cp {} "$seeds"/ \;
  fi
done

# ---- runs -----------------------------------------------------------------------
failed=()
for t in "${targets[@]}"; do
  dict=()
  [ "$t" != graph ] && dict=(-dict=fuzz/tflite.dict)
  [ "$t" = metadata ] && dict=(-dict=fuzz/metadata.dict)
  [ "$t" = custom_options ] && dict=(-dict=fuzz/custom_options.dict)
  [ "$t" = http ] && dict=(-dict=fuzz/http.dict)
  echo "fuzz: $t for ${seconds} s"
  if ! ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
      UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
      "$B/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$B/findings/$t/" \
      "${dict[@]}" "${extra[@]}" "$B/corpus/$t" "$B/seeds/$t" > "$B/fuzz_$t.log" 2>&1; then
    failed+=("$t")
    tail -n 60 "$B/fuzz_$t.log"
  fi
  grep -E '^#[0-9]+.*(DONE|pulse)|^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' \
    "$B/fuzz_$t.log" | tail -n 4 || true
done
passed=$((${#targets[@]} - ${#failed[@]}))
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $B/findings/, logs in $B/fuzz_<target>.log)"
  echo "fuzz: $passed passed, ${#failed[@]} failed"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds} s each without a finding"
echo "fuzz: $passed passed, 0 failed"
