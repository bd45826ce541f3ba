"""The two .debs that `cmake --build build --target package` writes (CPack, one per install
component; cmake/hpfreezeDeb.cmake): hpfreeze (the binary and all but the exporter) and
python3-hpfreeze-export. Their names, file lists and Depends (the binary's pulls in no
Python), a clean lintian, the DEP-5 copyright with the licences of what is compiled in, the
binary hardened as Debian builds its own, and the bundled example and the exporter run from
the packages unpacked into a scratch root. Built here with the build tree's
CPackConfig.cmake into a temporary directory, so the build tree's own packages are left
alone."""
import filecmp
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from hpf import BINARY, SOURCE, TESTDATA, read, sanitized_binary
from cli_help import build_dir, commands as subcommands
import debian_packages

EXAMPLE = os.path.join(TESTDATA, "example")


def have(tool):
    return shutil.which(tool) is not None


def version():
    return subprocess.run([BINARY, "--version"], capture_output=True, text=True,
                          check=True).stdout.split()[1]


def dep5(text):
    """The paragraphs of a DEP-5 copyright file: lists of (field, value) pairs, a value
    with its continuation lines joined by newlines."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text.strip()):
        fields = []
        for line in block.split("\n"):
            if line.startswith((" ", "\t")):
                fields[-1] = (fields[-1][0], fields[-1][1] + "\n" + line[1:])
            else:
                name, _, value = line.partition(":")
                fields.append((name, value.strip()))
        paragraphs.append(fields)
    return paragraphs


def license_text(path, name):
    """The text of licence `name` in a Debian copyright file: its stand-alone paragraph,
    or the first inline one, whitespace-normalised."""
    found = None
    for paragraph in dep5(read(path).decode()):
        fields = dict(paragraph)
        value = fields.get("License", "")
        first, _, rest = value.partition("\n")
        if first == name and rest:
            if "Files" not in fields:
                return " ".join(rest.split())
            found = found or " ".join(rest.split())
    return found


def libc_path():
    """The C library this Python runs with (the one the binary links too)."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"/libc\.so\.6$|/libc-[0-9.]+\.so$", path):
                return path
    raise AssertionError("no libc.so.6 in /proc/self/maps")


