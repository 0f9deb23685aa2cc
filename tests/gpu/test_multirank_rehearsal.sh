#!/usr/bin/env bash
# End to end: tests/gpu/multirank.sh rehearsed on the CPU with MPI, 4 and 2 ranks of 20 steps:
# every check passes (the CUDA-graph ones skipped); then, with a PMPI shim that corrupts one
# element of every float allreduce on the last rank (tests/e2e/corrupt_allreduce.cpp) preloaded
# into the runs of several ranks, the equality and benchmark checks at 2 ranks must fail while the
# 1-rank reference passes.
# Needs MNIST_DDP_BIN, ALLREDUCE_BENCH_BIN and CORRUPT_ALLREDUCE_LIB, set by ctest.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/e2e_lib.sh"
: "${ALLREDUCE_BENCH_BIN:?set ALLREDUCE_BENCH_BIN to the allreduce_bench executable}"
: "${CORRUPT_ALLREDUCE_LIB:?set CORRUPT_ALLREDUCE_LIB to the corrupt_allreduce library}"

# rehearse NAME [VARIABLE=VALUE...]: the driver with MPI on the CPU; sets STATUS, its output in
# $WORK/out and err and its summary in $WORK/NAME/summary.md.
rehearse() {
  local name=$1
  shift
  STATUS=0
  env MNIST_DDP_DATA="$FASHION_DIR" MULTIRANK_BACKEND=mpi MULTIRANK_DEVICE=cpu \
    MULTIRANK_RANKS="4 2" MULTIRANK_STEPS=20 GPU_CHECK_BUILD_DIR="$WORK/$name-build" "$@" \
    timeout 300 bash "$MNIST_DDP_SOURCE_DIR/tests/gpu/multirank.sh" --out "$WORK/$name" \
    >"$WORK/out" 2>"$WORK/err" || STATUS=$?
}

# expect_rows NAME RESULT ROW...: each ROW's result in NAME's summary starts with RESULT.
expect_rows() {
  local name=$1 result=$2 row got
  shift 2
  for row in "$@"; do
    got=$(awk -F' [|] ' -v row="| $row" '$1 == row { print $6 }' "$WORK/$name/summary.md")
    if [[ $got == "$result"* ]]; then pass "$name: $row ${got%% |}"; else
      fail "$name: $row is '${got:-missing}', expected $result"
    fi
  done
}

rehearse pass
expect_exit 0 "the rehearsal"
expect_rows pass PASS multirank_reference multirank_equality_4 multirank_stall_4 \
  multirank_elastic_checkpoint_4 multirank_elastic_resume_2 multirank_kill_4 multirank_bench_4 \
  multirank_buckets multirank_equality_2 multirank_bench_2
expect_rows pass SKIP multirank_graphed_4 multirank_capture_4 multirank_stall_4_graphed \
  multirank_kill_4_graphed

rehearse corrupt MULTIRANK_MPIRUN_ARGS="-x LD_PRELOAD=$CORRUPT_ALLREDUCE_LIB" \
  GPU_CHECK_ONLY='multirank_(reference|equality_2|bench_2)'
expect_exit 1 "corrupted allreduces"
expect_rows corrupt PASS multirank_reference
expect_rows corrupt FAIL multirank_equality_2 multirank_bench_2

finish
