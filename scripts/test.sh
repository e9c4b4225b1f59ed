#!/usr/bin/env bash
# Runs the whole test suite: installs missing dependencies, builds (Release),
# runs CTest (unit tests, the numeric suite on the op models at opset 13 and 17,
# and the third-party corpus), then the unit tests, the server tests and the
# CLI's --server tests again under AddressSanitizer + UndefinedBehaviorSanitizer
# (server, worker processes and CLI all built with them), then each libFuzzer
# target for a bounded time (scripts/fuzz.sh; a finding fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
# Three builds and ccache take several GB of disk (README, Tests); say
# what there is, so a run that fills the disk is recognised at once.
df -h . | awk 'NR == 2 { print "test.sh: " $4 " of disk free at the start" }'

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLITE2ONNX_WERROR=ON
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

# Line tables only (-g1): enough for the sanitizers' stack traces, and a third
# of full debug info's disk (a full-debug ASan build took 3.5 GB, enough to
# fill a CI machine's disk).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DLITE2ONNX_SANITIZE=ON -DLITE2ONNX_BUILD_BENCH=OFF -DLITE2ONNX_WERROR=ON
cmake --build build-asan -j "$jobs" --target unit_tests server_tests error_reasons_test
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
./build-asan/tests/unit_tests --gtest_brief=1
# The real server (its worker processes too) and the CLI, on loopback. (Formatting
# and buf curl were checked above, against the same sources.)
(cd build-asan && LSAN_OPTIONS=suppressions=$PWD/../tests/server/lsan.supp \
  ctest -L server -E 'clang_format|buf_curl' --output-on-failure -j "$jobs")

# libFuzzer targets (clang, ASan + UBSan; fuzz/README.md), seeded from the
# generated and the corpus models: LITE2ONNX_FUZZ_SECONDS each (default 30).
./scripts/fuzz.sh --seconds "${LITE2ONNX_FUZZ_SECONDS:-30}"
