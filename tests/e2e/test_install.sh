#!/usr/bin/env bash
# Installing, as users of a CMake project expect: `cmake --install` into a prefix puts the two
# programs in bin/ and the batch script, the recipes and the READMEs in share/mnist_ddp/; the
# installed program trains with an installed recipe; and `cpack -G DEB` makes a Debian package
# with the same files under /usr, whose dependencies name the runtime libraries, and whose
# unpacked program runs.
source "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
: "${MNIST_DDP_BUILD_DIR:?set MNIST_DDP_BUILD_DIR to the build folder}"

PREFIX=$WORK/prefix
if cmake --install "$MNIST_DDP_BUILD_DIR" --prefix "$PREFIX" >"$WORK/install.log" 2>&1; then
  pass "cmake --install --prefix exits 0"
else
  fail "cmake --install failed: $(tail -3 "$WORK/install.log")"
fi
# expect_files ROOT KIND PATH...: each PATH under ROOT is a file (KIND: file) or an executable.
expect_files() {
  local root=$1 kind=$2 path
  shift 2
  for path in "$@"; do
    if [[ -f $root/$path && ($kind == file || -x $root/$path) ]]; then pass "$path installed"
    else fail "$root/$path missing or not $kind"; fi
  done
}
expect_files "$PREFIX" executable bin/mnist_ddp bin/allreduce_bench share/mnist_ddp/mnist_ddp.sbatch
expect_files "$PREFIX" file share/mnist_ddp/configs/mnist99.conf share/mnist_ddp/README.md \
  share/mnist_ddp/docs/options.md share/mnist_ddp/docs/gpu.md share/mnist_ddp/slurm/README.md \
  share/mnist_ddp/bench/README.md share/mnist_ddp/tests/gpu/README.md
# The installed README and docs link only to what is installed beside them.
if python3 "$MNIST_DDP_SOURCE_DIR/scripts/check_links.py" --links-only "$PREFIX/share/mnist_ddp" \
  >"$WORK/links.log" 2>&1; then
  pass "every link of the installed README.md and docs/*.md resolves"
else
  fail "broken links in the installed tree: $(head -5 "$WORK/links.log")"
fi

if "$PREFIX/bin/mnist_ddp" --version >"$WORK/out" 2>&1 && grep -q "^mnist_ddp " "$WORK/out"; then
  pass "the installed mnist_ddp --version: $(head -1 "$WORK/out")"
else
  fail "the installed mnist_ddp --version: $(head -3 "$WORK/out")"
fi
# The installed recipe, from the installed program, a few steps on Fashion-MNIST.
MNIST_DDP_BIN=$PREFIX/bin/mnist_ddp run_mpi 2 --config "$PREFIX/share/mnist_ddp/configs/mnist99.conf" \
  --data-dir "$FASHION_DIR" --max-steps 3 --threads 1
expect_exit 0 "the installed program with the installed recipe, 2 ranks"

# --- The Debian package ---------------------------------------------------------------------
if (cd "$WORK" && cpack -G DEB --config "$MNIST_DDP_BUILD_DIR/CPackConfig.cmake" -B "$WORK/pkg") \
  >"$WORK/cpack.log" 2>&1; then
  pass "cpack -G DEB exits 0"
else
  fail "cpack -G DEB failed: $(tail -5 "$WORK/cpack.log")"
fi
deb=$(find "$WORK/pkg" -maxdepth 1 -name 'mnist-ddp_*.deb' | head -1)
if [[ -n $deb ]]; then
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "-- Depends: $depends"
  if [[ $depends == *openmpi-bin* ]]; then pass "the package depends on openmpi-bin (mpirun)"
  else fail "the package's Depends lacks openmpi-bin: $depends"; fi
  dpkg-deb -x "$deb" "$WORK/unpacked"
  # Every library the program links directly is a dependency: each comes from a Debian package
  # (LibTorch, Open MPI, Boost.Program_options, protobuf, ...). NCCL and the CUDA runtime, which
  # no Debian package provides, are opened only when the NCCL backend is used (Note [The NCCL
  # backend loads its libraries]), so the package installs and runs on any Debian 12.
  while read -r library path; do
    # dpkg knows some libraries as /lib/..., others by the merged /usr's name /usr/lib/...
    owner=$(dpkg -S "$path" 2>/dev/null ||
      dpkg -S "$(readlink -f "$(dirname "$path")")/$(basename "$path")" 2>/dev/null) || owner=""
    owner=$(head -1 <<<"$owner")
    if [[ -z $owner ]]; then
      fail "the program links $library ($path), which no Debian package provides"
    elif [[ $depends == *"${owner%%:*}"* ]]; then
      pass "the package depends on ${owner%%:*} ($library)"
    else
      fail "the package's Depends lacks ${owner%%:*}, which provides $library"
    fi
  done < <(readelf -d "$WORK/unpacked/usr/bin/mnist_ddp" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
    while read -r needed; do
      echo "$needed $(ldd "$WORK/unpacked/usr/bin/mnist_ddp" | awk -v n="$needed" '$1 == n {print $3}')"
    done)
  expect_files "$WORK/unpacked" executable usr/bin/mnist_ddp usr/bin/allreduce_bench \
    usr/share/mnist_ddp/mnist_ddp.sbatch
  expect_files "$WORK/unpacked" file usr/share/mnist_ddp/configs/mnist99.conf
  if "$WORK/unpacked/usr/bin/mnist_ddp" --version >/dev/null 2>&1; then
    pass "the packaged mnist_ddp runs"
  else
    fail "the packaged mnist_ddp --version failed"
  fi
else
  fail "no mnist-ddp_*.deb in $WORK/pkg: $(ls "$WORK/pkg" 2>/dev/null)"
fi
finish e2e_install
