#!/usr/bin/env python3
"""The layering test's own rules, on small trees made here: each rule fails, named FILE:LINE,
when a tree breaks it, and a tree that keeps them passes."""
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402

LAYERS = "0 base\n1 json\n2 commands\n3 apps\n"
DEVELOPMENT = ("# Developing\n\n## Layers\n| rank | folder | what |\n|---|---|---|\n"
               "| 0 | `base/` | x |\n| 1 | `json/` | x |\n| 2 | `commands/` | x |\n"
               "| 3 | `apps/` | x |\n")


class Layers(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        self.files = {
            "docs/layers.txt": LAYERS,
            "docs/development.md": DEVELOPMENT,
            "lib/src/base/names.h": "#pragma once\n#include <string>\n",
            "lib/src/json/json.h": '#pragma once\n#include <simdjson.h>\n#include "base/names.h"\n',
            "lib/src/commands/run.cc": ('#include "hpfreeze/commands/run.h"\n'
                                        '#include "json/json.h"\n'),
            "lib/include/hpfreeze/base/result.h": "#pragma once\n#include <vector>\n",
            "lib/include/hpfreeze/commands/run.h": ('#pragma once\n'
                                                    '#include "hpfreeze/base/result.h"\n'),
            "apps/hpfreeze/main.cc": '#include "hpfreeze/commands/run.h"\n',
        }

    def tearDown(self):
        self.dir.cleanup()

    def errors(self):
        files = self.files
        for name, text in files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return check_layers.check(self.root)[0]

    def test_a_tree_that_keeps_its_layers_passes(self):
        self.assertEqual(self.errors(), [])

    def test_an_upward_include_fails_with_its_line(self):
        self.files["lib/src/base/up.cc"] = '#include <cstddef>\n#include "json/json.h"\n'
        self.assertEqual(self.errors(), [
            'lib/src/base/up.cc:2: #include "json/json.h" runs up from base (rank 0) to json '
            '(rank 1)'])

    def pass_tree(self):
        """Two passes and the loader at one rank, above json and below commands."""
        self.files["docs/layers.txt"] = ("0 base\n1 json\n2 diff\n2 report\n2 inputs\n"
                                         "3 commands\n4 apps\n")
        self.files["docs/development.md"] = DEVELOPMENT.replace(
            "| 2 | `commands/` | x |\n| 3 | `apps/` | x |\n",
            "| 2 | `diff/` | x |\n| 2 | `report/` | x |\n| 2 | `inputs/` | x |\n"
            "| 3 | `commands/` | x |\n| 4 | `apps/` | x |\n")
        self.files["lib/src/diff/diff.h"] = '#pragma once\n#include "json/json.h"\n'
        self.files["lib/src/inputs/inputs.h"] = '#pragma once\n#include "json/json.h"\n'
        self.files["lib/src/report/report.cc"] = '#include "report/report.h"\n'
        self.files["lib/src/report/report.h"] = '#pragma once\n#include "base/names.h"\n'
        self.files["lib/src/commands/run.cc"] += ('#include "diff/diff.h"\n'
                                                  '#include "inputs/inputs.h"\n'
                                                  '#include "report/report.h"\n')

    def test_passes_and_the_loader_at_one_rank_pass(self):
        self.pass_tree()
        self.assertEqual(self.errors(), [])

    def test_a_pass_never_includes_a_pass(self):
        self.pass_tree()
        self.files["lib/src/report/report.cc"] += '#include "diff/diff.h"\n'
        self.assertEqual(self.errors(), [
            'lib/src/report/report.cc:2: #include "diff/diff.h" runs across from report to '
            "diff, both rank 2: folders of one rank include nothing of each other (move what "
            "both need down a rank)"])

    def test_only_commands_include_the_loader(self):
        self.pass_tree()
        self.files["lib/src/report/report.cc"] = ('#include "report/report.h"\n'
                                                  '#include "inputs/inputs.h"\n')
        self.assertEqual(self.errors(), [
            'lib/src/report/report.cc:2: #include "inputs/inputs.h" runs across from report to '
            "inputs, both rank 2: folders of one rank include nothing of each other (move "
            "what both need down a rank)"])

    def test_a_public_header_includes_no_dependency_header(self):
        self.files["lib/include/hpfreeze/base/result.h"] = "#pragma once\n#include <simdjson.h>\n"
        self.assertEqual(self.errors(), [
            "lib/include/hpfreeze/base/result.h:2: #include <simdjson.h>: a public header "
            "includes no dependency's header"])

    def test_a_public_header_includes_no_private_header(self):
        self.files["lib/include/hpfreeze/commands/run.h"] = '#pragma once\n#include "json/json.h"\n'
        errors = self.errors()
        self.assertIn('lib/include/hpfreeze/commands/run.h:2: #include "json/json.h": a public '
                      "header includes only public headers (lib/include/hpfreeze/)", errors)

    def test_apps_include_no_private_header(self):
        self.files["apps/hpfreeze/main.cc"] = ('#include "hpfreeze/commands/run.h"\n'
                                               '#include "base/names.h"\n')
        self.assertEqual(self.errors(), [
            'apps/hpfreeze/main.cc:2: #include "base/names.h": apps/ includes only public '
            "headers (lib/include/hpfreeze/)"])

    def test_a_public_header_apps_never_reach_belongs_in_lib_src(self):
        self.files["lib/include/hpfreeze/json/orphan.h"] = "#pragma once\n"
        self.assertEqual(self.errors(), [
            "lib/include/hpfreeze/json/orphan.h: a public header apps/ does not include "
            "(move it beside its sources in lib/src/)"])

    def test_a_public_header_reached_through_another_counts(self):
        # result.h is reached only through run.h: no error.
        self.assertNotIn("result.h", " ".join(self.errors()))

    def test_a_folder_with_no_rank_fails(self):
        self.files["lib/src/extra/x.h"] = "#pragma once\n"
        self.files["lib/include/hpfreeze/other/y.h"] = "#pragma once\n"
        errors = self.errors()
        self.assertIn("lib/src/extra/: a folder with no rank in docs/layers.txt", errors)
        self.assertIn("lib/include/hpfreeze/other/: a folder with no rank in docs/layers.txt",
                      errors)

    def test_layers_list_folders_only(self):
        self.files["docs/layers.txt"] = LAYERS.replace("1 json\n", "1 json json.h\n")
        self.assertIn("docs/layers.txt:2: expected 'RANK FOLDER'", self.errors())

    def test_the_table_of_development_md_must_agree(self):
        self.files["docs/development.md"] = DEVELOPMENT.replace("| 1 | `json/`", "| 2 | `json/`")
        self.assertEqual(self.errors(), [
            "docs/development.md: 'Layers' table gives json rank 2, docs/layers.txt 1"])

    def test_an_include_of_no_file_fails(self):
        self.files["lib/src/json/json.cc"] = '#include "json/missing.h"\n'
        self.assertEqual(self.errors(), [
            'lib/src/json/json.cc:1: #include "json/missing.h" names no file of lib/src, '
            "lib/include/hpfreeze or apps"])


if __name__ == "__main__":
    unittest.main()
