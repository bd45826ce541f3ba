"""A file of the wrong kind is named in one line, the same way by every command that reads it.

`freeze --base` wants a codegen_meta.json, `expand` a plan dump; given a plan dump, a model
tree dump or a meta in their place, from a file or from stdin, each exits 1 with "this looks
like KIND; WHO wants KIND" and writes nothing (docs/cli.md).
"""
import os
import shutil
import unittest

from checkpoints import write_safetensors, write_sharded
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


class CheckpointAsFreezeModel(TempDirTest):
    """freeze --model with a checkpoint (the newcomer review of 2026-12-07 gave it DeepSeek's
    index): the line says what freeze needs that a checkpoint lacks and where a model dump
    comes from; report and check still take the checkpoint."""
    WHY = ("--model wants a model tree dump (hpfreeze.model/v1): freeze needs the class of "
           "every module (its boundary_classes), which a checkpoint does not hold; "
           "hpfreeze-export writes a model tree dump from the live model (docs/formats.md, "
           "\"The Python exporter\"), and report and check take the checkpoint itself")

    def setUp(self):
        super().setUp()
        tensors = {"lin.weight": ("F32", [8, 4])}  # what the tiny case plans
        self.index = write_sharded(self.path("ckpt"), {"model-00001-of-00001.safetensors":
                                                       tensors})
        self.single = write_safetensors(self.path("model.safetensors"), tensors)

    def test_freeze_says_what_it_needs_and_writes_nothing(self):
        plan = case("tiny", "plan.json")
        cases = ((self.index, None, self.index, "a sharded checkpoint's index "
                  "(*.safetensors.index.json); "),
                 ("-", read(self.index), "<stdin>", "a sharded checkpoint's index "
                  "(*.safetensors.index.json); "),
                 (self.single, None, self.single, "a safetensors checkpoint, not JSON; "))
        for model, stdin, shown, kind in cases:
            with self.subTest(model=shown):
                r = run("freeze", "--plan", plan, "--model", model, "-o", self.path("out.json"),
                        stdin=stdin)
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()), (1, b"", (
                    f"hpfreeze: error: {shown}: this looks like {kind}{self.WHY}\n")))
                self.assertFalse(os.path.exists(self.path("out.json")))

    def test_report_and_check_still_take_it(self):
        meta = case("tiny", "expected.json")
        for model in (self.index, self.single):
            with self.subTest(model=model):
                r = run("check", meta, "--model", model)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(b"a checkpoint has no module tree", r.stderr)
                r = run("report", meta, "--model", model)
                self.assertEqual(r.returncode, 0, r.stderr)


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
