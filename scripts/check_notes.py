#!/usr/bin/env python3
"""scripts/check_notes.py — provides: the check that every named design note is written out once
and indexed: each `Note [Title]` that lib/, app/, tests/, docs/ or README.md names is a row of
docs/design.md's index ("## Notes in lib/", `| Title | `path` ... |`), and the file of that row
writes it out, as a comment that begins with it (`// Note [Title]`, underlined with `~~~`, or
`/// Note [Title]: ...`); a note written out as an underlined block is written out once.

    scripts/check_notes.py [--root DIR]

Exit 0: every note is indexed and written out; 1: some are not (each named); 2: bad usage.
"""
import argparse
import collections
import pathlib
import re
import sys

NAMED = re.compile(r"Note \[([^\]]+)\]")
DEFINED = re.compile(r"^\s*//+ Note \[([^\]]+)\]")
UNDERLINE = re.compile(r"^\s*// ~~~")
INDEX_HEADING = "## Notes in lib/"
INDEX_ROW = re.compile(r"^\| ([^|]+?) \| `([^`]+)`")
SEARCHED = ("lib", "app", "tests", "docs", "README.md")
SUFFIXES = {".cpp", ".hpp", ".h", ".md"}
# docs/design.md's sentence that shows the form of a note.
PLACEHOLDER = "Name"


def files(root):
    for top in SEARCHED:
        path = root / top
        found = [path] if path.is_file() else sorted(path.rglob("*"))
        yield from (f for f in found if f.is_file() and f.suffix in SUFFIXES)


def index(root):
    """{title: path} of docs/design.md's index of notes."""
    lines = (root / "docs/design.md").read_text().splitlines()
    rows, inside = {}, False
    for line in lines:
        if line.startswith("## "):
            inside = line.strip() == INDEX_HEADING
        match = INDEX_ROW.match(line) if inside else None
        if match and match.group(1) != "Note":
            rows[match.group(1)] = match.group(2)
    return rows


def problems(root):
    rows = index(root)
    named = collections.defaultdict(set)  # title: files that name it
    blocks = collections.defaultdict(list)  # title: files:lines that write it out underlined
    for path in files(root):
        lines = path.read_text(errors="replace").splitlines()
        for number, line in enumerate(lines):
            for title in NAMED.findall(line):
                named[title].add(str(path.relative_to(root)))
            match = DEFINED.match(line)
            if match and number + 1 < len(lines) and UNDERLINE.match(lines[number + 1]):
                blocks[match.group(1)].append("%s:%d" % (path.relative_to(root), number + 1))
    for title in sorted(set(named) - {PLACEHOLDER}):
        if title not in rows:
            yield "Note [%s] (named in %s) is not in docs/design.md's index" % (
                title, ", ".join(sorted(named[title])))
            continue
        where = root / rows[title]
        text = where.read_text(errors="replace").splitlines() if where.is_file() else []
        if not any(DEFINED.match(line) and DEFINED.match(line).group(1) == title
                   for line in text):
            yield "Note [%s] is not written out in %s, where the index puts it" % (
                title, rows[title])
    for title, places in sorted(blocks.items()):
        if len(places) > 1:
            yield "Note [%s] is written out %d times: %s" % (title, len(places), ", ".join(places))
    for title in sorted(set(rows) - set(named)):
        yield "Note [%s] is in docs/design.md's index but nothing names it" % title


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path)
    args = parser.parse_args()
    if not (args.root / "docs/design.md").is_file():
        print("check_notes: %s has no docs/design.md" % args.root, file=sys.stderr)
        return 2
    found = list(problems(args.root))
    for problem in found:
        print("check_notes: " + problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
