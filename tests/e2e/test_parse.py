"""`hpfreeze parse` end to end: conformance lines, stdin mode, --json, --check, exit codes."""
import json
import os
import select
import signal
import subprocess
import unittest

from hpf import BINARY, TESTDATA, env, run


class ParseConformance(unittest.TestCase):
    def test_every_public_case_as_argument(self):
        with open(os.path.join(TESTDATA, "placements.jsonl"), encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        self.assertGreaterEqual(len(cases), 24)
        for c in cases:
            r = run("parse", "--", c["input"])
            if c["canonical"] is None:
                self.assertEqual(r.returncode, 1, c)
                self.assertEqual(r.stdout, b"", c)
                self.assertEqual(r.stderr.count(b"\n"), 1, c)
                self.assertTrue(r.stderr.startswith(b"hpfreeze: error: argument 1: "), r.stderr)
            else:
                self.assertEqual(r.returncode, 0, (c, r.stderr))
                self.assertEqual(r.stdout.decode(), c["canonical"] + "\n")
                self.assertEqual(r.stderr, b"")

    def test_every_valid_case_through_stdin_in_order(self):
        with open(os.path.join(TESTDATA, "placements.jsonl"), encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        valid = [c for c in cases if c["canonical"] is not None]
        r = run("parse", stdin="".join(c["input"] + "\n" for c in valid).encode())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().splitlines(), [c["canonical"] for c in valid])


class ParseCommandLine(unittest.TestCase):
    def test_arguments_in_order_with_errors_named_by_position(self):
        r = run("parse", "S(0)", "S(x)", "R", "SS(0,0)")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"S(0)\nR\n")
        self.assertEqual(
            r.stderr.decode(),
            "hpfreeze: error: argument 2: invalid placement 'S(x)': dim 'x' is not an integer\n"
            "hpfreeze: error: argument 4: invalid placement 'SS(0,0)': split_factor must be >= 1, "
            "got 0\n")

    def test_stdin_lines_errors_name_the_line(self):
        r = run("parse", stdin=b"R\r\nShard(0)\n\nS(1)")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"R\nS(1)\n")
        lines = r.stderr.decode().splitlines()
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[0].startswith("hpfreeze: error: <stdin>:2: invalid placement 'Shard(0)'"))
        self.assertEqual(lines[1], "hpfreeze: error: <stdin>:3: invalid placement '': empty string")

    def test_empty_stdin_prints_nothing(self):
        r = run("parse", stdin=b"")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))

    def test_json_lines(self):
        r = run("parse", "--json", "S(0)", "SS( 1 , 2 )", "R", "P(avg)", "S(-2)")
        self.assertEqual(r.returncode, 0, r.stderr)
        objs = [json.loads(line) for line in r.stdout.decode().splitlines()]
        self.assertEqual(objs, [
            {"$placement": "Shard", "dim": 0, "uneven_shard": False, "canonical": "S(0)"},
            {"$placement": "StridedShard", "dim": 1, "split_factor": 2, "uneven_shard": False,
             "canonical": "SS(1,2)"},
            {"$placement": "Replicate", "canonical": "R"},
            {"$placement": "Partial", "reduce_op": "avg", "canonical": "P(avg)"},
            {"$placement": "Shard", "dim": 1, "uneven_shard": True, "canonical": "S(-2)"},
        ])

    def test_check_fails_on_non_canonical_but_still_prints(self):
        r = run("parse", "--check", "S(0)", "S(+0)", "SS( 0 , 2 )")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"S(0)\nS(0)\nSS(0,2)\n")
        self.assertEqual(
            r.stderr.decode(),
            "hpfreeze: error: argument 2: placement 'S(+0)' is not canonical (canonical form: "
            "'S(0)')\n"
            "hpfreeze: error: argument 3: placement 'SS( 0 , 2 )' is not canonical (canonical "
            "form: 'SS(0,2)')\n")
        r = run("parse", "--check", "S(0)", "R", "SS(-1,4)")
        self.assertEqual((r.returncode, r.stderr), (0, b""))

    def test_usage_errors_exit_2(self):
        for args in (["parse", "--bogus"], ["nosuchcommand"], [], ["freeze", "--plan"]):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(r.stdout, b"", args)
            self.assertTrue(r.stderr.startswith(b"hpfreeze: error: "), (args, r.stderr))

    def test_version_and_help_on_stdout(self):
        r = run("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout.decode(), r"^hpfreeze \d+\.\d+\.\d+\n$")
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"parse", r.stdout)
        self.assertIn(b"freeze", r.stdout)
        r = run("parse", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"--check", r.stdout)

    def test_quiet_silences_errors_but_not_the_exit_code(self):
        r = run("-q", "-q", "parse", "S(x)")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (1, b"", b""))
        r = run("-q", "parse", "S(x)")
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith(b"hpfreeze: error: "))

    def test_spdlog_level_env_and_no_color(self):
        r = run("parse", "S(x)", extra_env={"SPDLOG_LEVEL": "off"})
        self.assertEqual((r.returncode, r.stderr), (1, b""))
        r = run("parse", "S(x)")
        self.assertNotIn(b"\x1b[", r.stderr)

    def test_stdout_full_is_an_io_error(self):
        with open("/dev/full", "wb") as full:
            import subprocess
            from hpf import BINARY, env
            p = subprocess.run([BINARY, "parse", "R"], stdout=full, stderr=subprocess.PIPE, env=env())
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"hpfreeze: error: ", p.stderr)


