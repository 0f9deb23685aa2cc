#!/usr/bin/env bash
# tests/tensorboard/test_read_events.sh — the event file tensorboard_sample writes, read by the
# independent Python reader (read_events.py): exactly the expected scalars; a single flipped
# byte anywhere in the file, a cut-off end, and an empty file are each rejected.
# Needs TENSORBOARD_SAMPLE (the sample program), set by ctest.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"

: "${TENSORBOARD_SAMPLE:?set TENSORBOARD_SAMPLE to the tensorboard_sample executable}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
READER=$HERE/read_events.py

# A folder that does not exist yet, two levels deep: the writer creates it.
"$TENSORBOARD_SAMPLE" "$WORK/runs/sample"
files=("$WORK"/runs/sample/events.out.tfevents.*)
if [[ ${#files[@]} -eq 1 && -f ${files[0]} ]]; then pass "one event file: ${files[0]##*/}"; else
  fail "expected one events.out.tfevents.* file, found: ${files[*]}"
fi
EVENTS=${files[0]}

cat >"$WORK/expected" <<LINES
train/loss 0 2.5
train/loss 1 0
train/loss 2 -1.75
train/loss 3 nan
test/accuracy 1 0.1
train/lr 5000000000 0.001
long/$(printf 'x%.0s' {1..195}) 4 1e+06
LINES
if python3 "$READER" "$WORK/runs/sample" >"$WORK/out" 2>"$WORK/err" &&
  diff -u "$WORK/expected" "$WORK/out" >"$WORK/diff"; then
  pass "the reader prints exactly the scalars written"
else
  fail "reader output differs from the scalars written"
  cat "$WORK/err" "$WORK/diff" >&2
fi

# One flipped byte, on the command line: exit 1 with a message naming the file.
cp "$EVENTS" "$WORK/flipped"
python3 - "$WORK/flipped" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0x01
open(path, "wb").write(data)
PY
status=0
python3 "$READER" "$WORK/flipped" >/dev/null 2>"$WORK/err" || status=$?
if [[ $status -eq 1 ]] && grep -q "flipped: record .* CRC mismatch" "$WORK/err"; then
  pass "a flipped byte: exit 1 ($(cat "$WORK/err"))"
else
  fail "a flipped byte: exit $status, expected 1 with a CRC message"
  cat "$WORK/err" >&2
fi

# Every byte flipped in turn (one bit, then all eight), the end cut off, and an empty file: each
# must be rejected. In one Python process, as a program per byte would take minutes.
status=0
python3 - "$HERE" "$EVENTS" <<'PY' || status=$?
import sys
sys.path.insert(0, sys.argv[1])
import read_events

data = open(sys.argv[2], "rb").read()
missed = []
for mask in (0x01, 0xFF):
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= mask
        try:
            read_events.read_file_bytes(bytes(damaged))
            missed.append((at, mask))
        except read_events.EventFileError:
            pass
for name, damaged in (("cut-off end", data[:-1]), ("empty file", b"")):
    try:
        read_events.read_file_bytes(damaged)
        missed.append(name)
    except read_events.EventFileError:
        pass
if missed:
    sys.exit(f"not rejected: {missed[:10]} ({len(missed)} in all)")
print(f"ok: all {2 * len(data)} single-byte flips, the cut-off end and the empty file rejected")
PY
((status == 0)) || fail "damage not detected"

finish
