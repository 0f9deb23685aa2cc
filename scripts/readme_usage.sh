#!/usr/bin/env bash
# scripts/readme_usage.sh — keeps docs/options.md's usage block identical to `mnist_ddp --help`, so
# the two cannot drift: rewrites the block between the "usage:begin" and "usage:end" markers, or
# with --check only compares (exit 1 and a diff when they differ; ctest e2e_readme_usage runs it).
#
#   scripts/readme_usage.sh [--check] [MNIST_DDP_BINARY]   (default: build/mnist_ddp)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
binary=${1:-$ROOT/build/mnist_ddp}
readme=$ROOT/docs/options.md

help=$(mktemp)
updated=$(mktemp)
trap 'rm -f "$help" "$updated"' EXIT
# A single process is a world of one: no mpirun needed to print the help.
OMPI_MCA_ess_singleton_isolated=1 "$binary" --help >"$help"

python3 - "$readme" "$help" "$updated" <<'PY'
import sys
readme, help_file, out = sys.argv[1:]
text = open(readme).read()
begin, end = "<!-- usage:begin", "<!-- usage:end -->"
if text.count(begin) != 1 or text.count(end) != 1:
    sys.exit(f"{readme}: expected one '{begin}' and one '{end}' marker")
head, rest = text.split(begin, 1)
marker_line, _ = rest.split("\n", 1)
_, tail = rest.split(end, 1)
block = f"{begin}{marker_line}\n```\n{open(help_file).read()}```\n{end}"
open(out, "w").write(head + block + tail)
PY

if ((check)); then
  if ! diff -u "$readme" "$updated"; then
    echo "docs/options.md's usage block differs from '$binary --help':" \
      "run scripts/readme_usage.sh" >&2
    exit 1
  fi
  echo "docs/options.md's usage block matches --help"
else
  cp "$updated" "$readme"
fi
