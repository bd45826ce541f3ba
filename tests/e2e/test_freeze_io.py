"""`hpfreeze freeze` input/output behaviour: stdin, -o, atomic replacement, --if-changed."""
import os
import subprocess
import unittest

from hpf import BINARY, TempDirTest, case, env, read, run


EXPECTED = read(case("moe-qwen-2l", "expected.json"))
PLAN = case("moe-qwen-2l", "plan.json")
MODEL = case("moe-qwen-2l", "model.json")


class BundledExample(unittest.TestCase):
    def test_readme_example_prints_the_expected_meta(self):
        from hpf import TESTDATA
        example = os.path.join(TESTDATA, "example")
        r = run("freeze", "--plan", os.path.join(example, "plan.json"), "--model",
                os.path.join(example, "model.json"))
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(r.stdout, read(os.path.join(example, "expected.json")))


class FreezeOutput(TempDirTest):
    def freeze(self, *extra, stdin=None, plan=PLAN, model=MODEL):
        return run("freeze", "--plan", plan, "--model", model, *extra, stdin=stdin)

    def test_stdout_is_exactly_the_meta(self):
        r = self.freeze()
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, EXPECTED, b""))
        r = self.freeze("-o", "-")
        self.assertEqual((r.returncode, r.stdout), (0, EXPECTED))

    def test_plan_model_and_base_from_stdin(self):
        r = self.freeze(plan="-", stdin=read(PLAN))
        self.assertEqual((r.returncode, r.stdout), (0, EXPECTED))
        r = self.freeze(model="-", stdin=read(MODEL))
        self.assertEqual((r.returncode, r.stdout), (0, EXPECTED))
        r = run("freeze", "--plan", case("tiny-base", "plan.json"), "--model",
                case("tiny-base", "model.json"), "--base", "-",
                stdin=read(case("tiny-base", "base.json")))
        self.assertEqual((r.returncode, r.stdout), (0, read(case("tiny-base", "expected.json"))))

    def test_two_stdin_inputs_is_a_usage_error(self):
        r = self.freeze(plan="-", model="-", stdin=b"{}")
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"at most one of --plan, --model and --base may be '-'", r.stderr)

    def test_writes_file_with_umask_mode_and_no_stdout(self):
        out = os.path.join(self.dir, "codegen_meta.json")
        r = self.freeze("-o", out)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(read(out), EXPECTED)
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(os.stat(out).st_mode & 0o777, 0o666 & ~umask)
        self.assertEqual(os.listdir(self.dir), ["codegen_meta.json"])

    def test_failure_leaves_existing_output_untouched(self):
        out = os.path.join(self.dir, "codegen_meta.json")
        with open(out, "wb") as f:
            f.write(b"previous bytes")
        os.utime(out, (1_000_000_000, 1_000_000_000))
        for bad in ("err-syntax", "err-no-such-param", "err-duplicate-key"):
            r = run("freeze", "--plan", case(bad, "plan.json"), "--model", case(bad, "model.json"),
                    "-o", out)
            self.assertEqual(r.returncode, 1, bad)
            self.assertEqual(read(out), b"previous bytes", bad)
            self.assertEqual(os.stat(out).st_mtime, 1_000_000_000, bad)
            self.assertEqual(os.listdir(self.dir), ["codegen_meta.json"], bad)
        r = self.freeze("-o", out, plan=os.path.join(self.dir, "missing.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"missing.json: cannot open: No such file or directory", r.stderr)
        self.assertEqual(read(out), b"previous bytes")

    def test_if_changed_keeps_mtime(self):
        out = os.path.join(self.dir, "codegen_meta.json")
        self.assertEqual(self.freeze("-o", out).returncode, 0)
        os.utime(out, (1_000_000_000, 1_000_000_000))
        inode = os.stat(out).st_ino
        r = self.freeze("-o", out, "--if-changed")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(os.stat(out).st_mtime, 1_000_000_000)
        self.assertEqual(os.stat(out).st_ino, inode)
        # Without --if-changed the file is replaced (new mtime) with the same bytes.
        r = self.freeze("-o", out)
        self.assertEqual(r.returncode, 0)
        self.assertNotEqual(os.stat(out).st_mtime, 1_000_000_000)
        self.assertEqual(read(out), EXPECTED)

    def test_if_changed_rewrites_different_content(self):
        out = os.path.join(self.dir, "codegen_meta.json")
        with open(out, "wb") as f:
            f.write(b"{}")
        os.utime(out, (1_000_000_000, 1_000_000_000))
        self.assertEqual(self.freeze("-o", out, "--if-changed").returncode, 0)
        self.assertEqual(read(out), EXPECTED)
        self.assertNotEqual(os.stat(out).st_mtime, 1_000_000_000)

    def test_stdout_to_dev_full_fails_with_2(self):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([BINARY, "freeze", "--plan", PLAN, "--model", MODEL], stdout=full,
                               stderr=subprocess.PIPE, env=env())
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"cannot write to stdout: No space left on device", p.stderr)

    def test_output_directory_missing_is_an_io_error(self):
        r = self.freeze("-o", os.path.join(self.dir, "nope", "out.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"out.json: cannot write", r.stderr)

    def test_output_may_be_an_input(self):
        plan = os.path.join(self.dir, "plan.json")
        with open(plan, "wb") as f:
            f.write(read(PLAN))
        r = self.freeze("-o", plan, plan=plan)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read(plan), EXPECTED)

    def test_negative_dim_warning_and_strict(self):
        r = run("freeze", "--plan", case("corners", "plan.json"), "--model",
                case("corners", "model.json"))
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, read(case("corners", "expected.json")))
        # The plan's warning, then the model's (the case leaves embed.weight unplanned).
        plan, model = case("corners", "plan.json"), case("corners", "model.json")
        self.assertEqual(r.stderr.decode().splitlines(), [
            f"hpfreeze: warning: {plan}: /modules/blk/params/w/cp: 1 placement(s) with a "
            "negative dim, first here: S(-k) reads back as an uneven shard of dim k-1; written "
            "verbatim as upstream does",
            f"hpfreeze: warning: {model}: /parameters/embed.weight: 1 trainable parameter is not "
            f"covered by any planned parameter of {plan}: 'embed.weight' (upstream's preflight "
            "refuses it at run time) [HPF305]"])
        r = run("freeze", "--plan", case("corners", "plan.json"), "--model",
                case("corners", "model.json"), "--strict")
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertIn(b"hpfreeze: error: ", r.stderr)
        r = run("-q", "freeze", "--plan", case("corners", "plan.json"), "--model",
                case("corners", "model.json"))
        self.assertEqual((r.returncode, r.stderr), (0, b""))


if __name__ == "__main__":
    unittest.main()
