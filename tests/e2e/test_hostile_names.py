"""Hostile names on stdout: no name from an input can break a line of any command's output
or start a line that a CI runner reads as a workflow command (docs/reliability.md, "Names
on stdout").

Every C0 control, DEL, every C1 control (NEL among them), U+2028, U+2029 and a leading
"::" (also after white space the runner trims) is put into every name slot of every
command: module, parameter and boundary names, tensor names of a safetensors checkpoint,
dtypes, mesh axes, reduce ops and meta keys. Each run is compared with the same run on a
harmless name of the same shape: the same number of lines, and the hostile name shown as
Python's json.dumps spells it (the independent oracle of the quoted form) wherever the
harmless one is shown as it is. `expand`, whose lines are names, refuses such a name.
"""
import json
import os
import re
import unittest

from checkpoints import write_safetensors
from hpf import TempDirTest, run

HOSTILE = ([chr(c) for c in range(0x20)] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)] +
           ["\u2028", "\u2029"])
# Names that would start a line with "::", as they are and after blanks the runner trims.
COMMAND_STARTS = ["::", " ::", "\u00a0::", "\u2003::", "\u3000 ::"]
# What no stdout may hold: C0 but LF, DEL, C1, U+2028, U+2029.
FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def shown(name):
    """A name as a text output must show it: as it is, or quoted as Python quotes it."""
    hostile = (any(c in name for c in HOSTILE) or name.lstrip(" \u00a0\u2003\u3000").startswith("::")
               or name.startswith('"'))
    return json.dumps(name) if hostile else name


def reduce_placement(n):
    """P(op) with `n` in the op where a meta allows it: ASCII without LF."""
    return "P(r%sr)" % n if n < "\x80" and n != "\n" else "P(sum)"


def text_of(p):
    return p.stdout.decode("utf-8")


