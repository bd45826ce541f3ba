"""End-to-end tests of `hpfreeze report` as a capacity planner (--sweep, --optimizer, --budget).

Expected bytes come from tests/e2e/capacity_model.py (an independent rank-by-rank
calculator that shares no code with the C++ planner) or are worked out by hand in the
comments; never from the program under test.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

BINARY = os.environ["HPFREEZE_BINARY"]
SOURCE = pathlib.Path(os.environ.get("HPFREEZE_SOURCE_DIR",
                                     pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(SOURCE / "tests/e2e"))
import capacity_model  # noqa: E402

GiB = 1024 ** 3


def run(*args, cwd=None):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, check=False, cwd=cwd)


def write(directory, name, doc):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def small_inputs(directory, dtype="bfloat16", extra_model=None):
    """embed [10, 4] S(0) on tp, proj [6, 5] float32 S(1) on tp, norm [4] replicated."""
    meta = {"codegen_version": "0.1.1", "mesh_dim_names": ["tp"],
            "parallel_dims": {"tp_size": 2},
            "frozen_sharded_params": ["embed.weight", "proj.weight"],
            "param_plan": {"embed": {"params": {"weight": {"tp": "S(0)"}}},
                           "proj": {"params": {"weight": {"tp": "S(1)"}}},
                           "norm": {"params": {"weight": {"tp": "R"}}}}}
    params = {"embed.weight": {"shape": [10, 4], "dtype": dtype},
              "proj.weight": {"shape": [6, 5], "dtype": "float32"},
              "norm.weight": {"shape": [4], "dtype": "bfloat16"}}
    params.update(extra_model or {})
    model = {"format": "hpfreeze.model/v1", "modules": {"": "M", "embed": "Embedding", "proj": "Linear",
                                                   "norm": "RMSNorm", "extra": "Linear"},
             "parameters": params}
    return write(directory, "meta.json", meta), write(directory, "model.json", model)


# By hand, per tp size: embed rows chunk as torch.chunk(10, tp), proj columns as
# torch.chunk(5, tp); worst rank is coordinate 0, best the last non-empty or empty one.
#   tp=1: 10*4*2 + 6*5*4 + 4*2 = 80 + 120 + 8 = 208 (both)
#   tp=2: embed 5 rows -> 40; proj 3|2 cols -> 72|48; worst 40+72+8 = 120, best 40+48+8 = 96
#   tp=3: embed 4|4|2 -> 32|32|16; proj 2|2|1 -> 48|48|24; worst 88, best 16+24+8 = 48
#   tp=4: embed 3|3|3|1 -> 24|..|8; proj 2|2|1|0 -> 48|48|24|0; worst 80, best 8+0+8 = 16
SMALL = {1: (208, 208), 2: (120, 96), 3: (88, 48), 4: (80, 16)}


class SmallModel(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.meta, self.model = small_inputs(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def report_json(self, *args):
        r = run("report", self.meta, "--model", self.model, "--json", *args)
        return r, json.loads(r.stdout)

    def test_single_mesh_is_the_planner_over_all_ranks(self):
        r, doc = self.report_json()
        # tp=2 from parallel_dims: 10 rows and 5 columns: proj does not divide.
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(doc["meshes"]), 1)
        m = doc["meshes"][0]
        self.assertEqual(m["mesh"], {"tp": 2})
        self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"]), SMALL[2])
        self.assertFalse(m["divisible"])
        self.assertEqual(m["indivisible"]["param"], "proj.weight")
        self.assertEqual((m["indivisible"]["dim"], m["indivisible"]["size"]), (1, 5))
        self.assertIsNone(m["fits"])
        # The fields report --json emitted before stay.
        for key in ("mesh", "rank0_bytes", "replicated_bytes", "unsharded_bytes",
                    "uncovered_bytes", "boundaries", "params", "findings"):
            self.assertIn(key, doc)
        self.assertEqual(doc["rank0_bytes"], SMALL[2][0])
        self.assertEqual(doc["mesh_source"], "parallel_dims")
        self.assertEqual(doc["counts"], {"planned_params": 3, "replicated_params": 1,
                                         "uncovered_params": 0, "boundaries": 3})
        by_fqn = {p["fqn"]: p for p in doc["params"]}
        self.assertEqual(by_fqn["proj.weight"]["placements"], {"tp": "S(1)"})
        self.assertTrue(all(f["file"] for f in doc["findings"]))

    def test_sweep_json_matches_the_calculator(self):
        r, doc = self.report_json("--sweep", "tp=4,1,3,2", "--optimizer", "adam",
                                  "--budget", "300")
        case = {"optimizer": "adam", "budget_bytes": 300, "resolved_axis_order": ["tp"],
                "params": [capacity_model.param("embed.weight", [10, 4],
                                                placements=[("tp", "S(0)")]),
                           capacity_model.param("proj.weight", [6, 5], "float32",
                                                [("tp", "S(1)")]),
                           capacity_model.param("norm.weight", [4], placements=[("tp", "R")])]}
        want = [capacity_model.evaluate(case, [("tp", n)]) for n in (1, 2, 3, 4)]
        self.assertEqual(doc["meshes"], want)
        self.assertEqual(doc["optimizer"], "adam")
        self.assertEqual(doc["budget_bytes"], 300)
        self.assertTrue(doc["swept"])
        # tp=1 divides; with adam every bf16 element costs 2+2+4+8 = 16 bytes, fp32 4+4+8 = 16:
        # (40 + 4) * 16 + 30 * 16 = 1184 > 300; every other tp does not divide: exit 1.
        self.assertEqual(want[0]["max_rank_bytes"], 1184)
        self.assertEqual(r.returncode, 1, r.stderr)

    def test_sweep_exit_codes(self):
        # Without a budget, a mesh that divides (tp=1) makes the sweep usable.
        r, _ = self.report_json("--sweep", "tp=1,2,4")
        self.assertEqual(r.returncode, 0, r.stderr)
        # Only meshes that do not divide: 1.
        r, _ = self.report_json("--sweep", "tp=2,4")
        self.assertEqual(r.returncode, 1)
        # tp=1 fits in 208 bytes, not in 207.
        r, doc = self.report_json("--sweep", "tp=1,2", "--budget", "208")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([m["fits"] for m in doc["meshes"]], [True, False])
        r, doc = self.report_json("--sweep", "tp=1,2", "--budget", "207")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(doc["meshes"][0]["over_by_bytes"], 1)
        # A single mesh over budget: 1; under: 0 (tp=1 divides everything).
        r, _ = self.report_json("--mesh", "tp=1", "--budget", "1KiB")
        self.assertEqual(r.returncode, 0, r.stderr)
        r, _ = self.report_json("--mesh", "tp=1", "--budget", "0.1K")
        self.assertEqual(r.returncode, 1)

    def test_text_lines(self):
        r = run("report", self.meta, "--model", self.model, "--sweep", "tp=1,3",
                "--budget", "100")
        lines = r.stdout.splitlines()
        # One line per mesh: label, devices, worst, best, bar, verdict.
        tp1 = next(line for line in lines if line.startswith("tp=1 "))
        tp3 = next(line for line in lines if line.startswith("tp=3 "))
        self.assertIn("208 B", tp1)
        self.assertTrue(tp1.rstrip().endswith("over by 108 B"), tp1)
        self.assertIn("88 B", tp3)
        self.assertIn("does not divide: embed.weight dim 0 by tp=3", tp3)
        self.assertIn("#", tp1)
        # The summary line ends the findings on stderr (tp=2 from parallel_dims: one error).
        r = run("report", self.meta, "--model", self.model)
        self.assertEqual(r.stderr.splitlines()[-1],
                         "hpfreeze: note: report: 1 error, 0 warnings, 0 notes")

    def test_usage_errors(self):
        for args in (["--sweep", "tp=0"], ["--sweep", "tp="], ["--budget", "80 apples"],
                     ["--optimizer", "lion"], ["--mesh", "tp=2", "--sweep", "tp=1,2"],
                     ["--sweep", "tp=1", "--sweep", "tp=2"]):
            r = run("report", self.meta, "--model", self.model, *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertEqual(r.stdout, "")

    def test_budget_any_decimal_in_range_however_many_digits(self):
        for text, value in (("1.00000000000000000000GiB", GiB), ("208.000000000000000000000", 208),
                            ("000000000000000000000000208", 208), ("0.2031250000000000000001K", 203),
                            ("18446744073709551615.999999999999999999", 2 ** 64 - 1)):
            with self.subTest(budget=text):
                r, doc = self.report_json("--mesh", "tp=1", "--budget", text)
                self.assertEqual(doc["budget_bytes"], value, r.stderr)

    def test_budget_words(self):
        not_decimal = ("not a decimal number; expected digits with at most one '.' and no "
                       "exponent, then an optional unit, as 80GiB or 1.5TiB")
        for text, why in (("1e3", not_decimal), ("1e400", not_decimal), ("2.5E9", not_decimal),
                          ("1.5.0G", not_decimal), ("18446744073709551616", "more than 2^64-1 bytes"),
                          ("1" + "0" * 40 + "K", "more than 2^64-1 bytes")):
            with self.subTest(budget=text):
                r = run("report", self.meta, "--model", self.model, "--budget", text)
                self.assertEqual((r.returncode, r.stdout, r.stderr), (2, "", (
                    f"hpfreeze: error: --budget: '{text}': {why} (see 'hpfreeze report --help')\n")))

    def test_a_mesh_the_flags_make_too_large_is_a_usage_error(self):
        big = "9223372036854775807"  # 2^63-1, the largest axis size
        meta = json.loads(pathlib.Path(self.meta).read_text())
        meta["parallel_dims"] = {"tp_size": 4}
        four = write(self.tmp.name, "four.json", meta)
        cases = (
            (self.meta, ["--sweep", f"tp={big},1", "--sweep", "cp=1,4"],
             f"--sweep: mesh tp={big} cp=4 has more than 2^64-1 devices"),
            (four, ["--sweep", f"cp=1,{big}"],
             f"--sweep: mesh tp=4 cp={big} has more than 2^64-1 devices (tp=4 from "
             f"parallel_dims in {four})"),
            (self.meta, ["--mesh", f"tp=4,cp={big}"],
             f"--mesh: mesh tp=4 cp={big} has more than 2^64-1 devices"),
            (self.meta, ["--mesh", "tp=4", "--sweep", f"cp={big}"],
             f"--mesh and --sweep: mesh tp=4 cp={big} has more than 2^64-1 devices"),
            (self.meta, ["--sweep", "a=" + ",".join(map(str, range(1, 300))), "--sweep",
                         "b=" + ",".join(map(str, range(1, 300)))],
             "--sweep: the sweeps make more than 65536 meshes"),
        )
        replicas = ["--replica-axis", "cp", "--replica-axis", "a", "--replica-axis", "b"]
        for path, args, error in cases:
            with self.subTest(args=args):
                r = run("report", path, "--model", self.model, *args, *replicas)
                self.assertEqual((r.returncode, r.stdout, r.stderr),
                                 (2, "", f"hpfreeze: error: {error}\n"))
        # 2 x (2^63-1) devices is a mesh (that does not divide the model: exit 1).
        r = run("report", self.meta, "--model", self.model, "--mesh", f"tp=2,cp={big}", "--json",
                *replicas)
        self.assertEqual(json.loads(r.stdout)["meshes"][0]["devices"], 2 ** 64 - 2)
        # With parallel_dims alone the sizes are the meta's: exit 1, the report is printed.
        meta["parallel_dims"] = {"tp_size": 4, "cp_size": int(big)}
        path = write(self.tmp.name, "huge.json", meta)
        r = run("report", path, "--model", self.model)
        self.assertEqual(r.returncode, 1)
        self.assertNotEqual(r.stdout, "")
        self.assertIn(f"hpfreeze: error: {path}: /parallel_dims: mesh tp=4 cp={big} has more than "
                      "2^64-1 devices [HPF509]\n", r.stderr)

    def test_unknown_axes_are_usage_errors_with_the_nearest(self):
        # cp and dp are known as the default ZeRO axes.
        known = ("(the inputs know cp, dp, pp, tp; --replica-axis NAME adds an axis that only "
                 "holds replicas)")
        r = run("report", self.meta, "--model", self.model, "--mesh", "TP=4,EP=8")
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertEqual(r.stderr.splitlines(), [
            f"hpfreeze: error: --mesh: unknown axis 'TP'; did you mean 'tp'? {known}",
            f"hpfreeze: error: --mesh: unknown axis 'EP' {known}"])
        r = run("report", self.meta, "--model", self.model, "--sweep", "tq=1,2,4")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown axis 'tq'; did you mean 'tp'?", r.stderr)
        # Declared replicas are known: they only multiply the devices (and a note says so).
        r = run("report", self.meta, "--model", self.model, "--mesh", "tp=1",
                "--sweep", "rep=1,4", "--replica-axis", "rep", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual([m["devices"] for m in doc["meshes"]], [1, 4])
        self.assertEqual({m["max_rank_bytes"] for m in doc["meshes"]}, {208})
        self.assertIn("axis 'rep' shards no parameter: its sizes only multiply the devices",
                      r.stderr)
        # pp splits the layer stack: no replica axis.
        r = run("report", self.meta, "--model", self.model, "--replica-axis", "pp")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--replica-axis: pp is no replica axis: it splits the layer stack", r.stderr)

    def test_every_exit_1_says_why(self):
        # tp=1 holds 208 bytes: over a 100-byte budget by 108; tp=2 and 4 do not divide.
        r = run("report", self.meta, "--model", self.model, "--sweep", "tp=1,2,4",
                "--budget", "100", "--json")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"hpfreeze: error: {self.meta}: no mesh fits the 100 B budget; closest: "
                      "tp=1 (1 device, worst rank 208 B, over by 108 B) [HPF514]\n", r.stderr)
        self.assertIsNone(json.loads(r.stdout)["answer"])
        # None divides: the first mesh's first offender (tp=2: proj's 5 columns).
        r = run("report", self.meta, "--model", self.model, "--sweep", "tp=2,4", "-q")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"hpfreeze: error: {self.meta}: no mesh divides; the first, tp=2, fails on "
                      "proj.weight dim 1 (size 5) by tp=2 [HPF514]\n", r.stderr)

    def test_answer_and_fits_only(self):
        r = run("report", self.meta, "--model", self.model, "--sweep", "tp=1,2,4",
                "--budget", "300", "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        # The answer first, right under the mesh line; the rank-0 block says which mesh it is.
        self.assertEqual(lines[:3], [
            "mesh: none fixed",
            "smallest mesh that fits: tp=1 (1 device, worst rank 208 B of 300 B)",
            "rank 0 below is of tp=1: no axis fixed, the swept axes at size 1; the meshes table "
            "has every swept mesh"])
        r = run("report", self.meta, "--model", self.model, "--sweep", "tp=1,2,4",
                "--budget", "300", "--json", "--fits-only")
        doc = json.loads(r.stdout)
        self.assertEqual(doc["answer"], {"mesh": {"tp": 1}, "devices": 1, "max_rank_bytes": 208,
                                         "ties": 0})
        self.assertEqual([m["mesh"] for m in doc["meshes"]], [{"tp": 1}])

    def test_zero_hand_example(self):
        """docs/capacity.md's example: 416 / 216 / 172 / 128 B, best 64 B with stage 3."""
        meta = {"mesh_dim_names": ["tp", "dp"], "parallel_dims": {"tp_size": 2, "dp_size": 4},
                "param_plan": {"": {"params": {"a": {"tp": "S(0)"}, "b": {"tp": "R"},
                                               "c": {"tp": "S(-1)"}}}}}
        model = {"format": "hpfreeze.model/v1", "modules": {"": "M"},
                 "parameters": {"a": {"shape": [8, 4], "dtype": "bfloat16"},
                                "b": {"shape": [6], "dtype": "float32"},
                                "c": {"shape": [3, 2], "dtype": "bfloat16"}}}
        meta_path = write(self.tmp.name, "zero-meta.json", meta)
        model_path = write(self.tmp.name, "zero-model.json", model)
        for stage, worst, best in ((0, 416, 384), (1, 216, 168), (2, 172, 116), (3, 128, 64)):
            with self.subTest(stage=stage):
                r = run("report", meta_path, "--model", model_path, "--optimizer", "adam",
                        "--zero", str(stage), "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["zero"], {"stage": stage, "axes": ["dp", "cp"],
                                               "expert_axis": None})
                m = doc["meshes"][0]
                self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"]), (worst, best))
        r = run("report", meta_path, "--model", model_path, "--optimizer", "adam", "--zero", "3")
        self.assertIn("ZeRO stage 3 (the weights, gradients and optimizer state split over dp, 4 "
                      "ranks)", r.stdout)
        for bad in (["--zero", "4"], ["--zero-axis", "d-p"]):
            r = run("report", meta_path, "--model", model_path, *bad)
            self.assertEqual(r.returncode, 2, bad)

    def test_parallel_dims_above_the_largest_axis_size(self):
        meta = json.loads(pathlib.Path(self.meta).read_text())
        for value in (2 ** 64 - 1, 2 ** 63):
            meta["parallel_dims"] = {"tp_size": value}
            path = write(self.tmp.name, "dims.json", meta)
            r = run("report", path, "--model", self.model)
            self.assertIn(f"hpfreeze: warning: {path}: /parallel_dims/tp_size: ignored: {value} is "
                          "above the largest axis size, 2^63-1; axis 'tp' counts as size 1 "
                          "[HPF507]\n",
                          r.stderr)

    def test_unknown_dtype_is_named_with_file_and_pointer(self):
        meta, model = small_inputs(self.tmp.name, dtype="float128")
        r = run("report", meta, "--model", model, "--sweep", "tp=1,2")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"hpfreeze: error: {model}: /parameters/embed.weight/dtype: parameter "
                      "'embed.weight' has unknown dtype 'float128'", r.stderr)

    def test_uncovered_same_rule_as_check(self):
        meta, model = small_inputs(self.tmp.name,
                                   extra_model={"extra.weight": {"shape": [3], "dtype": "int8"}})
        for command in ("check", "report"):
            r = run(command, meta, "--model", model, "--mesh", "tp=1") if command == "report" \
                else run(command, meta, "--model", model)
            self.assertEqual(r.returncode, 1, (command, r.stderr))
            self.assertIn("error:", r.stderr)
            r = run(command, meta, "--model", model, "--allow-uncovered",
                    *(["--mesh", "tp=1"] if command == "report" else []))
            self.assertEqual(r.returncode, 0, (command, r.stderr))
            self.assertNotIn("error:", r.stderr)
        # The uncovered param is whole on every rank: 208 + 3 bytes.
        r = run("report", meta, "--model", model, "--mesh", "tp=1", "--allow-uncovered", "--json")
        doc = json.loads(r.stdout)
        self.assertEqual(doc["meshes"][0]["max_rank_bytes"], 211)
        self.assertEqual(doc["uncovered"], [{"fqn": "extra.weight", "shape": [3],
                                             "dtype": "int8", "bytes": 3}])

    def test_check_verbose_count(self):
        r = run("check", self.meta, "--model", self.model, "-v")
        self.assertRegex(r.stderr, r"(?m)^hpfreeze: [a-z]+: check: 0 errors, \d+ warnings?, "
                                   r"\d+ notes?$")


