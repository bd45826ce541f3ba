"""Shared helpers for the end-to-end tests: run the real binary with a scrubbed environment."""
import json
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

    def write_json(self, name, value):
        """`value` as JSON in the directory (indent 1); returns its path."""
        path = self.path(name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1)
        return path


def sanitized_binary():
    """True for an ASan/UBSan build, whose shadow memory and quarantine inflate peak RSS."""
    with open(BINARY, "rb") as f:
        data = f.read()
    return any(marker in data for marker in (b"__asan_init", b"libasan", b"AddressSanitizer"))


def write_bundle(directory, model_name="M", meta=None):
    """A generated bundle in `directory` as upstream writes one: the modeling file, its diff,
    __init__.py, then codegen_meta.json (`meta`, or the tiny case's golden meta) with
    `model_name` and the `outputs` upstream's record_output_hashes records (hashlib's sha256,
    text-mode line counts). Returns the modeling file's name."""
    import hashlib
    import json
    base = model_name or "model"
    modeling = "modeling_" + "".join(c if c.isalnum() or c == "_" else "_" for c in base) + \
        "_gen_npu.py"
    os.makedirs(directory, exist_ok=True)
    files = {modeling: "import torch\n\n\nclass Model:\n    pass\n",
             modeling + ".diff": "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n",
             "__init__.py": "from .%s import Model\n" % modeling[:-3]}
    roles = {modeling: "modeling", modeling + ".diff": "diff", "__init__.py": "init"}
    outputs = {}
    for name, text in sorted(files.items()):
        with open(os.path.join(directory, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        with open(os.path.join(directory, name), "r", encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        outputs[roles[name]] = {"sha256": hashlib.sha256(text.encode()).hexdigest(),
                                "lines": lines}
    if meta is None:
        with open(case("tiny", "expected.json"), encoding="utf-8") as f:
            meta = json.load(f)
    meta = dict(meta, model_name=model_name, outputs=outputs)
    with open(os.path.join(directory, "codegen_meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
    return modeling
