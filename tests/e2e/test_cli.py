"""The command line itself: mistakes named with their exact text, `help`, global flags on
either side of the command, what every --help shows, --help/--version on a full stdout, and
out of memory under a low address-space limit (exit 2 with one error line, every command)."""
import os
import re
import resource
import subprocess
import unittest

from hpf import BINARY, SOURCE, TempDirTest, case, env, run

COMMANDS = ["freeze", "parse", "expand", "check", "diff", "thaw", "report"]


def version():
    """The project version, from the top-level CMakeLists.txt."""
    with open(os.path.join(SOURCE, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(hpfreeze VERSION ([0-9.]+)", f.read()).group(1)


def usage_error(message):
    return b"hpfreeze: error: " + message.encode() + b"\n"


class Mistakes(unittest.TestCase):
    def assertUsageError(self, args, message):
        r = run(*args)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (2, b"", usage_error(message)), args)

    def test_unknown_command_suggests_the_nearest(self):
        self.assertUsageError(["frezee"], "unknown command 'frezee'; did you mean 'freeze'?")
        self.assertUsageError(["chek", "meta.json"],
                              "unknown command 'chek'; did you mean 'check'?")
        self.assertUsageError(["-v", "thwa"], "unknown command 'thwa'; did you mean 'thaw'?")

    def test_unknown_command_without_a_near_one(self):
        self.assertUsageError(["xyzzy"], "unknown command 'xyzzy' (see 'hpfreeze --help')")

    def test_unknown_option_is_named_not_reported_as_a_missing_one(self):
        self.assertUsageError(["freeze", "--plann", "p.json", "--model", "m.json"],
                              "unknown option '--plann'; did you mean '--plan'?")
        self.assertUsageError(["freeze", "--plann=p.json"],
                              "unknown option '--plann'; did you mean '--plan'?")
        self.assertUsageError(["report", "m.json", "--model", "x", "--mehs", "tp=2"],
                              "unknown option '--mehs'; did you mean '--mesh'?")
        self.assertUsageError(["--verbos", "parse", "R"],
                              "unknown option '--verbos'; did you mean '--verbose'?")

    def test_unknown_option_without_a_near_one(self):
        self.assertUsageError(["freeze", "--zzzzzz"],
                              "unknown option '--zzzzzz' (see 'hpfreeze freeze --help')")

    def test_a_command_option_before_the_command_word(self):
        # hpfreeze's own flags take no value: the option is named, not its value as a command.
        self.assertUsageError(["--plan", "p.json", "freeze", "--model", "m.json"],
                              "'--plan' is an option of 'freeze': put it after the command "
                              "word (hpfreeze freeze --plan ...)")
        self.assertUsageError(["-v", "--mesh=tp=2", "report", "meta.json"],
                              "'--mesh' is an option of 'report': put it after the command "
                              "word (hpfreeze report --mesh ...)")
        # Not an option of the command given, or no command at all: an unknown option.
        self.assertUsageError(["--mesh", "tp=2", "freeze"],
                              "unknown option '--mesh' (see 'hpfreeze --help')")
        self.assertUsageError(["--plan", "p.json"],
                              "unknown option '--plan' (see 'hpfreeze --help')")
        # Own flags, also combined, still work before the command word.
        r = run("-vq", "parse", "R")
        self.assertEqual((r.returncode, r.stdout), (0, b"R\n"))

    def test_unexpected_argument(self):
        self.assertUsageError(["expand", "a.json", "b.json"],
                              "unexpected argument 'b.json' (see 'hpfreeze expand --help')")

    def test_no_command(self):
        self.assertUsageError([], "no command given (see 'hpfreeze --help')")
        self.assertUsageError(["-v"], "no command given (see 'hpfreeze --help')")

    def test_missing_required_option_still_says_so(self):
        r = run("freeze", "--model", "m.json")
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertEqual(r.stderr,
                         usage_error("--plan is required (see 'hpfreeze freeze --help')"))


class Help(unittest.TestCase):
    def help_text(self, *args):
        r = run(*args)
        self.assertEqual((r.returncode, r.stderr), (0, b""), args)
        return r.stdout.decode()

    def test_help_command_and_flags_agree(self):
        main = self.help_text("--help")
        self.assertEqual(self.help_text("-h"), main)
        self.assertEqual(self.help_text("help"), main)
        for c in COMMANDS:
            self.assertEqual(self.help_text("help", c), self.help_text(c, "--help"), c)
            self.assertEqual(self.help_text(c, "-h"), self.help_text(c, "--help"), c)

    def test_help_of_an_unknown_command(self):
        r = run("help", "frezee")
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (2, b"", usage_error("unknown command 'frezee'; did you mean 'freeze'?")))
        r = run("help", "freeze", "parse")
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (2, b"", usage_error("help takes at most one command "
                                              "(see 'hpfreeze --help')")))

    def test_main_help_lists_the_commands_in_order(self):
        text = self.help_text("--help")
        section = text.split("\nSubcommands:\n", 1)[1]
        self.assertEqual(re.findall(r"^  ([a-z]+)  ", section, re.M), COMMANDS)

    def test_every_help_lists_the_global_flags(self):
        for args in [[]] + [[c] for c in COMMANDS]:
            text = self.help_text(*args, "--help")
            for flag in ("  -v,--verbose ", "  -q,--quiet ", "  --version ", "  -h,--help "):
                self.assertIn(flag, text, args)

    def test_every_help_ends_with_exit_codes_and_an_example(self):
        for args in [[]] + [[c] for c in COMMANDS]:
            text = self.help_text(*args, "--help")
            m = re.search(r"\nExit status:\n  0  \S.*\n  1  \S.*\n  2  \S.*\n\nExamples:\n"
                          r"  (hpfreeze .*)\n$", text)
            self.assertIsNotNone(m, f"{args}: {text[-400:]}")
            if args:
                self.assertTrue(m.group(1).startswith(f"hpfreeze {args[0]} "), m.group(1))

    def test_placeholders_say_what_they_are(self):
        texts = {c: self.help_text(c, "--help") for c in COMMANDS}
        for c, text in texts.items():
            self.assertNotRegex(text, r"\bTEXT\b", c)
        for flag in ("--plan", "--model", "--base", "-o,--output", "--depfile"):
            self.assertRegex(texts["freeze"], rf"\n  {flag} FILE\b")
        self.assertRegex(texts["report"], r"\n  --mesh AXIS=N\[,AXIS=N\.\.\.\] ")
        self.assertRegex(texts["report"], r"\n  --top N ")
        self.assertRegex(texts["diff"], r"\n  --ignore FIELD ")
        self.assertRegex(texts["thaw"], r"\n  --model-out FILE ")
        self.assertIn("Usage: hpfreeze thaw [OPTIONS] META\n", texts["thaw"])
        self.assertIn("Usage: hpfreeze diff [OPTIONS] OLD NEW\n", texts["diff"])


