// The skipped-overrides rule (check/skipped_overrides.cc), through check_meta: one warning
// per plan_overrides entry generation left out, as upstream's warn_skipped_overrides lists
// them, with exact text.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "check/check.h"
#include "check/findings_lines.h"
#include "json/json_document.h"
#include "meta/meta.h"

namespace hpfreeze {
namespace {

using check_test::Lines;
using check_test::render;
using check_test::render_all;

// check's findings about a parsed meta, decoded as check's loader decodes META: on past the
// decoding errors, which are findings too.
Lines check_document(const JsonDocument& doc) {
  Diagnostics findings;
  std::optional<FrozenMeta> decoded =
      decode_meta_keep_going(doc, "check", findings, MetaDecodeOptions::decoded_params_only());
  if (!decoded) return render_all(findings);
  return render_all(check_meta(*decoded, std::move(findings), nullptr));
}

// check_meta's findings about a clean meta (meta.json) with `skipped_overrides` added.
Lines check_skipped(std::string_view skipped) {
  const std::string text =
      R"j({"param_plan": {"lin": {"params": {"weight": {"tp": "R"}}}}, "skipped_overrides": )j" +
      std::string(skipped) + "}";
  Expected<JsonDocument> doc = parse_json_document("meta.json", text);
  if (!doc) return {"test input does not parse: " + render(doc.errors().front())};
  return check_document(*doc);
}

TEST(SkippedOverrides, NoneToReport) {
  EXPECT_EQ(check_skipped("[]"), Lines{});
  EXPECT_EQ(check_skipped("null"), Lines{});
}

// What upstream writes (emit/replacement.py): the rule's patterns as a list, and its reason.
TEST(SkippedOverrides, UpstreamEntries) {
  EXPECT_EQ(check_skipped(R"([{"match": ["model.layers.*.mlp"], "reason": "no_match"},
                              {"match": ["a", "b.*"], "reason": "no_match"}])"),
            (Lines{"warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: "
                   "match ['model.layers.*.mlp']: no_match",
                   "warning: meta.json: /skipped_overrides/1: plan_overrides entry skipped: "
                   "match ['a', 'b.*']: no_match"}));
}

// docs/cli.md ("skipped_overrides") shows this line, with its code.
TEST(SkippedOverrides, TheDocumentedExample) {
  const Lines lines = check_skipped(R"([{"match": ["model.layers.*.mlp"], "reason": "no_match"}])");
  ASSERT_EQ(lines.size(), 1u);
  std::ifstream in(std::string(HPFREEZE_TESTDATA_DIR) + "/../docs/cli.md", std::ios::binary);
  const std::string docs{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(docs.find("\nhpfreeze: " + lines[0] + " [HPF208]\n"), std::string::npos) << lines[0];
}

TEST(SkippedOverrides, MatchAsOneString) {
  EXPECT_EQ(check_skipped(R"([{"match": "lm_head", "reason": "when-gated entry never applied"}])"),
            Lines{"warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: "
                  "match 'lm_head': when-gated entry never applied"});
}

// Keys other than match and reason are not shown; an absent match leaves its part out, an
// absent reason says so, and a value of another type is shown as compact JSON.
TEST(SkippedOverrides, MissingOrOddMatchAndReason) {
  EXPECT_EQ(
      check_skipped(R"([{"reason": "no_match", "extra": 1}, {"match": "m"}, {},
                        {"match": 3, "reason": {"code": 2}}, {"match": ["a", 1], "reason": null},
                        {"match": null, "reason": ["x"]}])"),
      (Lines{"warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: no_match",
             "warning: meta.json: /skipped_overrides/1: plan_overrides entry skipped: match 'm': "
             "no reason recorded",
             "warning: meta.json: /skipped_overrides/2: plan_overrides entry skipped: no reason "
             "recorded",
             "warning: meta.json: /skipped_overrides/3: plan_overrides entry skipped: match 3: "
             "{\"code\":2}",
             "warning: meta.json: /skipped_overrides/4: plan_overrides entry skipped: match "
             "[\"a\",1]: null",
             "warning: meta.json: /skipped_overrides/5: plan_overrides entry skipped: match null: "
             "[\"x\"]"}));
}

// An entry that is not an object is shown whole, as compact JSON (strings escaped as
// Python's json.dumps writes them: printable ASCII only).
TEST(SkippedOverrides, EntryNotAnObject) {
  EXPECT_EQ(check_skipped(R"(["lm_head: no module", 7, null, [1, "\u00e9\n"]])"),
            (Lines{"warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: "
                   "\"lm_head: no module\"",
                   "warning: meta.json: /skipped_overrides/1: plan_overrides entry skipped: 7",
                   "warning: meta.json: /skipped_overrides/2: plan_overrides entry skipped: null",
                   "warning: meta.json: /skipped_overrides/3: plan_overrides entry skipped: "
                   "[1,\"\\u00e9\\n\"]"}));
}

// Names are escaped as everywhere: a pattern as check quotes names (\xNN outside printable
// ASCII), a reason as text outputs show names (a JSON string when it holds a control
// character, a line separator or starts with "::"; else as it is).
TEST(SkippedOverrides, NamesAreEscaped) {
  EXPECT_EQ(check_skipped(R"([{"match": ["mod\u00e8le.*", "a'b"], "reason": "r\u00e9ason"},
                              {"match": "x\ny", "reason": "::error file=a::b"},
                              {"match": "m", "reason": "two\nlines"},
                              {"match": "m", "reason": "sep\u2028here"}])"),
            (Lines{"warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: "
                   "match ['mod\\xc3\\xa8le.*', 'a\\'b']: r\xc3\xa9"
                   "ason",
                   "warning: meta.json: /skipped_overrides/1: plan_overrides entry skipped: "
                   "match 'x\\ny': \"::error file=a::b\"",
                   "warning: meta.json: /skipped_overrides/2: plan_overrides entry skipped: "
                   "match 'm': \"two\\nlines\"",
                   "warning: meta.json: /skipped_overrides/3: plan_overrides entry skipped: "
                   "match 'm': \"sep\\u2028here\""}));
}

