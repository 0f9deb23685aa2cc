#!/usr/bin/env bash
# tests/build/test_check_libtorch2.sh — every source of the build compiles against LibTorch 2.x
# headers with CUDA, CUDA graphs and NCCL on (scripts/check_libtorch2.py), and the check fails,
# naming the file and the reason, on planted copies of sources that the 1.13 build accepts: code
# that only 2.x rejects, an error in the CUDA graph code, a deprecated LibTorch call, and a header
# that only the system's LibTorch 1.13 has. The check runs as CI runs it, with each target's
# sources compiled as one unit (--unity): a failing unit is split until every error is named by
# its source, and two sources that clash only when compiled together (the same internal name)
# pass. Exits 77 (skipped) where the headers cannot be fetched; fails under CI.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHECK=$ROOT/scripts/check_libtorch2.py
BUILD=${MNIST_DDP_BUILD_DIR:?the build folder}

status=0
python3 "$CHECK" --build-dir "$BUILD" --unity >"$WORK/out" 2>&1 || status=$?
cat "$WORK/out"
if ((status == 77)); then
  echo "skipped: the LibTorch 2.x headers are not available here"
  exit 77
elif ((status == 0)) && grep -q "sources compile against LibTorch 2\.[0-9]* with CUDA" "$WORK/out"
then
  pass "every source compiles against LibTorch 2.x with CUDA"
else
  fail "the sources do not all compile against LibTorch 2.x with CUDA (exit $status)"
fi

# plant NAME SOURCE TEXT: a copy of SOURCE (relative to the root) with TEXT as its first lines.
plant() {
  mkdir -p "$WORK/$1"
  { printf '%s\n' "$3"; cat "$ROOT/$2"; } >"$WORK/$1/$(basename "$2")"
}
plant only_1_13 lib/common/log.cpp '#include <torch/version.h>
static_assert(TORCH_VERSION_MAJOR < 2, "planted: LibTorch 1.x only");'
plant graphs lib/train/graphed_step.cpp '#if MNIST_DDP_CUDA_GRAPHS && MNIST_DDP_HAVE_NCCL
#error "planted: an error in the CUDA graph code"
#endif'
plant deprecated lib/model/dropout.cpp '#include <ATen/autocast_mode.h>
static bool planted_autocast_on() { return at::autocast::is_cpu_enabled(); }
static const bool kPlanted = planted_autocast_on();'
plant foreign lib/data/idx_file.cpp '#include <c10/util/variant.h>'

status=0
python3 "$CHECK" --build-dir "$BUILD" --unity --jobs 2 \
  --files '/(log|graphed_step|dropout|idx_file|batch_maker)\.cpp$' \
  --replace "$ROOT/lib/common/log.cpp=$WORK/only_1_13/log.cpp" \
  --replace "$ROOT/lib/train/graphed_step.cpp=$WORK/graphs/graphed_step.cpp" \
  --replace "$ROOT/lib/model/dropout.cpp=$WORK/deprecated/dropout.cpp" \
  --replace "$ROOT/lib/data/idx_file.cpp=$WORK/foreign/idx_file.cpp" >"$WORK/planted" 2>&1 ||
  status=$?
expect() {
  if grep -qE "$2" "$WORK/planted"; then pass "$1"; else fail "$1: no line matches '$2'"; fi
}
if ((status == 1)); then
  pass "planted sources: exit 1"
else
  fail "planted sources: exit $status, expected 1"
fi
expect "2.x headers in use" 'planted: LibTorch 1\.x only'
expect "the CUDA graph code is compiled" 'planted: an error in the CUDA graph code'
expect "a deprecated call fails" "dropout\.cpp.*is_cpu_enabled.*deprecated"
expect "a 1.13-only header is named" 'FAIL lib/data/idx_file\.cpp'
expect "the 1.13 header's path is given" 'outside the 2\.x ones: /usr/include/c10/util/variant\.h'
expect "the untouched source passes, counted" '4 of 5 sources do not compile'
if ((FAILURES > 0)); then cat "$WORK/planted" >&2; fi

# Two sources of one target that each compile, but define the same internal name: their unit
# fails, the halves pass.
clash='namespace { [[maybe_unused]] int planted_clash() { return 0; } }'
plant clash_a lib/common/log.cpp "$clash"
plant clash_b lib/common/atomic_file.cpp "$clash"
status=0
python3 "$CHECK" --build-dir "$BUILD" --unity --jobs 2 --files '/(log|atomic_file)\.cpp$' \
  --replace "$ROOT/lib/common/log.cpp=$WORK/clash_a/log.cpp" \
  --replace "$ROOT/lib/common/atomic_file.cpp=$WORK/clash_b/atomic_file.cpp" >"$WORK/clash" 2>&1 ||
  status=$?
if ((status == 0)) && grep -q "2 sources in one unit fail (.*planted_clash" "$WORK/clash" &&
  grep -q "2 of 2 sources compile" "$WORK/clash"; then
  pass "a clash between two sources in one unit: the unit is split, both pass"
else
  fail "a clash between two sources in one unit: exit $status"
  cat "$WORK/clash" >&2
fi

finish check_libtorch2
