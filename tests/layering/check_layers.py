#!/usr/bin/env python3
"""The layering test: every #include runs within its folder or to a lower rank.

The ranks are read from docs/layers.txt (one line per folder: rank and folder). Every file
of lib/src/<folder>/, lib/include/hpfreeze/<folder>/ (the public headers, beside the folder
they belong to) and apps/ gets the rank of its folder; each of its #include lines is
resolved to a file of a known folder and fails, named FILE:LINE, when it runs to a higher
rank, or to another folder of the same rank (folders of one rank know nothing of each other:
a pass never includes a pass, and only commands/ includes the loader). A source file in no
known folder and an include that names no file of the tree fail too. The public headers are
what apps/ calls and nothing more: a public header includes only public headers and the
standard library (no lib/src header, no dependency's header such as simdjson's), apps/
includes no lib/src header, and every public header is reached from apps/.
docs/development.md must show the same ranks in the table of its "Layers" section.

    check_layers.py [--root REPO]      exit 0 when the tree keeps its layers, 1 otherwise
"""
import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
SOURCE_SUFFIXES = (".cc", ".h", ".h.in")
# A row of the table in development.md's "Layers" section: | 3 | `dumps/` | ...
DOC_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([a-z_]+)/?`\s*\|")


# A dependency's header: never in a public header (the package installs no library, and
# what apps/ calls must not drag a parser's headers into every translation unit of apps/).
DEPENDENCY = re.compile(r"^(simdjson|rapidjson|spdlog|CLI|openssl|gtest|gmock|benchmark)\b")


def read_layers(path):
    """{folder: rank} from docs/layers.txt."""
    ranks, errors = {}, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[0].isdigit():
            errors.append(f"docs/layers.txt:{number}: expected 'RANK FOLDER'")
            continue
        rank, folder = int(fields[0]), fields[1]
        if folder in ranks:
            errors.append(f"docs/layers.txt:{number}: folder {folder} is listed twice")
        ranks[folder] = rank
    return ranks, errors


def read_doc_ranks(path):
    """{folder: rank} from the table of development.md's "Layers" section."""
    ranks, in_section = {}, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_section = line.strip() == "## Layers"
            continue
        match = DOC_ROW.match(line) if in_section else None
        if match:
            ranks[match.group(2)] = int(match.group(1))
    return ranks


def sources(root):
    for base in ("lib/src", "lib/include/hpfreeze", "apps"):
        for path in sorted((root / base).rglob("*")):
            if path.is_file() and path.name.endswith(SOURCE_SUFFIXES):
                yield path


class Tree:
    def __init__(self, root, ranks):
        self.root, self.ranks = root, ranks
        self.src = root / "lib/src"
        self.public = root / "lib/include/hpfreeze"
        self.apps = root / "apps"

    def folder_of(self, path):
        """The folder (layer) a file of the tree belongs to, or None with why not."""
        path = path.resolve()
        if path.is_relative_to(self.apps.resolve()):
            return "apps", None
        for base, shown in ((self.public, "lib/include/hpfreeze"), (self.src, "lib/src")):
            if path.is_relative_to(base.resolve()):
                parts = path.relative_to(base.resolve()).parts
                if len(parts) > 1 and parts[0] in self.ranks and parts[0] != "apps":
                    return parts[0], None
                return None, f"in no known folder of {shown} (docs/layers.txt)"
        return None, "outside lib/src, lib/include/hpfreeze and apps"

    def resolve(self, including, name, quoted):
        """The file an include names, or None when it is not one of the tree's files."""
        candidates = []
        if quoted:
            candidates.append(including.parent / name)
        if name.startswith("hpfreeze/"):
            candidates.append(self.public / name[len("hpfreeze/"):])
            candidates.append(self.public / (name[len("hpfreeze/"):] + ".in"))
        if quoted:
            candidates.append(self.src / name)
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        return None


def check(root):
    errors = []
    layers_path = root / "docs/layers.txt"
    ranks, layer_errors = read_layers(layers_path)
    errors += layer_errors
    if "apps" not in ranks:
        errors.append(f"docs/layers.txt: no rank for apps")

    doc_path = root / "docs/development.md"
    doc_ranks = read_doc_ranks(doc_path)
    if doc_ranks != ranks:
        for folder in sorted(set(ranks) | set(doc_ranks)):
            if ranks.get(folder) != doc_ranks.get(folder):
                errors.append(f"docs/development.md: 'Layers' table gives {folder} rank "
                              f"{doc_ranks.get(folder, 'none')}, docs/layers.txt "
                              f"{ranks.get(folder, 'none')}")

    tree = Tree(root, ranks)
    for base, shown in ((tree.src, "lib/src"), (tree.public, "lib/include/hpfreeze")):
        for folder in sorted(p.name for p in base.iterdir() if p.is_dir()):
            if folder not in ranks:
                errors.append(f"{shown}/{folder}/: a folder with no rank in docs/layers.txt")

    public = tree.public.resolve()
    src = tree.src.resolve()
    edges = {}  # a file of the tree -> the files of the tree it includes

    files = includes = 0
    for path in sources(root):
        files += 1
        shown = path.relative_to(root)
        folder, why = tree.folder_of(path)
        if folder is None:
            errors.append(f"{shown}: {why}")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quoted, name = match.group(1) == '"', match.group(2)
            target = tree.resolve(path, name, quoted)
            is_public = path.resolve().is_relative_to(public)
            if target is None:
                if quoted or name.startswith("hpfreeze/"):
                    errors.append(f"{shown}:{number}: #include \"{name}\" names no file of "
                                  "lib/src, lib/include/hpfreeze or apps")
                elif is_public and DEPENDENCY.match(name):
                    errors.append(f"{shown}:{number}: #include <{name}>: a public header "
                                  "includes no dependency's header")
                continue  # a system or third-party header
            includes += 1
            edges.setdefault(path.resolve(), []).append(target.resolve())
            if target.resolve().is_relative_to(src) and (is_public or folder == "apps"):
                where = "a public header" if is_public else "apps/"
                errors.append(f"{shown}:{number}: #include \"{name}\": {where} includes "
                              "only public headers (lib/include/hpfreeze/)")
            target_folder, why = tree.folder_of(target)
            if target_folder is None:
                errors.append(f"{shown}:{number}: #include \"{name}\": "
                              f"{target.relative_to(root)} is {why}")
            elif ranks[target_folder] > ranks[folder]:
                errors.append(f"{shown}:{number}: #include \"{name}\" runs up from "
                              f"{folder} (rank {ranks[folder]}) to {target_folder} "
                              f"(rank {ranks[target_folder]})")
            elif target_folder != folder and ranks[target_folder] == ranks[folder]:
                errors.append(f"{shown}:{number}: #include \"{name}\" runs across from "
                              f"{folder} to {target_folder}, both rank {ranks[folder]}: folders "
                              "of one rank include nothing of each other (move what both need "
                              "down a rank)")

    # Every public header is what apps/ calls, directly or through another public header.
    reached, todo = set(), [p for p in edges if p.is_relative_to(tree.apps.resolve())]
    while todo:
        for target in edges.get(todo.pop(), []):
            if target not in reached:
                reached.add(target)
                todo.append(target)
    for path in sorted(p for p in tree.public.rglob("*") if p.is_file()):
        resolved = path.resolve()
        if resolved not in reached:
            errors.append(f"{path.relative_to(root)}: a public header apps/ does not include "
                          "(move it beside its sources in lib/src/)")
    return errors, files, includes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args()
    errors, files, includes = check(args.root)
    for error in errors:
        print(f"layering: {error}", file=sys.stderr)
    if errors:
        print(f"layering: {len(errors)} problem(s)", file=sys.stderr)
        return 1
    print(f"layering: {files} files, {includes} includes of the tree's own headers, "
          "each within its folder or to a lower rank")
    return 0


if __name__ == "__main__":
    sys.exit(main())
