#!/usr/bin/env bash
# End to end: allreduce_bench under mpirun with 2 and 3 ranks prints nccl-tests' table (the
# columns, the units row, one row per size of the sweep, busbw = algbw * 2(n-1)/n, the average
# of the busbw column) and exits 0 with no wrong element; when the transport delivers wrong data
# it counts every wrong element, says FAILED and exits 1. The wrong data comes from outside the
# program: a PMPI shim (tests/e2e/corrupt_allreduce.cpp) preloaded into the ranks. A bad --backend
# exits 2; without a GPU, auto runs MPI and nccl is refused on every rank within seconds.
# Needs ALLREDUCE_BENCH_BIN and CORRUPT_ALLREDUCE_LIB, set by ctest.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
: "${ALLREDUCE_BENCH_BIN:?set ALLREDUCE_BENCH_BIN to the allreduce_bench executable}"
: "${CORRUPT_ALLREDUCE_LIB:?set CORRUPT_ALLREDUCE_LIB to the corrupt_allreduce library}"

# 8 B to 32 KiB by 8: five sizes; 3 timed allreduces per size, so 3 wrong elements per size when
# each allreduce delivers one.
sweep=(--min-bytes 8 --max-bytes 32768 --factor 8 --iters 3 --warmup 1)

# bench RANKS BACKEND [MPIRUN_OPTIONS...]: runs the sweep over --backend BACKEND; sets STATUS,
# output in $WORK/out and err, each rank's exit code in $WORK/exit.RANK.
bench() {
  local ranks=$1 backend=$2
  shift 2
  STATUS=0
  rm -f "$WORK"/exit.*
  # shellcheck disable=SC2016  # expanded by each rank's shell
  timeout 120 mpirun -np "$ranks" --oversubscribe "$@" bash -c \
    '"$@"; code=$?; echo $code >"$0/exit.$OMPI_COMM_WORLD_RANK"; exit $code' "$WORK" \
    "$ALLREDUCE_BENCH_BIN" "${sweep[@]}" --backend "$backend" >"$WORK/out" 2>"$WORK/err" ||
    STATUS=$?
}

# check_table RANKS WRONG_PER_SIZE: the table in $WORK/out, with this many wrong elements a size.
check_table() {
  python3 - "$WORK/out" "$1" "$2" <<'PY' || fail "the table of $1 ranks (wrong per size: $2)"
import sys
lines = open(sys.argv[1]).read().splitlines()
ranks, wrong = int(sys.argv[2]), int(sys.argv[3])
assert lines[0] == (f"# allreduce_bench: backend mpi, {ranks} ranks on 1 node, float32 sum, "
                    "in place"), lines[0]
assert lines[1].split() == ["#", "size", "count", "type", "redop", "time", "algbw", "busbw",
                            "#wrong"], lines[1]
assert lines[2].split() == ["#", "(B)", "(elements)", "(us)", "(GB/s)", "(GB/s)"], lines[2]
rows = [line.split() for line in lines[3:] if not line.startswith("#")]
sizes = [8, 64, 512, 4096, 32768]
assert [int(r[0]) for r in rows] == sizes, rows
factor = 2 * (ranks - 1) / ranks
for r in rows:
    size, count, dtype, redop, time, algbw, busbw, bad = r
    assert int(count) * 4 == int(size) and dtype == "float" and redop == "sum", r
    assert float(time) > 0 and float(algbw) >= 0, r
    # algbw = size / time, from the time before it was rounded to 2 decimals; algbw and busbw
    # are rounded to 3.
    t = float(time)
    assert int(size) / (t + 0.005) / 1e3 - 0.0005 - 1e-9 <= float(algbw), r
    assert t <= 0.005 or float(algbw) <= int(size) / (t - 0.005) / 1e3 + 0.0005 + 1e-9, r
    assert abs(float(busbw) - float(algbw) * factor) <= 0.0005 * (factor + 1) + 1e-9, r
    assert int(bad) == wrong, r
tail = lines[3 + len(rows):]
total = wrong * len(sizes)
verdict = "OK" if total == 0 else "FAILED"
assert tail[0] == f"# Out of bounds values : {total} {verdict}", tail
label, value = tail[1].split(":")
assert label == "# Avg bus bandwidth    " and value.endswith(" GB/s"), tail[1]
mean = sum(float(r[6]) for r in rows) / len(rows)
assert abs(float(value.split()[0]) - mean) <= 0.0006, (value, mean)
assert len(tail) == 2, tail
print(f"ok: {ranks} ranks: the columns, units, {len(sizes)} sizes, busbw and average; "
      f"{total} wrong, {verdict}")
PY
}

for ranks in 2 3; do
  bench "$ranks" mpi
  expect_exit 0 "$ranks ranks"
  check_table "$ranks" 0
done
bench 2 gloo
expect_exit 2 "--backend gloo"
expect_once err "--backend must be one of auto, nccl, mpi (got gloo)" "--backend gloo"

if ! nvidia-smi -L >/dev/null 2>&1; then
  # As mnist_ddp's device plan decides: no rank has a GPU, so auto is MPI (the header says so).
  bench 2 auto
  expect_exit 0 "--backend auto without a GPU"
  check_table 2 0
  start=$SECONDS
  bench 2 nccl
  took=$((SECONDS - start))
  expect_exit 2 "--backend nccl without a GPU"
  codes=$(cat "$WORK"/exit.* | tr '\n' ' ')
  if [[ $codes == "2 2 " && $took -le 20 ]]; then
    pass "--backend nccl without a GPU: each rank exits 2, after $took s"
  else
    fail "--backend nccl without a GPU: the ranks exit '$codes' after $took s, not 2 each"
  fi
  expect_once err "--backend nccl needs a CUDA device: ranks 0, 1" "--backend nccl without a GPU"
fi

# Wrong data: the shim makes the last rank's result wrong in one element per allreduce.
for ranks in 2 3; do
  bench "$ranks" mpi -x LD_PRELOAD="$CORRUPT_ALLREDUCE_LIB"
  expect_exit 1 "$ranks ranks with a wrong element in every result"
  check_table "$ranks" 3
done

finish
