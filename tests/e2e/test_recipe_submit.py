"""docs/recipes/submit.sh (docs/recipes.md, "check a plan fits before you submit a job"), run
for real with hpfreeze on PATH and a stand-in `sbatch` that records being called."""
import os
import shutil
import subprocess
import tempfile
import unittest

from hpf import BINARY, SOURCE, TESTDATA, env

SCRIPT = os.path.join(SOURCE, "docs", "recipes", "submit.sh")
TINY = os.path.join(TESTDATA, "report", "tiny")


class SubmitRecipe(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        os.makedirs(os.path.join(d, "generated"))
        os.makedirs(os.path.join(d, "bin"))
        shutil.copy(os.path.join(TINY, "meta.json"), os.path.join(d, "generated", "codegen_meta.json"))
        shutil.copy(os.path.join(TINY, "model.json"), os.path.join(d, "model.json"))
        os.symlink(BINARY, os.path.join(d, "bin", "hpfreeze"))
        with open(os.path.join(d, "bin", "sbatch"), "w") as f:
            f.write("#!/bin/sh\necho \"$@\" > sbatch.called\n")
        os.chmod(os.path.join(d, "bin", "sbatch"), 0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def submit(self, mesh, budget_gib):
        e = env(PATH=os.path.join(self.tmp.name, "bin") + os.pathsep + os.environ["PATH"])
        r = subprocess.run(["sh", SCRIPT, mesh, budget_gib], cwd=self.tmp.name, env=e,
                           capture_output=True, timeout=60)
        return r, os.path.exists(os.path.join(self.tmp.name, "sbatch.called"))

    def test_fits_and_divides_submits(self):
        # m.w [8, 4] bf16 split over tp=2 (32 bytes) + m.b [8] f32 replicated (32 bytes).
        r, submitted = self.submit("tp=2", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(submitted)
        self.assertNotIn(b"error", r.stderr)

    def test_not_divisible_refuses(self):
        r, submitted = self.submit("tp=3", "1")
        self.assertEqual(r.returncode, 1)
        self.assertFalse(submitted)
        self.assertIn(b"is not divisible by 3", r.stderr)
        # The submit line names what failed: the first error.
        self.assertRegex(r.stderr, rb"submit: not submitting on tp=3: \S+meta.json: "
                                   rb"/param_plan/\S+: parameter '[^']+' dim \d+ .*is not "
                                   rb"divisible by 3")

    def test_over_budget_refuses_and_names_the_biggest_params(self):
        r, submitted = self.submit("tp=2", "0.00000001")  # about 10.7 bytes
        self.assertEqual(r.returncode, 1)
        self.assertFalse(submitted)
        self.assertIn(b"m.w", r.stderr)
        # m.w's 32 bytes on each tp rank and m.b's 32 replicated: 64 over the 10-byte budget.
        self.assertIn(b"submit: not submitting on tp=2: ", r.stderr)
        self.assertIn(b"no mesh fits the 10 B budget; closest: tp=2 (2 devices, worst rank "
                      b"64 B, over by 54 B)", r.stderr)

    def test_uncovered_trainable_parameter_is_named(self):
        import json
        path = os.path.join(self.tmp.name, "model.json")
        with open(path, encoding="utf-8") as f:
            model = json.load(f)
        model["parameters"]["extra.w"] = {"shape": [4], "dtype": "bfloat16"}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(model, f)
        r, submitted = self.submit("tp=2", "1")
        self.assertEqual(r.returncode, 1)
        self.assertFalse(submitted)
        self.assertIn(b"submit: not submitting on tp=2: ", r.stderr)
        self.assertIn(b"1 model parameter is not covered by any planned key", r.stderr)

    def test_usage_trouble_passes_the_exit_code_through(self):
        r, submitted = self.submit("tp=x", "1")
        self.assertEqual(r.returncode, 2)
        self.assertFalse(submitted)


if __name__ == "__main__":
    unittest.main()
