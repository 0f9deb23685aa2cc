#!/usr/bin/env python3
"""scripts/check_quoted_figures.py — provides: the check that the benchmark figures README.md,
bench/README.md and docs/*.md quote are in the result files the benchmarks wrote (bench/*.md).

The documents mark what is checked with HTML comments, invisible once rendered; each region
names its own result file, and a figure passes when that file holds the same number anywhere:

    <!-- figures:begin bench/results.md ... -->   every number from here to figures:end must
    ...                                           appear somewhere in bench/results.md
    <!-- figures:end -->

    <!-- embed:begin bench/results.md ... -->     the lines between must equal the file (blank
    ...                                           lines around it aside)
    <!-- embed:end -->

In a figures region every number of the prose counts: "1,531 img/s", "63%", "1.85x", both ends
of "0.58-0.85 s". Numbers in code (`--repeats 5`, fenced blocks), in HTML comments, in link
targets and inside names (conv1, x86_64, bf16) are not figures. A number matches when the table
holds the same digits once thousands separators are removed: "1,531" matches "1,531" and
"1531", but "1.6" does not match "1.63" nor "2" match "2.0", so a rounded or stale figure fails.
Outside the regions, a throughput (a number before "img/s" or "GFLOP/s") is an error too: a
benchmark figure belongs in a figures region. Each document must keep the regions it is
expected to have, so deleting a marker cannot switch the check off.

    scripts/check_quoted_figures.py [ROOT]     (default: the repository beside this script)

Exit 0 when every figure is found, 1 with one line per problem, 2 on a missing file.
"""
import pathlib
import re
import sys

# Document -> the regions it must have, at least one of each kind. The pages of docs/ are checked
# too (DOC_PAGES), each without a region it must have.
DOCUMENTS = {
    "README.md": ("figures",),
    "bench/README.md": ("figures",),
}
DOC_PAGES = "docs/*.md"
MARKER = re.compile(r"^\s*<!--\s*(figures|embed):(begin|end)\b\s*(\S*)")
# A figure: digits with optional thousands separators and decimals, not part of a name (conv1,
# x86_64) or of a longer dotted number (the "44" of 6.18.44). A unit may follow ("1.7x", "8k").
NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?!\d|,\d)|\d+)(?:\.\d+)?")
UNIT = re.compile(r"\s*(img/s|GFLOP/s)")
COMMENT = re.compile(r"<!--.*?-->")
LINK_TARGET = re.compile(r"\]\([^)]*\)")


def canonical(number: str) -> str:
    return number.replace(",", "")


def numbers(text: str):
    """Each figure in a line of prose: its match (text and position)."""
    return list(NUMBER.finditer(text))


def prose(line: str, ticks: str) -> tuple:
    """(the line without code spans, comments and link targets, the backticks of a code span
    left open at its end). ticks: the backticks of a code span open from an earlier line of the
    paragraph, or ""."""
    kept, position = [], 0
    while position < len(line):
        if ticks:
            close = re.compile(rf"(?<!`){ticks}(?!`)").search(line, position)
            if not close:
                return "".join(kept), ticks
            position, ticks = close.end(), ""
            kept.append(" ")
            continue
        opening = re.compile(r"`+").search(line, position)
        if not opening:
            kept.append(line[position:])
            break
        kept.append(line[position:opening.start()])
        position, ticks = opening.end(), opening.group()
    text = "".join(kept)
    for pattern in (COMMENT, LINK_TARGET):
        text = pattern.sub(" ", text)
    return text, ticks


def table_figures(path: pathlib.Path) -> set:
    return {canonical(m.group()) for line in path.read_text().splitlines() for m in numbers(line)}


def check_document(root: pathlib.Path, name: str, required: tuple) -> list:
    problems = []
    lines = (root / name).read_text().splitlines()
    region = None  # (kind, source path, first line number, lines so far)
    found = set()
    sources = {}
    in_fence = False
    ticks = ""  # a code span open across lines of a paragraph
    for number, line in enumerate(lines, 1):
        where = f"{name}:{number}"
        marker = MARKER.match(line)
        if region and region[0] == "embed" and not (marker and marker.group(1) == "embed"):
            region[3].append(line)  # verbatim, fences and all
            continue
        fence = line.lstrip().startswith(("```", "~~~"))
        in_fence ^= fence
        if in_fence or fence:
            continue
        if marker:
            kind, edge, source = marker.groups()
            if edge == "begin":
                if region:
                    problems.append(f"{where}: {kind}:begin inside the {region[0]} region of "
                                    f"line {region[2]}")
                    continue
                if not (root / source).is_file():
                    problems.append(f"{where}: {kind}:begin names '{source}', not a file")
                    source = None
                region = (kind, source, number, [])
            elif not region or region[0] != kind:
                problems.append(f"{where}: {kind}:end without {kind}:begin")
            else:
                found.add(kind)
                if kind == "embed" and region[1]:
                    copied = "\n".join(region[3]).strip("\n")
                    if copied != (root / region[1]).read_text().strip("\n"):
                        problems.append(f"{name}:{region[2]}: the lines up to embed:end differ "
                                        f"from {region[1]}: copy the file between the markers "
                                        "again")
                region = None
            continue
        text, ticks = prose(line, ticks if line.strip() else "")
        if region:  # figures
            source = region[1]
            if source is None:
                continue
            if source not in sources:
                sources[source] = table_figures(root / source)
            for figure in numbers(text):
                if canonical(figure.group()) not in sources[source]:
                    problems.append(f"{where}: {figure.group()} is not in {source}")
        else:
            for figure in numbers(text):
                unit = UNIT.match(text, figure.end())
                if unit:
                    problems.append(f"{where}: the benchmark figure {figure.group()}{unit.group()}"
                                    " is outside a figures region")
    if region:
        problems.append(f"{name}:{region[2]}: {region[0]}:begin without {region[0]}:end")
    for kind in required:
        if kind not in found:
            problems.append(f"{name}: no {kind} region (<!-- {kind}:begin bench/results.md "
                            f"--> ... <!-- {kind}:end -->)")
    return problems


def main() -> int:
    default = pathlib.Path(__file__).resolve().parent.parent
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else default
    missing = [name for name in DOCUMENTS if not (root / name).is_file()]
    if missing:
        print(f"check_quoted_figures: not found under {root}: {', '.join(missing)}",
              file=sys.stderr)
        return 2
    documents = dict(DOCUMENTS)
    documents.update((path.relative_to(root).as_posix(), ())
                     for path in sorted(root.glob(DOC_PAGES)))
    problems = [problem for name, required in documents.items()
                for problem in check_document(root, name, required)]
    for problem in problems:
        print(f"check_quoted_figures: {problem}", file=sys.stderr)
    if problems:
        print(f"check_quoted_figures: {len(problems)} problem(s); quote figures from the "
              "generated table, or move what is not in it out of the figures regions with the "
              "command and machine that measured it", file=sys.stderr)
        return 1
    print(f"check_quoted_figures: {', '.join(documents)}: every quoted figure is in its table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
