"""`hpfreeze diff OLD NEW --model MODEL [report's flags]` against two `report --json` runs.

On real and golden metas (the axis layout of the bundled example, the folded experts of the
upstream Qwen3-MoE and DeepSeek metas, pipeline stages of a model dump and of a checkpoint
with tied tensors), each changed by seeded mutations (placements replicated or split, a
boundary dropped, parallel_dims changed), diff's memory object must hold exactly the numbers
of `report --json`'s one mesh for each meta (mesh, devices, worst and best rank, the error
findings), and its text lines must be those numbers as docs/cli.md writes them (formatted
here, by tests/e2e/capacity_model.py's byte sizes). Plain diff's output comes first,
unchanged. The numbers never come from diff itself.
"""
import json
import os
import random
import re
import sys
import unittest
from fractions import Fraction

from hpf import SOURCE, TESTDATA, TempDirTest, run

sys.path.insert(0, os.path.dirname(__file__))
import capacity_model  # noqa: E402

REPORT = os.path.join(TESTDATA, "report")
MOE = os.path.join(REPORT, "moe")
REALWORLD = os.path.join(TESTDATA, "realworld")
EXAMPLE = os.path.join(TESTDATA, "example")

# (name, meta, model, report's flags)
CASES = [
    ("example, ep an axis", os.path.join(EXAMPLE, "expected.json"),
     os.path.join(EXAMPLE, "model.json"), []),
    ("example, adam and ZeRO-3 on another mesh", os.path.join(EXAMPLE, "expected.json"),
     os.path.join(EXAMPLE, "model.json"),
     ["--mesh", "tp=4,ep=8,dp=4", "--optimizer", "adam", "--zero", "3"]),
    ("Qwen3-MoE v2, folded experts", os.path.join(REALWORLD, "qwen3_moe_training_demo_v2.json"),
     os.path.join(MOE, "qwen3_moe_v2.model.json"), []),
    ("Qwen3-MoE v2, folded, ep=4 and adamw ZeRO-1",
     os.path.join(REALWORLD, "qwen3_moe_training_demo_v2.json"),
     os.path.join(MOE, "qwen3_moe_v2.model.json"),
     ["--mesh", "dp=4,cp=1,tp=2,ep=4", "--optimizer", "adamw", "--zero", "1"]),
    ("DeepSeek toy, folded, stages", os.path.join(REALWORLD, "deepseek_v41_toy.json"),
     os.path.join(MOE, "deepseek_v41_toy.model.json"),
     ["--mesh", "dp=4,ep=4,pp=2", "--optimizer", "sgd"]),
    ("DeepSeek-like stages with --pp-layers",
     os.path.join(REPORT, "stages_deepseek_json", "meta.json"),
     os.path.join(REPORT, "stages_deepseek_json", "model.json"),
     ["--mesh", "dp=2,tp=2,ep=2,pp=2", "--pp-layers", "2,3", "--optimizer", "adam", "--zero",
      "1"]),
    ("stages of a checkpoint with tied tensors",
     os.path.join(REPORT, "stages_tied_checkpoint", "meta.json"),
     os.path.join(REPORT, "stages_tied_checkpoint", "model.safetensors"),
     ["--mesh", "tp=2,pp=2", "--optimizer", "sgd"]),
    ("folded ZeRO-3", os.path.join(REPORT, "folded_zero3", "meta.json"),
     os.path.join(REPORT, "folded_zero3", "model.json"), ["--optimizer", "adam", "--zero", "3"]),
]
SEED = 42
MUTATIONS = 3  # changed metas per case


def load_ordered(text):
    """JSON with objects as lists of pairs, so that key order is compared too."""
    return json.loads(text, object_pairs_hook=lambda pairs: pairs)


