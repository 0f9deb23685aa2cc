#!/usr/bin/env bash
# scripts/test_libtorch2.sh — provides: the build and its tests against LibTorch 2.x, on a machine
# whose own LibTorch is Debian 12's 1.13: a root file system of a newer Debian (debootstrap; kept
# in build-libtorch2/SUITE for the next run) with its LibTorch (CPU) and the rest of the CI
# packages (scripts/install_packages.sh ci), the working tree copied in, configured and built
# there into /build, then ctest. Needs root (debootstrap, chroot, bind mounts) and a Debian
# mirror. Not part of CI: about 10 minutes on 2 cores from nothing, 2-7 with the root file system
# kept. The CUDA side of 2.x is ctest's build_libtorch2 (scripts/check_libtorch2.py).
#
#   scripts/test_libtorch2.sh [--suite trixie|sid] [CTEST_ARGUMENTS]   (default: -L 'unit|mpi')
#
# --suite trixie (the default): Debian 13, LibTorch 2.6, GCC 14, Open MPI 5.0. --suite sid:
# Debian's unstable suite, its newest LibTorch (2.14 in December 2026, which needs C++20): what
# comes next, so a run may meet a LibTorch that nothing here has been built against before.
#
# The e2e tests run too with e.g. `-L e2e`, but Debian 13's Open MPI 5.0.7 crashes on the
# `mpirun A : B` launches some of them use, and prints a TCP warning inside a chroot.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
  echo "test_libtorch2: $*" >&2
  exit 2
}
SUITE=trixie
if [[ ${1:-} == --suite ]]; then
  [[ ${2:-} == trixie || ${2:-} == sid ]] || die "--suite takes trixie or sid (got '${2:-}')"
  SUITE=$2
  shift 2
fi
ROOTFS=${LIBTORCH2_ROOTFS:-$ROOT/build-libtorch2/$SUITE}
((EUID == 0)) || die "needs root (debootstrap, chroot and bind mounts)"
command -v debootstrap >/dev/null || die "needs debootstrap (apt-get install debootstrap)"
(($# > 0)) || set -- -L 'unit|mpi'

if [[ ! -f $ROOTFS/.ready ]]; then
  mirror=$("$ROOT/scripts/debian_mirror.sh")
  echo "test_libtorch2: making a Debian $SUITE root file system in $ROOTFS from $mirror"
  rm -rf "$ROOTFS"
  mkdir -p "$ROOTFS"
  debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$mirror" >"$ROOTFS.log" 2>&1 ||
    die "debootstrap failed; the end of $ROOTFS.log: $(tail -3 "$ROOTFS.log")"
fi

MOUNTS=()
cleanup() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for dir in proc sys dev dev/pts dev/shm; do
  mkdir -p "$ROOTFS/$dir"
  mount --bind "/$dir" "$ROOTFS/$dir"
  MOUNTS+=("$ROOTFS/$dir")
done
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"

# The working tree as git sees it (uncommitted changes included), and the MNIST if fetched.
rm -rf "$ROOTFS/src"
mkdir -p "$ROOTFS/src"
# (A tracked file deleted in the tree is passed over.)
git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
  tar -C "$ROOT" --null -T - --ignore-failed-read -c 2>/dev/null | tar -x -C "$ROOTFS/src"
if [[ -d $ROOT/data/mnist ]]; then
  mkdir -p "$ROOTFS/src/data"
  cp -r "$ROOT/data/mnist" "$ROOTFS/src/data/mnist"
fi

in_root() {
  chroot "$ROOTFS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$@"
}
if [[ ! -f $ROOTFS/.ready ]]; then
  # Unstable's Release file is valid for a week only; a mirror that is a frozen copy of the
  # archive outlives that, and apt then refuses it. The signatures are still checked.
  if [[ $SUITE == sid ]]; then
    echo 'Acquire::Check-Valid-Until "false";' >"$ROOTFS/etc/apt/apt.conf.d/99frozen-mirror"
  fi
  in_root bash -c 'apt-get update -qq && /src/scripts/install_packages.sh ci' >"$ROOTFS.log" 2>&1 ||
    die "installing the packages failed; the end of $ROOTFS.log: $(tail -3 "$ROOTFS.log")"
  touch "$ROOTFS/.ready"
fi
# shellcheck disable=SC2016  # dpkg-query's format, not this shell's variables
echo "test_libtorch2: $(in_root dpkg-query -W -f '${Package} ${Version}' libtorch-dev)," \
  "$(in_root g++ --version | head -1)"
# shellcheck disable=SC2016  # the root file system's $(nproc)
in_root bash -c 'cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /build --parallel "$(nproc)"' >"$ROOTFS.build.log" 2>&1 ||
  die "the build failed; the end of $ROOTFS.build.log:
$(grep -m5 -E 'error|FAILED' "$ROOTFS.build.log" || tail -5 "$ROOTFS.build.log")"
echo "test_libtorch2: built; ctest $*"
in_root ctest --test-dir /build --output-on-failure "$@"
