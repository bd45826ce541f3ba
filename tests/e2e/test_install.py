"""`cmake --install` layout: the binary, man pages, completions, the licence, the docs and
the example, the Python exporter (module, dist-info, hpfreeze-export) and the CMake
package, where a packager expects them, in two components (hpfreeze, exporter: one .deb
each); the pages name this prefix; the bash completion completes."""
import filecmp
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from hpf import BINARY, SOURCE
from cli_help import build_dir, commands as subcommands


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


def version():
    return subprocess.run([BINARY, "--version"], capture_output=True, text=True,
                          check=True).stdout.split()[1]


def expected_layout(commands):
    """Every file `cmake --install` writes, relative to the prefix."""
    files = {"bin/hpfreeze", "bin/hpfreeze-export",
             "share/man/man1/hpfreeze.1", "share/man/man1/hpfreeze-export.1",
             "share/bash-completion/completions/hpfreeze",
             "share/zsh/vendor-completions/_hpfreeze",
             "share/fish/vendor_completions.d/hpfreeze.fish",
             "share/hpfreeze/hpfreeze_export.py",
             "lib/python3/dist-packages/hpfreeze_export.py",
             "share/cmake/hpfreeze/hpfreezeConfig.cmake",
             "share/cmake/hpfreeze/hpfreezeConfigVersion.cmake",
             "share/doc/hpfreeze/LICENSE", "share/doc/hpfreeze/README.md",
             "share/doc/hpfreeze/copyright", "share/doc/hpfreeze/changelog"}
    files |= {f"share/man/man1/hpfreeze-{c}.1" for c in commands}
    info = f"lib/python3/dist-packages/hpfreeze_export-{version()}.dist-info"
    files |= {f"{info}/METADATA", f"{info}/entry_points.txt", f"{info}/top_level.txt"}
    docs = os.path.join(SOURCE, "docs")
    files |= {f"share/doc/hpfreeze/docs/{n}" for n in os.listdir(docs) if n.endswith(".md")}
    files |= {f"share/doc/hpfreeze/docs/recipes/{n}"
              for n in os.listdir(os.path.join(docs, "recipes"))}
    files |= {f"share/doc/hpfreeze/examples/{n}"
              for n in ("plan.json", "model.json", "expected.json", "cmake/CMakeLists.txt",
                        "cmake/plan.json", "cmake/model.json", "cmake/base_meta.json")}
    return files


def exporter_files():
    """What the install component `exporter` (the .deb python3-hpfreeze-export) holds."""
    info = f"lib/python3/dist-packages/hpfreeze_export-{version()}.dist-info"
    return {"bin/hpfreeze-export", "share/man/man1/hpfreeze-export.1",
            "lib/python3/dist-packages/hpfreeze_export.py",
            f"{info}/METADATA", f"{info}/entry_points.txt", f"{info}/top_level.txt"}


