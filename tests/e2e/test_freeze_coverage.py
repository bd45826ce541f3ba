"""freeze's warning about trainable model parameters no planned key covers (docs/cli.md,
"Uncovered trainable parameters"), on the README's example with a boundary dropped, as the
newcomer review of 2026-12-07 dropped it: one warning in each message format, exit 0 (1 with
--strict, nothing written), shown by --check too, and the count `check --model` finds on the
meta that freeze wrote. The expected lines are written here from the example's files."""
import json
import os
import shutil

from hpf import TESTDATA, TempDirTest, read, run

EXAMPLE = os.path.join(TESTDATA, "example")
DROPPED = "model.layers.1.mlp"
# The example model's trainable parameters under the dropped boundary, in the model's order.
UNPLANNED = ["model.layers.1.mlp.experts.gate_up_proj", "model.layers.1.mlp.experts.down_proj",
             "model.layers.1.mlp.gate.weight",
             "model.layers.1.mlp.shared_expert.gate_proj.weight",
             "model.layers.1.mlp.shared_expert.up_proj.weight",
             "model.layers.1.mlp.shared_expert.down_proj.weight"]
MESSAGE = ("6 trainable parameters are not covered by any planned parameter of plan.json, "
           "first here: 'model.layers.1.mlp.experts.gate_up_proj', "
           "'model.layers.1.mlp.experts.down_proj', 'model.layers.1.mlp.gate.weight' and 3 "
           "more (upstream's preflight refuses them at run time)")
POINTER = "/parameters/model.layers.1.mlp.experts.gate_up_proj"


class Uncovered(TempDirTest):
    def setUp(self):
        super().setUp()
        shutil.copy(os.path.join(EXAMPLE, "model.json"), self.path("model.json"))
        with open(os.path.join(EXAMPLE, "plan.json"), encoding="utf-8") as f:
            plan = json.load(f)
        del plan["modules"][DROPPED]
        with open(self.path("plan.json"), "w", encoding="utf-8") as f:
            json.dump(plan, f, indent=1)

    def freeze(self, *extra):
        return run("freeze", "--plan", "plan.json", "--model", "model.json", *extra,
                   cwd=self.dir)

    def test_the_example_as_shipped_warns_of_nothing(self):
        r = run("freeze", "--plan", os.path.join(EXAMPLE, "plan.json"), "--model",
                os.path.join(EXAMPLE, "model.json"))
        self.assertEqual((r.returncode, r.stderr), (0, b""))

    def test_unplanned_parameters_are_the_ones_the_model_lists(self):
        with open(self.path("model.json"), encoding="utf-8") as f:
            params = json.load(f)["parameters"]
        self.assertEqual([name for name in params if name.startswith(DROPPED + ".")], UNPLANNED)

    def test_one_warning_and_the_meta_is_written(self):
        r = self.freeze("-o", "meta.json")
        self.assertEqual((r.returncode, r.stdout), (0, b""))
        self.assertEqual(r.stderr.decode().splitlines(),
                         [f"hpfreeze: warning: model.json: {POINTER}: {MESSAGE} [HPF305]"])
        self.assertTrue(os.path.isfile(self.path("meta.json")))

    def test_github_annotates_the_line_of_the_first_parameter(self):
        with open(self.path("model.json"), encoding="utf-8") as f:
            text = f.read()
        key = '"model.layers.1.mlp.experts.gate_up_proj": '
        at = text.index(key) + len(key)  # the value's first byte
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        r = self.freeze("-o", "meta.json", "--message-format", "github")
        self.assertEqual((r.returncode, r.stderr.decode().splitlines()), (0, [
            f"::warning file=model.json,line={line},col={col}::{POINTER}: {MESSAGE} [HPF305]"]))

    def test_strict_fails_and_writes_nothing(self):
        r = self.freeze("-o", "meta.json", "--strict")
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertEqual(r.stderr.decode().splitlines(), [
            f"hpfreeze: error: model.json: {POINTER}: {MESSAGE} (--strict makes this an error) [HPF305]"])
        self.assertFalse(os.path.exists(self.path("meta.json")))

    def test_check_shows_it_and_no_verify_skips_it(self):
        self.assertEqual(self.freeze("-o", "meta.json").returncode, 0)
        r = self.freeze("-o", "meta.json", "--check")
        self.assertEqual((r.returncode, r.stderr.decode().splitlines()),
                         (0, [f"hpfreeze: warning: model.json: {POINTER}: {MESSAGE} [HPF305]"]))
        r = self.freeze("-o", "meta.json", "--check", "--strict", "--no-verify")
        self.assertEqual((r.returncode, r.stderr), (0, b""))

    def test_check_model_counts_the_same_parameters(self):
        self.assertEqual(self.freeze("-o", "meta.json").returncode, 0)
        r = run("check", "meta.json", "--model", "model.json", cwd=self.dir)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode().splitlines(), [
            f"hpfreeze: error: model.json: /parameters/{name}: trainable parameter '{name}' is "
            "not covered by any param_plan entry of meta.json [HPF305]"
            for name in sorted(UNPLANNED)])
        self.assertEqual(read(self.path("meta.json")),
                         self.freeze().stdout)  # the warning changes no byte


if __name__ == "__main__":
    import unittest
    unittest.main()
