"""A file of the wrong kind is named in one line, the same way by every command that reads it.

`freeze --base` wants a codegen_meta.json, `expand` a plan dump; given a plan dump, a model
tree dump or a meta in their place, from a file or from stdin, each exits 1 with "this looks
like KIND; WHO wants KIND" and writes nothing (docs/cli.md).
"""
import os
import shutil
import unittest

from hpf import TempDirTest, case, read, run

PLAN = "a plan dump (hpfreeze.plan/v1)"
MODEL = "a model tree dump (hpfreeze.model/v1)"
META = "a codegen_meta.json"


class BaseOfTheWrongKind(TempDirTest):
    def setUp(self):
        super().setUp()
        for name in ("plan.json", "model.json", "base.json"):
            shutil.copy(case("tiny-base", name), self.path(name))

    def freeze(self, base, stdin=None, output=("-o", "out.json")):
        return run("freeze", "--plan", "plan.json", "--model", "model.json", "--base", base,
                   *output, cwd=self.dir, stdin=stdin)

    def test_a_dump_as_base_is_refused_from_a_file_or_stdin(self):
        for name, kind in (("plan.json", PLAN), ("model.json", MODEL)):
            for base, stdin, shown in ((name, None, name), ("-", read(self.path(name)), "<stdin>")):
                for output in (("-o", "out.json"), ("-o", "-"), ()):
                    with self.subTest(base=name, stdin=stdin is not None, output=output):
                        with open(self.path("out.json"), "wb") as f:
                            f.write(b"old")
                        r = self.freeze(base, stdin, output)
                        self.assertEqual((r.returncode, r.stdout, r.stderr.decode()), (1, b"", (
                            f"hpfreeze: error: {shown}: this looks like {kind}; --base wants "
                            f"{META}\n")))
                        self.assertEqual(read(self.path("out.json")), b"old")
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["base.json", "model.json", "out.json", "plan.json"])

    def test_a_meta_as_base_is_still_a_base(self):
        r = self.freeze("base.json")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(read(self.path("out.json")), read(case("tiny-base", "expected.json")))
        # The meta just written is a base for the next freeze, as for an in-place update.
        r = self.freeze("out.json")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(read(self.path("out.json")), read(case("tiny-base", "expected.json")))


class ExpandOfTheWrongKind(TempDirTest):
    def test_a_meta_or_a_model_dump_is_named(self):
        files = ((case("tiny-base", "expected.json"), META),
                 (case("tiny-base", "base.json"), META),
                 (case("tiny-base", "model.json"), MODEL))
        for path, kind in files:
            for arg, stdin, shown in ((path, None, path), ("-", read(path), "<stdin>")):
                with self.subTest(file=path, stdin=stdin is not None):
                    r = run("expand", arg, stdin=stdin)
                    self.assertEqual((r.returncode, r.stdout, r.stderr.decode()), (1, b"", (
                        f"hpfreeze: error: {shown}: this looks like {kind}; expand wants {PLAN}\n")))

    def test_a_damaged_plan_keeps_its_own_error(self):
        with open(self.path("p.json"), "w") as f:
            f.write('{"modules": {"lin": {"bogus": 1}}}')
        r = run("expand", self.path("p.json"))
        self.assertEqual((r.returncode, r.stderr.decode()), (1, (
            f"hpfreeze: error: {self.path('p.json')}: /modules/lin/bogus: unknown module-spec "
            "field 'bogus'\n")))


if __name__ == "__main__":
    unittest.main()
