"""Every command line in README.md and docs/**/*.md is valid shell as written, and the repo
files the examples name exist.

Which lines are commands (docs/development.md, "Shell examples in the docs"):
- a fenced block tagged sh, bash or shell is a script: the whole block is checked;
- in a block tagged console, and in an untagged block, a line starting with "$ " is a
  command (the prompt is stripped); the lines after it are its output;
- an untagged block without any "$ " line holds no commands, except lines that start with
  "hpfreeze " (synopses and bare example commands; "hpfreeze: " starts a diagnostic);
- a command goes on over the next lines while bash says it is unfinished (a trailing
  backslash, an open quote, a here-document), or while they start with "> ".
Each command or script goes through `bash -n`. A word of it with a "/" whose first
component is a top-level entry of the repository (testdata/..., scripts/...) names a repo
file and must exist (glob patterns must match); other names are the reader's own files.
Failures name FILE:LINE, so they point at the doc line to fix.
"""
import glob
import os
import re
import shlex
import subprocess
import unittest

from hpf import SOURCE

SCRIPT_TAGS = {"sh", "bash", "shell"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")


def doc_files():
    files = [os.path.join(SOURCE, "README.md")]
    files += glob.glob(os.path.join(SOURCE, "docs", "**", "*.md"), recursive=True)
    return sorted(files)


def blocks(path):
    """(tag, [(line number, text)]) for each fenced block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, tag = m.groups()
        body, i = [], i + 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and lines[i].strip().strip(fence[0]) == ""):
            text = lines[i]
            body.append((i + 1, text[len(indent):] if text.startswith(indent) else text))
            i += 1
        out.append((tag.lower(), body))
        i += 1
    return out


def bash_run(text):
    r = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, timeout=30)
    return r.returncode, r.stderr.strip()


def bash_check(text):
    """None if `bash -n` accepts text, else its first message line."""
    status, message = bash_run(text)
    return None if status == 0 else message.split("\n")[0]


def unfinished(text):
    """Whether bash wants more lines: an open quote, a here-document without its end."""
    _, message = bash_run(text)
    return any(s in message for s in ("unexpected end of file", "unexpected EOF",
                                      "here-document"))


def commands(tag, body):
    """(first line number, text) of each command or script in a block."""
    if not body:
        return []
    prompted = any(text.startswith("$ ") or text == "$" for _, text in body)
    if tag in SCRIPT_TAGS and not prompted:
        return [(body[0][0], "\n".join(text for _, text in body))]
    if tag not in SCRIPT_TAGS | {"console", ""}:
        return []
    if prompted:
        starts = [k for k, (_, text) in enumerate(body) if text.startswith("$ ")]
        strip = 2
    elif tag == "":
        starts = [k for k, (_, text) in enumerate(body) if text.startswith("hpfreeze ")]
        strip = 0
    else:
        return []
    out = []
    for k in starts:
        lineno, text = body[k]
        command = [text[strip:]]
        j = k + 1
        while j < len(body):
            joined = "\n".join(command)
            nxt = body[j][1]
            if nxt.startswith("> "):
                command.append(nxt[2:])
            elif joined.endswith("\\") or unfinished(joined):
                if nxt.startswith("$ "):
                    break
                command.append(nxt)
            else:
                break
            j += 1
        out.append((lineno, "\n".join(command)))
    return out


def repo_entries():
    """The top-level names of the repository's tracked files (a build tree is not one)."""
    r = subprocess.run(["git", "-C", SOURCE, "ls-files"], capture_output=True, text=True)
    if r.returncode == 0 and r.stdout:
        return {line.split("/", 1)[0] for line in r.stdout.splitlines()}
    return {name for name in os.listdir(SOURCE)
            if not name.startswith("build") and name != ".git"}


def words(text):
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # here-document bodies and the like: plain splitting is enough
        return text.split()


def missing_repo_paths(text, entries):
    out = []
    for word in words(text):
        for part in word.split("=")[-1:]:
            if ("/" not in part or "$" in part or "://" in part or part.startswith("-")
                    or part.startswith("/")):
                continue
            first = part.split("/", 1)[0]
            if first in (".", ".."):
                continue
            if first in entries and not glob.glob(os.path.join(SOURCE, part)):
                out.append(part)
    return out


class DocsAreCopyPasteSafe(unittest.TestCase):
    def test_every_command_line_is_valid_bash(self):
        failures, checked = [], 0
        for path in doc_files():
            rel = os.path.relpath(path, SOURCE)
            for tag, body in blocks(path):
                for lineno, text in commands(tag, body):
                    checked += 1
                    message = bash_check(text + "\n")
                    if message is not None:
                        # bash numbers the lines of what it read from 1.
                        m = re.search(r"line (\d+):", message)
                        at = lineno + int(m.group(1)) - 1 if m else lineno
                        first = text.split("\n")[at - lineno] if m else text.split("\n")[0]
                        failures.append(f"{rel}:{at}: not valid shell ({message}): {first}")
        if failures:
            self.fail("\n" + "\n".join(failures))
        self.assertGreater(checked, 30)  # the rules above found the docs' commands

    def test_examples_name_only_files_the_repo_has(self):
        entries = repo_entries()
        self.assertIn("testdata", entries)
        failures = []
        for path in doc_files():
            rel = os.path.relpath(path, SOURCE)
            for tag, body in blocks(path):
                for lineno, text in commands(tag, body):
                    for missing in missing_repo_paths(text, entries):
                        failures.append(f"{rel}:{lineno}: names {missing}, which the repo "
                                        "does not have")
        if failures:
            self.fail("\n" + "\n".join(failures))


class TheRulesThemselves(unittest.TestCase):
    """The extraction rules, on made-up Markdown, so a broken rule cannot pass silently."""

    def check(self, markdown):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(markdown)
        try:
            return [(tag, commands(tag, body)) for tag, body in blocks(f.name)]
        finally:
            os.unlink(f.name)

    def test_blocks_and_commands(self):
        found = self.check("text\n```sh\na=1\necho $a\n```\n"
                           "```console\n$ ls \\\n    -l\noutput line\n$ cat <<'EOF'\nx\nEOF\n```\n"
                           "```\nhpfreeze freeze --plan PLAN\nhpfreeze: error: x\n```\n"
                           "  ```\n  $ echo 'a\n  b'\n  ```\n"
                           "```json\n{\"a\": 1}\n```\n")
        self.assertEqual(found, [
            ("sh", [(3, "a=1\necho $a")]),
            ("console", [(7, "ls \\\n    -l"), (10, "cat <<'EOF'\nx\nEOF")]),
            ("", [(15, "hpfreeze freeze --plan PLAN")]),
            ("", [(19, "echo 'a\nb'")]),
            ("json", []),
        ])

    def test_the_readme_mistake_is_caught(self):
        self.assertIsNotNone(bash_check("hpfreeze parse 'SS( 0 , 2 )' S(-1) P(sum)\n"))
        self.assertIsNone(bash_check("hpfreeze parse 'SS( 0 , 2 )' 'S(-1)' 'P(sum)'\n"))

    def test_repo_paths(self):
        entries = {"testdata", "scripts"}
        self.assertEqual(missing_repo_paths(
            "hpfreeze freeze --plan testdata/example/plan.json --model=testdata/nope.json "
            "-o out/meta.json < scripts/none.sh plan.json /tmp/x testdata/cases/*/plan.json",
            entries), ["testdata/nope.json", "scripts/none.sh"])


if __name__ == "__main__":
    unittest.main()
