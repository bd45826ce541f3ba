"""Every command at the edges of the system: inputs that are FIFOs, paths near PATH_MAX and
names near NAME_MAX, a file system out of inodes, huge pages refused and a second thread
that cannot start. Each ends in a correct result or in exit 2 with one clear line; an
existing output is never damaged and no temporary file is left.

Faults come from the kernel where that can be arranged without touching the host (a tmpfs
with few inodes in a private mount namespace, RLIMIT_NPROC for an unprivileged user), and
from tests/shim/fault_shim.cc, an LD_PRELOAD library, for madvise and pthread_create.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

from hpf import BINARY, TempDirTest, case, env, read, sanitized_binary
from test_io_faults import private_mount_prefix, readable_copy, unprivileged_prefix

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "oracle"))
import freeze_oracle  # noqa: E402

SHIM = os.environ.get("HPFREEZE_FAULT_SHIM", "")
TINY = {name: case("tiny", name) for name in ("plan.json", "model.json", "expected.json")}
NAME_MAX = 255
PATH_MAX = 4096  # with its terminating NUL


def hpfreeze(*args, cwd=None, extra_env=None, prefix=(), stdin=None, timeout=60):
    return subprocess.run([*prefix, BINARY, *args], capture_output=True, timeout=timeout,
                          cwd=cwd, env=env(**(extra_env or {})), stdin=stdin)


class Fifos(TempDirTest):
    """A FIFO input is read once, to its end, by every command; two inputs naming one pipe
    are refused before either is opened (a second reader would wait for a writer that is
    gone, or get part of the bytes)."""

    def setUp(self):
        super().setUp()
        self.meta = self.path("meta.json")
        r = hpfreeze("freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"],
                     "-o", self.meta)
        self.assertEqual(r.returncode, 0, r.stderr)

    def fifo_of(self, source, name):
        fifo = self.path(name)
        os.mkfifo(fifo)

        def feed():
            try:
                with open(fifo, "wb") as f:
                    f.write(read(source))
            except BrokenPipeError:
                pass

        # A daemon: should hpfreeze never open the FIFO, the blocked writer cannot hang us.
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        self.addCleanup(os.unlink, fifo)
        return fifo, writer

    def test_every_command_reads_a_fifo_once_as_it_reads_the_file(self):
        plan, model, meta = TINY["plan.json"], TINY["model.json"], self.meta
        cases = [  # (arguments, index of the input given as a FIFO)
            (["freeze", "--plan", plan, "--model", model], 2),
            (["freeze", "--plan", plan, "--model", model], 4),
            (["freeze", "--plan", plan, "--model", model, "--base", meta], 6),
            (["check", meta, "--model", model], 1),
            (["check", meta, "--model", model], 3),
            (["diff", meta, TINY["expected.json"]], 1),
            (["diff", meta, TINY["expected.json"]], 2),
            (["thaw", meta], 1),
            (["expand", plan], 1),
            (["report", meta, "--model", model, "--mesh", "tp=2"], 1),
            (["report", meta, "--model", model, "--mesh", "tp=2"], 3),
        ]
        for args, at in cases:
            with self.subTest(args=args[0], input=at):
                direct = hpfreeze(*args)
                self.assertIn(direct.returncode, (0, 1), direct.stderr)
                fifo, writer = self.fifo_of(args[at], "in.fifo")
                piped = hpfreeze(*args[:at], fifo, *args[at + 1:])
                writer.join(timeout=30)
                self.assertFalse(writer.is_alive(), "hpfreeze did not read the FIFO")
                self.assertEqual((piped.returncode, piped.stdout),
                                 (direct.returncode, direct.stdout))
                self.assertEqual(piped.stderr, direct.stderr.replace(args[at].encode(),
                                                                     fifo.encode()))
        # The bytes themselves, against the oracle's (tests/golden: tiny).
        self.assertEqual(hpfreeze(*cases[0][0]).stdout, read(TINY["expected.json"]))

    def test_two_inputs_naming_one_pipe_are_a_usage_error(self):
        fifo = self.path("shared.fifo")
        os.mkfifo(fifo)  # no writer: a run that opened it twice would hang
        meta = self.meta
        line = "hpfreeze: error: %s: %s and %s name the same pipe or socket, which can be read only once\n"
        cases = [
            (["freeze", "--plan", fifo, "--model", fifo], fifo, "--plan", "--model"),
            (["freeze", "--plan", TINY["plan.json"], "--model", fifo, "--base", fifo], fifo,
             "--model", "--base"),
            (["check", fifo, "--model", fifo], fifo, "META", "--model"),
            (["diff", fifo, fifo], fifo, "OLD", "NEW"),
            (["report", fifo, "--model", fifo], fifo, "META", "--model"),
            # The same FIFO by another spelling (a link to it).
            (["diff", fifo, self.path("link.fifo")], self.path("link.fifo"), "OLD", "NEW"),
        ]
        os.symlink(fifo, self.path("link.fifo"))
        for args, shown, first, second in cases:
            with self.subTest(args=args):
                r = hpfreeze(*args, "-o", self.path("out.json")) if args[0] == "freeze" \
                    else hpfreeze(*args, timeout=20)
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (2, b"", line % (shown, first, second)))
        self.assertFalse(os.path.exists(self.path("out.json")))
        # stdin (a pipe) under two names.
        with open(TINY["plan.json"], "rb") as f:
            data = f.read()
        for args, shown, first, second in (
                (["freeze", "--plan", "-", "--model", "/dev/stdin"], "/dev/stdin", "--plan",
                 "--model"),
                (["diff", "/dev/stdin", "-"], "<stdin>", "OLD", "NEW"),
                (["check", "-", "--model", "/dev/fd/0"], "/dev/fd/0", "META", "--model")):
            with self.subTest(args=args):
                r = subprocess.run([BINARY, *args], input=data, capture_output=True,
                                   timeout=20, env=env())
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (2, b"", line % (shown, first, second)))
        # Two regular files, or one regular file twice, are fine.
        r = hpfreeze("diff", meta, meta)
        self.assertEqual((r.returncode, r.stderr), (0, b""))


def deep_dirs(top, total):
    """Creates directories under top, each name NAME_MAX bytes long (the last shorter),
    until the path is `total` bytes long; returns the deepest (as a path from top)."""
    parts = []
    length = len(top)
    while length + 1 + NAME_MAX <= total:
        parts.append("d" * NAME_MAX)
        length += 1 + NAME_MAX
    if total - length - 1 > 0:
        parts.append("e" * (total - length - 1))
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            os.mkdir(part, dir_fd=fd)
            sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
    finally:
        os.close(fd)
    return os.path.join(*parts)


class LongPaths(TempDirTest):
    """Paths up to PATH_MAX work as given; deeper ones through a relative path from a
    current directory there; a name of NAME_MAX bytes is a name like any other (its
    temporary files' names stay within NAME_MAX); beyond, exit 2 and nothing written."""

    def freeze(self, *args, cwd=None):
        return hpfreeze("freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"],
                        *args, cwd=cwd)

    def assert_written(self, r, path, leftovers_dir):
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(read(path), read(TINY["expected.json"]))
        self.assertEqual([n for n in os.listdir(leftovers_dir) if n.startswith(".")], [])

    def test_paths_near_path_max(self):
        # The longest path the kernel takes: PATH_MAX - 1 bytes.
        deep = os.path.join(self.dir, deep_dirs(self.dir, PATH_MAX - 1 - len("/out.json")))
        out = os.path.join(deep, "out.json")
        self.assertEqual(len(out), PATH_MAX - 1)
        with open(out, "wb") as f:
            f.write(b"old bytes")
        self.assert_written(self.freeze("-o", out), out, deep)
        # As an input too, for every reader (thaw reads what freeze wrote there).
        shutil.copyfile(out, os.path.join(deep, "m.json"))
        meta = os.path.join(deep, "m.json")
        self.assertEqual(len(meta), PATH_MAX - 3)
        r = hpfreeze("check", meta, "--model", TINY["model.json"])
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        # One byte more is the kernel's ENAMETOOLONG, named, exit 2.
        too_long = out + "x"
        r = self.freeze("-o", too_long)
        self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                         (2, b"", "hpfreeze: error: %s: cannot write: File name too long\n"
                          % too_long))

    def test_deeper_than_path_max_through_the_current_directory(self):
        deep = deep_dirs(self.dir, 3 * PATH_MAX)  # relative to self.dir
        parts = deep.split(os.sep)
        # A shell walks there one directory at a time (no single path reaches it).
        script = "".join('cd "%s" && ' % p for p in parts) + 'exec "$@"'
        run = lambda *args: subprocess.run(  # noqa: E731
            ["bash", "-c", script, "bash", BINARY, *args], capture_output=True, timeout=60,
            env=env(), cwd=self.dir)
        r = run("freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"], "-o",
                "out.json", "--depfile", "out.json.d")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        r = run("thaw", "out.json", "-o", "plan.json", "--model-out", "model.json")
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        r = run("freeze", "--plan", "plan.json", "--model", "model.json", "-o", "-")
        self.assertEqual((r.returncode, r.stdout), (0, read(TINY["expected.json"])))
        # What is there: the files and nothing else (a dir fd walk from self.dir).
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        for p in parts:
            sub = os.open(p, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
        try:
            self.assertEqual(sorted(os.listdir(fd)),
                             ["model.json", "out.json", "out.json.d", "plan.json"])
        finally:
            os.close(fd)

    def test_link_with_a_relative_target_deep_down(self):
        # The link's directory plus its target text is longer than PATH_MAX, the link's own
        # path and the target's are not: the target is found from the link's directory.
        deep = os.path.join(self.dir, deep_dirs(self.dir, PATH_MAX - 1 - 1 - 8))
        link = os.path.join(deep, "out.json")
        target = "t" * (NAME_MAX - 10) + ".json"
        self.assertGreater(len(deep) + 1 + len(target), PATH_MAX)
        os.symlink(target, link)
        self.assert_written(self.freeze("-o", link), os.path.join(deep, target), deep)
        self.assertEqual(os.readlink(link), target)  # the link is kept
        # Through a chain of relative links, each starting in its own directory.
        os.mkdir(os.path.join(deep, "s"))
        os.symlink(os.path.join("s", "next"), os.path.join(deep, "first.json"))
        os.symlink(os.path.join("..", target), os.path.join(deep, "s", "next"))
        os.unlink(os.path.join(deep, target))
        self.assert_written(self.freeze("-o", os.path.join(deep, "first.json")),
                            os.path.join(deep, target), deep)

    def test_a_name_of_name_max_bytes(self):
        name = "n" * (NAME_MAX - 5) + ".json"
        self.assertEqual(len(name.encode()), NAME_MAX)
        out, dep = self.path(name), self.path("d" * NAME_MAX)
        # New, then replacing (temporary files), then two outputs (second names kept).
        for step in ("new", "replace"):
            with self.subTest(step=step):
                self.assert_written(self.freeze("-o", out), out, self.dir)
        with open(out, "wb") as f:
            f.write(b"old bytes")
        with open(dep, "wb") as f:
            f.write(b"old dep")
        r = self.freeze("-o", out, "--depfile", dep)
        self.assert_written(r, out, self.dir)
        self.assertTrue(read(dep).startswith(out.encode()))
        r = hpfreeze("thaw", out, "-o", self.path("p" * NAME_MAX), "--model-out",
                     self.path("m" * NAME_MAX))
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(sorted(os.listdir(self.dir)),
                         sorted([name, "d" * NAME_MAX, "p" * NAME_MAX, "m" * NAME_MAX]))
        # Multi-byte UTF-8: the temporary name is cut by bytes, still a valid name.
        wide = "é" * (NAME_MAX // 2) + "x"
        self.assertEqual(len(wide.encode()), NAME_MAX)
        self.assert_written(self.freeze("-o", self.path(wide)), self.path(wide), self.dir)
        # One byte more: the kernel's ENAMETOOLONG, exit 2, nothing created.
        for too_long in (self.path("n" * (NAME_MAX + 1)), self.path("n" * (NAME_MAX + 1), "x")):
            with self.subTest(too_long=len(too_long)):
                r = self.freeze("-o", too_long)
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (2, b"", "hpfreeze: error: %s: cannot write: File name too "
                                  "long\n" % too_long))
        self.assertEqual(len(os.listdir(self.dir)), 5)


class OutOfInodes(TempDirTest):
    """A tmpfs with every inode taken (mounted in a private mount namespace of the run
    only): writing a new file, replacing one, or two outputs, is exit 2 with ENOSPC named;
    old outputs intact, no temporary file left."""

    def run_full(self, setup, *args, free=0):
        prefix, reason = private_mount_prefix()
        if prefix is None:
            self.skipTest(reason)
        mnt = self.path("mnt")
        os.mkdir(mnt)
        # The files of `setup`, then empty files until the inodes run out, then `free` of
        # them removed again; the run, then a listing of what is left.
        script = ('mount -t tmpfs -o size=4m,nr_inodes=16 none "$1" && cd "$1" && %s && '
                  'i=0; while : 2>/dev/null > fill$i; do i=$((i+1)); done; '
                  'j=0; while [ $j -lt %d ]; do rm fill$j; j=$((j+1)); done; '
                  'shift; "$@"; rc=$?; echo "== $rc"; for f in * .*; do '
                  '[ -f "$f" ] && case "$f" in fill*) ;; *) '
                  'printf "%%s %%s\\n" "$f" "$(head -c 20 "$f")";; esac; done; true' % (setup, free))
        r = subprocess.run(prefix + ["bash", "-c", script, "bash", mnt, BINARY, *args],
                           capture_output=True, timeout=60, env=env())
        out, _, listing = r.stdout.decode().rpartition("== ")
        rc, _, files = listing.partition("\n")
        return int(rc), out, r.stderr.decode(), sorted(files.splitlines())

    def freeze(self, *args):
        return ("freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"], *args)

    def test_no_inode_left(self):
        enospc = "hpfreeze: error: %s: cannot write: No space left on device\n"
        # Nothing there yet.
        self.assertEqual(self.run_full("true", *self.freeze("-o", "new.json")),
                         (2, "", enospc % "new.json", []))
        # An existing output.
        self.assertEqual(self.run_full("echo old > out.json", *self.freeze("-o", "out.json")),
                         (2, "", enospc % "out.json", ["out.json old"]))
        # Two outputs, each existing, and one inode free: the second temporary file fails.
        self.assertEqual(
            self.run_full("echo old > out.json && echo dep > out.d",
                          *self.freeze("-o", "out.json", "--depfile", "out.d"), free=1),
            (2, "", enospc % "out.d", ["out.d dep", "out.json old"]))
        # thaw: both outputs or neither.
        meta = self.path("meta.json")
        shutil.copyfile(TINY["expected.json"], meta)
        self.assertEqual(
            self.run_full("echo old > p.json", "thaw", meta, "-o", "p.json", "--model-out",
                          "m.json", free=1),
            (2, "", enospc % "m.json", ["p.json old"]))
        # Enough inodes for the temporary files but not for keeping the old files under a
        # second name (a hard link takes one on tmpfs): refused before anything is renamed.
        rc, out, err, files = self.run_full(
            "echo old > out.json && echo dep > out.d",
            *self.freeze("-o", "out.json", "--depfile", "out.d"), free=2)
        self.assertEqual((rc, out, files), (2, "", ["out.d dep", "out.json old"]))
        self.assertEqual(err, "hpfreeze: error: out.json: cannot keep the old file until every "
                              "output is written: No space left on device\n")
        # The same with room: written.
        rc, out, err, files = self.run_full("true", *self.freeze("-o", "out.json"), free=1)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(files, ["out.json " + read(TINY["expected.json"])[:20].decode()])


