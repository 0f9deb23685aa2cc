#!/usr/bin/env bash
# tests/gpu/test_deps_only.sh — the part of tests/gpu/run.sh that needs no GPU, run where CI can:
# `--deps-only` with this build's LibTorch (a CPU one is accepted there)
#   - finds every dependency on this system: exit 0, each group found, `mpirun -np 2` started;
#   - told to take every dependency from an empty deps/debs: exit 2, naming each missing group
#     and how to bring the packages;
#   - given Debian 12's packages (scripts/pack_debian_deps.sh, which downloads them): unpacks them
#     into GPU_CHECK_DEPS_ROOT, finds each group there, and starts 2 processes with the unpacked
#     Open MPI, as on a GPU machine without them;
#   - with --out: puts the logs there as one gpu-check.tar.gz (remote machines may bring back only
#     a few files), this run's alone: a report and a log left by an earlier run are gone;
#   - a full run without its data: exit 2 before anything slow, naming each missing file and
#     tests/gpu/prepare.sh;
#   - --plan-only of the multi-rank command: the build's estimate, then every check in the order
#     of what matters most, each with its estimate, those past the deadline marked.
# A GPU session has minutes of device time: this finds a broken dependency step before one does.
# Exits 77 (skipped) where the packages cannot be downloaded; fails under CI.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${TORCH_DIR:?the folder of TorchConfig.cmake of the LibTorch built against}"
export TORCH_DIR GPU_CHECK_BUILD_DIR=$WORK/build-gpu GPU_CHECK_DEPS_ROOT=$WORK/root
GROUPS_FOUND='(Open MPI headers|mpirun|Boost.Program_options|zlib headers|nlohmann-json|protobuf|doctest)'

# deps_only NAME [VAR=VALUE...]: runs `run.sh --deps-only --out WORK/NAME-out` with those settings
# into WORK/NAME.log; sets STATUS.
deps_only() {
  local name=$1
  shift
  STATUS=0
  env "$@" bash "$ROOT/tests/gpu/run.sh" --deps-only --out "$WORK/$name-out" >"$WORK/$name.log" \
    2>&1 || STATUS=$?
}
# expect NAME WHAT PATTERN: WORK/NAME.log has a line matching the extended PATTERN.
expect() {
  if grep -qE "$3" "$WORK/$1.log"; then pass "$1: $2"; else fail "$1: $2: no line matches '$3'"; fi
}
# found_count NAME: how many dependency groups the log reports found.
found_count() { grep -cE "^# $GROUPS_FOUND.* found " "$WORK/$1.log" || true; }

mkdir -p "$WORK/no-debs" "$GPU_CHECK_BUILD_DIR/gpu-check"
# What an earlier run left: neither may come back as this run's.
echo "stale" >"$GPU_CHECK_BUILD_DIR/gpu-check/graph_bench.md"
echo "stale" >"$GPU_CHECK_BUILD_DIR/gpu-check/stale.log"
deps_only system GPU_CHECK_DEBS="$WORK/no-debs"
if ((STATUS == 0)); then pass "system: exit 0"; else fail "system: exit $STATUS, expected 0"; fi
expect system "every group found on the system" "^# doctest +found"
[[ $(found_count system) == 7 ]] || fail "system: $(found_count system) of 7 groups found"
expect system "mpirun started 2 processes" "^# mpirun -np 2 uname -n: 2 "
expect system "it stopped after the dependencies" "^# --deps-only: done"
brought_back=$(cd "$WORK/system-out" && find . -type f | sort | tr '\n' ' ')
[[ $brought_back == "./gpu-check.tar.gz " ]] ||
  fail "system: --out holds '$brought_back', expected the one archive"
archived=$(tar -tzf "$WORK/system-out/gpu-check.tar.gz" | sort | tr '\n' ' ')
[[ $archived == *"gpu-check/machine.log "* && $archived == *"gpu-check/torch.log "* ]] ||
  fail "system: the archive holds '$archived', without this run's machine.log and torch.log"