def mutate(meta, rng):
    """A copy of `meta` with a seeded change: placements replicated or split on dim 0, a
    boundary dropped, or parallel_dims's sizes changed; never the same meta."""
    new = json.loads(json.dumps(meta))
    placements = [(b, p, a) for b, spec in new["param_plan"].items()
                  for p, axes in (spec.get("params") or {}).items() for a in axes]
    kind = rng.choice(["replicate", "split", "drop", "dims"])
    if kind == "dims" and not isinstance(new.get("parallel_dims"), dict):
        kind = "replicate"
    if kind == "drop" and len(new["param_plan"]) > 1:
        del new["param_plan"][rng.choice(sorted(new["param_plan"]))]
    elif kind == "dims":
        sizes = [k for k, v in new["parallel_dims"].items()
                 if k.endswith("_size") and isinstance(v, int) and not isinstance(v, bool)]
        key = rng.choice(sizes)
        new["parallel_dims"][key] = new["parallel_dims"][key] * 2
    else:
        for b, p, a in rng.sample(placements, min(len(placements), rng.randint(1, 6))):
            axes = new["param_plan"][b]["params"][p]
            axes[a] = "R" if axes[a] != "R" else "S(0)"
    if new == meta:
        first = placements[0]
        axes = new["param_plan"][first[0]]["params"][first[1]]
        axes[first[2]] = "R" if axes[first[2]] != "R" else "S(0)"
    return new


def named_axes(meta):
    """The axes report knows from a meta alone (docs/cli.md, "Known axes"): pp,
    mesh_dim_names, parallel_dims's <axis>_size keys and every axis a placement names."""
    names = {"pp", *(meta.get("mesh_dim_names") or [])}
    if isinstance(meta.get("parallel_dims"), dict):
        names |= {k[:-len("_size")] for k in meta["parallel_dims"]
                  if k.endswith("_size") and len(k) > len("_size")}
    for spec in meta["param_plan"].values():
        for axes in (spec.get("params") or {}).values():
            names |= set(axes)
    return names


def percent(by, base):
    """"51.8": `by` in percent of `base`, one decimal, rounded half up."""
    tenths = Fraction(by * 1000, base)
    tenths = int(tenths + Fraction(1, 2))
    return f"{tenths // 10}.{tenths % 10}"


def rank_line(what, on, old, new, key):
    """The memory line of docs/cli.md for `key` ("max_rank_bytes", "min_rank_bytes") of two
    report meshes[0] entries (with "why": the reason when the bytes are null)."""
    def value(m):
        return "none" if m[key] is None else capacity_model.byte_size(m[key])
    line = f"{what} rank on {on}: {value(old)} -> {value(new)} "
    a, b = old[key], new[key]
    if a is not None and b is not None:
        if a == b:
            return line + "(no change)"
        sign = "+" if b > a else "-"
        by = abs(b - a)
        change = f"{sign}{capacity_model.byte_size(by)}"
        if a > 0:
            change += f", {sign}{percent(by, a)} %"
        return line + f"({change})"
    if a is None and b is None and old["why"] == new["why"]:
        return line + f"({new['why']})"
    whys = [f"{side}: {m['why']}" for side, m in (("old", old), ("new", new)) if m[key] is None]
    return line + "(" + "; ".join(whys) + ")"


def why(mesh):
    """Why report counted no rank of this meshes[0] entry, in its verdict's words."""
    if mesh["refused"] is not None:
        return ("not counted: the ranks of mesh " + capacity_model.mesh_text(dict(mesh["mesh"]))
                + " " + mesh["refused"] + "; too many to compare exactly")
    if mesh["indivisible"] is not None:
        return "does not divide: " + capacity_model.indivisible_text(mesh["indivisible"])
    return None


