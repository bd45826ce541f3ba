// A finding as JSON (lib/src/json/diagnostic_json.cc): check --json's lines, report's
// findings[], --message-format json.
#include "json/diagnostic_json.h"

#include <gtest/gtest.h>

#include <string>

namespace hpfreeze {
namespace {

TEST(DiagnosticJson, SeverityNames) {
  EXPECT_EQ(severity_name(Severity::kError), "error");
  EXPECT_EQ(severity_name(Severity::kWarning), "warning");
  EXPECT_EQ(severity_name(Severity::kNote), "note");
}

TEST(DiagnosticJson, OneCompactObjectPerLine) {
  Diagnostic syntax = make_error("m.json", "", "bad");
  syntax.line = 3;
  syntax.column = 7;
  Diagnostic note = make_error("m.json", "/a~1b", "it's \"q\"\n\xc3\xa9");
  note.severity = Severity::kNote;
  const Diagnostic warning = make_warning("m.json", "/w", "w");
  EXPECT_EQ(
      render_findings_json_lines({syntax, note, warning}),
      "{\"severity\":\"error\",\"file\":\"m.json\",\"pointer\":\"\",\"message\":\"bad\","
      "\"line\":3,\"column\":7}\n"
      "{\"severity\":\"note\",\"file\":\"m.json\",\"pointer\":\"/a~1b\",\"message\":"
      "\"it's \\\"q\\\"\\n\\u00e9\"}\n"
      "{\"severity\":\"warning\",\"file\":\"m.json\",\"pointer\":\"/w\",\"message\":\"w\"}\n");
  EXPECT_EQ(render_findings_json_lines({}), "");
}

TEST(DiagnosticJson, DetailLinesJoinTheMessageAndALineWithoutColumn) {
  Diagnostic d = make_error("m.json", "/x", "differs");
  d.detail = {"one", "two"};
  d.line = 2;
  std::string out;
  append_finding_json_line(out, d, "info");
  EXPECT_EQ(out,
            "{\"severity\":\"info\",\"file\":\"m.json\",\"pointer\":\"/x\",\"message\":"
            "\"differs\\none\\ntwo\",\"line\":2}\n");
}

// A finding's code follows its severity; a line that is no finding has no "code".
TEST(DiagnosticJson, AFindingsCodeAfterItsSeverity) {
  Diagnostic d = make_warning("m.json", "/w", "w");
  d.code = "HPF202";
  EXPECT_EQ(render_findings_json_lines({d, make_error("m.json", "", "no finding")}),
            "{\"severity\":\"warning\",\"code\":\"HPF202\",\"file\":\"m.json\",\"pointer\":"
            "\"/w\",\"message\":\"w\"}\n"
            "{\"severity\":\"error\",\"file\":\"m.json\",\"pointer\":\"\",\"message\":"
            "\"no finding\"}\n");
  std::string out;
  {
    JsonStream w(out, JsonLayout::kIndented);
    write_finding(w, d, severity_name(d.severity), FindingFields::kMessageOnly);
  }
  EXPECT_EQ(out,
            "{\n  \"severity\": \"warning\",\n  \"code\": \"HPF202\",\n  \"file\": \"m.json\",\n"
            "  \"pointer\": \"/w\",\n  \"message\": \"w\"\n}");
}

// report's findings[]: the message alone, in the stream's own layout.
TEST(DiagnosticJson, MessageOnlyLeavesOutDetailAndPosition) {
  Diagnostic d = make_warning("model.json", "/parameters/w", "no dtype");
  d.detail = {"left out"};
  d.line = 4;
  d.column = 2;
  std::string out;
  {
    JsonStream w(out, JsonLayout::kIndented);
    w.start_array();
    write_finding(w, d, severity_name(d.severity), FindingFields::kMessageOnly);
    w.end_array();
  }
  EXPECT_EQ(out,
            "[\n  {\n    \"severity\": \"warning\",\n    \"file\": \"model.json\",\n"
            "    \"pointer\": \"/parameters/w\",\n    \"message\": \"no dtype\"\n  }\n]");
}

}  // namespace
}  // namespace hpfreeze