def big_dumps(directory, modules=60000):
    """A plan and a model of `modules` modules (about 4 and 3 MB): large enough that every
    command splits its work across two threads and advises huge pages for its buffers."""
    plan = os.path.join(directory, "plan.json")
    model = os.path.join(directory, "model.json")
    with open(plan, "w") as f:
        json.dump({"modules": {"m%d" % i: {"params": {"w": {"tp": {"$placement": "Shard",
                                                                     "dim": i % 2}}}}
                               for i in range(modules)}}, f)
    names = {"": "Net"}
    names.update({"m%d" % i: "Linear" for i in range(modules)})
    with open(model, "w") as f:
        json.dump({"modules": names,
                   "parameters": {"m%d.w" % i: {"shape": [8, 4]} for i in range(modules)}}, f)
    return plan, model


class ThreadsAndHugePages(TempDirTest):
    """Without a second thread, or without huge pages, every command gives the same result:
    the work a second thread would do runs on the calling thread."""

    @classmethod
    def setUpClass(cls):
        cls.data = tempfile.mkdtemp(prefix="hpfreeze_limits_")
        os.chmod(cls.data, 0o755)  # reachable by the unprivileged runs
        cls.plan, cls.model = big_dumps(cls.data)
        code, cls.expected, warnings = freeze_oracle.run(cls.plan, cls.model, None,
                                                         freeze_oracle.Options())
        assert code == 0 and not warnings, warnings
        cls.meta = os.path.join(cls.data, "meta.json")
        with open(cls.meta, "wb") as f:
            f.write(cls.expected)
        for name in ("plan.json", "model.json", "meta.json"):
            os.chmod(os.path.join(cls.data, name), 0o644)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.data, True)

    def commands(self):
        """(name, arguments, outputs it writes besides stdout) of every command, and whether
        it starts a second thread on these inputs."""
        out = lambda n: os.path.join(self.dir, n)  # noqa: E731
        return [
            ("freeze", ["freeze", "--plan", self.plan, "--model", self.model, "-o",
                        out("meta.json")], ["meta.json"], True),
            ("check", ["check", self.meta, "--model", self.model], [], True),
            ("thaw", ["thaw", self.meta, "-o", out("p.json"), "--model-out", out("m.json")],
             ["p.json", "m.json"], True),
            ("expand", ["expand", self.plan], [], True),
            ("diff", ["diff", self.meta, self.meta], [], False),
            ("report", ["report", self.meta, "--model", self.model, "--mesh", "tp=2"], [],
             False),
        ]

    def result(self, r, outputs):
        got = [r.returncode, r.stdout, r.stderr]
        for name in outputs:
            got.append(read(self.path(name)))
            os.unlink(self.path(name))
        self.assertEqual(os.listdir(self.dir), [n for n in os.listdir(self.dir)
                                                if n == "shim.log"])
        return got

    def shim(self, **settings):
        if not SHIM:
            self.skipTest("HPFREEZE_FAULT_SHIM is not set (run through ctest)")
        if sanitized_binary():
            self.skipTest("the sanitizer runtime intercepts pthread_create itself and must be "
                          "the first library loaded: no LD_PRELOAD shim before it")
        log = self.path("shim.log")
        extra = {"LD_PRELOAD": SHIM, "HPFREEZE_SHIM_LOG": log}
        extra.update({"HPFREEZE_SHIM_" + k.upper(): str(v) for k, v in settings.items()})
        return extra, log

    def refusals(self, log, what):
        if not os.path.exists(log):
            return 0
        with open(log) as f:
            lines = f.read().splitlines()
        os.unlink(log)
        return lines.count(what)

    def test_no_second_thread_or_no_huge_pages_gives_the_same_result(self):
        two_cpus = len(os.sched_getaffinity(0)) >= 2
        for name, args, outputs, threaded in self.commands():
            normal = self.result(hpfreeze(*args, timeout=120), outputs)
            if name == "freeze":
                self.assertEqual(normal[:3], [0, b"", b""])
                self.assertEqual(normal[3], self.expected)
            for settings in ({"threads": 0}, {"threads": 1}, {"threads": 2}, {"madvise": 22},
                             {"madvise": 12}, {"threads": 0, "madvise": 22}):
                with self.subTest(command=name, **settings):
                    extra, log = self.shim(**settings)
                    faulty = self.result(hpfreeze(*args, extra_env=extra, timeout=120), outputs)
                    self.assertEqual(faulty, normal)
                    # The fault was met: a test that cannot fail proves nothing.
                    madvised = self.refusals(log, "madvise")
                    if "madvise" in settings:
                        self.assertGreater(madvised, 0, "no madvise reached")
                    elif threaded and two_cpus and settings["threads"] == 0:
                        self.assertGreater(self.refusals(log, "pthread_create"), 0)

    def test_rlimit_nproc_of_one(self):
        # An unprivileged user allowed one process: any clone() fails with EAGAIN (root
        # ignores RLIMIT_NPROC, hence the drop to nobody).
        prefix, reason = unprivileged_prefix()
        if prefix is None:
            self.skipTest(reason)
        os.chmod(self.dir, 0o777)
        binary = readable_copy(BINARY)
        extra = {}
        if sanitized_binary():
            # LeakSanitizer's check at exit runs in a new thread, which the limit forbids.
            extra["ASAN_OPTIONS"] = "detect_leaks=0"
        for name, args, outputs, _ in self.commands():
            with self.subTest(command=name):
                normal = self.result(hpfreeze(*args, timeout=120), outputs)
                r = subprocess.run([*prefix, "bash", "-c", 'ulimit -u 1 && exec "$@"', "bash",
                                    binary, *args], capture_output=True, timeout=120,
                                   env=env(**extra))
                self.assertEqual(self.result(r, outputs), normal)


if __name__ == "__main__":
    unittest.main()