class HostileNames(TempDirTest):
    def write_json(self, name, doc):
        path = self.path(name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    def assert_lines(self, out, reference, what):
        """`out` (hostile) has the line structure of `reference` (harmless) and nothing that
        breaks or starts a line."""
        self.assertIsNone(FORBIDDEN.search(out), "%s: %r" % (what, out))
        for line in out.split("\n"):
            self.assertFalse(line.lstrip(" \u00a0\u2003\u3000").startswith("::"),
                             "%s: %r" % (what, line))
        self.assertEqual(len(out.split("\n")), len(reference.split("\n")), what)
        self.assertEqual(out.splitlines(), out.split("\n")[:-1] if out.endswith("\n")
                         else out.split("\n"), what)

    # ---- report -------------------------------------------------------------------------
    def report_inputs(self, n, tag):
        """A meta and a model whose every name slot holds `n`: the axis, a module (a
        boundary), a planned parameter and a reduce op, an uncovered parameter, a dtype, and
        a dim the axis does not divide (the verdict and the answer line)."""
        axis, module = "a" + n + "x", "m" + n + "m"
        meta = {"codegen_version": "0.1.1", "mesh_dim_names": [axis],
                "parallel_dims": {axis + "_size": 3},
                "param_plan": {module: {"params": {"w" + n: {axis: "S(0)"},
                                                   "v": {axis: reduce_placement(n)}}}}}
        model = {"format": "hpfreeze.model/v1", "modules": {"": "Net", module: "L"},
                 "parameters": {module + ".w" + n: {"shape": [4, 4], "dtype": "bfloat16"},
                                module + ".v": {"shape": [3], "dtype": "bfloat16"},
                                "u" + n: {"shape": [3], "dtype": "float32"},
                                # an unknown dtype is an error: its parameter is not listed
                                "x" + n: {"shape": [3], "dtype": "d" + n}}}
        return (self.write_json("meta%s.json" % tag, meta),
                self.write_json("model%s.json" % tag, model), axis, module)

    def report(self, n, tag):
        meta, model, axis, module = self.report_inputs(n, tag)
        p = run("report", meta, "--model", model, "--allow-uncovered")
        self.assertEqual(p.returncode, 1, p.stderr)  # an unknown dtype, a dim that does not divide
        return text_of(p), axis, module

    def test_report_text(self):
        reference, _, _ = self.report("_", "ref")
        for n in HOSTILE + COMMAND_STARTS:
            with self.subTest(name=n):
                out, axis, module = self.report(n, "")
                self.assert_lines(out, reference, "report %r" % n)
                fqn = module + ".w" + n
                for expected in (
                        "mesh: %s=3 (from parallel_dims)\n" % shown(axis),
                        "placement order: %s\n" % shown(axis),
                        "the mesh does not divide: %s dim 0 (size 4) by %s=3\n"
                        % (shown(fqn), shown(axis)),
                        "\n%s=3 " % shown(axis),
                        "does not divide: %s dim 0 by %s=3\n" % (shown(fqn), shown(axis)),
                        "  %s\n" % shown(module),
                        "  %s=S(0)  " % shown(axis),
                        "  %s=%s  " % (shown(axis), shown(reduce_placement(n))),
                        "  %s\n" % shown(fqn),
                        "  float32  [3]    %s\n" % shown("u" + n)):
                    self.assertIn(expected, out)

    def test_report_of_a_checkpoint(self):
        # Tensor names from a safetensors header: the --model of a real checkpoint.
        def checkpoint_report(n, tag):
            meta = self.write_json("meta%s.json" % tag, {
                "codegen_version": "0.1.1", "mesh_dim_names": ["tp"],
                "parallel_dims": {"tp_size": 2},
                "param_plan": {"": {"params": {"w" + n: {"tp": "S(0)"}}}}})
            model = write_safetensors(self.path("model%s.safetensors" % tag),
                                      {"w" + n: ("BF16", [4, 4]), "x" + n: ("F32", [2])})
            p = run("report", meta, "--model", model, "--allow-uncovered")
            self.assertEqual(p.returncode, 0, p.stderr)
            return text_of(p)

        reference = checkpoint_report("_", "ref")
        for n in HOSTILE + COMMAND_STARTS:
            with self.subTest(name=n):
                out = checkpoint_report(n, "")
                self.assert_lines(out, reference, "report of a checkpoint %r" % n)
                self.assertIn("  tp=S(0)     %s\n" % shown("w" + n), out)
                self.assertIn("  %s\n" % shown("x" + n), out)

    def test_report_json(self):
        for n in HOSTILE + COMMAND_STARTS:
            with self.subTest(name=n):
                meta, model, _, module = self.report_inputs(n, "")
                p = run("report", meta, "--model", model, "--allow-uncovered", "--json")
                out = text_of(p)
                self.assertIsNone(FORBIDDEN.search(out))
                params = {p["fqn"]: p for p in json.loads(out)["params"]}
                self.assertEqual(params[module + ".w" + n]["local_shape"], [2, 4])

    # ---- diff, check, freeze, thaw -------------------------------------------------------
    def test_diff_text_and_json(self):
        def metas(n, tag):
            old = {"codegen_version": "0.1.1",
                   "boundary_classes": {"b" + n: "L"},
                   "param_plan": {"m" + n: {"params": {"w" + n: {"a" + n: "S(0)"}}}}}
            new = {"codegen_version": "0.1.1",
                   "boundary_classes": {"c" + n: "L"},
                   "param_plan": {"m" + n: {"params": {"w" + n: {"a" + n: reduce_placement(n)}}}}}
            return (self.write_json("old%s.json" % tag, old),
                    self.write_json("new%s.json" % tag, new))

        old, new = metas("_", "ref")
        reference = text_of(run("diff", old, new))
        for n in HOSTILE + COMMAND_STARTS:
            with self.subTest(name=n):
                old, new = metas(n, "")
                p = run("diff", old, new)
                self.assertEqual(p.returncode, 1, p.stderr)
                out = text_of(p)
                self.assert_lines(out, reference, "diff %r" % n)
                self.assertIn("- %s: " % shown("/boundary_classes/b" + n), out)
                self.assertIn("+ %s: " % shown("/boundary_classes/c" + n), out)
                self.assertIn("~ %s: S(0) -> %s\n" % (
                    shown("/param_plan/m%s/params/w%s/a%s" % (n, n, n)),
                    shown(reduce_placement(n))), out)
                p = run("diff", "--json", old, new)
                lines = text_of(p).split("\n")
                self.assertIsNone(FORBIDDEN.search(text_of(p)))
                self.assertEqual([json.loads(line)["op"] for line in lines[:-1]],
                                 ["remove", "add", "change"])

    def test_check_and_freeze_and_thaw(self):
        for n in HOSTILE + COMMAND_STARTS:
            with self.subTest(name=n):
                # A reduce op is ASCII without LF (it must read back from P(...)).
                placement = ({"$placement": "Partial", "reduce_op": "r" + n} if n < "\x80"
                             and n != "\n" else {"$placement": "Replicate"})
                plan = self.write_json("plan.json", {
                    "modules": {"m" + n: {"params": {"w" + n: {"a" + n: placement}}}}})
                model = self.write_json("model.json", {
                    "format": "hpfreeze.model/v1", "modules": {"": "Net", "m" + n: "L"},
                    "parameters": {"m%s.w%s" % (n, n): {"shape": [2], "dtype": "d" + n}}})
                p = run("freeze", "--plan", plan, "--model", model, "-o", "-")
                self.assertEqual(p.returncode, 0, p.stderr)
                meta_text = text_of(p)
                self.assertIsNone(FORBIDDEN.search(meta_text))
                meta = self.write_json("meta.json", json.loads(meta_text))
                for args in (["check", meta, "--model", model],
                             ["check", meta, "--model", model, "--json"],
                             ["thaw", meta, "-o", "-"]):
                    p = run(*args)
                    self.assertEqual(p.returncode, 0, (args, p.stderr))
                    out = text_of(p)
                    self.assertIsNone(FORBIDDEN.search(out), args)
                    for line in out.split("\n")[:-1]:
                        self.assertFalse(line.lstrip().startswith("::"), args)
                    if args[-1] == "--json":
                        for line in out.split("\n")[:-1]:
                            json.loads(line)

    # ---- parse and expand -----------------------------------------------------------------
    def test_parse(self):
        # A reduce op is ASCII without LF: every other C0 control and DEL reach the output.
        ops = [c for c in HOSTILE if c < "\x80" and c not in "\n"] + ["::"]
        lines = "".join("P(r%sr)\n" % c for c in ops)
        p = run("parse", stdin=lines.encode())
        self.assertEqual(p.returncode, 0, p.stderr)
        # CR ends a line read from stdin only before its LF (P(r\rr) keeps it).
        self.assertEqual(text_of(p), "".join(shown("P(r%sr)" % c) + "\n" for c in ops))
        self.assert_lines(text_of(p), "x\n" * len(ops), "parse")
        p = run("parse", "--json", stdin=lines.encode())
        self.assertEqual([json.loads(line)["reduce_op"] for line in text_of(p).split("\n")[:-1]],
                         ["r%sr" % c for c in ops])

    def test_expand_refuses_every_such_name(self):
        for n in HOSTILE + COMMAND_STARTS:
            with self.subTest(name=n):
                plan = self.write_json("plan.json", {"modules": {
                    "ok": {"params": {"w": {"tp": "S(0)"}}},
                    n + "m": {"params": {"w": {"tp": "S(0)"}}}}})
                p = run("expand", plan)
                if n in COMMAND_STARTS:
                    why = "starts with '::' as a workflow command does"
                elif n in "\u2028\u2029":
                    why = "holds a line or paragraph separator (U+2028 or U+2029)"
                else:
                    why = "holds a control character"
                escaped = "".join(c if " " <= c < "\x7f" and c not in "\\'" else
                                  {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c) or
                                  "".join("\\x%02x" % b for b in c.encode()) for c in n + "m.w")
                self.assertEqual((p.returncode, p.stdout, p.stderr.decode()),
                                 (1, b"", "hpfreeze: error: %s: sharded parameter name '%s' %s: "
                                          "expand prints one name per line\n"
                                  % (plan, escaped, why)))
        # "::" inside a name, and other non-ASCII, print as they are.
        plan = self.write_json("plan.json", {"modules": {"a::b": {"params": {"w": {"tp": "S(0)"}}},
                                                         "\u00e9": {"params": {"w": {"tp": "S(0)"}}}}})
        p = run("expand", plan)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "a::b.w\n\u00e9.w\n".encode(), b""))


if __name__ == "__main__":
    unittest.main()
