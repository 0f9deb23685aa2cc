#!/usr/bin/env bash
# The HTML run report in a real browser: the sample report (and an empty one, with
# --allow-no-data) passes tests/report/check_report.sh, and the checker catches each thing it is
# there to catch: a script error, a load the page's policy refuses, a reference outside the
# page, a truncated file, a chart that draws nothing. Without chromium it exits 77 (skipped),
# except under CI (CI set), which must run every check: there it fails.
# Needs SAMPLE_REPORT_BIN (tests/report/sample_report.cpp), set by ctest.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/e2e_lib.sh"
: "${SAMPLE_REPORT_BIN:?set SAMPLE_REPORT_BIN to the sample_report executable}"
CHECK=$MNIST_DDP_SOURCE_DIR/tests/report/check_report.sh

# check [--allow-no-data] NAME [SCREENSHOT]: runs the checker on $WORK/NAME.html; sets STATUS,
# its stdout and stderr go to $WORK/out.
check() {
  local flags=()
  if [[ $1 == --allow-no-data ]]; then
    flags=("$1")
    shift
  fi
  local name=$1
  shift
  STATUS=0
  timeout 300 bash "$CHECK" "${flags[@]}" "$WORK/$name.html" "$@" >"$WORK/out" 2>&1 || STATUS=$?
  cp "$WORK/out" "$WORK/err"  # for expect_exit, which shows $WORK/err on failure
}

# expect_caught NAME TEXT: the checker rejects $WORK/NAME.html and says TEXT.
expect_caught() {
  check "$1"
  expect_exit 1 "$1"
  if grep -qF -- "$2" "$WORK/out"; then pass "$1: '$2' reported"; else
    fail "$1: the checker did not report '$2'"
    sed 's/^/  | /' "$WORK/out" | tail -20 >&2
  fi
}

"$SAMPLE_REPORT_BIN" "$WORK/sample.html"
check sample
if [[ $STATUS -eq 77 ]]; then
  cat "$WORK/out"
  if [[ -n ${CI:-} ]]; then
    fail "no chromium, and CI must run every check"
    finish
  fi
  exit 77
fi
expect_exit 0 "the sample report"
expect_once out "ok: chart-phases: 24 drawn elements" "4 ranks x 6 phases"

check sample "$WORK/sample.png"
expect_exit 0 "the sample report with a screenshot"
if [[ -s $WORK/sample.png ]]; then pass "screenshot written"; else fail "no screenshot written"; fi

# A report of a run that stopped before its first step: "no data" notes, allowed only on request.
"$SAMPLE_REPORT_BIN" --empty "$WORK/empty.html"
expect_caught empty "chart-loss is a 'p', not a chart"
check --allow-no-data empty
expect_exit 0 "the empty report with --allow-no-data"

# The checker's reason to exist: each of these must fail it.
sed -e '/Content-Security-Policy/d' -e 's|</body>|<script>undefined_function();</script></body>|' \
  "$WORK/sample.html" >"$WORK/js_error.html"
expect_caught js_error "Uncaught ReferenceError: undefined_function is not defined"

sed 's|</body>|<script>document.title = "changed";</script></body>|' "$WORK/sample.html" \
  >"$WORK/inline_script.html"
expect_caught inline_script "violates the following Content Security Policy directive"

sed 's|</main>|<img src="https://example.invalid/logo.png"></main>|' "$WORK/sample.html" \
  >"$WORK/external.html"
expect_caught external 'refers outside the page: <img src="https://example.invalid/logo.png">'

head -c 8000 "$WORK/sample.html" >"$WORK/truncated.html"
expect_caught truncated "does not end with </html>"

sed -e '/<polyline/d' -e '/class="marker"/d' "$WORK/sample.html" >"$WORK/undrawn.html"
expect_caught undrawn "<svg id=chart-loss> draws no line, dot or bar"

finish
