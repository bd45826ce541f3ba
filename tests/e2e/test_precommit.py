"""The pre-commit hook: .pre-commit-hooks.yaml at the repository's root, run by
pre-commit itself (Debian's pre-commit package) offline on docs/recipes/
pre-commit-config.yaml. The hook repository is a scratch git repository holding this
source tree's .pre-commit-hooks.yaml (pre-commit fetches the hooks from it by path, as
from a submodule); the project is a scratch git repository with the example's inputs."""
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from hpf import BINARY, SOURCE, case, read, write_bundle

RECIPE = os.path.join(SOURCE, "docs", "recipes", "pre-commit-config.yaml")
HOOKS = os.path.join(SOURCE, ".pre-commit-hooks.yaml")
TINY = "tiny-base"


@unittest.skipUnless(shutil.which("pre-commit") and shutil.which("git"),
                     "pre-commit or git is not installed (scripts/setup.sh test installs them)")
class PreCommitHook(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        bindir = os.path.join(root, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.abspath(BINARY), os.path.join(bindir, "hpfreeze"))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("GIT_", "PRE_COMMIT", "HPFREEZE_MESSAGE"))}
        self.env.update(PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                        PRE_COMMIT_HOME=os.path.join(root, "cache"), HOME=root,
                        NO_COLOR="1", GIT_CONFIG_NOSYSTEM="1")
        self.project = os.path.join(root, "project")
        os.mkdir(self.project)
        self.git("init", "-q")
        # hpfreeze where the recipe expects its submodule: a repository of its own holding
        # the hooks file, at a commit.
        hooks = os.path.join(self.project, "third_party", "hpfreeze")
        os.makedirs(hooks)
        shutil.copy(HOOKS, hooks)
        self.git("init", "-q", cwd=hooks)
        self.git("add", ".pre-commit-hooks.yaml", cwd=hooks)
        self.git("commit", "-q", "-m", "hooks", cwd=hooks)
        rev = self.git("rev-parse", "HEAD", cwd=hooks).stdout.strip()
        with open(RECIPE, encoding="utf-8") as f:
            config = f.read()
        self.assertIn("  - repo: ./third_party/hpfreeze\n", config)
        config, n = re.subn(r"(?m)^    rev: \S+$", f"    rev: {rev}", config)
        self.assertEqual(n, 1)
        with open(os.path.join(self.project, ".pre-commit-config.yaml"), "w") as f:
            f.write(config)
        with open(os.path.join(self.project, ".git", "info", "exclude"), "a") as f:
            f.write("third_party/\n")
        for src, dst in (("plan.json", "plan.json"), ("model.json", "model.json"),
                         ("expected.json", "codegen_meta.json")):
            shutil.copy(case(TINY, src), os.path.join(self.project, dst))
        self.git("add", ".")
        self.git("commit", "-q", "-m", "plan and its meta")

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args, cwd=None):
        r = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args],
                           cwd=cwd or self.project, env=self.env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def pre_commit(self, *args):
        return subprocess.run(["pre-commit", "run", *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, timeout=300)

    def test_the_hook(self):
        hooks = read(HOOKS).decode()
        self.assertIn("  entry: hpfreeze freeze --check\n", hooks)
        self.assertIn("  language: system\n", hooks)
        self.assertIn("  pass_filenames: false\n", hooks)

        r = self.pre_commit("--all-files")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^codegen_meta\.json is what the plan freezes to\.+Passed$")

        # A real change of the plan: lin.weight's tp becomes R.
        plan = os.path.join(self.project, "plan.json")
        with open(plan) as f:
            data = json.load(f)
        data["modules"]["lin"]["params"]["weight"]["tp"] = "R"
        with open(plan, "w") as f:
            json.dump(data, f)
        meta = read(os.path.join(self.project, "codegen_meta.json"))
        failing = [
            "- hook id: hpfreeze-check",
            "- exit code: 1",
            "",
            "hpfreeze: error: codegen_meta.json: differs from what freeze would write: "
            "2 differences (hpfreeze diff's lines, the file being OLD)",
            '  - /frozen_sharded_params: "lin.weight"',
            "  ~ /param_plan/lin/params/weight/tp: S(0) -> R",
            "  run without --check to rewrite it: hpfreeze freeze --plan plan.json --model "
            "model.json --base codegen_meta.json -o codegen_meta.json",
        ]
        r = self.pre_commit("--all-files")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        out = r.stdout.splitlines()
        # pre-commit pads every hook's name with dots to one width (the recipe's longest).
        at = [i for i, line in enumerate(out)
              if re.fullmatch(r"codegen_meta\.json is what the plan freezes to\.+Failed", line)]
        self.assertEqual(len(at), 1, r.stdout)
        at = at[0]
        self.assertEqual(out[at + 1:at + 1 + len(failing)], failing)
        self.assertEqual(read(os.path.join(self.project, "codegen_meta.json")), meta)
        # The recipe shows this output.
        with open(os.path.join(SOURCE, "docs", "recipes.md"), encoding="utf-8") as f:
            self.assertIn("\n".join(out[at:at + 1 + len(failing)]) + "\n", f.read())

        # A commit, once pre-commit is installed as the repository's hook: the staged
        # plan runs it, and it stops the commit.
        r = subprocess.run(["pre-commit", "install"], cwd=self.project, env=self.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        head = self.git("rev-parse", "HEAD").stdout
        self.git("add", "plan.json")
        r = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost",
                            "commit", "-q", "-m", "plan changed"], cwd=self.project,
                           env=self.env, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(failing[3], r.stdout + r.stderr)
        self.assertEqual(self.git("rev-parse", "HEAD").stdout, head)

        # Staged files that are not JSON: skipped.
        self.git("reset", "-q", "--hard")
        with open(os.path.join(self.project, "README"), "w") as f:
            f.write("notes\n")
        self.git("add", "README")
        r = self.pre_commit()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^codegen_meta\.json is what the plan freezes to\.+"
                                   r"\(no files to check\)Skipped$")