class DiffMemory(TempDirTest):
    def report(self, meta, model, flags):
        """report --json's document (and its ordered form), or its usage errors' lines."""
        r = run("report", meta, "--model", model, *flags, "--json")
        if r.returncode == 2:
            return r.stderr.decode().splitlines()
        self.assertIn(r.returncode, (0, 1), r.stderr.decode())
        return json.loads(r.stdout), load_ordered(r.stdout)

    def check_pair(self, old, new, model, flags, context):
        # Each meta knows the axes the other names, as report's --replica-axis.
        metas = []
        for path in (old, new):
            with open(path, encoding="utf-8") as f:
                metas.append(json.load(f))
        reports = []
        for this, other, path in ((metas[0], metas[1], old), (metas[1], metas[0], new)):
            replicas = [f for axis in sorted(named_axes(other) - named_axes(this))
                        for f in ("--replica-axis", axis)]
            reports.append(self.report(path, model, flags + replicas))
        plain = run("diff", old, new)
        self.assertEqual(plain.returncode, 1, context)
        if any(isinstance(r, list) for r in reports):
            # A usage error of either report is diff's, each line once, and nothing else.
            lines = []
            for r in reports:
                lines += [l for l in (r if isinstance(r, list) else []) if l not in lines]
            r = run("diff", old, new, "--model", model, *flags)
            self.assertEqual((r.returncode, r.stdout, r.stderr.decode().splitlines()),
                             (2, b"", lines), context)
            return None
        # --json: plain diff's lines, then the memory object with report's numbers.
        r = run("diff", old, new, "--model", model, *flags, "--json")
        self.assertEqual(r.returncode, 1, (context, r.stderr.decode()))
        lines = r.stdout.decode().splitlines()
        self.assertEqual(lines[:-1], run("diff", old, new, "--json").stdout.decode().splitlines(),
                         context)
        memory = load_ordered(lines[-1])
        self.assertEqual([k for k, _ in memory], ["memory"])
        memory = dict(memory[0][1])
        sides = {}
        for side, (doc, ordered) in zip(("old", "new"), reports):
            (mesh,) = doc["meshes"]
            ordered_mesh = dict(ordered)["meshes"][0]
            got = dict(memory[side])
            self.assertEqual(list(got), ["mesh", "devices", "max_rank_bytes", "min_rank_bytes",
                                         "errors"], context)
            self.assertEqual(got["mesh"], dict(ordered_mesh)["mesh"], context)
            for key in ("devices", "max_rank_bytes", "min_rank_bytes"):
                self.assertEqual(got[key], mesh[key], (context, side, key))
            errors = sum(f["severity"] == "error" for f in doc["findings"])
            self.assertEqual(got["errors"], errors, (context, side))
            sides[side] = dict(mesh, why=why(mesh), errors=errors)
        same = sorted(sides["old"]["mesh"].items()) == sorted(sides["new"]["mesh"].items())
        self.assertEqual(memory["mesh"], dict(reports[1][1])["meshes"][0][0][1] if same else None,
                         context)

        # Text: plain diff, an empty line, the lines from report's numbers.
        r = run("diff", old, new, "--model", model, *flags)
        self.assertEqual(r.returncode, 1, context)
        on = capacity_model.mesh_text(sides["new"]["mesh"])
        if not same:
            on = capacity_model.mesh_text(sides["old"]["mesh"]) + " -> " + on
        expected = [rank_line("worst", on, sides["old"], sides["new"], "max_rank_bytes"),
                    rank_line("best", on, sides["old"], sides["new"], "min_rank_bytes")]
        if sides["old"]["devices"] != sides["new"]["devices"]:
            expected.append(f"devices: {sides['old']['devices']} -> {sides['new']['devices']}")
        self.assertEqual(r.stdout.decode(),
                         plain.stdout.decode() + "\n" + "".join(l + "\n" for l in expected),
                         context)
        # A warning names each meta whose report has error findings.
        warnings = [line for line in r.stderr.decode().splitlines()
                    if line.startswith("hpfreeze: warning: ")]
        expected_warnings = [
            f"hpfreeze: warning: {path}: report finds {capacity_model.plural(n, 'error')} in "
            f"this meta with {model} (hpfreeze report lists them); the memory lines count as it "
            "does" for path, n in ((old, sides["old"]["errors"]), (new, sides["new"]["errors"]))
            if n > 0]
        self.assertEqual(warnings, expected_warnings, context)
        return sides

    def test_memory_is_two_reports(self):
        rng = random.Random(SEED)
        seen = {"errors": 0, "two meshes": 0, "changed": 0, "stages": 0, "folded": 0,
                "usage error": 0}
        for name, meta_path, model, flags in CASES:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
            old = self.write_json("old.json", meta)
            for i in range(MUTATIONS):
                new = self.write_json("new.json", mutate(meta, rng))
                with self.subTest(case=name, mutation=i):
                    sides = self.check_pair(old, new, model, flags, f"{name} #{i}")
                    if sides is None:
                        seen["usage error"] += 1
                        continue
                    seen["errors"] += sides["new"]["errors"] > 0
                    seen["two meshes"] += sides["old"]["mesh"] != sides["new"]["mesh"]
                    seen["changed"] += sides["old"]["max_rank_bytes"] != sides["new"]["max_rank_bytes"]
                    seen["stages"] += len(sides["new"]["stages"] or []) > 1
                    seen["folded"] += "expert_mesh" in sides["new"]
        # The mutations reach every path: errors, two meshes, a change of bytes, stages,
        # the folded layout, a usage error of one report (ZeRO-3 with nothing to split).
        self.assertTrue(all(seen.values()), seen)

    def test_an_axis_the_new_plan_adds(self):
        """The new plan splits the experts on ep, which the old meta never names: --mesh may
        give it for both, as report --replica-axis ep would for the old one."""
        with open(os.path.join(REPORT, "folded_zero3", "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        model = os.path.join(REPORT, "folded_zero3", "model.json")
        for spec in meta["param_plan"].values():
            for axes in (spec.get("params") or {}).values():
                axes.pop("ep", None)
        meta.pop("parallel_dims")
        old = self.write_json("old.json", meta)
        with open(os.path.join(REPORT, "folded_zero3", "meta.json"), encoding="utf-8") as f:
            new = self.write_json("new.json", json.load(f))
        flags = ["--mesh", "tp=4,ep=2", "--optimizer", "adam"]
        r = run("report", old, "--model", model, *flags)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"--mesh: unknown axis 'ep'", r.stderr)
        sides = self.check_pair(old, new, model, flags, "ep added")
        self.assertNotEqual(sides["old"]["max_rank_bytes"], sides["new"]["max_rank_bytes"])

    def test_errors_and_quiet(self):
        meta = os.path.join(EXAMPLE, "expected.json")
        model = os.path.join(EXAMPLE, "model.json")
        r = run("diff", meta, meta, "--mesh", "tp=2")
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: --mesh needs --model: it is for the memory lines, "
                         "which diff prints with --model only (see 'hpfreeze diff --help')\n")
        # An unknown axis: report's line, nothing on stdout.
        report = run("report", meta, "--model", model, "--mesh", "tq=2")
        r = run("diff", meta, meta, "--model", model, "--mesh", "tq=2")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (2, b"", report.stderr))
        # -q: nothing, the exit status as diff's.
        for args in ([], ["--stat"], ["--group", "--json"]):
            r = run("-q", "diff", meta, meta, "--model", model, *args)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""), args)


