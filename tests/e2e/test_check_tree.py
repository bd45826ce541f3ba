"""End-to-end tests of `hpfreeze check PATH...` and `--bundle` on trees of generated bundles
(docs/cli.md, "Several metas" and "Bundles"). The bundles are written by hpf.write_bundle,
their sha256s and line counts by Python's hashlib and text mode; every expected line is
written here from the docs' rules, never taken from the program's output."""
import hashlib
import json
import os
import shutil
import unittest

from hpf import TempDirTest, case, read, run, write_bundle

NO_BUNDLE = "the meta records no generated bundle (outputs is empty): nothing to verify [HPF401]"
# What a run of the tree below verified: the closing note says it.
VERIFIED = "2 bundles verified, 1 meta without a bundle"
EMPTY_PLAN = "/param_plan: param_plan is empty: the meta plans no boundary [HPF102]"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def value_position(meta_text, key):
    """Line and byte column (1-based) of outputs[key]'s value in a meta json.dump wrote
    with indent=2: the `{` after `"key": ` inside "outputs"."""
    start = meta_text.index('\n  "outputs": {')
    at = meta_text.index('\n    "%s": ' % key, start) + len('\n    "%s": ' % key)
    line = meta_text.count("\n", 0, at) + 1
    column = len(meta_text[meta_text.rindex("\n", 0, at) + 1:at].encode()) + 1
    return line, column