def hooks():
    """The hooks of .pre-commit-hooks.yaml, by id (pre-commit's own reader: yaml)."""
    import yaml
    with open(HOOKS, encoding="utf-8") as f:
        return {hook["id"]: hook for hook in yaml.safe_load(f)}


class BundleHookDefinition(unittest.TestCase):
    """The second hook, hpfreeze-check-bundle, as pre-commit reads it."""

    @unittest.skipUnless(importlib.util.find_spec("yaml"), "PyYAML (pre-commit's reader) is not installed")
    def test_the_hook(self):
        by_id = hooks()
        self.assertEqual(list(by_id), ["hpfreeze-check", "hpfreeze-check-bundle"])
        hook = by_id["hpfreeze-check-bundle"]
        self.assertEqual(hook["entry"], "hpfreeze check . --bundle")
        self.assertEqual(hook["language"], "system")
        self.assertIs(hook["pass_filenames"], False)
        # The first hook stays as it was.
        self.assertEqual(by_id["hpfreeze-check"]["entry"], "hpfreeze freeze --check")
        self.assertEqual(by_id["hpfreeze-check"]["files"], r"\.json$")
        # pre-commit matches `files` with re.search against paths from the repository's root.
        files = re.compile(hook["files"])
        runs = ["generated/codegen_meta.json", "generated/modeling_Qwen3_Moe_gen_npu.py",
                "generated/modeling_Qwen3_Moe_gen_npu.py.diff", "generated/__init__.py",
                "examples/demo/generated/configuration_deepseek.py", "codegen_meta.json",
                "out/bundle/codegen_meta.json", "out/bundle/modeling_model_gen_npu.py",
                "out/bundle/modeling_model_gen_npu.py.diff", "out/bundle/__init__.py"]
        skips = ["plan.json", "model.json", "README.md", "src/modeling_qwen.py",
                 "notgenerated/x.py", "generated.py", "patch.diff", "my__init__.py",
                 "codegen_meta.json.bak"]
        self.assertEqual([p for p in runs if not files.search(p)], [])
        self.assertEqual([p for p in skips if files.search(p)], [])


@unittest.skipUnless(shutil.which("pre-commit") and shutil.which("git"),
                     "pre-commit or git is not installed (scripts/setup.sh test installs them)")
class BundleHook(PreCommitHook):
    """hpfreeze-check-bundle run by pre-commit on a project holding a generated bundle."""

    def test_the_hook(self):
        config = os.path.join(self.project, ".pre-commit-config.yaml")
        with open(config, encoding="utf-8") as f:
            rev = re.search(r"(?m)^    rev: (\S+)$", f.read()).group(1)
        with open(config, "w", encoding="utf-8") as f:
            f.write("repos:\n  - repo: ./third_party/hpfreeze\n    rev: %s\n    hooks:\n"
                    "      - id: hpfreeze-check-bundle\n" % rev)
        modeling = write_bundle(os.path.join(self.project, "generated"))
        self.git("add", ".")
        self.git("commit", "-q", "-m", "a generated bundle")
        name = "generated bundles hold what codegen_meta.json records"

        r = self.pre_commit("--all-files")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^%s\.+Passed$" % re.escape(name))

        # A hand edit of the generated modeling file fails the hook, naming both sha256s.
        path = os.path.join(self.project, "generated", modeling)
        before = hashlib.sha256(read(path)).hexdigest()
        with open(path, "a", encoding="utf-8") as f:
            f.write("# edited by hand\n")
        after = hashlib.sha256(read(path)).hexdigest()
        r = self.pre_commit("--all-files")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^%s\.+Failed$" % re.escape(name))
        self.assertIn("- hook id: hpfreeze-check-bundle\n- exit code: 1\n", r.stdout)
        self.assertIn(
            "hpfreeze: error: generated/codegen_meta.json: /outputs/modeling: generated/%s: "
            "hash drift (recorded sha256 %s, actual %s; recorded 5 lines, actual 6): regenerate "
            "the bundle or revert generated/%s [HPF406]\n" % (modeling, before, after, modeling), r.stdout)

        # Staged files of no bundle: skipped.
        self.git("checkout", "--", ".")
        with open(os.path.join(self.project, "README"), "w") as f:
            f.write("notes\n")
        self.git("add", "README")
        r = self.pre_commit()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^%s\.+\(no files to check\)Skipped$" % re.escape(name))


if __name__ == "__main__":
    unittest.main()
