"""Every JSON input of every command rejects a repeated key with the second key's pointer.

The plan and model dumps are parsed without the duplicate-key walk and leave the keys to
their decoders (lib/src/io/inputs.h): these runs pin that the shortcut keeps the
parse's promise for each input, also when the repeated key is itself a decode error (an
unknown top-level key), and that the other inputs are parsed with the check.
"""
import os
import unittest

from hpf import TempDirTest, run

PLAN = '{"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}}}}'
MODEL = ('{"modules": {"": "Net", "lin": "Linear"}, '
         '"parameters": {"lin.weight": {"shape": [8, 4]}}}')
# A repeated unknown top-level key: the decoders' first error is the first "zz", the
# parse's the second.
ROOT_REPEAT = ', "zz": 1, "zz": 2}'


def with_root_repeat(text):
    assert text.rstrip().endswith("}")
    return text.rstrip()[:-1] + ROOT_REPEAT


class RepeatedKeys(TempDirTest):
    def write(self, name, text):
        path = self.path(name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def setUp(self):
        super().setUp()
        self.plan = self.write("plan.json", PLAN)
        self.model = self.write("model.json", MODEL)
        frozen = run("freeze", "--plan", self.plan, "--model", self.model,
                     "-o", self.path("meta.json"))
        self.assertEqual(frozen.returncode, 0, frozen.stderr)
        with open(self.path("meta.json"), encoding="utf-8") as f:
            self.meta_text = f.read()
        self.meta = self.path("meta.json")

    def assert_repeat(self, args, path, pointer, key, status=1):
        result = run(*args)
        self.assertEqual(result.returncode, status, (args, result.stderr))
        self.assertEqual(result.stdout, b"", args)
        self.assertEqual(result.stderr.decode(),
                         "hpfreeze: error: %s: %s: duplicate key '%s'\n" % (path, pointer, key),
                         args)

    def test_freeze_plan_model_and_base(self):
        out = self.path("out.json")
        plan = self.write("dup_plan.json", with_root_repeat(PLAN))
        self.assert_repeat(["freeze", "--plan", plan, "--model", self.model, "-o", out],
                           plan, "/zz", "zz")
        nested = self.write("nested_plan.json", PLAN.replace('"S(0)"', '"S(0)", "tp": "R"'))
        self.assert_repeat(["freeze", "--plan", nested, "--model", self.model, "-o", out],
                           nested, "/modules/lin/params/weight/tp", "tp")
        model = self.write("dup_model.json", with_root_repeat(MODEL))
        self.assert_repeat(["freeze", "--plan", self.plan, "--model", model, "-o", out],
                           model, "/zz", "zz")
        base = self.write("dup_base.json", '{"covered": {}, "k": 1, "k": 2}')
        self.assert_repeat(["freeze", "--plan", self.plan, "--model", self.model,
                            "--base", base, "-o", out], base, "/k", "k")
        self.assertFalse(os.path.exists(out))

    def test_check_meta_and_model(self):
        meta = self.write("dup_meta.json", with_root_repeat(self.meta_text))
        self.assert_repeat(["check", meta], meta, "/zz", "zz")
        self.assert_repeat(["check", meta, "--model", self.model], meta, "/zz", "zz")
        model = self.write("dup_model.json", with_root_repeat(MODEL))
        self.assert_repeat(["check", self.meta, "--model", model], model, "/zz", "zz")

    def test_thaw_meta(self):
        meta = self.write("dup_meta.json", with_root_repeat(self.meta_text))
        out = self.path("thawed.json")
        self.assert_repeat(["thaw", meta, "-o", out], meta, "/zz", "zz")
        self.assertFalse(os.path.exists(out))

    def test_report_meta_and_model(self):
        meta = self.write("dup_meta.json", with_root_repeat(self.meta_text))
        self.assert_repeat(["report", meta, "--model", self.model], meta, "/zz", "zz")
        model = self.write("dup_model.json", with_root_repeat(MODEL))
        self.assert_repeat(["report", self.meta, "--model", model], model, "/zz", "zz")

    def test_diff_old_and_new(self):
        meta = self.write("dup_meta.json", with_root_repeat(self.meta_text))
        # diff's errors are trouble (exit 2: docs/cli.md), a difference is exit 1.
        self.assert_repeat(["diff", meta, self.meta], meta, "/zz", "zz", status=2)
        self.assert_repeat(["diff", self.meta, meta], meta, "/zz", "zz", status=2)

    def test_expand_plan(self):
        plan = self.write("dup_plan.json", with_root_repeat(PLAN))
        self.assert_repeat(["expand", plan], plan, "/zz", "zz")


if __name__ == "__main__":
    unittest.main()
