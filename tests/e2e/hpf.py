"""Shared helpers for the end-to-end tests: run the real binary with a scrubbed environment."""
import os
import subprocess
import tempfile
import unittest

BINARY = os.environ["HPFREEZE_BINARY"]
TESTDATA = os.environ["HPFREEZE_TESTDATA_DIR"]
SOURCE = os.environ.get("HPFREEZE_SOURCE_DIR", os.path.dirname(TESTDATA))


def env(**extra):
    e = {k: v for k, v in os.environ.items() if k != "SPDLOG_LEVEL"}
    e["NO_COLOR"] = "1"
    e.update(extra)
    return e


def run(*args, stdin=None, extra_env=None, cwd=None, timeout=60):
    """Runs hpfreeze; returns CompletedProcess with bytes stdout/stderr."""
    return subprocess.run([BINARY, *args], input=stdin, capture_output=True, timeout=timeout,
                          env=env(**(extra_env or {})), cwd=cwd)


def case(name, *parts):
    return os.path.join(TESTDATA, "cases", name, *parts)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class TempDirTest(unittest.TestCase):
    """A test case with a fresh temporary directory per test: self.dir, self.path(...)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.dir, *parts)


def sanitized_binary():
    """True for an ASan/UBSan build, whose shadow memory and quarantine inflate peak RSS."""
    with open(BINARY, "rb") as f:
        data = f.read()
    return any(marker in data for marker in (b"__asan_init", b"libasan", b"AddressSanitizer"))
