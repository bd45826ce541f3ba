"""`hpfreeze -v freeze`: one stage line each on stderr (docs/cli.md, "Verbose output"),
and the one-line messages for a file of the wrong kind.

Sizes and counts are computed here from the files; times are only checked for form.
"""
import json
import os
import re
import shutil
import unittest

from hpf import TempDirTest, case, read, run

MS = r"\d+\.\d\d ms"


class Verbose(TempDirTest):
    def setUp(self):
        super().setUp()
        for name in ("plan.json", "expected.json"):
            shutil.copy(case("deepseek-4l", name), self.path(name))
        with open(self.path("plan.json"), encoding="utf-8") as f:
            plan = json.load(f)
        with open(case("deepseek-4l", "model.json"), encoding="utf-8") as f:
            model = json.load(f)
        # The case's plan leaves the router's bias unplanned: frozen here, the run warns of
        # nothing and stderr holds the stage lines alone.
        model["parameters"]["model.layers.3.mlp.gate.e_score_correction_bias"][
            "requires_grad"] = False
        with open(self.path("model.json"), "w", encoding="utf-8") as f:
            json.dump(model, f)
        self.modules = len(plan["modules"])
        self.planned = sum(len(spec.get("params") or {}) for spec in plan["modules"].values())
        self.model_modules = len(model["modules"])
        self.model_params = len(model.get("parameters") or {})
        with open(self.path("expected.json"), encoding="utf-8") as f:
            self.sharded = len(json.load(f)["frozen_sharded_params"])
        self.in_bytes = (os.path.getsize(self.path("plan.json")) +
                         os.path.getsize(self.path("model.json")))
        self.out_bytes = os.path.getsize(self.path("expected.json"))

    def freeze(self, *flags):
        return run(*flags, "freeze", "--plan", "plan.json", "--model", "model.json",
                   "-o", "out.json", "--if-changed", cwd=self.dir)

    def expected_lines(self, write_line):
        return [
            rf"hpfreeze: debug: read: {MS}, {self.in_bytes} bytes in 2 files",
            rf"hpfreeze: debug: parse: {MS}",
            rf"hpfreeze: debug: decode: {MS}, {self.modules} modules, {self.planned} planned "
            rf"params; model: {self.model_modules} modules, {self.model_params} parameters",
            rf"hpfreeze: debug: freeze: {MS}, {self.sharded} sharded params",
            rf"hpfreeze: debug: encode: {MS}, {self.out_bytes} bytes",
            write_line,
        ]

    def assert_lines(self, stderr, patterns):
        lines = stderr.decode().splitlines()
        self.assertEqual(len(lines), len(patterns), lines)
        for line, pattern in zip(lines, patterns):
            self.assertRegex(line, "^" + pattern + "$")

    def test_one_line_per_stage_then_unchanged(self):
        r = self.freeze("-v")
        self.assertEqual((r.returncode, r.stdout), (0, b""))
        self.assert_lines(r.stderr, self.expected_lines(
            rf"hpfreeze: debug: write: {MS}, {self.out_bytes} bytes to out\.json"))
        self.assertEqual(read(self.path("out.json")), read(self.path("expected.json")))
        r = self.freeze("-v")
        self.assertEqual(r.returncode, 0)
        self.assert_lines(r.stderr, self.expected_lines(
            rf"hpfreeze: debug: write: {MS}, out\.json unchanged \(--if-changed left it alone\)"))

    def test_vv_adds_a_line_per_input(self):
        r = self.freeze("-vv")
        self.assertEqual(r.returncode, 0)
        per_input = [
            rf"hpfreeze: trace: {name}: read {MS}, {os.path.getsize(self.path(name))} bytes; "
            rf"parse {MS}; decode {MS}" for name in ("plan.json", "model.json")]
        self.assert_lines(r.stderr, per_input + self.expected_lines(
            rf"hpfreeze: debug: write: {MS}, {self.out_bytes} bytes to out\.json"))

    def test_quiet_by_default_and_stops_at_the_failed_stage(self):
        r = self.freeze()
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        with open(self.path("model.json"), "w", encoding="utf-8") as f:
            json.dump({"modules": {"": "Net"}}, f)
        r = self.freeze("-v")
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.decode().splitlines()
        self.assertRegex(lines[0], rf"^hpfreeze: debug: read: {MS}, \d+ bytes in 2 files$")
        self.assertRegex(lines[2], r"^hpfreeze: debug: decode: ")
        self.assertTrue(lines[3].startswith("hpfreeze: error: plan.json: /modules/"), lines)
        self.assertFalse(any(line.startswith(("hpfreeze: debug: freeze:", "hpfreeze: debug: write:"))
                             for line in lines), lines)


class WrongKind(TempDirTest):
    def setUp(self):
        super().setUp()
        for name in ("plan.json", "model.json", "expected.json"):
            shutil.copy(case("tiny", name), self.path(name))

    def one_error(self, plan, model, message):
        r = run("freeze", "--plan", plan, "--model", model, "-o", "out.json", cwd=self.dir)
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertEqual(r.stderr.decode(), f"hpfreeze: error: {message}\n")
        self.assertFalse(os.path.exists(self.path("out.json")))

    def test_meta_as_plan(self):
        self.one_error("expected.json", "model.json",
                       "expected.json: this looks like a codegen_meta.json; --plan wants a plan "
                       "dump (hpfreeze.plan/v1)")

    def test_swapped(self):
        self.one_error("model.json", "plan.json",
                       "model.json: --plan and --model look swapped: --plan model.json is a model "
                       "tree dump and --model plan.json is a plan dump")

    def test_meta_as_model(self):
        self.one_error("plan.json", "expected.json",
                       "expected.json: this looks like a codegen_meta.json; --model wants a model "
                       "tree dump (hpfreeze.model/v1)")


if __name__ == "__main__":
    unittest.main()
