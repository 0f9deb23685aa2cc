#!/usr/bin/env bash
# scripts/skipped_tests.sh, which makes CI fail on a skipped test: on a planted ctest log it names
# the skipped tests of this build but those labelled gpu, and nothing where none was skipped.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${MNIST_DDP_BUILD_DIR:?the build folder}"
cat >"$WORK/log" <<'LOG'
 1/4 Test  #3: unit_lint ........................   Passed    9.81 sec
 2/4 Test #37: slurm_cluster ....................***Skipped   0.02 sec
 3/4 Test  #2: unit_gpu .........................***Skipped   0.62 sec
 4/4 Test #31: e2e_disk_full ....................***Skipped   0.10 sec
LOG
got=$("$ROOT/scripts/skipped_tests.sh" "$WORK/log" "$MNIST_DDP_BUILD_DIR" | paste -sd' ')
[[ $got == "slurm_cluster e2e_disk_full" ]] && pass "skipped, but for the gpu label: $got" ||
  fail "named '$got', expected 'slurm_cluster e2e_disk_full'"
grep -v Skipped "$WORK/log" >"$WORK/clean"
got=$("$ROOT/scripts/skipped_tests.sh" "$WORK/clean" "$MNIST_DDP_BUILD_DIR")
[[ -z $got ]] && pass "none skipped: nothing named" || fail "named '$got' where none was skipped"
finish skipped_tests