// A long reason or entry is shortened as every name in a diagnostic is.
TEST(SkippedOverrides, LongValuesAreShortened) {
  const std::string reason(400, 'r');
  const Lines lines = check_skipped(R"([{"match": "m", "reason": ")" + reason + R"("}])");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: "
            "match 'm': " +
                shorten_for_diagnostic(reason));
  EXPECT_NE(lines[0].find("...[240 characters left out]..."), std::string::npos);
}

// Not a list: one warning (upstream's warning would list each character or key).
TEST(SkippedOverrides, NotAnArray) {
  EXPECT_EQ(check_skipped(R"({"match": "m"})"),
            Lines{"warning: meta.json: /skipped_overrides: expected an array, got an object"});
  EXPECT_EQ(check_skipped(R"("no_match")"),
            Lines{"warning: meta.json: /skipped_overrides: expected an array, got a string"});
}

// The warnings take their place among check's other findings (sorted by pointer) and are
// warnings: no error, so check would exit 0.
TEST(SkippedOverrides, SortedAmongOtherFindings) {
  Expected<JsonDocument> doc = parse_json_document(
      "meta.json", R"j({"skipped_overrides": [{"match": "m", "reason": "no_match"}],
          "param_plan": {"lin": {"params": {"weight": {"tp": "S( 0 )"}}}},
          "frozen_sharded_params": ["lin.weight"], "yaml_path": 1})j");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(check_document(*doc),
            (Lines{"warning: meta.json: /param_plan/lin/params/weight/tp: placement 'S( 0 )' is "
                   "not canonical (canonical form: 'S(0)')",
                   "warning: meta.json: /skipped_overrides/0: plan_overrides entry skipped: match "
                   "'m': no_match",
                   "error: meta.json: /yaml_path: expected a string, got an integer"}));
}

}  // namespace
}  // namespace hpfreeze
