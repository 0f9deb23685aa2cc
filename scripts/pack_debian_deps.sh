#!/usr/bin/env bash
# scripts/pack_debian_deps.sh — provides: the Debian 12 (bookworm) .deb files that build and run
# mnist_ddp on a machine that has only a CUDA LibTorch, the CUDA toolkit and a compiler (a GPU
# machine without network): Open MPI 4.1 with the libraries it loads, Boost.Program_options,
# nlohmann-json, zlib headers, protobuf 3.21 and doctest. tests/gpu/run.sh unpacks them with
# `dpkg -x` into the repository (deps/root) when something is missing there. About 22 MB.
#
#   scripts/pack_debian_deps.sh [DIR]    (default: deps/debs under the repository root)
#
# Run it on Debian 12 with apt access (no root needed, nothing is installed), then copy DIR to
# the other machine as deps/debs of the repository.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-$ROOT/deps/debs}

# Open MPI: mpirun/orted/mpicxx (openmpi-bin), help and wrapper files (openmpi-common), the
# libraries and MCA components (libopenmpi3), headers (libopenmpi-dev), and what libmpi, orted
# and the components link (checked with ldd on every .so of libopenmpi3, libpmix2, libucx0,
# libfabric1). Left out: -dev packages libopenmpi-dev depends on (hwloc, pmix, ibverbs, event:
# `mpicxx --showme` links only -lmpi_cxx -lmpi) and libhwloc-plugins (dlopen()ed GPU topology
# plugins). ibverbs-providers stays: libfabric links its libefa.so.1.
PACKAGES=(
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev
  libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2
  libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200
  libpsm2-2 libpsm-infinipath1 ibverbs-providers
  # Base libraries most systems have; tests/gpu/run.sh uses these only where the system lacks
  # the library (so a newer system copy is never shadowed).
  libnuma1 libudev1 libuuid1 libatomic1 zlib1g
  # Build dependencies of mnist_ddp.
  libboost1.74-dev libboost-program-options1.74.0 libboost-program-options1.74-dev
  nlohmann-json3-dev zlib1g-dev
  libprotobuf32 libprotobuf-dev libprotoc32 protobuf-compiler
  doctest-dev
)

if ! command -v apt-get >/dev/null 2>&1; then
  echo "pack_debian_deps: apt-get not found: run this on Debian 12 (bookworm)" >&2
  exit 2
fi
# shellcheck source=/dev/null
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if [[ $codename != bookworm ]]; then
  echo "pack_debian_deps: warning: this is '${codename:-unknown}', not Debian 12 (bookworm);" \
       "the packages are meant to be bookworm's (Open MPI 4.1.4, protobuf 3.21, Boost 1.74)" >&2
fi

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# apt-get download writes into the current folder; as root it drops to the _apt user, which
# must be able to write there.
chmod 0755 "$DIR"
if [[ $(id -u) -eq 0 ]]; then chown _apt "$DIR" 2>/dev/null || true; fi
(cd "$DIR" && apt-get download -q "${PACKAGES[@]:?}")

# Exactly one version of each package: an older file left from an earlier run would make dpkg -x
# unpack both.
for pkg in "${PACKAGES[@]}"; do
  mapfile -t files < <(find "$DIR" -maxdepth 1 -name "${pkg}_*.deb" | sort -V)
  if ((${#files[@]} == 0)); then
    echo "pack_debian_deps: ${pkg}: no .deb was downloaded" >&2
    exit 1
  fi
  ((${#files[@]} > 1)) && rm -f "${files[@]:0:${#files[@]}-1}"
done

echo "pack_debian_deps: ${#PACKAGES[@]} packages in $DIR ($(du -sh "$DIR" | cut -f1))"
