"""`cmake --install` layout: binary, man pages, bash completion and the Python exporter
where a packager expects them; the man pages render and the completion completes."""
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from hpf import BINARY, SOURCE


def build_dir():
    """The build tree holding BINARY (the directory with CMakeCache.txt above it)."""
    d = os.path.dirname(os.path.abspath(BINARY))
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "CMakeCache.txt")):
            return d
        d = os.path.dirname(d)
    raise RuntimeError(f"no CMakeCache.txt above {BINARY}")


def subcommands(binary):
    """Subcommand names from `hpfreeze --help` (the CLI11 'Subcommands:' section)."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    section = text.split("\nSubcommands:\n", 1)[1]
    return re.findall(r"^  ([a-z][a-z0-9_-]*)  ", section, re.M)


def render(page):
    """The man page as plain text, through man -l or groff; None when neither exists."""
    env = dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")
    if shutil.which("man"):
        r = subprocess.run(["man", "-l", page], capture_output=True, text=True, env=env)
    elif shutil.which("groff"):
        r = subprocess.run(["groff", "-man", "-Tutf8", page], capture_output=True, text=True,
                           env=env)
    else:
        return None
    if r.returncode != 0:
        raise AssertionError(f"rendering {page} failed: {r.stderr}")
    return re.sub(r".\x08", "", r.stdout)  # drop overstrike bold/underline


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.prefix = os.path.join(cls.tmp.name, "prefix")
        cls.result = subprocess.run(
            ["cmake", "--install", build_dir(), "--prefix", cls.prefix],
            capture_output=True, text=True, timeout=120)
        cls.commands = subcommands(BINARY)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.prefix, *parts)

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)

    def test_layout(self):
        self.assertTrue(os.access(self.path("bin", "hpfreeze"), os.X_OK))
        expected_pages = ["hpfreeze.1"] + [f"hpfreeze-{c}.1" for c in self.commands]
        self.assertEqual(sorted(os.listdir(self.path("share", "man", "man1"))),
                         sorted(expected_pages))
        self.assertTrue(os.path.isfile(
            self.path("share", "bash-completion", "completions", "hpfreeze")))
        self.assertTrue(filecmp.cmp(self.path("share", "hpfreeze", "hpfreeze_export.py"),
                                    os.path.join(SOURCE, "python", "hpfreeze_export.py"),
                                    shallow=False))

    def test_installed_binary_runs(self):
        r = subprocess.run([self.path("bin", "hpfreeze"), "parse", "SS( 0 , 2 )"],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, "SS(0,2)\n"))

    def test_subcommands_are_all_there(self):
        for c in ("freeze", "parse"):
            self.assertIn(c, self.commands)

    def test_main_man_page_names_every_subcommand(self):
        page = self.path("share", "man", "man1", "hpfreeze.1")
        self.assertGreater(os.path.getsize(page), 0)
        with open(page, encoding="utf-8") as f:
            source = f.read()
        self.assertTrue(source.lstrip().startswith((".TH", '.\\"')), source[:80])
        text = render(page)
        if text is None:
            self.skipTest("neither man nor groff is installed")
        self.assertIn("NAME", text)
        self.assertIn("EXIT STATUS", text)
        for c in self.commands:
            self.assertRegex(text, rf"\b{c}\b")
            self.assertIn(f"hpfreeze-{c}(1)", text)

    def test_every_page_has_the_sections(self):
        man1 = self.path("share", "man", "man1")
        pages = ["hpfreeze"] + [f"hpfreeze-{c}" for c in self.commands]
        for page in pages:
            text = render(os.path.join(man1, page + ".1"))
            if text is None:
                self.skipTest("neither man nor groff is installed")
            headings = re.findall(r"^([A-Z][A-Z ]+)$", text, re.M)
            expected = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES",
                        "SEE ALSO"]
            self.assertEqual([h for h in headings if h in expected], expected, page)
            exit_status = text.split("\nEXIT STATUS\n", 1)[1]
            for code in "012":
                self.assertRegex(exit_status, re.compile(rf"^ +{code} +\S", re.M), page)
            examples = text.split("\nEXAMPLES\n", 1)[1].split("\nSEE ALSO\n", 1)[0]
            command = page.replace("-", " ")
            self.assertIn(command + " ", examples, page)
            self.assertNotIn("Exit status:", text, page)  # turned into its section
            if page != "hpfreeze":
                self.assertIn("hpfreeze(1)", text.split("\nSEE ALSO\n", 1)[1], page)

    def test_freeze_page_documents_every_flag(self):
        text = render(self.path("share", "man", "man1", "hpfreeze-freeze.1"))
        if text is None:
            self.skipTest("neither man nor groff is installed")
        for flag in ("--plan", "--model", "--base", "--output", "--if-changed", "--depfile",
                     "--no-verify", "--strict", "--allow-empty"):
            self.assertIn(flag, text)
        self.assertIn("(deps = gcc)", " ".join(text.split()))

    def test_pages_have_no_groff_warnings(self):
        if not shutil.which("groff"):
            self.skipTest("groff is not installed")
        man1 = self.path("share", "man", "man1")
        for page in sorted(os.listdir(man1)):
            r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", os.path.join(man1, page)],
                               capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stderr), (0, ""), page)

    def test_exporter_imports_from_the_install(self):
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import hpfreeze_export as h; "
                "print(h.PLAN_FORMAT, h.MODEL_FORMAT)")
        r = subprocess.run([sys.executable, "-c", code, self.path("share", "hpfreeze")],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, "hpfreeze.plan/v1 hpfreeze.model/v1\n"))


class Completion(unittest.TestCase):
    """The installed completion script, sourced into a clean bash."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("bash"):
            raise unittest.SkipTest("bash is not installed")
        cls.tmp = tempfile.TemporaryDirectory()
        prefix = os.path.join(cls.tmp.name, "prefix")
        subprocess.run(["cmake", "--install", build_dir(), "--prefix", prefix],
                       capture_output=True, check=True, timeout=120)
        cls.script = os.path.join(prefix, "share", "bash-completion", "completions", "hpfreeze")
        cls.bin = os.path.join(prefix, "bin")
        cls.work = os.path.join(cls.tmp.name, "work")
        os.mkdir(cls.work)
        for name in ("plan.json", "model.json", "pipeline.sh"):
            open(os.path.join(cls.work, name), "w").close()
        os.mkdir(os.path.join(cls.work, "out"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def bash(self, body):
        env = {"PATH": self.bin + os.pathsep + os.environ.get("PATH", ""), "HOME": self.work,
               "LC_ALL": "C"}
        return subprocess.run(["bash", "--norc", "--noprofile", "-c",
                               f'source "{self.script}"\n{body}'],
                              capture_output=True, text=True, cwd=self.work, env=env, timeout=60)

    def complete(self, *words):
        """COMPREPLY, sorted, for the command line `words` (the last one being completed)."""
        quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
        r = self.bash(f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
                      "_hpfreeze\nprintf '%s\\n' \"${COMPREPLY[@]}\"")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        return sorted(line for line in r.stdout.splitlines() if line)

    def test_sources_cleanly_and_registers(self):
        r = self.bash("complete -p hpfreeze")
        self.assertEqual((r.returncode, r.stdout, r.stderr),
                         (0, "complete -F _hpfreeze hpfreeze\n", ""))

    def test_subcommands_and_global_flags(self):
        commands = subcommands(BINARY)
        self.assertEqual(self.complete("hpfreeze", ""),
                         sorted(commands + ["help", "-h", "--help", "--version", "-v",
                                            "--verbose", "-q", "--quiet"]))
        self.assertEqual(self.complete("hpfreeze", "fr"), ["freeze"])
        self.assertEqual(self.complete("hpfreeze", "he"), ["help"])
        self.assertEqual(self.complete("hpfreeze", "help", "th"), ["thaw"])
        self.assertEqual(self.complete("hpfreeze", "-v", "pa"), ["parse"])

    def test_subcommand_flags(self):
        self.assertEqual(self.complete("hpfreeze", "freeze", "--d"), ["--depfile"])
        freeze_flags = ["--help", "--plan", "--model", "--base", "--output", "--if-changed",
                        "--depfile", "--no-verify", "--strict", "--allow-empty"]
        global_flags = ["--version", "--verbose", "--quiet"]
        self.assertEqual(self.complete("hpfreeze", "freeze", "--"),
                         sorted(freeze_flags + global_flags))
        self.assertEqual(self.complete("hpfreeze", "parse", "--"),
                         sorted(["--check", "--help", "--json"] + global_flags))

    def test_flags_right_after_a_command_without_file_arguments(self):
        expected = sorted(["-h", "--help", "--plan", "--model", "--base", "-o", "--output",
                           "--if-changed", "--depfile", "--no-verify", "--strict",
                           "--allow-empty", "--version", "-v", "--verbose", "-q", "--quiet"])
        self.assertEqual(self.complete("hpfreeze", "freeze", ""), expected)
        self.assertEqual(self.complete("hpfreeze", "freeze", "--plan", "plan.json", ""),
                         expected)
        self.assertIn("--json", self.complete("hpfreeze", "parse", ""))

    def test_no_file_names_for_values_that_are_not_files(self):
        for words in (["report", "m.json", "--mesh", ""], ["report", "m.json", "--mesh", "p"],
                      ["report", "m.json", "--top", ""], ["diff", "a", "b", "--ignore", ""],
                      ["diff", "a", "b", "--ignore", "p"], ["report", "--mesh", "=", ""]):
            self.assertEqual(self.complete("hpfreeze", *words), [], words)
        # ... while a FILE value still completes file names.
        self.assertEqual(self.complete("hpfreeze", "report", "m.json", "--model", "p"),
                         ["pipeline.sh", "plan.json"])

    def test_files_after_options_that_take_one(self):
        self.assertEqual(self.complete("hpfreeze", "freeze", "--plan", "p"),
                         ["pipeline.sh", "plan.json"])
        self.assertEqual(self.complete("hpfreeze", "freeze", "--model", "=", "m"),
                         ["model.json"])
        self.assertEqual(self.complete("hpfreeze", "freeze", "-o", "o"), ["out"])
        # A flag without a value is followed by nothing in particular.
        self.assertEqual(self.complete("hpfreeze", "freeze", "--strict", "p"), [])

    def test_positionals(self):
        self.assertEqual(self.complete("hpfreeze", "expand", "pl"), ["plan.json"])
        self.assertEqual(self.complete("hpfreeze", "parse", "S"), [])


class ManPageFallback(unittest.TestCase):
    """docs/man/manpages.cmake without help2man still writes renderable pages."""

    def test_without_help2man(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run(
                ["cmake", f"-DBINARY={BINARY}", f"-DOUTPUT_DIR={tmp}/man",
                 f"-DINCLUDE_DIR={SOURCE}/docs/man", "-DHELP2MAN=", "-P",
                 os.path.join(SOURCE, "docs", "man", "manpages.cmake")],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            pages = sorted(os.listdir(os.path.join(tmp, "man")))
            self.assertEqual(pages, sorted(["hpfreeze.1"] + [f"hpfreeze-{c}.1"
                                                             for c in subcommands(BINARY)]))
            text = render(os.path.join(tmp, "man", "hpfreeze-freeze.1"))
            if text is None:
                self.skipTest("neither man nor groff is installed")
            self.assertIn("--depfile", text)
            self.assertIn("EXAMPLES", text)
            self.assertEqual(text.count("DESCRIPTION"), 1)
            expected = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES",
                        "SEE ALSO"]
            for page in pages:
                text = render(os.path.join(tmp, "man", page))
                headings = re.findall(r"^([A-Z][A-Z ]+)$", text, re.M)
                self.assertEqual([h for h in headings if h in expected], expected, page)


if __name__ == "__main__":
    unittest.main()
