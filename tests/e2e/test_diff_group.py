"""`hpfreeze diff --group` and `--stat` against an oracle written here from docs/cli.md's rules.

The oracle folds plain `diff --json`'s objects by itself (numbers between '/' and '.' of a
pointer and between '.' of a value's strings, 1 to 15 digits without a leading zero; no
fold for a brace; range sets; the first member's order) and counts them; the binary's
`--group`, `--group --json`, `--stat` and `--stat --json` must be its bytes, over random
metas and mutations (seeded) and bench/gen's DeepSeek-V3-like meta. Plain `diff`'s bytes
stay what they were: the oracle only reads them.
"""
import json
import os
import random
import re
import subprocess
import sys
import unittest
from collections import Counter

from hpf import SOURCE, TempDirTest, run

IN_POINTER = re.compile(r"(?<![^./])(0|[1-9][0-9]{0,14})(?![^./])")
IN_STRING = re.compile(r"(?<![^.])(0|[1-9][0-9]{0,14})(?![^.])")


def dumps(value):
    return json.dumps(value, separators=(",", ":"))


def strings_of(value):
    """The strings of a value in document order, depth first, keys left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings_of(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_of(v)


def map_strings(value, f):
    if isinstance(value, str):
        return f(value)
    if isinstance(value, list):
        return [map_strings(v, f) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, f) for k, v in value.items()}
    return value


def range_set(values):
    values = sorted(set(values))
    parts, i = [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append("%d..%d" % (values[i], values[j]))
            i = j + 1
        else:
            parts.append(str(values[i]))
            i += 1
    return "{" + ",".join(parts) + "}"


def oracle_groups(plain):
    """--group --json's objects for plain --json's objects, in order."""
    groups, by_shape = [], {}
    for d in plain:
        sides = [d[s] for s in ("old", "new") if s in d]
        texts = [d["pointer"]] + [s for v in sides for s in strings_of(v)]
        foldable = not any("{" in t or "}" in t for t in texts)
        numbers = [int(m.group()) for m in IN_POINTER.finditer(d["pointer"])]
        for v in sides:
            for s in strings_of(v):
                numbers += [int(m.group()) for m in IN_STRING.finditer(s)]
        key = dumps([d["op"], IN_POINTER.sub("{}", d["pointer"]), "old" in d, "new" in d]
                    + [map_strings(v, lambda s: IN_STRING.sub("{}", s)) for v in sides])
        if foldable and key in by_shape:
            by_shape[key]["numbers"].append(numbers)
            continue
        group = {"first": d, "numbers": [numbers if foldable else []]}
        if foldable:
            by_shape[key] = group
        groups.append(group)
    out = []
    for g in groups:
        rows = g["numbers"]
        varying = [k for k in range(len(rows[0])) if any(r[k] != rows[0][k] for r in rows)]
        sets = {k: range_set([r[k] for r in rows]) for k in varying}
        slot = iter(range(len(rows[0])))

        def pattern(text, regex):
            return regex.sub(lambda m: sets.get(next(slot), m.group()), text)
        d = g["first"]
        obj = {"op": d["op"], "pointer": pattern(d["pointer"], IN_POINTER) if varying
               else d["pointer"]}
        for side in ("old", "new"):
            if side in d:
                obj[side] = (map_strings(d[side], lambda s: pattern(s, IN_STRING)) if varying
                             else d[side])
        obj["members"] = [[r[k] for k in varying] for r in rows]
        obj["count"] = len(rows)
        out.append(obj)
    return out


def oracle_stat(plain, groups=None):
    stat = {"differences": len(plain)}
    for op, name in (("add", "added"), ("remove", "removed"), ("change", "changed")):
        stat[name] = sum(d["op"] == op for d in plain)
    if groups is not None:
        stat["groups"] = groups
    stat["by_key"] = {}
    for d in plain:
        key = d["pointer"].split("/")[1].replace("~1", "/").replace("~0", "~")
        counts = stat["by_key"].setdefault(key, {"added": 0, "removed": 0, "changed": 0})
        counts[{"add": "added", "remove": "removed", "change": "changed"}[d["op"]]] += 1
    return stat


def stat_text(stat):
    if not stat["differences"]:
        return ""
    rows = [[k, str(sum(c.values())), "+%d" % c["added"], "-%d" % c["removed"],
             "~%d" % c["changed"]] for k, c in stat["by_key"].items()]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [(r[0].ljust(widths[0]) + "  " + "  ".join(r[i].rjust(widths[i]) for i in range(1, 5)))
             .rstrip() for r in rows]
    total = "%d difference%s" % (stat["differences"], "" if stat["differences"] == 1 else "s")
    if "groups" in stat:
        total += " in %d group%s" % (stat["groups"], "" if stat["groups"] == 1 else "s")
    total += ": %d added, %d removed, %d changed" % (stat["added"], stat["removed"],
                                                    stat["changed"])
    return "".join(line + "\n" for line in lines) + total + "\n"


def random_metas(seed):
    """An old and a new meta: numbered layers and experts (some named to be no number),
    injections, sets, and edits that repeat over layers."""
    rng = random.Random(seed)
    layers = rng.randint(1, 12)
    experts = rng.randint(0, 6)

    def name(i):
        return rng.choice(["model.layers.%d" % i] * 8 + ["model.layers.0%d" % i,
                          "model.layers.%d" % (10 ** 15 + i), "block{%d}" % i, "h.%d.x" % i])
    names = [name(i) for i in range(layers)]
    plan, injections, frozen, tied = {}, [], [], []
    for i, n in enumerate(names):
        params = {"o_proj.weight": {"tp": rng.choice(["S(1)", "R", "SS(0,2)"]), "ep": "R"},
                  "q_proj.weight": {"tp": "S(0)", "ep": "R"}}
        for e in range(experts):
            for p in ("gate_proj", "up_proj"):
                params["experts.%d.%s.weight" % (e, p)] = {"tp": "S(0)", "ep": "R"}
        plan[n] = {"params": params, "region_dispatch": n + ".gate.%d" % (i % 3),
                   "in_src": {"h.%d" % (i % 2): {"tp": "R"}}, "out_names": ["output"]}
        if rng.random() < 0.7:
            injections.append({"match": n, "ep_size": 8, "inner_wrapper": {"_target_": "W",
                               "layer": "%s.%d" % (n, i)}})
        frozen += [n + "." + p for p, a in params.items() if a["tp"] != "R"]
        if rng.random() < 0.3:
            tied.append([n + ".a.%d" % i, n + ".b"])
    old = {"param_plan": plan, "injections": injections, "frozen_sharded_params": frozen,
           "tied_pairs": tied, "special_handlers": {"rope.%d" % k: "h" for k in range(3)},
           "signature": "s", "numbers": [0, 1, 1.0, 2]}
    new = json.loads(json.dumps(old))
    for _ in range(rng.randint(1, 5)):
        kind = rng.randrange(9)
        for i, n in enumerate(names):
            if rng.random() < 0.2:
                continue  # an edit misses a few layers
            entry = new["param_plan"].get(n)
            if entry is None:
                continue
            if kind == 0:
                entry["params"]["o_proj.weight"]["tp"] = "R"
            elif kind == 1:
                for p, axes in entry["params"].items():
                    if p.startswith("experts."):
                        axes["ep"] = "S(0)"
            elif kind == 2:
                new["injections"] = [j for j in new["injections"] if j["match"] != n]
            elif kind == 3:
                for j in new["injections"]:
                    if j["match"] == n:
                        j["ep_size"] = rng.choice([16, 16.0])
            elif kind == 4:
                new["frozen_sharded_params"] = [f for f in new["frozen_sharded_params"]
                                                if not f.startswith(n + ".o_proj")]
            elif kind == 5:
                del new["param_plan"][n]
            elif kind == 6:
                entry["region_dispatch"] = n + ".router.%d" % (i % 2)
            elif kind == 7:
                entry["out_names"] = ["output", "aux.%d" % i]
            else:
                new["special_handlers"]["rope.%d" % (i % 3)] = "g"
                new["numbers"][i % 4] = 2
    return old, new


class DiffGroupAndStat(TempDirTest):
    def out(self, *args, code=1):
        r = run("diff", *args)
        self.assertEqual((r.returncode, r.stderr), (code, b""), args)
        return r.stdout.decode()

    def check_pair(self, a, b):
        """Every output form of --group and --stat against the oracle; returns the groups."""
        plain_json = self.out(a, b, "--json").splitlines()
        plain_text = self.out(a, b).splitlines()
        plain = [json.loads(line) for line in plain_json]
        groups = oracle_groups(plain)
        self.assertEqual(self.out(a, b, "--group", "--json"),
                         "".join(dumps(g) + "\n" for g in groups))
        # Text: a group of one is diff's line; a group of more is its first member's line
        # with range sets, and its count.
        text = self.out(a, b, "--group").splitlines()
        self.assertEqual(len(text), len(groups))
        for line, g in zip(text, groups):
            first = plain_text[plain_json.index(dumps({k: g[k] for k in g
                                                       if k not in ("members", "count")}))
                               ] if g["count"] == 1 else None
            if first is not None:
                self.assertEqual(line, first)
                continue
            self.assertTrue(line.endswith("  (%d)" % g["count"]), line)
            numbers = iter(g["members"][0])
            member_line = re.sub(r"\{[0-9][0-9.,]*\}", lambda m: str(next(numbers)),
                                 line[:-len("  (%d)" % g["count"])])
            self.assertIn(member_line, plain_text)
        stat = oracle_stat(plain)
        self.assertEqual(json.loads(self.out(a, b, "--stat", "--json")), stat)
        self.assertEqual(self.out(a, b, "--stat"), stat_text(stat))
        grouped = oracle_stat(plain, len(groups))
        self.assertEqual(self.out(a, b, "--stat", "--group"),
                         "".join(line + "\n" for line in text) + "\n" + stat_text(grouped))
        self.assertEqual(self.out(a, b, "--stat", "--group", "--json"),
                         "".join(dumps(g) + "\n" for g in groups) + dumps(grouped) + "\n")
        return groups

    def test_random_metas_and_mutations(self):
        folded = 0
        for seed in range(40):
            with self.subTest(seed=seed):
                old, new = random_metas(seed)
                a, b = self.write_json("a.json", old), self.write_json("b.json", new)
                if old == new:
                    continue
                folded += sum(g["count"] > 1 for g in self.check_pair(a, b))
        self.assertGreater(folded, 40)

    def test_deepseek_experts_split_on_ep(self):
        # bench/gen's DeepSeek-V3 layout, 6 layers (3 dense) of 8 experts; the experts'
        # gate and up projections split on ep in every MoE layer.
        gen = os.path.join(SOURCE, "bench", "gen")
        subprocess.run([sys.executable, gen, "deepseek", "--layers", "6", "--experts", "8",
                        "-o", self.dir], check=True, capture_output=True)
        with open(self.path("plan.json"), encoding="utf-8") as f:
            plan = json.load(f)
        for module in plan["modules"].values():
            for p, axes in (module.get("params") or {}).items():
                if re.fullmatch(r"experts\.\d+\.(gate|up)_proj\.weight", p):
                    axes["ep"] = {"$placement": "Shard", "dim": 0}
        self.write_json("plan-ep.json", plan)
        metas = []
        for p in ("plan.json", "plan-ep.json"):
            metas.append(self.path(p.replace("plan", "meta")))
            r = run("freeze", "--plan", self.path(p), "--model", self.path("model.json"),
                    "-o", metas[-1])
            self.assertEqual(r.returncode, 0, r.stderr)
        a, b = metas
        self.assertEqual(self.out(a, b, "--group"), "".join(
            "~ /param_plan/model.layers.{3..5}.mlp/params/experts.{0..7}.%s_proj.weight/ep: "
            "R -> S(0)  (24)\n" % p for p in ("gate", "up")))
        self.assertEqual(self.out(a, b).count("\n"), 48)
        self.assertEqual(self.out(a, b, "--stat"),
                         "param_plan  48  +0  -0  ~48\n48 differences: 0 added, 0 removed, "
                         "48 changed\n")
        self.check_pair(a, b)

    def test_equal_metas_and_quiet(self):
        old, new = random_metas(3)
        a, b = self.write_json("a.json", old), self.write_json("b.json", new)
        for flags in (["--stat"], ["--group"], ["--stat", "--group"], ["--group", "--json"]):
            self.assertEqual(self.out(a, a, *flags, code=0), "")
            for quiet in (["-q"], ["--quiet"]):
                self.assertEqual(self.out(a, b, *flags, *quiet), "")
                self.assertEqual(self.out(a, b, *flags, *quiet, "--json"), "")
        self.assertEqual(json.loads(self.out(a, a, "--stat", "--json", code=0)),
                         oracle_stat([]))
        # Trouble is trouble with the new flags too.
        r = run("diff", a, self.path("missing.json"), "--stat", "--group")
        self.assertEqual((r.returncode, r.stdout), (2, b""))

    def test_github_notice_on_the_new_meta(self):
        old, new = random_metas(5)
        a, b = self.write_json("a.json", old), self.write_json("b.json", new)
        plain = run("diff", a, b)
        github = run("--message-format", "github", "diff", a, b)
        self.assertEqual((github.returncode, github.stdout), (1, plain.stdout))
        stat = oracle_stat([json.loads(line) for line in self.out(a, b, "--json").splitlines()])
        lines = stat_text(stat).splitlines()
        self.assertEqual(github.stderr.decode(), "::notice file=%s::%s\n" % (
            b.replace(":", "%3A").replace(",", "%2C"), "%0A".join([lines[-1]] + lines[:-1])))
        self.assertEqual(run("--message-format", "github", "diff", a, a).stderr, b"")


if __name__ == "__main__":
    unittest.main()
