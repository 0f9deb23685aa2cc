#!/usr/bin/env bash
# tests/report/check_report.sh — provides: a headless-Chromium check of an HTML run report
# (lib/report/run_report.hpp), usable on any report file, from the sample or from a real run.
#
#   tests/report/check_report.sh [--allow-no-data] REPORT.html [SCREENSHOT.png]
#
# Fails (exit 1) when the file is not a complete page, when a chart is missing or draws nothing
# (a "no data" note counts as nothing unless --allow-no-data), when the page refers to anything
# outside itself, or when the browser writes anything to its console: a script error, or the
# page's Content-Security-Policy refusing to load something. With SCREENSHOT.png it also saves a
# 1200x1600 screenshot. Exits 2 on bad arguments and 77 (skipped) when no Chromium runs here.
# CHROMIUM=/path/to/chrome picks the browser.
set -euo pipefail

usage() {
  sed -n '5p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
}

allow_no_data=0
if [[ ${1:-} == --allow-no-data ]]; then
  allow_no_data=1
  shift
fi
(($# == 1 || $# == 2)) || usage
report=$1
screenshot=${2:-}

# The charts run_report.cpp draws; keep in step with it.
CHART_IDS=(chart-loss chart-accuracy chart-throughput chart-phases)

# A candidate counts only if it runs: Ubuntu's chromium-browser is a wrapper that asks for the
# snap, which fails in a container, and is no browser to test with.
chromium=${CHROMIUM:-}
if [[ -z $chromium ]]; then
  for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1 &&
      timeout 30 "$candidate" --version >/dev/null 2>&1; then
      chromium=$(command -v "$candidate")
      break
    fi
  done
fi
if [[ -z $chromium ]]; then
  echo "check_report: skipped: no working chromium, chromium-browser or google-chrome" \
    "(Debian: apt-get install chromium; elsewhere set CHROMIUM=/path/to/chrome)" >&2
  exit 77
fi

[[ -f $report && -r $report ]] || {
  echo "FAIL: cannot read the report '$report'" >&2
  exit 1
}
url="file://$(realpath "$report")"

source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"

# run_chromium LOG ARGS...: one headless run with a fresh profile, stderr to LOG. The virtual
# time budget lets timers run out without waiting for them; --timeout and the outer timeout
# (which also kills a browser that ignores TERM) keep a broken page from hanging the test.
run_chromium() {
  local log=$1
  shift
  local status=0
  timeout -k 5 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --no-default-browser-check --user-data-dir="$WORK/profile" \
    --virtual-time-budget=5000 --timeout=30000 "$@" "$url" 2>"$log" || status=$?
  rm -rf "$WORK/profile"
  if ((status == 124 || status == 137)); then
    fail "chromium did not finish within 60 s ($*)"
  elif ((status != 0)); then
    fail "chromium exited with $status ($*)"
    grep -v -e dbus -e '^\s*$' "$log" | tail -5 | sed 's/^/  | /' >&2
  fi
}

# 1. The file itself: written to the end, and nothing that a browser would fetch.
if ! tail -c 64 "$report" | tr -d ' \n\r\t' | grep -q '</html>$'; then
  fail "$report does not end with </html>: the file is incomplete"
fi

# 2. Load the page, print the DOM the browser built and log its console to stderr. The console
# lines look like "INFO:CONSOLE:1] "Uncaught ReferenceError: ...", source: file:///... (1)"
# (older versions: "INFO:CONSOLE(1)]").
run_chromium "$WORK/chromium.log" --enable-logging=stderr --v=0 --dump-dom >"$WORK/dom.html"
if grep -E 'CONSOLE[:(]|Uncaught' "$WORK/chromium.log" >"$WORK/console" 2>/dev/null; then
  fail "the browser console is not empty:"
  sed -E 's/^\[[^]]*\] ?/  | /' "$WORK/console" >&2
fi

# 3. The DOM: every chart drawn, no external references.
if [[ -s $WORK/dom.html ]]; then
  dom_flags=()
  ((allow_no_data)) && dom_flags+=(--allow-no-data)
  python3 "$(dirname "${BASH_SOURCE[0]}")/check_dom.py" "${dom_flags[@]}" "$WORK/dom.html" \
    "${CHART_IDS[@]}" || FAILURES=$((FAILURES + 1))
else
  fail "chromium printed no DOM for $report"
fi

# 4. The screenshot, for people: the browser's rendering of the page.
if [[ -n $screenshot ]]; then
  mkdir -p "$(dirname "$screenshot")"
  target=$(realpath -m "$screenshot")
  rm -f "$target"
  run_chromium "$WORK/screenshot.log" --hide-scrollbars --window-size=1200,1600 \
    --screenshot="$target" >/dev/null
  if [[ $(head -c 8 "$target" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; then
    echo "ok: screenshot $screenshot ($(stat -c %s "$target") bytes)"
  else
    fail "no PNG screenshot at $screenshot"
  fi
fi

finish "check_report: $report"
