# tests/gpu/deps.sh — provides: the build dependencies of tests/gpu/run.sh, found on the system
# or unpacked from deps/debs: the build tools and the CUDA toolkit (GENERATOR, CXX_BIN,
# CUDA_ROOT), each dependency group probed the way CMakeLists.txt asks for it, the groups the
# system lacks unpacked into DEPS_ROOT and made usable where they lie (CMAKE_HINTS, PATH,
# LD_LIBRARY_PATH, OPAL_*), and an mpirun that starts processes (MPIRUN). Sourced by run.sh after
# its settings and helpers (say, die, LOG_DIR, DEBS_DIR, DEPS_ROOT, BUILD_DIR, MODE,
# TORCH_HAS_CUDA); it exits 2 naming what is missing.
# shellcheck shell=bash

missing_tools=()
command -v cmake >/dev/null 2>&1 || missing_tools+=("cmake (pip install cmake)")
GENERATOR=()
if command -v ninja >/dev/null 2>&1; then
  GENERATOR=(-G Ninja)
elif ! command -v make >/dev/null 2>&1; then
  missing_tools+=("ninja or make (pip install ninja)")
fi
CXX_BIN=${CXX:-g++}
command -v "$CXX_BIN" >/dev/null 2>&1 || missing_tools+=("a C++17 compiler ($CXX_BIN)")
CUDA_ROOT=""
nvcc_root=""
if command -v nvcc >/dev/null 2>&1; then nvcc_root=$(dirname "$(dirname "$(command -v nvcc)")"); fi
for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "$nvcc_root" /usr/local/cuda; do
  if [[ -n $dir && -x $dir/bin/nvcc && -f $dir/include/cuda_runtime_api.h ]]; then
    CUDA_ROOT=$dir
    break
  fi
done
if [[ -z $CUDA_ROOT ]]; then
  if ((TORCH_HAS_CUDA)) || [[ $MODE == full ]]; then
    missing_tools+=("the CUDA toolkit (nvcc and headers; set CUDA_HOME)")
  fi
else
  say "CUDA toolkit  $CUDA_ROOT ($("$CUDA_ROOT/bin/nvcc" --version | tail -1))"
