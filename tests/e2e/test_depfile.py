"""`hpfreeze freeze --depfile`: the Make-syntax rule make and ninja read (docs/cli.md).

Expected depfile texts are written out by hand from GCC's escaping rules (plus `\\:`).
"""
import os
import shutil
import unittest

from hpf import TempDirTest, case, read, run


class Depfile(TempDirTest):
    def setUp(self):
        super().setUp()
        for name in ("plan.json", "model.json", "base.json"):
            shutil.copy(case("tiny-base", name), os.path.join(self.dir, name))
        self.expected = read(case("tiny-base", "expected.json"))

    def freeze(self, *args, stdin=None):
        return run("freeze", *args, cwd=self.dir, stdin=stdin)

    def test_rule_names_output_as_given_and_every_input(self):
        os.mkdir(self.path("out"))
        r = self.freeze("--plan", "plan.json", "--model", "./model.json", "--base", "base.json",
                        "-o", "out//meta.json", "--depfile", "out/meta.json.d")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(read(self.path("out", "meta.json")), self.expected)
        self.assertEqual(read(self.path("out", "meta.json.d")),
                         b"out//meta.json: plan.json ./model.json base.json\n")

    def test_without_base_and_with_absolute_paths(self):
        out = self.path("meta.json")
        r = self.freeze("--plan", self.path("plan.json"), "--model", self.path("model.json"),
                        "-o", out, "--depfile", "meta.d")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(read(self.path("meta.d")).decode(),
                         f"{out}: {self.path('plan.json')} {self.path('model.json')}\n")

    def test_special_characters_are_escaped(self):
        os.rename(self.path("plan.json"), self.path("my plan#1.json"))
        os.rename(self.path("model.json"), self.path("mo$del:v1.json"))
        os.rename(self.path("base.json"), self.path("b\\a (1)~%.json"))
        r = self.freeze("--plan", "my plan#1.json", "--model", "mo$del:v1.json",
                        "--base", "b\\a (1)~%.json", "-o", "o t:.json", "--depfile", "o t.d")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(read(self.path("o t.d")),
                         b"o\\ t\\:.json: my\\ plan\\#1.json mo$$del\\:v1.json b\\a\\ (1)~%.json\n")

    def test_no_depfile_when_the_base_is_a_dump(self):
        # The one way to name a file twice in a run that succeeds was the plan as --base; the
        # rule lists a duplicate once (depfile_test), but the plan is now refused as a base.
        r = self.freeze("--plan", "plan.json", "--model", "model.json", "--base", "plan.json",
                        "-o", "m.json", "--depfile", "m.d")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertFalse(os.path.exists(self.path("m.d")))
        self.assertFalse(os.path.exists(self.path("m.json")))

    def test_written_even_when_if_changed_leaves_the_output_alone(self):
        args = ("--plan", "plan.json", "--model", "model.json", "-o", "m.json", "--if-changed",
                "--depfile", "m.d")
        self.assertEqual(self.freeze(*args).returncode, 0)
        os.utime(self.path("m.json"), (1_000_000, 1_000_000))
        os.remove(self.path("m.d"))
        r = self.freeze(*args)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(os.stat(self.path("m.json")).st_mtime, 1_000_000)
        self.assertEqual(read(self.path("m.d")), b"m.json: plan.json model.json\n")
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["base.json", "m.d", "m.json", "model.json", "plan.json"])

    def test_if_changed_leaves_an_identical_depfile_alone_like_the_output(self):
        args = ("--plan", "plan.json", "--model", "model.json", "-o", "m.json", "--depfile", "m.d")
        self.assertEqual(self.freeze(*args).returncode, 0)
        meta = read(self.path("m.json"))
        for name in ("m.json", "m.d"):
            os.utime(self.path(name), (1_000_000, 1_000_000))
        r = self.freeze(*args, "--if-changed")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(os.stat(self.path("m.json")).st_mtime, 1_000_000)
        self.assertEqual(os.stat(self.path("m.d")).st_mtime, 1_000_000)
        # Either one with other bytes is rewritten, and only that one.
        for changed, same in (("m.d", "m.json"), ("m.json", "m.d")):
            with self.subTest(changed=changed):
                with open(self.path(changed), "ab") as f:
                    f.write(b"\n")
                os.utime(self.path(changed), (1_000_000, 1_000_000))
                r = self.freeze(*args, "--if-changed")
                self.assertEqual((r.returncode, r.stderr), (0, b""))
                self.assertNotEqual(os.stat(self.path(changed)).st_mtime, 1_000_000)
                self.assertEqual(os.stat(self.path(same)).st_mtime, 1_000_000)
                os.utime(self.path(changed), (1_000_000, 1_000_000))
        self.assertEqual(read(self.path("m.d")), b"m.json: plan.json model.json\n")
        self.assertEqual(read(self.path("m.json")), meta)
        # Without --if-changed both are written again.
        self.assertEqual(self.freeze(*args).returncode, 0)
        self.assertNotEqual(os.stat(self.path("m.d")).st_mtime, 1_000_000)
        self.assertNotEqual(os.stat(self.path("m.json")).st_mtime, 1_000_000)
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["base.json", "m.d", "m.json", "model.json", "plan.json"])

    def test_an_existing_depfile_is_replaced_whole(self):
        with open(self.path("m.d"), "w") as f:
            f.write("stale: rule with a much longer text than the new one\n" * 10)
        r = self.freeze("--plan", "plan.json", "--model", "model.json", "-o", "m.json",
                        "--depfile", "m.d")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(read(self.path("m.d")), b"m.json: plan.json model.json\n")

    def test_stdin_or_stdout_is_a_usage_error_and_nothing_is_read_or_written(self):
        cases = [
            (("--plan", "-", "--model", "model.json", "-o", "m.json"),
             "--depfile needs input files, but --plan is '-' (stdin)"),
            (("--plan", "plan.json", "--model", "-", "-o", "m.json"),
             "--depfile needs input files, but --model is '-' (stdin)"),
            (("--plan", "plan.json", "--model", "model.json", "--base", "-", "-o", "m.json"),
             "--depfile needs input files, but --base is '-' (stdin)"),
            (("--plan", "plan.json", "--model", "model.json", "-o", "-"),
             "--depfile needs an output file, but -o is '-' (stdout)"),
            (("--plan", "plan.json", "--model", "model.json"),
             "--depfile needs an output file, but -o is '-' (stdout)"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = self.freeze(*args, "--depfile", "m.d", stdin=read(self.path("plan.json")))
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (2, b"", f"hpfreeze: error: m.d: {message}\n"))
                self.assertFalse(os.path.exists(self.path("m.d")))
                self.assertFalse(os.path.exists(self.path("m.json")))

    def test_both_stdin_and_stdout_report_both(self):
        r = self.freeze("--plan", "-", "--model", "model.json", "--depfile", "m.d", stdin=b"{}")
        self.assertEqual((r.returncode, r.stderr.decode()), (2, (
            "hpfreeze: error: m.d: --depfile needs an output file, but -o is '-' (stdout)\n"
            "hpfreeze: error: m.d: --depfile needs input files, but --plan is '-' (stdin)\n")))

    def test_a_path_with_a_newline_is_refused_before_anything_is_written(self):
        r = self.freeze("--plan", "plan.json", "--model", "model.json", "-o", "a\nb.json",
                        "--depfile", "m.d")
        self.assertEqual((r.returncode, r.stderr.decode()), (2, (
            "hpfreeze: error: m.d: cannot write -o 'a\\nb.json' to a depfile: '\\n' (0x0a): make "
            "syntax has no newline or carriage return\n")))
        self.assertEqual(sorted(os.listdir(self.dir)), ["base.json", "model.json", "plan.json"])

    def test_no_depfile_when_the_freeze_fails(self):
        with open(self.path("m.d"), "w") as f:
            f.write("old\n")
        with open(self.path("bad.json"), "w") as f:
            f.write('{"modules": {"x": {"params": {"w": {"tp": "Shrad(0)"}}}}}')
        r = self.freeze("--plan", "bad.json", "--model", "model.json", "-o", "m.json",
                        "--depfile", "m.d")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(read(self.path("m.d")), b"old\n")
        self.assertFalse(os.path.exists(self.path("m.json")))

    def test_no_depfile_when_the_output_cannot_be_written(self):
        r = self.freeze("--plan", "plan.json", "--model", "model.json", "-o", "nodir/m.json",
                        "--depfile", "m.d")
        self.assertEqual(r.returncode, 2)
        self.assertFalse(os.path.exists(self.path("m.d")))

    def test_depfile_that_cannot_be_written_is_an_io_error(self):
        r = self.freeze("--plan", "plan.json", "--model", "model.json", "--base", "base.json",
                        "-o", "m.json", "--depfile", "nodir/m.d")
        self.assertEqual((r.returncode, r.stderr.decode()), (
            2, "hpfreeze: error: nodir/m.d: cannot write: No such file or directory\n"))
        # Both outputs or neither: the output is not written either, so that no build system
        # sees a fresh output without its dependencies.
        self.assertFalse(os.path.exists(self.path("m.json")))
        # An existing output is left as it was.
        with open(self.path("m.json"), "wb") as f:
            f.write(b"old")
        r = self.freeze("--plan", "plan.json", "--model", "model.json", "--base", "base.json",
                        "-o", "m.json", "--depfile", "nodir/m.d")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(read(self.path("m.json")), b"old")

    def test_help_lists_the_flag(self):
        r = run("freeze", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"--depfile", r.stdout)


if __name__ == "__main__":
    unittest.main()
