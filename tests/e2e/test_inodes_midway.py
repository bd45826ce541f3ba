"""The inodes run out part way through a write of several outputs (test_limits.OutOfInodes
covers none left at all): the first temporary file gets the last inode, the second output
finds none; or both temporary files fit but the old files cannot be given the second name
that keeps them until every output is in place (on tmpfs a hard link takes an inode).
Either way exit 2 with ENOSPC named, every old output intact, no temporary file or second
name left. Runs in a private mount namespace (root only; skipped with the reason
elsewhere).
"""
import os
import subprocess
import tempfile
import unittest

from hpf import BINARY, TempDirTest, case, env, read
from test_io_faults import private_mount_prefix

TINY = {name: case("tiny", name) for name in ("plan.json", "model.json", "expected.json")}

# $1 the mount point, $2 the files to create first (a shell command), $3 how many inodes to
# leave free once every other one is taken; the rest is hpfreeze's command line. Prints the
# exit status, then each remaining file but the fillers with its first line.
SCRIPT = r"""
mount -t tmpfs -o size=4m,nr_inodes=16 none "$1" || exit 99
cd "$1" || exit 99
eval "$2" || exit 99
free=$3
shift 3
i=0
while (: > "fill$i") 2>/dev/null; do i=$((i + 1)); done
[ "$i" -gt "$free" ] || exit 98
j=0
while [ "$j" -lt "$free" ]; do rm "fill$j"; j=$((j + 1)); done
"$@"
echo "rc=$?"
for f in * .*; do
  [ -f "$f" ] || continue
  case "$f" in fill*) ;; *) printf '%s %s\n' "$f" "$(head -n 1 "$f")";; esac
done
exit 0
"""


class OutOfInodesMidway(TempDirTest):
    maxDiff = None

    def run_full(self, setup, free, *args):
        prefix, reason = private_mount_prefix()
        if prefix is None:
            self.skipTest(reason)
        mnt = tempfile.mkdtemp(dir=self.dir)
        r = subprocess.run(prefix + ["sh", "-c", SCRIPT, "sh", mnt, setup, str(free), BINARY,
                                     *args], capture_output=True, timeout=120, env=env())
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertTrue(lines and lines[0].startswith("rc="), lines)
        return int(lines[0][3:]), r.stderr.decode(), sorted(lines[1:])

    def freeze(self, *args):
        return ("freeze", "--plan", TINY["plan.json"], "--model", TINY["model.json"], *args)

    def test_the_second_temporary_file_finds_no_inode(self):
        enospc = "hpfreeze: error: %s: cannot write: No space left on device\n"
        self.assertEqual(
            self.run_full("echo old > out.json && echo dep > out.d", 1,
                          *self.freeze("-o", "out.json", "--depfile", "out.d")),
            (2, enospc % "out.d", ["out.d dep", "out.json old"]))
        meta = self.path("meta.json")
        with open(meta, "wb") as f:
            f.write(read(TINY["expected.json"]))
        self.assertEqual(
            self.run_full("echo old > p.json", 1, "thaw", meta, "-o", "p.json", "--model-out",
                          "m.json"),
            (2, enospc % "m.json", ["p.json old"]))

    def test_no_inode_for_the_old_files_second_name(self):
        self.assertEqual(
            self.run_full("echo old > out.json && echo dep > out.d", 2,
                          *self.freeze("-o", "out.json", "--depfile", "out.d")),
            (2, "hpfreeze: error: out.json: cannot keep the old file until every output is "
                "written: No space left on device\n", ["out.d dep", "out.json old"]))

    def test_one_inode_is_enough_for_one_output(self):
        # The unnamed temporary file takes the inode; naming it (a link of a file with no
        # name yet) and the rename take none.
        self.assertEqual(self.run_full("true", 1, *self.freeze("-o", "out.json")),
                         (0, "", ["out.json {"]))


if __name__ == "__main__":
    unittest.main()
