#!/usr/bin/env bash
# yamllint (strict: warnings fail too) with the repository's .yamllint on every YAML
# file of the repository; Helm templates are linted rendered, by chart.sh.
source "$(dirname "$0")/common.sh"
command -v yamllint >/dev/null || skip_or_fail "yamllint is missing (Debian package yamllint)"
cd "$REPO"
files=$(git ls-files --cached --others --exclude-standard -- '*.yaml' '*.yml' .yamllint |
  grep -v -e '/templates/' -e '^build' || true)
[ -n "$files" ] || { echo "FAIL: no YAML files found"; exit 1; }
# shellcheck disable=SC2086 # one word per file
yamllint -s -c .yamllint $files
echo "yamllint: $(wc -w <<<"$files") YAML files clean"
