#!/usr/bin/env bash
# OpenBLAS's fallback core corrected on any host: MNIST_DDP_SIMULATE_BLAS_FALLBACK=1 makes OpenBLAS
# run Prescott as if it had picked it, and every one of 2 ranks installs the core the CPU's
# features allow (SkylakeX with AVX-512F/BW/DQ/VL, Haswell with AVX2 and FMA), which the banner
# names; the final test accuracy equals that of the run kept on Prescott (=uncorrected) to rounding;
# a correction whose check fails (=rejected) runs Prescott again. Where the user set
# OPENBLAS_CORETYPE, every run keeps it and the banner says so.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

RUN=(--data-dir "$FASHION_DIR" --model mlp --epochs 1 --max-steps 60 --threads 1 --log-all-ranks)
if [[ -n ${OPENBLAS_CORETYPE:-} ]]; then
  expected="core [^:]*: the user's setting \(OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE\)"
elif grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo &&
  grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
  expected="core SkylakeX: corrected from OpenBLAS's choice Prescott \(simulated by MNIST_DDP_SIMULATE_BLAS_FALLBACK\), as the CPU has AVX-512F/BW/DQ/VL$"
elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  expected="core Haswell: corrected from OpenBLAS's choice Prescott \(simulated by MNIST_DDP_SIMULATE_BLAS_FALLBACK\), as the CPU has AVX2 and FMA$"
else
  expected="core Prescott: OpenBLAS's choice \(simulated by MNIST_DDP_SIMULATE_BLAS_FALLBACK\)$"
fi

# correct_images: the test images rank 0's final line counts as classified right.
correct_images() { sed -nE 's|^# final test_acc [0-9.]+% \(([0-9]+)/[0-9]+\).*|\1|p' "$WORK/out"; }

MNIST_DDP_SIMULATE_BLAS_FALLBACK=1 run_mpi 2 "${RUN[@]}"
expect_exit 0 "2 ranks with a simulated fallback"
for rank in 0 1; do
  prefix="# BLAS"
  [[ $rank -eq 0 ]] || prefix="[rank $rank] # BLAS"
  line=$(grep -F -- "$prefix " "$WORK/out" | head -1)
  if [[ $line =~ $expected ]]; then pass "rank $rank: ${BASH_REMATCH[0]}"; else
    fail "rank $rank's BLAS line does not match '$expected': $line"
  fi
done
grep -q 'warning' "$WORK/err" && fail "warnings: $(grep warning "$WORK/err")"
corrected=$(correct_images)

MNIST_DDP_SIMULATE_BLAS_FALLBACK=uncorrected run_mpi 2 "${RUN[@]}"
expect_exit 0 "2 ranks kept on the simulated fallback"
kept_core="core Prescott: OpenBLAS's choice \(simulated by MNIST_DDP_SIMULATE_BLAS_FALLBACK\), kept as asked$"
[[ -n ${OPENBLAS_CORETYPE:-} ]] && kept_core=$expected
line=$(grep -m1 -F -- "# BLAS " "$WORK/out")
[[ $line =~ $kept_core ]] && pass "kept: ${BASH_REMATCH[0]}" ||
  fail "the BLAS line does not match '$kept_core': $line"
kept=$(correct_images)

better=$(sed -nE 's/^core ([A-Za-z]+): corrected from.*/\1/p' <<<"$expected")
if [[ -n $better ]]; then
  MNIST_DDP_SIMULATE_BLAS_FALLBACK=rejected run_mpi 1 --version
  expect_exit 0 "--version with the correction's check failing"
  rejected="core Prescott: OpenBLAS's choice \(simulated by MNIST_DDP_SIMULATE_BLAS_FALLBACK\); $better was rejected, a disagreement was simulated$"
  line=$(grep -m1 -F -- "BLAS " "$WORK/out")
  [[ $line =~ $rejected ]] && pass "rejected: ${BASH_REMATCH[0]}" ||
    fail "the BLAS line does not match '$rejected': $line"
fi

# Kernels round differently: a few of the 10,000 test images may change, no more.
if [[ -n $corrected && -n $kept ]] && ((corrected - kept <= 5 && kept - corrected <= 5)); then
  pass "the same final test accuracy to rounding: $corrected and $kept of 10000 right"
else
  fail "final test accuracy: $corrected right corrected, $kept on the fallback"
fi

finish e2e_blas_core
