# tests/check_lib.sh — provides: what every shell test shares: a scratch folder WORK (removed on
# exit), fail and pass, and finish, which exits 1 when any check failed. Source it.
# shellcheck shell=bash
set -euo pipefail

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILURES=0

fail() {
  echo "FAIL: $*" >&2
  FAILURES=$((FAILURES + 1))
}

pass() { echo "ok: $*"; }

# finish [NAME]: the verdict, "NAME: ..." when given.
finish() {
  local prefix=${1:+$1: }
  if [[ $FAILURES -gt 0 ]]; then
    echo "${prefix}$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "${prefix}all checks passed"
}
