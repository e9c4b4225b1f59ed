# Sourced by the deploy/checks/*.sh scripts: paths and the skip rule.
# A missing tool fails under CI=true and skips (CTest's exit code 77) elsewhere.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHECKS=$REPO/deploy/checks
CHART=$REPO/helm/lite2onnx
# chartcheck (render Helm charts offline and validate against the Kubernetes schemas):
# ../shared/tools/chartcheck next to the repository, or LITE2ONNX_CHARTCHECK.
CHARTCHECK=${LITE2ONNX_CHARTCHECK:-$REPO/../shared/tools/chartcheck/chartcheck}
BUF=$REPO/tests/server/node_modules/.bin/buf

skip_or_fail() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $* (CI=true: nothing may be skipped)"
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
need_node_modules() {
  [ -d "$CHECKS/node_modules/ajv" ] ||
    skip_or_fail "deploy/checks/node_modules is missing: run scripts/deps.sh (npm ci in deploy/checks)"
}
need_chartcheck() {
  [ -x "$CHARTCHECK" ] || skip_or_fail "chartcheck is not at $CHARTCHECK (../shared/tools/chartcheck)"
}
