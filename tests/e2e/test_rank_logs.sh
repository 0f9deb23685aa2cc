#!/usr/bin/env bash
# End to end: who logs. By default only rank 0 writes to stdout; with --log-all-ranks every rank
# writes the same lines, rank 0's as they are and each other rank's prefixed "[rank N] ".
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

args=(--data-dir "$FASHION_DIR" --max-steps 20 --threads 1)

run_mpi 3 "${args[@]}"
expect_exit 0 "3 ranks, rank 0 logging"
expect_once out "# final test_acc" "rank 0's summary"
if grep -q '^\[rank ' "$WORK/out"; then
  fail "lines of other ranks without --log-all-ranks: $(grep -m1 '^\[rank ' "$WORK/out")"
else pass "no line of another rank"; fi
cp "$WORK/out" "$WORK/rank0_only"

run_mpi 3 "${args[@]}" --log-all-ranks
expect_exit 0 "3 ranks with --log-all-ranks"
for rank in 1 2; do
  expect_once out "[rank $rank] # final test_acc" "rank $rank's summary, tagged"
done
count=$(grep -c '^# final test_acc' "$WORK/out" || true)
if [[ $count -eq 1 ]]; then pass "rank 0's summary, untagged"; else
  fail "rank 0's summary appears $count times untagged, expected once"
fi
grep -q '^\[rank 0\]' "$WORK/out" && fail "rank 0's lines are tagged"
# Every rank logs what rank 0 logs: as many lines per rank as rank 0 wrote alone.
expected=$(wc -l <"$WORK/rank0_only")
for rank in 0 1 2; do
  if [[ $rank -eq 0 ]]; then
    count=$(grep -vc '^\[rank ' "$WORK/out" || true)
  else count=$(grep -c "^\[rank $rank\] " "$WORK/out" || true); fi
  if [[ $count -eq $expected ]]; then pass "rank $rank: $count lines"; else
    fail "rank $rank wrote $count lines, expected $expected as rank 0 alone"
  fi
done
others=$(grep '^\[rank ' "$WORK/out" | grep -vc '^\[rank [12]\] ' || true)
[[ $others -eq 0 ]] || fail "$others lines tagged with a rank other than 1 and 2"

finish
