#!/usr/bin/env python3
"""The ctest label "threaded" against the sources: the unit tests that start a second thread
are exactly the ones tests/CMakeLists.txt lists in HPFREEZE_THREADED_TESTS (which the
ThreadSanitizer step of .ci/run builds and runs, `ctest -L threaded`).

A unit test (tests/unit/**/NAME_test.cc) starts a second thread when its file
  - includes "base/background_task.h" (it runs BackgroundTask itself), or
  - starts one of its own: std::thread, std::jthread, std::async, or
  - gives the library a Concurrency of two or more CPUs, the only way the library starts one
    (base/concurrency.h): Concurrency{N} or a variable of type Concurrency initialised with N
    (`constexpr Concurrency kTwoCpus{2};`, a default argument `Concurrency c = {2}`), N >= 2,
    or Concurrency{x} of a variable x (a loop's or a test parameter's CPU counts).
Comments are not read. Each disagreement is one line naming the test and the rule.

    check_threaded.py [--root REPO]      exit 0 when the list and the sources agree, 1 otherwise
"""
import argparse
import re
import sys
from pathlib import Path

LIST = re.compile(r"set\(HPFREEZE_THREADED_TESTS\s+([^)]*)\)", re.S)
RULES = [
    ("includes base/background_task.h",
     re.compile(r'^[ \t]*#[ \t]*include[ \t]+"base/background_task\.h"', re.M)),
    ("starts a thread of its own", re.compile(r"\bstd::(?:thread|jthread|async)\b(?!::)")),
    ("gives the library two or more CPUs",
     re.compile(r"\bConcurrency\b\s*(?:[A-Za-z_]\w*\s*)?(?:=\s*)?\{\s*(?:[2-9]|[1-9]\d+)\s*\}"
                r"|\bConcurrency\s*\{\s*[A-Za-z_][\w.]*(?:\(\))?\s*\}")),
]


def without_comments(text):
    """C++ text with its comments, string and character literals blanked: a rule matches code
    only. Raw strings are not told apart (no test needs them here)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(quote + quote)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def threaded_by_rule(text):
    """The first rule the test's text meets, or None. An #include is read from its line (a
    commented one starts with //), the rest from the code alone."""
    code = without_comments(text)
    for name, pattern in RULES:
        if pattern.search(text if "include" in name else code):
            return name
    return None


def check(root):
    cmake = (root / "tests" / "CMakeLists.txt").read_text(encoding="utf-8")
    match = LIST.search(cmake)
    if not match:
        return ["tests/CMakeLists.txt: no set(HPFREEZE_THREADED_TESTS ...)"]
    listed = set(match.group(1).split())
    errors = []
    tests = {}
    for source in sorted((root / "tests" / "unit").rglob("*_test.cc")):
        tests[source.stem] = source
    for name in sorted(listed - tests.keys()):
        errors.append(f"tests/CMakeLists.txt: {name} is listed as threaded but is no unit test")
    for name, source in sorted(tests.items()):
        rule = threaded_by_rule(source.read_text(encoding="utf-8"))
        relative = source.relative_to(root)
        if rule and name not in listed:
            errors.append(f"{relative}: {rule}, but HPFREEZE_THREADED_TESTS does not list "
                          f"{name}")
        elif not rule and name in listed:
            errors.append(f"{relative}: starts no second thread, but HPFREEZE_THREADED_TESTS "
                          f"lists {name}")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args()
    errors = check(args.root)
    for line in errors:
        print(line, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
