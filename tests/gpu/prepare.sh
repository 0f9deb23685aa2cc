#!/usr/bin/env bash
# tests/gpu/prepare.sh — provides: what a device call of tests/gpu/run.sh must carry, made here
# (git ignores both): the four Fashion-MNIST files in data/fashion-mnist (from Debian's
# dataset-fashion-mnist) and Debian 12's build dependencies in deps/debs
# (scripts/pack_debian_deps.sh); with --bench also the real MNIST gzipped in data/mnist-gz for
# bench/gpu/graph_bench.py (GPU_CHECK_MNIST). Prints the paths to carry and their size, and exits
# 1 when they pass the 64 MiB a device call carries.
#
#   tests/gpu/prepare.sh [--bench]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
LIMIT_KIB=$((64 * 1024))
FASHION=/usr/share/datasets/fashion-mnist
CARRY=(data/fashion-mnist deps/debs)
bench=0
case ${1:-} in
  --bench) bench=1 ;;
  "") ;;
  *) sed -n '9p' "$0" >&2; exit 2 ;;
esac

if [[ ! -d $FASHION ]]; then
  echo "prepare: $FASHION is missing: apt-get install dataset-fashion-mnist" >&2
  exit 2
fi
mkdir -p data/fashion-mnist
cp -u "$FASHION"/*-ubyte.gz data/fashion-mnist/
compgen -G 'deps/debs/*.deb' >/dev/null || scripts/pack_debian_deps.sh deps/debs
if ((bench)); then
  scripts/fetch_data.sh data/mnist
  mkdir -p data/mnist-gz
  for name in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
              t10k-labels-idx1-ubyte; do
    [[ -f data/mnist-gz/$name.gz ]] || gzip -9 -c "data/mnist/$name" >"data/mnist-gz/$name.gz"
  done
  CARRY+=(data/mnist-gz)
fi

size=$(du -sk "${CARRY[@]}" | awk '{ kib += $1 } END { print kib }')
joined=$(printf '", "%s' "${CARRY[@]}")
echo "carry: [${joined:3}\"]"
echo "size: $((size / 1024)) MiB of the $((LIMIT_KIB / 1024)) MiB a call carries"
((size <= LIMIT_KIB)) || { echo "prepare: too much to carry" >&2; exit 1; }