def dynamic_symbols(path):
    """(defined, undefined) names of an ELF file's dynamic symbol table, versions cut."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True,
                         text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[3] in ("FUNC", "NOTYPE", "IFUNC"):
            name = f[7].split("@")[0]
            (undefined if f[6] == "UND" else defined).add(name)
    return defined, undefined


def elf_hardening(path):
    """What readelf says of an ELF executable, as hardening-check (devscripts) reads it:
    a GNU_RELRO segment, BIND_NOW, a position-independent executable, __stack_chk_fail, and
    which of its libc calls have a checked variant (protectable) and are checked."""
    headers = subprocess.run(["readelf", "-h", "-l", "-d", "-W", path], capture_output=True,
                             text=True, check=True).stdout
    _, imported = dynamic_symbols(path)
    libc_defined, _ = dynamic_symbols(libc_path())
    checked_in_libc = {m.group(1) for m in map(re.compile(r"__(\w+)_chk$").match, libc_defined)
                       if m}
    flags = " ".join(re.findall(r"\((?:FLAGS|FLAGS_1)\)\s+(?:Flags:)?\s*(.*)", headers))
    return {
        "relro": re.search(r"^\s*GNU_RELRO\s", headers, re.M) is not None,
        "bind_now": re.search(r"\bBIND_NOW\b|\bNOW\b", flags) is not None,
        "pie": re.search(r"^\s*Type:\s+DYN\b", headers, re.M) is not None and
               re.search(r"\bPIE\b", flags) is not None,
        "stack_protector": "__stack_chk_fail" in imported,
        "protectable": sorted(imported & checked_in_libc),
        "checked": sorted(n for n in imported if re.fullmatch(r"__\w+_chk", n) and
                          n != "__stack_chk_fail"),
    }


@unittest.skipIf(sanitized_binary(), "a package of the instrumented binary (it would depend "
                                     "on libasan) is not one anyone ships; the Release suite "
                                     "builds and checks the real one")
@unittest.skipUnless(have("cpack") and have("dpkg-deb") and have("dpkg-shlibdeps"),
                     "cpack, dpkg-deb or dpkg-shlibdeps (dpkg-dev) is not installed")
@unittest.skipUnless(os.path.exists(os.path.join(build_dir(), "CPackConfig.cmake")),
                     "this tree has no package target: it is not built with Debian's hardened "
                     "flags (HPFREEZE_DEB_BUILDFLAGS, CMakeLists.txt)")
class Deb(unittest.TestCase):
    EXPORTER = "python3-hpfreeze-export"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = os.path.join(cls.tmp.name, "out")
        cls.cpack = subprocess.run(
            ["cpack", "--config", os.path.join(build_dir(), "CPackConfig.cmake"), "-B", out],
            capture_output=True, text=True, timeout=600)
        if cls.cpack.returncode != 0:
            raise AssertionError(f"cpack failed:\n{cls.cpack.stdout}\n{cls.cpack.stderr}")
        cls.arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                  text=True, check=True).stdout.strip()
        cls.names = {"hpfreeze": f"hpfreeze_{version()}_{cls.arch}.deb",
                     cls.EXPORTER: f"{cls.EXPORTER}_{version()}_all.deb"}
        cls.debs = sorted(n for n in os.listdir(out) if n.endswith(".deb"))
        cls.deb = os.path.join(out, cls.names["hpfreeze"])
        cls.exporter_deb = os.path.join(out, cls.names[cls.EXPORTER])
        # Each package alone, and both in one root: the system with both installed.
        cls.root = os.path.join(cls.tmp.name, "root")
        cls.exporter_root = os.path.join(cls.tmp.name, "exporter-root")
        cls.both = os.path.join(cls.tmp.name, "both")
        for deb, roots in ((cls.deb, (cls.root, cls.both)),
                           (cls.exporter_deb, (cls.exporter_root, cls.both))):
            for root in roots:
                subprocess.run(["dpkg-deb", "-x", deb, root], check=True, timeout=120)
        cls.control = {deb: subprocess.run(["dpkg-deb", "-f", deb], capture_output=True,
                                           text=True, check=True).stdout
                       for deb in (cls.deb, cls.exporter_deb)}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def field(self, name, deb=None):
        m = re.search(rf"^{name}: (.*(?:\n .*)*)$", self.control[deb or self.deb], re.M)
        return m.group(1) if m else None

    def files(self, deb=None):
        listing = subprocess.run(["dpkg-deb", "-c", deb or self.deb], capture_output=True,
                                 text=True, check=True).stdout
        return {line.split()[-1].lstrip(".") for line in listing.splitlines()
                if not line.startswith("d")}

    def depends(self, deb):
        return [d.strip() for d in self.field("Depends", deb).split(",")]

    def test_debian_file_names(self):
        self.assertEqual(self.debs, sorted(self.names.values()))

    def test_control(self):
        for deb, package, section, arch, summary in (
                (self.deb, "hpfreeze", "devel", self.arch, "freeze a HyperParallel"),
                (self.exporter_deb, self.EXPORTER, "python", "all", "export a live HyperParallel")):
            with self.subTest(package=package):
                self.assertEqual((self.field("Package", deb), self.field("Version", deb),
                                  self.field("Section", deb), self.field("Architecture", deb)),
                                 (package, version(), section, arch))
                self.assertTrue(self.field("Description", deb).startswith(summary))
        self.assertEqual(self.field("Suggests"), self.EXPORTER)

    def test_the_exporter_takes_its_files_over_from_the_combined_package(self):
        # hpfreeze before 0.2.0 held the exporter's files: without Breaks and Replaces dpkg
        # would refuse to overwrite them on upgrade (Debian policy 7.6.1).
        self.assertEqual(self.field("Breaks", self.exporter_deb), "hpfreeze (<< 0.2.0)")
        self.assertEqual(self.field("Replaces", self.exporter_deb), "hpfreeze (<< 0.2.0)")
        self.assertIsNone(self.field("Breaks"))
        self.assertIsNone(self.field("Replaces"))

    def test_the_binary_depends_on_what_it_links_and_pulls_in_no_python(self):
        depends = self.depends(self.deb)
        names = [re.match(r"[a-z0-9.+-]+", d).group(0) for d in depends]
        # dpkg-shlibdeps: one package per shared library of the binary, no -dev package.
        needed = subprocess.run(["readelf", "-d", os.path.join(self.root, "usr/bin/hpfreeze")],
                                capture_output=True, text=True, check=True).stdout
        sonames = re.findall(r"\(NEEDED\).*\[(.+)\]", needed)
        self.assertTrue(any(s.startswith("libsimdjson.so.") for s in sonames), sonames)
        self.assertTrue(any(re.fullmatch(r"libsimdjson\d+", n) for n in names), depends)
        # OpenSSL's libcrypto (SHA-256 of a bundle's files, check --bundle) is Debian 12's
        # libssl3: loaded when a file is first hashed, not linked (no command that hashes
        # nothing pays for it), so the package names it itself.
        self.assertFalse([s for s in sonames if s.startswith("libcrypto.so.")], sonames)
        self.assertIn("libssl3", names)
        self.assertIn("libc6", names)
        self.assertIn("libstdc++6", names)
        self.assertFalse([n for n in names if n.endswith("-dev")], depends)
        self.assertFalse([n for n in names if "python" in n], depends)
        # Nor does anything those need, as installed here; and nothing in the package is
        # Python's (no module, no script run by python3).
        self.assertEqual([p for p in sorted(debian_packages.closure(names)) if "python" in p],
                         [])
        self.assertEqual([f for f in self.files() if f.endswith((".py", ".pth")) or
                          "/python" in f], [])
        for f in self.files():
            with open(self.root + f, "rb") as handle:
                self.assertFalse(handle.read(64).startswith(b"#!") and
                                 b"python" in read(self.root + f).split(b"\n", 1)[0], f)

    def test_the_exporter_depends_on_python3_and_the_binary(self):
        self.assertEqual(self.depends(self.exporter_deb),
                         ["python3:any", f"hpfreeze (>= {version()})"])

    def test_depends_resolve_here(self):
        """Each holds on this Debian: what apt-get install of the two packages would need
        besides themselves."""
        for deb in (self.deb, self.exporter_deb):
            for dep in self.depends(deb):
                m = re.fullmatch(r"([a-z0-9.+-]+)(?::any)?(?: \((>=|<<|<=|=|>>) ([^)]+)\))?", dep)
                self.assertIsNotNone(m, dep)
                if m.group(1) == "hpfreeze":
                    installed = version()
                else:
                    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", m.group(1)],
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, f"{m.group(1)} is not installed")
                    installed = r.stdout
                if m.group(2):
                    ok = subprocess.run(["dpkg", "--compare-versions", installed,
                                         {">=": "ge", "<<": "lt", "<=": "le", "=": "eq",
                                          ">>": "gt"}[m.group(2)], m.group(3)])
                    self.assertEqual(ok.returncode, 0, f"{dep}: installed {installed}")

    def test_file_lists(self):
        doc = "/usr/share/doc/hpfreeze"
        expected = {"/usr/bin/hpfreeze",
                    "/usr/share/bash-completion/completions/hpfreeze",
                    "/usr/share/zsh/vendor-completions/_hpfreeze",
                    "/usr/share/fish/vendor_completions.d/hpfreeze.fish",
                    "/usr/share/cmake/hpfreeze/hpfreezeConfig.cmake",
                    "/usr/share/cmake/hpfreeze/hpfreezeConfigVersion.cmake",
                    f"{doc}/copyright", f"{doc}/changelog.gz", f"{doc}/README.md",
                    f"{doc}/examples/plan.json", f"{doc}/examples/model.json",
                    f"{doc}/examples/expected.json", f"{doc}/examples/cmake/CMakeLists.txt",
                    f"{doc}/examples/cmake/plan.json", f"{doc}/examples/cmake/model.json",
                    f"{doc}/examples/cmake/base_meta.json", "/usr/share/man/man1/hpfreeze.1.gz"}
        expected |= {f"/usr/share/man/man1/hpfreeze-{c}.1.gz" for c in subcommands(BINARY)}
        expected |= {f"{doc}/docs/{n}" for n in os.listdir(os.path.join(SOURCE, "docs"))
                     if n.endswith(".md")}
        expected |= {f"{doc}/docs/recipes/{n}"
                     for n in os.listdir(os.path.join(SOURCE, "docs", "recipes"))}
        self.assertEqual(self.files(), expected)
        info = f"/usr/lib/python3/dist-packages/hpfreeze_export-{version()}.dist-info"
        exporter_doc = f"/usr/share/doc/{self.EXPORTER}"
        self.assertEqual(self.files(self.exporter_deb), {
            "/usr/bin/hpfreeze-export", "/usr/lib/python3/dist-packages/hpfreeze_export.py",
            f"{info}/METADATA", f"{info}/entry_points.txt", f"{info}/top_level.txt",
            "/usr/share/man/man1/hpfreeze-export.1.gz",
            f"{exporter_doc}/copyright", f"{exporter_doc}/changelog.gz"})

    def test_the_plain_install_under_usr_is_the_packages(self):
        """`cmake --install` to /usr gives the files of both packages, but for Debian's rules:
        man pages and changelog gzipped, the licence text only through the copyright file
        (in each package's doc directory), no copy of the exporter under share/hpfreeze."""
        packaged = self.files() | self.files(self.exporter_deb)
        with tempfile.TemporaryDirectory() as destdir:
            subprocess.run(["cmake", "--install", build_dir(), "--prefix", "/usr"],
                           env=dict(os.environ, DESTDIR=destdir), capture_output=True,
                           check=True, timeout=120)
            plain = {"/" + os.path.relpath(os.path.join(d, n), destdir)
                     for d, _, names in os.walk(destdir) for n in names}
            left_out = {"/usr/share/doc/hpfreeze/LICENSE",
                        "/usr/share/hpfreeze/hpfreeze_export.py"}
            self.assertLessEqual(left_out, plain)
            same = []
            for f in sorted(plain - left_out):
                as_packaged = f + ".gz" if re.search(r"/man1/.*\.1$|/doc/hpfreeze/changelog$",
                                                     f) else f
                self.assertIn(as_packaged, packaged)
                if as_packaged == f and f != "/usr/bin/hpfreeze":  # the packaged one is stripped
                    same.append(filecmp.cmp(destdir + f, self.both + f, shallow=False) or f)
                elif as_packaged != f:
                    with gzip.open(self.both + as_packaged) as g:
                        same.append(g.read() == read(destdir + f) or f)
            self.assertEqual([x for x in same if x is not True], [])
            exporter_doc = {f"/usr/share/doc/{self.EXPORTER}/copyright",
                            f"/usr/share/doc/{self.EXPORTER}/changelog.gz"}
            self.assertEqual(len(plain - left_out) + len(exporter_doc), len(packaged))
        for name in ("copyright", "changelog.gz"):
            self.assertEqual(read(os.path.join(self.both, "usr/share/doc", self.EXPORTER, name)),
                             read(os.path.join(self.both, "usr/share/doc/hpfreeze", name)), name)

    def test_the_bundled_example_is_the_source_trees(self):
        for name in ("plan.json", "model.json", "expected.json"):
            self.assertEqual(read(os.path.join(self.root, "usr/share/doc/hpfreeze/examples",
                                               name)), read(os.path.join(EXAMPLE, name)), name)

    def test_copyright_is_dep5_with_every_licence_compiled_in(self):
        path = os.path.join(self.root, "usr/share/doc/hpfreeze/copyright")
        paragraphs = dep5(read(path).decode())
        self.assertEqual(dict(paragraphs[0])["Format"],
                         "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
        files = {dict(p)["Files"]: dict(p)["License"].split("\n")[0]
                 for p in paragraphs if "Files" in dict(p)}
        self.assertEqual(files["*"], "Apache-2.0")
        self.assertEqual(files["usr/include/CLI/*"], "BSD-3-clause")
        self.assertEqual(files["usr/include/rapidjson/*"], "Expat")
        self.assertEqual(files["usr/include/spdlog/*"], "Expat")
        self.assertEqual(files["usr/include/fmt/*"], "Expat with embedded exception")
        # Every licence named has its text, and it is the text of Debian's own copyright
        # file for that library, as installed here.
        named = {p_license for p_license in files.values()}
        for name in named:
            self.assertIsNotNone(license_text(path, name), name)
        for name, package in (("BSD-3-clause", "libcli11-dev"), ("Expat", "rapidjson-dev"),
                              ("Expat with embedded exception", "libfmt-dev")):
            theirs = f"/usr/share/doc/{package}/copyright"
            if os.path.exists(theirs):
                self.assertEqual(license_text(path, name), license_text(theirs, name), name)
        self.assertIn("/usr/share/common-licenses/Apache-2.0", license_text(path, "Apache-2.0"))

    @unittest.skipUnless(have("lintian"), "lintian is not installed")
    def test_lintian_finds_no_error_and_no_warning(self):
        for deb in (self.deb, self.exporter_deb):
            with self.subTest(deb=os.path.basename(deb)):
                r = subprocess.run(["lintian", "--fail-on", "error,warning", deb],
                                   capture_output=True, text=True, timeout=600)
                tags = [line for line in r.stdout.splitlines() if re.match(r"[EW]: ", line)]
                self.assertEqual((r.returncode, tags), (0, []), r.stdout + r.stderr)

    def test_the_packaged_binary_is_hardened(self):
        """As Debian builds its own (DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags):
        RELRO, BIND_NOW, PIE, the stack protector, and _FORTIFY_SOURCE's checked calls."""
        facts = elf_hardening(os.path.join(self.root, "usr/bin/hpfreeze"))
        self.assertEqual({k: facts[k] for k in ("relro", "bind_now", "pie", "stack_protector")},
                         {"relro": True, "bind_now": True, "pie": True,
                          "stack_protector": True}, facts)
        # hardening-check's rule: a binary that calls a libc function which has a checked
        # variant (__memcpy_chk for memcpy) must call some checked variant.
        self.assertTrue(facts["protectable"], facts)
        self.assertTrue(facts["checked"], facts)

    def test_maintainer_scripts(self):
        """The exporter's byte-compile and clean up, as dh_python3's; the binary's package
        has none."""
        with tempfile.TemporaryDirectory() as control:
            subprocess.run(["dpkg-deb", "-e", self.deb, control], check=True)
            self.assertEqual(sorted(n for n in os.listdir(control)
                                    if n in ("preinst", "postinst", "prerm", "postrm")), [])
        with tempfile.TemporaryDirectory() as control:
            subprocess.run(["dpkg-deb", "-e", self.exporter_deb, control], check=True)
            for script, command in (("postinst", "py3compile"), ("prerm", "py3clean")):
                path = os.path.join(control, script)
                self.assertTrue(os.access(path, os.X_OK), script)
                r = subprocess.run(["sh", "-n", path], capture_output=True, text=True)
                self.assertEqual((r.returncode, r.stderr), (0, ""), script)
                self.assertIn(f"\t{command} -p {self.EXPORTER}\n", read(path).decode(), script)

    def test_the_example_runs_from_the_unpacked_package(self):
        """The example the package bundles, frozen by the packaged binary."""
        binary = os.path.join(self.root, "usr/bin/hpfreeze")
        examples = os.path.join(self.root, "usr/share/doc/hpfreeze/examples")
        r = subprocess.run([binary, "freeze", "--plan", os.path.join(examples, "plan.json"),
                            "--model", os.path.join(examples, "model.json")],
                           capture_output=True, timeout=60)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout, read(os.path.join(EXAMPLE, "expected.json")))
        r = subprocess.run([binary, "--version"], capture_output=True, text=True)
        self.assertEqual(r.stdout, f"hpfreeze {version()}\n")

    def test_the_packaged_binary_verifies_a_bundle(self):
        """check --bundle's SHA-256 comes from libcrypto, which the binary loads when it
        first hashes a file: a clean bundle passes and an edited file is caught."""
        from hpf import write_bundle
        binary = os.path.join(self.root, "usr/bin/hpfreeze")
        with tempfile.TemporaryDirectory() as tmp:
            modeling = write_bundle(os.path.join(tmp, "generated"), "M")
            r = subprocess.run([binary, "check", tmp, "--bundle", "-q"], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
            with open(os.path.join(tmp, "generated", modeling), "a", encoding="utf-8") as f:
                f.write("# edited\n")
            r = subprocess.run([binary, "check", tmp, "--bundle", "-q"], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(f"generated/{modeling}: hash drift (recorded sha256 ", r.stderr)

    def test_the_exporter_runs_from_the_unpacked_packages(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        if os.path.exists("/usr/bin/python3"):
            r = subprocess.run([os.path.join(self.exporter_root, "usr/bin/hpfreeze-export"),
                                "--help"], capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            self.assertTrue(r.stdout.startswith("usage: hpfreeze-export MODULE:FUNCTION"))
        code = ("import json, sys, hpfreeze_export as h\n"
                "print(h.__file__)\n"
                "sys.stdout.write(h.freeze(*(json.load(open(p)) for p in sys.argv[2:]), "
                "binary=sys.argv[1]))\n")
        site = os.path.join(self.both, "usr/lib/python3/dist-packages")
        r = subprocess.run([sys.executable, "-c", code,
                            os.path.join(self.both, "usr/bin/hpfreeze"),
                            os.path.join(EXAMPLE, "plan.json"),
                            os.path.join(EXAMPLE, "model.json")],
                           capture_output=True, env=dict(env, PYTHONPATH=site), timeout=60)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        where, meta = r.stdout.split(b"\n", 1)
        self.assertEqual(os.path.dirname(where.decode()), site)
        self.assertEqual(meta, read(os.path.join(EXAMPLE, "expected.json")))

    def test_man_pages_render_from_the_package(self):
        if not have("man"):
            self.skipTest("man is not installed")
        for page in ("hpfreeze.1.gz", "hpfreeze-report.1.gz", "hpfreeze-export.1.gz"):
            r = subprocess.run(["man", "--warnings", "-l",
                                os.path.join(self.both, "usr/share/man/man1", page)],
                               capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80"))
            self.assertEqual((r.returncode, r.stderr), (0, ""), page)
            self.assertIn("/usr/share/doc/hpfreeze/copyright", " ".join(r.stdout.split()))

    def test_the_cmake_example_builds_from_the_unpacked_package(self):
        """examples/cmake as a user copies it out of the package: find_package() finds the
        package's config through CMAKE_PREFIX_PATH, and the build freezes the example's plan
        with the packaged binary into the example's meta."""
        if not have("cmake"):
            self.skipTest("cmake is not installed")
        example = os.path.join(self.root, "usr/share/doc/hpfreeze/examples/cmake")
        self.assertEqual(read(os.path.join(example, "CMakeLists.txt")),
                         read(os.path.join(SOURCE, "tests/cmake_consumer/CMakeLists.txt")))
        generator = "Ninja" if have("ninja") else "Unix Makefiles"
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "cmake")
            shutil.copytree(example, source)
            build = os.path.join(tmp, "build")
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith("CMAKE_") and k not in ("MAKEFLAGS", "MFLAGS")}
            for args in (["cmake", "-S", source, "-B", build, "-G", generator,
                          f"-DCMAKE_PREFIX_PATH={os.path.join(self.root, 'usr')}"],
                         ["cmake", "--build", build]):
                r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("Freezing the sharding plan into codegen_meta.json", r.stdout)
            self.assertEqual(read(os.path.join(build, "codegen_meta.json")),
                             read(os.path.join(EXAMPLE, "expected.json")))

    def test_the_cmake_package_points_at_the_binary(self):
        with open(os.path.join(self.root, "usr/share/cmake/hpfreeze/hpfreezeConfig.cmake")) as f:
            config = f.read()
        # Three levels up from share/cmake/hpfreeze is the prefix, /usr.
        self.assertIn('get_filename_component(PACKAGE_PREFIX_DIR '
                      '"${CMAKE_CURRENT_LIST_DIR}/../../../" ABSOLUTE)', config)
        self.assertIn('"${PACKAGE_PREFIX_DIR}/bin/hpfreeze"', config)


if __name__ == "__main__":
    unittest.main()
