"""report against tests/e2e/capacity_model.py (the rank-by-rank calculator) on random plans.

Each case is a small random plan: shapes with uneven and zero-sized dims and 0-dim
parameters, Shard, StridedShard, uneven (S(-1)), Partial and replicated placements on three
axes, frozen and integer parameters, an optimizer, a ZeRO stage and axis (one the plan may
also shard, or one no placement names), a budget, and a sweep of every axis (dp, when
nothing else makes it known, declared with --replica-axis). Through the real CLI (`report --json`) every
mesh must be exactly what the calculator gives: worst and best rank and their coordinates,
divisibility, fit; and "answer" and the exit status must follow from them. The seed is
fixed, so a failure names a case that can be run again.
"""
import json
import os
import random
import unittest

import capacity_model
from hpf import TempDirTest, run

CASES = 150
AXES = ["tp", "ep", "dp"]
PLACEMENTS = ["R", "S(0)", "S(1)", "S(2)", "S(-1)", "S(-2)", "SS(0,2)", "SS(1,3)", "SS(-1,2)",
              "P(sum)"]
DTYPES = ["bfloat16", "float32", "float16", "float8_e4m3fn", "int64", "bool"]


def random_case(rng):
    params = []
    for i in range(rng.randint(1, 5)):
        rank = rng.choice([0, 1, 1, 2, 2, 3])
        shape = [0 if rng.random() < 0.04 else rng.randint(1, 13) for _ in range(rank)]
        placements = []
        for axis in AXES:
            if rng.random() < 0.4:
                continue
            text = rng.choice(PLACEMENTS)
            p = capacity_model.parse_placement(text)
            if p[0] in ("S", "SS") and p[1] >= rank:
                text = "R"  # a dim out of range is an input error, not the planner's case
            placements.append((axis, text))
        params.append(capacity_model.param(f"m.p{i}", shape, rng.choice(DTYPES), placements,
                                           requires_grad=rng.random() < 0.8))
    zero = [rng.choice([0, 1, 2, 3]), rng.choice(["dp", "dp", "tp", "fsdp"])]
    swept = list(dict.fromkeys(AXES + [zero[1]]))
    return {
        "axis_order": ["tp", "ep"], "fixed": [],
        "sweeps": [[a, sorted(rng.sample([1, 2, 3, 4, 5], rng.randint(1, 2)))] for a in swept],
        "optimizer": rng.choice(["none", "sgd", "momentum", "adam", "adamw"]),
        "budget": rng.choice([None, "64", "300", "2KiB"]),
        "zero": zero,
        "params": params,
    }


def oracle(case):
    """The calculator's meshes for `case`, in the planner's order."""
    listed = list(dict.fromkeys(case["axis_order"]))
    rest = {a for p in case["params"] for a, _ in p["placements"]}
    rest |= {a for a, _ in case["sweeps"]} | {case["zero"][1]}
    case["resolved_axis_order"] = listed + sorted(rest - set(listed))
    case["budget_bytes"] = (None if case["budget"] is None
                            else capacity_model.budget_bytes(case["budget"]))
    meshes = capacity_model.meshes_of(case["axis_order"], [], case["sweeps"])
    return [capacity_model.evaluate(case, m) for m in meshes]


class RandomPlans(TempDirTest):
    def write_inputs(self, case):
        meta = {"mesh_dim_names": case["axis_order"], "param_plan": {"m": {
            "is_boundary": True,
            "params": {p["fqn"][2:]: dict(p["placements"]) for p in case["params"]}}}}
        model = {"format": "hpfreeze.model/v1", "modules": {"": "Root", "m": "Leaf"},
                 "parameters": {p["fqn"]: {"shape": p["shape"], "dtype": p["dtype"],
                                           "requires_grad": p["requires_grad"]}
                                for p in case["params"]}}
        for name, doc in (("meta.json", meta), ("model.json", model)):
            with open(self.path(name), "w") as f:
                json.dump(doc, f)

    def test_every_mesh_is_the_calculators(self):
        rng = random.Random(25)
        for i in range(CASES):
            case = random_case(rng)
            with self.subTest(case=i, inputs=json.dumps(case)):
                self.write_inputs(case)
                argv = ["report", self.path("meta.json"), "--model", self.path("model.json"),
                        "--optimizer", case["optimizer"], "--zero", str(case["zero"][0]),
                        "--zero-axis", case["zero"][1], "--json", "--top", "0"]
                for axis, sizes in case["sweeps"]:
                    argv += ["--sweep", axis + "=" + ",".join(map(str, sizes))]
                # dp sized but known from nothing else: an axis that only holds replicas.
                named = {a for p in case["params"] for a, _ in p["placements"]}
                if "dp" not in named | {case["zero"][1]}:
                    argv += ["--replica-axis", "dp"]
                if case["budget"] is not None:
                    argv += ["--budget", case["budget"]]
                want = oracle(case)
                r = run(*argv)
                self.assertIn(r.returncode, (0, 1), r.stderr)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["meshes"], want)
                usable = [m for m in want if m["divisible"] and m["fits"] is not False]
                self.assertEqual(doc["answer"], None if not usable else {
                    k: usable[0][k] for k in ("mesh", "devices", "max_rank_bytes")})
                # Every axis is swept: no finding but the planner's can fail the run.
                self.assertEqual(r.returncode, 0 if usable else 1, r.stderr)
                if not usable:
                    self.assertEqual(r.stderr.count(b"hpfreeze: error: "), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