class BundleTree(TempDirTest):
    """Three metas below one directory: two bundles (names that sort differently in byte
    order and in a locale's), one meta freeze wrote without --base; and metas in every
    directory the walk skips, which would each be an error if checked."""

    def setUp(self):
        super().setUp()
        self.m = write_bundle(self.path("Zeta", "generated"), model_name="M")
        self.q = write_bundle(self.path("alpha", "beta"), model_name="Qwen3-Moe")
        shutil.copy(case("tiny", "expected.json"), self.path("alpha", "codegen_meta.json"))
        for skipped in (".git", "venv", ".venv", "__pycache__", ".codegen_tmp_1",
                        ".codegen_old_2", os.path.join("alpha", ".git")):
            write(self.path(skipped, "codegen_meta.json"), '{"param_plan": {}}')
        # A symlinked directory is not followed, wherever it leads.
        write(os.path.join(self.dir + "_outside", "codegen_meta.json"), '{"param_plan": {}}')
        self.addCleanup(shutil.rmtree, self.dir + "_outside")
        os.symlink(self.dir + "_outside", self.path("linked"))

    def check(self, *args):
        r = run("check", *args, cwd=self.dir)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def test_clean_tree(self):
        # The meta without a bundle is counted in the closing note, not noted on every run.
        self.assertEqual(self.check(".", "--bundle"), (0, "", (
            "hpfreeze: note: check: 0 errors, 0 warnings, 0 notes in 3 metas; %s\n" % VERIFIED)))
        # Without --bundle nothing is read of the bundles, and the no-bundle note is not given.
        self.assertEqual(self.check("."), (
            0, "", "hpfreeze: note: check: 0 errors, 0 warnings, 0 notes in 3 metas\n"))

    def test_edited_generated_file(self):
        path = self.path("Zeta", "generated", self.m)
        before = hashlib.sha256(read(path)).hexdigest()
        with open(path, "a", encoding="utf-8") as f:
            f.write("# edited by hand\n")
        after = hashlib.sha256(read(path)).hexdigest()
        self.assertNotEqual(before, after)
        # The finding names the next step.
        drift = ("Zeta/generated/codegen_meta.json: /outputs/modeling: Zeta/generated/%s: hash "
                 "drift (recorded sha256 %s, actual %s; recorded 5 lines, actual 6): regenerate "
                 "the bundle or revert Zeta/generated/%s" % (self.m, before, after, self.m))
        self.assertEqual(self.check(".", "--bundle"), (1, "", (
            "hpfreeze: error: %s [HPF406]\n"
            "hpfreeze: note: check: 1 error, 0 warnings, 0 notes in 3 metas; %s\n"
            % (drift, VERIFIED))))
        # -q: the errors only, no notes and no closing note; -qq: nothing.
        self.assertEqual(self.check(".", "--bundle", "-q"),
                         (1, "", "hpfreeze: error: %s [HPF406]\n" % drift))
        self.assertEqual(self.check("-qq", ".", "--bundle"), (1, "", ""))
        # With --message-format github the annotation is on the generated file, the meta's
        # line and column of /outputs/modeling starting the message.
        meta_text = read(self.path("Zeta", "generated", "codegen_meta.json")).decode()
        line, column = value_position(meta_text, "modeling")
        code, out, err = self.check(".", "--bundle", "--message-format", "github")
        self.assertEqual(code, 1)
        self.assertEqual(err.splitlines()[0], (
            "::error file=Zeta/generated/%s::Zeta/generated/codegen_meta.json:%d:%d: "
            "/outputs/modeling: Zeta/generated/%s: hash drift (recorded sha256 %s, actual %s; "
            "recorded 5 lines, actual 6): regenerate the bundle or revert Zeta/generated/%s "
            "[HPF406]" % (self.m, line, column, self.m, before, after, self.m)))
        self.assertEqual(err.splitlines()[-1],
                         "::notice::check: 1 error, 0 warnings, 0 notes in 3 metas; " + VERIFIED)
        # --json: the findings on stdout in walk order, file=meta, pointer=/outputs/KEY.
        code, out, err = self.check(".", "--bundle", "--json")
        self.assertEqual(code, 1)
        self.assertEqual([json.loads(x) for x in out.splitlines()], [
            {"severity": "error", "code": "HPF406", "file": "Zeta/generated/codegen_meta.json",
             "pointer": "/outputs/modeling", "message": drift.split(": ", 2)[2]}])
        self.assertEqual(err, "hpfreeze: note: check: 1 error, 0 warnings, 0 notes in 3 metas; %s\n"
                         % VERIFIED)

    def test_walk_order_and_skipped_directories(self):
        # Every meta with an error, so each one checked shows: the walk's order is byte
        # order per directory, depth first ("beta" < "codegen_meta.json"; "Zeta" < "alpha").
        for meta in ("Zeta/generated", "alpha/beta", "alpha"):
            write(self.path(meta, "codegen_meta.json"), '{"param_plan": {}}')
        self.assertEqual(self.check("."), (1, "", (
            "hpfreeze: error: Zeta/generated/codegen_meta.json: %s\n"
            "hpfreeze: error: alpha/beta/codegen_meta.json: %s\n"
            "hpfreeze: error: alpha/codegen_meta.json: %s\n"
            "hpfreeze: note: check: 3 errors, 0 warnings, 0 notes in 3 metas\n"
            % (EMPTY_PLAN, EMPTY_PLAN, EMPTY_PLAN))))
        # A directory named as a PATH is walked whatever its name; paths keep their order.
        self.assertEqual(self.check("venv", "alpha/"), (1, "", (
            "hpfreeze: error: venv/codegen_meta.json: %s\n"
            "hpfreeze: error: alpha/beta/codegen_meta.json: %s\n"
            "hpfreeze: error: alpha/codegen_meta.json: %s\n"
            "hpfreeze: note: check: 3 errors, 0 warnings, 0 notes in 3 metas\n"
            % (EMPTY_PLAN, EMPTY_PLAN, EMPTY_PLAN))))

    def test_one_meta_prints_what_it_always_printed(self):
        # A directory with one meta, and the meta itself: no closing note; -v's count line.
        meta = "Zeta/generated/codegen_meta.json"
        self.assertEqual(self.check("Zeta", "--bundle"), (0, "", ""))
        self.assertEqual(self.check(meta, "--bundle", "-v"),
                         (0, "", "hpfreeze: debug: check: 0 errors, 0 warnings, 0 notes\n"))

    def test_exit_status_is_the_worst(self):
        # A meta named on its own keeps its note: the user asked for that one.
        self.assertEqual(self.check("Zeta", "alpha/codegen_meta.json", "missing.json", "--bundle"), (
            2, "", "hpfreeze: note: alpha/codegen_meta.json: /outputs: %s\n"
                   "hpfreeze: error: missing.json: cannot open: No such file or directory\n"
                   "hpfreeze: note: check: 1 error, 0 warnings, 1 note in 3 metas; 1 bundle "
                   "verified, 1 meta without a bundle\n" % NO_BUNDLE))
        os.remove(self.path("alpha", "beta", "__init__.py"))
        code, _, err = self.check(".", "--bundle", "-q")
        self.assertEqual(code, 1)
        self.assertEqual(err, (
            "hpfreeze: error: alpha/beta/codegen_meta.json: /outputs/init: alpha/beta/__init__.py: "
            "cannot open: No such file or directory (recorded sha256 %s): regenerate the bundle or "
            "restore alpha/beta/__init__.py [HPF405]\n"
            % hashlib.sha256(("from .%s import Model\n" % self.q[:-3]).encode()).hexdigest()))

    def test_usage_errors(self):
        model = case("tiny", "model.json")
        self.assertEqual(self.check(".", "--model", model), (
            2, "", "hpfreeze: error: --model checks one meta against a model, and this run has "
                   "3 metas\n"))
        self.assertEqual(self.check("Zeta/generated/codegen_meta.json", "alpha", "--model", model), (
            2, "", "hpfreeze: error: --model checks one meta against a model, and this run has "
                   "3 metas\n"))
        os.mkdir(self.path("empty"))
        self.assertEqual(self.check("empty"), (
            2, "", "hpfreeze: error: empty: no codegen_meta.json in this directory or below\n"))
        self.assertEqual(self.check("-", "--bundle"), (
            2, "", "hpfreeze: error: --bundle needs META as a path: a meta on stdin has no "
                   "bundle\n"))
        self.assertEqual(self.check("alpha", "-"), (
            2, "", "hpfreeze: error: META '-' (stdin) must be the only META\n"))
        # A pipe or FIFO can be read once: named twice among the metas it is refused before
        # anything is read (else the second read would find it empty, or wait on a FIFO).
        meta = read(case("tiny", "expected.json"))
        r = run("check", "/dev/stdin", "alpha", "/dev/stdin", stdin=meta, cwd=self.dir)
        self.assertEqual((r.returncode, r.stdout, r.stderr.decode()), (
            2, b"", "hpfreeze: error: /dev/stdin: META 1 and META 3 name the same pipe or "
                    "socket, which can be read only once\n"))
        os.mkfifo(self.path("fifo"))
        self.assertEqual(self.check("fifo", "fifo"), (
            2, "", "hpfreeze: error: fifo: META 1 and META 2 name the same pipe or socket, "
                   "which can be read only once\n"))
        # A regular file may be named twice: it is checked twice.
        self.assertEqual(self.check("alpha/codegen_meta.json", "alpha/codegen_meta.json")[0], 0)


if __name__ == "__main__":
    unittest.main()
