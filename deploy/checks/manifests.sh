#!/usr/bin/env bash
# The plain Kubernetes manifests of deploy/kubernetes (kustomize base + example overlay):
#  - chartcheck --manifests: each kustomization is built with `kubectl kustomize` (when
#    kubectl is installed; Debian's kubernetes-client or another) and every object is
#    validated against the Kubernetes schemas;
#  - every kustomization.yaml uses only fields kustomize 2.0 knows (Debian's
#    kubernetes-client 1.20 embeds it): bases/patchesStrategicMerge, not
#    patches/components/labels/replicas;
#  - the base sets every LITE2ONNX_* variable of `SERVER --help` except the TLS ones
#    and --port-file, the example overlay all of them but --port-file.
#   manifests.sh [SERVER_BINARY]
source "$(dirname "$0")/common.sh"
server=${1:-}
need_chartcheck
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$CHARTCHECK" --manifests "$REPO/deploy/kubernetes" || fail "chartcheck --manifests deploy/kubernetes"

KUSTOMIZE_2_0_FIELDS=(apiVersion kind namespace namePrefix nameSuffix commonLabels commonAnnotations resources
  bases patchesStrategicMerge patchesJson6902 configMapGenerator secretGenerator generatorOptions images vars crds)
known=" ${KUSTOMIZE_2_0_FIELDS[*]} "
while IFS= read -r k; do
  for field in $(grep -oE '^[A-Za-z0-9]+:' "$k" | tr -d :); do
    [[ "$known" == *" $field "* ]] ||
      fail "${k#"$REPO"/}: '$field' is unknown to kustomize 2.0 (kubectl 1.20)"
  done
done < <(find "$REPO/deploy/kubernetes" -name kustomization.yaml | sort)

if ! command -v kubectl >/dev/null; then
  skip_or_fail "kubectl is missing (Debian package kubernetes-client): kustomizations not built"
fi
kubectl kustomize "$REPO/deploy/kubernetes/base" >"$dir/base.yaml" 2>"$dir/err" || { cat "$dir/err"; fail "kustomize base"; }
kubectl kustomize "$REPO/deploy/kubernetes/overlays/example" >"$dir/example.yaml" 2>"$dir/err" ||
  { cat "$dir/err"; fail "kustomize overlays/example"; }
if [ -n "$server" ]; then
  flags=$("$server" --help | grep -o 'Env:LITE2ONNX_[A-Z_]*' | sed 's/^Env://' | sort -u)
  for v in $flags; do
    [ "$v" = LITE2ONNX_PORT_FILE ] && continue
    grep -q "^  $v: " "$dir/example.yaml" || fail "overlays/example does not set $v"
    case "$v" in LITE2ONNX_TLS_*) continue ;; esac
    grep -q "^  $v: " "$dir/base.yaml" || fail "base does not set $v"
  done
  echo "manifests: base and overlays/example set the $(wc -w <<<"$flags") server variables (but --port-file; TLS in the overlay)"
fi

[ "$fails" -eq 0 ] || { echo "manifests: $fails problem(s)"; exit 1; }
echo "manifests: OK (kubectl $(kubectl version --client 2>/dev/null | grep -oE "v[0-9]+\.[0-9]+\.[0-9]+" | head -n1))"