[[ $archived != *stale* && $archived != *graph_bench.md* ]] ||
  fail "system: the archive holds an earlier run's files: '$archived'"
expect system "where the logs went" "^# logs copied to $WORK/system-out/gpu-check.tar.gz \([0-9]+ KiB\)$"

STATUS=0
env MNIST_DDP_DATA="$WORK/no-data" bash "$ROOT/tests/gpu/run.sh" --out "$WORK/inputs-out" \
  >"$WORK/inputs.log" 2>&1 || STATUS=$?
if ((STATUS == 2)); then pass "no data: exit 2"; else fail "no data: exit $STATUS, expected 2"; fi
expect inputs "each missing file named" "^  - $WORK/no-data/t10k-labels-idx1-ubyte\(\.gz\)$"
expect inputs "the script that makes them" "Make them with tests/gpu/prepare.sh"
! grep -q '^## Machine' "$WORK/inputs.log" || fail "no data: it looked at the machine first"

STATUS=0
env GPU_CHECK_ONLY=multirank GPU_CHECK_DEADLINE=300 bash "$ROOT/tests/gpu/run.sh" --plan-only \
  >"$WORK/plan.log" 2>&1 || STATUS=$?
if ((STATUS == 0)); then pass "plan: exit 0"; else fail "plan: exit $STATUS, expected 0"; fi
expect plan "the build's estimate" "^# dependencies and configure ~60 s; build of mnist_ddp \
allreduce_bench ~[0-9]+ s on [0-9]+ cores"
order=$(sed -n 's/^# plan \(multirank_[a-z_0-9]*\) .*/\1/p' "$WORK/plan.log" | head -6 | paste -sd' ')
[[ $order == "multirank_bench_8 multirank_reference multirank_equality_8 multirank_graphed_8 \
multirank_capture_8 multirank_fallback_8" ]] && pass "plan: the probe, equality, capture first" ||
  fail "plan: the first checks are '$order'"
expect plan "the last check past the deadline" \
  "^# plan multirank_kill_8_graphed +8/1 +~ *[0-9]+ s, done at ~ *[0-9]+ s: past GPU_CHECK_DEADLINE$"

deps_only empty GPU_CHECK_USE_DEBS=1 GPU_CHECK_DEBS="$WORK/no-debs"
if ((STATUS == 2)); then pass "no debs: exit 2"; else fail "no debs: exit $STATUS, expected 2"; fi
expect empty "each missing group named" "^  - protobuf \(protoc, headers, libprotobuf\)"
expect empty "the way to bring the packages" "scripts/pack_debian_deps.sh deps/debs"
expect empty "the apt-get alternative" "apt-get install libopenmpi-dev"

if ! bash "$ROOT/scripts/pack_debian_deps.sh" "$WORK/debs" >"$WORK/pack.log" 2>&1; then
  tail -5 "$WORK/pack.log"
  if [[ -n ${CI:-} ]]; then
    fail "scripts/pack_debian_deps.sh could not download the packages"
    finish gpu_deps_only
  fi
  echo "skipped: Debian 12's packages cannot be downloaded here"
  exit 77
fi
deps_only debs GPU_CHECK_USE_DEBS=1 GPU_CHECK_DEBS="$WORK/debs"
if ((STATUS == 0)); then pass "debs: exit 0"; else fail "debs: exit $STATUS, expected 0"; fi
[[ $(grep -cE "^# $GROUPS_FOUND.* found .*$WORK/root/" "$WORK/debs.log") == 7 ]] ||
  fail "debs: not every group found in $WORK/root"
expect debs "mpirun from the unpacked packages" "^# mpirun +$WORK/root/usr/bin/mpirun.openmpi$"
expect debs "the unpacked Open MPI started 2 processes" "^# mpirun -np 2 uname -n: 2 "
expect debs "Open MPI relocated" "OPAL_PREFIX=$WORK/root/usr$"
if ((FAILURES > 0)); then cat "$WORK"/*.log >&2; fi

finish gpu_deps_only
