#!/usr/bin/env bash
# scripts/lint.sh — provides: the style checks: clang-format (the repository's .clang-format) on
# every C++ source, shellcheck (its .shellcheckrc) on every shell script and flake8 (its .flake8)
# on every Python script the repository tracks, or on the FILES given; on the whole repository
# also scripts/check_notes.py (every named design note indexed and written out). Prints each
# finding and exits 1 when there is one; 0 when all are clean, 2 for a file it cannot check, 77
# when one of the three tools is missing (1 under CI, where CI is set).
#
#   scripts/lint.sh [FILES...]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

missing=()
for tool in clang-format shellcheck flake8; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
  echo "lint: ${missing[*]} not installed (apt-get install ${missing[*]})" >&2
  [[ -n ${CI:-} ]] && exit 1
  exit 77
fi

# A script is known by its name or, without an extension, by its #! line.
is_shell_script() {
  [[ $1 == *.sh ]] || head -1 "$1" | grep -qE '^#!.*\b(ba)?sh\b'
}
is_python_script() {
  [[ $1 == *.py ]] || head -1 "$1" | grep -qE '^#!.*\bpython'
}

files=("$@")
whole=0
if ((${#files[@]} == 0)); then
  whole=1
  cd "$ROOT"
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files)
  else  # a source tree without git: everything but what builds and scripts leave behind
    mapfile -t files < <(find . -path ./.git -prune -o -path './build*' -prune \
      -o -path ./deps -prune -o -path ./data -prune -o -type f -printf '%P\n' | sort)
  fi
fi

cxx=() shell=() python=()
for file in "${files[@]}"; do
  [[ -f $file ]] || { echo "lint: $file: no such file" >&2; exit 2; }
  case $file in
    *.cpp | *.hpp | *.h | *.cc) cxx+=("$file") ;;
    *) if is_shell_script "$file"; then
      shell+=("$file")
    elif is_python_script "$file"; then
      python+=("$file")
    fi ;;
  esac
done

status=0
# The style file named, so that a file outside the repository is held to the same style.
if ((${#cxx[@]})) &&
  ! clang-format --dry-run -Werror --style="file:$ROOT/.clang-format" "${cxx[@]}"; then
  status=1
fi
if ((${#shell[@]})) && ! shellcheck -f gcc "${shell[@]}"; then
  status=1
fi
if ((${#python[@]})) && ! flake8 --config="$ROOT/.flake8" "${python[@]}"; then
  status=1
fi
if ((whole)) && ! python3 "$ROOT/scripts/check_notes.py"; then
  status=1
fi
if ((status == 0)); then
  echo "lint: ${#cxx[@]} C++ files, ${#shell[@]} shell scripts and ${#python[@]} Python scripts clean"
fi
exit "$status"