class GlobalFlagsAfterTheCommand(unittest.TestCase):
    def test_version_anywhere(self):
        expected = f"hpfreeze {version()}\n".encode()
        for args in (["--version"], ["parse", "--version"], ["freeze", "--version"],
                     ["report", "--version"]):
            r = run(*args)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, expected, b""), args)

    def test_quiet_after_the_command(self):
        loud = run("parse", "S(x)")
        self.assertEqual(loud.returncode, 1)
        self.assertTrue(loud.stderr.startswith(b"hpfreeze: error: argument 1: "), loud.stderr)
        # -qq: not even errors (the exit status still tells).
        for args in (["parse", "S(x)", "-qq"], ["parse", "-qq", "S(x)"], ["-qq", "parse", "S(x)"]):
            r = run(*args)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (1, b"", b""), args)

    def test_quiet_counts_add_up_across_the_command(self):
        # -q shows errors, -qq nothing: one -q on each side is -qq.
        r = run("-q", "parse", "S(x)", "-q")
        self.assertEqual((r.returncode, r.stderr), (1, b""))
        r = run("-q", "freeze", "--plan", case("corners", "plan.json"), "--model",
                case("corners", "missing.json"))
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith(b"hpfreeze: error: "), r.stderr)
        r = run("-q", "freeze", "-q", "--plan", case("corners", "plan.json"), "--model",
                case("corners", "missing.json"))
        self.assertEqual((r.returncode, r.stderr), (2, b""))

    def test_verbose_after_the_command(self):
        r = run("parse", "-v", "R", "-vv")
        self.assertEqual((r.returncode, r.stdout), (0, b"R\n"))


