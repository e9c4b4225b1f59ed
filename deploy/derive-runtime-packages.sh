#!/usr/bin/env bash
# Derives the runtime image's Debian packages from the built binaries: every
# shared library `ldd` resolves, and those a binary notes that it loads with
# dlopen (and what they link), mapped to its package with `dpkg -S`.
#   derive-runtime-packages.sh BINARY...              print the package list
#   derive-runtime-packages.sh --check FILE BINARY... exit 1 when FILE (comments
#                                                      and blanks ignored) differs
set -euo pipefail
check=
if [ "${1:-}" = --check ]; then
  check=$2
  shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [--check FILE] BINARY..." >&2; exit 2; }

# The libraries `ldd` resolves for a program or library, one path a line.
resolved() {
  local out
  out=$(ldd "$1")
  if grep -q 'not found' <<<"$out"; then
    echo "derive-runtime-packages: $1 has unresolved libraries:" >&2
    grep 'not found' <<<"$out" >&2
    exit 1
  fi
  # "libx.so => /path (addr)" and the loader line "/lib64/ld-linux-x86-64.so.2 (addr)".
  awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out"
}
libs=$(
  for bin in "$@"; do
    [ -x "$bin" ] || { echo "derive-runtime-packages: $bin is not an executable" >&2; exit 1; }
    resolved "$bin"
    # Libraries a program loads itself when it needs them (dlopen) carry a
    # note with their SONAME (core/tflite/libzip.cc): they and what they link.
    for soname in $(grep -aoh 'lite2onnx-dlopen:[A-Za-z0-9._+-]*' "$bin" | cut -d: -f2 | sort -u); do
      path=$(ldconfig -p | awk -v s="$soname" '$1 == s && /x86-64/ {print $NF; exit}')
      [ -n "$path" ] || { echo "derive-runtime-packages: $bin loads $soname, not installed" >&2; exit 1; }
      echo "$path"
      resolved "$path"
    done
  done | sort -u
)
# Each library under every name dpkg may know it by (usrmerge: /lib/... or /usr/lib/...,
# and the symlink or its target), all looked up with one dpkg -S.
candidates() {
  local f=$1 real c
  real=$(readlink -f "$f")
  for c in "$f" "$real"; do
    echo "$c"
    case "$c" in
      /usr/*) echo "${c#/usr}" ;;
      *) echo "/usr$c" ;;
    esac
  done
}
mapfile -t paths < <(for l in $libs; do candidates "$l"; done | sort -u)
# "pkg:arch: /path" or "pkg1, pkg2: /path"; diversion lines are skipped.
owners=$(dpkg -S "${paths[@]}" 2>/dev/null | grep -v '^diversion' || true)
packages=$(
  for l in $libs; do
    pkg=
    for c in $(candidates "$l"); do
      pkg=$(awk -v p="$c" 'index($0, ": " p) && substr($0, length($0) - length(p) + 1) == p {
        sub(/: \/.*/, ""); print; exit }' <<<"$owners")
      [ -n "$pkg" ] && break
    done
    [ -n "$pkg" ] || { echo "derive-runtime-packages: no Debian package owns $l" >&2; exit 1; }
    tr ',' '\n' <<<"$pkg" | sed -e 's/^ *//' -e 's/:.*//'
  done | sort -u
)

if [ -z "$check" ]; then
  echo "$packages"
  exit 0
fi
listed=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$check" | grep -v '^$' | sort -u)
if [ "$listed" != "$packages" ]; then
  echo "FAIL: $check does not match the libraries of $*"
  diff <(echo "$listed") <(echo "$packages") | sed -n 's/^</  listed, not needed:/p; s/^>/  needed, not listed:/p'
  echo "update it with: deploy/derive-runtime-packages.sh $*"
  exit 1
fi
echo "runtime packages: $(wc -l <<<"$packages") packages in $check match ldd of $*"
