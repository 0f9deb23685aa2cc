# tests/gpu/check_harness.sh — provides: what tests/gpu/run.sh and tests/gpu/multirank.sh share:
# a fresh LOG_DIR, mpirun allowed as root, no core files, NCCL's warnings, say, hr, die, py,
# verdict, require_seconds, within_deadline, copy_out, check (one run under the time limits, a
# summary row; or, while PLANNING=1, a line of the time plan), add_row, skip_row, not_run_line and
# summary_table. Source it once the caller has read its settings: SCRIPT_START, LOG_DIR, OUT_DIR,
# RUN_TIMEOUT, DEADLINE, ONLY and PYTHON (and the MNIST_DDP_* it needs); RUNS_START and
# RUN_BUDGET (when the runs' time budget starts, and its seconds) before the first check.
# shellcheck shell=bash

# mnist_ddp reads MNIST_DDP_<OPTION> variables as options: the runs below get the defaults.
for name in $(compgen -e); do
  if [[ $name == MNIST_DDP_* ]]; then unset "$name"; fi
done

# Everything in it is this run's: a report left by an earlier run must not reach --out as new.
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"
ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Containers often forbid the cross-memory attach Open MPI's shared-memory transport uses for
# large messages; copying through the shared segment works everywhere.
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
# An aborted rank (the kill checks, a crash) would dump a core of its whole CUDA context.
ulimit -c 0
# A hang or a refused set-up then says what NCCL saw; where NCCL is not used, nothing reads it.
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

say() { printf '# %s\n' "$*"; }
hr() { printf '\n## %s\n' "$*"; }
die() {
  local code=$1
  shift
  echo "gpu check: error: $*" >&2
  exit "$code"
}
# require_seconds SETTING...: the time settings are whole seconds: anything else would reach
# bash's arithmetic unchecked.
require_seconds() {
  local setting
  for setting in "$@"; do
    [[ ${!setting:-0} =~ ^[0-9]+$ ]] || die 2 "$setting must be a whole number of seconds," \
      "not '${!setting}'"
  done
}
# python3 with the caller's library path: the unpacked libraries are not for it.
py() { LD_LIBRARY_PATH=$ORIG_LD_LIBRARY_PATH "$PYTHON" "$@"; }
# verdict NAME FILE...: tests/gpu/verdicts.py's reading of a run's files; prints why it failed.
verdict() { py "$(dirname "${BASH_SOURCE[0]}")/verdicts.py" "$@"; }
# The smaller of LIMIT and the seconds left before GPU_CHECK_DEADLINE, less RESERVE (for what
# comes after: the summary and the copy of the logs).
within_deadline() {
  local limit=$1 reserve=$2 left
  ((DEADLINE > 0)) || { echo "$limit"; return; }
  left=$((DEADLINE - (SECONDS - SCRIPT_START) - reserve))
  echo $((left < limit ? left : limit))
}

# copy_out: --out gets the two reports as they are (summary.md, graph_bench.md) and the whole of
# LOG_DIR (logs, metrics, exported models, checkpoints) as one gpu-check.tar.gz: three files
# however many runs there were, for remote machines whose output folder comes back with a limit
# on the number of files. The archive is written under another name and renamed, so that a kill
# during the copy leaves the previous one whole.
copy_out() {
  [[ -n $OUT_DIR ]] || return 0
  mkdir -p "$OUT_DIR"
  local report
  for report in summary.md graph_bench.md; do
    [[ ! -f $LOG_DIR/$report ]] || cp "$LOG_DIR/$report" "$OUT_DIR/$report"
  done
  if tar -C "$(dirname "$LOG_DIR")" -czf "$OUT_DIR/gpu-check.tar.gz.part" \
       "$(basename "$LOG_DIR")" 2>/dev/null; then
    mv "$OUT_DIR/gpu-check.tar.gz.part" "$OUT_DIR/gpu-check.tar.gz"
    echo "# logs copied to $OUT_DIR/gpu-check.tar.gz ($(du -k "$OUT_DIR/gpu-check.tar.gz" |
      cut -f1) KiB)"
  else
    rm -f "$OUT_DIR/gpu-check.tar.gz.part"
    echo "# the logs could not be archived into $OUT_DIR; they are in $LOG_DIR"
  fi
}

