#!/usr/bin/env python3
"""The findings table (lib/src/spec/findings.h) against docs/cli.md's "Finding codes": the same
codes in the same order, each heading `### HPFnnn name` with the row's name, its paragraph
starting with the row's severity in bold (**error**, **warning**, **note**); its anchor is the
one finding_anchor() gives (`hpf406-hash-drift`, as GitHub makes it from the heading). Every
`HPFnnn` any doc or man-page prose names, and every link to a `#hpfnnn-...` anchor, must be a
code of the table and its heading. In the folders whose diagnostics become check's and
report's findings (FINDING_FOLDERS), a diagnostic is made by make_finding: a make_error,
make_warning or make_note there needs a comment saying "no finding" (and why) on one of the two
lines above it, so that no finding goes out without a code. Each disagreement is one line,
FILE:LINE and what is wrong.

    check_findings.py [--root REPO]     exit 0 when they agree, 1 otherwise
"""
import argparse
import re
import sys
from pathlib import Path

TABLE = Path("lib/src/spec/findings.h")
DOCS = Path("docs/cli.md")
SECTION = "## Finding codes"
ROW = re.compile(r'\{\.code = "([^"]*)", \.severity = Severity::k(\w+), \.name = "([^"]*)"\}')
HEADING = re.compile(r"^### (\S+) (\S+)\s*$")
SEVERITY = re.compile(r"^\*\*(error|warning|note)\*\*")
MENTION = re.compile(r"\bHPF\d+\b")
LINK = re.compile(r"\((?:cli\.md)?#(hpf\d+-[a-z0-9-]*)\)")
# The decoder of metas, check, report and the planner below it (freeze's one finding, HPF305,
# is made where freeze's own errors are, which are none).
FINDING_FOLDERS = ("lib/src/meta", "lib/src/check", "lib/src/report", "lib/src/capacity")
UNCODED = re.compile(r"\bmake_(?:error|warning|note)\(")
NO_FINDING = re.compile(r"no finding", re.IGNORECASE)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def table_rows(root, errors):
    """[(code, severity, name, line)] of the table, in its order."""
    text = (root / TABLE).read_text(encoding="utf-8")
    start = text.find("kFindingRules[] = {")
    if start < 0:
        errors.append(f"{TABLE}: no kFindingRules[] = {{ ... }}")
        return []
    end = text.find("\n};", start)
    rows = []
    for m in ROW.finditer(text, start, end):
        rows.append((m.group(1), m.group(2).lower(), m.group(3), line_of(text, m.start())))
    if not rows:
        errors.append(f"{TABLE}:{line_of(text, start)}: kFindingRules has no row this script reads")
    return rows


def doc_entries(root, errors):
    """[(code, severity or None, name, line)] of the headings under SECTION, in their order."""
    lines = (root / DOCS).read_text(encoding="utf-8").split("\n")
    try:
        first = lines.index(SECTION)
    except ValueError:
        errors.append(f"{DOCS}: no section '{SECTION}'")
        return []
    entries = []
    for i in range(first + 1, len(lines)):
        if lines[i].startswith("## "):
            break
        m = HEADING.match(lines[i])
        if not m:
            continue
        paragraph = next((line for line in lines[i + 1:] if line.strip()), "")
        severity = SEVERITY.match(paragraph)
        entries.append((m.group(1), severity.group(1) if severity else None, m.group(2), i + 1))
    return entries


def anchor(code, name):
    return code.lower() + "-" + name


def uncoded_diagnostics(root):
    """FILE:LINE lines of the make_error/make_warning/make_note calls in FINDING_FOLDERS that no
    "no finding" comment on the line or the two above explains."""
    errors = []
    for folder in FINDING_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cc", ".h"):
                continue
            lines = path.read_text(encoding="utf-8").split("\n")
            for i, line in enumerate(lines):
                m = UNCODED.search(line)
                if not m or line.lstrip().startswith("//"):
                    continue
                if any(NO_FINDING.search(above) for above in lines[max(0, i - 2):i + 1]):
                    continue
                errors.append(f"{path.relative_to(root)}:{i + 1}: {m.group(0)[:-1]} makes a "
                              f"diagnostic without a code: make_finding with a row of {TABLE}, "
                              f"or a comment saying why it is no finding")
    return errors


def check(root):
    errors = uncoded_diagnostics(root)
    rows = table_rows(root, errors)
    entries = doc_entries(root, errors)
    table = {code: (severity, name, line) for code, severity, name, line in rows}
    docs = {code: (severity, name, line) for code, severity, name, line in entries}
    for code, severity, name, line in rows:
        if code not in docs:
            errors.append(f"{TABLE}:{line}: {code} ({name}) has no heading "
                          f"'### {code} {name}' in {DOCS}, \"{SECTION[3:]}\"")
    for code, severity, name, line in entries:
        where = f"{DOCS}:{line}"
        if code not in table:
            errors.append(f"{where}: {code} is no code of {TABLE}")
            continue
        row_severity, row_name, _ = table[code]
        if name != row_name:
            errors.append(f"{where}: {code} is named '{row_name}' in {TABLE}, not '{name}'")
        if severity is None:
            errors.append(f"{where}: {code}'s paragraph does not start with its severity in bold "
                          f"(**{row_severity}**)")
        elif severity != row_severity:
            errors.append(f"{where}: {code} is a {row_severity} in {TABLE}, not a {severity}")
    in_table = [code for code, *_ in rows if code in docs]
    in_docs = [code for code, *_ in entries if code in table]
    if not errors and in_table != in_docs:
        errors.append(f"{DOCS}: the headings are not in the table's order: {in_docs}")
    anchors = {anchor(code, name) for code, (_, name, _) in table.items()}
    prose = [*(root / "docs").rglob("*.md"), *(root / "docs" / "man").glob("*.h2m"),
             root / "README.md"]
    for path in sorted(prose):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        relative = path.relative_to(root)
        for m in MENTION.finditer(text):
            if m.group(0) not in table:
                errors.append(f"{relative}:{line_of(text, m.start())}: {m.group(0)} is no code "
                              f"of {TABLE}")
        for m in LINK.finditer(text):
            if m.group(1) not in anchors:
                errors.append(f"{relative}:{line_of(text, m.start())}: #{m.group(1)} is the "
                              f"anchor of no code's heading")
    return list(dict.fromkeys(errors))  # a heading's unknown code is also a mention of it


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args()
    errors = check(args.root)
    for error in errors:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
