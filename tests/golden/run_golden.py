#!/usr/bin/env python3
"""Golden-case runner for `hpfreeze freeze`.

    run_golden.py --binary PATH CASES_DIR [--only NAME]...
    run_golden.py --oracle CASES_DIR [--only NAME]...

A case folder holds plan.json, model.json, optional base.json (passed as --base),
optional `args` (one line of extra flags, split on whitespace), and exactly one of
expected.json (exit 0, stdout byte-identical) or expected.err (exit 1, stdout empty, and
the first line of stderr is exactly the first line of expected.err, the whole diagnostic
`hpfreeze: error: FILE[:LINE:COL]: POINTER: message`; any further lines of expected.err
must follow it in stderr, in order). Optional expected.warn: every line must appear in
stderr of a successful run. Commands run inside the case folder with the file names
relative (plan.json, model.json, base.json), so the names in the diagnostics do not depend
on where the repository is. `--oracle` runs tests/oracle/freeze_oracle.py instead of the
binary, so the corpus itself is checked against the independent oracle; the oracle words
its messages its own way, so there only the location (FILE[:LINE:COL]: POINTER) must agree.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

TIMEOUT_SECONDS = 30
ORACLE = Path(__file__).resolve().parent.parent / "oracle" / "freeze_oracle.py"


def first_difference(actual: bytes, expected: bytes, what: str = "stdout") -> str:
    limit = min(len(actual), len(expected))
    offset = next((i for i in range(limit) if actual[i] != expected[i]), limit)
    line = expected.count(b"\n", 0, offset) + 1
    col = offset - (expected.rfind(b"\n", 0, offset) + 1) + 1
    got = actual[offset:offset + 24]
    want = expected[offset:offset + 24]
    return (f"{what} differs at byte {offset} (expected line {line}, col {col}; "
            f"{len(actual)} bytes vs {len(expected)} expected): got {got!r}, want {want!r}")


def run_in(case: Path, argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes] | str:
    """Runs `argv` inside the case folder with no stdin: (status, stdout, stderr), or why it
    could not run."""
    try:
        # Own process group, so a timeout also ends any child still holding the pipes.
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True,
                                cwd=case)
    except OSError as exc:
        return f"cannot run {argv[0]}: {exc}"
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return f"timed out after {TIMEOUT_SECONDS} s"
    return proc.returncode, stdout, stderr


def text_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


ERROR_PREFIX = "hpfreeze: error: "
# FILE[:LINE:COL] and then, when the message is about a value, ": /POINTER".
LOCATION = re.compile(r"^([^:]+(?::\d+:\d+)?)(?=: )(?:: (/[^:]*)(?=: ))?")


def location(line: str) -> str | None:
    """The FILE[:LINE:COL][: POINTER] part of a diagnostic line after its prefix."""
    m = LOCATION.match(line)
    return m.group(0) if m else None


def check_error_lines(wanted: list[str], stderr: str, oracle: bool) -> str | None:
    got = stderr.splitlines()
    if not got:
        return "stderr is empty"
    if oracle:
        first = re.sub(r"^freeze_oracle: error: ", ERROR_PREFIX, got[0])
        want_loc = location(wanted[0].removeprefix(ERROR_PREFIX))
        got_loc = location(first.removeprefix(ERROR_PREFIX))
        # The oracle may name the enclosing value or the offending member of ours: one
        # location must lie at or under the other.
        def under(a: str, b: str) -> bool:
            return a.startswith(b) and a[len(b):][:1] in ("", "/")

        if (not first.startswith(ERROR_PREFIX) or want_loc is None or got_loc is None
                or not (under(want_loc, got_loc) or under(got_loc, want_loc))):
            return f"oracle's first line {got[0]!r} is not located at {want_loc!r}"
        return None
    if got[0] != wanted[0]:
        return f"first stderr line {got[0]!r}, expected {wanted[0]!r}"
    rest = iter(got[1:])
    for line in wanted[1:]:
        if not any(g == line for g in rest):
            return f"stderr lacks the further line {line!r} (in order): {stderr.strip()!r}"
    return None


def run_case(case: Path, command: list[str], env: dict[str, str],
             oracle: bool = False) -> str | None:
    """Runs one case; returns None when it passes, else the reason it failed."""
    plan, model = case / "plan.json", case / "model.json"
    expected_json, expected_err = case / "expected.json", case / "expected.err"
    for required in (plan, model):
        if not required.is_file():
            return f"malformed case: {required.name} missing"
    if expected_json.exists() == expected_err.exists():
        return "malformed case: needs exactly one of expected.json and expected.err"

    argv = command + ["--plan", "plan.json", "--model", "model.json"]
    if (case / "base.json").is_file():
        argv += ["--base", "base.json"]
    if (case / "args").is_file():
        argv += (case / "args").read_text(encoding="utf-8").split()
    ran = run_in(case, argv, env)
    if isinstance(ran, str):
        return ran
    returncode, stdout, stderr_bytes = ran
    stderr = stderr_bytes.decode("utf-8", errors="replace")
    first_stderr = stderr.strip().splitlines()[0] if stderr.strip() else "(empty stderr)"

    if expected_err.exists():
        wanted = text_lines(expected_err)
        if not wanted:
            return "malformed case: expected.err is empty"
        if returncode != 1:
            return f"exit code {returncode}, expected 1 (stderr: {first_stderr})"
        if stdout:
            return f"stdout not empty on failure ({len(stdout)} bytes)"
        return check_error_lines(wanted, stderr, oracle)

    if returncode != 0:
        return f"exit code {returncode}, expected 0 (stderr: {first_stderr})"
    expected = expected_json.read_bytes()
    if stdout != expected:
        return first_difference(stdout, expected)
    if (case / "expected.warn").is_file():
        for wanted_warning in text_lines(case / "expected.warn"):
            if wanted_warning not in stderr:
                return f"stderr lacks warning {wanted_warning!r}: {stderr.strip()!r}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description="Run the hpfreeze freeze golden cases.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--binary", help="path of the hpfreeze executable")
    source.add_argument("--oracle", action="store_true",
                        help="run tests/oracle/freeze_oracle.py instead of a binary")
    parser.add_argument("cases_dir", type=Path)
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this case (repeatable)")
    args = parser.parse_args()

    if args.oracle:
        command = [sys.executable, str(ORACLE)]
    else:
        command = [str(Path(args.binary).resolve()), "freeze"]
    env = dict(os.environ)
    env.pop("SPDLOG_LEVEL", None)
    env["NO_COLOR"] = "1"

    if not args.cases_dir.is_dir():
        print(f"run_golden: {args.cases_dir} is not a directory", file=sys.stderr)
        return 2
    cases = sorted(p for p in args.cases_dir.iterdir() if p.is_dir())
    if args.only:
        names = {p.name for p in cases}
        missing = [name for name in args.only if name not in names]
        if missing:
            print(f"run_golden: no such case: {', '.join(missing)}", file=sys.stderr)
            return 2
        cases = [p for p in cases if p.name in args.only]
    if not cases:
        print(f"run_golden: no cases in {args.cases_dir}", file=sys.stderr)
        return 2

    failed = 0
    for case in cases:
        reason = run_case(case, command, env, oracle=args.oracle)
        if reason is not None:
            failed += 1
            print(f"FAIL {case.name}: {reason}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
