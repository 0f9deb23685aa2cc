#!/usr/bin/env bash
# tests/docs/test_check_quoted_figures.sh — the quoted-figures check passes on README.md,
# bench/README.md and docs/*.md as they are, and fails, naming the file and the figure, on copies
# with a planted problem: a figure in a figures region that its result file does not hold (in
# README.md, bench/README.md and a docs page), a rounded table figure, an embedded copy of a table
# that differs from bench/results.md, a throughput outside any region (in bench/README.md and in a
# docs page), and a deleted marker. Numbers in code spans stay unchecked.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHECK=$ROOT/scripts/check_quoted_figures.py
# The documents and every result file they may quote, as the repository holds them.
DOCS=(README.md)
for doc in "$ROOT"/bench/*.md "$ROOT"/bench/gpu/*.md; do DOCS+=("${doc#"$ROOT"/}"); done

passes_as_is "the documents quote only their result files' figures" "the documents quote figures that their result files do not hold" python3 "$CHECK" "$ROOT"

# fresh_copy: the documents and the tables they quote, unchanged, under $WORK/repo.
fresh_copy() {
  rm -rf "$WORK/repo"
  mkdir -p "$WORK/repo/bench/gpu"
  local doc
  for doc in "${DOCS[@]}"; do cp "$ROOT/$doc" "$WORK/repo/$doc"; done
  cp -r "$ROOT/docs" "$WORK/repo/docs"
}

# run_check: STATUS and $WORK/out from the check on the copy.
run_check() {
  STATUS=0
  python3 "$CHECK" "$WORK/repo" >"$WORK/out" 2>&1 || STATUS=$?
}

# expect NAME STATUS TEXT: the check on the copy as planted exits STATUS with TEXT in its output.
expect() {
  run_check
  if [[ $STATUS -eq $2 ]] && grep -qF -- "$3" "$WORK/out"; then
    pass "$1: exit $2, '$3'"
  else
    fail "$1: exit $STATUS, expected $2 and '$3' in:"
    cat "$WORK/out" >&2
  fi
}

# plant DOC LINE: LINE inserted just before each of DOC's figures:end markers.
plant() { sed -i "/^<!-- figures:end -->/i $2" "$WORK/repo/$1"; }

fresh_copy
plant README.md "- planted: 987,654.5 img/s on one core."
expect "a wrong figure in README.md" 1 "987,654.5 is not in bench/time_to_99.md"
grep -qF "README.md:" "$WORK/out" && grep -qF "987,654.5 is not in bench/gpu/h200-graph-bench.md" \
  "$WORK/out" || fail "the message names neither the file nor the figure"

fresh_copy
plant docs/gpu.md "- planted: 7,654,321 images/s on one GPU."
expect "a wrong figure in a docs page" 1 "docs/gpu.md:"
grep -qF "7,654,321 is not in bench/gpu/h200-summary.md" "$WORK/out" || fail "7,654,321 not named"

fresh_copy
plant bench/README.md "- planted: scaling of 2.15 from 1 to 2 ranks."
expect "a stale figure in bench/README.md" 1 "bench/README.md:"
grep -qF "2.15 is not in bench/results.md" "$WORK/out" || fail "2.15 not named"

# A table figure rounded: the first of the table's rows with two decimals (1.63), written with
# one (1.6), skipping those whose shorter form the table also holds.
rounded=$(python3 - "$ROOT/bench/results.md" <<'PY'
import decimal, re, sys
rows = "".join(line for line in open(sys.argv[1]) if line.startswith("|"))
held = set(re.findall(r"\d+(?:\.\d+)?", rows.replace(",", "")))
figures = re.findall(r"(?<![\d.])\d+\.\d[1-9](?![\d.])", rows)
shorter = [str(decimal.Decimal(f).quantize(decimal.Decimal("0.1"), decimal.ROUND_HALF_UP))
           for f in figures]
print(next(f for f in shorter if f not in held))
PY
)
fresh_copy
plant docs/benchmarks.md "- planted: a rounded $rounded."
expect "a rounded table figure ($rounded)" 1 "$rounded is not in bench/results.md"

# embed_copy: a docs page of the copy gets an embedded copy of bench/results.md.
embed_copy() {
  fresh_copy
  {
    echo "<!-- embed:begin bench/results.md (a verbatim copy; ctest checks) -->"
    cat "$ROOT/bench/results.md"
    echo "<!-- embed:end -->"
  } >>"$WORK/repo/docs/benchmarks.md"
}

embed_copy
expect "an embedded copy equal to its table" 0 "every quoted figure is in its table"

embed_copy
echo "| planted | row |" >>"$WORK/repo/bench/results.md"
expect "a table rerun but not copied again" 1 "differ from bench/results.md"

embed_copy
sed -i '/^<!-- embed:begin/,/^<!-- embed:end/s/^| cnn | [^|]* | 1 | /&9/' \
  "$WORK/repo/docs/benchmarks.md"
expect "a figure edited in a copy of the table" 1 "differ from bench/results.md"

fresh_copy
echo "The planted figure 123,456 img/s is in no region." >>"$WORK/repo/bench/README.md"
expect "a throughput outside any region" 1 "123,456 img/s is outside a figures region"

fresh_copy
echo "On one GPU it ran at 123,456 img/s." >>"$WORK/repo/docs/outputs.md"
expect "a throughput outside any region of a docs page" 1 \
  "docs/outputs.md:$(wc -l <"$WORK/repo/docs/outputs.md"): the benchmark figure 123,456 img/s"

fresh_copy
sed -i '/^<!-- figures:begin /d' "$WORK/repo/bench/README.md"
expect "a deleted figures:begin" 1 "bench/README.md: no figures region"

fresh_copy
plant README.md "- planted: \`--repeats 987654\` and conv987654 are not figures."
expect "numbers in code and in names" 0 "every quoted figure is in its table"

finish test_check_quoted_figures
