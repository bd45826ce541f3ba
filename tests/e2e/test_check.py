"""End-to-end tests of `hpfreeze check` (docs/cli.md).

The expected findings on the real upstream metas are computed here, in Python, from the
rules in the docs; never from the program's own output.
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

BINARY = os.environ["HPFREEZE_BINARY"]
TESTDATA = os.environ["HPFREEZE_TESTDATA_DIR"]
REALWORLD = os.path.join(TESTDATA, "realworld")
CHECK = os.path.join(TESTDATA, "check")
REAL_METAS = ["qwen3_moe_training_demo.json", "qwen3_moe_training_demo_v2.json",
              "deepseek_v41_toy.json"]
NAMED_SECTIONS = ("in_src", "in_dst", "out_src", "out_dst")


def run(args, stdin=None):
    return subprocess.run([BINARY] + args, input=stdin, capture_output=True, timeout=60)


# --- an independent reading of SPEC §1 -------------------------------------------------------

INT = re.compile(r"\s*[+-]?\d+(_\d+)*\s*\Z", re.ASCII)


def parse_placement(text):
    """(kind, dim, uneven, factor, op) or None when `text` is not a placement."""
    if text == "R":
        return ("R", None, False, None, None)
    m = re.fullmatch(r"([SP]|SS)\((.*)\)", text)
    if m is None or not text.isascii():
        return None
    kind, args = m.groups()
    if kind == "P":
        return ("P", None, False, None, args) if args else None
    parts = args.split(",")
    if len(parts) != (1 if kind == "S" else 2) or not all(INT.match(p) for p in parts):
        return None
    dim = int(parts[0])
    factor = int(parts[1]) if kind == "SS" else None
    if factor is not None and factor < 1:
        return None
    uneven = dim < 0
    return (kind, -dim - 1 if uneven else dim, uneven, factor, None)


def canonical(p):
    kind, dim, uneven, factor, op = p
    if kind == "R":
        return "R"
    if kind == "P":
        return "P(%s)" % op
    written = -dim - 1 if uneven else dim
    return "S(%d)" % written if kind == "S" else "SS(%d,%d)" % (written, factor)


def token(key):
    return key.replace("~", "~0").replace("/", "~1")


def quote(s):
    return "'" + s + "'"


def expected_findings(meta):
    """(severity, code, pointer, message) for the findings a well-formed meta can have:
    placement problems, ambiguous negative dims, unknown axes, frozen_sharded_params and
    injection mismatches, each with its code (docs/cli.md, "Finding codes"). The real metas
    are well-formed otherwise (asserted separately)."""
    out = []
    axes = {}       # axis -> [first pointer, count], first-use order
    negatives = {}  # (boundary, name) -> [first pointer, first text, placement, count]
    sharded = {}    # fqn -> pointer of a sharded planned param
    planned = set()

    def leaf(text, pointer, boundary, name, axis):
        p = parse_placement(text)
        if p is None:
            out.append(("error", "HPF201", pointer, "invalid placement " + quote(text)))
            return None
        if axis is not None:
            axes.setdefault(axis, [pointer, 0])[1] += 1
        if canonical(p) != text:
            out.append(("warning", "HPF202", pointer, "placement %s is not canonical (canonical form: %s)"
                        % (quote(text), quote(canonical(p)))))
        if p[0] in ("S", "SS") and p[2]:
            negatives.setdefault((boundary, name), [pointer, text, p, 0])[3] += 1
        return p

    def named(value, pointer, boundary, name, axis):
        if isinstance(value, str):
            leaf(value, pointer, boundary, name, axis)
        elif isinstance(value, dict):
            for k, v in value.items():
                named(v, pointer + "/" + token(k), boundary, name, k)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                named(v, "%s/%d" % (pointer, i), boundary, name, axis)

    for boundary, entry in meta["param_plan"].items():
        bp = "/param_plan/" + token(boundary)
        for key, section in entry.items():
            if key == "params":
                for name, axes_of in section.items():
                    fqn = name if boundary == "" else boundary if name == "" else boundary + "." + name
                    planned.add(fqn)
                    pp = bp + "/params/" + token(name)
                    for axis, text in axes_of.items():
                        p = leaf(text, pp + "/" + token(axis), boundary, name, axis)
                        if p is not None and p[0] != "R":
                            sharded.setdefault(fqn, pp)
            elif key in NAMED_SECTIONS and section:
                for name, value in section.items():
                    named(value, bp + "/" + key + "/" + token(name), boundary, name, None)

    declared = meta.get("mesh_dim_names") or []
    if declared:
        listing = "[" + ", ".join(quote(a) for a in declared) + "]"
        for axis, (pointer, count) in axes.items():
            if axis not in declared:
                # ep outside mesh_dim_names: the folded layout of expert parallelism.
                what = ("DTensor ignores it, but the expert-parallel path splits the experts "
                        "it shards over groups of ep ranks folded into the dense region"
                        if axis == "ep" else "the runtime ignores it")
                out.append(("note", "HPF204", pointer, "axis %s is not in mesh_dim_names %s; %s "
                            "(%d placement%s)" % (quote(axis), listing, what, count,
                                                  "" if count == 1 else "s")))
    for (boundary, name), (pointer, text, p, count) in negatives.items():
        out.append(("warning", "HPF203", pointer,
                    "ambiguous negative dim: %s reads back as an uneven shard of dim %d, not as "
                    "dim %d counted from the end (%d negative-dim placement%s of %s on boundary "
                    "%s)" % (quote(text), p[1], -p[1] - 1, count, "" if count == 1 else "s",
                             quote(name), quote(boundary))))
    listed = meta.get("frozen_sharded_params", [])
    for fqn in sorted(set(sharded) - set(listed)):
        out.append(("error", "HPF206", "/frozen_sharded_params",
                    "missing %s, which param_plan shards (%s)" % (quote(fqn), sharded[fqn])))
    for i, fqn in enumerate(listed):
        if fqn not in sharded:
            out.append(("error", "HPF206", "/frozen_sharded_params/%d" % i,
                        quote(fqn) + " is not sharded"))
    seen = set()
    for i, inj in enumerate(meta.get("injections", [])):
        if inj["match"] not in meta["param_plan"] or inj["match"] in seen:
            out.append(("error", "HPF207", "/injections/%d/match" % i, "bad match " + inj["match"]))
        seen.add(inj["match"])
    return sorted(out, key=lambda f: (f[2].encode(), f[3].encode()))


def findings_json(stdout):
    lines = stdout.decode().splitlines()
    return [json.loads(line) for line in lines]


class RealWorldMetas(unittest.TestCase):
    def test_schema_of_real_metas_is_upstream_valid(self):
        # The premise of the tests below: nothing in these files breaks a schema rule.
        for name in REAL_METAS:
            with open(os.path.join(REALWORLD, name), encoding="utf-8") as f:
                meta = json.load(f)
            for key in ("codegen_version", "signature", "yaml_path", "yaml_sha256"):
                self.assertIsInstance(meta[key], str)
            self.assertIsInstance(meta["covered"]["sharding_plan"], bool)
            self.assertTrue(all(isinstance(v, str) for v in meta["entrypoints"].values()))

    def test_findings_on_real_metas(self):
        for name in REAL_METAS:
            path = os.path.join(REALWORLD, name)
            with open(path, encoding="utf-8") as f:
                meta = json.load(f)
            expected = expected_findings(meta)
            self.assertFalse([f for f in expected if f[0] == "error"], name)
            r = run(["check", "--json", path])
            self.assertEqual(r.returncode, 0, name)
            self.assertEqual(r.stderr, b"", name)
            got = [(f["severity"], f["code"], f["pointer"], f["message"])
                   for f in findings_json(r.stdout)]
            self.assertEqual(got, expected, name)
            for f in findings_json(r.stdout):
                self.assertEqual(list(f), ["severity", "code", "file", "pointer", "message"])
                self.assertEqual(f["file"], path)

    def test_qwen_findings_as_text(self):
        # What the docs show: the S(-1) ambiguity of the lm_head template, and 'ep', which the
        # templates always declare, outside mesh_dim_names ['cp', 'tp'].
        path = os.path.join(REALWORLD, "qwen3_moe_training_demo.json")
        r = run(["check", path])
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.stderr.decode().splitlines(), [
            "hpfreeze: note: %s: /param_plan/lm_head/in_dst/hidden_states/ep: axis 'ep' is not "
            "in mesh_dim_names ['cp', 'tp']; DTensor ignores it, but the expert-parallel path "
            "splits the experts it shards over groups of ep ranks folded into the dense region "
            "(147 placements) [HPF204]" % path,
            "hpfreeze: warning: %s: /param_plan/lm_head/out_dst/output/tp: ambiguous negative "
            "dim: 'S(-1)' reads back as an uneven shard of dim 0, not as dim -1 counted from the "
            "end (2 negative-dim placements of 'output' on boundary 'lm_head') [HPF203]" % path])
        quiet = run(["-q", "check", path])
        self.assertEqual((quiet.returncode, quiet.stderr), (0, b""))

    def test_real_metas_against_a_matching_model(self):
        # A model tree that has every boundary and every planned parameter: no new finding.
        for name in REAL_METAS:
            path = os.path.join(REALWORLD, name)
            with open(path, encoding="utf-8") as f:
                meta = json.load(f)
            modules = {"": "Root"}
            modules.update({b: "Module" for b in meta["param_plan"]})
            modules.update(meta["boundary_classes"])
            params = {}
            for boundary, entry in meta["param_plan"].items():
                for pname in entry.get("params", {}):
                    fqn = pname if boundary == "" else boundary + "." + pname
                    params[fqn] = {"shape": [8, 8, 8], "dtype": "bfloat16"}
            model = {"format": "hpfreeze.model/v1", "modules": modules, "parameters": params}
            with tempfile.TemporaryDirectory() as tmp:
                model_path = os.path.join(tmp, "model.json")
                with open(model_path, "w", encoding="utf-8") as f:
                    json.dump(model, f)
                r = run(["check", "--json", path, "--model", model_path])
                self.assertEqual(r.returncode, 0, name)
                got = [(f["severity"], f["code"], f["pointer"], f["message"])
                       for f in findings_json(r.stdout)]
                self.assertEqual(got, expected_findings(meta), name)

                # Shrinking one sharded parameter to rank 0 must be reported, once, exactly.
                fqn = meta["frozen_sharded_params"][0]
                params[fqn]["shape"] = []
                with open(model_path, "w", encoding="utf-8") as f:
                    json.dump(model, f)
                r = run(["check", "--json", path, "--model", model_path])
                self.assertEqual(r.returncode, 1, name)
                errors = [f for f in findings_json(r.stdout) if f["severity"] == "error"]
                self.assertTrue(errors, name)
                for f in errors:
                    self.assertIn("but parameter '%s' has rank 0 (shape [] in %s)"
                                  % (fqn, model_path), f["message"])
                    self.assertEqual(f["code"], "HPF304")


class ExitCodesAndStreams(unittest.TestCase):
    def test_clean_meta_prints_nothing(self):
        r = run(["check", os.path.join(CHECK, "clean_meta.json"), "--model",
                 os.path.join(CHECK, "clean_model.json")])
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        r = run(["check", "--json", os.path.join(CHECK, "clean_meta.json")])
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))

    def test_warnings_and_notes_exit_zero(self):
        path = os.path.join(CHECK, "warnings_meta.json")
        r = run(["check", path])
        self.assertEqual(r.returncode, 0)
        lines = r.stderr.decode().splitlines()
        self.assertEqual([l.split(":")[1].strip() for l in lines], ["note", "warning", "warning"])

    def test_errors_exit_one(self):
        path = os.path.join(CHECK, "errors_meta.json")
        model = os.path.join(CHECK, "errors_model.json")
        r = run(["check", path, "--model", model])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"")
        self.assertEqual(r.stderr.decode().splitlines()[-1],
                         "hpfreeze: error: %s: /parameters/other.w: trainable parameter 'other.w' "
                         "is not covered by any param_plan entry of %s [HPF305]" % (model, path))
        self.assertEqual(len(r.stderr.decode().splitlines()), 6)

    def test_json_lines_only_on_stdout(self):
        path = os.path.join(CHECK, "errors_meta.json")
        r = run(["check", "--json", path])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, b"")
        self.assertTrue(r.stdout.endswith(b"\n"))
        found = findings_json(r.stdout)
        self.assertEqual(found[-1], {"severity": "error", "code": "HPF101", "file": path,
                                     "pointer": "/signature",
                                     "message": "expected a string, got an integer"})
        self.assertEqual(len(found), 5)

    def test_syntax_error_is_rejected_content(self):
        path = os.path.join(CHECK, "syntax_error.json")
        r = run(["check", path])
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertEqual(r.stderr.decode(), "hpfreeze: error: %s:3:1: expected a value\n" % path)
        r = run(["check", "--json", path])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(findings_json(r.stdout), [
            {"severity": "error", "file": path, "pointer": "", "message": "expected a value",
             "line": 3, "column": 1}])

    def test_unreadable_inputs_exit_two(self):
        missing = os.path.join(CHECK, "no_such_file.json")
        for args in (["check", missing], ["check", "--json", missing],
                     ["check", os.path.join(CHECK, "clean_meta.json"), "--model", missing],
                     ["check", CHECK]):
            r = run(args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stdout, b"", args)
        self.assertEqual(run(["check", missing]).stderr.decode(),
                         "hpfreeze: error: %s: cannot open: No such file or directory\n" % missing)

    def test_usage_errors_exit_two(self):
        self.assertEqual(run(["check"]).returncode, 2)
        r = run(["check", "-", "--model", "-"], stdin=b"{}")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: at most one of META and --model may be '-' (stdin)\n")

    def test_meta_from_stdin(self):
        with open(os.path.join(CHECK, "warnings_meta.json"), "rb") as f:
            data = f.read()
        r = run(["check", "--json", "-"], stdin=data)
        self.assertEqual(r.returncode, 0)
        found = findings_json(r.stdout)
        self.assertEqual(len(found), 3)
        self.assertTrue(all(f["file"] == "<stdin>" for f in found))

    def test_model_from_stdin(self):
        with open(os.path.join(CHECK, "clean_model.json"), "rb") as f:
            data = f.read()
        r = run(["check", os.path.join(CHECK, "clean_meta.json"), "--model", "-"], stdin=data)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))


if __name__ == "__main__":
    unittest.main()
