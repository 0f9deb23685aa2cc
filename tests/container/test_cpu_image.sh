#!/usr/bin/env bash
# The CPU image, built and run as a user would: scripts/build_image.sh builds docker/cpu.Dockerfile
# (its runtime stage, from the Debian package of this build and the MNIST of data/mnist) with
# buildah, on a debian:12 made locally when none can be pulled; then, in a container of it as the
# image's user mnist: the image's own command, `mnist_ddp --version`, and `mpirun -np 2 mnist_ddp
# --epochs 1` on real MNIST to the linear model's accuracy; and no compiler in the image. Then the
# Slurm batch script's container mode: slurm/mnist_ddp.sbatch, unchanged, on a one-node Slurm
# cluster (tests/slurm/cluster.sh) with MNIST_DDP_WRAPPER running every rank in the image's root
# file system. Needs root (debootstrap, chroot isolation, mounts), buildah and debootstrap: exits
# 77 (skipped) without them, and fails under CI. Prints the build time and the image size.
source "$(dirname "${BASH_SOURCE[0]}")/../check_lib.sh"
: "${MNIST_DDP_BUILD_DIR:?set MNIST_DDP_BUILD_DIR to the build folder}"
: "${MNIST_DDP_SOURCE_DIR:?set MNIST_DDP_SOURCE_DIR to the repository}"
DATA_DIR=$MNIST_DDP_SOURCE_DIR/data/mnist  # scripts/setup.sh fills it
TAG=localhost/mnist_ddp:cpu-test

missing=""
((EUID == 0)) || missing="root"
for tool in buildah debootstrap dpkg-deb; do
  command -v "$tool" >/dev/null || missing+="${missing:+, }$tool"
done
[[ -f $DATA_DIR/train-images-idx3-ubyte ]] || missing+="${missing:+, }MNIST in $DATA_DIR"
if [[ -n $missing ]]; then
  if [[ -n ${CI:-} ]]; then
    fail "the CPU image test needs $missing, and CI must run it"
    finish container
  fi
  echo "skipped: the CPU image test needs $missing"
  exit 77
fi