fi
if ((${#missing_tools[@]})); then
  die 2 "missing (deps/debs does not bring these):$(printf '\n  - %s' "${missing_tools[@]}")"
fi

# What CMake finds, asked the way CMakeLists.txt asks: one throw-away project per attempt.
PROBE_DIR=$BUILD_DIR/dependency-probe
mkdir -p "$PROBE_DIR/src"
cat >"$PROBE_DIR/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(mnist_ddp_dependency_probe LANGUAGES CXX)
find_package(MPI QUIET COMPONENTS CXX)
find_package(Boost QUIET COMPONENTS program_options)
find_package(ZLIB QUIET)
find_package(nlohmann_json QUIET)
find_package(Protobuf QUIET)
find_package(doctest QUIET)
set(mpirun_ok FALSE)
if(MPIEXEC_EXECUTABLE)
  set(mpirun_ok TRUE)
endif()
set(protoc_ok FALSE)
if(Protobuf_FOUND AND Protobuf_PROTOC_EXECUTABLE)
  set(protoc_ok TRUE)
endif()
message(STATUS "probe mpi ${MPI_CXX_FOUND} ${MPI_CXX_COMPILER} ${MPI_CXX_INCLUDE_DIRS}")
message(STATUS "probe mpirun ${mpirun_ok} ${MPIEXEC_EXECUTABLE}")
message(STATUS "probe boost ${Boost_FOUND} ${Boost_VERSION} ${Boost_INCLUDE_DIRS}")
message(STATUS "probe zlib ${ZLIB_FOUND} ${ZLIB_INCLUDE_DIRS}")
message(STATUS "probe json ${nlohmann_json_FOUND} ${nlohmann_json_DIR}")
message(STATUS "probe protobuf ${protoc_ok} ${Protobuf_VERSION} ${Protobuf_PROTOC_EXECUTABLE}")
message(STATUS "probe doctest ${doctest_FOUND} ${doctest_DIR}")
EOF
# The dependency groups: what each provides and the Debian packages that bring it.
DEP_GROUPS=(mpi mpirun boost zlib json protobuf doctest)
declare -A GROUP_NAME=(
  [mpi]="Open MPI headers and libraries (mpicxx)" [mpirun]="mpirun"
  [boost]="Boost.Program_options" [zlib]="zlib headers" [json]="nlohmann-json"
  [protobuf]="protobuf (protoc, headers, libprotobuf)" [doctest]="doctest"
)
declare -A GROUP_APT=(
  [mpi]="libopenmpi-dev openmpi-bin" [mpirun]="openmpi-bin"
  [boost]="libboost-program-options-dev" [zlib]="zlib1g-dev" [json]="nlohmann-json3-dev"
  [protobuf]="libprotobuf-dev protobuf-compiler" [doctest]="doctest-dev"
)
CMAKE_HINTS=()
declare -A FOUND=()

# Runs the probe with CMAKE_HINTS; fills FOUND[group] with 1 or 0 and logs what was found where.
probe() {
  local log=$LOG_DIR/probe-$1.log
  rm -rf "$PROBE_DIR/build"
  if ! cmake -S "$PROBE_DIR/src" -B "$PROBE_DIR/build" "${GENERATOR[@]}" "${CMAKE_HINTS[@]}" \
    >"$log" 2>&1; then
    tail -20 "$log" >&2
    die 2 "the dependency probe did not configure (log: $log)"
  fi
  local group ok rest
  for group in "${DEP_GROUPS[@]}"; do
    read -r ok rest < <(sed -n "s/^-- probe $group //p" "$log")
    if [[ $ok =~ ^(1|TRUE|ON|YES)$ ]]; then
      FOUND[$group]=1
      say "$(printf '%-40s found   %s' "${GROUP_NAME[$group]}" "$rest")"
    else
      FOUND[$group]=0
      say "$(printf '%-40s MISSING' "${GROUP_NAME[$group]}")"
    fi
  done
}

# The .deb files of a group, by package name.
debs_of_group() {
  local deb pkg
  for deb in "$DEBS_DIR"/*.deb; do
    [[ -e $deb ]] || continue
    pkg=$(basename "$deb")
    pkg=${pkg%%_*}
    case $pkg in
      libboost*) [[ $1 == boost ]] && echo "$deb" ;;
      nlohmann-json*) [[ $1 == json ]] && echo "$deb" ;;
      zlib1g-dev) [[ $1 == zlib ]] && echo "$deb" ;;
      libprotobuf* | libprotoc* | protobuf-compiler) [[ $1 == protobuf ]] && echo "$deb" ;;
      doctest*) [[ $1 == doctest ]] && echo "$deb" ;;
      *) [[ $1 == mpi ]] && echo "$deb" ;;
    esac
  done
}

# Base libraries (and those needing a newer glibc than some systems have) that are used from the
# debs only where the system lacks them, so that no newer system copy is shadowed.
declare -A SYSTEM_FIRST=()
for pkg in libnuma1 libudev1 libuuid1 libatomic1 zlib1g libevent-core-2.1-7 libevent-pthreads-2.1-7; do
  SYSTEM_FIRST[$pkg]=1
done
ARCH_LIB=usr/lib/x86_64-linux-gnu

# Unpacks a group's debs into DEPS_ROOT (once: a stamp lists what was unpacked).
unpack_group() {
  local group=$1 deb pkg stamp=$DEPS_ROOT/.unpacked-$1
  local -a debs
  mapfile -t debs < <(debs_of_group "$group")
  ((${#debs[@]})) || return 1
  if [[ -f $stamp ]] && [[ $(cat "$stamp") == "$(printf '%s\n' "${debs[@]##*/}")" ]]; then
    return 0
  fi
  mkdir -p "$DEPS_ROOT/$ARCH_LIB" "$DEPS_ROOT/system-first"
  for deb in "${debs[@]}"; do
    pkg=$(basename "$deb")
    pkg=${pkg%%_*}
    if [[ -n ${SYSTEM_FIRST[$pkg]:-} ]]; then
      dpkg -x "$deb" "$DEPS_ROOT/system-first"
    else
      dpkg -x "$deb" "$DEPS_ROOT"
    fi
  done
  printf '%s\n' "${debs[@]##*/}" >"$stamp"
}

