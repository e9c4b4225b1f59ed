#!/usr/bin/env bash
# Compares two builds of the conversion benchmark, interleaved so that a
# shared machine's load drifts over both alike: ROUNDS rounds, each running
# OLD's then NEW's lite2onnx_bench on a few models (5 repetitions, the best of
# them kept); prints per model the median of the rounds' CPU times and of the
# ratios NEW/OLD. docs/python.md has the -fPIC figures it measured.
#   bench/compare_builds.sh OLD/lite2onnx_bench NEW/lite2onnx_bench [ROUNDS]
set -euo pipefail
old=$1 new=$2 rounds=${3:-10}
filter=${FILTER:-'^BM_Convert/(mobilenet_v1_0.25_224_1_default_1|tf2_mobilenet_v2_1.0_224_ptq|medium_cnn)$'}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$rounds"); do
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    "$bin" --benchmark_filter="$filter" --benchmark_repetitions=5 --benchmark_min_time=0.2 \
      --benchmark_format=json 2> /dev/null |
      jq -r --arg w "$which" '.benchmarks[] | select(.run_type == "iteration") |
                               "\($w) \(.run_name) \(.cpu_time)"' >> "$out"
  done
done
/usr/bin/python3 - "$out" <<'PY'
import collections, statistics, sys
times = collections.defaultdict(list)
for line in open(sys.argv[1]):
    which, name, cpu = line.split()
    times[(which, name)].append(float(cpu))
for name in sorted({n for _, n in times}):
    best = {w: [min(t[i:i + 5]) for i in range(0, len(t), 5)]
            for w in ("old", "new") for t in [times[(w, name)]]}
    ratios = [n / o for n, o in zip(best["new"], best["old"])]
    print(f"{name}: CPU ms old {statistics.median(best['old']):.3f}, new "
          f"{statistics.median(best['new']):.3f}; new/old median {statistics.median(ratios):.2f} "
          f"(rounds {min(ratios):.2f}..{max(ratios):.2f}, {len(ratios)} rounds)")
PY