def meta_axes(meta):
    """(fqn, [(axis, placement text)]) of every planned param of a codegen_meta.json."""
    for boundary, entry in meta["param_plan"].items():
        for name, axes in (entry.get("params") or {}).items():
            yield f"{boundary}.{name}" if boundary else name, list(axes.items())


class DeepSeekLike(unittest.TestCase):
    """bench/gen's DeepSeek-V3-like plan (fewer layers and experts), frozen, then swept."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        subprocess.run([sys.executable, str(SOURCE / "bench/gen"), "deepseek", "-o", d,
                        "--layers", "3", "--dense-layers", "1", "--experts", "8"],
                       check=True, capture_output=True)
        cls.meta = os.path.join(d, "meta.json")
        r = run("freeze", "--plan", os.path.join(d, "plan.json"), "--model",
                os.path.join(d, "model.json"), "-o", cls.meta)
        assert r.returncode == 0, r.stderr
        cls.model = os.path.join(d, "model.json")
        with open(cls.meta, encoding="utf-8") as f:
            meta = json.load(f)
        with open(cls.model, encoding="utf-8") as f:
            params = json.load(f)["parameters"]
        planned = dict(meta_axes(meta))
        cls.case_params = [
            capacity_model.param(fqn, info["shape"], info.get("dtype", "bfloat16"),
                                 planned.get(fqn, ()), info.get("requires_grad", True))
            for fqn, info in params.items()]
        cls.axis_order = list(meta.get("mesh_dim_names") or [])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def expected(self, meshes, optimizer, budget):
        rest = {a for p in self.case_params for a, _ in p["placements"]} | {"tp", "ep"}
        order = self.axis_order + sorted(rest - set(self.axis_order))
        case = {"optimizer": optimizer, "budget_bytes": budget, "resolved_axis_order": order,
                "params": self.case_params}
        return [capacity_model.evaluate(case, m) for m in meshes]

    def test_sweep_against_the_calculator(self):
        r = run("report", self.meta, "--model", self.model, "--json", "--allow-uncovered",
                "--sweep", "tp=1,2,4", "--sweep", "ep=1,2,4,8", "--optimizer", "adamw",
                "--budget", "2GiB")
        doc = json.loads(r.stdout)
        order = [a for a in doc["placement_order"] if a in ("tp", "ep")]
        sizes = {"tp": [1, 2, 4], "ep": [1, 2, 4, 8]}
        meshes = [[(order[0], x), (order[1], y)] for x in sizes[order[0]]
                  for y in sizes[order[1]]]
        meshes.sort(key=lambda m: (m[0][1] * m[1][1], [s for _, s in m]))
        want = self.expected(meshes, "adamw", 2 * GiB)
        self.assertEqual(len(doc["meshes"]), 12)
        # Axes bench/gen's meta does not size are not in the mesh; compare the planner fields.
        keys = ("mesh", "devices", "max_rank_bytes", "min_rank_bytes", "divisible", "fits",
                "over_by_bytes")
        self.assertEqual([{k: m[k] for k in keys} for m in doc["meshes"]],
                         [{k: m[k] for k in keys} for m in want])
        usable = any(m["divisible"] and m["fits"] for m in want)
        self.assertEqual(r.returncode, 0 if usable else 1, r.stderr)

    def test_smallest_mesh_that_fits_recipe(self):
        """The docs/recipes.md pipeline, run as written."""
        text = (SOURCE / "docs/recipes.md").read_text(encoding="utf-8")
        section = text.split("## Pick the smallest mesh that fits", 1)[1]
        block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
        env = dict(os.environ, PATH=os.path.dirname(BINARY) + os.pathsep + os.environ["PATH"])
        work = self.tmp.name
        link = os.path.join(work, "codegen_meta.json")
        if not os.path.exists(link):
            os.symlink(self.meta, link)
        # A budget small enough that the answer is not the first mesh.
        self.assertIn("--budget 80GiB", block)
        script = block.replace("--budget 80GiB", "--budget 10GiB --allow-uncovered")
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=work,
                           env=env, check=False)
        rest = {a for p in self.case_params for a, _ in p["placements"]} | {"tp", "ep"}
        order = self.axis_order + sorted(rest - set(self.axis_order))
        tps, eps = [1, 2, 4, 8], [1, 2, 4, 8, 16, 32]
        meshes = [[(a, dict(tp=t, ep=e)[a]) for a in order if a in ("tp", "ep")]
                  for t in tps for e in eps]
        meshes.sort(key=lambda m: (m[0][1] * m[1][1], [s for _, s in m]))
        want = [m for m in self.expected(meshes, "adam", 10 * GiB)
                if m["divisible"] and m["fits"]]
        self.assertTrue(want)
        label = ",".join(f"{a}={n}" for a, n in want[0]["mesh"].items())
        self.assertEqual(r.stdout.strip(), label, r.stderr)


if __name__ == "__main__":
    unittest.main()
