"""End-to-end tests of `report`'s two layouts of ep (docs/capacity.md, "Expert parallelism")
on the real upstream MoE metas of testdata/realworld/ and on docs/capacity.md's worked
examples.

The model dumps of testdata/report/moe/ (gen_models.py) give the metas' parameters shapes.
Expected bytes are computed here in closed form from those shapes, or by
tests/e2e/capacity_model.py, the rank-by-rank calculator; never by the program under test.
"""
import json
import os
import subprocess
import sys
import unittest

from hpf import TESTDATA, TempDirTest, run

sys.path.insert(0, os.path.dirname(__file__))
import capacity_model  # noqa: E402

REALWORLD = os.path.join(TESTDATA, "realworld")
MOE = os.path.join(TESTDATA, "report", "moe")
QWEN_META = os.path.join(REALWORLD, "qwen3_moe_training_demo_v2.json")
QWEN_MODEL = os.path.join(MOE, "qwen3_moe_v2.model.json")
TOY_META = os.path.join(REALWORLD, "deepseek_v41_toy.json")
TOY_MODEL = os.path.join(MOE, "deepseek_v41_toy.model.json")

# gen_models.py's Qwen3-30B-A3B dimensions; the meta has 4 layers.
V, H, Q, KV, D, E, I, L = 151936, 2048, 32 * 128, 4 * 128, 128, 128, 768, 4


def report_json(*args, code=0):
    r = run("report", *args, "--json")
    assert r.returncode == code, (r.returncode, r.stderr.decode())
    return json.loads(r.stdout), r


def calculator_case(meta_path, model_path, layout, mesh, optimizer="none", zero=(0, ["dp", "cp"])):
    """The meta and model as a capacity_model case, with report's axis order:
    mesh_dim_names, then the axes a placement names, by name."""
    with open(meta_path) as f:
        meta = json.load(f)
    with open(model_path) as f:
        tree = json.load(f)
    model = tree["parameters"]
    # Where each parameter sits against the model's layer stack (one stage here: pp=1).
    stack, positions, _ = capacity_model.place_in_stack(
        [{"fqn": fqn, "shape": p["shape"]} for fqn, p in model.items()], list(tree["modules"]),
        False)
    params = []
    for boundary, spec in meta["param_plan"].items():
        for name, axes in (spec.get("params") or {}).items():
            fqn = f"{boundary}.{name}" if boundary else name
            p = model[fqn]
            params.append(capacity_model.param(fqn, p["shape"], p["dtype"], list(axes.items()),
                                               stage=positions[fqn]))
    listed = list(meta.get("mesh_dim_names") or [])
    named = sorted({a for p in params for a, _ in p["placements"]} - set(listed))
    case = {"axis_order": listed + named, "layout": layout, "fixed": mesh, "sweeps": [],
            "optimizer": optimizer, "zero": list(zero), "params": params, "stack": stack}
    order = case["axis_order"]
    case["resolved_axis_order"] = order + sorted({a for a, _ in mesh} - set(order))
    case["budget_bytes"] = None
    meshes = capacity_model.meshes_of(order, mesh, [], layout)
    return [capacity_model.evaluate(case, m) for m in meshes]


class ModelsAreFresh(unittest.TestCase):
    def test_the_model_dumps_are_what_gen_models_writes(self):
        r = subprocess.run([sys.executable, os.path.join(MOE, "gen_models.py"), "--check"],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)


