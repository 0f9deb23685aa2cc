#!/usr/bin/env python3
"""scripts/check_links.py — provides: the check that every relative link and every repository
path named in README.md, docs/*.md and tests/README.md exists.

- A relative link, `[text](docs/gpu.md)` or `![alt](docs/report.png)`, must name a file or folder
  relative to the document; its `#anchor`, and a bare `(#anchor)`, must be a heading of the target
  (GitHub's anchors: lower case, punctuation dropped, spaces as dashes). Links with a scheme
  (https:, mailto:) are not fetched.
- A repository path, anywhere in the text (prose, code spans, code blocks): a word that starts
  with one of the repository's top-level folders (app/, lib/, tests/, scripts/, ...) must exist
  under the root. A pattern (`configs/*.conf`) or a placeholder (`tests/fuzz/corpus/<harness>/`)
  is not a path, nor is a path inside a longer one (`PREFIX/share/mnist_ddp/configs/x`) or a URL.

    scripts/check_links.py [ROOT]     (default: the repository beside this script)
    scripts/check_links.py --links-only INSTALLED   README.md and docs/*.md of an installed
                                                    tree (share/mnist_ddp): their links alone

Exit 0 when everything named exists, 1 with one line per broken link or path, 2 when no
document is found.
"""
import pathlib
import re
import sys

TOP_FOLDERS = ("app", "bench", "cmake", "configs", "docker", "docs", "lib", "scripts", "slurm",
               "tests", ".ci")
PATH = re.compile(r"(?<![\w./~$-])(?:" + "|".join(re.escape(f) for f in TOP_FOLDERS)
                  + r")/[\w./+-]*")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents(root: pathlib.Path, links_only: bool) -> list:
    found = [root / "README.md"] + ([] if links_only else [root / "tests" / "README.md"])
    found += sorted((root / "docs").glob("*.md"))
    return [path for path in found if path.is_file()]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed."""
    text = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\s-]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: pathlib.Path) -> set:
    found, counts, in_fence = set(), {}, False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        heading = HEADING.match(line)
        if heading and not in_fence:
            name = slug(heading.group(2))
            count = counts.get(name, 0)
            counts[name] = count + 1
            found.add(name if count == 0 else f"{name}-{count}")
    return found


def check_document(root: pathlib.Path, path: pathlib.Path, links_only: bool) -> list:
    problems = []
    name = path.relative_to(root)
    for number, line in enumerate(path.read_text().splitlines(), 1):
        where = f"{name}:{number}"
        for link in LINK.finditer(line):
            target = link.group(1)
            if SCHEME.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            target_path = (path.parent / file_part).resolve() if file_part else path
            if not target_path.exists():
                problems.append(f"{where}: the link '{target}' names no file or folder")
                continue
            if anchor and target_path.suffix == ".md" and target_path.is_file() \
                    and anchor not in anchors(target_path):
                problems.append(f"{where}: the link '{target}' names no heading of "
                                f"{target_path.name}")
        without_links = LINK.sub(" ", line)
        for match in [] if links_only else PATH.finditer(without_links):
            named = match.group().rstrip(".,:;")
            following = without_links[match.end():match.end() + 1]
            if following in ("*", "<", "{", "$") or "//" in named:
                continue  # a pattern, a placeholder or a URL's tail
            if not (root / named).exists():
                problems.append(f"{where}: the repository path '{named}' does not exist")
    return problems


def main() -> int:
    arguments = sys.argv[1:]
    links_only = arguments[:1] == ["--links-only"]
    arguments = arguments[links_only:]
    root = pathlib.Path(arguments[0]) if arguments else pathlib.Path(__file__).resolve().parents[1]
    docs = documents(root, links_only)
    if not docs:
        print(f"check_links: no README.md or docs/*.md under {root}", file=sys.stderr)
        return 2
    problems = [problem for path in docs for problem in check_document(root, path, links_only)]
    for problem in problems:
        print(f"check_links: {problem}", file=sys.stderr)
    if problems:
        print(f"check_links: {len(problems)} broken link(s) or path(s)", file=sys.stderr)
        return 1
    checked = "relative link" if links_only else "relative link and repository path"
    print(f"check_links: {len(docs)} documents: every {checked} exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
