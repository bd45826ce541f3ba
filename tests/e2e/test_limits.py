"""Limits of the machine rather than of the input: FIFO inputs for every command, paths near
PATH_MAX and names near NAME_MAX, a file system out of inodes, huge pages refused, a second
thread that cannot start. Each ends in the result a run without the limit gives, or in exit 2
and one clear line; never a crash, a hang, a partial file or a temporary file left behind.

Faults come from an LD_PRELOAD library built with the tests (tests/shim/fault_shim.cc:
pthread_create and madvise fail on request), from RLIMIT_NPROC for an unprivileged user
(setpriv, as test_io_faults.py; root ignores the limit), and from a tmpfs with few inodes in
a private mount namespace. Nothing host-wide is changed. A case that cannot run here is
skipped with its reason.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

from hpf import BINARY, SOURCE, TempDirTest, case, env, read, sanitized_binary
from test_io_faults import private_mount_prefix, readable_copy, unprivileged_prefix

SHIM = os.environ.get("HPFREEZE_FAULT_SHIM", "")
TINY = {name: case("tiny-base", name) for name in ("plan.json", "model.json", "base.json")}
META = case("tiny-base", "expected.json")  # the oracle's meta of tiny-base
OTHER_META = case("tiny", "expected.json")
EXPECTED = read(META)
EXPECTED_NO_BASE = read(OTHER_META)
NAME_MAX = 255
PATH_MAX = 4096  # with the terminating NUL: a path has at most 4095 bytes

# Every command with the files it reads, as (flag, path) pairs; None as flag: a positional.
COMMANDS = {
    "freeze": [("--plan", TINY["plan.json"]), ("--model", TINY["model.json"]),
               ("--base", TINY["base.json"])],
    "check": [(None, META), ("--model", TINY["model.json"])],
    "diff": [(None, OTHER_META), (None, META)],
    "thaw": [(None, META)],
    "expand": [(None, TINY["plan.json"])],
    "report": [(None, META), ("--model", TINY["model.json"]), ("--mesh", "tp=2")],
}
# The names the errors give each input of COMMANDS, in order.
ROLES = {"freeze": ["--plan", "--model", "--base"], "check": ["META", "--model"],
         "diff": ["OLD", "NEW"], "thaw": ["META"], "expand": ["PLAN"],
         "report": ["META", "--model"]}


def argv(command, paths):
    """The command line of `command` with its inputs replaced by `paths` (in order)."""
    args = [command]
    paths = list(paths)
    for flag, path in COMMANDS[command]:
        if flag == "--mesh":
            args += [flag, path]
            continue
        args += ([flag] if flag else []) + [paths.pop(0)]
    return args


def inputs_of(command):
    return [path for flag, path in COMMANDS[command] if flag != "--mesh"]


def hpfreeze(*args, binary=BINARY, timeout=60, **kwargs):
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs.setdefault("env", env())
    return subprocess.run([binary, *args], timeout=timeout, **kwargs)


def outcome(r):
    return r.returncode, r.stdout, r.stderr.decode()


class FifoInputs(TempDirTest):
    """Every input of every command may be a FIFO or a pipe, read once to its end."""

    maxDiff = None

    def feed(self, fifo, data):
        def write():
            with open(fifo, "wb") as f:
                f.write(data)
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        return writer

    def test_each_input_of_each_command_read_from_a_fifo_or_stdin(self):
        for command in COMMANDS:
            files = inputs_of(command)
            plain = outcome(hpfreeze(*argv(command, files)))
            self.assertEqual(plain[0], 1 if command == "diff" else 0, plain)
            self.assertNotEqual(plain[1], b"" if command != "check" else b"x", command)
            if command == "freeze":
                self.assertEqual(plain, (0, EXPECTED, ""))
            for i, path in enumerate(files):
                with self.subTest(command=command, input=ROLES[command][i]):
                    fifo = self.path("%s-%d.fifo" % (command, i))
                    os.mkfifo(fifo)
                    writer = self.feed(fifo, read(path))
                    r = hpfreeze(*argv(command, files[:i] + [fifo] + files[i + 1:]))
                    writer.join(timeout=30)
                    self.assertFalse(writer.is_alive(), "the FIFO was not read")
                    self.assertEqual(outcome(r)[:2], plain[:2])
                    self.assertEqual(outcome(r)[2], plain[2].replace(path, fifo))
                    r = hpfreeze(*argv(command, files[:i] + ["-"] + files[i + 1:]),
                                 input=read(path))
                    self.assertEqual(outcome(r)[:2], plain[:2])

    def test_parse_reads_stdin_from_a_fifo(self):
        fifo = self.path("lines.fifo")
        os.mkfifo(fifo)
        writer = self.feed(fifo, b"S(0)\nSS(0, 2)\nR\n")
        with open(fifo, "rb") as stdin:  # opened once the writer is there
            r = hpfreeze("parse", stdin=stdin)
        writer.join(timeout=30)
        self.assertEqual(outcome(r), (0, b"S(0)\nSS(0,2)\nR\n", ""))

    def expect_refused(self, r, second, first_role, second_role):
        shown = "<stdin>" if second == "-" else second
        self.assertEqual(outcome(r), (2, b"", "hpfreeze: error: %s: %s and %s name the same "
                                      "pipe or socket, which can be read only once\n"
                                      % (shown, first_role, second_role)))

    def test_two_inputs_naming_one_pipe_are_a_usage_error(self):
        # What the first reader takes, the second never sees (an "empty input" that is not
        # the file's fault), and a FIFO's second open waits for a writer that is gone.
        fifo = self.path("one.fifo")
        os.mkfifo(fifo)
        os.symlink("one.fifo", self.path("link"))
        for command, roles in ROLES.items():
            files = inputs_of(command)
            for i in range(len(files)):
                for j in range(i + 1, len(files)):
                    def with_pair(a, b):
                        paths = list(files)
                        paths[i], paths[j] = a, b
                        return argv(command, paths)
                    with self.subTest(command=command, pair=(roles[i], roles[j])):
                        # No writer: a binary that opens the FIFO blocks, and the timeout fails
                        # the test.
                        for a, b in ((fifo, fifo), (fifo, self.path("link"))):
                            r = hpfreeze(*with_pair(a, b), timeout=20)
                            self.expect_refused(r, b, roles[i], roles[j])
                        for a, b in (("-", "/dev/stdin"), ("/dev/stdin", "-"),
                                     ("-", "/dev/fd/0"), ("/dev/stdin", "/proc/self/fd/0")):
                            r = hpfreeze(*with_pair(a, b), input=read(files[i]), timeout=20)
                            self.expect_refused(r, b, roles[i], roles[j])
                        left, right = socket.socketpair()
                        with left, right:
                            left.sendall(read(files[i]))
                            left.shutdown(socket.SHUT_WR)
                            r = hpfreeze(*with_pair("-", "/dev/stdin"), stdin=right, timeout=20)
                        self.expect_refused(r, "/dev/stdin", roles[i], roles[j])

    def test_one_pipe_and_the_same_regular_file_twice_are_fine(self):
        # A regular file can be read any number of times: only pipes are refused.
        r = hpfreeze("diff", META, META)
        self.assertEqual(outcome(r), (0, b"", ""))
        with open(META, "rb") as stdin:
            r = hpfreeze("diff", "-", "/dev/stdin", stdin=stdin)
        self.assertEqual(outcome(r), (0, b"", ""))


@contextlib.contextmanager
def working_directory(fd):
    """Runs the block in the directory open as fd (its path may be longer than PATH_MAX)."""
    old = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fchdir(fd)
        yield
    finally:
        os.fchdir(old)
        os.close(old)


class LongPaths(TempDirTest):
    """Paths near PATH_MAX, names near NAME_MAX: written whole, or one clear error."""

    maxDiff = None

    def listing(self, directory=None):
        return sorted(os.listdir(directory or self.dir))

    def freeze_to(self, out, *extra, **kwargs):
        return hpfreeze("freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"],
                        "--base", TINY["base.json"], "-o", out, *extra, **kwargs)

    def test_an_output_name_of_name_max_bytes(self):
        # The temporary and backup names the writer derives (".NAME.tmp.XXXXXX",
        # ".NAME.old.XXXXXX") must stay within NAME_MAX too.
        out = "o" * (NAME_MAX - 5) + ".json"
        dep = "d" * (NAME_MAX - 2) + ".d"
        for existing in (False, True):
            with self.subTest(existing=existing):
                if existing:
                    for name in (out, dep):
                        with open(self.path(name), "wb") as f:
                            f.write(b"old bytes")
                r = self.freeze_to(out, "--depfile", dep, cwd=self.dir)
                self.assertEqual(outcome(r), (0, b"", ""))
                self.assertEqual(read(self.path(out)), EXPECTED)
                self.assertTrue(read(self.path(dep)).startswith(out.encode() + b":"))
                self.assertEqual(self.listing(), sorted([out, dep]))
        plan, model = "p" * NAME_MAX, "m" * NAME_MAX
        r = hpfreeze("thaw", META, "-o", plan, "--model-out", model, cwd=self.dir)
        self.assertEqual(outcome(r)[::2], (0, ""))
        self.assertEqual(self.listing(), sorted([out, dep, plan, model]))
        # Both outputs exist now: the second thaw keeps backups under derived names.
        r2 = hpfreeze("thaw", META, "-o", plan, "--model-out", model, cwd=self.dir)
        self.assertEqual(outcome(r2)[::2], (0, ""))
        self.assertEqual(self.listing(), sorted([out, dep, plan, model]))

    def test_an_output_name_longer_than_name_max_is_refused(self):
        out = "o" * (NAME_MAX + 1)
        r = self.freeze_to(out, cwd=self.dir)
        self.assertEqual(outcome(r), (2, b"", "hpfreeze: error: %s: cannot write: File name "
                                      "too long\n" % out))
        self.assertEqual(self.listing(), [])

    def chain(self, total, component=200):
        """Directories under self.dir whose relative path is `total` bytes: (path, fd)."""
        names = []
        length = -1
        while length + 1 + component < total:
            names.append("c" * component)
            length += 1 + component
        names.append("c" * (total - length - 1))
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        for name in names:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        self.addCleanup(os.close, fd)
        return "/".join(names), fd

    def test_relative_paths_of_path_max_minus_one_bytes(self):
        # A path of 4095 bytes works as input and as output. An input path of 4096 bytes is
        # ENAMETOOLONG, from the kernel; an output path may be longer, as the writer opens its
        # directory and then the name in it.
        prefix, fd = self.chain(PATH_MAX - 1 - len("/model.json"))
        for name in ("plan.json", "model.json"):
            with open(name, "wb", opener=lambda p, f: os.open(p, f, 0o644, dir_fd=fd)) as f:
                f.write(read(TINY[name]))
        plan, model = prefix + "/plan.json", prefix + "/model.json"
        self.assertEqual(len(model), PATH_MAX - 1)
        for out in (prefix + "/out.json", prefix + "/output.json", prefix + "/" + "o" * 255):
            for existing in (False, True):
                r = hpfreeze("freeze", "--plan", plan, "--model", model, "-o", out,
                             cwd=self.dir)
                self.assertEqual(outcome(r), (0, b"", ""), (len(out), existing))
                self.assertEqual(read_at(fd, os.path.basename(out)), EXPECTED_NO_BASE)
        too_long = prefix + "/model2.json"
        self.assertEqual(len(too_long), PATH_MAX)
        os.link("model.json", "model2.json", src_dir_fd=fd, dst_dir_fd=fd)
        r = hpfreeze("freeze", "--plan", plan, "--model", too_long, "-o", prefix + "/x.json",
                     cwd=self.dir)
        self.assertEqual(outcome(r), (2, b"", "hpfreeze: error: %s: cannot open: File name "
                                      "too long\n" % too_long))
        self.assertEqual(sorted(os.listdir(fd)), ["model.json", "model2.json", "o" * 255,
                                                  "out.json", "output.json", "plan.json"])

    def test_every_command_in_a_directory_deeper_than_path_max(self):
        # The current directory's own path is far longer than PATH_MAX: only relative names
        # reach it, and nothing may need the absolute one.
        _, fd = self.chain(3 * PATH_MAX)
        for name, src in (("plan.json", TINY["plan.json"]), ("model.json", TINY["model.json"]),
                          ("base.json", TINY["base.json"]), ("meta.json", META),
                          ("other.json", OTHER_META)):
            with open(name, "wb", opener=lambda p, f: os.open(p, f, 0o644, dir_fd=fd)) as f:
                f.write(read(src))
        with working_directory(fd):
            for existing in (False, True):
                r = hpfreeze("freeze", "--plan", "plan.json", "--model", "model.json", "--base",
                             "base.json", "-o", "out.json", "--depfile", "out.d")
                self.assertEqual(outcome(r), (0, b"", ""), existing)
                self.assertEqual(read("out.json"), EXPECTED)
                self.assertEqual(read("out.d"),
                                 b"out.json: plan.json model.json base.json\n")
            r = hpfreeze("thaw", "meta.json", "-o", "p.json", "--model-out", "m.json")
            self.assertEqual(outcome(r)[::2], (0, ""))
            r = hpfreeze("freeze", "--plan", "p.json", "--model", "m.json", "--base",
                         "base.json", "-o", "again.json")
            self.assertEqual(outcome(r), (0, b"", ""))
            self.assertEqual(read("again.json"), EXPECTED)
            self.assertEqual(outcome(hpfreeze("check", "meta.json", "--model", "model.json")),
                             (0, b"", ""))
            self.assertEqual(hpfreeze("diff", "meta.json", "other.json").returncode, 1)
            self.assertEqual(outcome(hpfreeze("expand", "plan.json"))[::2], (0, ""))
            self.assertEqual(hpfreeze("report", "meta.json", "--model", "model.json",
                                      "--mesh", "tp=2").returncode, 0)
            self.assertEqual(sorted(os.listdir(".")),
                             ["again.json", "base.json", "m.json", "meta.json", "model.json",
                              "other.json", "out.d", "out.json", "p.json", "plan.json"])

    def test_a_relative_link_target_is_resolved_from_the_links_directory(self):
        # The link's directory is near PATH_MAX and its target a long name: joined to the
        # directory's path the two would be longer than PATH_MAX, so the writer must follow
        # the link from the directory it opened, not by spelling the joined path.
        prefix, fd = self.chain(PATH_MAX - 1 - len("/link"))
        target = "t" * (NAME_MAX - 5) + ".json"
        os.mkdir("sub", dir_fd=fd)
        second = target[:-6] + "2.json"
        cases = (("link", target, target), ("up", "sub/../" + second, second))
        for link, text, lands in cases:
            os.symlink(text, link, dir_fd=fd)
            for existing in (False, True):
                with self.subTest(link=text, existing=existing):
                    r = hpfreeze("freeze", "--plan", TINY["plan.json"], "--model",
                                 TINY["model.json"], "-o", prefix + "/" + link, cwd=self.dir)
                    self.assertEqual(outcome(r), (0, b"", ""))
                    self.assertEqual(read_at(fd, lands), EXPECTED_NO_BASE)
                    self.assertEqual(os.readlink(link, dir_fd=fd), text)
        self.assertEqual(sorted(os.listdir(fd)),
                         sorted(["link", "up", "sub", target, second]))


def read_at(fd, name):
    with open(name, "rb", opener=lambda p, f: os.open(p, f, dir_fd=fd)) as f:
        return f.read()


# Fills every inode of the tmpfs it mounts, then runs hpfreeze there: $1 the mount point,
# $2 "existing" to leave an old out.json (and out.d) first, the rest hpfreeze's arguments.
OUT_OF_INODES = r"""
mount -t tmpfs -o nr_inodes=16,size=4m,mode=0755 none "$1" || exit 99
cd "$1" || exit 99
if [ "$2" = existing ]; then printf 'old bytes' > out.json; printf 'old dep' > out.d; fi
shift 2
i=0
while (: > "fill$i") 2>/dev/null; do i=$((i + 1)); done
"$@"
echo "rc=$?"
ls -A
for f in out.json out.d; do [ -e "$f" ] && { printf '%s=' "$f"; cat "$f"; echo; }; done
exit 0
"""


class OutOfInodes(TempDirTest):
    """No inode left for the temporary file: exit 2, ENOSPC named, the old output intact."""

    maxDiff = None

    def run_full(self, existing, *args):
        prefix, reason = private_mount_prefix()
        if prefix is None:
            self.skipTest(reason)
        mnt = tempfile.mkdtemp(dir=self.dir)
        r = subprocess.run(prefix + ["sh", "-c", OUT_OF_INODES, "sh", mnt,
                                     "existing" if existing else "new", BINARY, *args],
                           capture_output=True, timeout=120, env=env())
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        rc = int(lines[0][len("rc="):])
        names = [n for n in lines[1:] if "=" not in n]
        contents = dict(line.split("=", 1) for line in lines[1:] if "=" in line)
        self.assertTrue(any(n.startswith("fill") for n in names))
        return rc, r.stderr.decode(), sorted(n for n in names if not n.startswith("fill")), \
            contents

    def freeze_args(self, *extra):
        return ["freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"],
                "-o", "out.json", *extra]

    def test_new_output(self):
        for extra in ((), ("--depfile", "out.d")):
            with self.subTest(extra=extra):
                self.assertEqual(self.run_full(False, *self.freeze_args(*extra)),
                                 (2, "hpfreeze: error: out.json: cannot write: No space left "
                                     "on device\n", [], {}))

    def test_existing_output_is_left_intact(self):
        for extra in ((), ("--depfile", "out.d")):
            with self.subTest(extra=extra):
                self.assertEqual(
                    self.run_full(True, *self.freeze_args(*extra)),
                    (2, "hpfreeze: error: out.json: cannot write: No space left on device\n",
                     ["out.d", "out.json"], {"out.json": "old bytes", "out.d": "old dep"}))

    def test_thaw_writes_neither_output(self):
        rc, err, names, contents = self.run_full(True, "thaw", META, "-o", "out.json",
                                                 "--model-out", "out.d")
        self.assertEqual((rc, names, contents), (2, ["out.d", "out.json"],
                                                 {"out.json": "old bytes", "out.d": "old dep"}))
        self.assertRegex(err, r"^hpfreeze: error: out\.(json|d): cannot write: No space left "
                              r"on device\n$")

    def test_if_changed_needs_no_inode_when_the_bytes_are_there(self):
        # The same bytes already there: compared, not written, so no inode is needed.
        prefix, reason = private_mount_prefix()
        if prefix is None:
            self.skipTest(reason)
        mnt = tempfile.mkdtemp(dir=self.dir)
        script = OUT_OF_INODES.replace("printf 'old bytes' > out.json",
                                       "cat %s > out.json" % META.replace("'", ""))
        r = subprocess.run(prefix + ["sh", "-c", script, "sh", mnt, "existing", BINARY,
                                     "freeze", "--plan", TINY["plan.json"], "--model",
                                     TINY["model.json"], "--base", TINY["base.json"],
                                     "-o", "out.json", "--if-changed"],
                           capture_output=True, timeout=120, env=env())
        lines = r.stdout.decode().splitlines()
        self.assertEqual((lines[0], r.stderr), ("rc=0", b""))


def big_case(directory):
    """Generated dumps large enough that every command that can start a second thread does
    (the Python writer splits from 4 MiB of output, thaw checks beside from 10,000 names)."""
    subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "gen"), "synthetic",
                    "--params", "30000", "-o", directory], check=True, capture_output=True,
                   timeout=300)
    plan, model = os.path.join(directory, "plan.json"), os.path.join(directory, "model.json")
    meta = os.path.join(directory, "meta.json")
    r = hpfreeze("freeze", "--plan", plan, "--model", model, "-o", meta)
    assert r.returncode == 0, r.stderr
    return {"plan": plan, "model": model, "meta": meta}


class OneThread(unittest.TestCase):
    """A second thread that cannot start, huge pages refused: the same bytes on one thread."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        os.chmod(cls.tmp.name, 0o777)  # the unprivileged runs write here
        cls.big = big_case(os.path.join(cls.tmp.name, "big"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def runs(self, files):
        """(name, argv, output files) of every command on `files`."""
        out = os.path.join(self.tmp.name, "out")
        return [
            ("freeze", ["freeze", "--plan", files["plan"], "--model", files["model"],
                        "-o", out + ".json", "--depfile", out + ".d"],
             [out + ".json", out + ".d"]),
            ("thaw", ["thaw", files["meta"], "-o", out + ".plan.json", "--model-out",
                      out + ".model.json"], [out + ".plan.json", out + ".model.json"]),
            ("check", ["check", files["meta"], "--model", files["model"]], []),
            ("expand", ["expand", files["plan"]], []),
            ("report", ["report", files["meta"], "--model", files["model"], "--mesh",
                        "tp=2,ep=2,cp=2"], []),
            ("diff", ["diff", files["meta"], files["meta"]], []),
        ]

    def result(self, args, outputs, prefix=(), binary=BINARY, **extra_env):
        for path in outputs:
            if os.path.exists(path):
                os.unlink(path)
        r = subprocess.run([*prefix, binary, "-qq", *args], capture_output=True, timeout=120,
                           env=env(**extra_env))
        self.assertNotIn(r.returncode, (-6, -11, 134, 139), r.stderr)
        return r.returncode, r.stdout, r.stderr, [read(p) for p in outputs]

    def shim(self):
        if not SHIM or not os.path.exists(SHIM):
            self.skipTest("the fault shim was not built (HPFREEZE_FAULT_SHIM)")
        if sanitized_binary():
            self.skipTest("AddressSanitizer intercepts pthread_create and must come first in "
                          "the library list: an LD_PRELOAD shim cannot go before it")
        return SHIM

    def log(self):
        path = os.path.join(self.tmp.name, "shim.log")
        if os.path.exists(path):
            os.unlink(path)
        return path

    def refusals(self, log):
        return read(log).decode().split() if os.path.exists(log) else []

    def test_no_thread_can_start_or_only_some_can(self):
        shim = self.shim()
        two_cpus = len(os.sched_getaffinity(0)) >= 2
        for files in (self.big, {"plan": TINY["plan.json"], "model": TINY["model.json"],
                                 "meta": META}):
            for name, args, outputs in self.runs(files):
                plain = self.result(args, outputs)
                if files is not self.big and name == "freeze":
                    self.assertEqual(plain[3][0], EXPECTED_NO_BASE)
                for allowed in ("0", "1", "2"):
                    with self.subTest(size="big" if files is self.big else "tiny",
                                      command=name, threads=allowed):
                        log = self.log()
                        self.assertEqual(self.result(args, outputs, LD_PRELOAD=shim,
                                                     HPFREEZE_SHIM_THREADS=allowed,
                                                     HPFREEZE_SHIM_LOG=log), plain)
                        if (two_cpus and allowed == "0" and files is self.big
                                and name in ("freeze", "thaw", "check", "expand")):
                            self.assertIn("pthread_create", self.refusals(log))
                # And on one CPU, where no second thread is even tried.
                if shutil.which("taskset"):
                    self.assertEqual(self.result(args, outputs, prefix=("taskset", "-c", "0")),
                                     plain)

    def test_huge_pages_refused(self):
        shim = self.shim()
        for errno_value in ("22", "12"):  # EINVAL: no THP; ENOMEM
            for name, args, outputs in self.runs(self.big):
                plain = self.result(args, outputs)
                with self.subTest(command=name, errno=errno_value):
                    log = self.log()
                    self.assertEqual(self.result(args, outputs, LD_PRELOAD=shim,
                                                 HPFREEZE_SHIM_MADVISE=errno_value,
                                                 HPFREEZE_SHIM_LOG=log), plain)
                    if name in ("freeze", "thaw"):
                        self.assertIn("madvise", self.refusals(log))
                    log = self.log()
                    self.assertEqual(self.result(args, outputs, LD_PRELOAD=shim,
                                                 HPFREEZE_SHIM_MADVISE=errno_value,
                                                 HPFREEZE_SHIM_THREADS="0",
                                                 HPFREEZE_SHIM_LOG=log), plain)

    def test_rlimit_nproc_of_one_for_an_unprivileged_user(self):
        # The kernel refuses the clone (EAGAIN): no shim decides that here. The shim, where it
        # can be loaded, only records that the real pthread_create failed.
        prefix, reason = unprivileged_prefix()
        if prefix is None:
            self.skipTest(reason)
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            self.skipTest("prlimit (util-linux) is missing")
        files = {key: readable_copy(path) for key, path in self.big.items()}
        binary = readable_copy(BINARY)
        extra = {}
        if sanitized_binary():
            extra["ASAN_OPTIONS"] = "detect_leaks=0"  # LeakSanitizer needs a thread at exit
        elif SHIM and os.path.exists(SHIM):
            extra = {"LD_PRELOAD": readable_copy(SHIM), "HPFREEZE_SHIM_LOG": self.log()}
        two_cpus = len(os.sched_getaffinity(0)) >= 2
        for name, args, outputs in self.runs(files):
            plain = self.result(args, outputs, binary=binary)
            with self.subTest(command=name):
                if "HPFREEZE_SHIM_LOG" in extra:
                    self.log()
                got = self.result(args, outputs, binary=binary,
                                  prefix=[*prefix, prlimit, "--nproc=1"], **extra)
                self.assertEqual(got, plain)
                if ("HPFREEZE_SHIM_LOG" in extra and two_cpus
                        and name in ("freeze", "thaw", "check", "expand")):
                    self.assertIn("pthread_create-failed",
                                  self.refusals(extra["HPFREEZE_SHIM_LOG"]))


if __name__ == "__main__":
    unittest.main()
