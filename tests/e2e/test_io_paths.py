"""Which file an output path names, by what it is rather than how it is spelled
(docs/reliability.md, "Own descriptors" and "Outputs written in place").

- A path is our descriptor N when the real path of its directory is our /proc/PID/fd or
  /proc/PID/task/TID/fd and its last component is N: the spellings of that directory are
  generated here (every way of reaching it, times redundant `/`, `./` and `..` steps, times
  links made in a temporary directory), and `-o SPELLING >> build.log` must append to the
  log every time. Any other path is a named file, replaced atomically.
- Another process's descriptor is refused, in every spelling.
- An output written in place (stdout, a descriptor) may not be an input or another output,
  for every command that writes, every input role and every way of opening the file.
"""
import itertools
import os
import shutil
import subprocess
import unittest

from hpf import BINARY, TempDirTest, case, env, read

TINY = {name: case("tiny-base", name) for name in ("plan.json", "model.json", "base.json")}
EXPECTED_NO_BASE = read(case("tiny", "expected.json"))
PID = "@PID@"  # the pid of the hpfreeze process: bash puts its own $$ in, then execs


def run_sh(script, *args, cwd):
    """bash -c script with $0 = the binary and $1... = args."""
    return subprocess.run(["bash", "-c", script, BINARY, *args], capture_output=True,
                          timeout=60, env=env(), cwd=cwd)


def decorations(path, cwd_name):
    """path, and spellings of the same place with steps the kernel skips: doubled slashes,
    `.` components, a detour through a parent and back (cwd_name: the name of the current
    directory in its parent, for a relative path)."""
    absolute = path.startswith("/")
    names = path.strip("/").split("/")
    lead = "/" if absolute else "./"
    yield path
    yield ("//" if absolute else "") + "//".join(names)
    yield lead + "/./".join(names)
    yield lead + "".join(n + "/./" for n in names).rstrip("/")
    if absolute:
        yield "/" + "/".join([names[0], "..", names[0]] + names[1:])
    else:
        yield "../" + cwd_name + "/" + path


