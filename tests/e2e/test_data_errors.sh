#!/usr/bin/env bash
# Bad data ends every rank with exit code 3 and a message that names the file and the problem.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"

GOOD=$WORK/good
write_dataset "$GOOD" 200 50

# check_data_error MESSAGE DIR: 2 ranks on DIR, exit 3, MESSAGE printed once.
check_data_error() {
  run_mpi 2 --data-dir "$2" --epochs 1
  expect_exit 3 "$1"
  expect_once err "$1" "data error"
}

# variant NAME: a copy of the good folder to break.
variant() {
  cp -r "$GOOD" "$WORK/$1"
  echo "$WORK/$1"
}

check_data_error "data folder '$WORK/none' does not exist" "$WORK/none"

dir=$(variant missing) && rm "$dir/t10k-labels-idx1-ubyte"
check_data_error "neither t10k-labels-idx1-ubyte nor t10k-labels-idx1-ubyte.gz" "$dir"

dir=$(variant magic) && write_idx "$dir/train-images-idx3-ubyte" 0x12340803 200 28 28
check_data_error "train-images-idx3-ubyte: not an IDX file: bad magic" "$dir"

dir=$(variant truncated) && truncate -s 5000 "$dir/train-images-idx3-ubyte"
check_data_error "train-images-idx3-ubyte: truncated" "$dir"

dir=$(variant empty) && : >"$dir/train-labels-idx1-ubyte"
check_data_error "train-labels-idx1-ubyte: too short for an IDX header" "$dir"

dir=$(variant count) && write_idx "$dir/train-labels-idx1-ubyte" 0x801 199
check_data_error "holds 200 images but" "$dir"

dir=$(variant dims) && write_idx "$dir/train-images-idx3-ubyte" 0x803 200 32 32
check_data_error "expected N x 28 x 28 images, the header says 200x32x32" "$dir"

dir=$(variant label) && python3 - "$dir/train-labels-idx1-ubyte" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[8 + 17] = 10  # label of image 17
open(sys.argv[1], "wb").write(data)
PY
check_data_error "label 10 at index 17 is out of range" "$dir"

dir=$(variant gzip) && gzip "$dir/t10k-images-idx3-ubyte" &&
  truncate -s 100 "$dir/t10k-images-idx3-ubyte.gz"
check_data_error "t10k-images-idx3-ubyte.gz: corrupt gzip data" "$dir"

# run_unprivileged RANKS ARGS...: run_mpi, but as the user nobody when this script runs as root
# (root reads files whatever their mode). nobody gets its own HOME and TMPDIR for Open MPI.
run_unprivileged() {
  if [[ $(id -u) -ne 0 ]]; then
    run_mpi "$@"
    return
  fi
  local ranks=$1
  shift
  chmod 755 "$WORK"  # mktemp -d made it 0700
  mkdir -p "$WORK/nobody" && chown nobody "$WORK/nobody"
  STATUS=0
  timeout 300 setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
    env HOME="$WORK/nobody" TMPDIR="$WORK/nobody" \
    mpirun -np "$ranks" --oversubscribe "$MNIST_DDP_BIN" "$@" >"$WORK/out" 2>"$WORK/err" ||
    STATUS=$?
}

dir=$(variant unreadable) && chmod 000 "$dir/train-images-idx3-ubyte"
run_unprivileged 2 --data-dir "$dir" --epochs 1
expect_exit 3 "train-images-idx3-ubyte without read permission"
expect_once err "train-images-idx3-ubyte: cannot open (Permission denied)" "data error"

# Bad data on one rank only (rank 1 sees another folder): every rank still exits 3.
STATUS=0
timeout 300 mpirun --oversubscribe -np 1 "$MNIST_DDP_BIN" --data-dir "$GOOD" : \
  -np 1 "$MNIST_DDP_BIN" --data-dir "$WORK/magic" >"$WORK/out" 2>"$WORK/err" || STATUS=$?
expect_exit 3 "bad data on rank 1 only"
expect_once err "[rank 1@" "the failing rank names itself"

# Rank 1 sees an intact data set of the same size that differs in one pixel: refused at once,
# before the ranks train on different data.
dir=$(variant pixel) && printf '\xff' | dd of="$dir/train-images-idx3-ubyte" bs=1 seek=1000 \
  conv=notrunc status=none
STATUS=0
timeout 300 mpirun --oversubscribe -np 1 "$MNIST_DDP_BIN" --data-dir "$GOOD" : \
  -np 1 "$MNIST_DDP_BIN" --data-dir "$dir" >"$WORK/out" 2>"$WORK/err" || STATUS=$?
expect_exit 3 "another data set on rank 1"
expect_once err "[rank 1@" "the differing rank names itself"
expect_once err "$dir holds training set 200 images (CRC-32 " "another data set on rank 1"

# More ranks than training images.
write_dataset "$WORK/tiny" 2 2
run_mpi 3 --data-dir "$WORK/tiny"
expect_exit 2 "3 ranks, 2 training images"
expect_once err "more ranks (3) than training images (2)" "3 ranks, 2 training images"

# The good folder trains (so the failures above are about the damage, not the set-up).
run_mpi 2 --data-dir "$GOOD" --epochs 1
expect_exit 0 "the undamaged tiny data set"
finish
