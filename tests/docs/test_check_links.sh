#!/usr/bin/env bash
# tests/docs/test_check_links.sh — the link check passes on README.md, docs/*.md and
# tests/README.md as they are, and fails, naming the document, the line and the target, on copies
# with a planted problem: a relative link to no file, a repository path that does not exist, an
# anchor that is no heading (in the document and in another), and a page the README links to
# deleted. Links with a scheme, patterns and placeholders stay unchecked.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CHECK=$ROOT/scripts/check_links.py

passes_as_is "every link and repository path of the documents exists" "the documents name links or paths that do not exist" python3 "$CHECK" "$ROOT"

# fresh_copy: $WORK/repo with README.md and docs/ copied, every other top-level entry linked.
fresh_copy() {
  rm -rf "$WORK/repo"
  mkdir -p "$WORK/repo"
  local entry name
  for entry in "$ROOT"/* "$ROOT"/.[!.]*; do
    [[ -e $entry ]] || continue
    name=$(basename "$entry")
    [[ $name == README.md || $name == docs || $name == .git ]] || ln -s "$entry" "$WORK/repo/$name"
  done
  cp "$ROOT/README.md" "$WORK/repo/README.md"
  cp -r "$ROOT/docs" "$WORK/repo/docs"
}

# expect NAME STATUS TEXT: the check on the copy as planted exits STATUS with TEXT in its output.
expect() {
  local status=0
  python3 "$CHECK" "$WORK/repo" >"$WORK/out" 2>&1 || status=$?
  if [[ $status -eq $2 ]] && grep -qF -- "$3" "$WORK/out"; then
    pass "$1: exit $2, '$3'"
  else
    fail "$1: exit $status, expected $2 and '$3' in:"
    cat "$WORK/out" >&2
  fi
}

fresh_copy
echo "See [the planted page](docs/planted-nowhere.md)." >>"$WORK/repo/README.md"
expect "a broken relative link in README.md" 1 "README.md:$(wc -l <"$WORK/repo/README.md"): the link 'docs/planted-nowhere.md' names no file"

fresh_copy
echo "Run \`scripts/planted_nowhere.sh --check\` first." >>"$WORK/repo/docs/gpu.md"
expect "a repository path that does not exist" 1 "docs/gpu.md:$(wc -l <"$WORK/repo/docs/gpu.md"): the repository path 'scripts/planted_nowhere.sh' does not exist"

fresh_copy
echo "Read [below](#planted-no-such-heading)." >>"$WORK/repo/docs/outputs.md"
expect "an anchor that is no heading" 1 "the link '#planted-no-such-heading' names no heading"

fresh_copy
echo "Read [the watchdog](failures.md#planted-no-such-heading)." >>"$WORK/repo/docs/gpu.md"
expect "an anchor of another page that is no heading" 1 "names no heading of failures.md"

fresh_copy
rm "$WORK/repo/docs/options.md"
expect "a page the README links to, deleted" 1 "the link 'docs/options.md' names no file"

fresh_copy
cat >>"$WORK/repo/docs/gpu.md" <<'PLANTED'
Not checked: [a site](https://example.com/planted/nowhere), `lib/model/*.cpp`,
`tests/fuzz/corpus/<harness>/`, `PREFIX/share/mnist_ddp/configs/planted.conf`, and
[a heading](#what-has-run-on-real-gpus).
PLANTED
expect "links with a scheme, patterns, placeholders and a real anchor" 0 \
  "every relative link and repository path exists"

finish test_check_links
