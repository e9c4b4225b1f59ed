#!/usr/bin/env bash
# Checks the Dockerfile without a Docker engine:
#  - its policy: a debian:bookworm build stage, a debian:bookworm-slim final stage
#    that installs deploy/runtime-packages.txt, a numeric non-root USER, EXPOSE of
#    the gRPC, HTTP and metrics ports, ENTRYPOINT ["lite2onnx-server"] in exec form;
#  - its build packages are a subset of scripts/deps.sh's (the README's packages);
#  - every COPY source is in the build context .dockerignore lets through;
#  - the context .dockerignore lets through configures with the Dockerfile's
#    CMAKE_ARGS (a source file or directory missing from it fails here, not
#    in someone's docker build). --build also compiles the two binaries there.
#   docker-context.sh [--build]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=
[ "${1:-}" = --build ] && build=1

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
df=Dockerfile

# Join continuation lines, drop comments: one instruction per line.
instructions=$(sed -e '/^[[:space:]]*#/d' "$df" | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' | grep -v '^[[:space:]]*$')
froms=$(grep -i '^FROM ' <<<"$instructions")
[ "$(head -n1 <<<"$froms" | awk '{print $2}')" = debian:bookworm ] || fail "the first stage must build FROM debian:bookworm"
[ "$(tail -n1 <<<"$froms" | awk '{print $2}')" = debian:bookworm-slim ] || fail "the final stage must be FROM debian:bookworm-slim"
final=$(awk 'BEGIN{IGNORECASE=1} /^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' <<<"$instructions")
user=$(grep -i '^USER ' <<<"$final" | tail -n1 | awk '{print $2}')
[[ "$user" =~ ^[0-9]+(:[0-9]+)?$ ]] || fail "the final stage needs a numeric USER (runAsNonRoot verifies it), got '$user'"
[[ "$user" =~ ^0(:|$) ]] && fail "USER must not be root"
grep -qiE '^EXPOSE( .*)? 50051( |$)' <<<"$final" || fail "EXPOSE 50051 (gRPC) is missing"
grep -qiE '^EXPOSE( .*)? 8080( |$)' <<<"$final" || fail "EXPOSE 8080 (HTTP) is missing"
grep -qiE '^EXPOSE( .*)? 9464( |$)' <<<"$final" || fail "EXPOSE 9464 (metrics) is missing"
grep -qx 'ENTRYPOINT \["lite2onnx-server"\]' <<<"$final" || fail 'ENTRYPOINT must be ["lite2onnx-server"] (exec form, no shell)'
grep -q 'runtime-packages.txt' <<<"$final" || fail "the final stage must install deploy/runtime-packages.txt"

# Build packages: the words after 'install -y --no-install-recommends' in the build stage.
build_stage=$(awk 'BEGIN{IGNORECASE=1} /^FROM /{n++} n==1' <<<"$instructions")
build_pkgs=$(grep -o 'apt-get install [^&]*' <<<"$build_stage" | tr ' ' '\n' |
  grep -Ev '^(apt-get|install|-y|--no-install-recommends|)$' | sort -u)
deps_pkgs=$(sed -n '/^APT_PACKAGES=(/,/^)/p' scripts/deps.sh | sed -e 's/#.*//' -e '1d;$d' | tr ' ' '\n' | grep -v '^$' | sort -u)
[ -n "$build_pkgs" ] || fail "no apt-get install found in the build stage"
for p in $build_pkgs; do
  grep -qx "$p" <<<"$deps_pkgs" || fail "build package $p is not in scripts/deps.sh's APT_PACKAGES"
done

# The context: .dockerignore is an allow-list ('*' then '!path' lines).
ignore_lines=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' .dockerignore | grep -v '^$')
[ "$(head -n1 <<<"$ignore_lines")" = '*' ] || fail ".dockerignore must start with '*' (an allow-list)"
mapfile -t allowed < <(sed -n 's/^!//p' <<<"$ignore_lines" | sed 's:/$::')
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
for a in "${allowed[@]}"; do
  [ -e "$a" ] || { fail ".dockerignore allows $a, which does not exist"; continue; }
  # Tracked and new (not ignored) files: in a fresh clone, what it sends as the context.
  git ls-files -z --cached --others --exclude-standard -- "$a" | while IFS= read -r -d '' f; do
    mkdir -p "$ctx/$(dirname "$f")"
    cp -p "$f" "$ctx/$f"
  done
done
# COPY sources (not --from) must be in the context.
while read -r src; do
  [ "$src" = . ] && continue
  [ -e "$ctx/$src" ] || fail "COPY $src: not in the .dockerignore'd context"
done < <(grep -iE '^COPY ' <<<"$instructions" | grep -v -- '--from' | awk '{for (i = 2; i < NF; i++) print $i}')

cmake_args=$(sed -n 's/^ARG CMAKE_ARGS="\(.*\)"$/\1/p' "$df")
[ -n "$cmake_args" ] || fail 'no ARG CMAKE_ARGS="..." in the Dockerfile'
# shellcheck disable=SC2086 # the flags are words
if ! cmake -S "$ctx" -B "$ctx/build" -G Ninja $cmake_args >"$ctx/cmake.log" 2>&1; then
  cat "$ctx/cmake.log"
  fail "cmake does not configure the docker context with $cmake_args"
elif [ -n "$build" ]; then
  if ! cmake --build "$ctx/build" --target lite2onnx-server lite2onnx-worker lite2onnx lite2onnx-remote \
    >"$ctx/build.log" 2>&1; then
    tail -n 40 "$ctx/build.log"
    fail "the docker context does not build"
  else
    deploy/derive-runtime-packages.sh --check deploy/runtime-packages.txt \
      "$ctx/build/server/lite2onnx-server" "$ctx/build/server/lite2onnx-worker" \
      "$ctx/build/lite2onnx" "$ctx/build/lite2onnx-remote" || fail "runtime packages"
  fi
fi

if [ "$fails" -gt 0 ]; then
  echo "docker context: $fails problem(s)"
  exit 1
fi
echo "docker context: policy OK, $(wc -l <<<"$build_pkgs") build packages within scripts/deps.sh," \
  "$(find "$ctx" -path "$ctx/build" -prune -o -type f -print | wc -l) files in the context configure with $cmake_args${build:+ and build}"
