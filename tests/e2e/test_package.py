"""The .deb that `cmake --build build --target package` writes (CPack; cmake/hpfreezeDeb.cmake):
its name, file list and Depends, a clean lintian, the DEP-5 copyright with the licences
of what is compiled in, and the bundled example run from the package unpacked into a
scratch root. Built here with the build tree's CPackConfig.cmake into a temporary
directory, so the build tree's own package is left alone."""
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


@unittest.skipIf(sanitized_binary(), "a package of the instrumented binary (it would depend "
                                     "on libasan) is not one anyone ships; the Release suite "
                                     "builds and checks the real one")
@unittest.skipUnless(have("cpack") and have("dpkg-deb") and have("dpkg-shlibdeps"),
                     "cpack, dpkg-deb or dpkg-shlibdeps (dpkg-dev) is not installed")
class Deb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        out = os.path.join(cls.tmp.name, "out")
        cls.cpack = subprocess.run(
            ["cpack", "--config", os.path.join(build_dir(), "CPackConfig.cmake"), "-B", out],
            capture_output=True, text=True, timeout=600)
        if cls.cpack.returncode != 0:
            raise AssertionError(f"cpack failed:\n{cls.cpack.stdout}\n{cls.cpack.stderr}")
        arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                              text=True, check=True).stdout.strip()
        cls.name = f"hpfreeze_{version()}_{arch}.deb"
        cls.debs = sorted(n for n in os.listdir(out) if n.endswith(".deb"))
        cls.deb = os.path.join(out, cls.name)
        cls.root = os.path.join(cls.tmp.name, "root")
        subprocess.run(["dpkg-deb", "-x", cls.deb, cls.root], check=True, timeout=120)
        cls.control = subprocess.run(["dpkg-deb", "-f", cls.deb], capture_output=True,
                                     text=True, check=True).stdout

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def field(self, name):
        m = re.search(rf"^{name}: (.*(?:\n .*)*)$", self.control, re.M)
        return m.group(1) if m else None

    def files(self):
        listing = subprocess.run(["dpkg-deb", "-c", self.deb], capture_output=True, text=True,
                                 check=True).stdout
        return {line.split()[-1].lstrip(".") for line in listing.splitlines()
                if not line.startswith("d")}

    def test_debian_file_name(self):
        self.assertEqual(self.debs, [self.name])

    def test_control(self):
        self.assertEqual((self.field("Package"), self.field("Version")), ("hpfreeze", version()))
        self.assertEqual(self.field("Section"), "devel")
        self.assertTrue(self.field("Description").startswith("freeze a HyperParallel"))

    def test_depends_come_from_the_linked_libraries_and_resolve_here(self):
        depends = [d.strip() for d in self.field("Depends").split(",")]
        names = [re.match(r"[a-z0-9.+-]+", d).group(0) for d in depends]
        # dpkg-shlibdeps: one package per shared library of the binary, no -dev package.
        needed = subprocess.run(["readelf", "-d", os.path.join(self.root, "usr/bin/hpfreeze")],
                                capture_output=True, text=True, check=True).stdout
        sonames = re.findall(r"\(NEEDED\).*\[(.+)\]", needed)
        self.assertTrue(any(s.startswith("libsimdjson.so.") for s in sonames), sonames)
        self.assertTrue(any(re.fullmatch(r"libsimdjson\d+", n) for n in names), depends)
        # OpenSSL's libcrypto (SHA-256 of a bundle's files) is Debian 12's libssl3. The link is
        # --as-needed: the binary needs it once a command calls io/file_digest.h.
        if any(s.startswith("libcrypto.so.") for s in sonames):
            self.assertIn("libssl3", names)
        self.assertIn("libc6", names)
        self.assertIn("libstdc++6", names)
        self.assertIn("python3", names)  # hpfreeze-export
        self.assertFalse([n for n in names if n.endswith("-dev")], depends)
        # Each holds on this Debian: what apt-get install ./hpfreeze_*.deb would need.
        for dep in depends:
            m = re.fullmatch(r"([a-z0-9.+-]+)(?::any)?(?: \((>=|<<|<=|=|>>) ([^)]+)\))?", dep)
            self.assertIsNotNone(m, dep)
            installed = subprocess.run(["dpkg-query", "-W", "-f=${Version}", m.group(1)],
                                       capture_output=True, text=True)
            self.assertEqual(installed.returncode, 0, f"{m.group(1)} is not installed")
            if m.group(2):
                ok = subprocess.run(["dpkg", "--compare-versions", installed.stdout,
                                     {">=": "ge", "<<": "lt", "<=": "le", "=": "eq",
                                      ">>": "gt"}[m.group(2)], m.group(3)])
                self.assertEqual(ok.returncode, 0, f"{dep}: installed {installed.stdout}")

    def test_file_list(self):
        files = self.files()
        doc = "/usr/share/doc/hpfreeze"
        expected = {"/usr/bin/hpfreeze", "/usr/bin/hpfreeze-export",
                    "/usr/share/bash-completion/completions/hpfreeze",
                    "/usr/share/zsh/vendor-completions/_hpfreeze",
                    "/usr/share/fish/vendor_completions.d/hpfreeze.fish",
                    "/usr/lib/python3/dist-packages/hpfreeze_export.py",
                    "/usr/share/hpfreeze/hpfreeze_export.py",
                    "/usr/share/cmake/hpfreeze/hpfreezeConfig.cmake",
                    "/usr/share/cmake/hpfreeze/hpfreezeConfigVersion.cmake",
                    f"{doc}/copyright", f"{doc}/changelog.gz", f"{doc}/README.md",
                    "/usr/share/man/man1/hpfreeze.1.gz", "/usr/share/man/man1/hpfreeze-export.1.gz"}
        expected |= {f"/usr/share/man/man1/hpfreeze-{c}.1.gz" for c in subcommands(BINARY)}
        info = f"/usr/lib/python3/dist-packages/hpfreeze_export-{version()}.dist-info"
        expected |= {f"{info}/METADATA", f"{info}/entry_points.txt", f"{info}/top_level.txt"}
        expected |= {f"{doc}/docs/{n}" for n in os.listdir(os.path.join(SOURCE, "docs"))
                     if n.endswith(".md")}
        expected |= {f"{doc}/docs/recipes/{n}"
                     for n in os.listdir(os.path.join(SOURCE, "docs", "recipes"))}
        self.assertEqual(files, expected)

    def test_the_plain_install_under_usr_is_the_package(self):
        """`cmake --install` to /usr gives the same files, but for Debian's rules: man pages
        and changelog gzipped, the licence text only through the copyright file."""
        with tempfile.TemporaryDirectory() as destdir:
            subprocess.run(["cmake", "--install", build_dir(), "--prefix", "/usr"],
                           env=dict(os.environ, DESTDIR=destdir), capture_output=True,
                           check=True, timeout=120)
            plain = {"/" + os.path.relpath(os.path.join(d, n), destdir)
                     for d, _, names in os.walk(destdir) for n in names}
            same = []
            for f in sorted(plain):
                if f.endswith("/LICENSE"):
                    continue
                packaged = f + ".gz" if re.search(r"/man1/.*\.1$|/doc/hpfreeze/changelog$",
                                                  f) else f
                self.assertIn(packaged, self.files())
                if packaged == f and f != "/usr/bin/hpfreeze":  # the packaged one is stripped
                    same.append(filecmp.cmp(destdir + f, self.root + f, shallow=False) or f)
                elif packaged != f:
                    with gzip.open(self.root + packaged) as g:
                        same.append(g.read() == read(destdir + f) or f)
            self.assertEqual([x for x in same if x is not True], [])
            self.assertEqual(len(plain) - 1, len(self.files()))

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
        r = subprocess.run(["lintian", "--fail-on", "error,warning", self.deb],
                           capture_output=True, text=True, timeout=600)
        tags = [line for line in r.stdout.splitlines() if re.match(r"[EW]: ", line)]
        self.assertEqual((r.returncode, tags), (0, []), r.stdout + r.stderr)

    def test_maintainer_scripts(self):
        with tempfile.TemporaryDirectory() as control:
            subprocess.run(["dpkg-deb", "-e", self.deb, control], check=True)
            for script in ("postinst", "prerm"):
                path = os.path.join(control, script)
                self.assertTrue(os.access(path, os.X_OK), script)
                r = subprocess.run(["sh", "-n", path], capture_output=True, text=True)
                self.assertEqual((r.returncode, r.stderr), (0, ""), script)
                self.assertIn("-p hpfreeze", read(path).decode(), script)

    def test_the_example_runs_from_the_unpacked_package(self):
        binary = os.path.join(self.root, "usr/bin/hpfreeze")
        r = subprocess.run([binary, "freeze", "--plan", os.path.join(EXAMPLE, "plan.json"),
                            "--model", os.path.join(EXAMPLE, "model.json")],
                           capture_output=True, timeout=60)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout, read(os.path.join(EXAMPLE, "expected.json")))
        r = subprocess.run([binary, "--version"], capture_output=True, text=True)
        self.assertEqual(r.stdout, f"hpfreeze {version()}\n")

    def test_the_exporter_runs_from_the_unpacked_package(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        if os.path.exists("/usr/bin/python3"):
            r = subprocess.run([os.path.join(self.root, "usr/bin/hpfreeze-export"), "--help"],
                               capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            self.assertTrue(r.stdout.startswith("usage: hpfreeze-export MODULE:FUNCTION"))
        code = ("import json, sys, hpfreeze_export as h\n"
                "print(h.__file__)\n"
                "sys.stdout.write(h.freeze(*(json.load(open(p)) for p in sys.argv[2:]), "
                "binary=sys.argv[1]))\n")
        site = os.path.join(self.root, "usr/lib/python3/dist-packages")
        r = subprocess.run([sys.executable, "-c", code,
                            os.path.join(self.root, "usr/bin/hpfreeze"),
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
                                os.path.join(self.root, "usr/share/man/man1", page)],
                               capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80"))
            self.assertEqual((r.returncode, r.stderr), (0, ""), page)
            self.assertIn("/usr/share/doc/hpfreeze/copyright", " ".join(r.stdout.split()))

    def test_the_cmake_package_points_at_the_binary(self):
        with open(os.path.join(self.root, "usr/share/cmake/hpfreeze/hpfreezeConfig.cmake")) as f:
            config = f.read()
        # Three levels up from share/cmake/hpfreeze is the prefix, /usr.
        self.assertIn('get_filename_component(PACKAGE_PREFIX_DIR '
                      '"${CMAKE_CURRENT_LIST_DIR}/../../../" ABSOLUTE)', config)
        self.assertIn('"${PACKAGE_PREFIX_DIR}/bin/hpfreeze"', config)


if __name__ == "__main__":
    unittest.main()
