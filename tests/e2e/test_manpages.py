"""The man pages docs/man/manpages.cmake writes from the binary's --help and docs/man/*.h2m,
and the hand-written hpfreeze-export(1): each renders without a groff warning, fits 80
columns, has the sections a reader looks for, and lists in OPTIONS exactly the entries of
--help (read here by tests/e2e/cli_help.py, not by the generator)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

from hpf import BINARY, SOURCE
from cli_help import build_dir, help_of, parse_help

GENERATOR = os.path.join(SOURCE, "docs", "man", "manpages.cmake")
DOCDIR = "/usr/share/doc/hpfreeze/"


def generate(binary, out):
    r = subprocess.run(["cmake", f"-DBINARY={binary}", f"-DOUTPUT_DIR={out}",
                        f"-DINCLUDE_DIR={os.path.join(SOURCE, 'docs', 'man')}", "-P", GENERATOR],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or r.stderr:
        raise AssertionError(f"manpages.cmake failed ({r.returncode}): {r.stderr}")


def render(page, width=80):
    """The page as plain text, `width` columns wide, through man -l (else groff)."""
    env = dict(os.environ, MANWIDTH=str(width), LC_ALL="C.UTF-8")
    env.pop("MAN_KEEP_FORMATTING", None)
    if shutil.which("man"):
        command = ["man", "-l", page]
    else:
        command = ["groff", "-man", "-Tutf8", f"-rLL={width}n", page]
    r = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        raise AssertionError(f"rendering {page} failed: {r.stderr}")
    return re.sub(r".\x08", "", r.stdout)


def sections(text):
    """{heading: its lines} of a rendered page, in order."""
    out, current = {}, None
    for line in text.split("\n"):
        if re.fullmatch(r"[A-Z][A-Z ]+", line):
            current = line
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def tags(lines):
    """The tag lines of .TP entries: the ones at the section's own indent of 7."""
    return [line[7:] for line in lines if re.match(r" {7}\S", line)]


def expected_tag(e, positional):
    if positional:
        tag = e.names[0]
    else:
        tag = ", ".join(e.names) + (f" {e.value}" if e.value else "")
    # In --help's order: CLI11 writes "PATH ... REQUIRED" for a required repeated positional.
    return tag + (" ..." if e.repeated else "") + (" (required)" if e.required else "")


def pages_of(binary):
    return ["hpfreeze"] + [f"hpfreeze-{c.names[0]}" for c in help_of(binary=binary).commands]


@unittest.skipUnless(shutil.which("cmake") and (shutil.which("man") or shutil.which("groff")),
                     "cmake, or man and groff, are not installed")
