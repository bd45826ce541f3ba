"""The CMake package (find_package(hpfreeze CONFIG), hpfreeze::hpfreeze, hpfreeze_freeze)
installed from the build tree with `cmake --install`, used by the consumer project
tests/cmake_consumer under Ninja and under Unix Makefiles: the first build writes the
meta, the second has no work, touching the plan reruns the freeze, a fourth has no work
again. "No work" is what the build tool itself says (`ninja -n`, `make -n`), and every
run of hpfreeze is counted by a logging wrapper in the installed bin/. The expected meta
is the golden file of testdata/cases/tiny-base, never hpfreeze's output.

Everything lives under directories whose names hold a space, `=`, `'`, `[`, `]`, `(`,
`)`, `,`, `+`, `@` and non-ASCII letters (ODD): the prefix, and the consumer's source and
build trees, side by side in such a directory or each named with those bytes. The command
names its files relative to the build tree, so hpfreeze's depfile holds none of the
directories above; where a path it would hold still has such a byte (the trees' own names),
or, under Ninja, the absolute paths CMake writes into its copy hold a byte ninja 1.11
misreads (`'`), the rule goes without the depfile, and every build does what it should
all the same."""
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
# Ordinary directory names that make or ninja would misread in a depfile.
ODD = "a b=c'd[e](f),g+h@\u00fc\u00df\u6f22"
# Those of them that ninja 1.11 reads back from a depfile.
NINJA_ODD = ODD.replace("'", "")
# (source tree, build tree) under the session's directory.
LAYOUTS = {"side_by_side": (os.path.join(ODD, "project"), os.path.join(ODD, "build")),
           "side_by_side_ninja": (os.path.join(NINJA_ODD, "project"),
                                  os.path.join(NINJA_ODD, "build")),
           "odd_names": ("src " + ODD, "build " + ODD)}
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
        cls.prefix = os.path.join(cls.tmp.name, ODD, "prefix")
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
        self.use_layout("side_by_side")
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL") and
                    not k.startswith("CMAKE_")}

    def tearDown(self):
        self.work.cleanup()

    def use_layout(self, layout, depfile_used=True):
        project, build = LAYOUTS[layout]
        self.depfile_used = depfile_used
        self.project = os.path.join(self.work.name, project)
        self.build = os.path.join(self.work.name, build)
        os.makedirs(self.project, exist_ok=True)

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
        r = self.sh("cmake", "-S", self.project, "-B", self.build, "-G", generator,
                    f"-DCMAKE_PREFIX_PATH={self.prefix}", check=check)
        return self.build, r

    def touch(self, name):
        now = time.time_ns()
        os.utime(os.path.join(self.project, name), ns=(now, now))
        time.sleep(0.05)  # file times come from a coarse clock; let it pass `now`

    def expected_call(self, extra=()):
        """The freeze command line hpfreeze_freeze() runs in the build tree: every file
        relative to it."""
        rel = os.path.relpath(self.project, self.build)
        args = ["freeze", "--plan", os.path.join(rel, "plan.json"),
                "--model", os.path.join(rel, "model.json"),
                "--base", os.path.join(rel, "base_meta.json"), *extra, "-o", "codegen_meta.json"]
        if self.depfile_used:
            args += ["--depfile", "codegen_meta.json.d"]
        return " ".join(args)

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

    def ninja_session(self):
        def no_work(build):
            r = self.sh("ninja", "-C", build, "-n")
            self.assertEqual(r.stdout.splitlines()[-1], "ninja: no work to do.", r.stdout)

        build = self.session("Ninja", "ninja", no_work)
        # Ninja's restat: the touched plan froze to the same bytes, so nothing downstream ran.
        self.assertNotIn("Generating modeling code", self.third_build)
        self.assertEqual(self.calls()[0], self.expected_call(["--if-changed"]))
        with open(os.path.join(build, "build.ninja"), encoding="utf-8") as f:
            rule = re.search(r"^build codegen_meta\.json .*?\n\n", f.read(), re.M | re.S).group(0)
        if not self.depfile_used:
            self.assertNotIn("depfile", rule)
            return
        # hpfreeze's depfile names the files relative to the build tree; CMake's rewrite of it
        # (policy CMP0116), which ninja reads, names the output relative to the build tree,
        # as the build statement does, and the inputs by their absolute paths.
        with open(os.path.join(build, "codegen_meta.json.d"), encoding="utf-8") as f:
            rel = os.path.relpath(self.project, self.build)
            self.assertEqual(f.read(), "codegen_meta.json: " + " ".join(
                os.path.join(rel, n) for n in ("plan.json", "model.json", "base_meta.json"))
                + "\n")
        depfile = re.search(r"^  depfile = (.+)$", rule, re.M).group(1).replace("$ ", " ")
        with open(os.path.join(build, depfile), encoding="utf-8") as f:
            words = [re.sub(r"\\(.)", r"\1", w) for w in re.findall(r"(?:\\.|[^\s\\])+",
                                                                    f.read())]
        self.assertEqual(words, ["codegen_meta.json:"] + [
            os.path.join(self.project, n) for n in ("plan.json", "model.json", "base_meta.json")])

    def test_ninja(self):
        self.use_layout("side_by_side_ninja")
        self.ninja_session()

    def test_ninja_below_a_name_ninja_misreads(self):
        self.use_layout("side_by_side", depfile_used=False)
        self.ninja_session()

    def test_ninja_in_directories_named_with_depfile_syntax(self):
        self.use_layout("odd_names", depfile_used=False)
        self.ninja_session()

    def make_session(self):
        def no_work(build):
            r = self.sh("make", "-C", build, "-n")
            self.assertNotIn("hpfreeze", r.stdout)
            self.assertNotIn(" freeze ", r.stdout)

        self.session("Unix Makefiles", "make", no_work)
        # Without --if-changed the rewritten meta (same bytes, new mtime) reruns the step
        # that reads it: once, as the fourth build shows.
        self.assertIn("Generating modeling code", self.third_build)
        self.assertEqual(self.calls()[0], self.expected_call())

    def test_unix_makefiles(self):
        self.make_session()

    def test_unix_makefiles_in_directories_named_with_depfile_syntax(self):
        self.use_layout("odd_names", depfile_used=False)
        self.make_session()

    def test_strict_and_the_imported_executable(self):
        # An older policy level than the package's: CMP0116 OLD would hand ninja the
        # depfile's absolute output path, which ninja refuses.
        self.use_layout("side_by_side_ninja")
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
        self.assertRegex(self.calls()[0], r" --strict( --if-changed)? -o out/meta\.json "
                                          r"--depfile out/meta\.json\.d$")
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
                shutil.rmtree(self.build, ignore_errors=True)
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


    def test_the_installed_example_builds_where_it_is(self):
        """share/doc/hpfreeze/examples/cmake, the consumer with the bundled example's plan,
        model and meta as its base, built from the install itself under Ninja and Make: the
        meta is the example's."""
        example = os.path.join(self.prefix, "share", "doc", "hpfreeze", "examples", "cmake")
        self.assertEqual(read(os.path.join(example, "CMakeLists.txt")), read(CONSUMER))
        expected = read(os.path.join(self.prefix, "share", "doc", "hpfreeze", "examples",
                                     "expected.json"))
        for generator, tool in (("Ninja", "ninja"), ("Unix Makefiles", "make")):
            if not have(tool):
                continue
            with self.subTest(generator=generator):
                build = os.path.join(self.work.name, "example-" + tool)
                self.sh("cmake", "-S", example, "-B", build, "-G", generator,
                        f"-DCMAKE_PREFIX_PATH={self.prefix}")
                out = self.sh("cmake", "--build", build).stdout
                self.assertIn("Freezing the sharding plan into codegen_meta.json", out)
                self.assertEqual(read(os.path.join(build, "codegen_meta.json")), expected)
                self.assertNotIn("Freezing", self.sh("cmake", "--build", build).stdout)


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
