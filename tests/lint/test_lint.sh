#!/usr/bin/env bash
# tests/lint/test_lint.sh — scripts/lint.sh passes on the repository as it is, having checked
# its C++ sources, shell scripts and Python scripts, and fails, naming the file, on a planted C++
# file out of style, a planted shell script with an unquoted expansion and a planted Python script
# with an unused import; a copy of a clean source outside the repository is held to the
# repository's style and passes. scripts/check_notes.py, which lint.sh runs on the repository,
# fails on a planted tree whose note is named but not indexed, indexed but not written out, or
# written out twice.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LINT=$ROOT/scripts/lint.sh

status=0
"$LINT" >"$WORK/out" 2>&1 || status=$?
if ((status == 77)); then
  cat "$WORK/out" >&2
  exit 77
fi
counts=$(sed -nE \
  's/^lint: ([0-9]+) C\+\+ files, ([0-9]+) shell scripts and ([0-9]+) Python scripts clean$/\1 \2 \3/p' \
  "$WORK/out")
read -r cxx shell python <<<"${counts:-0 0 0}"
if ((status == 0 && cxx >= 100 && shell >= 30 && python >= 10)); then
  pass "the repository is clean: $cxx C++ files, $shell shell scripts, $python Python scripts"
else
  fail "the repository: exit $status, expected 0 with at least 100 C++ files, 30 shell scripts" \
    "and 10 Python scripts:"
  cat "$WORK/out" >&2
fi

# expect_lint NAME STATUS TEXT FILE: lint.sh on FILE alone exits STATUS with TEXT in its output.
expect_lint() {
  local name=$1 expected=$2 text=$3 file=$4 status=0
  "$LINT" "$file" >"$WORK/out" 2>&1 || status=$?
  if [[ $status -eq $expected ]] && grep -qF -- "$text" "$WORK/out"; then
    pass "$name: exit $expected, '$text'"
  else
    fail "$name: exit $status, expected $expected and '$text' in:"
    cat "$WORK/out" >&2
  fi
}

# The repository's style, not clang-format's default, outside the repository too: this source's
# lines run to 100 columns, which the default style would rewrap.
cp "$ROOT/lib/train/trainer.cpp" "$WORK/trainer.cpp"
expect_lint "a clean source outside the repository" 0 \
  "lint: 1 C++ files, 0 shell scripts and 0 Python scripts clean" "$WORK/trainer.cpp"
sed -i '0,/^namespace mnist_ddp::train {$/s//namespace   mnist_ddp::train {/' "$WORK/trainer.cpp"
expect_lint "a C++ file out of style" 1 "$WORK/trainer.cpp:" "$WORK/trainer.cpp"

# shellcheck disable=SC2016  # the planted script's $1
printf '#!/usr/bin/env bash\necho "$1"\n' >"$WORK/clean"
expect_lint "a clean script without .sh, known by its #! line" 0 \
  "lint: 0 C++ files, 1 shell scripts and 0 Python scripts clean" "$WORK/clean"
# shellcheck disable=SC2016  # the planted script's $1
printf '#!/usr/bin/env bash\nrm -rf $1/lib\n' >"$WORK/planted.sh"
expect_lint "a script with an unquoted expansion" 1 "$WORK/planted.sh:2:8: note: Double quote" \
  "$WORK/planted.sh"
# Python, held to .flake8 outside the repository too: its 100 columns and PEP 8's spaced slice.
printf '#!/usr/bin/env python3\nimport sys\n\nprint(sys.argv[1 : len(sys.argv)], "%s")\n' \
  "$(printf 'x%.0s' {1..50})" >"$WORK/clean_python"
expect_lint "a clean Python script without .py, known by its #! line" 0 \
  "lint: 0 C++ files, 0 shell scripts and 1 Python scripts clean" "$WORK/clean_python"
printf 'import os\nimport sys\n\nprint(sys.argv)\n' >"$WORK/planted.py"
expect_lint "a Python script with an unused import" 1 \
  "$WORK/planted.py:1:1: F401 'os' imported but unused" "$WORK/planted.py"
expect_lint "a file that does not exist" 2 "lint: $WORK/none.sh: no such file" "$WORK/none.sh"


# expect_notes NAME STATUS TEXT: check_notes.py on the planted tree $WORK/notes exits STATUS with
# TEXT in its output.
expect_notes() {
  local status=0
  python3 "$ROOT/scripts/check_notes.py" --root "$WORK/notes" >"$WORK/out" 2>&1 || status=$?
  if [[ $status -eq $2 ]] && { [[ -z $3 ]] || grep -qF -- "$3" "$WORK/out"; }; then
    pass "$1: exit $2 $3"
  else
    fail "$1: exit $status, expected $2 and '$3' in:"
    cat "$WORK/out" >&2
  fi
}
mkdir -p "$WORK/notes/docs" "$WORK/notes/lib"
# shellcheck disable=SC2016  # the index's backquotes
printf '# Design

## Notes in lib/

| Note | where |
|---|---|
| Kept | `lib/a.cpp` |
' \
  >"$WORK/notes/docs/design.md"
printf '// Note [Kept]
// ~~~~~~~~~~~~
// Why.
int a = 0;  // Note [Kept]
' >"$WORK/notes/lib/a.cpp"
expect_notes "a note indexed and written out" 0 ""
echo '// Note [Lost] says why' >>"$WORK/notes/lib/a.cpp"
expect_notes "a note named but not indexed" 1 "Note [Lost] (named in lib/a.cpp) is not in"
# shellcheck disable=SC2016  # the index's backquotes
printf '| Lost | `lib/a.cpp` |\n' >>"$WORK/notes/docs/design.md"
sed -i 's|^// Note \[Lost\] says why$|int lost = 0;  // Note [Lost]|' "$WORK/notes/lib/a.cpp"
expect_notes "a note indexed but not written out" 1 "Note [Lost] is not written out in lib/a.cpp"
printf '// Note [Lost]\n// ~~~~~~~~~~~~\n// Why.\n' >>"$WORK/notes/lib/a.cpp"
expect_notes "the note written out" 0 ""
printf '// Note [Lost]\n// ~~~~~~~~~~~~\n// Why again.\n' >"$WORK/notes/lib/b.cpp"
expect_notes "a note written out twice" 1 "Note [Lost] is written out 2 times"

finish lint
