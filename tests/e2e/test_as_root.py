"""scripts/as-root.sh, the one rule of every install line of README.md, scripts/setup.sh and
.ci/run: a command runs as it is for root (a minimal Debian, as the newcomer review of
2026-12-07 found, has no sudo) and through sudo for anyone else. `id` and `sudo` are stand-ins
on a PATH of their own, so no test needs root or sudo."""
import os
import re
import subprocess
import tempfile
import unittest

from hpf import SOURCE

AS_ROOT = os.path.join(SOURCE, "scripts", "as-root.sh")


class AsRoot(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.tmp.name, "bin")
        os.mkdir(self.bin)
        # Only what the script needs, so that the machine's own sudo is not on PATH.
        for tool in ("bash", "sed", "env", "printf"):
            for d in ("/usr/bin", "/bin"):
                if os.path.exists(os.path.join(d, tool)):
                    os.symlink(os.path.join(d, tool), os.path.join(self.bin, tool))
                    break
        self.log = os.path.join(self.tmp.name, "sudo.log")

    def tearDown(self):
        self.tmp.cleanup()

    def stand_in(self, name, text):
        path = os.path.join(self.bin, name)
        with open(path, "w") as f:
            f.write("#!" + os.path.join(self.bin, "bash") + "\n" + text)
        os.chmod(path, 0o755)

    def run_as(self, uid, *command, sudo=True):
        self.stand_in("id", f'[ "$1" = -u ] && echo {uid}\n')
        if sudo:
            self.stand_in("sudo", f'printf "%s\\n" "$*" >> "{self.log}"\nexec "$@"\n')
        return subprocess.run([os.path.join(self.bin, "bash"), AS_ROOT, *command],
                              capture_output=True, text=True, timeout=30,
                              env={"PATH": self.bin, "LC_ALL": "C"})

    def sudo_calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def test_root_runs_the_command_as_it_is(self):
        r = self.run_as(0, "printf", "%s|", "a b", "c")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "a b|c|", ""))
        self.assertEqual(self.sudo_calls(), [])
        r = self.run_as(0, "printf", "x", sudo=False)  # no sudo at all: root needs none
        self.assertEqual((r.returncode, r.stdout), (0, "x"))

    def test_anyone_else_goes_through_sudo(self):
        r = self.run_as(1000, "printf", "%s|", "a b", "c")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "a b|c|", ""))
        self.assertEqual(self.sudo_calls(), ["printf %s| a b c"])
        r = self.run_as(1000, "bash", "-c", "exit 3")
        self.assertEqual(r.returncode, 3)  # the command's own status

    def test_no_root_and_no_sudo_says_so(self):
        r = self.run_as(1000, "apt-get", "install", "x", sudo=False)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (1, "", (
            "as-root.sh: apt-get needs root: this user is not root and there is no sudo; run "
            "it as root\n")))

    def test_no_command_is_a_usage_error(self):
        r = self.run_as(0)
        self.assertEqual(r.returncode, 2)
        self.assertIn("scripts/as-root.sh COMMAND [ARG...]", r.stderr)


class ReadmeInstallLines(unittest.TestCase):
    def test_every_install_line_goes_through_as_root(self):
        """No shell line of README.md starts with sudo (a root-only Debian has none), and
        every line that installs (apt-get install, cmake --install) runs through
        scripts/as-root.sh."""
        with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
            text = f.read()
        blocks = re.findall(r"^```sh\n(.*?)^```$", text, re.M | re.S)
        lines = [line.strip() for block in blocks for line in block.splitlines()]
        installs = [line for line in lines if re.search(r"apt-get install|cmake --install", line)]
        self.assertGreaterEqual(len(installs), 2, installs)
        for line in installs:
            self.assertTrue(line.startswith("scripts/as-root.sh "), line)
        self.assertEqual([line for line in lines if re.match(r"sudo\b", line)], [])
        self.assertNotRegex(text, r"`sudo ")


if __name__ == "__main__":
    unittest.main()
