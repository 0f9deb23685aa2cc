#!/usr/bin/env python3
"""scripts/check_layers.py — provides: the check that lib/ keeps its layers.

Each folder of lib/ belongs to one layer; a file may include headers of its own folder and of
folders in lower layers only, and common/, the bottom one, no header of MPI, NCCL or CUDA. An
include from a higher layer, or from another folder of the same layer, is reported with the file,
the line and the include, and the check exits 1. Two folders that include each other always break
one of these rules, so no cycle between folders can pass.

    scripts/check_layers.py [LIB_DIR]     (default: the lib/ beside this script)
"""
import pathlib
import re
import sys

# Bottom to top; the README's design map lists them in the same order. Folders of one layer are
# independent of each other.
LAYERS = [
    ["common"],
    ["config", "data", "model"],
    ["distributed"],
    ["ddp"],
    ["checkpoint"],
    ["train"],
    ["report"],
    ["run"],
]
LAYER_OF = {folder: level for level, folders in enumerate(LAYERS) for folder in folders}
INCLUDE = re.compile(r'^\s*#\s*include\s*"(([^"/]+)/[^"]+)"')
# The bottom layer knows nothing of the transports: MPI, NCCL and CUDA are distributed/'s.
TRANSPORT_HEADER = re.compile(r"^\s*#\s*include\s*<((mpi|nccl|cuda)[^>]*)>")


def check(lib: pathlib.Path) -> list:
    problems = []
    for folder in sorted(p.name for p in lib.iterdir() if p.is_dir()):
        if folder not in LAYER_OF:
            problems.append(f"lib/{folder}/ is in no layer: add it to LAYERS in {sys.argv[0]}")
    for path in sorted(lib.rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".h", ".cc") or not path.is_file():
            continue
        relative = path.relative_to(lib)
        folder = relative.parts[0]
        if folder not in LAYER_OF:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            transport = TRANSPORT_HEADER.match(line)
            if folder == LAYERS[0][0] and transport:
                problems.append(f"lib/{relative}:{number}: includes <{transport.group(1)}>, a "
                                f"transport's header, in {folder}/")
            match = INCLUDE.match(line)
            if not match or match.group(2) == folder or match.group(2) not in LAYER_OF:
                continue
            header, target = match.groups()
            where = f'lib/{relative}:{number}: includes "{header}"'
            if LAYER_OF[target] > LAYER_OF[folder]:
                problems.append(f"{where}, from {target}/, a higher layer than {folder}/")
            elif LAYER_OF[target] == LAYER_OF[folder]:
                problems.append(f"{where}, from {target}/, a folder of the same layer as "
                                f"{folder}/ (those stay independent)")
    return problems


def main() -> int:
    default = pathlib.Path(__file__).resolve().parent.parent / "lib"
    lib = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else default
    if not lib.is_dir():
        print(f"check_layers: {lib} is not a folder", file=sys.stderr)
        return 2
    problems = check(lib)
    for problem in problems:
        print(f"check_layers: {problem}", file=sys.stderr)
    if problems:
        order = " < ".join("/".join(folders) for folders in LAYERS)
        print(f"check_layers: {len(problems)} violation(s); layers, bottom to top: {order}",
              file=sys.stderr)
        return 1
    print(f"check_layers: {lib}: every include goes to its own folder or a lower layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