# Makes the unpacked tree usable where it lies: the links Debian's maintainer scripts and
# update-alternatives would make, and the system-first libraries the system lacks.
finish_deps_root() {
  local lib dir name soname target cache
  # Read whole (a reader that stops early would fail the pipe under pipefail).
  cache=$( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null || true)
  # Base libraries: link each shared object into the tree only if the loader has no such soname.
  for dir in "$DEPS_ROOT/system-first/lib/x86_64-linux-gnu" "$DEPS_ROOT/system-first/$ARCH_LIB"; do
    [[ -d $dir ]] || continue
    for lib in "$dir"/lib*.so.*; do
      [[ -e $lib ]] || continue
      name=$(basename "$lib")
      soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
      [[ $name == "$soname" ]] || continue
      if grep -q "^[[:space:]]*$soname " <<<"$cache"; then
        rm -f "$DEPS_ROOT/$ARCH_LIB/$soname"
      else
        ln -sfn "$lib" "$DEPS_ROOT/$ARCH_LIB/$soname"
        say "using $soname from the debs (the system has none)"
      fi
    done
  done
  # Absolute development links (libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) point at the
  # library the loader finds.
  for lib in "$DEPS_ROOT/$ARCH_LIB"/lib*.so; do
    [[ -L $lib ]] || continue
    target=$(readlink "$lib")
    [[ $target == /* ]] || continue
    name=$(basename "$target")
    soname=$(sed -E 's/^(.*\.so\.[0-9]+).*/\1/' <<<"$name")
    if [[ -e $DEPS_ROOT/$ARCH_LIB/$soname ]]; then
      ln -sfn "$soname" "$lib"
    elif target=$(awk -v s="$soname" '$1 == s && /x86-64/ { print $NF; exit }' <<<"$cache") \
         && [[ -n $target ]]; then
      ln -sfn "$target" "$lib"
    fi
  done
  # update-alternatives' links.
  if [[ -e $DEPS_ROOT/usr/lib/libpsm1/libpsm_infinipath.so.1.16 ]]; then
    ln -sfn ../libpsm1/libpsm_infinipath.so.1.16 "$DEPS_ROOT/$ARCH_LIB/libpsm_infinipath.so.1"
  fi
  for name in mpirun mpiexec mpicxx mpic++ mpicc; do
    [[ -e $DEPS_ROOT/usr/bin/$name.openmpi ]] && ln -sfn "$name.openmpi" "$DEPS_ROOT/usr/bin/$name"
  done
  return 0
}

# Points the environment and CMake at the unpacked groups.
use_deps_root() {
  local usr=$DEPS_ROOT/usr lib=$DEPS_ROOT/$ARCH_LIB
  # (libnl-3 is one of the packages that install into /lib.)
  LD_LIBRARY_PATH="$lib:$lib/openmpi/lib:$lib/pmix2/lib:$DEPS_ROOT/lib/x86_64-linux-gnu"
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH${ORIG_LD_LIBRARY_PATH:+:$ORIG_LD_LIBRARY_PATH}"
  if [[ -n ${USED[mpi]:-} ]]; then
    export PATH="$usr/bin:$PATH"
    # Debian's Open MPI, relocated: its prefix, and the folders Debian puts outside it.
    export OPAL_PREFIX=$usr
    export OPAL_SYSCONFDIR=$DEPS_ROOT/etc/openmpi
    export OPAL_LIBDIR=$lib/openmpi/lib
    export OPAL_INCLUDEDIR=$lib/openmpi/include
    export OPAL_PKGLIBDIR=$lib/openmpi/lib/openmpi3
    export OPAL_PKGDATADIR=$usr/share/openmpi
    # PMIx (an external library in Debian) and its plugins.
    export PMIX_INSTALL_PREFIX=$lib/pmix2
    export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix
    CMAKE_HINTS+=("-DMPI_CXX_COMPILER=$usr/bin/mpicxx.openmpi"
                  "-DMPIEXEC_EXECUTABLE=$usr/bin/mpirun.openmpi")
  fi
  [[ -n ${USED[boost]:-} ]] && CMAKE_HINTS+=("-DBoost_DIR=$lib/cmake/Boost-1.74.0")
  [[ -n ${USED[zlib]:-} ]] && CMAKE_HINTS+=("-DZLIB_ROOT=$usr" "-DZLIB_INCLUDE_DIR=$usr/include"
                                            "-DZLIB_LIBRARY=$lib/libz.so")
  [[ -n ${USED[json]:-} ]] && CMAKE_HINTS+=("-Dnlohmann_json_DIR=$usr/share/cmake/nlohmann_json")
  if [[ -n ${USED[protobuf]:-} ]]; then
    CMAKE_HINTS+=("-DProtobuf_PROTOC_EXECUTABLE=$usr/bin/protoc"
                  "-DProtobuf_INCLUDE_DIR=$usr/include"
                  "-DProtobuf_LIBRARY=$lib/libprotobuf.so"
                  "-DProtobuf_PROTOC_LIBRARY=$lib/libprotoc.so")
  fi
  [[ -n ${USED[doctest]:-} ]] && CMAKE_HINTS+=("-Ddoctest_DIR=$usr/lib/cmake/doctest")
  return 0
}

declare -A USED=()
if [[ ${GPU_CHECK_USE_DEBS:-0} == 1 ]]; then
  say "GPU_CHECK_USE_DEBS=1: every dependency from $DEBS_DIR"
  for group in "${DEP_GROUPS[@]}"; do FOUND[$group]=0; done
else
  probe system
fi
missing=()
for group in "${DEP_GROUPS[@]}"; do
  ((FOUND[$group])) || missing+=("$group")
done
if ((${#missing[@]})); then
  # mpirun comes with the MPI group; the debs' zlib headers are also needed by nothing else.
  want=()
  for group in "${missing[@]}"; do
    [[ $group == mpirun ]] && group=mpi
    [[ " ${want[*]} " == *" $group "* ]] || want+=("$group")
  done
  have_debs=0
  compgen -G "$DEBS_DIR/*.deb" >/dev/null && have_debs=1
  if ((have_debs)) && command -v dpkg >/dev/null 2>&1; then
    say "unpacking $(printf '%s ' "${want[@]}")from $DEBS_DIR into $DEPS_ROOT"
    for group in "${want[@]}"; do
      if unpack_group "$group"; then
        USED[$group]=1
      else
        say "no .deb of group '$group' in $DEBS_DIR"
      fi
    done
    finish_deps_root
    use_deps_root
    say "glibc $(ldd --version 2>/dev/null | head -1 | grep -o '[0-9.]*$');" \
        "the debs are Debian 12's and need glibc 2.36"
    probe debs
    missing=()
    for group in "${DEP_GROUPS[@]}"; do
      ((FOUND[$group])) || missing+=("$group")
    done
  elif ((have_debs)); then
    say "dpkg is not installed: cannot unpack $DEBS_DIR"
  fi
fi
if ((${#missing[@]})); then
  apt_names=()
  for group in "${missing[@]}"; do apt_names+=("${GROUP_APT[$group]}"); done
  {
    echo "gpu check: error: missing:"
    for group in "${missing[@]}"; do echo "  - ${GROUP_NAME[$group]}"; done
    if compgen -G "$DEBS_DIR/*.deb" >/dev/null; then
      echo "The .deb files in $DEBS_DIR did not provide them (probe log: $LOG_DIR/probe-debs.log)."
    else
      echo "No .deb files in $DEBS_DIR (GPU_CHECK_DEBS). To bring them to a machine"
      echo "without network: on a Debian 12 (bookworm) machine with network run"
      echo "  scripts/pack_debian_deps.sh deps/debs"
      echo "  then copy deps/debs (about 22 MB) into this repository and run this script again;"
      echo "  it unpacks them with dpkg -x into deps/root."
    fi
    echo "Or install them (Debian/Ubuntu): apt-get install ${apt_names[*]}"
  } >&2
  exit 2
fi

# The relocated Open MPI must start processes before anything is built on it.
if [[ -n ${USED[mpi]:-} ]]; then
  MPIRUN=$DEPS_ROOT/usr/bin/mpirun.openmpi
else
  MPIRUN=$(sed -n 's/^-- probe mpirun [A-Z0-9]* //p' "$LOG_DIR/probe-system.log")
fi
say "mpirun        $MPIRUN"
if ! timeout 60 "$MPIRUN" -np 2 --oversubscribe uname -n >"$LOG_DIR/mpirun-hostname.log" 2>&1; then
  cat "$LOG_DIR/mpirun-hostname.log" >&2
  die 2 "'$MPIRUN -np 2 uname -n' failed (log above)"
fi
say "mpirun -np 2 uname -n: $(sort "$LOG_DIR/mpirun-hostname.log" | uniq -c | xargs)"
{
  echo "PATH=$PATH"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  env | grep -E '^(OPAL_|PMIX_|OMPI_MCA_)' | sort || true
  if ((${#CMAKE_HINTS[@]})); then printf 'cmake hint: %s\n' "${CMAKE_HINTS[@]}"; fi
} | tee "$LOG_DIR/environment.log" | sed 's/^/#   /'
