"""I/O faults around `hpfreeze freeze`: every one ends in exit 2 and one clear error line, or
in a correct result; an existing output is never damaged.

Permission cases need a process that permission bits apply to. Tests usually run as root,
which bypasses them: the binary then runs as nobody (uid/gid 65534) under setpriv, and the
case is skipped, with the reason, when setpriv is missing. Nobody may not reach the checkout
(a clone under a 0700 home): such runs use copies of the binary and of every input, made in
a temporary directory that nobody can read.
"""
import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import unittest

from hpf import BINARY, TempDirTest, case, env, read, sanitized_binary

TINY = {name: case("tiny-base", name) for name in ("plan.json", "model.json", "base.json")}
NOBODY = 65534


EXPECTED = read(case("tiny-base", "expected.json"))
EXPECTED_NO_BASE = read(case("tiny", "expected.json"))


def umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def unprivileged_prefix():
    """Command prefix under which permission bits apply, or None (with a reason)."""
    if os.geteuid() != 0:
        return [], None
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None, "running as root, which bypasses permission bits, and setpriv is missing"
    return [setpriv, "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"], None


_READABLE_COPIES = {}


def readable_copy(path):
    """A copy of path (the binary or an input) that any user can read and run."""
    if path not in _READABLE_COPIES:
        if not _READABLE_COPIES:
            top = tempfile.mkdtemp(prefix="hpfreeze_nobody_")
            os.chmod(top, 0o755)
            atexit.register(shutil.rmtree, top, True)
            _READABLE_COPIES[None] = top
        dst = os.path.join(_READABLE_COPIES[None], "%d-%s" % (len(_READABLE_COPIES),
                                                              os.path.basename(path)))
        shutil.copyfile(path, dst)
        os.chmod(dst, 0o755)
        _READABLE_COPIES[path] = dst
    return _READABLE_COPIES[path]


class FaultTest(TempDirTest):
    """Runs of freeze in a directory unprivileged runs can reach, with what they check."""

    def setUp(self):
        super().setUp()
        os.chmod(self.dir, 0o755)  # reachable by the unprivileged runs

    def tearDown(self):
        for root, dirs, _ in os.walk(self.dir):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        super().tearDown()

    def copy(self, src, name, mode=0o644):
        dst = self.path(name)
        shutil.copyfile(src, dst)
        os.chmod(dst, mode)
        return dst

    def freeze(self, *args, plan=TINY["plan.json"], model=TINY["model.json"], base=None,
               prefix=(), **kwargs):
        binary = BINARY
        if prefix:
            # Under another user: nothing may come from the (possibly 0700) checkout.
            binary, plan, model = (readable_copy(p) if not p.startswith(self.dir) else p
                                   for p in (BINARY, plan, model))
            if base is not None and not base.startswith(self.dir):
                base = readable_copy(base)
        cmd = [*prefix, binary, "freeze", "--plan", plan, "--model", model]
        if base is not None:
            cmd += ["--base", base]
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        return subprocess.run(cmd + list(args), timeout=60, env=env(), **kwargs)

    def assert_io_error(self, r, line):
        self.assertEqual((r.returncode, r.stdout, r.stderr.decode()), (2, b"", line + "\n"))

    def existing_output(self, name="out.json"):
        out = self.path(name)
        with open(out, "wb") as f:
            f.write(b"old bytes")
        os.chmod(out, 0o644)
        return out

    def assert_only(self, *names, directory=None):
        self.assertEqual(sorted(os.listdir(directory or self.dir)), sorted(names))

    def unprivileged(self):
        prefix, reason = unprivileged_prefix()
        if prefix is None:
            self.skipTest(reason)
        return prefix


