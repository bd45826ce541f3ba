"""The CI modes of docs/cli.md on failing inputs: freeze --check, --message-format
(text, github, json) for every kind of stderr line in every command, diff --quiet. The
expected lines are written here by hand from the rules (the runner's escaping: data % CR
LF, properties also : and ,)."""
import json
import os
import pty
import re
import shutil
import unittest

from hpf import BINARY, TESTDATA, TempDirTest, case, read, run

EXAMPLE = os.path.join(TESTDATA, "example")
PLAN = os.path.join(EXAMPLE, "plan.json")
MODEL = os.path.join(EXAMPLE, "model.json")
EXPECTED = os.path.join(EXAMPLE, "expected.json")
CHECK = os.path.join(TESTDATA, "check")
NEG = case("negative-dim-warning")
NEG_WARNING = ("/modules/lin/params/weight/tp: 3 placement(s) with a negative dim, first here: "
               "S(-k) reads back as an uneven shard of dim k-1; written verbatim as upstream does")


def lines(data):
    return data.decode().splitlines()


def on_terminal(args, env):
    """What hpfreeze writes with stdout and stderr on a pseudo terminal."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(BINARY, [BINARY, *args], env)
    out = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child has closed the terminal
            break
        if not data:
            break
        out += data
    os.waitpid(pid, 0)
    os.close(fd)
    return out


class FreezeCheck(TempDirTest):
    def listing(self):
        return sorted(os.listdir(self.dir))

    def check(self, out, *extra):
        return run("freeze", "--plan", PLAN, "--model", MODEL, "-o", out, "--check", *extra,
                   cwd=self.dir)

    def test_same_bytes_exit_0_and_nothing_written(self):
        shutil.copy(EXPECTED, self.path("meta.json"))
        os.utime(self.path("meta.json"), (1_000_000, 1_000_000))
        r = self.check("meta.json")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(os.stat(self.path("meta.json")).st_mtime, 1_000_000)
        self.assertEqual(self.listing(), ["meta.json"])
        # --if-changed is accepted and changes nothing.
        self.assertEqual(self.check("meta.json", "--if-changed").returncode, 0)

    def test_a_changed_placement_is_listed(self):
        text = read(EXPECTED).decode()
        text = text.replace('"tp": "S(0)"', '"tp": "R"', 1)
        with open(self.path("meta.json"), "w") as f:
            f.write(text)
        before = read(self.path("meta.json"))
        r = self.check("meta.json")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, b"")
        rewrite = (f"run without --check to rewrite it: hpfreeze freeze --plan {PLAN} --model "
                   f"{MODEL} -o meta.json")
        self.assertEqual(lines(r.stderr), [
            "hpfreeze: error: meta.json: differs from what freeze would write: 1 difference "
            "(hpfreeze diff's lines, the file being OLD)",
            "  ~ /param_plan/lm_head/params/weight/tp: R -> S(0)",
            "  " + rewrite])
        self.assertEqual(read(self.path("meta.json")), before)
        self.assertEqual(self.listing(), ["meta.json"])
        # The same difference, as diff prints it.
        d = run("diff", "meta.json", EXPECTED, cwd=self.dir)
        self.assertEqual(lines(d.stdout), ["~ /param_plan/lm_head/params/weight/tp: R -> S(0)"])

        r = self.check("meta.json", "--message-format", "github")
        self.assertEqual((r.returncode, lines(r.stderr)), (1, [
            "::error file=meta.json::differs from what freeze would write: 1 difference "
            "(hpfreeze diff's lines, the file being OLD)%0A"
            "~ /param_plan/lm_head/params/weight/tp: R -> S(0)%0A" + rewrite]))
        r = self.check("meta.json", "--message-format", "json")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(lines(r.stderr), [
            '{"severity":"error","file":"meta.json","pointer":"","message":"differs from what '
            "freeze would write: 1 difference (hpfreeze diff's lines, the file being OLD)\\n"
            '~ /param_plan/lm_head/params/weight/tp: R -> S(0)\\n' + rewrite + '"}'])

    def test_many_differences_are_cut_to_ten(self):
        text = read(EXPECTED).decode().replace('"S(0)"', '"R"')
        with open(self.path("meta.json"), "w") as f:
            f.write(text)
        r = self.check("meta.json")
        self.assertEqual(r.returncode, 1)
        got = lines(r.stderr)
        self.assertEqual(len(got), 13, got)
        m = re.match(r"^hpfreeze: error: meta.json: differs from what freeze would write: "
                     r"(\d+) differences ", got[0])
        self.assertIsNotNone(m, got[0])
        total = int(m.group(1))
        self.assertGreater(total, 10)
        self.assertEqual(got[-2], f"  ... and {total - 10} more")
        self.assertEqual(got[-1], f"  run without --check to rewrite it: hpfreeze freeze --plan "
                                  f"{PLAN} --model {MODEL} -o meta.json")
        self.assertEqual(got[1:11], ["  " + line for line in lines(
            run("diff", "meta.json", EXPECTED, cwd=self.dir).stdout)[:10]])

    def test_missing_is_exit_1_and_stays_missing(self):
        r = self.check("meta.json")
        self.assertEqual((r.returncode, lines(r.stderr)), (1, [
            "hpfreeze: error: meta.json: does not exist; freeze would write it",
            f"  run without --check to write it: hpfreeze freeze --plan {PLAN} --model {MODEL} "
            "-o meta.json"]))
        self.assertEqual(self.listing(), [])

    def test_usage_errors_exit_2(self):
        r = run("freeze", "--plan", PLAN, "--model", MODEL, "--check")
        self.assertEqual((r.returncode, r.stdout, lines(r.stderr)), (2, b"", [
            "hpfreeze: error: --check needs -o FILE: it compares FILE with what freeze would "
            "write there"]))
        r = self.check("-")
        self.assertEqual(r.returncode, 2)
        shutil.copy(EXPECTED, self.path("meta.json"))
        r = self.check("meta.json", "--depfile", "meta.d")
        self.assertEqual((r.returncode, lines(r.stderr)), (2, [
            "hpfreeze: error: meta.d: --check writes nothing: leave out --depfile"]))
        self.assertEqual(self.listing(), ["meta.json"])
        r = self.check(".")
        self.assertEqual((r.returncode, lines(r.stderr)),
                         (2, ["hpfreeze: error: .: is a directory"]))

    def test_warnings_still_show_and_strict_still_fails(self):
        out = self.path("meta.json")
        w = run("freeze", "--plan", case("negative-dim-warning", "plan.json"), "--model",
                case("negative-dim-warning", "model.json"), "-o", out)
        self.assertEqual(w.returncode, 0)
        r = run("freeze", "--plan", case("negative-dim-warning", "plan.json"), "--model",
                case("negative-dim-warning", "model.json"), "-o", out, "--check",
                "--message-format", "github")
        plan = case("negative-dim-warning", "plan.json")
        model = case("negative-dim-warning", "model.json")
        # On the line of the placement (line 7: `     "tp": {`, its '{' at byte 12), and on
        # the model's first trainable parameter the plan leaves out (line 12:
        # `  "emb.weight": {`, its '{' at byte 17).
        self.assertEqual((r.returncode, lines(r.stderr)), (0, [
            f"::warning file={plan},line=7,col=12::{NEG_WARNING}",
            f"::warning file={model},line=12,col=17::/parameters/emb.weight: 5 trainable "
            "parameters are not covered by any planned parameter of "
            f"{plan}, first here: 'emb.weight', 'blk.w', 'blk.attn.qkv' and 2 more "
            "(upstream's preflight refuses them at run time) [HPF305]"]))


class MessageFormat(TempDirTest):
    def test_text_is_the_default_and_unchanged(self):
        cases = [["freeze", "--plann", "x"], ["frezee"], ["check", os.path.join(CHECK, "syntax_error.json")],
                 ["check", os.path.join(CHECK, "warnings_meta.json")], ["-v", "check", EXPECTED]]
        for args in cases:
            plain = run(*args)
            for spelled in (["--message-format", "text"], ["--message-format=text"]):
                r = run(*spelled, *args)
                self.assertEqual((r.returncode, r.stdout, r.stderr),
                                 (plain.returncode, plain.stdout, plain.stderr), args)
        self.assertEqual(lines(run("frezee").stderr),
                         ["hpfreeze: error: unknown command 'frezee'; did you mean 'freeze'?"])

    def test_on_a_terminal_text_keeps_its_colours(self):
        # As spdlog's console sink coloured diagnostics: the level only, and only on a
        # colour terminal; usage errors never were. Other formats are never coloured.
        syntax = os.path.join(CHECK, "syntax_error.json")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm"}
        self.assertEqual(on_terminal(["check", syntax], env),
                         f"hpfreeze: \x1b[31m\x1b[1merror\x1b[m: {syntax}:3:1: expected a "
                         "value\r\n".encode())
        self.assertEqual(on_terminal(["check", os.path.join(CHECK, "warnings_meta.json")], env)
                         .count(b"hpfreeze: \x1b[33m\x1b[1mwarning\x1b[m: "), 2)
        self.assertEqual(on_terminal(["-v", "check", EXPECTED], env),
                         b"hpfreeze: \x1b[36mdebug\x1b[m: check: 0 errors, 0 warnings, 0 notes\r\n")
        self.assertEqual(on_terminal(["frezee"], env),
                         b"hpfreeze: error: unknown command 'frezee'; did you mean 'freeze'?\r\n")
        self.assertEqual(on_terminal(["--message-format", "github", "check", syntax], env),
                         f"::error file={syntax},line=3,col=1::expected a value\r\n".encode())
        self.assertEqual(on_terminal(["check", syntax], dict(env, NO_COLOR="1")),
                         f"hpfreeze: error: {syntax}:3:1: expected a value\r\n".encode())

    def test_usage_errors(self):
        expect = {
            "github": ["::error::unknown option '--plann'; did you mean '--plan'?"],
            "json": ['{"severity":"error","file":"","pointer":"","message":"unknown option '
                     "'--plann'; did you mean '--plan'?\"}"],
        }
        for fmt, want in expect.items():
            for args in (["--message-format", fmt, "freeze", "--plann", "x"],
                         ["freeze", "--plann", "x", "--message-format", fmt],
                         ["freeze", "--message-format=" + fmt, "--plann", "x"]):
                r = run(*args)
                self.assertEqual((r.returncode, r.stdout, lines(r.stderr)), (2, b"", want), args)
        # CLI11's own: a missing required option; and the command word and main's own.
        r = run("--message-format", "github", "freeze", "--plan", PLAN)
        self.assertEqual((r.returncode, lines(r.stderr)), (2, [
            "::error::--model is required (see 'hpfreeze freeze --help')"]))
        r = run("--message-format", "json", "xyzzy")
        self.assertEqual(lines(r.stderr), [
            '{"severity":"error","file":"","pointer":"","message":"unknown command '
            "'xyzzy' (see 'hpfreeze --help')\"}"])
        r = run("--message-format", "github", "diff", "-", "-")
        self.assertEqual(lines(r.stderr), ["::error::at most one of the two metas may be '-' (stdin)"])
        # A usage error printed under -qq too, in the format asked for.
        r = run("-qq", "--message-format", "github", "freeze", "--plann", "x")
        self.assertEqual(lines(r.stderr), expect["github"])

    def test_a_bad_format_is_a_usage_error_in_text(self):
        for args, want in [
                (["--message-format", "xml", "check", "m.json"],
                 "hpfreeze: error: --message-format: unknown message format 'xml' (text, github "
                 "or json)"),
                (["check", "m.json", "--message-format=GitHub"],
                 "hpfreeze: error: --message-format: unknown message format 'GitHub' (text, "
                 "github or json)"),
                (["check", "m.json", "--message-format"],
                 "hpfreeze: error: --message-format needs a value: text, github or json")]:
            r = run(*args)
            self.assertEqual((r.returncode, r.stdout, lines(r.stderr)), (2, b"", [want]), args)

    def test_the_environment_variable(self):
        r = run("frezee", extra_env={"HPFREEZE_MESSAGE_FORMAT": "github"})
        self.assertEqual(lines(r.stderr), ["::error::unknown command 'frezee'; did you mean 'freeze'?"])
        # The option wins; empty is unset.
        r = run("--message-format", "text", "frezee", extra_env={"HPFREEZE_MESSAGE_FORMAT": "json"})
        self.assertEqual(lines(r.stderr),
                         ["hpfreeze: error: unknown command 'frezee'; did you mean 'freeze'?"])
        r = run("frezee", extra_env={"HPFREEZE_MESSAGE_FORMAT": ""})
        self.assertEqual(lines(r.stderr),
                         ["hpfreeze: error: unknown command 'frezee'; did you mean 'freeze'?"])
        r = run("check", EXPECTED, extra_env={"HPFREEZE_MESSAGE_FORMAT": "yaml"})
        self.assertEqual((r.returncode, lines(r.stderr)), (2, [
            "hpfreeze: error: HPFREEZE_MESSAGE_FORMAT: unknown message format 'yaml' (text, "
            "github or json)"]))

    def test_findings_with_position_warnings_and_notes(self):
        syntax = os.path.join(CHECK, "syntax_error.json")
        r = run("check", syntax, "--message-format", "github")
        self.assertEqual((r.returncode, lines(r.stderr)), (1, [
            f"::error file={syntax},line=3,col=1::expected a value"]))
        r = run("--message-format", "json", "check", syntax)
        self.assertEqual(lines(r.stderr), [json.dumps(
            {"severity": "error", "file": syntax, "pointer": "", "message": "expected a value",
             "line": 3, "column": 1}, separators=(",", ":"))])
        # The same object, key for key, as check --json writes on stdout.
        j = run("check", syntax, "--json")
        self.assertEqual(j.stdout, r.stderr)

        warnings = os.path.join(CHECK, "warnings_meta.json")
        r = run("--message-format", "github", "check", warnings)
        got = lines(r.stderr)
        self.assertEqual(r.returncode, 0)
        self.assertEqual([g.split(" ", 1)[0] for g in got], ["::notice", "::warning", "::warning"])
        # At the line and byte column of the value (line 6: `      "out_dst": {"output":
        # {"cp": "R", "tp": "S(-1)"}},`, the "S(-1)" at byte 47).
        self.assertEqual(got[1], f"::warning file={warnings},line=6,col=47::/param_plan/head/"
                                 "out_dst/output/tp: ambiguous negative dim: 'S(-1)' reads back "
                                 "as an uneven shard of dim 0, not as dim -1 counted from the end "
                                 "(2 negative-dim placements of 'output' on boundary 'head') "
                                 "[HPF203]")
        r = run("--message-format", "json", "check", warnings)
        self.assertEqual(r.stderr, run("check", warnings, "--json").stdout)

    def test_annotations_land_on_the_line_of_the_value(self):
        # A plan and a meta as people write them; every line and column counted by hand.
        plan = self.path("plan.json")
        with open(plan, "w") as f:
            f.write('{\n  "format": "hpfreeze.plan/v1",\n  "modules": {\n    "lin": {\n'
                    '      "params": {\n        "weight": {"tp": {"$placement": "Replicat"}}\n'
                    '      }\n    }\n  }\n}\n')
        model = self.path("model.json")
        with open(model, "w") as f:
            json.dump({"modules": {"": "Net", "lin": "Linear"},
                       "parameters": {"lin.weight": {"shape": [8, 4]}}}, f)
        message = ("/modules/lin/params/weight/tp: unknown placement type 'Replicat'; did you "
                   "mean 'Replicate'? (expected Shard, StridedShard, Replicate or Partial)")
        r = run("freeze", "--plan", "plan.json", "--model", "model.json", "-o", "m.json",
                "--message-format", "github", cwd=self.dir)
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (1, f"::error file=plan.json,line=6,col=26::{message}\n"))
        # Text keeps its line; stdin has no file to read again, nor to name.
        r = run("freeze", "--plan", "plan.json", "--model", "model.json", "-o", "m.json",
                cwd=self.dir)
        self.assertEqual(r.stderr.decode(), f"hpfreeze: error: plan.json: {message}\n")
        r = run("freeze", "--plan", "-", "--model", "model.json", "-o", "m.json",
                "--message-format", "github", stdin=read(plan), cwd=self.dir)
        self.assertEqual(r.stderr.decode(), f"::error::<stdin>: {message}\n")
        # Findings of check in the meta and in the model, on their lines.
        meta = self.path("meta.json")
        with open(meta, "w") as f:
            f.write('{\n  "param_plan": {\n    "lin": {"params": {"weight": {"tp": "S(2)"}}},'
                    '\n    "gone": {"params": {"b": {"tp": "R"}}}\n  }\n}\n')
        r = run("--message-format", "github", "check", "meta.json", "--model", "model.json",
                cwd=self.dir)
        # A pointer to what the file lacks (/frozen_sharded_params) has no line.
        self.assertEqual((r.returncode, lines(r.stderr)), (1, [
            "::error file=meta.json::/frozen_sharded_params: missing 'lin.weight', which "
            "param_plan shards (/param_plan/lin/params/weight) [HPF206]",
            "::error file=meta.json,line=4,col=13::/param_plan/gone: boundary module 'gone' is "
            "not in the model tree (model.json) [HPF301]",
            "::error file=meta.json,line=4,col=30::/param_plan/gone/params/b: parameter 'gone.b' "
            "is not in the model (model.json) [HPF303]",
            "::error file=meta.json,line=3,col=41::/param_plan/lin/params/weight/tp: 'S(2)' "
            "shards dim 2, but parameter 'lin.weight' has rank 2 (shape [8, 4] in model.json) "
            "[HPF304]"]))

    def test_parse_annotations_name_no_file(self):
        r = run("--message-format", "github", "parse", "R", "S(x)")
        self.assertEqual((r.returncode, r.stdout, r.stderr.decode()), (1, b"R\n", (
            "::error::argument 2: invalid placement 'S(x)': dim 'x' is not an integer\n")))
        r = run("--message-format", "github", "parse", stdin=b"R\nS(y)\n")
        self.assertEqual(r.stderr.decode(),
                         "::error::<stdin>:2: invalid placement 'S(y)': dim 'y' is not an integer\n")
        # Text and json as before: the argument's name starts the message.
        r = run("parse", "R", "S(x)")
        self.assertEqual(r.stderr.decode(), "hpfreeze: error: argument 2: invalid placement "
                                            "'S(x)': dim 'x' is not an integer\n")
        r = run("--message-format", "json", "parse", "S(x)")
        self.assertEqual(json.loads(r.stderr), {
            "severity": "error", "file": "", "pointer": "",
            "message": "argument 1: invalid placement 'S(x)': dim 'x' is not an integer"})

    def test_verbose_lines(self):
        r = run("-v", "--message-format", "github", "check", EXPECTED)
        self.assertEqual((r.returncode, lines(r.stderr)),
                         (0, ["::debug::check: 0 errors, 0 warnings, 0 notes"]))
        r = run("check", EXPECTED, "-v", "--message-format", "json")
        self.assertEqual(lines(r.stderr), [
            '{"severity":"info","file":"","pointer":"","message":"check: 0 errors, 0 warnings, '
            '0 notes"}'])
        out = self.path("m.json")
        r = run("-vv", "--message-format", "json", "freeze", "--plan", PLAN, "--model", MODEL,
                "-o", out)
        objs = [json.loads(line) for line in lines(r.stderr)]
        self.assertEqual([o["severity"] for o in objs], ["info"] * 8)
        self.assertEqual([list(o) for o in objs], [["severity", "file", "pointer", "message"]] * 8)
        self.assertEqual([o["message"].split(":")[0] for o in objs],
                         [PLAN, MODEL, "read", "parse", "decode", "freeze", "encode", "write"])

    def test_stdout_stays_data(self):
        for fmt in ("github", "json"):
            r = run("--message-format", fmt, "freeze", "--plan", PLAN, "--model", MODEL)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, read(EXPECTED), b""))

    def test_escaping_in_file_names(self):
        name = "a:b,c%d.json"
        shutil.copy(os.path.join(CHECK, "syntax_error.json"), self.path(name))
        r = run("--message-format", "github", "check", name, cwd=self.dir)
        self.assertEqual((r.returncode, lines(r.stderr)), (1, [
            "::error file=a%3Ab%2Cc%25d.json,line=3,col=1::expected a value"]))
        # A line feed in the name: %0A in the property; text escapes it as \n.
        name = "x\ny.json"
        r = run("--message-format", "github", "check", name, cwd=self.dir)
        self.assertEqual((r.returncode, lines(r.stderr)), (2, [
            "::error file=x%0Ay.json::cannot open: No such file or directory"]))
        r = run("check", name, cwd=self.dir)
        self.assertEqual(lines(r.stderr),
                         ["hpfreeze: error: x\\ny.json: cannot open: No such file or directory"])
        r = run("--message-format", "json", "check", name, cwd=self.dir)
        self.assertEqual(lines(r.stderr), [
            '{"severity":"error","file":"x\\ny.json","pointer":"","message":"cannot open: No '
            'such file or directory"}'])
        # A % in the message (here inside a placement) is %25 in github's data.
        r = run("--message-format", "github", "parse", "S(%)")
        self.assertEqual(r.returncode, 1)
        self.assertIn("%25", r.stderr.decode())
        self.assertNotIn("%)", r.stderr.decode())

    def test_every_command(self):
        meta = os.path.join(CHECK, "errors_meta.json")
        for args in (["parse", "S(x)"], ["expand", os.path.join(CHECK, "syntax_error.json")],
                     ["check", meta], ["diff", meta, "nope.json"], ["thaw", "nope.json"],
                     ["report", "nope.json", "--model", MODEL],
                     ["freeze", "--plan", "nope.json", "--model", MODEL]):
            text = run(*args)
            self.assertNotEqual(text.returncode, 0, args)
            self.assertTrue(text.stderr.startswith(b"hpfreeze: error: "), args)
            for fmt in ("github", "json"):
                r = run("--message-format", fmt, *args)
                self.assertEqual(r.returncode, text.returncode, args)
                got = lines(r.stderr)
                self.assertEqual(len(got), len(lines(text.stderr)), (args, got))
                for line in got:
                    if fmt == "github":
                        self.assertRegex(line, r"^::(error|warning|notice|debug)( [^:]*)?::", args)
                    else:
                        self.assertIn(json.loads(line)["severity"],
                                      ("error", "warning", "note", "info"))


class DiffQuiet(TempDirTest):
    def test_exit_status_only(self):
        changed = self.path("changed.json")
        with open(changed, "w") as f:
            f.write(read(EXPECTED).decode().replace('"S(0)"', '"R"', 1))
        for args in (["diff", "--quiet"], ["diff", "-q"], ["-q", "diff"], ["diff", "--json", "-q"]):
            r = run(*args, EXPECTED, changed)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (1, b"", b""), args)
            r = run(*args, EXPECTED, EXPECTED)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""), args)
        self.assertNotEqual(run("diff", EXPECTED, changed).stdout, b"")
        # Trouble is still exit 2 with its error line (errors only, as -q says); -qq none.
        r = run("diff", "--quiet", EXPECTED, "nope.json", cwd=self.dir)
        self.assertEqual((r.returncode, r.stdout, lines(r.stderr)),
                         (2, b"", ["hpfreeze: error: nope.json: cannot open: No such file or directory"]))
        r = run("diff", "-qq", EXPECTED, "nope.json", cwd=self.dir)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (2, b"", b""))


if __name__ == "__main__":
    unittest.main()
