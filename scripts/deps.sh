#!/usr/bin/env bash
# Installs what lite2onnx needs on Debian 12: the build toolchain and libraries
# (apt) and the Node packages of the numeric test harness (npm ci, lockfile).
# Idempotent: skips apt when every package is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkgconf ccache git
  libprotobuf-dev protobuf-compiler libonnx-dev
  libflatbuffers-dev flatbuffers-compiler
  nlohmann-json3-dev libcli11-dev jq clang-format
  libgtest-dev libgmock-dev libbenchmark-dev
  # The CLI's and the server's allocator (CMakeLists.txt, LITE2ONNX_JEMALLOC).
  libjemalloc-dev
  # gRPC service (server/, proto/, tests/server/): TOOLCHAIN.md's packages; openssl
  # makes the TLS tests' certificates, curl scrapes /metrics in the buf curl test.
  libgrpc++-dev protobuf-compiler-grpc grpc-proto prometheus-cpp-dev
  # The HTTP endpoint (server/http_endpoint.cc): Boost.Beast and Boost.Asio's SSL
  # stream, header-only, over OpenSSL 3. Not civetweb (Debian's 1.15 resolves
  # OpenSSL 1.1 symbols at run time and crashes on the first TLS request; it stays
  # for /metrics only, through prometheus-cpp-dev, which depends on libcivetweb-dev)
  # and not cpp-httplib (0.11.4 buffers request heads without a bound): docs/service.md.
  libboost1.81-dev
  libspdlog-dev libfmt-dev openssl curl
  # SHA-256 of the golden outputs (tests/golden).
  libssl-dev
  # The associated files of TFLite Metadata: the zip archive appended to a model
  # (core/tflite/metadata.cc).
  libzip-dev
  # The worker processes' seccomp filter (server/sandbox.cc).
  libseccomp-dev
  # Deployment checks (deploy/checks/): YAML lint.
  yamllint
  # libFuzzer targets (fuzz/, scripts/fuzz.sh): clang, its runtime libraries
  # (libFuzzer, ASan, UBSan) and llvm-symbolizer for readable reports.
  clang libclang-rt-14-dev llvm
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs the numeric tests; Debian 12 ships nodejs 18 (keep a newer one if present).
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# kubectl builds deploy/kubernetes' kustomizations; Debian's is kubernetes-client (a
# kubectl from another package conflicts with it and serves as well).
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "deps: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime and the TFLite runtimes for the numeric suite, from the lockfile.
if [ ! -f tests/numeric/node_modules/.package-lock.json ] ||
   [ tests/numeric/package-lock.json -nt tests/numeric/node_modules/.package-lock.json ]; then
  echo "deps: npm ci in tests/numeric"
  (cd tests/numeric && npm ci --no-audit --no-fund)
fi

# buf curl (grpcurl-style client) for the server's reflection test, from the lockfile.
# Its binary comes in an optional package; no install script is needed.
if [ ! -f tests/server/node_modules/.package-lock.json ] ||
   [ tests/server/package-lock.json -nt tests/server/node_modules/.package-lock.json ]; then
  echo "deps: npm ci in tests/server"
  (cd tests/server && npm ci --no-audit --no-fund --ignore-scripts)
fi

# ajv, dockerfilelint and the PromQL parser of the deployment checks, from the lockfile.
if [ ! -f deploy/checks/node_modules/.package-lock.json ] ||
   [ deploy/checks/package-lock.json -nt deploy/checks/node_modules/.package-lock.json ]; then
  echo "deps: npm ci in deploy/checks"
  (cd deploy/checks && npm ci --no-audit --no-fund --ignore-scripts)
fi
