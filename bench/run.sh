#!/usr/bin/env bash
# Runs every conversion benchmark in its own process (peak RSS is process-wide)
# and prints one table: model size, time, throughput, peak RSS.
#
#   bench/run.sh BUILD_DIR [extra Google Benchmark flags...]
#
# Then the whole-process figures of the CLI beside them (bench/startup.sh:
# `lite2onnx --version` and `lite2onnx convert` of the small MobileNets, start-up
# included; bench/large_model.sh: `lite2onnx convert` of the generated ~108 MiB
# CNN into a file, with its peak RSS).
#
# Environment: REPS (repetitions per benchmark, default 5), FILTER (regex on the
# benchmark names, default all), LITE2ONNX_TEST_MODELS (model corpus directory),
# STARTUP_RUNS (rounds of bench/startup.sh, default 31; 0: leave it out),
# LARGE_RUNS (rounds of bench/large_model.sh, default 11; 0: leave it out).
# Needs jq. MB means MiB (2^20 bytes) throughout; MB/s is model bytes per second.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [benchmark flags...]" >&2
  exit 2
fi
build_dir=$1
shift
bench=$build_dir/bench/lite2onnx_bench
if [[ ! -x $bench ]]; then
  echo "$bench not found: build it with 'ninja -C $build_dir lite2onnx_bench'" >&2
  exit 1
fi
if ! command -v jq >/dev/null; then
  echo "run.sh needs jq (apt-get install jq)" >&2
  exit 1
fi
reps=${REPS:-5}
filter=${FILTER:-.}

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine: $(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr)," \
     "$(awk '/MemTotal/ {printf "%.1f GiB RAM", $2 / 1048576}' /proc/meminfo)," \
     "THP $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "repetitions: $reps per benchmark, each benchmark in its own process"
echo

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t names < <("$bench" --benchmark_list_tests --benchmark_filter="$filter")
results=()
for name in "${names[@]}"; do
  regex="^${name//./\\.}\$"  # names hold only [A-Za-z0-9_./:]
  out=$tmp/$(printf '%s' "$name" | tr '/:' '__').json
  if ! "$bench" --benchmark_filter="$regex" --benchmark_repetitions="$reps" \
      --benchmark_format=json --benchmark_out_format=json --benchmark_out="$out" "$@" \
      >/dev/null 2>"$out.err"; then
    echo "$name: benchmark process failed:" >&2
    cat "$out.err" >&2
    continue
  fi
  results+=("$out")
done
[[ ${#results[@]} -gt 0 ]] || { echo "no benchmark ran" >&2; exit 1; }

# One row per benchmark, over its repetitions (run_type "iteration").
jq -r -s '
  def ms: if .time_unit == "ns" then .real_time / 1e6
          elif .time_unit == "us" then .real_time / 1e3
          elif .time_unit == "s" then .real_time * 1e3 else .real_time end;
  def f(n): (. * pow(10; n) | round | tostring) as $s
            | if n == 0 then $s
              else ("0" * (n + 1 - ($s | length)) + $s) as $z
                   | $z[:($z | length) - n] + "." + $z[($z | length) - n:] end;
  def pad(w): tostring | if length < w then . + " " * (w - length) else . end;
  def lpad(w): tostring | if length < w then " " * (w - length) + . else . end;
  (["model", "model MB", "min ms", "mean ms", "MB/s", "peak RSS MB", "RSS/model", "cold ms"]) as $h
  | ([.[] | .benchmarks | map(select(.run_type == "iteration"))]
     | map(select(length > 0))) as $runs
  | ($runs | map(.[0].run_name | sub("^BM_Convert/"; "") | sub("/iterations:[0-9]+$"; "")
                 | length) | max) as $w
  | ($h[0] | pad($w)) + "  " + ($h[1:] | map(lpad(11)) | join(" ")),
    ($runs[] as $r
     | ($r[0].run_name | sub("^BM_Convert/"; "") | sub("/iterations:[0-9]+$"; "")) as $name
     | if ($r[0].error_occurred // false) then
         ($name | pad($w)) + "  skipped: " + $r[0].error_message
       else
         ($r | map(ms)) as $t
         | ($t | min) as $min | (($t | add) / ($t | length)) as $mean
         | $r[0].model_MB as $mb
         | ($r | map(.peak_rss_MB) | max) as $rss
         | ($name | pad($w)) + "  "
           + ([($mb | f(2)), ($min | f(3)), ($mean | f(3)), ($mb / $mean * 1000 | f(0)),
               ($rss | f(1)), (($rss / $mb) | f(2)) + "x", ($r[0].first_ms | f(3))] | map(lpad(11)) | join(" "))
       end)
' "${results[@]}"

echo
echo "phases (mean ms per conversion, from Diagnostics::timings):"
jq -r -s '
  def lpad(w): tostring | if length < w then " " * (w - length) + . else . end;
  .[] | .benchmarks | map(select(.run_type == "iteration" and (.error_occurred // false | not)))
  | select(length > 0)
  | (.[0].run_name | sub("^BM_Convert/"; "") | sub("/iterations:[0-9]+$"; "")) as $name
  | . as $r
  | ["read", "check", "layout", "lower", "cleanup", "quantization", "emit", "total"]
  | map(. as $p | ($r | map(.[$p + "_ms"] // 0) | add / length) as $v
        | "\($p) \(($v * 1000 | round) / 1000)")
  | "  \($name): " + join("  ")
' "${results[@]}"
echo
echo "MB/s = model MiB / mean time; peak RSS = getrusage ru_maxrss of the benchmark" \
     "process (model bytes, ONNX output and the process itself); cold ms = the process's" \
     "first conversion (untimed warm-up, includes ONNX schema registry set-up)."

startup_runs=${STARTUP_RUNS:-31}
if [[ $startup_runs -gt 0 ]]; then
  echo
  if [[ -x $build_dir/lite2onnx ]]; then
    echo "whole process (bench/startup.sh, $startup_runs rounds):"
    RUNS=$startup_runs "$(dirname "$0")/startup.sh" "$build_dir"
  else
    echo "whole process: $build_dir/lite2onnx not found (build the lite2onnx target)"
  fi
fi

large_runs=${LARGE_RUNS:-11}
if [[ $large_runs -gt 0 ]]; then
  echo
  if [[ -x $build_dir/lite2onnx && -x $build_dir/bench/lite2onnx_make_cnn ]]; then
    echo "whole process, the generated ~108 MiB CNN (bench/large_model.sh, $large_runs rounds):"
    RUNS=$large_runs "$(dirname "$0")/large_model.sh" "$build_dir"
  else
    echo "whole process, large model: build the lite2onnx and lite2onnx_make_cnn targets"
  fi
fi