class OwnDescriptors(TempDirTest):
    def setUp(self):
        super().setUp()
        for name in ("plan.json", "model.json"):
            shutil.copyfile(TINY[name], self.path(name))
        self.log = self.path("build.log")
        # Links to the descriptor directory (or on the way to it), absolute and relative.
        depth = len(os.path.realpath(self.dir).strip("/").split("/"))
        links = {"fdlink": "/proc/self/fd", "devlink": "/dev", "selflink": "/proc/self",
                 "tslink": "/proc/thread-self", "chain": "fdlink",
                 "rel": "../" * depth + "proc/self/fd", "devfd": "/dev/fd"}
        for name, target in links.items():
            os.symlink(target, self.path(name))
        self.fixed = sorted(os.listdir(self.dir))

    def fd_directories(self):
        """Every spelling of our descriptor directory this test knows how to make."""
        up = "../" * len(os.path.realpath(self.dir).strip("/").split("/"))
        direct = ["/dev/fd", "/proc/self/fd", "/proc/%s/fd" % PID, "/proc/thread-self/fd",
                  "/proc/%s/task/%s/fd" % (PID, PID), "/proc/self/task/%s/fd" % PID,
                  "/proc/self/../self/fd", "/proc/self/../%s/fd" % PID,
                  "/proc/thread-self/../../fd", "/dev/fd/../fd", "/dev/../dev/fd",
                  "/proc/self/root/proc/self/fd", "/proc/self/root/dev/fd",
                  "/proc/self/cwd/%sproc/self/fd" % up]
        linked = ["fdlink", "devlink/fd", "selflink/fd", "tslink/fd", "chain", "rel", "devfd",
                  "./chain", "selflink/task/%s/fd" % PID, "/proc/self/cwd/fdlink"]
        linked += [self.path(name) for name in linked[:7]]
        for base in direct + linked:
            yield from decorations(base, os.path.basename(self.dir))

    def append_through(self, spelling):
        return run_sh('p=${1//%s/$$}; exec "$0" freeze --plan plan.json --model model.json '
                      '-o "$p" >> build.log' % PID, spelling, cwd=self.dir)

    def test_every_spelling_of_our_descriptor_appends_to_the_log(self):
        with open(self.log, "wb") as f:
            f.write(b"earlier\n")
        inode = os.stat(self.log).st_ino
        spellings = sorted({d + sep + "1" for d in self.fd_directories()
                            for sep in ("/", "//", "/./")})
        self.assertGreater(len(spellings), 200)
        for spelling in spellings:
            r = self.append_through(spelling)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""), spelling)
        self.assertEqual(read(self.log), b"earlier\n" + EXPECTED_NO_BASE * len(spellings))
        self.assertEqual(os.stat(self.log).st_ino, inode)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(self.fixed + ["build.log"]))

    def test_a_descriptor_other_than_stdout_is_written_as_it_is(self):
        with open(self.log, "wb") as f:
            f.write(b"earlier\n")
        spellings = ["/dev/fd/3", "/proc/self/fd//3", "fdlink/./3", "/proc/%s/fd/3" % PID]
        for spelling in spellings:
            r = run_sh('p=${1//%s/$$}; exec "$0" freeze --plan plan.json --model model.json '
                       '-o "$p" 3>> build.log' % PID, spelling, cwd=self.dir)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""), spelling)
        self.assertEqual(read(self.log), b"earlier\n" + EXPECTED_NO_BASE * len(spellings))

    def test_a_named_file_is_replaced_atomically_even_when_stdout_is_open_on_it(self):
        os.symlink("build.log", self.path("link.log"))
        for name in ("build.log", "./build.log", self.path("build.log"),
                     self.dir + "//./build.log", "/proc/self/cwd/build.log", "link.log"):
            with open(self.log, "wb") as f:
                f.write(b"earlier\n")
            inode = os.stat(self.log).st_ino
            r = self.append_through(name)
            self.assertEqual((r.returncode, r.stderr), (0, b""), name)
            # The new file took the name; stdout's old file, now nameless, got nothing.
            self.assertEqual(read(self.log), EXPECTED_NO_BASE, name)
            self.assertNotEqual(os.stat(self.log).st_ino, inode, name)

    def test_names_in_our_descriptor_directory_that_are_no_open_descriptor(self):
        with open(self.log, "wb") as f:
            f.write(b"earlier\n")
        cases = [(d + name, "cannot write: No such file or directory")
                 for d in ("/dev/fd/", "fdlink/") for name in ("01", "+1", "1 ", "0x1", "-1")]
        cases += [("/dev/fd/1/", "is a directory"), ("/dev/fd", "is a directory"),
                  ("/dev/fd/7", "cannot write: Bad file descriptor"),
                  ("/proc/self/fd/0", "cannot write: Bad file descriptor")]  # stdin: read only
        for name, message in cases:
            r = run_sh('exec "$0" freeze --plan plan.json --model model.json -o "$1" '
                       '>> build.log < plan.json', name, cwd=self.dir)
            self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                             (2, b"", "hpfreeze: error: %s: %s\n" % (name, message)))
        self.assertEqual(read(self.log), b"earlier\n")
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(self.fixed + ["build.log"]))

    def test_another_processes_descriptor_is_refused_in_every_spelling(self):
        victim_log = self.path("victim.log")
        with open(victim_log, "wb") as f:
            f.write(b"the other process's log\n")
        with open(victim_log, "ab") as out:
            victim = subprocess.Popen(["sleep", "60"], stdout=out)
        try:
            pid = str(victim.pid)
            os.symlink("/proc/%s/fd" % pid, self.path("theirs"))
            os.symlink("/proc/%s" % pid, self.path("theirproc"))
            bases = ["/proc/%s/fd" % pid, "/proc/%s/task/%s/fd" % (pid, pid), "theirs",
                     "theirproc/fd", "/proc/self/../%s/fd" % pid]
            spellings = sorted({d + "/1" for base in bases
                                for d in decorations(base, os.path.basename(self.dir))})
            for spelling in spellings:
                r = run_sh('exec "$0" freeze --plan plan.json --model model.json -o "$1"',
                           spelling, cwd=self.dir)
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (2, b"", "hpfreeze: error: %s: cannot write: a descriptor of "
                                          "another process\n" % spelling))
        finally:
            victim.kill()
            victim.wait()
        self.assertEqual(read(victim_log), b"the other process's log\n")


# Every command that writes, with its outputs that may be written in place and its inputs.
# An input role is (flag in the message, how it is given on the command line).
def commands():
    meta, plan, model, base = "meta.json", "plan.json", "model.json", "base.json"
    freeze = ["freeze", "--plan", plan, "--model", model, "--base", base]
    return [
        # name, argv before the output flags, inputs {file: flag}, outputs [(flag, kind)]
        ("freeze", freeze, {plan: "--plan", model: "--model", base: "--base"},
         [("-o", "stdout"), ("--depfile", "descriptor")]),
        ("thaw", ["thaw", meta], {meta: "the input meta"},
         [("-o", "stdout"), ("--model-out", "descriptor")]),
        ("check", ["check", meta, "--model", model], {meta: "META", model: "--model"}, []),
        ("report", ["report", meta, "--model", model], {meta: "META", model: "--model"}, []),
        ("diff", ["diff", meta, "old.json"], {meta: "OLD", "old.json": "NEW"}, []),
        ("expand", ["expand", plan], {plan: "PLAN"}, []),
    ]


