#!/usr/bin/env bash
# scripts/readme_report.sh — provides: docs/report.png, the run report the README shows, from a
# real run: configs/mnist99.conf on the real MNIST (data/mnist), 2 ranks x 1 thread, seed 1, with
# --report, checked and photographed in headless Chromium by tests/report/check_report.sh.
#
#   scripts/readme_report.sh [MNIST_DDP_BINARY]   (default: build/mnist_ddp)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${1:-$ROOT/build/mnist_ddp}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

mpirun -np 2 "$binary" --config "$ROOT/configs/mnist99.conf" --data-dir "$ROOT/data/mnist" \
  --threads 1 --seed 1 --log-every 10 --progress off --report "$work/report.html"
"$ROOT/tests/report/check_report.sh" "$work/report.html" "$ROOT/docs/report.png"
echo "readme_report: docs/report.png from $work/report.html"
