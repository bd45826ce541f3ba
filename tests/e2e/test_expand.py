"""End-to-end tests of `hpfreeze expand` (docs/cli.md).

Expected FQN lists are computed here from the plan JSON (SPEC §4, frozen_sharded_params).
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

BINARY = os.environ["HPFREEZE_BINARY"]
TESTDATA = os.environ["HPFREEZE_TESTDATA_DIR"]
CASES = os.path.join(TESTDATA, "cases")
SHARDED_TYPES = ("Shard", "StridedShard", "Partial")
# Some corpus cases nest deeper than Python's default recursion limit allows json to read.
sys.setrecursionlimit(20000)


def run(args, stdin=None):
    return subprocess.run([BINARY] + args, input=stdin, capture_output=True, timeout=60)


def is_sharded(leaf):
    if isinstance(leaf, str):  # a canonical string: S(..), SS(..), P(..) or R
        return leaf != "R"
    return leaf["$placement"] in SHARDED_TYPES


def expected_lines(plan):
    fqns = set()
    for boundary, spec in plan["modules"].items():
        for name, axes in (spec.get("params") or {}).items():
            if any(is_sharded(leaf) for leaf in axes.values()):
                fqns.add(name if boundary == "" else boundary if name == "" else boundary + "." + name)
    # Python sorts str by code point, which is what the command promises.
    return "".join(fqn + "\n" for fqn in sorted(fqns)).encode()


def accepted_case_plans():
    """Plans of the golden cases that freeze accepts (they have an expected meta)."""
    dirs = sorted(d for d in glob.glob(os.path.join(CASES, "*"))
                  if os.path.exists(os.path.join(d, "expected.json")))
    return [os.path.join(d, "plan.json") for d in dirs]


class Expand(unittest.TestCase):
    def test_conformance_plans(self):
        plans = accepted_case_plans()
        names = {os.path.basename(os.path.dirname(p)) for p in plans}
        for name in ("tiny", "corners", "deepseek-4l", "dense-llama-2l", "moe-qwen-2l"):
            self.assertIn(name, names)
        for path in plans:
            with open(path, encoding="utf-8") as f:
                plan = json.load(f)
            r = run(["expand", path])
            self.assertEqual((r.returncode, r.stderr), (0, b""), path)
            self.assertEqual(r.stdout, expected_lines(plan), path)

    def test_matches_frozen_sharded_params_of_the_golden_meta(self):
        for path in accepted_case_plans():
            with open(os.path.join(os.path.dirname(path), "expected.json"), encoding="utf-8") as f:
                meta = json.load(f)
            r = run(["expand", path])
            self.assertEqual(r.stdout.decode().splitlines(), meta["frozen_sharded_params"], path)

    def test_stdin(self):
        path = os.path.join(CASES, "moe-qwen-2l", "plan.json")
        with open(path, "rb") as f:
            data = f.read()
        r = run(["expand", "-"], stdin=data)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, expected_lines(json.loads(data)))
        self.assertNotEqual(r.stdout, b"")

    def test_grep_wc_pipeline(self):
        path = os.path.join(CASES, "deepseek-4l", "plan.json")
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
        want = sum(1 for line in expected_lines(plan).decode().splitlines() if "experts" in line)
        out = subprocess.run("'%s' expand '%s' | grep experts | wc -l" % (BINARY, path),
                             shell=True, capture_output=True, check=True, timeout=60)
        self.assertEqual(int(out.stdout), want)
        self.assertGreater(want, 0)

    def test_head_closes_the_pipe_early(self):
        # Enough lines to overflow the pipe buffer, so that head exits while expand still
        # writes: expand must die quietly of SIGPIPE (or finish), never print an error.
        modules = {"blk%06d" % i: {"params": {"weight": {"tp": "S(0)"}}} for i in range(50000)}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "plan.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"format": "hpfreeze.plan/v1", "modules": modules}, f)
            expand = subprocess.Popen([BINARY, "expand", path], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
            head = subprocess.run(["head", "-n1"], stdin=expand.stdout, capture_output=True,
                                  timeout=60)
            expand.stdout.close()
            stderr = expand.stderr.read()
            expand.stderr.close()
            code = expand.wait(timeout=60)
        self.assertEqual(head.stdout, b"blk000000.weight\n")
        self.assertIn(code, (0, -signal.SIGPIPE))
        self.assertEqual(stderr, b"")

    def test_empty_plan_prints_nothing(self):
        r = run(["expand", "-"], stdin=b'{"modules": {}}')
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))

    def test_rejected_plan_exits_one(self):
        r = run(["expand", "-"], stdin=b'{"modules": {"m": {"params": {"w": {"tp": "S(x)"}}}}}')
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: <stdin>: /modules/m/params/w/tp: invalid placement "
                         "'S(x)': dim 'x' is not an integer\n")
        r = run(["expand", "-"], stdin=b'{"modules": ')
        self.assertEqual((r.returncode, r.stdout), (1, b""))

    def test_unreadable_plan_exits_two(self):
        missing = os.path.join(TESTDATA, "check", "no_such_file.json")
        r = run(["expand", missing])
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: %s: cannot open: No such file or directory\n" % missing)
        self.assertEqual(run(["expand"]).returncode, 2)


if __name__ == "__main__":
    unittest.main()
