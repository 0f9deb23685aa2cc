#!/usr/bin/env bash
# scripts/skipped_tests.sh — provides: the tests a ctest log reports skipped, one a line, but for
# those labelled gpu in BUILD_DIR (no GPU in CI): scripts/test.sh fails CI on any it prints.
#
#   scripts/skipped_tests.sh CTEST_LOG BUILD_DIR
set -euo pipefail
(($# == 2)) || { sed -n '5p' "$0" >&2; exit 2; }
gpu_only=$(ctest --test-dir "$2" -N -L gpu | sed -nE 's/^ *Test +#[0-9]+: //p')
sed -nE 's/.*Test +#[0-9]+: ([A-Za-z0-9_]+) \.*\*+Skipped.*/\1/p' "$1" |
  grep -vxF -f <(echo "$gpu_only") || true
