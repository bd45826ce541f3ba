#!/usr/bin/env python3
"""check_findings.py's rules on small trees made here: each disagreement between the findings
table and the docs fails, named FILE:LINE, and a tree where they agree passes."""
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_findings  # noqa: E402

TABLE = """\
inline constexpr FindingRule kFindingRules[] = {
    {.code = "HPF101", .severity = Severity::kError, .name = "identity-type"},
    {.code = "HPF202", .severity = Severity::kWarning, .name = "non-canonical-placement"},
};
"""

DOCS = """\
# hpfreeze command line

## `hpfreeze check`

A finding such as HPF101, see [identity-type](#hpf101-identity-type).

## Finding codes

### HPF101 identity-type

**error** · `check` · An identity field of the wrong type.

### HPF202 non-canonical-placement

**warning** · `check` · A placement not written canonically.
"""


class FindingsAgainstDocs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        self.files = {"lib/src/spec/findings.h": TABLE, "docs/cli.md": DOCS,
                      "docs/recipes.md": "Drop one rule: `--silence HPF202`.\n"}

    def tearDown(self):
        self.dir.cleanup()

    def errors(self):
        for name, text in self.files.items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return check_findings.check(self.root)

    def edit(self, name, old, new):
        self.assertIn(old, self.files[name])
        self.files[name] = self.files[name].replace(old, new)

    def test_a_table_and_docs_that_agree_pass(self):
        self.assertEqual(self.errors(), [])

    def test_a_row_the_docs_lack(self):
        self.edit("lib/src/spec/findings.h", "};", '    {.code = "HPF301", .severity = '
                  'Severity::kError, .name = "boundary-not-in-model"},\n};')
        self.assertEqual(self.errors(), [
            "lib/src/spec/findings.h:4: HPF301 (boundary-not-in-model) has no heading "
            "'### HPF301 boundary-not-in-model' in docs/cli.md, \"Finding codes\""])

    def test_a_heading_the_table_lacks(self):
        self.files["docs/cli.md"] += "\n### HPF599 injected\n\n**note** · `report` · x.\n"
        self.assertEqual(self.errors(), ["docs/cli.md:17: HPF599 is no code of "
                                         "lib/src/spec/findings.h"])

    def test_another_name(self):
        self.edit("docs/cli.md", "### HPF202 non-canonical-placement", "### HPF202 not-canonical")
        self.assertEqual(self.errors(), [
            "docs/cli.md:13: HPF202 is named 'non-canonical-placement' in "
            "lib/src/spec/findings.h, not 'not-canonical'"])

    def test_another_severity_or_none(self):
        self.edit("docs/cli.md", "**warning** · `check` · A placement", "**error** · `check` · A "
                  "placement")
        self.assertEqual(self.errors(), ["docs/cli.md:13: HPF202 is a warning in "
                                         "lib/src/spec/findings.h, not a error"])
        self.edit("docs/cli.md", "**error** · `check` · A placement", "A placement")
        self.assertEqual(self.errors(), ["docs/cli.md:13: HPF202's paragraph does not start with "
                                         "its severity in bold (**warning**)"])

    def test_the_order_of_the_table(self):
        a = "### HPF101 identity-type\n\n**error** · `check` · An identity field of the wrong type.\n"
        b = ("### HPF202 non-canonical-placement\n\n**warning** · `check` · A placement not "
             "written canonically.\n")
        self.edit("docs/cli.md", a + "\n" + b, b + "\n" + a)
        self.assertEqual(self.errors(), ["docs/cli.md: the headings are not in the table's order: "
                                         "['HPF202', 'HPF101']"])

    def test_a_code_named_anywhere_must_be_in_the_table(self):
        self.files["docs/recipes.md"] = "Drop one rule:\n`--silence HPF209`.\n"
        self.files["docs/man/hpfreeze-check.h2m"] = "[DESCRIPTION]\nsee HPF1010\n"
        self.assertEqual(self.errors(), [
            "docs/man/hpfreeze-check.h2m:2: HPF1010 is no code of lib/src/spec/findings.h",
            "docs/recipes.md:2: HPF209 is no code of lib/src/spec/findings.h"])

    def test_a_link_to_no_codes_heading(self):
        self.edit("docs/cli.md", "(#hpf101-identity-type)", "(#hpf101-identity)")
        self.files["docs/recipes.md"] = "[drift](cli.md#hpf406-hash-drift)\n"
        self.assertEqual(self.errors(), [
            "docs/cli.md:5: #hpf101-identity is the anchor of no code's heading",
            "docs/recipes.md:1: #hpf406-hash-drift is the anchor of no code's heading"])

    def test_a_diagnostic_without_a_code_where_findings_are_made(self):
        self.files["lib/src/report/notes.cc"] = (
            "void note(Report& r) {\n"
            "  r.findings.push_back(make_note(\"\", \"\", \"a note\"));\n"
            "  // make_error( in a comment is none\n"
            "  r.findings.push_back(make_finding(finding_rule(\"HPF101\"), \"\", \"\", \"x\"));\n"
            "  // No finding: a usage error.\n"
            "  r.usage_errors.push_back(\n"
            "      make_error({}, {}, \"--mesh: bad\"));\n"
            "}\n")
        # freeze's errors are no findings: its folder is not read.
        self.files["lib/src/freeze/freeze.cc"] = "  errors.add(make_error(a, b, c));\n"
        self.assertEqual(self.errors(), [
            "lib/src/report/notes.cc:2: make_note makes a diagnostic without a code: "
            "make_finding with a row of lib/src/spec/findings.h, or a comment saying why it is "
            "no finding"])

    def test_no_section(self):
        self.edit("docs/cli.md", "## Finding codes", "## Codes")
        errors = self.errors()
        self.assertIn("docs/cli.md: no section '## Finding codes'", errors)


if __name__ == "__main__":
    unittest.main()
