#!/usr/bin/env bash
# tests/lint/test_lint.sh — scripts/lint.sh passes on the repository as it is, having checked
# its C++ sources and shell scripts, and fails, naming the file, on a planted C++ file out of
# style and a planted shell script with an unquoted expansion; a copy of a clean source outside
# the repository is held to the repository's style and passes.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LINT=$ROOT/scripts/lint.sh

status=0
"$LINT" >"$WORK/out" 2>&1 || status=$?
if ((status == 77)); then
  cat "$WORK/out" >&2
  exit 77
fi
counts=$(sed -nE 's/^lint: ([0-9]+) C\+\+ files and ([0-9]+) shell scripts clean$/\1 \2/p' \
  "$WORK/out")
read -r cxx shell <<<"${counts:-0 0}"
if ((status == 0 && cxx >= 100 && shell >= 30)); then
  pass "the repository is clean: $cxx C++ files, $shell shell scripts"
else
  fail "the repository: exit $status, expected 0 with at least 100 C++ files and 30 scripts:"
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
expect_lint "a clean source outside the repository" 0 "lint: 1 C++ files and 0 shell scripts clean" \
  "$WORK/trainer.cpp"
sed -i '0,/^namespace mnist_ddp::train {$/s//namespace   mnist_ddp::train {/' "$WORK/trainer.cpp"
expect_lint "a C++ file out of style" 1 "$WORK/trainer.cpp:" "$WORK/trainer.cpp"

# shellcheck disable=SC2016  # the planted script's $1
printf '#!/usr/bin/env bash\necho "$1"\n' >"$WORK/clean"
expect_lint "a clean script without .sh, known by its #! line" 0 \
  "lint: 0 C++ files and 1 shell scripts clean" "$WORK/clean"
# shellcheck disable=SC2016  # the planted script's $1
printf '#!/usr/bin/env bash\nrm -rf $1/lib\n' >"$WORK/planted.sh"
expect_lint "a script with an unquoted expansion" 1 "$WORK/planted.sh:2:8: note: Double quote" \
  "$WORK/planted.sh"
expect_lint "a file that does not exist" 2 "lint: $WORK/none.sh: no such file" "$WORK/none.sh"

finish lint
