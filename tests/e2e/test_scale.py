"""Scale check: hpfreeze's meta for generated mid-size plans equals the oracle's, byte for byte.

The dumps come from bench/gen (the generator of the benchmarks) at test time; the expected
bytes come from tests/oracle/freeze_oracle.py, an independent implementation of the
contract, and a few counts come from the generator itself. Nothing here is timed.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import hpf

sys.path.insert(0, os.path.join(hpf.SOURCE, "tests", "oracle"))
import freeze_oracle  # noqa: E402

GEN = os.path.join(hpf.SOURCE, "bench", "gen")


def generate(out_dir, *args):
    """Runs bench/gen; returns its summary (counts of what it wrote)."""
    proc = subprocess.run([sys.executable, GEN, *args, "-o", out_dir], capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


class ScaleTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def check_case(self, name, *gen_args, via_stdin=False):
        case = os.path.join(self.tmp.name, name)
        summary = generate(case, *gen_args)
        plan = os.path.join(case, "plan.json")
        model = os.path.join(case, "model.json")
        out = os.path.join(case, "codegen_meta.json")

        code, expected, warnings = freeze_oracle.run(plan, model, None, freeze_oracle.Options())
        self.assertEqual(code, 0, warnings)
        self.assertEqual(warnings, [])

        if via_stdin:
            with open(plan, "rb") as f:
                result = hpf.run("freeze", "--plan", "-", "--model", model, "-o", out,
                                 stdin=f.read())
        else:
            result = hpf.run("freeze", "--plan", plan, "--model", model, "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertEqual(result.stderr, b"")
        with open(out, "rb") as f:
            actual = f.read()
        self.assertTrue(actual == expected,
                        f"{name}: hpfreeze and the oracle differ "
                        f"({len(actual)} vs {len(expected)} bytes)")

        # Counts the generator knows, independent of both implementations.
        meta = json.loads(actual)
        self.assertEqual(len(meta["param_plan"]), summary["modules"])
        self.assertEqual(sum(len(entry.get("params", {})) for entry in meta["param_plan"].values()),
                         summary["params"])
        self.assertEqual(len(meta["frozen_sharded_params"]), summary["sharded_params"])
        self.assertEqual(meta["boundary_classes"].keys(), meta["param_plan"].keys())
        return summary

    def test_synthetic(self):
        # Every field kind, typed and canonical-string placements, non-ASCII text.
        summary = self.check_case("synthetic", "synthetic", "--params", "12000")
        self.assertGreaterEqual(summary["params"], 12000)

    def test_deepseek_like_from_stdin(self):
        # Unstacked experts, $target and $callable injections; the plan read from a pipe.
        summary = self.check_case("deepseek", "deepseek", "--layers", "8", "--experts", "64",
                                  via_stdin=True)
        self.assertEqual(summary["params"], 3 + 3 * 12 + 5 * (9 + 3 * 64 + 5))

    def test_llama_compact(self):
        self.check_case("llama", "llama", "--layers", "8", "--tied", "--indent", "0")


if __name__ == "__main__":
    unittest.main()