declare -a R_NAME=() R_RANKS=() R_IPS=() R_ACC=() R_WALL=() R_RESULT=()
declare -A ACC_OF=()
FAILED=0

# add_row NAME RANKS IMAGES/S ACCURACY WALL RESULT: a row of the summary; a result other than PASS
# or SKIP fails the script.
add_row() {
  R_NAME+=("$1") R_RANKS+=("$2") R_IPS+=("$3") R_ACC+=("$4") R_WALL+=("$5") R_RESULT+=("$6")
  # shellcheck disable=SC2034  # the verdict, the caller's to read
  [[ $6 == PASS || $6 == SKIP* ]] || FAILED=1
}
# skip_row NAME RANKS WHY: a row for a check that cannot run here (when GPU_CHECK_ONLY selects it).
skip_row() {
  [[ -z $ONLY || $1 =~ $ONLY ]] || return 0
  if ((PLANNING)); then
    printf '# plan %-32s %-8s skipped: %s\n' "$1" "$2" "$3"
    return 0
  fi
  printf '# %-26s %-8s %s\n' "$1" "$2" "SKIP: $3"
  add_row "$1" "$2" - - - "SKIP: $3"
}

# The time plan: the seconds each check is expected to take (ESTIMATE, by name, else
# DEFAULT_ESTIMATE), times ESTIMATE_SCALE once a speed probe has run. While PLANNING=1, check and
# skip_row print the plan's lines instead of running; PLAN_AT is when (seconds from the start) the
# next check is expected to begin. A check whose estimate exceeds the time left is not run: its
# name is in NOT_RUN, and its row says so.
declare -A ESTIMATE=()
DEFAULT_ESTIMATE=30
ESTIMATE_SCALE=1
PLANNING=0
PLAN_AT=0
NOT_RUN=()
estimate_of() {
  awk -v e="${ESTIMATE[$1]:-$DEFAULT_ESTIMATE}" -v s="$ESTIMATE_SCALE" \
    'BEGIN { printf "%d\n", e * s + 0.5 }'
}
# rescale_estimates PROBE: the later checks' estimates times PROBE's wall time over its estimate
# (within 0.5 to 4), when PROBE has just run.
rescale_estimates() {
  local last=$((${#R_NAME[@]} - 1))
  ((last >= 0)) && [[ ${R_NAME[$last]} == "$1" && ${R_WALL[$last]} != - ]] || return 0
  ESTIMATE_SCALE=$(awk -v w="${R_WALL[$last]}" -v e="${ESTIMATE[$1]:-$DEFAULT_ESTIMATE}" \
    'BEGIN { s = w / e; printf "%.2f\n", (s < 0.5 ? 0.5 : (s > 4 ? 4 : s)) }')
  say "speed probe: $1 took ${R_WALL[$last]} s against ~${ESTIMATE[$1]:-$DEFAULT_ESTIMATE} s" \
    "estimated: the later estimates x $ESTIMATE_SCALE"
}
# not_run_line: what the summary says of the checks that did not fit, if any, and the setting
# that runs them with the checks whose files their verdicts read (REFERENCE_CHECKS, the
# caller's); returns 1 then.
REFERENCE_CHECKS=()
not_run_line() {
  ((${#NOT_RUN[@]})) || return 0
  local names
  names=$(printf '%s\n' "${REFERENCE_CHECKS[@]}" "${NOT_RUN[@]}" | awk '!seen[$0]++' |
    paste -sd'|')
  echo "${#NOT_RUN[@]} check(s) not run, for lack of time: ${NOT_RUN[*]}." \
    "To run them: GPU_CHECK_ONLY='^($names)\$'"
  return 1
}

# check NAME RANKS/GPUS FLOOR EXPECTED_RC LOG_CHECK -- COMMAND...: runs COMMAND under a timeout
# with its log in LOG_DIR/NAME.log; passes when it exits EXPECTED_RC, given a FLOOR (else -) when
# the metrics summary (LOG_DIR/NAME.jsonl) has test_accuracy >= FLOOR, and given a LOG_CHECK
# function (else -) when LOG_CHECK LOG passes (it prints why not). Runs nothing when NAME does
# not match GPU_CHECK_ONLY, when its estimate does not fit (a row says so), or while PLANNING.
check() {
  local name=$1 ranks=$2 floor=$3 expected=$4 log_check=$5
  shift 6
  [[ -z $ONLY || $name =~ $ONLY ]] || return 0
  local estimate
  estimate=$(estimate_of "$name")
  if ((PLANNING)); then
    PLAN_AT=$((PLAN_AT + estimate))
    printf '# plan %-32s %-8s ~%3d s, done at ~%4d s%s\n' "$name" "$ranks" "$estimate" "$PLAN_AT" \
      "$( ((DEADLINE == 0 || PLAN_AT + 20 <= DEADLINE)) || echo ': past GPU_CHECK_DEADLINE')"
    return 0
  fi
  local log=$LOG_DIR/$name.log metrics=$LOG_DIR/$name.jsonl
  local left=$((RUN_BUDGET - (SECONDS - RUNS_START)))
  local limit
  limit=$(within_deadline $((left < RUN_TIMEOUT ? left : RUN_TIMEOUT)) 20)
  if ((limit < 15 || estimate > limit)); then
    printf '# %-26s %-8s %s\n' "$name" "$ranks" "not run: needs ~$estimate s, $limit s left"
    add_row "$name" "$ranks" - - - "SKIP: not run, needs ~$estimate s, $limit s left"
    NOT_RUN+=("$name")
    return 0
  fi
  local result="" ips="-" acc="-" wall="-" rc=0 start=$SECONDS
  printf '%q ' "$@" >"$log"
  echo >>"$log"
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 || rc=$?
  wall=$((SECONDS - start))
  if ((rc == 124 || rc == 137)); then
    result="FAIL: timed out after $limit s"
  elif ((rc != expected)); then
    result="FAIL: exit $rc, expected $expected"
  fi
  if [[ -z $result && $floor != - ]]; then
    local figures
    figures=$(verdict floor "$metrics" "$floor") || result="FAIL: ${figures##*$'\n'}"
    figures=$(head -1 <<<"$figures")
    [[ ! $figures =~ ^[0-9]+\ [0-9.]+\ [0-9.]+$ ]] || read -r ips acc wall <<<"$figures"
  fi
  if [[ -z $result && $log_check != - ]]; then
    local why
    why=$("$log_check" "$log") || result="FAIL: $why"
  fi
  [[ -n $result ]] || result=PASS
  if [[ $result != PASS ]]; then
    {
      echo "---- $name: $result; last lines of $log:"
      tail -25 "$log" 2>/dev/null || true
      echo "----"
    } >&2
  fi
  printf '# %-26s %-8s %s\n' "$name" "$ranks" "$result"
  # shellcheck disable=SC2034  # each run's test accuracy, the caller's to compare
  ACC_OF[$name]=$acc
  add_row "$name" "$ranks" "$ips" "$acc" "$wall" "$result"
  copy_out >/dev/null
}

# summary_table: the rows so far as a Markdown table.
summary_table() {
  echo "| run | ranks/GPUs | images/s | test accuracy | wall s | result |"
  echo "|---|---|---|---|---|---|"
  local i
  for i in "${!R_NAME[@]}"; do
    printf '| %s | %s | %s | %s | %s | %s |\n' "${R_NAME[$i]}" "${R_RANKS[$i]}" "${R_IPS[$i]}" \
      "${R_ACC[$i]}" "${R_WALL[$i]}" "${R_RESULT[$i]}"
  done
}
