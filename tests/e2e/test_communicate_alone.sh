#!/usr/bin/env bash
# End to end: --communicate-alone. One rank that allreduces its gradient buckets and broadcasts
# its parameters as each of N ranks does ends with the same model, bit for bit, as the plain
# 1-rank run, and its timeline shows the allreduces (the plain run's shows none).
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

write_dataset "$WORK/data" 600 100
args=(--data-dir "$WORK/data" --model cnn --epochs 1 --batch-size 32 --bucket-mb 0.01
  --progress off)

run_mpi 1 "${args[@]}" --export-model "$WORK/plain.pt" --timeline "$WORK/plain.json"
expect_exit 0 "1 rank"
run_mpi 1 "${args[@]}" --export-model "$WORK/alone.pt" --timeline "$WORK/alone.json" \
  --communicate-alone
expect_exit 0 "1 rank with --communicate-alone"

if cmp -s "$WORK/plain.pt" "$WORK/alone.pt"; then
  pass "the exported models are identical"
else
  fail "--communicate-alone changed the model: $(cmp "$WORK/plain.pt" "$WORK/alone.pt" 2>&1)"
fi

# allreduce_spans FILE: the number of bucket allreduces in a timeline.
allreduce_spans() {
  python3 -c 'import json, sys
print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"]
          if e.get("ph") == "X" and e.get("name") == "allreduce"))' "$1"
}
# 600 images / 32 = 19 steps; --bucket-mb 0.01 puts the cnn's parameters in several buckets.
plain=$(allreduce_spans "$WORK/plain.json")
alone=$(allreduce_spans "$WORK/alone.json")
if [[ $plain == 0 && $alone -ge $((19 * 2)) ]]; then
  pass "allreduces in the timeline: $plain without, $alone with --communicate-alone"
else
  fail "allreduces in the timeline: $plain without (expected 0), $alone with (expected >= 38)"
fi
finish