class FullStdout(unittest.TestCase):
    """--help and --version are output like any other: a failed write is exit status 2."""

    def test_help_and_version_to_dev_full(self):
        for args in (["--help"], ["--version"], ["help"], ["help", "freeze"], ["freeze", "--help"],
                     ["report", "--version"]):
            with open("/dev/full", "wb") as full:
                r = subprocess.run([BINARY, *args], stdout=full, stderr=subprocess.PIPE,
                                   env=env(), timeout=60)
            lines = r.stderr.decode().splitlines()
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(lines), 1, (args, lines))
            self.assertRegex(lines[0], r"^hpfreeze: error: .*stdout.*No space left on device",
                             args)


def limit_address_space(kib):
    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))
    return preexec


class OutOfMemory(TempDirTest):
    """Under `ulimit -v` an input too big for the memory left is one "out of memory" error,
    exit 2, whichever command reads it; never an abort (exit 134) nor "rejected" (exit 1)."""

    BIG = 64 << 20  # bytes of input; the headroom below is a quarter of it

    @classmethod
    def setUpClass(cls):
        # The smallest limit the binary starts under at all (it depends on the libraries).
        cls.base = None
        for kib in range(4096, 512 * 1024, 2048):
            r = subprocess.run([BINARY, "--version"], capture_output=True, env=env(),
                               preexec_fn=limit_address_space(kib), timeout=60)
            if r.returncode == 0:
                cls.base = kib
                break
        if cls.base is None:
            raise unittest.SkipTest("hpfreeze does not start under any tested limit")

    def setUp(self):
        super().setUp()
        self.big = self.path("big.json")
        with open(self.big, "wb") as f:
            # Valid JSON all the way: what runs out is memory, not the parser's patience.
            f.write(b'{"param_plan": {"x": ' + b" " * self.BIG + b"{}}}")
        self.small = case("corners", "model.json")

    def run_limited(self, args, stdin=None):
        limit = self.base + (self.BIG >> 10) // 4
        return subprocess.run([BINARY, *args], stdin=stdin, capture_output=True, env=env(),
                              preexec_fn=limit_address_space(limit), timeout=120)

    def assertOutOfMemory(self, r, what):
        lines = r.stderr.decode(errors="replace").splitlines()
        self.assertEqual(r.returncode, 2, (what, lines))
        self.assertEqual(len(lines), 1, (what, lines))
        self.assertTrue(lines[0].startswith("hpfreeze: error: "), (what, lines))
        self.assertIn("out of memory", lines[0].lower(), what)
        self.assertEqual(r.stdout, b"", what)

    def test_every_command(self):
        runs = {
            "freeze": ["freeze", "--plan", self.big, "--model", self.small,
                       "-o", self.path("out.json")],
            "expand": ["expand", self.big],
            "check": ["check", self.big],
            "diff": ["diff", self.big, self.big],
            "thaw": ["thaw", self.big, "-o", self.path("plan.json")],
            "report": ["report", self.big, "--model", self.small],
        }
        self.assertEqual(sorted([*runs, "parse"]), sorted(COMMANDS))
        for name, args in runs.items():
            self.assertOutOfMemory(self.run_limited(args), name)
            self.assertFalse(os.path.exists(self.path("out.json")), name)
            self.assertFalse(os.path.exists(self.path("plan.json")), name)
        # parse streams stdin with a bounded line (docs/cli.md), so the same limit that stops
        # every other command leaves it enough memory: a line longer than the memory left is
        # one "line longer than" error, not an out-of-memory, and nothing runs out.
        line = self.path("line.txt")
        with open(line, "wb") as f:
            f.write(b"P(" + b"s" * self.BIG + b")\nS(0)\n")
        with open(line, "rb") as f:
            r = self.run_limited(["parse"], stdin=f)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, b"S(0)\n")
        self.assertEqual(r.stderr.decode().splitlines(),
                         ["hpfreeze: error: <stdin>:1: line longer than 1048576 bytes"])
        # No output and no temporary file was left behind.
        self.assertEqual(sorted(os.listdir(self.dir)), ["big.json", "line.txt"])


if __name__ == "__main__":
    unittest.main()