def installed_files(root):
    return {os.path.relpath(os.path.join(d, n), root)
            for d, _, names in os.walk(root) for n in names}


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
        self.assertEqual(installed_files(self.prefix), expected_layout(self.commands))
        self.assertTrue(os.access(self.path("bin", "hpfreeze"), os.X_OK))
        self.assertTrue(os.access(self.path("bin", "hpfreeze-export"), os.X_OK))
        same = {"share/hpfreeze/hpfreeze_export.py": "python/hpfreeze_export.py",
                "lib/python3/dist-packages/hpfreeze_export.py": "python/hpfreeze_export.py",
                "share/bash-completion/completions/hpfreeze": "completions/hpfreeze.bash",
                "share/zsh/vendor-completions/_hpfreeze": "completions/_hpfreeze",
                "share/fish/vendor_completions.d/hpfreeze.fish": "completions/hpfreeze.fish",
                "share/doc/hpfreeze/LICENSE": "LICENSE",
                "share/doc/hpfreeze/copyright": "cmake/debian/copyright",
                "share/doc/hpfreeze/README.md": "README.md",
                "share/doc/hpfreeze/docs/cli.md": "docs/cli.md",
                "share/doc/hpfreeze/docs/recipes/ci.yml": "docs/recipes/ci.yml",
                "share/doc/hpfreeze/examples/plan.json": "testdata/example/plan.json",
                "share/doc/hpfreeze/examples/model.json": "testdata/example/model.json",
                "share/doc/hpfreeze/examples/expected.json": "testdata/example/expected.json",
                "share/doc/hpfreeze/examples/cmake/CMakeLists.txt":
                    "tests/cmake_consumer/CMakeLists.txt",
                "share/doc/hpfreeze/examples/cmake/plan.json": "testdata/example/plan.json",
                "share/doc/hpfreeze/examples/cmake/model.json": "testdata/example/model.json",
                "share/doc/hpfreeze/examples/cmake/base_meta.json":
                    "testdata/example/expected.json"}
        for installed, source in same.items():
            self.assertTrue(filecmp.cmp(self.path(installed), os.path.join(SOURCE, source),
                                        shallow=False), installed)

    def test_components_split_the_install(self):
        """`--component exporter` installs the exporter alone, `--component hpfreeze` all the
        rest: together the whole install, and no Python file in the binary's component but
        the share/hpfreeze copy (which its .deb leaves out)."""
        found = {}
        for component in ("hpfreeze", "exporter"):
            prefix = os.path.join(self.tmp.name, component)
            r = subprocess.run(["cmake", "--install", build_dir(), "--prefix", prefix,
                                "--component", component], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            found[component] = installed_files(prefix)
        self.assertEqual(found["exporter"], exporter_files())
        self.assertEqual(found["hpfreeze"], expected_layout(self.commands) - exporter_files())
        self.assertEqual(sorted(f for f in found["hpfreeze"] if "python" in f or
                                f.endswith(".py")), ["share/hpfreeze/hpfreeze_export.py"])

    def test_license_is_the_apache_license_2_0(self):
        with open(self.path("share", "doc", "hpfreeze", "LICENSE"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("Apache License\n                           Version 2.0, January 2004",
                      text)
        self.assertIn("END OF TERMS AND CONDITIONS", text)
        common = "/usr/share/common-licenses/Apache-2.0"
        if os.path.exists(common):
            self.assertTrue(filecmp.cmp(common, os.path.join(SOURCE, "LICENSE"), shallow=False))

    def test_every_link_of_the_installed_docs_resolves(self):
        doc = self.path("share", "doc", "hpfreeze")
        checked = 0
        for d, _, names in os.walk(doc):
            for name in names:
                if not name.endswith(".md"):
                    continue
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", f.read())
                for link in links:
                    if "://" in link or link.startswith("mailto:"):
                        continue
                    checked += 1
                    self.assertTrue(os.path.exists(os.path.normpath(os.path.join(d, link))),
                                    f"{os.path.relpath(os.path.join(d, name), doc)}: {link}")
        self.assertGreater(checked, 20)

    def test_installed_binary_runs(self):
        r = subprocess.run([self.path("bin", "hpfreeze"), "parse", "SS( 0 , 2 )"],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, "SS(0,2)\n"))

    def test_subcommands_are_all_there(self):
        for c in ("freeze", "parse"):
            self.assertIn(c, self.commands)

    def test_pages_name_the_files_of_this_prefix(self):
        text = render(self.path("share", "man", "man1", "hpfreeze.1"))
        if text is None:
            self.skipTest("neither man nor groff is installed")
        flat = " ".join(text.split())
        for path in ("share/doc/hpfreeze/", "lib/python3/dist-packages/hpfreeze_export.py",
                     "share/cmake/hpfreeze/hpfreezeConfig.cmake",
                     "share/zsh/vendor-completions/_hpfreeze"):
            self.assertIn(self.path(path), flat)
        self.assertNotIn("/usr/share/", flat)
        self.assertNotIn("/usr/lib/", flat)
        for page in os.listdir(self.path("share", "man", "man1")):
            with open(self.path("share", "man", "man1", page), encoding="utf-8") as f:
                self.assertNotIn("/usr/share/doc/", f.read(), page)

    def test_freeze_page_documents_every_flag(self):
        text = render(self.path("share", "man", "man1", "hpfreeze-freeze.1"))
        if text is None:
            self.skipTest("neither man nor groff is installed")
        for flag in ("--plan", "--model", "--base", "--output", "--if-changed", "--depfile",
                     "--no-verify", "--strict", "--allow-empty"):
            self.assertIn(flag, text)
        self.assertIn("(deps = gcc)", " ".join(text.split()))

    def test_exporter_imports_from_the_install(self):
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import hpfreeze_export as h; "
                "print(h.PLAN_FORMAT, h.MODEL_FORMAT)")
        for where in (("share", "hpfreeze"), ("lib", "python3", "dist-packages")):
            # -B: importing must not leave __pycache__ in the install (test_layout).
            r = subprocess.run([sys.executable, "-B", "-c", code, self.path(*where)],
                               capture_output=True, text=True)
            self.assertEqual((r.returncode, r.stdout),
                             (0, "hpfreeze.plan/v1 hpfreeze.model/v1\n"), where)

    def test_hpfreeze_export_runs_from_the_install(self):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the install (test_layout)
        if not os.path.exists("/usr/bin/python3"):
            self.skipTest("no /usr/bin/python3 for the script's #! line")
        r = subprocess.run([self.path("bin", "hpfreeze-export"), "--help"], env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertTrue(r.stdout.startswith("usage: hpfreeze-export MODULE:FUNCTION"),
                        r.stdout[:80])

    def test_python_metadata(self):
        site = self.path("lib", "python3", "dist-packages")
        dists = list(importlib.metadata.distributions(path=[site]))
        self.assertEqual(len(dists), 1)
        dist = dists[0]
        self.assertEqual((dist.metadata["Name"], dist.version), ("hpfreeze-export", version()))
        self.assertEqual([(e.group, e.name, e.value) for e in dist.entry_points],
                         [("console_scripts", "hpfreeze-export", "hpfreeze_export:main")])


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
                                            "--verbose", "-q", "--quiet", "--message-format"]))
        self.assertEqual(self.complete("hpfreeze", "fr"), ["freeze"])
        self.assertEqual(self.complete("hpfreeze", "he"), ["help"])
        self.assertEqual(self.complete("hpfreeze", "help", "th"), ["thaw"])
        self.assertEqual(self.complete("hpfreeze", "-v", "pa"), ["parse"])
        self.assertEqual(self.complete("hpfreeze", "--message-format", ""),
                         ["github", "json", "text"])
        self.assertEqual(self.complete("hpfreeze", "--message-format", "github", "fr"), ["freeze"])
        self.assertEqual(self.complete("hpfreeze", "--message-format", "=", "j"), ["json"])
        self.assertEqual(self.complete("hpfreeze", "diff", "--message-format", "t"), ["text"])

    def test_subcommand_flags(self):
        self.assertEqual(self.complete("hpfreeze", "freeze", "--d"), ["--depfile"])
        freeze_flags = ["--help", "--plan", "--model", "--base", "--output", "--if-changed",
                        "--check", "--depfile", "--no-verify", "--strict", "--allow-empty"]
        global_flags = ["--version", "--verbose", "--quiet", "--message-format"]
        self.assertEqual(self.complete("hpfreeze", "freeze", "--"),
                         sorted(freeze_flags + global_flags))
        self.assertEqual(self.complete("hpfreeze", "parse", "--"),
                         sorted(["--check", "--help", "--json"] + global_flags))

    def test_flags_right_after_a_command_without_file_arguments(self):
        expected = sorted(["-h", "--help", "--plan", "--model", "--base", "-o", "--output",
                           "--if-changed", "--check", "--depfile", "--no-verify", "--strict",
                           "--allow-empty", "--version", "-v", "--verbose", "-q", "--quiet",
                           "--message-format"])
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


if __name__ == "__main__":
    unittest.main()