class IoFaults(FaultTest):
    # -- inputs ----------------------------------------------------------------------------
    def test_input_missing(self):
        out = self.existing_output()
        r = self.freeze("-o", out, plan=self.path("missing.json"))
        self.assert_io_error(r, "hpfreeze: error: %s: cannot open: No such file or directory"
                             % self.path("missing.json"))
        self.assertEqual(read(out), b"old bytes")

    def test_input_unreadable(self):
        prefix = self.unprivileged()
        plan = self.copy(TINY["plan.json"], "plan.json", mode=0o200)
        out = self.existing_output()
        os.chmod(out, 0o666)  # nobody may replace it: only the plan's mode is in the way
        os.chmod(self.dir, 0o777)
        r = self.freeze("-o", out, plan=plan, prefix=prefix)
        self.assert_io_error(r, "hpfreeze: error: %s: cannot open: Permission denied" % plan)
        self.assertEqual(read(out), b"old bytes")
        # Sanity: the same run with a readable plan succeeds, so the error was the mode.
        os.chmod(plan, 0o644)
        r = self.freeze("-o", out, plan=plan, prefix=prefix)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(read(out), EXPECTED_NO_BASE)

    def test_input_is_a_directory(self):
        for flag in ("plan", "model", "base"):
            r = self.freeze("-o", self.path("out.json"), **{flag: self.dir})
            self.assert_io_error(r, "hpfreeze: error: %s: is a directory" % self.dir)
        self.assert_only()

    def test_input_is_a_fifo(self):
        fifo = self.path("plan.fifo")
        os.mkfifo(fifo)

        def feed(data):
            with open(fifo, "wb") as f:
                f.write(data)

        for data, rc, stdout in ((read(TINY["plan.json"]), 0, EXPECTED_NO_BASE),
                                 (b'{"modules": ', 1, b"")):
            # A daemon: should hpfreeze never open the FIFO, the blocked writer cannot hang us.
            writer = threading.Thread(target=feed, args=(data,), daemon=True)
            writer.start()
            r = self.freeze(plan=fifo)
            writer.join(timeout=30)
            self.assertFalse(writer.is_alive(), "hpfreeze did not read the FIFO")
            self.assertEqual((r.returncode, r.stdout), (rc, stdout), r.stderr)
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: %s:1:13: unexpected end of input\n" % fifo)

    # -- output files ----------------------------------------------------------------------
    def test_output_directory_missing(self):
        out = self.path("no-such-dir", "out.json")
        r = self.freeze("-o", out)
        self.assert_io_error(r, "hpfreeze: error: %s: cannot write: No such file or directory"
                             % out)
        self.assert_only()

    def test_output_directory_read_only(self):
        prefix = self.unprivileged()
        ro = self.path("ro")
        os.mkdir(ro)
        out = self.existing_output(os.path.join("ro", "out.json"))
        os.chmod(out, 0o666)  # writable itself: only the directory refuses a new entry
        os.chmod(ro, 0o555)
        r = self.freeze("-o", out, prefix=prefix)
        self.assert_io_error(r, "hpfreeze: error: %s: cannot write: Permission denied" % out)
        self.assertEqual(read(out), b"old bytes")
        self.assert_only("out.json", directory=ro)

    def test_output_path_is_a_directory(self):
        os.mkdir(self.path("out.json"))
        r = self.freeze("-o", self.path("out.json"))
        self.assert_io_error(r, "hpfreeze: error: %s: is a directory" % self.path("out.json"))
        r = self.freeze("-o", self.path("missing-dir") + "/")
        self.assert_io_error(r, "hpfreeze: error: %s/: is a directory" % self.path("missing-dir"))
        self.assert_only("out.json")
        self.assert_only(directory=self.path("out.json"))

    def test_output_path_is_one_of_the_inputs(self):
        # Inputs are read whole before anything is written: the result is still correct.
        for role in ("plan", "model", "base"):
            files = {r: self.copy(TINY[r + ".json"], r + ".json")
                     for r in ("plan", "model", "base")}
            r = self.freeze("-o", files[role], **files)
            self.assertEqual((r.returncode, r.stderr), (0, b""), role)
            self.assertEqual(read(files[role]), EXPECTED, role)
            self.assert_only("plan.json", "model.json", "base.json")
            # A second run now reads the output as that input: rejected, and left alone.
            r = self.freeze("-o", files[role], **files)
            self.assertEqual(r.returncode, 0 if role == "base" else 1, (role, r.stderr))
            self.assertEqual(read(files[role]), EXPECTED, role)

    def test_output_symlink_is_written_through(self):
        os.mkdir(self.path("real"))
        target = self.existing_output(os.path.join("real", "meta.json"))
        os.symlink(os.path.join("real", "meta.json"), self.path("link.json"))  # relative
        os.symlink(self.path("link.json"), self.path("chain.json"))  # absolute, to a link
        for link in ("link.json", "chain.json"):
            r = self.freeze("-o", self.path(link))
            self.assertEqual((r.returncode, r.stderr), (0, b""))
            self.assertTrue(os.path.islink(self.path(link)))
            self.assertEqual(read(target), EXPECTED_NO_BASE)
            self.assertEqual(os.stat(target).st_mode & 0o777, 0o644)  # kept
            self.assert_only("link.json", "chain.json", "real")
            self.assert_only("meta.json", directory=self.path("real"))
        # A dangling link: its target is created, the link stays.
        os.symlink(os.path.join("real", "new.json"), self.path("dangling.json"))
        r = self.freeze("-o", self.path("dangling.json"))
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(read(self.path("real", "new.json")), EXPECTED_NO_BASE)
        self.assertTrue(os.path.islink(self.path("dangling.json")))
        # A loop cannot be written through.
        os.symlink("loop-b", self.path("loop-a"))
        os.symlink("loop-a", self.path("loop-b"))
        r = self.freeze("-o", self.path("loop-a"))
        self.assert_io_error(r, "hpfreeze: error: %s: cannot write: Too many levels of symbolic "
                             "links" % self.path("loop-a"))

    def test_created_files_get_0666_minus_umask(self):
        # A new file gets what `>` would create; a replaced one keeps its mode, as `>` does.
        out = self.path("out.json")
        for mask in (0o022, 0o027, 0o077, 0o002, 0o000):
            for existing_mode in (None, 0o600, 0o755):
                if existing_mode is None:
                    if os.path.exists(out):
                        os.unlink(out)
                else:
                    os.chmod(out, existing_mode)
                r = self.freeze("-o", out, preexec_fn=lambda m=mask: os.umask(m))
                self.assertEqual((r.returncode, r.stderr), (0, b""))
                self.assertEqual(os.stat(out).st_mode & 0o777,
                                 0o666 & ~mask if existing_mode is None else existing_mode,
                                 (oct(mask), existing_mode))
                self.assert_only("out.json")

    # -- stdout ----------------------------------------------------------------------------
    def test_stdout_to_dev_full(self):
        with open("/dev/full", "wb") as full:
            r = self.freeze(stdout=full)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, b"hpfreeze: error: cannot write to stdout: No space left on "
                                   b"device\n")

    def test_stdout_closed_early(self):
        # Large enough to fill the pipe: the write is still going when head exits.
        n = 20000
        plan = self.path("plan.json")
        model = self.path("model.json")
        with open(plan, "w") as f:
            f.write('{"modules": {%s}}' % ",".join('"m%d": {}' % i for i in range(n)))
        with open(model, "w") as f:
            f.write('{"modules": {%s}}' % ",".join('"m%d": "M"' % i for i in range(n)))
        script = ('"$0" freeze --plan "$1" --model "$2" | head -c 10; '
                  'echo "status=${PIPESTATUS[0]}" >&2')
        r = subprocess.run(["bash", "-c", script, BINARY, plan, model], capture_output=True,
                           timeout=60, env=env())
        self.assertEqual(r.stdout, b'{\n  "bound')
        # Killed quietly by SIGPIPE (128 + 13): no error message, no partial complaint.
        self.assertEqual(r.stderr, b"status=%d\n" % (128 + signal.SIGPIPE))