class QwenMoeV2(unittest.TestCase):
    """qwen3_moe_training_demo_v2.json: mesh_dim_names [cp, tp], parallel_dims dp=2 cp=2
    tp=2 ep=2 pp=1; experts stacked and split on ep only."""

    def test_default_mesh_is_8_devices_folded(self):
        doc, r = report_json(QWEN_META, "--model", QWEN_MODEL)
        self.assertEqual(doc["expert_parallel"], {"layout": "folded", "from": "meta"})
        m = doc["meshes"][0]
        self.assertEqual(m["mesh"], {"cp": 2, "tp": 2, "ep": 2, "dp": 2, "pp": 1})
        # pp x dp x cp x tp; the dense region dp x cp x tp = 8 re-sliced as edp 4 x ep 2.
        self.assertEqual(m["devices"], 8)
        self.assertEqual(m["expert_mesh"], {"edp": 4, "ep": 2})
        # tp halves the embedding, lm_head, qkv rows and o_proj columns; ep halves the
        # experts; norms and routers stay whole. bf16: 2 bytes an element.
        per_layer = ((Q + 2 * KV) // 2 * H + H * Q // 2 + 2 * D + 2 * H + E * H
                     + E // 2 * H * 2 * I + E // 2 * I * H)
        worst = 2 * (2 * (V // 2) * H + L * per_layer + H)
        self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"]), (worst, worst))
        self.assertEqual(m["max_rank"], {"cp": 0, "tp": 0, "dp": 0, "pp": 0})
        self.assertEqual(m["max_rank_expert"], {"edp": 0, "ep": 0})
        self.assertEqual(doc["rank0_bytes"], worst)
        self.assertEqual(doc["answer"]["devices"], 8)
        text = run("report", QWEN_META, "--model", QWEN_MODEL, "--top", "0").stdout.decode()
        self.assertIn("\nexpert parallel: folded (mesh_dim_names does not name ep): experts split "
                      "over ep inside the dense region, edp their data-parallel group; ep does "
                      "not multiply the devices\n", text)
        self.assertIn("\nsmallest mesh that divides: cp=2 tp=2 ep=2 dp=2 pp=1 (8 devices, worst "
                      "rank 2.9 GiB)\n", text)

    def test_the_axis_layout_is_the_old_answer_of_16_devices(self):
        doc, _ = report_json(QWEN_META, "--model", QWEN_MODEL, "--expert-parallel", "axis")
        self.assertEqual(doc["expert_parallel"], {"layout": "axis", "from": "flag"})
        m = doc["meshes"][0]
        self.assertEqual(m["devices"], 16)
        self.assertNotIn("expert_mesh", m)
        self.assertEqual(m["max_rank"], {"cp": 0, "tp": 0, "ep": 0, "dp": 0, "pp": 0})

    def test_zero_3_over_dp_x_cp_and_experts_over_edp(self):
        doc, r = report_json(QWEN_META, "--model", QWEN_MODEL, "--optimizer", "adam",
                             "--zero", "3")
        self.assertEqual(doc["zero"], {"stage": 3, "axes": ["dp", "cp"], "expert_axis": "edp"})
        # 16 bytes an element, every dim 0 over 4 (dp x cp for dense, edp for experts), all
        # even: every rank holds the same.
        per_layer = (640 * H + 512 * Q // 2 + 2 * 32 + 2 * 512 + 32 * H + 16 * H * 2 * I
                     + 16 * I * H)
        worst = 16 * (2 * 18992 * H + L * per_layer + 512)
        m = doc["meshes"][0]
        self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"]), (worst, worst))
        # The rank-0 block counts what the meshes table counts.
        self.assertEqual(doc["rank0_bytes"], worst)
        self.assertEqual(m["mesh"]["ep"], 2)
        text = run("report", QWEN_META, "--model", QWEN_MODEL, "--optimizer", "adam", "--zero",
                   "3", "--top", "0").stdout.decode()
        self.assertIn(", ZeRO stage 3 (the weights, gradients and optimizer state split over dp x "
                      "cp, 4 ranks; expert parameters over edp, 4 ranks), no budget\n", text)

    def test_sweeps_of_ep_in_both_layouts(self):
        doc, r = report_json(QWEN_META, "--model", QWEN_MODEL, "--sweep", "ep=1,2,3,8",
                             code=0)
        by_ep = {m["mesh"]["ep"]: m for m in doc["meshes"]}
        self.assertEqual([m["devices"] for m in doc["meshes"]], [8, 8, 8, 8])
        self.assertEqual(by_ep[8]["expert_mesh"], {"edp": 1, "ep": 8})
        # 3 does not divide the dense region of 8 ranks: never usable, no ranks to count.
        self.assertFalse(by_ep[3]["divisible"])
        self.assertEqual(by_ep[3]["indivisible"], {
            "param": None, "dim": None, "size": 8, "axis": "ep", "axis_size": 3,
            "split_factor": 1, "dense_axes": ["dp", "cp", "tp"]})
        self.assertIsNone(by_ep[3]["max_rank_bytes"])
        # Every ep is one more mesh of 8 devices: the answer has 2 ties (ep=2 and ep=8).
        self.assertEqual(doc["answer"]["mesh"]["ep"], 1)
        self.assertEqual(doc["answer"]["ties"], 2)
        doc, _ = report_json(QWEN_META, "--model", QWEN_MODEL, "--sweep", "ep=1,2,8",
                             "--expert-parallel", "axis")
        self.assertEqual([m["devices"] for m in doc["meshes"]], [8, 16, 64])

    def test_a_mesh_ep_does_not_divide_is_one_error_line(self):
        r = run("report", QWEN_META, "--model", QWEN_MODEL, "--mesh",
                "dp=3,cp=1,tp=1,ep=2,pp=1", "-q")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode(),
                         f"hpfreeze: error: {QWEN_META}: the mesh does not divide: the dense region "
                         "dp x cp x tp (3 ranks) by ep=2 [HPF514]\n")
        self.assertIn("  -          -  ", r.stdout.decode())


class Docs(unittest.TestCase):
    def test_the_walk_through_is_the_real_output(self):
        """docs/capacity.md's walk-through of the Qwen3-MoE v2 meta shows what the binary says."""
        source = os.path.dirname(TESTDATA)
        with open(os.path.join(source, "docs", "capacity.md"), encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("### Walk-through: the Qwen3-MoE v2 meta"):]
        start = section.index("```\n$ ") + 4
        block = section[start:section.index("\n```\n", start)]
        command, output = block.split("\n", 1)
        r = run(*command[len("$ hpfreeze "):].split(), cwd=source)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout.decode(), output + "\n")
        self.assertIn("(8 devices, worst rank 5.8 GiB of 80.0 GiB)", output)


class DeepseekV41Toy(unittest.TestCase):
    """deepseek_v41_toy.json: mesh_dim_names null, parallel_dims dp=8 ep=8 (tp, cp, pp 1):
    8 devices, the experts (and the engram embedding, a Shard on ep) 8 ways, edp 1."""

    def test_default_mesh_is_8_devices(self):
        mesh = [["cp", 1], ["dp", 8], ["ep", 8], ["pp", 1], ["tp", 1]]
        for optimizer, zero in (("none", 0), ("adam", 3)):
            with self.subTest(zero=zero):
                doc, _ = report_json(TOY_META, "--model", TOY_MODEL, "--optimizer", optimizer,
                                     "--zero", str(zero))
                self.assertEqual(doc["meshes"][0]["devices"], 8)
                want = calculator_case(TOY_META, TOY_MODEL, "folded", mesh, optimizer,
                                       (zero, ["dp", "cp"]))
                self.assertEqual(doc["meshes"], want)
        # Named as an axis, ep would multiply: 64 devices.
        doc, _ = report_json(TOY_META, "--model", TOY_MODEL, "--expert-parallel", "axis")
        self.assertEqual(doc["meshes"][0]["devices"], 64)


class WorkedExamples(TempDirTest):
    def write(self, name, doc):
        with open(self.path(name), "w") as f:
            json.dump(doc, f)
        return self.path(name)

    def test_the_folded_example_of_capacity_md(self):
        """mesh_dim_names ["tp"], dp=1 cp=1 tp=4 ep=2 pp=1; m.a [8,4] bf16 tp=S(0), x.w
        [4,6,2] bf16 ep=S(0) tp=R; adam (16 B an element). Folded: 4 devices, edp 2; the
        worst rank holds m.a [2,4] = 128 B and x.w [2,6,2] = 384 B: 512 B; with ZeRO-3
        dp x cp has 1 rank, edp 2: x.w's dim 0 of 2 splits 1 | 1, 192 B: 320 B."""
        dims = {"dp_size": 1, "cp_size": 1, "tp_size": 4, "ep_size": 2, "pp_size": 1}
        plan = {"m": {"params": {"a": {"tp": "S(0)"}}},
                "x": {"params": {"w": {"ep": "S(0)", "tp": "R"}}}}
        model = self.write("model.json", {"format": "hpfreeze.model/v1", "modules": {"": "M"},
                                          "parameters": {
                                              "m.a": {"shape": [8, 4], "dtype": "bfloat16"},
                                              "x.w": {"shape": [4, 6, 2], "dtype": "bfloat16"}}})
        folded = self.write("folded.json", {"mesh_dim_names": ["tp"], "parallel_dims": dims,
                                            "param_plan": plan})
        axis = self.write("axis.json", {"mesh_dim_names": ["tp", "ep"], "parallel_dims": dims,
                                        "param_plan": plan})
        for stage, worst in ((0, 512), (3, 320)):
            doc, _ = report_json(folded, "--model", model, "--optimizer", "adam", "--zero",
                                 str(stage))
            m = doc["meshes"][0]
            self.assertEqual((m["devices"], m["max_rank_bytes"], m["expert_mesh"]),
                             (4, worst, {"edp": 2, "ep": 2}))
        doc, _ = report_json(axis, "--model", model, "--optimizer", "adam")
        self.assertEqual((doc["meshes"][0]["devices"], doc["meshes"][0]["max_rank_bytes"]),
                         (8, 512))
        r = run("report", axis, "--model", model, "--optimizer", "adam", "--zero", "3")
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: --zero 3 splits nothing: every ZeRO group has size 1 "
                         "on every mesh (the data-parallel axes dp, cp are absent or of size 1); "
                         "add dp=N to --mesh, or name the data-parallel axis with --zero-axis\n")
        # An expert split on tp too cannot be laid out folded: an error at its pointer.
        plan["x"]["params"]["w"]["tp"] = "S(1)"
        bad = self.write("bad.json", {"mesh_dim_names": ["tp"], "parallel_dims": dims,
                                      "param_plan": plan})
        r = run("report", bad, "--model", model, "-q")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"hpfreeze: error: {bad}: /param_plan/x/params/w/tp: parameter 'x.w' is an "
                      "expert (a Shard on axis 'ep'); the folded layout cannot also put S(1) on "
                      "axis 'tp': it splits experts on ep only (--expert-parallel axis makes ep a "
                      "mesh axis) [HPF502]\n", r.stderr.decode())

    def test_axis_order_decides_ties_placement_axes_first(self):
        """docs/capacity.md, "Meshes and their order": mesh_dim_names null, m.w [10,4] bf16
        tp=S(0): tp=1 dp=2 (ZeRO-3 over dp: 5 rows, 5 x 4 x 16 = 320 B) and tp=2 dp=1 (tp:
        5 rows, 320 B) both fit 400 B on 2 devices; tp, which a placement names, comes
        before dp, which only the mesh has, so tp=1 dp=2 is first."""
        meta = self.write("meta.json", {"mesh_dim_names": None,
                                        "param_plan": {"m": {"params": {"w": {"tp": "S(0)"}}}}})
        model = self.write("model.json", {"format": "hpfreeze.model/v1", "modules": {"": "M"},
                                          "parameters": {"m.w": {"shape": [10, 4],
                                                                 "dtype": "bfloat16"}}})
        args = ["--sweep", "tp=1,2", "--sweep", "dp=1,2", "--optimizer", "adam", "--zero", "3",
                "--budget", "400"]
        r = run("report", meta, "--model", model, *args, "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\nsmallest mesh that fits: tp=1 dp=2 (2 devices, worst rank 320 B of 400 B), "
                      "and 1 more with 2 devices\n", r.stdout.decode())
        doc, _ = report_json(meta, "--model", model, *args)
        self.assertEqual([m["mesh"] for m in doc["meshes"]],
                         [{"tp": 1, "dp": 1}, {"tp": 1, "dp": 2}, {"tp": 2, "dp": 1},
                          {"tp": 2, "dp": 2}])
        self.assertEqual(doc["answer"], {"mesh": {"tp": 1, "dp": 2}, "devices": 2,
                                         "max_rank_bytes": 320, "ties": 1})


if __name__ == "__main__":
    unittest.main()
