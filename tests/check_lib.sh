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

# passes_as_is OK FAILED COMMAND...: COMMAND (a check of the tree as it is) exits 0; else its output.
passes_as_is() {
  local ok=$1 failed=$2
  shift 2
  if "$@" >"$WORK/out" 2>&1; then
    pass "$ok"
  else
    fail "$failed:"
    cat "$WORK/out" >&2
  fi
}

# finish [NAME]: the verdict, "NAME: ..." when given.
finish() {
  local prefix=${1:+$1: }
  if [[ $FAILURES -gt 0 ]]; then
    echo "${prefix}$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "${prefix}all checks passed"
}
