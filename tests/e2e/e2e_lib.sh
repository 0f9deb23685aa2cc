# tests/e2e/e2e_lib.sh — shared helpers of the end-to-end tests; source it.
# shellcheck shell=bash
# Needs MNIST_DDP_BIN (the program) and MNIST_DDP_SOURCE_DIR (the repository), set by ctest.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"

: "${MNIST_DDP_BIN:?set MNIST_DDP_BIN to the mnist_ddp executable}"
: "${MNIST_DDP_SOURCE_DIR:?set MNIST_DDP_SOURCE_DIR to the repository}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2034  # for the scripts that source this file
FASHION_DIR=/usr/share/datasets/fashion-mnist

# mount_tmpfs DIR SIZE: a tmpfs of SIZE at DIR (made), unmounted when the test ends. Where
# mounting is refused (no root) the test is skipped (77), which CI counts as a failure
# (scripts/test.sh).
mount_tmpfs() {
  mkdir -p "$1"
  if ! mount -t tmpfs -o "size=$2" tmpfs "$1" 2>"$WORK/mount.err"; then
    echo "SKIP: cannot mount a tmpfs: $(head -1 "$WORK/mount.err")"
    exit 77
  fi
  # Unmounted before check_lib.sh's cleanup removes WORK; the paths are fixed now.
  # shellcheck disable=SC2064
  trap "umount '$1' 2>/dev/null || true; rm -rf '$WORK'" EXIT
}

# run_mpi RANKS ARGS...: runs the program under mpirun with a time limit; stdout and stderr go
# to $WORK/out and $WORK/err; sets STATUS to the exit code.
run_mpi() {
  local ranks=$1
  shift
  STATUS=0
  timeout 300 mpirun -np "$ranks" --oversubscribe "$MNIST_DDP_BIN" "$@" \
    >"$WORK/out" 2>"$WORK/err" || STATUS=$?
}

# expect_no_process_left WHAT: none of the program's processes that this test started is still
# running. Those are the ones whose command line names $WORK, as each of its runs writes there,
# so a run of another test, or a user's, at the same time does not count.
expect_no_process_left() {
  local left
  sleep 1 # the last rank's exit, after mpirun's
  left=$(pgrep -af -- "$MNIST_DDP_BIN .*$WORK/" || true)
  [[ -z $left ]] && pass "$1: no process left behind" || fail "$1: processes left running: $left"
}

# stamp: each line of stdin, after the time it was read (seconds since the epoch, with a point in
# any locale). Bash's own clock: a `date` per line would fall behind a fast writer.
stamp() {
  local line
  while IFS= read -r line; do printf '%s %s\n' "${EPOCHREALTIME/[!0-9]/.}" "$line"; done
}

# usr1_once_logged LAUNCHER PATTERN: once a line of $WORK/out matches PATTERN (grep), sends SIGUSR1
# to the launcher in the background (mpirun forwards it to every rank), waits for it and sets
# STATUS to its exit code. A run that ends before the line fails the caller's exit code check.
usr1_once_logged() {
  local launcher=$1 pattern=$2
  for _ in $(seq 6000); do
    grep -q -- "$pattern" "$WORK/out" 2>/dev/null && break
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.02
  done
  kill -USR1 "$launcher" 2>/dev/null || true
  STATUS=0
  wait "$launcher" || STATUS=$?
}

# expect_exit CODE WHAT: checks STATUS.
expect_exit() {
  if [[ $STATUS -eq $1 ]]; then pass "$2: exit $1"; else
    fail "$2: exit $STATUS, expected $1"
    sed 's/^/  | /' "$WORK/err" "$WORK/out" | tail -20 >&2
  fi
}

# expect_once FILE TEXT WHAT: TEXT appears on exactly one line of $WORK/FILE.
expect_once() {
  local count
  count=$(grep -cF -- "$2" "$WORK/$1" || true)
  if [[ $count -eq 1 ]]; then pass "$3: '$2' once in $1"; else
    fail "$3: '$2' appears $count times in $1, expected once"
    sed 's/^/  | /' "$WORK/$1" | tail -20 >&2
  fi
}

# write_idx FILE MAGIC DIMS... : writes an IDX file with the given header and a payload of
# product(DIMS) bytes (value i % 256 for images, i % 10 for 1-d label files).
write_idx() {
  python3 - "$@" <<'PY'
import struct, sys
path, magic, dims = sys.argv[1], int(sys.argv[2], 0), [int(d) for d in sys.argv[3:]]
count = 1
for d in dims:
    count *= d
payload = bytes(i % 10 for i in range(count)) if len(dims) == 1 else bytes(i % 256 for i in range(count))
with open(path, "wb") as f:
    f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload)
PY
}

# write_dataset DIR TRAIN TEST: a valid tiny MNIST folder.
write_dataset() {
  mkdir -p "$1"
  write_idx "$1/train-images-idx3-ubyte" 0x803 "$2" 28 28
  write_idx "$1/train-labels-idx1-ubyte" 0x801 "$2"
  write_idx "$1/t10k-images-idx3-ubyte" 0x803 "$3" 28 28
  write_idx "$1/t10k-labels-idx1-ubyte" 0x801 "$3"
}
