"""report against tests/e2e/capacity_model.py (the rank-by-rank calculator) on random plans.

Each case is a small random plan: shapes with uneven and zero-sized dims and 0-dim
parameters, Shard, StridedShard, uneven (S(-1)), Partial and replicated placements on three
axes, frozen and integer parameters, an optimizer, a ZeRO stage and axes (ones the plan may
also shard, or ones no placement names), a budget, and a sweep of every axis (dp, when
nothing else makes it known, declared with --replica-axis). The meta names ep in
mesh_dim_names (the axis layout) or not (the folded one, whose experts are split on ep
only). Through the real CLI (`report --json`) every mesh must be exactly what the
calculator gives: worst and best rank and their coordinates in both views, divisibility,
fit; and "answer", the usage error of a ZeRO that splits nothing and the exit status must
follow from them. The seed is fixed, so a failure names a case that can be run again.
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


def random_case(rng, folded):
    axes = AXES + (["cp"] if folded else [])
    params = []
    for i in range(rng.randint(1, 5)):
        rank = rng.choice([0, 1, 1, 2, 2, 3])
        shape = [0 if rng.random() < 0.04 else rng.randint(1, 13) for _ in range(rank)]
        expert = folded and rank > 0 and rng.random() < 0.4
        placements = []
        for axis in axes:
            if rng.random() < 0.4 and not (expert and axis == "ep"):
                continue
            text = rng.choice(PLACEMENTS)
            if expert:  # an expert is split on ep only
                text = rng.choice(PLACEMENTS[1:-1]) if axis == "ep" else "R"
            elif folded and axis == "ep":
                text = rng.choice(["R", "P(sum)"])
            p = capacity_model.parse_placement(text)
            if p[0] in ("S", "SS") and p[1] >= rank:
                text = "R"  # a dim out of range is an input error, not the planner's case
            placements.append((axis, text))
        params.append(capacity_model.param(f"m.p{i}", shape, rng.choice(DTYPES), placements,
                                           requires_grad=rng.random() < 0.8))
    zero_axes = rng.choice([["dp"], ["dp"], ["tp"], ["fsdp"], ["dp", "cp"], ["cp", "dp"]])
    swept = list(dict.fromkeys(axes + zero_axes))
    return {
        "axis_order": ["tp"] if folded else ["tp", "ep"], "fixed": [],
        "layout": "folded" if folded else "axis",
        "sweeps": [[a, sorted(rng.sample([1, 2, 3, 4, 5, 6] if a == "ep" else [1, 2, 3, 4, 5],
                                         rng.randint(1, 2)))] for a in swept],
        "optimizer": rng.choice(["none", "sgd", "momentum", "adam", "adamw"]),
        "budget": rng.choice([None, "64", "300", "2KiB"]),
        "zero": [rng.choice([0, 1, 2, 3]), zero_axes],
        "params": params,
    }


def oracle(case):
    """The calculator's meshes for `case`, in the planner's order: report's axis order is
    mesh_dim_names, then the axes a placement names, by name, then the axes only the mesh
    has, by name (docs/capacity.md, "Meshes and their order")."""
    listed = list(dict.fromkeys(case["axis_order"]))
    named = {a for p in case["params"] for a, _ in p["placements"]}
    order = listed + sorted(named - set(listed))
    rest = {a for a, _ in case["sweeps"]}
    case["resolved_axis_order"] = order + sorted(rest - set(order))
    case["budget_bytes"] = (None if case["budget"] is None
                            else capacity_model.budget_bytes(case["budget"]))
    meshes = capacity_model.meshes_of(order, [], case["sweeps"], case["layout"])
    return [capacity_model.evaluate(case, m) for m in meshes], meshes


def splits_something(case, meshes):
    """Whether some parameter that holds anything has a ZeRO group of more than one rank on
    some mesh (edp for a folded expert, else the listed axes it is not sharded on), or no
    parameter holds anything at all."""
    stage, zero_axes = case["zero"]
    if all(0 in p["shape"] for p in case["params"]):
        return True  # no byte to split: nothing is claimed, no error
    for mesh in meshes:
        sizes = dict(mesh)
        _, region = capacity_model.dense_region(mesh)
        edp = region // sizes.get("ep", 1) if region % sizes.get("ep", 1) == 0 else 1
        for p in case["params"]:
            if not p["shape"] or 0 in p["shape"]:
                continue
            sharded = {a for a, t in p["placements"]
                       if capacity_model.parse_placement(t)[0] in ("S", "SS")}
            if case["layout"] == "folded" and "ep" in sharded:
                group = edp
            else:
                group = 1
                for a in dict.fromkeys(zero_axes):
                    group *= 1 if a in sharded else sizes.get(a, 1)
            if group > 1:
                return True
    return False


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

    def check_cases(self, seed, folded):
        rng = random.Random(seed)
        for i in range(CASES):
            case = random_case(rng, folded)
            with self.subTest(case=i, inputs=json.dumps(case)):
                self.write_inputs(case)
                argv = ["report", self.path("meta.json"), "--model", self.path("model.json"),
                        "--optimizer", case["optimizer"], "--zero", str(case["zero"][0]),
                        "--zero-axis", ",".join(case["zero"][1]), "--json", "--top", "0"]
                for axis, sizes in case["sweeps"]:
                    argv += ["--sweep", axis + "=" + ",".join(map(str, sizes))]
                # Axes sized but known from nothing else: axes that only hold replicas.
                named = {a for p in case["params"] for a, _ in p["placements"]}
                named |= set(case["axis_order"])
                for axis in ("dp", "cp", "ep"):
                    swept = any(a == axis for a, _ in case["sweeps"])
                    if swept and axis not in named | set(case["zero"][1]):
                        argv += ["--replica-axis", axis]
                if case["budget"] is not None:
                    argv += ["--budget", case["budget"]]
                want, meshes = oracle(case)
                r = run(*argv)
                if case["zero"][0] > 0 and not splits_something(case, meshes):
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(f"--zero {case['zero'][0]} splits nothing", r.stderr.decode())
                    continue
                self.assertIn(r.returncode, (0, 1), r.stderr)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["meshes"], want)
                usable = [m for m in want if m["divisible"] and m["fits"] is not False]
                answer = None
                if usable:
                    answer = {k: usable[0][k] for k in ("mesh", "devices", "max_rank_bytes")}
                    answer["ties"] = sum(m["devices"] == answer["devices"] for m in usable[1:])
                self.assertEqual(doc["answer"], answer)
                # Every axis is swept: no finding but the planner's can fail the run.
                self.assertEqual(r.returncode, 0 if usable else 1, r.stderr)
                if not usable:
                    self.assertEqual(r.stderr.count(b"hpfreeze: error: "), 1, r.stderr)

    def test_every_mesh_is_the_calculators(self):
        self.check_cases(25, folded=False)

    def test_every_folded_mesh_is_the_calculators(self):
        self.check_cases(33, folded=True)


if __name__ == "__main__":
    unittest.main()
