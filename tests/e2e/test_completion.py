"""The zsh and fish completions (completions/_hpfreeze, completions/hpfreeze.fish), run by
each shell's own completion machinery: zsh's compsys in an interactive zsh on a pseudo
terminal, every match captured where compadd adds it; fish's `complete -C`. What they
offer is checked against the commands and options of `hpfreeze --help` (read by
tests/e2e/cli_help.py) and against what the bash completion offers."""
import os
import pty
import select
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from hpf import BINARY, SOURCE, sanitized_binary
from cli_help import help_of

COMPLETIONS = os.path.join(SOURCE, "completions")
BINDIR = os.path.dirname(os.path.abspath(BINARY))

# An interactive zsh's startup file: compinit on the completions directory, and compadd
# wrapped to print each match it adds (calls with -O, -A or -D only compute, so they pass).
# No listing after the completion, which ends the shell.
ZSHRC = r"""
PS1=""; RPS1=""; PROMPT_EOL_MARK=""
unset zle_bracketed_paste
unsetopt auto_list list_beep
fpath=(%(fpath)s $fpath)
autoload -Uz compinit && compinit -u -d "$ZDOTDIR/.zcompdump"
compadd() {
  if (( ${argv[(I)-[OAD]]} )); then builtin compadd "$@"; return; fi
  local -a __hpf_hits
  builtin compadd -A __hpf_hits "$@"
  local __hpf_hit
  for __hpf_hit in $__hpf_hits; do print -r -- "HPF-MATCH:$__hpf_hit"; done
  builtin compadd "$@"
}
_hpf_done() { print -r -- HPF-END; exit }
comppostfuncs=(_hpf_done)
bindkey -e
bindkey '^I' complete-word
print HPF-READY
"""


class Zsh:
    """Interactive zshs on a pseudo terminal, one per completion, sharing a startup
    directory (and so compinit's dump, which makes each start quick)."""

    def __init__(self, cwd, timeout=20):
        self.cwd, self.timeout = cwd, timeout
        self.zdotdir = tempfile.TemporaryDirectory()
        with open(os.path.join(self.zdotdir.name, ".zshrc"), "w") as f:
            f.write(ZSHRC % {"fpath": COMPLETIONS})

    def complete(self, line):
        """The matches zsh offers for `line` + TAB, sorted."""
        pid, fd = pty.fork()
        if pid == 0:  # the child: zsh without the system's startup files
            os.chdir(self.cwd)
            os.environ.update(TERM="dumb", ZDOTDIR=self.zdotdir.name, LC_ALL="C",
                              PATH=BINDIR + os.pathsep + os.environ.get("PATH", ""))
            os.execvp("zsh", ["zsh", "-d", "-i"])
        try:
            data, end = b"", time.monotonic() + self.timeout
            for marker, keys in ((b"HPF-READY", line.encode() + b"\t"), (b"HPF-END", b"")):
                while marker not in data:
                    ready, _, _ = select.select([fd], [], [], max(0, end - time.monotonic()))
                    if not ready:
                        raise AssertionError(f"zsh: no {marker!r} in {data[-500:]!r}")
                    data += os.read(fd, 65536)
                os.write(fd, keys)
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        out = data.decode(errors="replace").split("HPF-READY", 1)[1]
        return sorted({part.split("HPF-MATCH:", 1)[1] for part in out.split("\r\n")
                       if "HPF-MATCH:" in part})

    def close(self):
        self.zdotdir.cleanup()


def fish_complete(lines, cwd):
    """What fish's `complete -C` offers for each of `lines`: sorted (candidate, description)
    pairs, one list per line, all from one fish."""
    env = dict(os.environ, PATH=BINDIR + os.pathsep + os.environ.get("PATH", ""), LC_ALL="C")
    r = subprocess.run(["fish", "--no-config", "-c",
                        f"set -p fish_complete_path {COMPLETIONS}\n"
                        "for line in $argv; complete -C $line; echo HPF-END; end", *lines],
                       cwd=cwd, capture_output=True, text=True, env=env, timeout=60)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    out = [[]]
    for entry in r.stdout.splitlines():
        if entry == "HPF-END":
            out.append([])
        else:
            out[-1].append(tuple((entry.split("\t") + [""])[:2]))
    return [sorted(x) for x in out[:-1]]


def bash_complete(words, cwd):
    script = os.path.join(COMPLETIONS, "hpfreeze.bash")
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    body = (f'source "{script}"\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; '
            "COMPREPLY=()\n_hpfreeze\nprintf '%s\\n' \"${COMPREPLY[@]}\"")
    env = {"PATH": BINDIR + os.pathsep + os.environ.get("PATH", ""), "LC_ALL": "C"}
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", body], cwd=cwd,
                       capture_output=True, text=True, env=env, timeout=60)
    return sorted(line for line in r.stdout.splitlines() if line)


def long_options(*command):
    return sorted(n for e in help_of(*command).options for n in e.names if n.startswith("--"))


def all_options(*command):
    return sorted(n for e in help_of(*command).options for n in e.names)


# The scripts run the binary's --help dozens of times, which an instrumented binary makes
# slow; what they test is the shells' side, the same in the Release suite.
SKIP_SANITIZED = unittest.skipIf(sanitized_binary(), "the completion scripts, not the binary, "
                                                      "are under test; the Release suite runs them")


