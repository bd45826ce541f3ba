"""The exporter as a Python package (python/pyproject.toml): an offline install into a venv
as docs/formats.md shows it, the hpfreeze-export command, and hpfreeze_export.freeze():
the CLI's bytes through pipes (no file written), hpfreeze's diagnostic lines in a typed
error, binary=/$HPFREEZE/PATH, and no torch needed. Expected bytes are golden files of
testdata/ (written from the rules), and the CLI's own output where the point is "the
same as the CLI"."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

from hpf import BINARY, SOURCE, TESTDATA, TempDirTest, case, read, run, sanitized_binary
from cli_help import build_dir
import debian_packages
import test_exporter as t  # the stand-in live plans, and the module from python/

hx = t.hx
EXAMPLE = os.path.join(TESTDATA, "example")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def version():
    return subprocess.run([BINARY, "--version"], capture_output=True, text=True,
                          check=True).stdout.split()[1]


class Freeze(TempDirTest):
    def test_example_is_byte_identical_to_the_cli(self):
        cli = run("freeze", "--plan", os.path.join(EXAMPLE, "plan.json"),
                  "--model", os.path.join(EXAMPLE, "model.json"))
        self.assertEqual((cli.returncode, cli.stderr), (0, b""))
        self.assertEqual(cli.stdout, read(os.path.join(EXAMPLE, "expected.json")))
        text = hx.freeze(load(os.path.join(EXAMPLE, "plan.json")),
                         load(os.path.join(EXAMPLE, "model.json")), binary=BINARY)
        self.assertIsInstance(text, str)
        self.assertEqual(text.encode("utf-8"), cli.stdout)

    def test_live_objects(self):
        self.assertEqual(hx.freeze(t.llama_plan(), t.llama_model(), binary=BINARY).encode(),
                         read(case("dense-llama-2l", "expected.json")))
        # The base meta as a dict: what the plan dump's meta would have held.
        self.assertEqual(hx.freeze(t.qwen_moe_plan(), t.qwen_moe_model(), t.QWEN_META,
                                   binary=BINARY).encode(), t.qwen_moe_expected())

    def test_meta_is_the_base_as_a_dict_or_a_file(self):
        plan, model = load(case("base-precedence", "plan.json")), \
            load(case("base-precedence", "model.json"))
        expected = read(case("base-precedence", "expected.json"))
        base = case("base-precedence", "base.json")
        self.assertEqual(hx.freeze(plan, model, load(base), binary=BINARY).encode(), expected)
        self.assertEqual(hx.freeze(plan, model, base, binary=BINARY).encode(), expected)
        self.assertNotEqual(hx.freeze(plan, model, binary=BINARY).encode(), expected)

    def test_a_rejected_input_raises_with_the_cli_lines(self):
        name = "err-bad-placement-type"
        plan, model = case(name, "plan.json"), case(name, "model.json")
        with self.assertRaises(hx.HpfreezeError) as e:
            hx.freeze(load(plan), load(model), binary=BINARY)
        with open(plan, "rb") as f:
            cli = run("freeze", "--plan", "-", "--model", model, stdin=f.read())
        self.assertEqual(e.exception.returncode, cli.returncode)
        self.assertEqual(e.exception.returncode, 1)
        self.assertEqual(e.exception.diagnostics, cli.stderr.decode().splitlines())
        with open(case(name, "expected.err"), encoding="utf-8") as f:
            golden = f.read().splitlines()[0]
        self.assertEqual(e.exception.diagnostics,
                         [golden.replace(" plan.json: ", " <stdin>: ", 1)])
        self.assertEqual(str(e.exception), e.exception.diagnostics[0])
        self.assertIsInstance(e.exception, RuntimeError)
        # The lines stay text when the environment asks the CLI for another format.
        saved = os.environ.get("HPFREEZE_MESSAGE_FORMAT")
        os.environ["HPFREEZE_MESSAGE_FORMAT"] = "json"
        try:
            with self.assertRaises(hx.HpfreezeError) as again:
                hx.freeze(load(plan), load(model), binary=BINARY)
        finally:
            if saved is None:
                del os.environ["HPFREEZE_MESSAGE_FORMAT"]
            else:
                os.environ["HPFREEZE_MESSAGE_FORMAT"] = saved
        self.assertEqual(again.exception.diagnostics, e.exception.diagnostics)

    def test_a_model_error_names_its_pipe_and_trouble_is_2(self):
        model = load(os.path.join(EXAMPLE, "model.json"))
        model["parameters"] = []
        with self.assertRaises(hx.HpfreezeError) as e:
            hx.freeze(load(os.path.join(EXAMPLE, "plan.json")), model, binary=BINARY)
        self.assertEqual(e.exception.returncode, 1)
        self.assertEqual(len(e.exception.diagnostics), 1)
        self.assertRegex(e.exception.diagnostics[0],
                         r"^hpfreeze: error: /dev/fd/\d+: /parameters: ")
        with self.assertRaises(hx.HpfreezeError) as e:
            hx.freeze(load(os.path.join(EXAMPLE, "plan.json")),
                      load(os.path.join(EXAMPLE, "model.json")), self.path("missing.json"),
                      binary=BINARY)
        self.assertEqual(e.exception.returncode, 2)
        self.assertEqual(e.exception.diagnostics, [
            f"hpfreeze: error: {self.path('missing.json')}: cannot open: "
            "No such file or directory"])

    def test_warnings_and_strict(self):
        plan = t.ShardingPlan(modules={"lm_head": t.spec(params={"weight": {t.TP: t.Shard(-1)}})})
        model = t.make("M", lm_head=t.linear(8, 4))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            text = hx.freeze(plan, model, binary=BINARY)
        self.assertIn('"lm_head.weight"', text)
        lines = [str(w.message) for w in caught if w.category is hx.HpfreezeWarning]
        self.assertEqual(len(lines), 1, [str(w.message) for w in caught])
        self.assertTrue(lines[0].startswith("hpfreeze: warning: <stdin>: "), lines[0])
        with self.assertRaises(hx.HpfreezeError) as e:
            hx.freeze(plan, model, binary=BINARY, strict=True)
        self.assertEqual(e.exception.returncode, 1)
        self.assertEqual(e.exception.diagnostics[0],
                         lines[0].replace("warning", "error", 1) +
                         " (--strict makes this an error)")

    def test_what_cannot_be_dumped_is_refused_before_running(self):
        plan = load(os.path.join(EXAMPLE, "plan.json"))
        cases = [
            ((dict(plan, extra={1, 2}), {"format": "hpfreeze.model/v1"}),
             "plan: the dump dict is not JSON: Object of type set is not JSON serializable"),
            ((plan, object()), "the model must be a torch.nn.Module (named_modules and "
                               "named_parameters), got object"),
            ((plan, load(os.path.join(EXAMPLE, "model.json")), {"signature": float("nan")}),
             "meta: /signature: nan is not a JSON number"),
        ]
        for args, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(hx.ExportError) as e:
                    hx.freeze(*args, binary="/nonexistent/hpfreeze")
                self.assertEqual(str(e.exception), message)

    def test_which_binary_runs(self):
        bindir = self.path("bin")
        os.mkdir(bindir)
        log = self.path("which.log")
        for name in ("on-path", "from-env", "given"):
            path = os.path.join(bindir if name == "on-path" else self.dir, name)
            with open(path, "w") as f:
                f.write(f'#!/bin/sh\necho {name} >> "{log}"\nexec "{BINARY}" "$@"\n')
            os.chmod(path, 0o755)
        os.rename(os.path.join(bindir, "on-path"), os.path.join(bindir, "hpfreeze"))
        plan, model = load(os.path.join(EXAMPLE, "plan.json")), \
            load(os.path.join(EXAMPLE, "model.json"))
        saved = {k: os.environ.get(k) for k in ("PATH", "HPFREEZE")}
        try:
            os.environ["PATH"] = bindir + os.pathsep + saved["PATH"]
            os.environ["HPFREEZE"] = self.path("from-env")
            hx.freeze(plan, model, binary=self.path("given"))
            hx.freeze(plan, model)
            del os.environ["HPFREEZE"]
            hx.freeze(plan, model)
            os.environ["PATH"] = self.path("nowhere")
            with self.assertRaises(FileNotFoundError) as e:
                hx.freeze(plan, model)
            self.assertEqual(str(e.exception), "no hpfreeze to run: pass binary=, set "
                                               "HPFREEZE or put hpfreeze on PATH")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.assertEqual(read(log).decode().split(), ["given", "from-env", "on-path"])

    def test_no_temporary_files(self):
        """TMPDIR and the working directory stay empty: the dumps go through pipes."""
        tmpdir, cwd = self.path("tmp"), self.path("cwd")
        os.mkdir(tmpdir)
        os.mkdir(cwd)
        code = ("import json, sys, hpfreeze_export as h\n"
                "load = lambda p: json.load(open(p))\n"
                "sys.stdout.write(h.freeze(load(sys.argv[1]), load(sys.argv[2]), "
                "load(sys.argv[3])))\n")
        r = subprocess.run(
            [sys.executable, "-c", code, os.path.join(EXAMPLE, "plan.json"),
             os.path.join(EXAMPLE, "model.json"), os.path.join(EXAMPLE, "expected.json")],
            cwd=cwd, capture_output=True, timeout=120,
            env=dict(os.environ, TMPDIR=tmpdir, HPFREEZE=BINARY, PYTHONDONTWRITEBYTECODE="1",
                     PYTHONPATH=os.path.join(SOURCE, "python")))
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout, read(os.path.join(EXAMPLE, "expected.json")))
        self.assertEqual((os.listdir(tmpdir), os.listdir(cwd)), ([], []))


class WithoutTorch(TempDirTest):
    """torch blocked (sys.modules['torch'] = None), as on a machine without it."""

    def python(self, code, *args):
        return subprocess.run([sys.executable, "-c", "import sys; sys.modules['torch'] = None\n"
                               + code, *args], cwd=self.dir, capture_output=True, text=True,
                              timeout=60, env=dict(os.environ,
                                                   PYTHONPATH=os.path.join(SOURCE, "python")))

    def test_import_works(self):
        r = self.python("import hpfreeze_export as h; print(h.__version__)")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, version() + "\n", ""))

    def test_a_setup_that_imports_torch_gets_one_line(self):
        with open(self.path("train_setup.py"), "w") as f:
            f.write("import torch\n\ndef build_plan():\n    return None, None\n")
        with open(self.path("lazy_setup.py"), "w") as f:
            f.write("def build_plan():\n    import torch\n")
        for factory, line in (
                ("train_setup:build_plan", "cannot import 'train_setup': it needs the module "
                                           "'torch', which this Python ({}) cannot import"),
                ("lazy_setup:build_plan", "lazy_setup:build_plan: it needs the module "
                                          "'torch', which this Python ({}) cannot import")):
            with self.subTest(factory=factory):
                r = self.python("import hpfreeze_export as h; sys.exit(h.main(sys.argv[1:]))",
                                factory)
                self.assertEqual((r.returncode, r.stdout), (2, ""))
                self.assertEqual(r.stderr, "hpfreeze_export: error: " +
                                 line.format(sys.executable) + "\n")
                self.assertFalse(os.path.exists(self.path("plan.json")))


def readme_venv_recipe():
    """The README's offline venv recipe, its one `sh` block that makes a venv: the Debian
    packages its `scripts/as-root.sh apt-get install` line names, and the commands after it."""
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        blocks = [b for b in re.findall(r"^```sh\n(.*?)^```$", f.read(), re.M | re.S)
                  if "python3 -m venv" in b]
    assert len(blocks) == 1, f"README.md has {len(blocks)} sh blocks that make a venv"
    lines = [line for line in blocks[0].splitlines() if line.strip()]
    apt = re.fullmatch(r"scripts/as-root\.sh apt-get install((?: [a-z0-9.+-]+)+)", lines[0])
    assert apt, (f"README.md's venv recipe starts with {lines[0]!r}, not scripts/as-root.sh "
                 "apt-get install")
    return apt.group(1).split(), lines[1:]


# Imported at the start of every Python the recipe runs (PYTHONPATH): hides the modules and
# the distribution metadata of the Debian packages installed here that the recipe's apt-get
# line would not bring (HPF_HIDDEN lists their files), as on a Debian 12 that has only those.
HIDE_PACKAGES = r"""
import importlib.machinery, importlib.metadata, os, sys
with open(os.environ["HPF_HIDDEN"], encoding="utf-8", errors="surrogateescape") as f:
    HIDDEN = set(f.read().split("\n"))