def sanitized():
    with open(BINARY, "rb") as f:
        data = f.read()
    return any(marker in data for marker in (b"__asan_init", b"libasan", b"AddressSanitizer"))


class ParseStreaming(unittest.TestCase):
    """stdin is parsed line by line as it arrives: an endless stream is fine."""

    def test_endless_stdin_prints_at_once(self):
        # Before streaming, `yes 'S(0)' | hpfreeze parse | head -1` never printed.
        r = subprocess.run(["bash", "-c", 'yes "S(0)" | "$0" parse | head -1; '
                            'echo "status=${PIPESTATUS[1]}" >&2', BINARY],
                           capture_output=True, timeout=60, env=env())
        self.assertEqual(r.stdout, b"S(0)\n")
        self.assertEqual(r.stderr, b"status=%d\n" % (128 + signal.SIGPIPE))

    def test_each_line_is_answered_before_the_next_arrives(self):
        p = subprocess.Popen([BINARY, "parse"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env())
        try:
            for line, answer in ((b"SS( 0 , 2 )\n", b"SS(0,2)\n"), (b"r\n", None),
                                 (b"S(-1)\n", b"S(-1)\n")):
                p.stdin.write(line)
                p.stdin.flush()
                # Wait for the answer with a limit, so that a parse that waits for the end
                # of its input fails here instead of hanging.
                ready, _, _ = select.select([p.stdout, p.stderr], [], [], 20)
                self.assertTrue(ready, "no answer to %r before the end of stdin" % line)
                if answer is not None:
                    self.assertEqual(p.stdout.readline(), answer)
                else:
                    self.assertTrue(p.stderr.readline().startswith(
                        b"hpfreeze: error: <stdin>:2: invalid placement 'r'"))
            p.stdin.close()
            self.assertEqual(p.wait(timeout=30), 1)
        finally:
            p.kill()
            p.wait()
            for f in (p.stdout, p.stderr):
                f.close()

    def test_a_line_over_1_mib_is_rejected_without_being_held(self):
        long_line = b"S(" + b" " * (1 << 20) + b"0)"
        r = run("parse", stdin=b"R\n" + long_line + b"\r\nS(1)\n" + b" " * ((1 << 20) - 1) + b"x")
        self.assertEqual(r.stdout, b"R\nS(1)\n")
        self.assertTrue(r.stderr.startswith(
            b"hpfreeze: error: <stdin>:2: line longer than 1048576 bytes\n"
            b"hpfreeze: error: <stdin>:4: invalid placement '"))
        self.assertEqual(r.returncode, 1)
        # Exactly at the limit: parsed (S( spaces 0 ) is a valid, non-canonical Shard).
        at_limit = b"S(" + b" " * ((1 << 20) - 4) + b"0)"
        self.assertEqual(len(at_limit), 1 << 20)
        r = run("parse", stdin=at_limit + b"\n")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"S(0)\n", b""))

    def test_an_endless_line_takes_no_memory(self):
        script = ('head -c 300000000 /dev/zero | tr "\\0" " " | /usr/bin/time -f "rss=%M" "$0" parse')
        r = subprocess.run(["bash", "-c", script, BINARY], capture_output=True, timeout=120,
                           env=env())
        lines = r.stderr.decode().splitlines()
        self.assertEqual(lines[0], "hpfreeze: error: <stdin>:1: line longer than 1048576 bytes")
        rss_kib = int(lines[-1].split("=")[1])
        if sanitized():
            return  # ASan's quarantine of freed chunks (256 MB) would dominate
        self.assertLess(rss_kib, 32 * 1024, "peak RSS %d KiB for a 300 MB line" % rss_kib)


if __name__ == "__main__":
    unittest.main()
