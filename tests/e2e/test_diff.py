"""`hpfreeze diff`: self-diffs of every real and golden meta, single edits, output forms, exit codes."""
import glob
import json
import os
import tempfile
import unittest

from hpf import TESTDATA, run

REAL = sorted(glob.glob(os.path.join(TESTDATA, "realworld", "*.json")))
GOLDEN = sorted(glob.glob(os.path.join(TESTDATA, "cases", "*", "expected.json")))


def pointer(*tokens):
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


class Diff(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, meta, raw=None):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(raw if raw is not None else json.dumps(meta, indent=2, sort_keys=True))
        return path

    def diff(self, a, b, *flags, stdin=None):
        r = run("diff", *flags, a, b, stdin=stdin)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def test_corpus_is_present(self):
        self.assertEqual(len(REAL), 3)
        self.assertGreater(len(GOLDEN), 10)

    def test_every_meta_against_itself_is_empty(self):
        for path in REAL + GOLDEN:
            with self.subTest(path=path):
                self.assertEqual(self.diff(path, path), (0, "", ""))
                # Key order and layout do not matter either.
                with open(path, encoding="utf-8") as f:
                    meta = json.load(f)
                shuffled = self.write("shuffled.json", None,
                                      json.dumps(dict(reversed(list(meta.items())))))
                self.assertEqual(self.diff(path, shuffled, "--json"), (0, "", ""))

    def test_one_changed_placement_is_the_only_difference(self):
        for path in REAL:
            with self.subTest(path=path):
                with open(path, encoding="utf-8") as f:
                    meta = json.load(f)
                boundary, entry = next((b, e) for b, e in sorted(meta["param_plan"].items())
                                       if e.get("params"))
                param, axes = sorted(entry["params"].items())[0]
                axis, old = sorted(axes.items())[0]
                new = "S(0)" if old == "R" else "R"
                axes[axis] = new
                changed = self.write("changed.json", meta)
                where = pointer("param_plan", boundary, "params", param, axis)
                self.assertEqual(self.diff(path, changed),
                                 (1, "~ %s: %s -> %s\n" % (where, old, new), ""))
                code, out, _ = self.diff(path, changed, "--json")
                self.assertEqual(code, 1)
                self.assertEqual([json.loads(line) for line in out.splitlines()],
                                 [{"op": "change", "pointer": where, "old": old, "new": new}])

    def test_one_changed_named_placement_is_the_only_difference(self):
        with open(REAL[0], encoding="utf-8") as f:
            meta = json.load(f)
        boundary = sorted(b for b, e in meta["param_plan"].items() if e.get("in_src"))[0]
        name, axes = sorted(meta["param_plan"][boundary]["in_src"].items())[0]
        axes["tp"] = "SS(1,2)"
        changed = self.write("changed.json", meta)
        code, out, _ = self.diff(REAL[0], changed)
        self.assertEqual(code, 1)
        self.assertEqual(out.count("\n"), 1)
        self.assertTrue(out.startswith("~ " + pointer("param_plan", boundary, "in_src", name, "tp")
                                       + ": "), out)
        self.assertTrue(out.endswith(" -> SS(1,2)\n"), out)

    def test_every_kind_of_difference(self):
        old = {
            "codegen_version": "0.1.1", "signature": "aaa", "mesh_dim_names": ["cp", "tp"],
            "param_plan": {
                "gone": {},
                "blk": {"params": {"w": {"tp": "S(0)", "cp": "R"}, "v": {"tp": "R"}},
                        "in_src": {"x": {"tp": "S(1)"}}, "out_names": ["output"],
                        "is_boundary": True},
            },
            "injections": [{"match": "blk", "ep_size": 2, "inner_target": "self"},
                           {"match": "gone", "ep_size": 1}],
            "frozen_sharded_params": ["blk.w", "gone.w"],
            "tied_pairs": [["a", "b"]],
            "special_handlers": {"p": "h1"},
            "source": {"sha": "1"},
        }
        new = json.loads(json.dumps(old))
        new["signature"] = "bbb"
        new["mesh_dim_names"] = ["tp", "cp"]
        del new["param_plan"]["gone"]
        new["param_plan"]["added"] = {}
        blk = new["param_plan"]["blk"]
        blk["params"]["w"] = {"tp": "S( 1 )", "ep": "R"}   # tp changed, cp removed, ep added
        blk["params"]["v"]["tp"] = "R"
        blk["in_src"]["x"]["tp"] = "SS( 1 , 2 )"
        blk["out_names"] = ["out"]
        blk["future_key"] = 1
        new["injections"] = [{"match": "added", "ep_size": 1},
                             {"inner_target": "self", "ep_size": 4, "match": "blk"}]
        new["frozen_sharded_params"] = ["blk.w", "added.w"]
        new["tied_pairs"] = [["b", "a"]]
        new["special_handlers"] = {"p": "h2", "q": "h3"}
        new["source"]["sha"] = "2"
        new["model_name"] = "M"
        del new["codegen_version"]
        a, b = self.write("a.json", old), self.write("b.json", new)
        code, out, err = self.diff(a, b)
        self.assertEqual((code, err), (1, ""))
        self.assertEqual(out.splitlines(), [
            "- /codegen_version: \"0.1.1\"",
            "- /frozen_sharded_params: \"gone.w\"",
            "+ /frozen_sharded_params: \"added.w\"",
            "+ /injections/added: injection added",
            "~ /injections/blk/ep_size: 2 -> 4",
            "- /injections/gone: injection removed",
            "~ /mesh_dim_names: [\"cp\",\"tp\"] -> [\"tp\",\"cp\"]",
            "+ /model_name: \"M\"",
            "+ /param_plan/added: boundary added",
            "+ /param_plan/blk/future_key: 1",
            "~ /param_plan/blk/in_src/x/tp: S(1) -> SS( 1 , 2 )",
            "~ /param_plan/blk/out_names: [\"output\"] -> [\"out\"]",
            "- /param_plan/blk/params/w/cp: R",
            "+ /param_plan/blk/params/w/ep: R",
            "~ /param_plan/blk/params/w/tp: S(0) -> S( 1 )",
            "- /param_plan/gone: boundary removed",
            "~ /signature: \"aaa\" -> \"bbb\"",
            "~ /source/sha: \"1\" -> \"2\"",
            "~ /special_handlers/p: \"h1\" -> \"h2\"",
            "+ /special_handlers/q: \"h3\"",
            "- /tied_pairs: [\"a\",\"b\"]",
            "+ /tied_pairs: [\"b\",\"a\"]",
        ])
        code, out, _ = self.diff(a, b, "--json", "--ignore", "signature", "--ignore", "source")
        lines = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(code, 1)
        self.assertEqual(len(lines), 20)
        self.assertEqual(lines[0], {"op": "remove", "pointer": "/codegen_version", "old": "0.1.1"})
        self.assertEqual(lines[3], {"op": "add", "pointer": "/injections/added",
                                    "new": {"match": "added", "ep_size": 1}})
        self.assertNotIn("/signature", [line["pointer"] for line in lines])

    def test_ignore_makes_equal_and_leaves_the_rest(self):
        with open(REAL[0], encoding="utf-8") as f:
            meta = json.load(f)
        meta["signature"] = "changed"
        changed = self.write("changed.json", meta)
        self.assertEqual(self.diff(REAL[0], changed, "--ignore", "signature"), (0, "", ""))
        self.assertEqual(self.diff(REAL[0], changed, "--ignore=yaml_path")[0], 1)
        # --ignore takes exactly one field, so the positional arguments still follow it.
        r = run("diff", "--ignore", "signature", REAL[0], changed)
        self.assertEqual((r.returncode, r.stdout), (0, b""))

    def test_ignore_pointers_and_comma_lists(self):
        with open(REAL[0], encoding="utf-8") as f:
            meta = json.load(f)
        boundary = sorted(b for b, e in meta["param_plan"].items() if e.get("params"))[0]
        params = meta["param_plan"][boundary]["params"]
        first, axes = sorted(params.items())[0]
        axis = sorted(axes)[0]
        axes[axis] = "S(7)" if axes[axis] != "S(7)" else "S(6)"
        meta["signature"] = "changed"
        meta["yaml_path"] = "elsewhere.yaml"
        changed = self.write("changed.json", meta)
        where = pointer("param_plan", boundary, "params", first)
        self.assertEqual(self.diff(REAL[0], changed, "--ignore", "signature,yaml_path",
                                   "--ignore", where), (0, "", ""))
        code, out, _ = self.diff(REAL[0], changed, "--ignore", "signature," + where)
        self.assertEqual((code, out), (1, "~ /yaml_path: %s -> \"elsewhere.yaml\"\n"
                                       % json.dumps(json.load(open(REAL[0]))["yaml_path"])))
        code, out, _ = self.diff(REAL[0], changed, "--json", "--ignore", "/signature,/yaml_path")
        self.assertEqual(code, 1)
        self.assertEqual([json.loads(line)["pointer"] for line in out.splitlines()],
                         [where + "/" + axis])

    def test_ignore_that_matches_nothing_is_a_usage_error(self):
        for flag, message in (
                ("nosuchkey", "--ignore 'nosuchkey': matches nothing in either input"),
                ("signature,/param_plan/no.such.boundary",
                 "--ignore '/param_plan/no.such.boundary': matches nothing in either input"),
                ("signature,,yaml_path", "--ignore 'signature,,yaml_path': empty field name"),
                ("/a~3", "--ignore '/a~3': not a JSON Pointer ('~' must be followed by 0 or 1)"),
                ("/frozen_sharded_params/0",
                 "--ignore '/frozen_sharded_params/0': the members of /frozen_sharded_params "
                 "compare as a multiset; ignore the whole /frozen_sharded_params")):
            self.assertEqual(self.diff(REAL[0], REAL[0], "--ignore", flag),
                             (2, "", "hpfreeze: error: %s\n" % message), flag)

    def test_stdin(self):
        with open(REAL[1], "rb") as f:
            data = f.read()
        self.assertEqual(self.diff("-", REAL[1], stdin=data), (0, "", ""))
        self.assertEqual(self.diff(REAL[1], "-", stdin=data), (0, "", ""))

    def test_trouble_exits_2(self):
        missing = os.path.join(self.tmp.name, "missing.json")
        bad = self.write("bad.json", None, "{\"a\": ")
        array = self.write("array.json", None, "[]")
        code, out, err = self.diff(missing, REAL[0])
        self.assertEqual((code, out), (2, ""))
        self.assertTrue(err.startswith("hpfreeze: error: %s: " % missing), err)
        code, out, err = self.diff(bad, array)
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err.count("\n"), 2, err)
        self.assertIn("hpfreeze: error: %s:1:" % bad, err)
        self.assertIn("hpfreeze: error: %s: expected a JSON object (a codegen_meta.json), "
                      "got an array\n" % array, err)
        code, _, err = self.diff("-", "-", stdin=b"{}")
        self.assertEqual(code, 2)
        self.assertEqual(err, "hpfreeze: error: at most one of the two metas may be '-' (stdin)\n")
        r = run("diff", REAL[0])
        self.assertEqual(r.returncode, 2)
        r = run("diff", REAL[0], REAL[0], "--bogus")
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
