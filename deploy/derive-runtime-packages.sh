#!/usr/bin/env bash
# Derives the runtime image's Debian packages from the built binaries: every
# shared library `ldd` resolves, mapped to its package with `dpkg -S`.
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

# The package owning PATH; usrmerge means dpkg may know it as /lib/... or /usr/lib/...
owner() {
  local f=$1 real candidates c out
  real=$(readlink -f "$f")
  candidates=("$f" "$real")
  for c in "$f" "$real"; do
    case "$c" in
      /usr/*) candidates+=("${c#/usr}") ;;
      *) candidates+=("/usr$c") ;;
    esac
  done
  for c in "${candidates[@]}"; do
    # "pkg:arch: /path" (diversion lines start with "diversion by").
    out=$(dpkg -S "$c" 2>/dev/null | grep -v '^diversion' | head -n1) || true
    if [ -n "$out" ]; then
      out=${out%%: *}
      echo "${out%%:*}"
      return 0
    fi
  done
  echo "derive-runtime-packages: no Debian package owns $f" >&2
  return 1
}

libs=$(
  for bin in "$@"; do
    [ -x "$bin" ] || { echo "derive-runtime-packages: $bin is not an executable" >&2; exit 1; }
    out=$(ldd "$bin")
    if grep -q 'not found' <<<"$out"; then
      echo "derive-runtime-packages: $bin has unresolved libraries:" >&2
      grep 'not found' <<<"$out" >&2
      exit 1
    fi
    # "libx.so => /path (addr)" and the loader line "/lib64/ld-linux-x86-64.so.2 (addr)".
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out"
  done | sort -u
)
packages=$(for l in $libs; do owner "$l"; done | sort -u)

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