def private_mount_prefix():
    """Command prefix running a shell in a private mount namespace, or None (with a reason):
    its mounts are seen by nothing outside it and vanish with it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, "unshare is missing"
    if os.geteuid() != 0:
        return None, "a private mount namespace needs root"
    cmd = [unshare, "-m", "--propagation", "private"]
    with tempfile.TemporaryDirectory() as probe:
        r = subprocess.run(cmd + ["mount", "-t", "tmpfs", "-o", "size=4k", "none", probe],
                           capture_output=True, timeout=60)
    if r.returncode != 0:
        return None, "cannot mount in a private mount namespace here: %s" % (
            r.stderr.decode().strip())
    return cmd, None


class IfChangedWithoutWriteAccess(FaultTest):
    """--if-changed needs no write access when the bytes are already there; a refused write
    names its real reason."""

    def unchanged(self, out, r):
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        st = os.stat(out)
        self.assertEqual((st.st_ino, st.st_mtime_ns), self.identity, out)

    def holding(self, name, data, mode):
        out = self.path(name)
        if os.path.exists(out):
            os.chmod(out, 0o644)  # a 0444 file of an earlier step binds its owner too
        with open(out, "wb") as f:
            f.write(data)
        os.chmod(out, mode)
        st = os.stat(out)
        self.identity = (st.st_ino, st.st_mtime_ns)
        return out

    def test_read_only_file_holding_the_bytes_is_left_alone(self):
        prefix = self.unprivileged()
        os.chmod(self.dir, 0o777)  # only the file's mode is in the way
        out = self.holding("out.json", EXPECTED_NO_BASE, 0o444)
        self.unchanged(out, self.freeze("-o", out, "--if-changed", prefix=prefix))
        refused = "hpfreeze: error: %s: cannot write: Permission denied" % out
        self.assert_io_error(self.freeze("-o", out, prefix=prefix), refused)
        out = self.holding("out.json", b"old bytes", 0o444)
        self.assert_io_error(self.freeze("-o", out, "--if-changed", prefix=prefix), refused)
        self.assertEqual(read(out), b"old bytes")
        self.assert_only("out.json")

    def test_directory_without_write_permission_holding_the_bytes_is_left_alone(self):
        prefix = self.unprivileged()
        ro = self.path("ro")
        os.mkdir(ro)
        out = self.holding(os.path.join("ro", "out.json"), EXPECTED_NO_BASE, 0o666)
        os.chmod(ro, 0o555)
        self.unchanged(out, self.freeze("-o", out, "--if-changed", prefix=prefix))
        os.chmod(ro, 0o755)
        out = self.holding(os.path.join("ro", "out.json"), b"old bytes", 0o666)
        os.chmod(ro, 0o555)
        self.assert_io_error(self.freeze("-o", out, "--if-changed", prefix=prefix),
                             "hpfreeze: error: %s: cannot write: Permission denied" % out)
        self.assertEqual(read(out), b"old bytes")
        self.assert_only("out.json", directory=ro)

    def test_read_only_file_system(self):
        prefix, reason = private_mount_prefix()
        if prefix is None:
            self.skipTest(reason)
        ro = self.path("ro")
        os.mkdir(ro)

        def freeze_on_read_only(*args):
            # The directory is bound read-only onto itself, in a namespace of this run only.
            script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && '
                      'exec "$@"')
            cmd = [BINARY, "freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"],
                   *args]
            return subprocess.run(prefix + ["bash", "-c", script, "bash", ro, *cmd],
                                  capture_output=True, timeout=60, env=env())

        out = self.holding(os.path.join("ro", "out.json"), EXPECTED_NO_BASE, 0o644)
        self.unchanged(out, freeze_on_read_only("-o", out, "--if-changed"))
        refused = "hpfreeze: error: %s: cannot write: Read-only file system"
        self.assert_io_error(freeze_on_read_only("-o", out), refused % out)
        other = self.holding(os.path.join("ro", "other.json"), b"old bytes", 0o644)
        self.assert_io_error(freeze_on_read_only("-o", other, "--if-changed"), refused % other)
        new = os.path.join(ro, "new.json")
        self.assert_io_error(freeze_on_read_only("-o", new), refused % new)
        self.assertEqual(read(other), b"old bytes")
        self.assert_only("out.json", "other.json", directory=ro)


class FileSizeLimit(FaultTest):
    """Past `ulimit -f` a write fails like any other (EFBIG): exit 2, one line, the old
    output intact, no temporary file; never death by SIGXFSZ."""

    def big_inputs(self):
        # An output of about 40 KB, so that a limit of 1 block (1024 bytes) stops it midway.
        n = 400
        plan, model = self.path("plan.json"), self.path("model.json")
        with open(plan, "w") as f:
            f.write('{"modules": {%s}}' % ",".join('"m%d": {}' % i for i in range(n)))
        with open(model, "w") as f:
            f.write('{"modules": {%s}}' % ",".join('"m%d": "M"' % i for i in range(n)))
        return plan, model

    def limited(self, script, *args, prefix=()):
        return subprocess.run([*prefix, "bash", "-c", "ulimit -f 1; " + script, BINARY, *args],
                              capture_output=True, timeout=60, env=env(), cwd=self.dir)

    def test_a_write_past_the_limit_is_an_error_not_a_signal(self):
        plan, model = self.big_inputs()
        too_large = "cannot write: File too large"
        out = self.existing_output()
        r = self.limited('exec "$0" freeze --plan "$1" --model "$2" -o out.json', plan, model)
        self.assert_io_error(r, "hpfreeze: error: out.json: " + too_large)
        self.assertEqual(read(out), b"old bytes")
        # Both outputs or neither: thaw's second output cannot be written, the first stays.
        meta = self.path("meta.json")
        self.assertEqual(self.freeze("-o", meta, plan=plan, model=model).returncode, 0)
        r = self.limited('exec "$0" thaw meta.json -o out.json --model-out m.json')
        self.assert_io_error(r, "hpfreeze: error: out.json: " + too_large)
        self.assertEqual(read(out), b"old bytes")
        # Stdout on a file: the same, named as stdout.
        r = self.limited('exec "$0" freeze --plan "$1" --model "$2" > stdout.json', plan, model)
        self.assert_io_error(r, "hpfreeze: error: cannot write to stdout: File too large")
        self.assert_only("out.json", "plan.json", "model.json", "meta.json", "stdout.json")

    def test_the_named_temporary_file_is_removed_too(self):
        # Without /proc the unnamed temporary file cannot be linked in: the writer names it
        # from the start. /proc is hidden by a tmpfs in a mount namespace of this run only.
        prefix, reason = private_mount_prefix()
        if prefix is None:
            self.skipTest(reason)
        if sanitized_binary():
            # io_descriptor_test (FileSizeLimitTest) covers the named path under ASan.
            self.skipTest("a sanitized binary cannot start without /proc (/proc/self/maps)")
        plan, model = self.big_inputs()
        out = self.existing_output()
        script = ('mount -t tmpfs -o size=64k none /proc && cd "$3" && ulimit -f 1 && '
                  'exec "$0" freeze --plan "$1" --model "$2" -o out.json')
        r = subprocess.run([*prefix, "bash", "-c", script, BINARY, plan, model, self.dir],
                           capture_output=True, timeout=60, env=env())
        self.assert_io_error(r, "hpfreeze: error: out.json: cannot write: File too large")
        self.assertEqual(read(out), b"old bytes")
        self.assert_only("out.json", "plan.json", "model.json")
        # The same run without the limit works: the named path writes whole files.
        script = script.replace("ulimit -f 1 && ", "")
        r = subprocess.run([*prefix, "bash", "-c", script, BINARY, plan, model, self.dir],
                           capture_output=True, timeout=60, env=env())
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(read(out)[:2], b"{\n")
        self.assert_only("out.json", "plan.json", "model.json")


class OutputsAndStdin(TempDirTest):
    """Where outputs go (special names, same file twice, modes) and a closed stdin."""

    def setUp(self):
        super().setUp()
        os.chmod(self.dir, 0o755)
        self.plan = shutil.copyfile(TINY["plan.json"], self.path("plan.json"))
        self.model = shutil.copyfile(TINY["model.json"], self.path("model.json"))

    def run_sh(self, script, *args):
        return subprocess.run(["bash", "-c", script, BINARY, *args], capture_output=True,
                              timeout=60, env=env(), cwd=self.dir)

    def freeze(self, *args, **kwargs):
        kwargs.setdefault("capture_output", True)
        return subprocess.run([BINARY, "freeze", "--plan", self.plan, "--model", self.model,
                               *args], timeout=60, env=env(), cwd=self.dir, **kwargs)

    def test_dev_stdout_appended_to_a_log_is_not_replaced(self):
        log = self.path("build.log")
        with open(log, "wb") as f:
            f.write(b"earlier\n")
        inode = os.stat(log).st_ino
        for name in ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"):
            r = self.run_sh('"$0" freeze --plan plan.json --model model.json -o "$1" >> build.log'
                            ' && echo after >> build.log', name)
            self.assertEqual((r.returncode, r.stderr), (0, b""), name)
        self.assertEqual(read(log), b"earlier\n" + (EXPECTED_NO_BASE + b"after\n") * 3)
        self.assertEqual(os.stat(log).st_ino, inode)
        self.assertEqual(sorted(os.listdir(self.dir)), ["build.log", "model.json", "plan.json"])

    def test_depfile_naming_the_output_or_an_input_is_refused(self):
        out = self.path("meta.json")
        for depfile, line in (("./meta.json", "./meta.json: -o and --depfile name the same file"),
                              (self.plan, "%s: --depfile and --plan name the same file"
                               % self.plan),
                              ("model.json", "model.json: --depfile and --model name the same "
                               "file")):
            r = self.freeze("-o", out, "--depfile", depfile)
            self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                             (2, b"", "hpfreeze: error: %s\n" % line))
        self.assertEqual(read(self.plan), read(TINY["plan.json"]))
        self.assertFalse(os.path.exists(out))

    def test_thaw_writes_both_outputs_or_neither(self):
        meta = self.path("meta.json")
        self.assertEqual(self.freeze("-o", meta).returncode, 0)
        plan_out = self.path("p.json")
        with open(plan_out, "wb") as f:
            f.write(b"old plan")
        os.symlink("p.json", self.path("link.json"))

        def thaw(*args):
            return subprocess.run([BINARY, "thaw", meta, *args], capture_output=True, timeout=60,
                                  env=env(), cwd=self.dir)

        # The second output cannot be written: the first is left as it was.
        r = thaw("-o", plan_out, "--model-out", self.path("missing", "m.json"))
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (2, "hpfreeze: error: %s: cannot write: No such file or directory\n"
                          % self.path("missing", "m.json")))
        self.assertEqual(read(plan_out), b"old plan")
        # One file under two names.
        for other in ("./p.json", "link.json"):
            r = thaw("-o", "p.json", "--model-out", other)
            self.assertEqual((r.returncode, r.stderr.decode()),
                             (2, "hpfreeze: error: %s: -o and --model-out name the same file\n"
                              % other))
        r = thaw("-o", "p.json", "--model-out", "meta.json")
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (2, "hpfreeze: error: meta.json: --model-out and the input meta name "
                             "the same file\n"))
        self.assertEqual(read(plan_out), b"old plan")
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["link.json", "meta.json", "model.json", "p.json", "plan.json"])
        r = thaw("-o", "p.json", "--model-out", "m.json")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(json.loads(read(plan_out))["format"], "hpfreeze.plan/v1")
        self.assertEqual(json.loads(read(self.path("m.json")))["format"], "hpfreeze.model/v1")

    def test_replaced_output_keeps_mode_and_owner(self):
        out = self.path("meta.json")
        for mode in (0o600, 0o640, 0o604):
            with open(out, "wb") as f:
                f.write(b"old")
            os.chmod(out, mode)
            if os.geteuid() == 0:
                os.chown(out, NOBODY, NOBODY)
            r = self.freeze("-o", out)
            self.assertEqual((r.returncode, r.stderr), (0, b""))
            st = os.stat(out)
            self.assertEqual(st.st_mode & 0o7777, mode)
            if os.geteuid() == 0:
                self.assertEqual((st.st_uid, st.st_gid), (NOBODY, NOBODY))
            self.assertEqual(read(out), EXPECTED_NO_BASE)

    def test_read_only_output_is_refused_to_its_owner(self):
        prefix, reason = unprivileged_prefix()
        if prefix is None:
            self.skipTest(reason)
        os.chmod(self.dir, 0o777)
        out = self.path("meta.json")
        with open(out, "wb") as f:
            f.write(b"old")
        os.chmod(out, 0o444)
        if os.geteuid() == 0:
            os.chown(out, NOBODY, NOBODY)
        r = subprocess.run([*prefix, readable_copy(BINARY), "freeze", "--plan", self.plan,
                            "--model", self.model, "-o", out], capture_output=True, timeout=60,
                           env=env())
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (2, "hpfreeze: error: %s: cannot write: Permission denied\n" % out))
        self.assertEqual(read(out), b"old")
        if os.geteuid() == 0:  # root may, as with `>`
            r = self.freeze("-o", out)
            self.assertEqual((r.returncode, r.stderr), (0, b""))
            self.assertEqual(read(out), EXPECTED_NO_BASE)

    def test_closed_stdin_is_a_clear_error_every_time(self):
        # The plan file must never be opened as descriptor 0 and then read as "stdin".
        for _ in range(20):
            r = self.run_sh('"$0" freeze --plan plan.json --model - <&-')
            self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                             (2, b"", "hpfreeze: error: <stdin>: cannot read: standard input is "
                                      "closed\n"))
        r = self.run_sh('"$0" parse <&-')
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (2, "hpfreeze: error: <stdin>: cannot read: standard input is closed\n"))


if __name__ == "__main__":
    unittest.main()
