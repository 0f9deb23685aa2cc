#!/usr/bin/env bash
# tests/layering/test_check_layers.sh — the layering check passes on lib/ as it is, and fails,
# naming the file and the include, on copies of lib/ with a planted violation of each kind: an
# include from a higher layer, one between folders of the same layer, two folders that include
# each other, a transport's header (MPI, NCCL, CUDA) in common/, and a folder in no layer.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHECK=$ROOT/scripts/check_layers.py

passes_as_is "lib/ keeps its layers" "lib/ breaks its layers" python3 "$CHECK" "$ROOT/lib"

# expect_violation NAME EXPECTED_TEXT FILE:INCLUDE...: plants each include at the top of FILE in
# a fresh copy of lib/, then expects exit 1 with EXPECTED_TEXT in the output.
expect_violation() {
  local name=$1 expected=$2
  shift 2
  rm -rf "${WORK:?}/lib"
  cp -r "$ROOT/lib" "$WORK/lib"
  local plant file
  for plant in "$@"; do
    file=${plant%%:*}
    sed -i "1i #include \"${plant#*:}\"" "$WORK/lib/$file"
  done
  local status=0
  python3 "$CHECK" "$WORK/lib" >"$WORK/out" 2>&1 || status=$?
  if [[ $status -eq 1 ]] && grep -qF -- "$expected" "$WORK/out"; then
    pass "$name: exit 1, '$expected'"
  else
    fail "$name: exit $status, expected 1 and '$expected' in:"
    cat "$WORK/out" >&2
  fi
}

expect_violation "higher layer" \
  'lib/data/idx_file.cpp:1: includes "report/banner.hpp", from report/, a higher layer than data/' \
  data/idx_file.cpp:report/banner.hpp
expect_violation "same layer" \
  'lib/model/cnn_net.cpp:1: includes "data/batch_maker.hpp", from data/, a folder of the same layer' \
  model/cnn_net.cpp:data/batch_maker.hpp
expect_violation "folders that include each other" \
  'lib/ddp/gradient_reducer.hpp:1: includes "train/trainer.hpp", from train/, a higher layer' \
  ddp/gradient_reducer.hpp:train/trainer.hpp train/trainer.cpp:ddp/model_replicas.hpp
rm -rf "${WORK:?}/lib" && cp -r "$ROOT/lib" "$WORK/lib" && sed -i '1i #include <nccl.h>' \
  "$WORK/lib/common/log.cpp"
status=0
python3 "$CHECK" "$WORK/lib" >"$WORK/out" 2>&1 || status=$?
if [[ $status -eq 1 ]] &&
  grep -qF "lib/common/log.cpp:1: includes <nccl.h>, a transport's header, in common/" "$WORK/out"
then
  pass "a transport's header in common/: exit 1"
else
  fail "a transport's header in common/: exit $status"
  cat "$WORK/out" >&2
fi
rm -rf "${WORK:?}/lib" && cp -r "$ROOT/lib" "$WORK/lib" && mkdir "$WORK/lib/extras"
status=0
python3 "$CHECK" "$WORK/lib" >"$WORK/out" 2>&1 || status=$?
if [[ $status -eq 1 ]] && grep -qF "lib/extras/ is in no layer" "$WORK/out"; then
  pass "a folder in no layer: exit 1"
else
  fail "a folder in no layer: exit $status"
  cat "$WORK/out" >&2
fi

finish test_check_layers