MOUNTS=()    # bind mounts into the image's root file system, unmounted in reverse order
CLUSTER_UP=0
cleanup() {
  local i
  if ((CLUSTER_UP)); then
    "$MNIST_DDP_SOURCE_DIR/tests/slurm/cluster.sh" down 9>&- >/dev/null 2>&1 || true
  fi
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -R "${MOUNTS[i]}" 2>/dev/null || true; done
  for mount in "${MOUNTS[@]}"; do
    # Never remove a container whose root file system still holds the host's /dev or /proc.
    if mountpoint -q "$mount"; then
      echo "container test: $mount is still mounted; the container is left in place" >&2
      rm -rf "$WORK"
      return
    fi
  done
  buildah umount --all >/dev/null 2>&1 || true
  buildah rm --all >/dev/null 2>&1 || true
  buildah rmi --force "$TAG" >/dev/null 2>&1 || true
  buildah rmi --prune >/dev/null 2>&1 || true  # the untagged stages of the build
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- build ------------------------------------------------------------------------------------
if (cd "$WORK" && cpack -G DEB --config "$MNIST_DDP_BUILD_DIR/CPackConfig.cmake" -B "$WORK/pkg") \
  >"$WORK/cpack.log" 2>&1; then
  pass "cpack -G DEB exits 0"
else
  fail "cpack -G DEB failed: $(tail -5 "$WORK/cpack.log")"
  finish container
fi
deb=$(find "$WORK/pkg" -maxdepth 1 -name 'mnist-ddp_*.deb' | head -1)
start=$SECONDS
if MNIST_DDP_OFFLINE=1 "$MNIST_DDP_SOURCE_DIR/scripts/build_image.sh" --engine buildah \
  --deb "$deb" --data "$DATA_DIR" --tag "$TAG" cpu >"$WORK/build.log" 2>&1; then
  pass "scripts/build_image.sh cpu exits 0"
else
  fail "scripts/build_image.sh cpu failed: $(tail -15 "$WORK/build.log")"
  finish container
fi
size=$(buildah images --format '{{.Size}}' "$TAG" | head -1)
echo "-- image $TAG: built in $((SECONDS - start)) s (the debian:12 base included when made here), $size"
grep '^build_image:' "$WORK/build.log" | sed 's/^/-- /'

# --- run, as the image's user ------------------------------------------------------------------
ctr=$(buildah from --quiet "$TAG")
# in_image ARGS...: ARGS in the container, as the image's user; output to $WORK/out; sets STATUS.
# A start that the container runtime itself fails ("sealing memfd copy: Device or resource busy",
# seen once on a busy 2-core VM, before the command ran) is tried once more; the command's own
# failures are not.
in_image() {
  local attempt
  for attempt in 1 2; do
    STATUS=0
    timeout 300 buildah run --isolation chroot "$ctr" -- "$@" >"$WORK/out" 2>&1 || STATUS=$?
    if ((STATUS == 0 || attempt == 2)) || ! grep -q 'sealing memfd copy' "$WORK/out"; then
      return 0
    fi
    echo "-- the container runtime could not start '$*'; once more"
  done
}

in_image id -un
if [[ $STATUS -eq 0 && $(cat "$WORK/out") == mnist ]]; then pass "commands run as user mnist"
else fail "the image's user is not mnist: $(cat "$WORK/out")"; fi

# The image's own command (what `docker run mnist_ddp:cpu` runs).
mapfile -t cmd < <(buildah inspect --type image --format '{{range .OCIv1.Config.Cmd}}{{println .}}{{end}}' "$TAG" | sed '/^$/d')
in_image "${cmd[@]}"
if [[ $STATUS -eq 0 ]] && grep -q -- "--epochs" "$WORK/out"; then
  pass "the image's command (${cmd[*]}) exits 0 and explains the options"
else
  fail "the image's command (${cmd[*]}): exit $STATUS: $(head -5 "$WORK/out")"
fi

in_image mnist_ddp --version
if [[ $STATUS -eq 0 ]] && grep -q '^mnist_ddp ' "$WORK/out" && grep -q '^BLAS .*OpenBLAS' "$WORK/out"; then
  pass "mnist_ddp --version, with OpenBLAS: $(head -1 "$WORK/out")"
else
  fail "mnist_ddp --version in the image: exit $STATUS: $(cat "$WORK/out")"
fi
# The OpenBLAS core (Note [BLAS core]) is chosen in the image as on the host, whose OpenBLAS is
# the same Debian package.
image_core=$(sed -nE 's/^BLAS .*; (core .*)$/\1/p' "$WORK/out")
host_core=$("${MNIST_DDP_BIN:?}" --version | sed -nE 's/^BLAS .*; (core .*)$/\1/p')
if [[ -n $image_core && $image_core == "$host_core" ]]; then
  pass "the OpenBLAS core in the image as on the host: $image_core"
else
  fail "the OpenBLAS core in the image: '$image_core'; on the host: '$host_core'"
fi

# Real MNIST is in the image, and the default --data-dir finds it; one epoch of the linear model
# reaches about 90% (89.88% measured at 2 ranks).
in_image mpirun -np 2 mnist_ddp --epochs 1 --threads 1 --min-accuracy 0.89
if [[ $STATUS -eq 0 ]] && grep -q '^# final test_acc .*(.*/10000) OK' "$WORK/out"; then
  pass "mpirun -np 2 mnist_ddp --epochs 1 in the image: $(grep '^# final' "$WORK/out")"
else
  fail "mpirun -np 2 mnist_ddp --epochs 1 in the image: exit $STATUS"
  sed 's/^/  | /' "$WORK/out" | tail -20 >&2
fi

# The runtime stage is the package and its libraries: no compilers, no build tools.
# shellcheck disable=SC2016  # $tool is the image's shell's
in_image sh -c 'for tool in cc gcc c++ g++ cmake ninja; do command -v $tool || :; done'
if [[ -z $(cat "$WORK/out") ]]; then pass "no compiler or build tool in the image"
else fail "the image holds build tools: $(tr '\n' ' ' <"$WORK/out")"; fi

# --- the Slurm batch script's container mode ----------------------------------------------------
# As Apptainer runs an image: each rank in the image's root file system, with /proc, /dev and /sys,
# and the submit folder at its own path (the log and the checkpoints). srun --mpi=pmix starts the
# ranks and the image's Open MPI joins Slurm's PMIx server over TCP. The ranks run as root inside:
# Slurm's PMIx server takes clients of the job's user only, and this test's jobs are root's.
slurm_in_image() {
  local cluster=$MNIST_DDP_SOURCE_DIR/tests/slurm/cluster.sh rootfs submit log
  # One cluster at a time on a machine, shared with tests/slurm/test_slurm.sh.
  exec 9>/run/lock/mnist_ddp-slurm-test.lock
  flock -w 900 9 || {
    fail "another Slurm test holds /run/lock/mnist_ddp-slurm-test.lock"
    return
  }
  export SLURMCI_BASE=$WORK/slurmci SLURMCI_GPUS=0 SLURM_CONF=$WORK/slurmci/etc/slurm.conf
  CLUSTER_UP=1
  if ! { "$cluster" install && "$cluster" up single; } 9>&- >"$WORK/cluster.log" 2>&1; then
    fail "a one-node Slurm cluster did not start: $(tail -5 "$WORK/cluster.log")"
    return
  fi
  rootfs=$(buildah mount "$ctr")
  submit=$WORK/submit
  mkdir -p "$submit" "$rootfs$submit"
  for dir in /proc /dev /sys "$submit"; do
    mount --rbind "$dir" "$rootfs$dir" && MOUNTS+=("$rootfs$dir")
  done
  # The image's environment, which a chroot does not apply: its data folder and PATH.
  cat >"$WORK/in_image.sh" <<WRAPPER
#!/bin/bash
exec chroot "$rootfs" env --chdir="\$PWD" MNIST_DDP_DATA_DIR=/opt/mnist_ddp/data/mnist \\
  PATH=/usr/bin:/bin "\$@"
WRAPPER
  chmod +x "$WORK/in_image.sh"
  STATUS=0
  (cd "$submit" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    MNIST_DDP_WRAPPER=$WORK/in_image.sh MNIST_DDP_BIN=mnist_ddp timeout 300 sbatch --wait \
    --gpus-per-node=0 --ntasks-per-node=2 --cpus-per-task=1 --time=5 \
    "$MNIST_DDP_SOURCE_DIR/slurm/mnist_ddp.sbatch" --epochs 1 --min-accuracy 0.89) \
    >"$WORK/sbatch.log" 2>&1 || STATUS=$?
  log=$(find "$submit" -maxdepth 1 -name 'mnist_ddp-*.out' | head -1)
  if [[ $STATUS -eq 0 && -n $log ]] && grep -q '^# final test_acc .*(.*/10000) OK' "$log" &&
    grep -q 'srun --mpi=pmix .*in_image.sh mnist_ddp' "$log" &&
    grep -q 'data-dir *\/opt\/mnist_ddp\/data\/mnist' "$log"; then
    pass "the batch script with MNIST_DDP_WRAPPER, 2 ranks under srun in the image: $(grep '^# final' "$log")"
  else
    fail "the batch script in the image: sbatch exit $STATUS"
    sed 's/^/  | /' "$WORK/sbatch.log" ${log:+"$log"} | tail -25 >&2
  fi
}
slurm_in_image

finish container