class DocExample(TempDirTest):
    def test_cli_md_shows_the_real_lines(self):
        """docs/cli.md's --model example, run on the bundled example with the edit it names."""
        with open(os.path.join(SOURCE, "docs", "cli.md"), encoding="utf-8") as f:
            doc = f.read()
        block = re.search(r"\n\$ (hpfreeze diff --group old\.json new\.json --model "
                          r"testdata/example/model\.json[^\n]*)\n(.*?)```", doc, re.S)
        self.assertIsNotNone(block, "docs/cli.md has no diff --model example")
        with open(os.path.join(EXAMPLE, "expected.json"), encoding="utf-8") as f:
            meta = json.load(f)
        with open(self.path("old.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        for layer in meta["param_plan"]:
            params = meta["param_plan"][layer].get("params") or {}
            if "o_proj.weight" in params:
                params["o_proj.weight"]["tp"] = "R"
        with open(self.path("new.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f)
        args = block.group(1).split()[1:]
        args = [os.path.join(SOURCE, a) if a.startswith("testdata/") else a for a in args]
        r = run(*args, cwd=self.dir)
        self.assertEqual(r.returncode, 1, r.stderr.decode())
        self.assertEqual(r.stdout.decode(), block.group(2).split("$ echo")[0])
        # docs/formats.md's object is the same run's, with --json.
        with open(os.path.join(SOURCE, "docs", "formats.md"), encoding="utf-8") as f:
            formats = f.read()
        shown = re.search(r"```json\n(\{\"memory\".*?)\n```", formats, re.S)
        self.assertIsNotNone(shown, "docs/formats.md shows no memory object")
        r = run(*args, "--json", cwd=self.dir)
        self.assertEqual(r.stdout.decode().splitlines()[-1], shown.group(1))


if __name__ == "__main__":
    unittest.main()
