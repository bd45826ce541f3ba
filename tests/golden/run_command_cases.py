#!/usr/bin/env python3
"""Golden cases of the commands other than freeze: one folder per case.

    run_command_cases.py --binary PATH DIR... [--only NAME]...

Each DIR is testdata/<command>: its name is the command run. A case is a folder of DIR
holding `args`: the command line after `hpfreeze COMMAND`, one line split as the shell
splits it (shlex), with file names relative to the case folder, where the command runs (so
diagnostics do not depend on where the repository is). Beside it: the input files,
`expected.status` (the exit status, decimal) and `expected.out` and `expected.err` (stdout
and stderr, byte for byte; a missing file stands for an empty stream). A folder without
`args` holds inputs of other tests (testdata/report/tiny) and is left alone, unless it holds
an expected.* file: then the case is malformed. The environment is scrubbed as for the
end-to-end tests (NO_COLOR=1, no SPDLOG_LEVEL).

The expected bytes never come from hpfreeze: testdata/<command>/README.md says how each
file was made (report's by tests/oracle/make_report_cases.py from the planner's independent
calculator, tests/e2e/capacity_model.py, which ctest golden.report_cases_fresh keeps fresh).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from run_golden import first_difference, run_in

EXPECTED = ("expected.out", "expected.err", "expected.status")


def read_or_empty(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b""


def run_case(case: Path, command: list[str], env: dict[str, str]) -> str | None:
    """Runs one case; None when it passes, else the reason it failed."""
    argv = command + shlex.split((case / "args").read_text(encoding="utf-8"))
    ran = run_in(case, argv, env)
    if isinstance(ran, str):
        return ran
    returncode, stdout, stderr = ran
    status = int((case / "expected.status").read_text(encoding="utf-8"))
    if returncode != status:
        return (f"exit status {returncode}, expected {status} (stderr: "
                f"{stderr.decode('utf-8', 'replace').strip()[:300]!r})")
    for what, actual, name in (("stdout", stdout, "expected.out"),
                               ("stderr", stderr, "expected.err")):
        expected = read_or_empty(case / name)
        if actual != expected:
            return first_difference(actual, expected, what)
    return None


def cases_of(directory: Path, only: list[str]) -> tuple[list[Path], list[str]]:
    cases, problems = [], []
    for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
        if only and folder.name not in only:
            continue
        if not (folder / "args").is_file():
            if any((folder / name).exists() for name in EXPECTED):
                problems.append(f"malformed case {folder}: expected files but no args")
            continue
        if not (folder / "expected.status").is_file():
            problems.append(f"malformed case {folder}: no expected.status")
            continue
        cases.append(folder)
    return cases, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="path of the hpfreeze executable")
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this case (repeatable)")
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("SPDLOG_LEVEL", None)
    env["NO_COLOR"] = "1"

    failed = passed = 0
    for directory in args.dirs:
        if not directory.is_dir():
            print(f"run_command_cases: {directory} is not a directory", file=sys.stderr)
            return 2
        command = directory.resolve().name
        cases, problems = cases_of(directory, args.only)
        for problem in problems:
            print(f"FAIL {problem}")
        failed += len(problems)
        if not cases and not args.only:
            print(f"FAIL no cases in {directory}")
            failed += 1
        for case in cases:
            reason = run_case(case, [str(Path(args.binary).resolve()), command], env)
            if reason is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {command}/{case.name}: {reason}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