class OutputsWrittenInPlace(TempDirTest):
    def setUp(self):
        super().setUp()
        for name, src in TINY.items():
            shutil.copyfile(src, self.path(name))
        r = subprocess.run([BINARY, "freeze", "--plan", TINY["plan.json"], "--model",
                            TINY["model.json"], "-o", self.path("meta.json")], env=env())
        self.assertEqual(r.returncode, 0)
        shutil.copyfile(self.path("meta.json"), self.path("old.json"))
        self.before = {name: read(self.path(name)) for name in os.listdir(self.dir)}

    def assert_refused(self, argv, redirect, line):
        r = run_sh('exec "$0" "$@" ' + redirect, *argv, cwd=self.dir)
        self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                         (2, b"", "hpfreeze: error: %s\n" % line), (argv, redirect))
        self.assertEqual({n: read(self.path(n)) for n in os.listdir(self.dir)}, self.before,
                         (argv, redirect))

    # Ways to open stdout, or descriptor N, on a file without truncating it.
    STDOUT_WRITERS = [("-", "1<>{f}"), ("-", "1>>{f}"), ("/dev/stdout", "1<>{f}"),
                      ("/proc/self/fd/1", "1>>{f}")]
    DESCRIPTOR_WRITERS = [("/dev/fd/3", "3<>{f}"), ("/proc/self/fd/4", "4>>{f}"),
                          ("/dev/fd//5", "5<>{f}")]

    def test_an_output_written_in_place_is_never_an_input(self):
        runs = 0
        for name, argv, inputs, outputs in commands():
            for (in_file, in_flag), (out_flag, kind) in itertools.product(
                    inputs.items(), outputs or [("", "stdout")]):
                writers = self.STDOUT_WRITERS if kind == "stdout" else self.DESCRIPTOR_WRITERS
                for spelling, redirect in writers:
                    args = list(argv)
                    if out_flag == "--depfile":
                        args += ["-o", "out.json"]
                    elif out_flag == "--model-out":
                        args += ["-o", "p.json"]
                    if out_flag:
                        args += [out_flag, spelling]
                    if not out_flag or spelling == "-":
                        shown = "<stdout>"
                    else:
                        shown = spelling
                    self.assert_refused(args, redirect.format(f=in_file),
                                        "%s: %s and %s name the same file"
                                        % (shown, out_flag or "the output", in_flag))
                    runs += 1
        # Inputs given as stdin: `-` and /dev/stdin read the file stdout is open on.
        for argv, in_file, line in (
                (["freeze", "--plan", "-", "--model", "model.json"], "plan.json", "-o and --plan"),
                (["freeze", "--plan", "plan.json", "--model", "/dev/stdin"], "model.json",
                 "-o and --model"),
                (["check", "-"], "meta.json", "the output and META"),
                (["expand", "/dev/stdin"], "plan.json", "the output and PLAN"),
                (["parse"], "plan.json", "the output and stdin")):
            self.assert_refused(argv, "< {f} 1<>{f}".format(f=in_file),
                                "<stdout>: %s name the same file" % line)
            runs += 1
        self.assertGreater(runs, 40)

    def test_an_output_written_in_place_is_never_another_output(self):
        for argv, first, second in (
                (["thaw", "meta.json"], "-o", "--model-out"),
                (["freeze", "--plan", "plan.json", "--model", "model.json"], "-o", "--depfile")):
            for (spelling, redirect), named_first in itertools.product(
                    self.STDOUT_WRITERS[1:] + self.DESCRIPTOR_WRITERS, (True, False)):
                if argv[0] == "freeze" and spelling == "-" and not named_first:
                    continue  # a depfile needs -o to be a file: a usage error of its own
                # The named file as one output, a descriptor open on it as the other.
                args = list(argv)
                if named_first:
                    args += [first, "o.json", second, spelling]
                    line = "%s: %s and %s name the same file" % (
                        "<stdout>" if spelling == "-" else spelling, first, second)
                else:
                    args += [first, spelling, second, "o.json"]
                    line = "o.json: %s and %s name the same file" % (first, second)
                with open(self.path("o.json"), "wb") as f:
                    f.write(b"old output")
                self.before["o.json"] = b"old output"
                self.assert_refused(args, redirect.format(f="o.json"), line)
        # `thaw META -o - --model-out m.json > m.json`: the shell empties m.json, hpfreeze
        # refuses, and nothing is written into the emptied file.
        r = run_sh('exec "$0" thaw meta.json -o - --model-out m.json > m.json', cwd=self.dir)
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (2, "hpfreeze: error: m.json: -o and --model-out name the same file\n"))
        self.assertEqual(read(self.path("m.json")), b"")

    def test_character_devices_may_be_named_twice(self):
        for script in (
                'exec "$0" freeze --plan plan.json --model model.json -o /dev/null '
                '--depfile /dev/null',
                'exec "$0" freeze --plan plan.json --model model.json -o /dev/stdout '
                '--depfile /dev/null > /dev/null',
                'exec "$0" thaw meta.json -o /dev/fd/3 --model-out - 3>/dev/null > /dev/null',
                '"$0" check - < /dev/null > /dev/null; test $? = 1'):  # read, found empty
            r = run_sh(script, cwd=self.dir)
            self.assertEqual(r.returncode, 0, (script, r.stderr))


if __name__ == "__main__":
    unittest.main()
