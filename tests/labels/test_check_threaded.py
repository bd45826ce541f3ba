#!/usr/bin/env python3
"""check_threaded.py's own rules, on small trees made here: each way a unit test starts a
second thread makes an unlisted test fail, a listed test that starts none fails, comments
count for nothing, and a tree whose list and sources agree passes."""
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_threaded  # noqa: E402

PLAIN = '#include <gtest/gtest.h>\nTEST(A, B) { EXPECT_EQ(1, 1); }\n'


class Threaded(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        self.listed = ["task_test"]
        self.files = {
            "tests/unit/base/task_test.cc": '#include "base/background_task.h"\n' + PLAIN,
            "tests/unit/io/plain_test.cc": PLAIN,
        }

    def tearDown(self):
        self.dir.cleanup()

    def errors(self):
        files = dict(self.files)
        files["tests/CMakeLists.txt"] = (
            "set(HPFREEZE_THREADED_TESTS %s)\nadd_custom_target(x)\n" % " ".join(self.listed))
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return check_threaded.check(self.root)

    def test_a_list_that_agrees_passes(self):
        self.assertEqual(self.errors(), [])

    def test_each_way_to_start_a_thread_needs_the_label(self):
        for code, rule in [
            ("std::thread t([] {}); t.join();", "starts a thread of its own"),
            ("auto f = std::async(std::launch::async, [] {});", "starts a thread of its own"),
            ("std::jthread t([] {});", "starts a thread of its own"),
            ("constexpr Concurrency kTwoCpus{2};", "gives the library two or more CPUs"),
            ("run(Concurrency{16});", "gives the library two or more CPUs"),
            ("void f(Concurrency concurrency = {2});", "gives the library two or more CPUs"),
            ("o.concurrency = Concurrency{GetParam()};", "gives the library two or more CPUs"),
            ("for (auto cpus : {1, 3}) run(Concurrency{cpus});",
             "gives the library two or more CPUs"),
        ]:
            with self.subTest(code=code):
                self.files["tests/unit/io/plain_test.cc"] = PLAIN + code + "\n"
                self.assertEqual(self.errors(), [
                    "tests/unit/io/plain_test.cc: %s, but HPFREEZE_THREADED_TESTS does not list "
                    "plain_test" % rule])

    def test_one_cpu_and_comments_start_none(self):
        self.files["tests/unit/io/plain_test.cc"] = PLAIN + (
            "run(Concurrency{1}); run(Concurrency{});\n"
            "// std::thread here would start one\n/* Concurrency{2} */\n"
            "// #include \"base/background_task.h\"\n"
            "const char* s = \"std::thread\"; std::thread::id none;\n")
        self.assertEqual(self.errors(), [])

    def test_a_listed_test_that_starts_none_fails(self):
        self.listed.append("plain_test")
        self.assertEqual(self.errors(), [
            "tests/unit/io/plain_test.cc: starts no second thread, but HPFREEZE_THREADED_TESTS "
            "lists plain_test"])

    def test_a_listed_name_that_is_no_test_fails(self):
        self.listed.append("gone_test")
        self.assertEqual(self.errors(), [
            "tests/CMakeLists.txt: gone_test is listed as threaded but is no unit test"])


if __name__ == "__main__":
    unittest.main()
