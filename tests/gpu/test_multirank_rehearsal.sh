#!/usr/bin/env bash
# End to end: tests/gpu/multirank.sh rehearsed on the CPU with MPI, 4 and 2 ranks of 60 steps:
# the time plan is printed and every check reaches its verdict and passes, the graphed ones on
# the CPU's stand-in for a replay; the verdicts that run.sh's single-rank checks use read the
# rehearsal's files too. Then, with a PMPI shim that corrupts one element of every float
# allreduce on the last rank (tests/e2e/corrupt_allreduce.cpp) preloaded into the runs of several
# ranks, the equality and benchmark checks at 2 ranks must fail while the 1-rank reference
# passes; and under a deadline that leaves no time, every check is named as not run.
# Needs MNIST_DDP_BIN, ALLREDUCE_BENCH_BIN and CORRUPT_ALLREDUCE_LIB, set by ctest.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/e2e_lib.sh"
: "${ALLREDUCE_BENCH_BIN:?set ALLREDUCE_BENCH_BIN to the allreduce_bench executable}"
: "${CORRUPT_ALLREDUCE_LIB:?set CORRUPT_ALLREDUCE_LIB to the corrupt_allreduce library}"
VERDICTS=$MNIST_DDP_SOURCE_DIR/tests/gpu/verdicts.py

# rehearse NAME [VARIABLE=VALUE...]: the driver with MPI on the CPU; sets STATUS, its output in
# $WORK/out and err, its summary in $WORK/NAME/summary.md and its files in $WORK/NAME-build.
rehearse() {
  local name=$1
  shift
  STATUS=0
  env MNIST_DDP_DATA="$FASHION_DIR" MULTIRANK_BACKEND=mpi MULTIRANK_DEVICE=cpu \
    MULTIRANK_RANKS="4 2" MULTIRANK_STEPS=60 GPU_CHECK_BUILD_DIR="$WORK/$name-build" "$@" \
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

# expect_text FILE TEXT WHAT: FILE holds TEXT.
expect_text() {
  if grep -qF -- "$2" "$1"; then pass "$3"; else fail "$3: no '$2' in $1"; fi
}

# expect_verdict WHAT ARGUMENT...: verdicts.py passes on the rehearsal's files.
expect_verdict() {
  local what=$1 why
  shift
  if why=$(python3 "$VERDICTS" "$@"); then pass "$what"; else fail "$what: $why"; fi
}

ALL=(multirank_bench_4 multirank_reference multirank_equality_4 multirank_graphed_4
  multirank_capture_4 multirank_fallback_4 multirank_equality_2 multirank_bench_2
  multirank_stall_4 multirank_kill_4 multirank_elastic_checkpoint_4 multirank_elastic_resume_2
  multirank_buckets multirank_stall_4_graphed multirank_kill_4_graphed)

rehearse pass
expect_exit 0 "the rehearsal"
expect_rows pass PASS "${ALL[@]}"
for row in "${ALL[@]}"; do
  grep -q "^# plan $row " "$WORK/out" || fail "the time plan has no line for $row"
done
expect_text "$WORK/out" '# speed probe: multirank_bench_4 took' "the speed probe's rescaling"
logs=$WORK/pass-build/multirank-check
expect_text "$logs/multirank_graphed_4.log" '# cuda graph: on (rehearsed on the CPU' \
  "the graphed run's banner"
expect_verdict "the graphed rehearsal's phases and log windows (device-rates)" \
  device-rates "$logs/multirank_graphed_4.jsonl"
expect_verdict "the equality run's bucket allreduces (allreduces)" \
  allreduces "$logs/multirank_equality_4.timeline.json"
# What the runs start with: NCCL's INIT and NET lines kept for the first run of the most ranks,
# its warnings for all; no core files; ranks sharing a device without NVLS or multi-node NVLink.
head -1 "$logs/multirank_bench_4.log" | grep -q \
  "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT\\\\,NET NCCL_DEBUG_FILE=$logs/nccl-info.%h.%p.log" &&
  pass "the speed probe keeps NCCL's INIT and NET lines" ||
  fail "the speed probe's command: $(head -1 "$logs/multirank_bench_4.log")"
settings=$(cd "$WORK" && LOG_DIR=$WORK/harness bash -c 'source "$1"; echo "$NCCL_DEBUG $(ulimit -c)"' \
  harness "$MNIST_DDP_SOURCE_DIR/tests/gpu/check_harness.sh")
[[ $settings == "WARN 0" ]] && pass "the harness: NCCL_DEBUG=WARN, no core files" ||
  fail "the harness sets '$settings', not 'WARN 0'"
ranks=$(OMPI_COMM_WORLD_RANK=3 bash "$MNIST_DDP_SOURCE_DIR/tests/gpu/own_nccl_host.sh" env |
  grep -E '^NCCL_(HOSTID|MNNVL_ENABLE|NVLS_ENABLE)=' | sort | paste -sd' ')
[[ $ranks == "NCCL_HOSTID=own-nccl-host-3 NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0" ]] &&
  pass "a rank sharing the device: $ranks" || fail "own_nccl_host.sh sets '$ranks'"
figures=$(python3 "$VERDICTS" floor "$logs/multirank_reference.jsonl" 0.3)
[[ $figures =~ ^[0-9]+\ 0\.[0-9]{4}\ [0-9.]+$ ]] && pass "the accuracy floor's figures: $figures" ||
  fail "the accuracy floor's figures are '$figures'"

rehearse corrupt MULTIRANK_MPIRUN_ARGS="-x LD_PRELOAD=$CORRUPT_ALLREDUCE_LIB" \
  GPU_CHECK_ONLY='multirank_(reference|equality_2|bench_2)'
expect_exit 1 "corrupted allreduces"
expect_rows corrupt PASS multirank_reference
expect_rows corrupt FAIL multirank_equality_2 multirank_bench_2

# The deadline leaves less than a run's minimum: nothing runs, each check is named.
rehearse late GPU_CHECK_DEADLINE=30 GPU_CHECK_ONLY='multirank_(bench_4|reference|stall_4)$'
expect_exit 1 "a deadline that leaves no time"
expect_rows late "SKIP: not run, needs" multirank_bench_4 multirank_reference multirank_stall_4
expect_text "$WORK/late/summary.md" \
  '3 check(s) not run, for lack of time: multirank_bench_4 multirank_reference multirank_stall_4.' \
  "the summary's line of what did not run"
expect_text "$WORK/late/summary.md" "To run them: GPU_CHECK_ONLY='^(multirank_reference|\
multirank_equality_4|multirank_graphed_4|multirank_bench_4|multirank_stall_4)\$'" \
  "the setting that runs them, with the runs their verdicts read"
expect_text "$WORK/out" 'done at ~' "the time plan under a deadline"
expect_text "$WORK/out" ': past GPU_CHECK_DEADLINE' "the plan marks what the deadline cuts"

finish
