"""Shared by the packaging tests (install, .deb, man pages, completion, Python and CMake
packages): the build tree of the binary under test, and what its CLI11 --help lists,
read here independently of docs/man/manpages.cmake and the completion scripts."""
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional

from hpf import BINARY


def build_dir():
    """The CMake build tree holding BINARY (the directory with CMakeCache.txt above it)."""
    d = os.path.dirname(os.path.abspath(BINARY))
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "CMakeCache.txt")):
            return d
        d = os.path.dirname(d)
    raise RuntimeError(f"no CMakeCache.txt above {BINARY}")


@dataclass
class Entry:
    """One line of an Options, Positionals or Subcommands section of --help."""
    names: List[str]         # "-o", "--output"; a positional's or a command's name
    value: Optional[str]     # the placeholder: "FILE", "NAME", "AXIS=N[,AXIS=N...]"
    choices: List[str]       # from "NAME:{a,b}"
    required: bool
    repeated: bool           # "PLACEMENT ...": any number of them
    text: str


@dataclass
class Help:
    summary: str = ""
    usage: str = ""
    options: List[Entry] = field(default_factory=list)
    positionals: List[Entry] = field(default_factory=list)
    commands: List[Entry] = field(default_factory=list)
    exit_status: List[tuple] = field(default_factory=list)   # (code, text)
    examples: List[str] = field(default_factory=list)


def entry(spec, text):
    words = spec.split(" ")
    names = words[0].split(",")
    value, choices, required, repeated = None, [], False, False
    for word in words[1:]:
        if word == "REQUIRED":
            required = True
        elif word == "...":
            repeated = True
        elif not word.startswith("["):  # "[10]": CLI11's default
            m = re.fullmatch(r"([^:]+):\{(.*)\}", word)
            value, choices = (m.group(1), m.group(2).split(",")) if m else (word, [])
    return Entry(names, value, choices, required, repeated, text)


def parse_help(text):
    """The parts of a CLI11 --help text."""
    lines = text.split("\n")
    h = Help(summary=lines[0])
    section, last = None, None
    for line in lines[1:]:
        if line.startswith("Usage: "):
            h.usage = line[len("Usage: "):]
            continue
        m = re.fullmatch(r"([A-Z][A-Za-z ]*):", line)
        if m:
            section, last = m.group(1), None
            continue
        if not line.startswith(" "):
            section, last = None, None
            continue
        if section == "Examples":
            h.examples.append(line.strip())
            continue
        m = re.fullmatch(r"  (\S+(?: \S+)*)(?: {2,}(.*))?", line)
        if m:
            if section == "Exit status":
                h.exit_status.append((m.group(1), m.group(2) or ""))
                continue
            last = entry(m.group(1), m.group(2) or "")
            {"Options": h.options, "Positionals": h.positionals,
             "Subcommands": h.commands}[section].append(last)
        elif last is not None and line.strip():
            last.text = line.strip()  # CLI11 wraps a wide left column's text to the next line
    return h


def help_of(*command, binary=BINARY):
    r = subprocess.run([binary, *command, "--help"], capture_output=True, text=True,
                       check=True, env=dict(os.environ, NO_COLOR="1"))
    return parse_help(r.stdout)


def commands(binary=BINARY):
    return [c.names[0] for c in help_of(binary=binary).commands]

