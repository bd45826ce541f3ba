"""Hostile inputs, generated at run time: each ends in a clear error or a correct result.

Every run goes through /usr/bin/time -v; its wall and CPU time and peak RSS are printed
(docs/reliability.md has the figures) and the RSS is held to 10 MB + 6 x the input size
(more for inputs made of tiny tokens, see below), except in sanitizer builds, whose shadow
memory and quarantine would dominate. No timing is asserted: a hang is caught by the
per-run timeout here and by ctest's TIMEOUT.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

from hpf import BINARY, TempDirTest, env

TIME = "/usr/bin/time"
MIB = 1 << 20
RUN_TIMEOUT = 240  # seconds per hpfreeze run; far above any normal run, even under ASan


def sanitized_binary():
    # GCC links the ASan runtime dynamically (libasan.so), clang statically: look for either.
    with open(BINARY, "rb") as f:
        data = f.read()
    return any(marker in data for marker in (b"__asan_init", b"libasan", b"AddressSanitizer"))


SANITIZED = sanitized_binary()

SMALL_MODEL = json.dumps({"modules": {"": "Net", "lin": "Linear"},
                          "parameters": {"lin.weight": {"shape": [8, 4]}}}).encode()
PLAN_HEAD = b'{"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}}}, "meta": '
# freeze of PLAN_HEAD + b"{}}" with SMALL_MODEL, per SPEC §5.
EXPECTED_SMALL = json.dumps({
    "boundary_classes": {"lin": "Linear"}, "codegen_version": "0.1.1",
    "covered": {"axes": [], "module_overrides": False, "sharding_plan": True},
    "entrypoints": {"parallelize": "hp_parallelize"}, "external_state_classes": [],
    "frozen_sharded_params": ["lin.weight"], "injections": [], "mesh_dim_names": None,
    "model_class": None, "model_name": None, "module_overrides": [],
    "not_covered": ["mesh", "fsdp2", "pp", "activation_checkpoint", "compile"], "outputs": {},
    "parallel_dims": {}, "param_plan": {"lin": {"params": {"weight": {"tp": "S(0)"}}}},
    "remote_siblings": [], "signature": "", "skipped_overrides": [], "source": {},
    "special_handlers": {}, "tied_pairs": [], "yaml_path": "", "yaml_sha256": ""},
    indent=2, sort_keys=True)
# Inputs made almost only of tiny tokens cost more than 6 bytes of memory per input byte:
# every token becomes a simdjson tape entry, a value in the plan model and again in the
# output tree. Measured factors and where the memory goes: docs/reliability.md.
TOKEN_DENSE_RSS_FACTOR = 14
MODULES_RSS_FACTOR = 14


class Hostile(TempDirTest):
    figures = []

    @classmethod
    def tearDownClass(cls):
        sys.stderr.write("\n%-46s %10s %7s %7s %10s %6s  %s\n" % (
            "case", "input", "wall s", "cpu s", "peak RSS", "RSS/in", "result"))
        for name, size, wall, cpu, rss, result in cls.figures:
            sys.stderr.write("%-46s %6.1f MiB %7.2f %7.2f %6.1f MiB %6.1f  %s\n" % (
                name, size / MIB, wall, cpu, rss / MIB, rss / size, result))

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def freeze(self, case, plan_bytes, model_bytes=SMALL_MODEL, rss_factor=6):
        """Runs freeze -o out.json under /usr/bin/time -v; returns (rc, stderr, out path)."""
        plan = self.write("plan.json", plan_bytes)
        model = self.write("model.json", model_bytes)
        out = os.path.join(self.dir, "out.json")
        p, wall, cpu, rss = self.run_timed(
            [BINARY, "freeze", "--plan", plan, "--model", model, "-o", out])
        size = len(plan_bytes) + len(model_bytes)
        self.figures.append((case, size, wall, cpu, rss,
                             "exit %d%s" % (p.returncode, ", " + p.stderr.decode(
                                 "utf-8", "replace").strip()[-60:] if p.stderr else "")))
        self.assertGreaterEqual(p.returncode, 0, "killed by signal %d" % -p.returncode)
        if not SANITIZED:
            self.assertLessEqual(rss, 10 * 1000 * 1000 + rss_factor * size,
                                 "peak RSS %d KiB for %d input bytes" % (rss // 1024, size))
        return p.returncode, p.stderr.decode("utf-8", "replace"), out

    def assert_error(self, result, expected_line):
        rc, stderr, out = result
        self.assertEqual(rc, 1, stderr)
        self.assertEqual(stderr, expected_line + "\n")
        self.assertFalse(os.path.exists(out))

    def load_output(self, result):
        rc, stderr, out = result
        self.assertEqual((rc, stderr), (0, ""))
        with open(out, "rb") as f:
            data = f.read()
        return data, json.loads(data)

    # ----------------------------------------------------------------------------------
    def test_64_mib_string_value(self):
        # Every escape class inside: plain ASCII, quote, backslash, control, non-ASCII, astral.
        unit = 'abcdefgh"\\\n\x01\u00e9\U0001F600/~'
        text = unit * (64 * MIB // (len(json.dumps(unit)) - 2) + 1)
        encoded = json.dumps({"signature": text}).encode()
        self.assertGreater(len(encoded), 64 * MIB)
        result = self.freeze("64 MiB string value", PLAN_HEAD + encoded + b"}")
        data, meta = self.load_output(result)
        self.assertEqual(meta["signature"], text)
        # The bytes are Python's ensure_ascii escaping of that string.
        self.assertIn(b'"signature": ' + json.dumps(text).encode() + b",\n", data)

    def test_object_with_a_million_keys(self):
        keys = ["k%07d" % ((i * 7919) % 1000000) for i in range(1000000)]  # a permutation
        source = "{" + ",".join('"%s":%d' % (k, i) for i, k in enumerate(keys)) + "}"
        plan = PLAN_HEAD + b'{"source": ' + source.encode() + b"}}"
        data, meta = self.load_output(self.freeze("1,000,000 keys in one object", plan,
                                                  rss_factor=TOKEN_DENSE_RSS_FACTOR))
        self.assertEqual(list(meta["source"]), sorted(keys))
        self.assertEqual(meta["source"]["k0007919"], 1)

    def test_object_with_a_million_keys_and_one_duplicate(self):
        keys = ["k%07d" % i for i in range(1000000)] + ["k0123456"]
        source = "{" + ",".join('"%s":0' % k for k in keys) + "}"
        plan = PLAN_HEAD + b'{"source": ' + source.encode() + b"}}"
        self.assert_error(self.freeze("1,000,000 keys + a duplicate at the end", plan,
                                      rss_factor=TOKEN_DENSE_RSS_FACTOR),
                          "hpfreeze: error: %s: /meta/source/k0123456: duplicate key 'k0123456'"
                          % os.path.join(self.dir, "plan.json"))

    def test_a_million_modules(self):
        names = ["layers.%d" % i for i in range(1000000)]
        plan = ('{"modules": {' + ",".join('"%s": {"params": {"w": {"tp": "S(0)"}}}' % m
                                           for m in names) + "}}").encode()
        model = ('{"modules": {' + ",".join('"%s": "Linear"' % m for m in names) + "}}").encode()
        result = self.freeze("1,000,000 modules", plan, model, rss_factor=MODULES_RSS_FACTOR)
        # Expected bytes: Python's own json.dumps layout with the three big members spliced
        # in from templates (building them as dicts would take gigabytes here).
        skeleton = json.loads(EXPECTED_SMALL)
        skeleton.update(boundary_classes={"@bc": 0}, frozen_sharded_params=["@fsp"],
                        param_plan={"@pp": 0})
        expected = json.dumps(skeleton, indent=2, sort_keys=True)
        names.sort()
        expected = expected.replace('    "@bc": 0', ",\n".join(
            '    "%s": "Linear"' % m for m in names))
        expected = expected.replace('    "@fsp"', ",\n".join('    "%s.w"' % m for m in names))
        expected = expected.replace('    "@pp": 0', ",\n".join(
            '    "%s": {\n      "params": {\n        "w": {\n          "tp": "S(0)"\n        }\n'
            '      }\n    }' % m for m in names))
        rc, stderr, out = result
        self.assertEqual((rc, stderr), (0, ""))
        with open(out, "rb") as f:
            self.assertTrue(f.read() == expected.encode(), "output differs from the expected bytes")

    def test_nesting_100000_deep(self):
        depth = 100000
        prefix = PLAN_HEAD + b'{"x": '
        # The plan and its meta are two levels: the 1023rd nested container is level 1025.
        for case, open_, close in (("arrays", b"[", b"]"), ("objects", b'{"a":', b"}")):
            plan = prefix + open_ * depth + b"0" + close * depth + b"}}"
            col = len(prefix) + 1022 * len(open_) + 1
            self.assert_error(
                self.freeze("nesting 100,000 deep (%s)" % case, plan),
                "hpfreeze: error: %s:1:%d: nesting deeper than 1024 levels"
                % (os.path.join(self.dir, "plan.json"), col))
        # Unterminated: the same error, not an end-of-input one.
        plan = prefix + b"[" * depth
        self.assert_error(self.freeze("nesting 100,000 deep, unterminated", plan),
                          "hpfreeze: error: %s:1:%d: nesting deeper than 1024 levels"
                          % (os.path.join(self.dir, "plan.json"), len(prefix) + 1023))

    def test_numbers_with_100000_digits(self):
        plan_path = os.path.join(self.dir, "plan.json")
        col = len(PLAN_HEAD) + len(b'{"x": ') + 1
        for case, digits in (("integer", b"7" * 100000),
                             ("negative integer", b"-" + b"7" * 100000)):
            plan = PLAN_HEAD + b'{"x": ' + digits + b"}}"
            self.assert_error(self.freeze("100,000-digit %s" % case, plan),
                              "hpfreeze: error: %s:1:%d: integer out of range [-2^63, 2^64-1]"
                              % (plan_path, col))
        plan = PLAN_HEAD + b'{"x": ' + b"7" * 100000 + b".5}}"
        self.assert_error(self.freeze("100,000-digit float (overflow)", plan),
                          "hpfreeze: error: %s:1:%d: number out of range" % (plan_path, col))
        # Representable despite their length: the result is Python's float() of the text.
        for case, text in (("100,000-digit fraction", "0." + "3" * 99999 + "7"),
                           ("100,000 leading zeros", "0." + "0" * 99990 + "123"),
                           ("100,000-digit exponent", "1.5e-" + "0" * 99990 + "7"),
                           ("100,000-digit mantissa, exponent", "1" * 100000 + "e-99990")):
            plan = PLAN_HEAD + b'{"x": ' + text.encode() + b"}}"
            data, meta = self.load_output(self.freeze(case, plan))
            self.assertEqual(meta["x"], float(text), case)
            self.assertIn(b'"x": ' + repr(float(text)).encode() + b",\n", data, case)

    def test_10_mib_of_whitespace(self):
        blank = b" \t\r\n" * (10 * MIB // 4)
        lines = blank.count(b"\n")
        self.assert_error(self.freeze("10 MiB of whitespace, nothing else", blank),
                          "hpfreeze: error: %s:%d:1: empty input"
                          % (os.path.join(self.dir, "plan.json"), lines + 1))
        # Between every token of a valid plan: the result is as without.
        tokens = re.findall(rb'"[^"]*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', PLAN_HEAD + b'{"x": [1, 2.5]}}')
        spread = blank[:MIB].join(tokens)
        self.assertGreater(len(spread), 10 * MIB)
        data, meta = self.load_output(self.freeze("~10 MiB of whitespace between tokens", spread))
        expected = json.loads(EXPECTED_SMALL)
        expected["x"] = [1, 2.5]
        self.assertEqual(data, json.dumps(expected, indent=2, sort_keys=True).encode())

    def run_timed(self, cmd, **kwargs):
        """Runs cmd under /usr/bin/time -v: (CompletedProcess, wall s, CPU s, peak RSS bytes)."""
        stats = os.path.join(self.dir, "time.txt")
        start = time.monotonic()
        p = subprocess.run([TIME, "-v", "-o", stats, *cmd], capture_output=True,
                           timeout=RUN_TIMEOUT, env=env(), **kwargs)
        wall = time.monotonic() - start
        with open(stats) as f:
            report = f.read()
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", report).group(1))
        cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)",
                                               report))
        return p, wall, cpu, rss * 1024

    def timed(self, case, cmd, size, **kwargs):
        """Runs cmd under /usr/bin/time -v; returns (CompletedProcess, peak RSS bytes)."""
        p, wall, cpu, rss = self.run_timed(cmd, **kwargs)
        self.figures.append((case, max(size, 1), wall, cpu, rss, "exit %d" % p.returncode))
        return p, rss

    def test_input_of_4_gib_or_more(self):
        # Sparse files: refused from their size alone, before anything is read, also when
        # the file is stdin.
        model = self.write("model.json", SMALL_MODEL)
        for size in (4 << 30, (4 << 30) + 1):
            plan = self.write("plan.json", b"")
            os.truncate(plan, size)
            for how in ("path", "stdin"):
                with open(plan, "rb") as f:
                    p, rss = self.timed("sparse file of %d bytes as %s" % (size, how),
                                        [BINARY, "freeze", "--plan",
                                         plan if how == "path" else "-", "--model", model],
                                        size, stdin=f)
                name = plan if how == "path" else "<stdin>"
                self.assertEqual((p.returncode, p.stdout, p.stderr.decode()),
                                 (2, b"", "hpfreeze: error: %s: input too large (4 GiB or more)\n"
                                  % name))
                if not SANITIZED:
                    self.assertLess(rss, 64 * MIB)

    def test_streams_of_zero_bytes_stop_at_once(self):
        # No JSON text holds a raw NUL: the first one already decides the error, so the
        # rest of an endless stream is never read.
        model = self.write("model.json", SMALL_MODEL)
        for how in ("/dev/zero", "stdin"):
            with open("/dev/zero", "rb") as zero:
                p, rss = self.timed("/dev/zero as %s" % how,
                                    [BINARY, "freeze", "--plan", "/dev/zero" if how != "stdin"
                                     else "-", "--model", model], 0, stdin=zero)
            name = "/dev/zero" if how != "stdin" else "<stdin>"
            self.assertEqual((p.returncode, p.stdout, p.stderr.decode()),
                             (1, b"", "hpfreeze: error: %s:1:1: expected a value\n" % name))
            if not SANITIZED:
                self.assertLess(rss, 64 * MIB)
        # Inside a string too, at the NUL's own column.
        p = subprocess.run([BINARY, "freeze", "--plan", "-", "--model", model],
                           input=b'{"modules": {"a' + b"\0" * (4 * MIB), capture_output=True,
                           timeout=RUN_TIMEOUT, env=env())
        self.assertEqual((p.returncode, p.stderr.decode()),
                         (1, "hpfreeze: error: <stdin>:1:16: unescaped control character 0x00 "
                             "in string\n"))

    def test_endless_pipe_stops_at_the_stream_limit(self):
        # Blanks are valid JSON, so only the size limit for streams (1 GiB) stops them.
        model = self.write("model.json", SMALL_MODEL)
        feeder = subprocess.Popen([sys.executable, "-c", (
            "import sys\nb = b' ' * (4 << 20)\ntry:\n    while True: sys.stdout.buffer.write(b)\n"
            "except BrokenPipeError: pass\n")], stdout=subprocess.PIPE)
        try:
            p, rss = self.timed("endless pipe of blanks", [BINARY, "freeze", "--plan", "-",
                                                           "--model", model], 1 << 30,
                                stdin=feeder.stdout)
        finally:
            feeder.stdout.close()
            feeder.kill()
            feeder.wait()
        self.assertEqual((p.returncode, p.stdout, p.stderr.decode()),
                         (2, b"", "hpfreeze: error: <stdin>: input too large (1 GiB or more from "
                                  "a pipe or device)\n"))
        if not SANITIZED:
            self.assertLess(rss, (1 << 30) + 64 * MIB)

    def test_freeze_check_compares_in_pieces(self):
        # A meta three times its plan (each é of the plan's meta is \u00e9 in the output):
        # --check of a committed copy peaks no higher than writing it did, since the file is
        # compared in pieces instead of being read whole beside the rendered meta (which
        # peaked at about 1.2 times writing's on 96 Mi characters). A 5 GiB sparse file is
        # compared from its size: a difference, exit 1, not "input too large".
        model = self.write("model.json", SMALL_MODEL)
        plan = self.write("plan.json", PLAN_HEAD + b'{"signature": "' +
                          "\u00e9".encode() * (48 * MIB) + b'"}}')
        out = os.path.join(self.dir, "out.json")
        freeze = [BINARY, "freeze", "--plan", plan, "--model", model, "-o", out]
        p, rss_write = self.timed("freeze -o of a 288 MiB meta", freeze, os.path.getsize(plan))
        self.assertEqual((p.returncode, p.stderr), (0, b""))
        written = os.path.getsize(out)
        self.assertGreater(written, 288 * MIB)
        p, rss_check = self.timed("freeze --check of the same 288 MiB meta", freeze + ["--check"],
                                  os.path.getsize(out))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"", b""))
        if not SANITIZED:
            self.assertLess(rss_check, rss_write + 32 * MIB)
        os.truncate(out, 5 << 30)
        p, rss = self.timed("freeze --check of a 5 GiB sparse meta", freeze + ["--check"],
                            5 << 30)
        self.assertEqual((p.returncode, p.stdout, p.stderr.decode()), (
            1, b"", "hpfreeze: error: %s: differs from what freeze would write (5368709120 bytes "
                    "where freeze writes %d bytes); too large to list the differences: diff "
                    "reads files below 4 GiB\n  run without --check to rewrite it: hpfreeze "
                    "freeze --plan %s --model %s -o %s\n" % (out, written, plan, model, out)))
        os.remove(out)

    def test_expand_refuses_names_that_would_forge_lines(self):
        # A name is one line of expand's output: a control character in it is refused,
        # shown escaped as every diagnostic shows it; other bytes (UTF-8) print verbatim.
        for module, shown in (("a\nb", "a\\nb"), ("x\ry", "x\\ry"), ("e\x1b[2J", "e\\x1b[2J"),
                              ("del\x7f", "del\\x7f")):
            plan = self.write("plan.json", json.dumps({"modules": {
                "ok": {"params": {"w": {"tp": "S(0)"}}},
                module: {"params": {"w": {"tp": "S(0)"}}}}}).encode())
            p = subprocess.run([BINARY, "expand", plan], capture_output=True,
                               timeout=RUN_TIMEOUT, env=env())
            self.assertEqual((p.returncode, p.stdout, p.stderr.decode()),
                             (1, b"", "hpfreeze: error: %s: sharded parameter name '%s.w' holds a "
                                      "control character: expand prints one name per line\n"
                              % (plan, shown)))
        plan = self.write("plan.json", json.dumps({"modules": {
            "\u00e9": {"params": {"w": {"tp": "S(0)"}}}, "tab\there": {}}}).encode())
        p = subprocess.run([BINARY, "expand", plan], capture_output=True, timeout=RUN_TIMEOUT,
                           env=env())
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "\u00e9.w\n".encode(), b""))

    def test_invalid_utf8_at_the_very_end_of_a_large_file(self):
        body = json.dumps({"k%06d" % i: "v" * 40 for i in range(600000)}).encode()[:-1]
        self.assertGreater(len(body), 30 * MIB)
        plan_path = os.path.join(self.dir, "plan.json")
        for case, tail, bad, why in (
                ("lone 0xff", b', "z": "\xff"}}', b"\xff", ""),
                # the closing quote is where the sequence stops being valid
                ("truncated 3-byte sequence", b', "z": "\xe2\x82"}}', b'"',
                 ": the multi-byte sequence started by 0xe2 is cut short"),
                ("encoded surrogate", b', "z": "\xed\xa0\x80"}}', b"\xa0", "")):
            plan = PLAN_HEAD + body + tail
            col = len(plan) - len(tail) + tail.rindex(bad) + 1
            self.assert_error(
                self.freeze("invalid UTF-8 at the end of 31 MiB (%s)" % case, plan),
                "hpfreeze: error: %s:1:%d: invalid UTF-8 byte 0x%02x%s"
                % (plan_path, col, bad[0], why))
        # The very last byte of the file: after a complete document it is trailing content.
        plan = PLAN_HEAD + body + b"}}\xc3"
        self.assert_error(self.freeze("invalid UTF-8 as the last byte of 31 MiB", plan),
                          "hpfreeze: error: %s:1:%d: trailing content after the JSON document"
                          % (plan_path, len(plan)))


if __name__ == "__main__":
    if not shutil.which(TIME) and not os.path.exists(TIME):
        print("skipped: %s (GNU time) is not installed" % TIME)
        sys.exit(0)
    unittest.main()
