"""The CMake package (find_package(hpfreeze CONFIG), hpfreeze::hpfreeze, hpfreeze_freeze)
installed from the build tree with `cmake --install`, used by the consumer project
tests/cmake_consumer under Ninja and under Unix Makefiles: the first build writes the
meta, the second has no work, touching the plan reruns the freeze, a fourth has no work
again. "No work" is what the build tool itself says (`ninja -n`, `make -n`), and every
run of hpfreeze is counted by a logging wrapper in the installed bin/. The expected meta
is the golden file of testdata/cases/tiny-base, never hpfreeze's output."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from hpf import SOURCE, case, read, sanitized_binary
from cli_help import build_dir

CONSUMER = os.path.join(SOURCE, "tests", "cmake_consumer", "CMakeLists.txt")
TINY = "tiny-base"
# What the test adds to the consumer: a step that reads the meta, to see restat at work.
DOWNSTREAM = """
add_custom_command(OUTPUT modeling.stamp
  COMMAND ${CMAKE_COMMAND} -E copy codegen_meta.json modeling.stamp
  DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/codegen_meta.json
  COMMENT "Generating modeling code")
add_custom_target(modeling ALL DEPENDS modeling.stamp)
"""


def have(tool):
    return shutil.which(tool) is not None


@unittest.skipIf(sanitized_binary(),
                 "the sanitizer build runs the same CMake logic; the Release suite covers it")
@unittest.skipUnless(have("cmake"), "cmake is not installed")
class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.prefix = os.path.join(cls.tmp.name, "prefix")
        subprocess.run(["cmake", "--install", build_dir(), "--prefix", cls.prefix],
                       capture_output=True, check=True, timeout=120)
        # The installed binary behind a wrapper that logs each run.
        binary = os.path.join(cls.prefix, "bin", "hpfreeze")
        os.rename(binary, binary + ".real")
        cls.log = os.path.join(cls.tmp.name, "calls.log")
        with open(binary, "w") as f:
            f.write(f'#!/bin/sh\nprintf \'%s\\n\' "$*" >> "{cls.log}"\n'
                    f'exec "{binary}.real" "$@"\n')
        os.chmod(binary, 0o755)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        open(self.log, "w").close()
        self.work = tempfile.TemporaryDirectory(dir=self.tmp.name)
        self.project = os.path.join(self.work.name, "project")
        os.mkdir(self.project)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL") and
                    not k.startswith("CMAKE_")}

    def tearDown(self):
        self.work.cleanup()

    def calls(self):
        with open(self.log) as f:
            return f.read().splitlines()

    def sh(self, *args, check=True):
        r = subprocess.run(args, capture_output=True, text=True, env=self.env, timeout=180)
        if check and r.returncode != 0:
            self.fail(f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r

    def write_project(self, cmakelists):
        with open(os.path.join(self.project, "CMakeLists.txt"), "w") as f:
            f.write(cmakelists)
        for name, dest in (("plan.json", "plan.json"), ("model.json", "model.json"),
                           ("base.json", "base_meta.json")):
            shutil.copy(case(TINY, name), os.path.join(self.project, dest))
            past = time.time_ns() - 1000 * 10**9  # every output strictly newer
            os.utime(os.path.join(self.project, dest), ns=(past, past))

    def configure(self, generator, check=True):
        build = os.path.join(self.work.name, "build")
        r = self.sh("cmake", "-S", self.project, "-B", build, "-G", generator,
                    f"-DCMAKE_PREFIX_PATH={self.prefix}", check=check)
        return build, r

    def touch(self, name):
        now = time.time_ns()
        os.utime(os.path.join(self.project, name), ns=(now, now))
        time.sleep(0.05)  # file times come from a coarse clock; let it pass `now`

    def session(self, generator, tool, no_work):
        """The four builds; returns the build tree."""
        if not have(tool):
            self.skipTest(f"{tool} is not installed")
        with open(CONSUMER, encoding="utf-8") as f:
            self.write_project(f.read() + DOWNSTREAM)
        build, _ = self.configure(generator)
        meta = os.path.join(build, "codegen_meta.json")

        out = self.sh("cmake", "--build", build).stdout
        self.assertIn("Freezing the sharding plan into codegen_meta.json", out)
        self.assertIn("Generating modeling code", out)
        self.assertEqual(len(self.calls()), 1, self.calls())
        self.assertEqual(read(meta), read(case(TINY, "expected.json")))

        no_work(build)
        out = self.sh("cmake", "--build", build).stdout
        self.assertNotIn("Freezing", out)
        self.assertEqual(len(self.calls()), 1, "second build")

        self.touch("plan.json")
        out = self.sh("cmake", "--build", build).stdout
        self.assertIn("Freezing the sharding plan", out)
        self.assertEqual(len(self.calls()), 2, "after touching plan.json")
        self.third_build = out

        no_work(build)
        out = self.sh("cmake", "--build", build).stdout
        self.assertNotIn("Freezing", out)
        self.assertEqual(len(self.calls()), 2, "fourth build")

        # A real change reaches what reads the meta.
        with open(os.path.join(self.project, "plan.json")) as f:
            plan = json.load(f)
        plan["modules"]["lin"]["params"]["weight"]["tp"] = "R"
        with open(os.path.join(self.project, "plan.json"), "w") as f:
            json.dump(plan, f)
        time.sleep(0.05)
        out = self.sh("cmake", "--build", build).stdout
        self.assertIn("Generating modeling code", out)
        self.assertNotEqual(read(meta), read(case(TINY, "expected.json")))
        self.assertEqual(read(os.path.join(build, "modeling.stamp")), read(meta))
        no_work(build)
        return build

    def test_ninja(self):
        def no_work(build):
            r = self.sh("ninja", "-C", build, "-n")
            self.assertEqual(r.stdout.splitlines()[-1], "ninja: no work to do.", r.stdout)

        build = self.session("Ninja", "ninja", no_work)
        # Ninja's restat: the touched plan froze to the same bytes, so nothing downstream ran.
        self.assertNotIn("Generating modeling code", self.third_build)
        self.assertIn("--if-changed", self.calls()[0])
        # The depfile went through CMake's rewrite (policy CMP0116) into the form ninja
        # matches against the build statement: the output relative to the build tree.
        with open(os.path.join(build, "build.ninja")) as f:
            depfile = re.search(r"^build codegen_meta\.json .*?\n  depfile = (\S+)$", f.read(),
                                re.M | re.S).group(1)
        with open(depfile) as f:
            self.assertEqual(f.read().split(), ["codegen_meta.json:", "\\"] + [
                x for name in ("plan.json", "model.json", "base_meta.json")
                for x in (os.path.join(self.project, name), "\\")][:-1])

    def test_unix_makefiles(self):
        def no_work(build):
            r = self.sh("make", "-C", build, "-n")
            self.assertNotIn("hpfreeze", r.stdout)
            self.assertNotIn(" freeze ", r.stdout)

        self.session("Unix Makefiles", "make", no_work)
        # Without --if-changed the rewritten meta (same bytes, new mtime) reruns the step
        # that reads it: once, as the fourth build shows.
        self.assertIn("Generating modeling code", self.third_build)
        self.assertNotIn("--if-changed", self.calls()[0])
        self.assertRegex(self.calls()[0], r"^freeze --plan \S+/plan.json --model \S+/model.json "
                                          r"--base \S+/base_meta.json -o \S+/codegen_meta.json "
                                          r"--depfile \S+/codegen_meta.json.d$")

    def test_strict_and_the_imported_executable(self):
        # An older policy level than the package's: CMP0116 OLD would hand ninja the
        # depfile's absolute output path, which ninja refuses.
        self.write_project(
            "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\n"
            "find_package(hpfreeze CONFIG REQUIRED)\n"
            "get_target_property(location hpfreeze::hpfreeze IMPORTED_LOCATION)\n"
            'message(STATUS "location=${location} executable=${hpfreeze_EXECUTABLE} '
            'version=${hpfreeze_VERSION}")\n'
            "hpfreeze_freeze(OUTPUT out/meta.json PLAN plan.json MODEL model.json STRICT)\n"
            "add_custom_target(meta ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/out/meta.json)\n")
        build, r = self.configure("Ninja" if have("ninja") else "Unix Makefiles")
        binary = os.path.join(os.path.realpath(self.prefix), "bin", "hpfreeze")
        self.assertIn(f"location={binary} executable={binary} version=", r.stdout)
        self.sh("cmake", "--build", build)
        self.assertRegex(self.calls()[0], r" --strict( --if-changed)? -o \S+/out/meta.json")
        self.assertTrue(os.path.isfile(os.path.join(build, "out", "meta.json")))
        self.assertNotIn("meta.json", self.sh("cmake", "--build", build).stdout)
        self.assertEqual(len(self.calls()), 1)

    def test_mistakes_are_configure_errors(self):
        cases = [
            ("hpfreeze_freeze(OUTPUT m.json PLAN plan.json)", "MODEL is required"),
            ("hpfreeze_freeze(OUTPUT m.json PLAN p MODEL m SRICT)", "unknown arguments: SRICT"),
            ("hpfreeze_freeze(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/m.json PLAN p MODEL m "
             "BASE ${CMAKE_CURRENT_BINARY_DIR}/m.json)", "BASE must not be the OUTPUT"),
        ]
        for call, message in cases:
            with self.subTest(call=call):
                self.write_project("cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\n"
                                   f"find_package(hpfreeze CONFIG REQUIRED)\n{call}\n")
                shutil.rmtree(os.path.join(self.work.name, "build"), ignore_errors=True)
                _, r = self.configure("Ninja" if have("ninja") else "Unix Makefiles",
                                      check=False)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(f"hpfreeze_freeze: {message}", " ".join(r.stderr.split()))

    def test_version_is_checked(self):
        self.write_project("cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\n"
                           "find_package(hpfreeze 99 CONFIG REQUIRED)\n")
        _, r = self.configure("Ninja" if have("ninja") else "Unix Makefiles", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(" ".join(r.stderr.split()), r"hpfreezeConfig\.cmake, version: "
                                                     r"[0-9.]+")


class DocsShowTheConsumer(unittest.TestCase):
    def test_recipes_md_shows_it_verbatim(self):
        with open(os.path.join(SOURCE, "docs", "recipes.md"), encoding="utf-8") as f:
            doc = f.read()
        shown = re.search(r"<!-- consumer: tests/cmake_consumer/CMakeLists.txt -->\n"
                          r"```cmake\n(.*?)```\n", doc, re.S)
        self.assertIsNotNone(shown, "docs/recipes.md does not show tests/cmake_consumer")
        self.assertEqual(shown.group(1), read(CONSUMER).decode())


if __name__ == "__main__":
    unittest.main()