class Shells:
    """Prefixes every shell must complete alike; `complete(line)` gives its matches."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        for name in ("plan.json", "model.json", "pipeline.sh"):
            open(os.path.join(cls.dir, name), "w").close()
        os.mkdir(os.path.join(cls.dir, "out"))
        cls.commands = [c.names[0] for c in help_of().commands]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, cases):
        """Each (line, expected matches) of cases, all asked of the shell at once."""
        found = self.complete_all([line for line, _ in cases])
        for (line, expected), got in zip(cases, found):
            self.assertEqual([m.rstrip("/") for m in got], expected, line)

    def test_commands(self):
        self.check([("hpfreeze ", sorted(self.commands + ["help"])),
                    ("hpfreeze rep", ["report"]), ("hpfreeze -v pa", ["parse"]),
                    ("hpfreeze help th", ["thaw"])])

    def test_global_options(self):
        self.check([("hpfreeze -", all_options())])

    def test_options_of_every_command(self):
        self.check([(f"hpfreeze {c} --", long_options(c)) for c in self.commands] +
                   [("hpfreeze freeze --d", ["--depfile"])])

    def test_values(self):
        choices = next(e.choices for e in help_of("report").options if "--optimizer" in e.names)
        self.assertEqual(choices, ["none", "sgd", "momentum", "adam", "adamw"])
        self.check([("hpfreeze freeze --plan p", ["pipeline.sh", "plan.json"]),
                    ("hpfreeze report m.json --model m", ["model.json"]),
                    ("hpfreeze report m.json --optimizer ", sorted(choices)),
                    ("hpfreeze report m.json --optimizer ad", ["adam", "adamw"]),
                    ("hpfreeze report m.json --recipe ", sorted(["deepspeed", "dtensor", "fsdp2",
                                                                 "megatron"])),
                    # Values that are not files get nothing: a mesh, a count, a field name.
                    ("hpfreeze report m.json --mesh ", []), ("hpfreeze report m.json --top ", []),
                    ("hpfreeze diff a b --ignore ", []),
                    # diff --model takes report's planner flags, values and all.
                    ("hpfreeze diff a b --model m", ["model.json"]),
                    ("hpfreeze diff a b --model m.json --optimizer ad", ["adam", "adamw"]),
                    ("hpfreeze diff a b --model m.json --mesh ", []),
                    # --message-format's choices, before and after the command word, and
                    # the command word after its value.
                    ("hpfreeze --message-format ", ["github", "json", "text"]),
                    ("hpfreeze check m.json --message-format g", ["github"]),
                    ("hpfreeze --message-format github fr", ["freeze"])])

    def test_arguments(self):
        self.check([("hpfreeze expand pl", ["plan.json"]), ("hpfreeze parse S", [])])

    def test_the_same_as_bash(self):
        lines = [["hpfreeze", "freeze", "--"], ["hpfreeze", "report", "--"], ["hpfreeze", "he"],
                 ["hpfreeze", "freeze", "--plan", "p"],
                 ["hpfreeze", "report", "m.json", "--optimizer", "a"],
                 ["hpfreeze", "--message-format", ""], ["hpfreeze", "diff", "--message-format", "j"],
                 ["hpfreeze", "diff", "a", "b", "--expert-parallel", ""]]
        self.check([(" ".join(words), bash_complete(words, self.dir)) for words in lines])


@SKIP_SANITIZED
@unittest.skipUnless(shutil.which("zsh"), "zsh is not installed")
class ZshCompletion(Shells, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.zsh = Zsh(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.zsh.close()
        super().tearDownClass()

    def complete_all(self, lines):
        return [self.zsh.complete(line) for line in lines]

    def test_options_take_their_value_after_equals(self):
        self.check([("hpfreeze freeze --plan=p", ["pipeline.sh", "plan.json"])])


@SKIP_SANITIZED
@unittest.skipUnless(shutil.which("fish"), "fish is not installed")
class FishCompletion(Shells, unittest.TestCase):
    def complete_all(self, lines):
        return [[c for c, _ in found] for found in fish_complete(lines, self.dir)]

    def test_descriptions_come_from_help(self):
        commands, report = fish_complete(["hpfreeze ", "hpfreeze report --"], self.dir)
        found = dict(commands)
        for c in help_of().commands:
            self.assertEqual(found[c.names[0]], c.text)
        found = dict(report)
        for e in help_of("report").options:
            for name in e.names:
                if name.startswith("--"):
                    self.assertEqual(found[name], e.text, name)

    def test_an_options_description_is_shown_once(self):
        """On the option, not again beside each of its values: the values come bare, as
        bash and zsh offer them, and each option is listed once."""
        lines = ["hpfreeze report m.json --optimizer ", "hpfreeze report m.json --zero ",
                 "hpfreeze --message-format ", "hpfreeze check m.json --message-format ",
                 "hpfreeze report m.json --opt", "hpfreeze report --", "hpfreeze -"]
        found = fish_complete(lines, self.dir)
        report = {e.names[-1]: e for e in help_of("report").options}
        for line, got in zip(lines[:4], found):
            option = line.split()[-1]
            entry = report.get(option) or next(e for e in help_of().options
                                              if option in e.names)
            self.assertEqual(got, [(c, "") for c in sorted(entry.choices)], line)
        self.assertEqual(found[4], [("--optimizer", report["--optimizer"].text)])
        for line, got in zip(lines[5:], found[5:]):
            names = [c for c, _ in got]
            self.assertEqual(len(names), len(set(names)), (line, got))
            self.assertNotIn("", [d for _, d in got], line)


if __name__ == "__main__":
    unittest.main()
