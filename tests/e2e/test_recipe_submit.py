"""docs/recipes/submit.sh (docs/recipes.md, "check a plan fits before you submit a job"), run
for real with hpfreeze on PATH and a stand-in `sbatch` that records being called."""
import json
import os
import re
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



def smallest_mesh_block():
    with open(os.path.join(SOURCE, "docs", "recipes.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc[doc.index("## Pick the smallest mesh that fits"):]
    return re.search(r"```sh\n(.*?)```\n", section, re.S).group(1)


class SmallestMeshRecipe(unittest.TestCase):
    """recipes.md's "pick the smallest mesh that fits" block, as written but for the budget.

    Its inputs: m.w [8, 4] bfloat16 tp=S(0) and m.e [8, 4] bfloat16 ep=S(0), 16 bytes an
    element with adam (2 weight + 2 gradient + 4 master + 2 x 4 moments): 512 B each whole.
    Meshes by devices, then (tp, ep): tp=1 ep=1 1024 B; tp=1 ep=2 512 + 256 = 768 B; tp=2
    ep=1 768 B; tp=1 ep=4 512 + 128 = 640 B."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        meta = {"mesh_dim_names": ["tp", "ep"], "param_plan": {"m": {
            "is_boundary": True, "params": {"w": {"tp": "S(0)"}, "e": {"ep": "S(0)"}}}}}
        model = {"format": "hpfreeze.model/v1", "modules": {"": "Tiny", "m": "Linear"},
                 "parameters": {"m.w": {"shape": [8, 4], "dtype": "bfloat16"},
                                "m.e": {"shape": [8, 4], "dtype": "bfloat16"}}}
        for name, doc in (("codegen_meta.json", meta), ("model.json", model)):
            with open(os.path.join(d, name), "w") as f:
                json.dump(doc, f)
        os.makedirs(os.path.join(d, "bin"))
        os.symlink(BINARY, os.path.join(d, "bin", "hpfreeze"))

    def tearDown(self):
        self.tmp.cleanup()

    def run_block(self, budget):
        script = smallest_mesh_block()
        self.assertIn("--budget 80GiB", script)
        e = env(PATH=os.path.join(self.tmp.name, "bin") + os.pathsep + os.environ["PATH"])
        return subprocess.run(["bash", "-c", script.replace("--budget 80GiB", "--budget " + budget)],
                              cwd=self.tmp.name, env=e, capture_output=True, timeout=60)

    def test_prints_the_answer_as_a_mesh(self):
        r = self.run_block("700B")
        self.assertEqual((r.returncode, r.stdout), (0, b"tp=1,ep=4\n"), r.stderr)

    def test_no_mesh_fits_is_the_failure_branch(self):
        # ep=16 and ep=32 do not divide m.e's 8 rows; of the meshes that divide, tp=8 ep=8
        # holds the least: m.w [1, 4] and m.e [1, 4], 64 + 64 = 128 B.
        r = self.run_block("127B")
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertIn(b"closest: tp=8 ep=8 (64 devices, worst rank 128 B, over by 1 B)",
                      r.stderr)
        self.assertIn(b"no usable mesh", r.stderr)

if __name__ == "__main__":
    unittest.main()