class HideUnlisted:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and os.path.realpath(spec.origin) in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, HideUnlisted)
_find = importlib.metadata.MetadataPathFinder.find_distributions.__func__

def find_distributions(cls, *args, **kwargs):
    return (d for d in _find(cls, *args, **kwargs)
            if os.path.realpath(str(getattr(d, "_path", ""))) not in HIDDEN)

importlib.metadata.MetadataPathFinder.find_distributions = classmethod(find_distributions)

# `python3 -m venv` installs pip with ensurepip in an isolated Python (-I), which this file
# does not reach: ask for ensurepip here, as that Python would.
if sys.orig_argv[1:3] == ["-m", "venv"] and "--without-pip" not in sys.orig_argv:
    try:
        HideUnlisted.find_spec("ensurepip")
    except ModuleNotFoundError:
        print("The virtual environment was not created successfully because ensurepip is "
              "not available (its Debian package is not among those installed)",
              file=sys.stderr)
        os._exit(1)
"""


@unittest.skipIf(sanitized_binary(), "the venv install is pure Python and the same under "
                                     "the sanitizer build; the Release suite runs it")
class VenvInstall(unittest.TestCase):
    """README.md's offline recipe, exactly as written there: `scripts/as-root.sh apt-get
    install PACKAGES`, then `python3 -m venv --system-site-packages venv` and `venv/bin/pip install
    --no-index --no-build-isolation ./python`, run from a directory holding a copy of
    python/. The apt-get line is not run: the packages it names must be installed here, and
    every Python the recipe runs sees only what they bring (their Depends closure, as
    installed here); the modules and metadata of every other Debian package are hidden, so
    a package the README forgets fails the install as on a clean Debian 12."""

    @classmethod
    def setUpClass(cls):
        cls.packages, cls.commands = readme_venv_recipe()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.src = os.path.join(cls.tmp.name, "python")
        shutil.copytree(os.path.join(SOURCE, "python"), cls.src)  # LICENSE resolved
        cls.venv = os.path.join(cls.tmp.name, "venv")
        try:
            cls.brought = debian_packages.closure(cls.packages)
        except KeyError as e:
            raise AssertionError(f"README.md's venv recipe installs {' '.join(cls.packages)}: "
                                 f"{e.args[0]} (scripts/setup.sh test installs what the "
                                 "packaging tests need)") from None
        hidden = sorted(path for path, package in debian_packages.files_by_package().items()
                        if package not in cls.brought and path.startswith("/usr/lib/python3"))
        hide = os.path.join(cls.tmp.name, "hide")
        os.mkdir(hide)
        with open(os.path.join(hide, "sitecustomize.py"), "w", encoding="utf-8") as f:
            f.write(HIDE_PACKAGES)
        with open(os.path.join(hide, "hidden.txt"), "w", encoding="utf-8",
                  errors="surrogateescape") as f:
            f.write("\n".join(hidden))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
        # Nothing may be fetched: an index that cannot answer, should pip ask one.
        env.update(PIP_INDEX_URL="http://127.0.0.1:9/", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PIP_CONFIG_FILE=os.devnull)
        cls.env = env
        cls.install = subprocess.run(
            ["bash", "-e", "-c", "\n".join(cls.commands)], capture_output=True, text=True,
            cwd=cls.tmp.name, timeout=600,
            env=dict(env, PATH="/usr/bin:/bin", PYTHONPATH=hide,
                     HPF_HIDDEN=os.path.join(hide, "hidden.txt")))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def bin(self, name):
        return os.path.join(self.venv, "bin", name)

    def setUp(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)

    def test_installed_offline(self):
        self.assertIn(f"Successfully installed hpfreeze-export-{version()}",
                      self.install.stdout)

    def test_the_venv_has_the_module_and_the_command(self):
        r = subprocess.run([self.bin("python"), "-c",
                            "import hpfreeze_export as h; print(h.__file__, h.__version__)"],
                           capture_output=True, text=True, env=self.env, cwd=self.tmp.name)
        path, got = r.stdout.split()
        self.assertTrue(path.startswith(os.path.join(self.venv, "lib")), path)
        self.assertEqual(got, version())
        r = subprocess.run([self.bin("hpfreeze-export"), "--help"], capture_output=True,
                           text=True, env=self.env)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertTrue(r.stdout.startswith("usage: hpfreeze-export MODULE:FUNCTION"))

    def test_the_command_writes_dumps_that_freeze_to_the_golden_bytes(self):
        with tempfile.TemporaryDirectory() as work:
            with open(os.path.join(work, "live_setup.py"), "w") as f:
                f.write(t.CLI_FACTORY.format(paths=[os.path.dirname(os.path.abspath(
                    t.__file__))]))
            r = subprocess.run([self.bin("hpfreeze-export"), "live_setup:llama"], cwd=work,
                               capture_output=True, text=True, env=self.env, timeout=120)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
            f = run("freeze", "--plan", os.path.join(work, "plan.json"),
                    "--model", os.path.join(work, "model.json"))
            self.assertEqual(f.stdout, read(case("dense-llama-2l", "expected.json")))

    def test_freeze_from_the_venv(self):
        code = ("import json, sys, hpfreeze_export as h\n"
                "sys.stdout.write(h.freeze(*(json.load(open(p)) for p in sys.argv[1:])))\n")
        r = subprocess.run([self.bin("python"), "-c", code, os.path.join(EXAMPLE, "plan.json"),
                            os.path.join(EXAMPLE, "model.json")], capture_output=True,
                           env=dict(self.env, HPFREEZE=BINARY), timeout=120)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout, read(os.path.join(EXAMPLE, "expected.json")))

    def test_metadata_is_the_one_cmake_installs(self):
        """The .deb's dist-info (cmake/python) says what the wheel's says."""
        info = f"hpfreeze_export-{version()}.dist-info"
        site = subprocess.run([self.bin("python"), "-c", "import hpfreeze_export as h, os; "
                               "print(os.path.dirname(h.__file__))"], capture_output=True,
                              text=True, env=self.env, cwd=self.tmp.name).stdout.strip()
        wheel, cmake = os.path.join(site, info), os.path.join(build_dir(), "python", info)

        def fields(path):
            with open(path, encoding="utf-8") as f:
                return sorted(line for line in f.read().splitlines()
                              if line and not line.startswith("License-File:"))

        self.assertEqual(fields(os.path.join(wheel, "METADATA")),
                         fields(os.path.join(cmake, "METADATA")))
        for name in ("entry_points.txt", "top_level.txt"):
            self.assertEqual(read(os.path.join(wheel, name)).split(),
                             read(os.path.join(SOURCE, "cmake", "python", name)).split(), name)
        self.assertEqual(read(os.path.join(wheel, "LICENSE")),
                         read(os.path.join(SOURCE, "LICENSE")))


class Version(unittest.TestCase):
    def test_the_module_has_the_binary_version(self):
        self.assertEqual(hx.__version__, version())
        self.assertIsNotNone(importlib.util.find_spec("hpfreeze_export"))


if __name__ == "__main__":
    unittest.main()
