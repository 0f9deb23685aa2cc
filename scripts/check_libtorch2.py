#!/usr/bin/env python3
"""scripts/check_libtorch2.py — provides: the check that every C++ source of a build compiles
against the headers of a LibTorch 2.x with CUDA, with CUDA graphs and the NCCL backend built in.

Debian 12's LibTorch is 1.13 and has no CUDA, so a normal build here never compiles the code
that only a LibTorch 2.x with CUDA reaches (the CUDA graph capture, the 2.x branches of version
checks), and nothing else would notice an API that 2.x removed or deprecated before a GPU
machine builds it. This check takes each command of the build's compile_commands.json, swaps
LibTorch's include folders for the 2.x ones, defines MNIST_DDP_CUDA_GRAPHS=1,
MNIST_DDP_HAVE_NCCL=1 and MNIST_DDP_TORCH_CUDA=1, adds the CUDA toolkit's headers, drops the
precompiled header (so every source must include what it uses) and compiles it with
-fsyntax-only -Werror: a deprecated call fails too. A source that still reaches a LibTorch header
outside the 2.x folders (the system's 1.13 copy of a header that 2.x no longer has) fails as well,
naming the header.

The headers come from a Debian package, fetched once with apt from a private package list (the
archive's signatures are checked as for any apt download) into BUILD_DIR/libtorch2/SUITE:
- --suite trixie (the default): Debian 13's libtorch-cuda-dev, LibTorch 2.6 built with CUDA
  (about 2.4 MB);
- --suite sid: Debian unstable's libtorch-dev, its newest LibTorch (2.14 in December 2026; about
  3 MB). That build has no CUDA, so its headers lack the one header a CUDA build generates,
  c10/cuda/impl/cuda_cmake_macros.h; the check supplies it as a CUDA build writes it.
Or from --headers, e.g. a PyTorch wheel's torch/include.

Nearly all of the time goes to parsing LibTorch's headers again for every source (14-27 s per
source that includes <torch/...> on 2 cores). With --unity the sources of each target (those
with the same compile command) are #included one after another into one unit, which starts, as
the build does, with the target's precompiled header; the headers are then parsed once per
unit. What it gives up: a source that leans on an include of a source before it in its unit goes
unseen here; the sanitizer build (scripts/sanitize.sh) compiles every source alone. A unit that
fails is split in halves until each error is named by its source: two sources that define the
same internal name clash only in one unit, and pass once apart. A unity build's
compile_commands.json names CMake's unity sources; the check reads the sources they include.

    scripts/check_libtorch2.py [--build-dir DIR] [--suite trixie|sid | --headers DIR] [--cuda DIR]
                               [--jobs N] [--files REGEX] [--unity] [--replace SOURCE=FILE]...
    scripts/check_libtorch2.py --link [--build-dir DIR] [--cuda DIR]

--link builds instead: mnist_ddp and allreduce_bench compiled and linked against Debian 13's
LibTorch 2.6 with CUDA, its libraries fetched too (480 MB), in BUILD_DIR/libtorch2/trixie/
link-build; a link error in the code that only such a LibTorch reaches (the CUDA graph capture,
the NCCL backend's) shows here, not on a GPU machine. Nothing there runs: LibTorch's CUDA 12
libraries need runtimes this machine lacks. About 3 minutes on 2 cores, so not in CI.

Exit 0: every source compiles; 1: some do not (each named, with its first errors); 2: bad usage;
77: something the check needs is missing here (no compile_commands.json, CUDA headers, apt or
the archive), which under CI (CI set) is exit 1 instead.
"""
import argparse
import concurrent.futures
import functools
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = 77
# Per suite: the archive's component and the package with LibTorch's headers. Debian 13 builds
# LibTorch with CUDA in contrib; unstable has only the CPU build, but it is the newest LibTorch.
# --link also unpacks Debian 13's libraries of the CUDA build (480 MB, 1.4 GB unpacked).
LINK_SUITE, LINK_PACKAGE = "trixie", "libtorch-cuda-2.6"
# Configure arguments of the --link build: CUDA 13 no longer has NVTX 2, whose target LibTorch
# 2.6's CMake files still name (CMAKE_PROJECT_INCLUDE defines an empty one); LibTorch's CUDA 12
# libraries need CUDA 12 runtimes that are not here, which only they reference.
LINK_ARGUMENTS = ["-DCMAKE_BUILD_TYPE=Release", "-DMNIST_DDP_NCCL=ON",
                  "-DMNIST_DDP_CUDA_GRAPHS=ON", "-DMNIST_DDP_BUILD_TESTS=OFF",
                  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined"]
LINK_TARGETS = ["mnist_ddp", "allreduce_bench"]
DEBIAN_SUITES = {"trixie": ("contrib", "libtorch-cuda-dev"), "sid": ("main", "libtorch-dev")}
# The header that configuring LibTorch with CUDA generates, and what it holds there.
CUDA_MACROS_HEADER = "c10/cuda/impl/cuda_cmake_macros.h"
CUDA_MACROS = "#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n"
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
# Folders of LibTorch's headers, by the top folder of an include: a dependency under one of
# these that is not inside the 2.x headers is the 1.13 copy.
LIBTORCH_TOPS = ("ATen", "c10", "torch", "caffe2")
# Inside a LibTorch include root; TORCH_VERSION_MAJOR and _MINOR, in the first header up to 2.9
# and in the second (which the first includes) from 2.10 on.
VERSION_HEADER = "torch/csrc/api/include/torch/version.h"
HEADER_ONLY_VERSION_HEADER = "torch/headeronly/version.h"
# What CMake names the sources that a unity build compiles in place of batches of sources.
UNITY_SOURCE = re.compile(r"/Unity/unity_[0-9]+_cxx\.cxx$")


class Missing(Exception):
    """Something the check needs is not on this machine (exit 77, or 1 under CI)."""


def fetch_debian_headers(destination: pathlib.Path, mirror: str, suite: str) -> pathlib.Path:
    """Unpacks `suite`'s LibTorch -dev package into `destination` (once) and returns its include
    root, with the CUDA build's generated header added where the package lacks it."""
    component, package_name = DEBIAN_SUITES[suite]
    include = destination / "root/usr/include"
    if (include / VERSION_HEADER).is_file():
        return include
    package = fetch_debian_package(destination, mirror, suite, component, package_name)
    unpacked = destination / "root.partial"
    shutil.rmtree(unpacked, ignore_errors=True)
    subprocess.run(["dpkg-deb", "-x", str(package), str(unpacked)], check=True)
    macros = unpacked / "usr/include" / CUDA_MACROS_HEADER
    if not macros.is_file():
        macros.parent.mkdir(parents=True, exist_ok=True)
        macros.write_text(CUDA_MACROS)
    shutil.rmtree(destination / "root", ignore_errors=True)
    unpacked.rename(destination / "root")
    print(f"check_libtorch2: headers from {package.name}")
    return include


def fetch_debian_package(destination: pathlib.Path, mirror: str, suite: str, component: str,
                         package_name: str) -> pathlib.Path:
    """Downloads `package_name` of `suite` into `destination`/apt/download (once) with apt's
    checks of the archive's signatures, and returns the .deb file."""
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise Missing(f"{tool} is not installed (it fetches Debian's {package_name})")
    if not pathlib.Path(DEBIAN_KEYRING).is_file():
        raise Missing(f"{DEBIAN_KEYRING} is missing (package debian-archive-keyring)")
    apt = destination / "apt"
    for folder in ("lists/partial", "cache/archives/partial", "sources.list.d", "download"):
        (apt / folder).mkdir(parents=True, exist_ok=True)
    sources = apt / "sources.list"
    sources.write_text(f"deb [signed-by={DEBIAN_KEYRING}] {mirror} {suite} {component}\n")
    # Only this list: the machine's own package lists and preferences stay out of it.
    options = [
        f"-oDir::Etc::SourceList={sources}", f"-oDir::Etc::SourceParts={apt}/sources.list.d",
        f"-oDir::State::Lists={apt}/lists", f"-oDir::Cache={apt}/cache",
        "-oDir::Etc::Preferences=/dev/null", f"-oDir::Etc::PreferencesParts={apt}/sources.list.d",
        "-oDebug::NoLocking=1", "-oAPT::Sandbox::User=root", "-oAcquire::Retries=2",
        "-oAcquire::http::Timeout=20", "-qq",
        # Unstable's Release file is valid for a week only, and a mirror that is a frozen copy
        # of the archive outlives that; the signatures are checked all the same.
        f"-oAcquire::Check-Valid-Until={'false' if suite == 'sid' else 'true'}",
    ]
    downloaded = list((apt / "download").glob(f"{package_name}_*.deb"))
    if downloaded:
        return downloaded[0]
    for step in (["update"], ["download", package_name]):
        result = subprocess.run(["apt-get", *options, *step], cwd=apt / "download",
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise Missing(f"apt-get {' '.join(step)} from {mirror} {suite} failed: "
                          f"{(result.stderr or result.stdout).strip()}")
    return next((apt / "download").glob(f"{package_name}_*.deb"))


def link(destination: pathlib.Path, mirror: str, cuda: str) -> int:
    """Builds and links LINK_TARGETS against Debian 13's LibTorch 2.6 with CUDA, its headers and
    libraries unpacked into `destination`, in `destination`/link-build."""
    fetch_debian_headers(destination, mirror, LINK_SUITE)
    root = destination / "root"
    libraries = root / "usr/lib/x86_64-linux-gnu"
    if not (libraries / "libtorch_cuda.so").resolve().is_file():
        package = fetch_debian_package(destination, mirror, LINK_SUITE,
                                       DEBIAN_SUITES[LINK_SUITE][0], LINK_PACKAGE)
        subprocess.run(["dpkg-deb", "-x", str(package), str(root)], check=True)
        print(f"check_libtorch2: libraries from {package.name}")
    tree = destination / "link-build"
    stub = destination / "nvtx-stub.cmake"
    stub.write_text("add_library(CUDA::nvToolsExt INTERFACE IMPORTED)\n")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(ROOT), "-B", str(tree), *generator, *LINK_ARGUMENTS,
                 f"-DCMAKE_PROJECT_INCLUDE={stub}", f"-DTorch_DIR={libraries}/cmake/Torch",
                 f"-DCaffe2_DIR={libraries}/cmake/Caffe2", f"-DCMAKE_LIBRARY_PATH={libraries}",
                 f"-DCUDAToolkit_ROOT={cuda}"]
    for step in (configure, ["cmake", "--build", str(tree), "--target", *LINK_TARGETS]):
        result = subprocess.run(step, capture_output=True, text=True)
        if result.returncode != 0:
            print((result.stdout + result.stderr)[-6000:], file=sys.stderr)
            print(f"check_libtorch2: {shlex.join(step[:3])} failed against LibTorch 2.6 with "
                  "CUDA", file=sys.stderr)
            return 1
    print(f"check_libtorch2: {' and '.join(LINK_TARGETS)} built and linked against LibTorch 2.6 "
          f"with CUDA ({libraries}), with CUDA graphs and NCCL, in {tree}")
    return 0


def torch_version(include: pathlib.Path) -> tuple:
    text = "".join(
        (include / header).read_text() for header in (VERSION_HEADER, HEADER_ONLY_VERSION_HEADER)
        if (include / header).is_file())
    parts = [re.search(rf"#define TORCH_VERSION_{name} (\d+)", text) for name in ("MAJOR", "MINOR")]
    if None in parts:
        raise SystemExit(f"check_libtorch2: no version in {include / VERSION_HEADER}")
    return tuple(int(part.group(1)) for part in parts)


def is_libtorch_include_root(folder: str) -> bool:
    path = pathlib.Path(folder)
    return (path / "torch/torch.h").is_file() or (path / "ATen/ATen.h").is_file()


def rewrite(arguments: list, include: pathlib.Path, cuda_include: str, cxx20: bool,
            depfile: str) -> list:
    """The build's compile command as a syntax check against the 2.x headers."""
    out = [arguments[0], f"-isystem{include}", f"-isystem{include}/torch/csrc/api/include",
           f"-isystem{cuda_include}"]
    words = arguments[1:]
    i = 0
    while i < len(words):
        word, following = words[i], words[i + 1] if i + 1 < len(words) else ""
        i += 1
        if word in ("-o", "-MF", "-MT", "-MQ") or (word == "-include" and "cmake_pch" in following):
            i += 1  # the output, the dependency file, or the precompiled header: dropped
        elif word in ("-c", "-MD", "-MMD", "-Winvalid-pch"):
            pass
        elif word in ("-I", "-isystem"):
            i += 1
            if not is_libtorch_include_root(following):
                out += [word, following]
        elif re.match(r"-(I|isystem)", word) and is_libtorch_include_root(
                re.sub(r"^-(I|isystem)", "", word)):
            pass
        elif cxx20 and re.fullmatch(r"-std=(c|gnu)\+\+17", word):
            out.append(word.replace("17", "20"))
        else:
            out.append(word)
    return out + ["-fsyntax-only", "-Werror", "-DMNIST_DDP_CUDA_GRAPHS=1",
                  "-DMNIST_DDP_HAVE_NCCL=1", "-DMNIST_DDP_TORCH_CUDA=1", "-MD", "-MF", depfile]


def foreign_headers(depfile: str, include: pathlib.Path) -> list:
    """LibTorch headers the source reached outside the 2.x include root."""
    text = pathlib.Path(depfile).read_text().replace("\\\n", " ")
    paths = text.split(":", 1)[1].split() if ":" in text else []
    foreign = []
    for path in paths:
        resolved = pathlib.Path(path).resolve()
        if resolved.is_relative_to(include.resolve()):
            continue
        if any(f"/{top}/" in str(resolved) for top in LIBTORCH_TOPS) and \
                not resolved.is_relative_to(ROOT):
            foreign.append(str(resolved))
    return foreign


def compile_problem(command: list, directory: str, depfile: str, include: pathlib.Path):
    """None when `command` compiles without reaching a 1.13 header, else what went wrong."""
    result = subprocess.run(command, cwd=directory, capture_output=True, text=True)
    if result.returncode != 0:
        errors = [line for line in result.stderr.splitlines()
                  if re.search(r"(error|warning):", line)] or result.stderr.splitlines()
        return "\n".join(errors[:5])
    foreign = foreign_headers(depfile, include)
    if foreign:
        return "reaches LibTorch headers outside the 2.x ones: " + ", ".join(foreign[:3])
    return None


def source_of(entry: dict) -> pathlib.Path:
    """The entry's source, resolved as --replace names are."""
    return pathlib.Path(entry["file"]).resolve()


def arguments_of(entry: dict) -> list:
    return entry.get("arguments") or shlex.split(entry["command"])


def without_unity_sources(entries: list) -> list:
    """The entries, with each unity source of a CMake unity build replaced by the sources it
    #includes, each compiled with its command."""
    sources = []
    for entry in entries:
        if not UNITY_SOURCE.search(entry["file"]):
            sources.append(entry)
            continue
        text = pathlib.Path(entry["file"]).read_text()
        for path in re.findall(r'^#include "(.+)"$', text, re.MULTILINE):
            arguments = [path if word == entry["file"] else word for word in arguments_of(entry)]
            sources.append({"directory": entry["directory"], "file": path,
                            "arguments": arguments})
    return sources


def scratch_name(scratch: str, name: str, suffix: str) -> str:
    return os.path.join(scratch, re.sub(r"[^A-Za-z0-9_.]", "_", name) + suffix)


def check_source(entry: dict, include: pathlib.Path, cuda_include: str, cxx20: bool,
                 replacement: str, scratch: str):
    """(source, None) when it compiles, else (source, what went wrong)."""
    source = entry["file"]
    depfile = scratch_name(scratch, source, ".d")
    command = rewrite(arguments_of(entry), include, cuda_include, cxx20, depfile)
    if replacement:
        # The planted copy compiles in the original's place, its quoted includes resolved from
        # the original's folder.
        command = [replacement if word == source else word for word in command]
        command.insert(1, f"-iquote{os.path.dirname(source)}")
    return source, compile_problem(command, entry["directory"], depfile, include)


def target_of(entry: dict) -> str:
    """The CMake target a compile command belongs to: its object's folder, up to NAME.dir."""
    arguments = arguments_of(entry)
    output = arguments[arguments.index("-o") + 1] if "-o" in arguments else entry["file"]
    return output.split(".dir/")[0] if ".dir/" in output else output


def precompiled_header(entry: dict) -> str:
    """The precompiled header the build puts before the source ("" for none)."""
    arguments = arguments_of(entry)
    return next((following for word, following in zip(arguments, arguments[1:])
                 if word == "-include" and "cmake_pch" in following), "")


def combined_units(entries: list) -> list:
    """The sources grouped by target, precompiled header and identical compile command (less the
    source and its outputs), each group one unit."""
    groups = {}
    for entry in entries:
        flags = tuple(word for word in rewrite(arguments_of(entry), pathlib.Path(), "", False, "")
                      if word != entry["file"])
        key = (entry["directory"], target_of(entry), precompiled_header(entry), flags)
        groups.setdefault(key, []).append(entry)
    return list(groups.values())


def check_combined(name: str, entries: list, *, include: pathlib.Path, cuda_include: str,
                   cxx20: bool, replacements: dict, scratch: str):
    """(entries, None) when the sources, #included one after another into one unit, compile
    together, else (entries, what went wrong). The headers are then parsed once for all of them,
    which is where nearly all of the time goes."""
    first = entries[0]
    unit, depfile = scratch_name(scratch, name, ".cpp"), scratch_name(scratch, name, ".d")
    included, quoted = [], []
    for entry in entries:
        replacement = replacements.get(source_of(entry))
        included.append(replacement or entry["file"])
        if replacement:
            quoted.append(f"-iquote{os.path.dirname(entry['file'])}")
    # The unit starts as the build starts each of these sources: with the text of their
    # precompiled header (<torch/torch.h>), so LibTorch's headers come before doctest's, whose
    # CHECK macro must win over c10's (cmake/torch_pch.cmake).
    header = precompiled_header(first)
    prefix = [line for line in pathlib.Path(header).read_text().splitlines()
              if line != "#pragma GCC system_header"] if header else []
    pathlib.Path(unit).write_text("\n".join(prefix + [f'#include "{path}"' for path in included]))
    command = rewrite(arguments_of(first), include, cuda_include, cxx20, depfile)
    # In one unit every source is an included file, for which GCC warns about a class with a
    # member of a type from an unnamed namespace; as the main file of its own unit it may.
    command = [command[0], *quoted] + [unit if word == first["file"] else word
                                       for word in command[1:]] + ["-Wno-subobject-linkage"]
    return entries, compile_problem(command, first["directory"], depfile, include)


def check_units(units: list, pool, check) -> list:
    """Checks every unit of several sources with check(name, sources). A unit that fails is split
    in two and each half checked again: the error may be one source's, or only two sources
    meeting in one unit (the same internal name in both), and halving finds a clash in a few
    more units instead of one compile per source. Returns the sources to check one by one: those
    alone in their unit from the start, and those a failing unit was split down to."""
    alone = [unit[0] for unit in units if len(unit) == 1]
    pending = [unit for unit in units if len(unit) > 1]
    checked = 0
    while pending:
        names = [f"unit{checked + index}" for index in range(len(pending))]
        checked += len(pending)
        results = list(pool.map(check, names, pending))
        pending = []
        for unit, problem in results:
            if not problem:
                continue
            print(f"check_libtorch2: {target_of(unit[0])}: {len(unit)} sources in one unit fail "
                  f"({problem.splitlines()[0]}); checking them in halves")
            for half in (unit[:len(unit) // 2], unit[len(unit) // 2:]):
                if len(half) > 1:
                    pending.append(half)
                else:
                    alone.extend(half)
    return alone


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Compile every source of a build against LibTorch 2.x headers with CUDA "
                    "(syntax only, CUDA graphs and NCCL on).")
    parser.add_argument("--build-dir", default=os.environ.get("BUILD_DIR", str(ROOT / "build")),
                        help="the build with compile_commands.json (default: build/)")
    parser.add_argument("--suite", choices=sorted(DEBIAN_SUITES), default="trixie",
                        help="the Debian suite whose LibTorch headers to fetch into "
                        "BUILD_DIR/libtorch2/SUITE: trixie (2.6 with CUDA) or sid (the newest)")
    parser.add_argument("--headers", help="a LibTorch 2.x include root, instead of --suite's")
    parser.add_argument("--mirror", help="the Debian archive to fetch from (default: the one "
                        "apt uses here, scripts/debian_mirror.sh)")
    parser.add_argument("--cuda", default=os.environ.get("CUDA_HOME", "/usr/local/cuda"),
                        help="the CUDA toolkit (its include/ folder is used)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--files", default="", help="only sources whose path matches this regex")
    parser.add_argument("--unity", action="store_true",
                        help="compile the sources of each target as one unit (each #included in "
                        "turn), checking them one by one only where that unit fails: several "
                        "times faster, but a source that leans on an include of an earlier one "
                        "goes unseen")
    parser.add_argument("--link", action="store_true",
                        help="instead: build and link mnist_ddp and allreduce_bench against "
                        "Debian 13's LibTorch 2.6 with CUDA, its libraries included (480 MB)")
    parser.add_argument("--replace", action="append", default=[], metavar="SOURCE=FILE",
                        help="compile FILE with SOURCE's command instead (a testing aid)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1 (got {args.jobs})")
    try:
        re.compile(args.files)
    except re.error as error:
        parser.error(f"--files {args.files!r} is not a regular expression: {error}")
    replacements = {}
    for pair in args.replace:
        source, _, copy = pair.partition("=")
        if not copy:
            parser.error(f"--replace takes SOURCE=FILE (got {pair!r})")
        replacements[pathlib.Path(source).resolve()] = str(pathlib.Path(copy).resolve())

    build = pathlib.Path(args.build_dir).resolve()
    try:
        database = build / "compile_commands.json"
        if not database.is_file():
            raise Missing(f"{database} is missing: configure the build first")
        cuda_include = os.path.join(args.cuda, "include")
        if not os.path.isfile(os.path.join(cuda_include, "cuda_runtime_api.h")) or \
                not os.path.isfile(os.path.join(cuda_include, "nccl.h")):
            raise Missing(f"no CUDA toolkit with NCCL headers in {cuda_include} (--cuda)")
        mirror = args.mirror or subprocess.run([ROOT / "scripts/debian_mirror.sh"], check=True,
                                               capture_output=True, text=True).stdout.strip()
        if args.link:
            return link(build / "libtorch2" / LINK_SUITE, mirror, args.cuda)
        include = pathlib.Path(args.headers).resolve() if args.headers else \
            fetch_debian_headers(build / "libtorch2" / args.suite, mirror, args.suite)
    except Missing as missing:
        print(f"check_libtorch2: {missing}", file=sys.stderr)
        return 1 if os.environ.get("CI") else SKIP
    for needed in (VERSION_HEADER, "ATen/cuda/CUDAGraph.h"):
        if not (include / needed).is_file():
            print(f"check_libtorch2: {include} is not the include root of a LibTorch with CUDA "
                  f"(no {needed})", file=sys.stderr)
            return 2
    version = torch_version(include)
    if version[0] < 2:
        print(f"check_libtorch2: {include} is LibTorch {version[0]}.{version[1]}, not 2.x",
              file=sys.stderr)
        return 2

    entries = [entry for entry in without_unity_sources(json.loads(database.read_text()))
               if source_of(entry).is_relative_to(ROOT)
               and not source_of(entry).is_relative_to(build)
               and re.search(args.files, entry["file"])]
    for source in replacements:
        if source not in {source_of(entry) for entry in entries}:
            print(f"check_libtorch2: --replace: {source} is not a source of the build",
                  file=sys.stderr)
            return 2
    if not entries:
        print(f"check_libtorch2: no source of {database} matches {args.files!r}", file=sys.stderr)
        return 2

    # PyTorch 2.12 and later need C++20, as in CMakeLists.txt.
    cxx20 = version >= (2, 12)
    failures, alone = [], entries
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        if args.unity:
            alone = check_units(combined_units(entries), pool, functools.partial(
                check_combined, include=include, cuda_include=cuda_include, cxx20=cxx20,
                replacements=replacements, scratch=scratch))
        jobs = [pool.submit(check_source, entry, include, cuda_include, cxx20,
                            replacements.get(source_of(entry), ""), scratch) for entry in alone]
        for job in concurrent.futures.as_completed(jobs):
            source, problem = job.result()
            if problem:
                failures.append((source, problem))
    label = f"LibTorch {version[0]}.{version[1]} with CUDA ({include})"
    for source, problem in sorted(failures):
        print(f"FAIL {os.path.relpath(source, ROOT)}:\n  " + problem.replace("\n", "\n  "),
              file=sys.stderr)
    if failures:
        print(f"check_libtorch2: {len(failures)} of {len(entries)} sources do not compile against "
              f"{label}", file=sys.stderr)
        return 1
    print(f"check_libtorch2: {len(entries)} of {len(entries)} sources compile against {label}, "
          "with CUDA graphs and NCCL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