class GeneratedPages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        generate(BINARY, cls.dir)
        cls.pages = pages_of(BINARY)
        cls.text = {p: render(os.path.join(cls.dir, p + ".1")) for p in cls.pages}
        cls.export_page = os.path.join(build_dir(), "man", "hpfreeze-export.1")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def help(self, page):
        return help_of(*page.split("-")[1:])

    def test_one_page_per_command(self):
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(p + ".1" for p in self.pages))
        self.assertEqual(len(self.pages), 8)

    def test_no_groff_or_man_warnings(self):
        for page in [os.path.join(self.dir, p + ".1") for p in self.pages] + [self.export_page]:
            with self.subTest(page=os.path.basename(page)):
                r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual((r.returncode, r.stderr), (0, ""))
                if shutil.which("man"):
                    r = subprocess.run(["man", "--warnings", "-l", page], capture_output=True,
                                       text=True, env=dict(os.environ, MANWIDTH="80"),
                                       timeout=60)
                    self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_lines_fit_80_columns(self):
        for page in [os.path.join(self.dir, p + ".1") for p in self.pages] + [self.export_page]:
            long = [line for line in render(page).split("\n") if len(line) > 80]
            self.assertEqual(long, [], os.path.basename(page))

    def test_sections_in_order(self):
        order = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS",
                 "ENVIRONMENT", "FILES", "EXAMPLES", "COPYRIGHT", "SEE ALSO"]
        for page, text in self.text.items():
            with self.subTest(page=page):
                found = list(sections(text))
                self.assertEqual(found, [s for s in order if s in found])
                required = {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                            "EXAMPLES", "COPYRIGHT", "SEE ALSO"}
                if page == "hpfreeze":
                    required |= {"COMMANDS", "ENVIRONMENT", "FILES"}
                self.assertLessEqual(required, set(found))

    def test_name_and_synopsis_come_from_help(self):
        for page, text in self.text.items():
            with self.subTest(page=page):
                h, s = self.help(page), sections(text)
                name = " ".join(" ".join(s["NAME"]).split())
                summary = h.summary.split(": ", 1)[-1] if page == "hpfreeze" else h.summary
                self.assertEqual(name, f"{page} - {summary[0].lower()}{summary[1:]}")
                self.assertEqual(" ".join(" ".join(s["SYNOPSIS"]).split()), h.usage)
                # DESCRIPTION is prose of its own, not NAME again.
                self.assertNotIn(summary, " ".join(" ".join(s["DESCRIPTION"]).split()))

    def test_options_list_every_entry_of_help_once(self):
        for page, text in self.text.items():
            with self.subTest(page=page):
                h = self.help(page)
                expected = ([expected_tag(e, True) for e in h.positionals] +
                            [expected_tag(e, False) for e in h.options])
                found = tags(sections(text)["OPTIONS"])
                self.assertEqual(len(found), len(expected), found)
                for tag, want in zip(found, expected):
                    self.assertTrue(tag == want or tag.startswith(want + " "), (tag, want))
                self.assertGreaterEqual(len(h.options), 4)

    def test_option_text_is_filled_and_choices_are_named(self):
        options = " ".join(" ".join(sections(self.text["hpfreeze-report"])["OPTIONS"]).split())
        self.assertIn("Count gradients and optimizer state too (default: none; "
                      "docs/capacity.md) NAME is one of none, sgd, momentum, adam, adamw.",
                      options)
        self.assertNotIn("Options:", self.text["hpfreeze-report"])
        self.assertNotIn("{none,", self.text["hpfreeze-report"])

    def test_commands_of_the_main_page(self):
        found = tags(sections(self.text["hpfreeze"])["COMMANDS"])
        names = [c.names[0] for c in help_of().commands]
        self.assertEqual([t.split(" ")[0] for t in found], names)
        text = " ".join(" ".join(sections(self.text["hpfreeze"])["COMMANDS"]).split())
        for name in names:
            self.assertIn(f"(hpfreeze-{name}(1))", text)
        see_also = " ".join(sections(self.text["hpfreeze"])["SEE ALSO"])
        for name in names + ["export"]:
            self.assertIn(f"hpfreeze-{name}(1)", see_also)

    def test_exit_status_as_in_help(self):
        for page, text in self.text.items():
            with self.subTest(page=page):
                h = self.help(page)
                lines = sections(text)["EXIT STATUS"]
                self.assertEqual([t.split(" ")[0] for t in tags(lines)], ["0", "1", "2"])
                joined = " ".join(" ".join(lines).split())
                for _, meaning in h.exit_status:
                    self.assertIn(meaning, joined)

    def test_examples_hold_the_help_examples_and_fit(self):
        for page, text in self.text.items():
            with self.subTest(page=page):
                examples = "\n".join(sections(text)["EXAMPLES"])
                commands = re.sub(r" \\\n +", " ", examples)
                for example in self.help(page).examples:
                    self.assertIn(example, commands)
                self.assertIn(page.replace("-", " ") + " ", commands)
                # Every other command line sits at the block's indent of 11.
                for line in examples.split("\n"):
                    if line.strip().startswith("hpfreeze "):
                        self.assertTrue(line.startswith(" " * 11 + "hpfreeze"), line)

    def test_see_also_names_installed_docs_that_exist(self):
        for page, text in self.text.items():
            with self.subTest(page=page):
                named = re.findall(re.escape(DOCDIR) + r"(\S+?)[,)]?(?:\s|$)",
                                   " ".join(sections(text)["SEE ALSO"]))
                self.assertTrue(named)
                for path in named:
                    self.assertTrue(os.path.isfile(os.path.join(SOURCE, path)), path)
                self.assertIn(DOCDIR + "copyright", " ".join(sections(text)["COPYRIGHT"]))
                if page != "hpfreeze":
                    self.assertIn("hpfreeze(1)", " ".join(sections(text)["SEE ALSO"]))

    def test_files_of_the_main_page(self):
        files = tags(sections(self.text["hpfreeze"])["FILES"])
        self.assertEqual(files, [
            DOCDIR, "/usr/lib/python3/dist-packages/hpfreeze_export.py",
            "/usr/share/cmake/hpfreeze/hpfreezeConfig.cmake",
            "/usr/share/bash-completion/completions/hpfreeze",
            "/usr/share/zsh/vendor-completions/_hpfreeze",
            "/usr/share/fish/vendor_completions.d/hpfreeze.fish"])

    def test_the_export_page_matches_the_exporter(self):
        text = render(self.export_page)
        s = sections(text)
        r = subprocess.run([sys.executable, "-m", "hpfreeze_export", "--help"],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python")))
        flags = set(re.findall(r"^  (?:-h, )?(--[a-z-]+)", r.stdout, re.M))
        self.assertEqual(flags, {"--help", "--plan", "--model", "--meta"})
        found = " ".join(tags(s["OPTIONS"]))
        for flag in flags:
            self.assertIn(flag, found)
        version = subprocess.run([BINARY, "--version"], capture_output=True, text=True).stdout
        self.assertIn(version.split()[1], text.split("\n")[-2])


FAKE_HELP = {
    (): """\
tool: a tool
Usage: hpfreeze [OPTIONS] SUBCOMMAND

Options:
  -h,--help                   Print this help message and exit

Subcommands:
  make                        Make a thing

Exit status:
  0  fine
  1  rejected
  2  trouble

Examples:
  hpfreeze make --out a.json
""",
    ("make",): """\
Make a thing
Usage: hpfreeze make [OPTIONS] IN...

Positionals:
  IN REQUIRED ...             Inputs
Options:
  -h,--help                   Print this help message and exit
  --message-format FORMAT:{text,github,json}
                              How diagnostics look [text]
  --level N [3]               A level; with a [bracket] and a ; semicolon
  --very-long-option-name-that-keeps-going FILE
                              Wrapped to the next line by CLI11

Exit status:
  0  made
  1  not made
  2  trouble

Examples:
  hpfreeze make --message-format github --level 4 --very-long-option-name-that-keeps-going x.json in.json
""",
}


class NewOptionsAppearByThemselves(unittest.TestCase):
    """A --help with options no page mentions yet (as a later release would have)."""

    def test_generator_on_a_new_help(self):
        if not (shutil.which("cmake") and shutil.which("groff")):
            self.skipTest("cmake or groff is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "hpfreeze")
            with open(fake, "w") as f:
                f.write(f"#!{sys.executable}\nimport sys\nHELP = {FAKE_HELP!r}\n"
                        "args = tuple(a for a in sys.argv[1:] if a != '--help')\n"
                        "print('hpfreeze 9.8.7' if sys.argv[1:] == ['--version'] "
                        "else HELP[args], end='')\n")
            os.chmod(fake, 0o755)
            out = os.path.join(tmp, "man")
            generate(fake, out)
            self.assertEqual(sorted(os.listdir(out)), ["hpfreeze-make.1", "hpfreeze.1"])
            page = os.path.join(out, "hpfreeze-make.1")
            r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page],
                               capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            s = sections(render(page))
            h = parse_help(FAKE_HELP[("make",)])
            self.assertEqual(tags(s["OPTIONS"]), [
                "IN (required) ...", "-h, --help", "--message-format FORMAT",
                "--level N", "--very-long-option-name-that-keeps-going FILE"])
            self.assertEqual(len(h.options) + len(h.positionals), 5)
            text = " ".join(" ".join(s["OPTIONS"]).split())
            self.assertIn("How diagnostics look [text] FORMAT is one of text, github, json.",
                          text)
            self.assertIn("A level; with a [bracket] and a ; semicolon Default: 3.", text)
            self.assertIn("Wrapped to the next line by CLI11", text)
            examples = "\n".join(s["EXAMPLES"])
            self.assertEqual(textwrap.dedent(examples).strip().split("\n"), [
                "hpfreeze make --message-format github --level 4 \\",
                "    --very-long-option-name-that-keeps-going x.json in.json"])
            self.assertIn("hpfreeze 9.8.7", render(page))


if __name__ == "__main__":
    unittest.main()
