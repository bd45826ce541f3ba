// format_message: every stderr line in text, github and json, against hand-written lines
// (the runner's escaping rules: docs/cli.md, "--message-format").
#include "hpfreeze/commands/message_format.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

Diagnostic located(std::string file, std::string pointer, std::size_t line, std::size_t column,
                   std::string message) {
  Diagnostic d = make_error(std::move(file), std::move(pointer), std::move(message));
  d.line = line;
  d.column = column;
  return d;
}

TEST(MessageFormat, Names) {
  EXPECT_EQ(parse_message_format("text"), MessageFormat::kText);
  EXPECT_EQ(parse_message_format("github"), MessageFormat::kGithub);
  EXPECT_EQ(parse_message_format("json"), MessageFormat::kJson);
  EXPECT_EQ(parse_message_format("xml"), std::nullopt);
  EXPECT_EQ(parse_message_format("GitHub"), std::nullopt);
  EXPECT_EQ(parse_message_format(""), std::nullopt);
}

TEST(MessageFormat, TextIsTodaysLine) {
  const Diagnostic d = located("plan.json", "/modules/a", 3, 7, "expected ','");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kError, d),
            "hpfreeze: error: plan.json:3:7: /modules/a: expected ','\n");
  EXPECT_EQ(
      format_message(MessageFormat::kText, MessageLevel::kWarning, make_warning("m", "", "w")),
      "hpfreeze: warning: m: w\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kNote, make_error("", "", "n")),
            "hpfreeze: note: n\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kDebug, make_error("", "", "read")),
            "hpfreeze: debug: read\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kTrace, make_error("", "", "t")),
            "hpfreeze: trace: t\n");
  // A control character is escaped, never written raw.
  EXPECT_EQ(
      format_message(MessageFormat::kText, MessageLevel::kError, make_error("a\nb.json", "", "x")),
      "hpfreeze: error: a\\nb.json: x\n");
}

TEST(MessageFormat, TextColoursTheLevelAsSpdlogDid) {
  const Diagnostic d = make_error("f", "", "m");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kError, d, true),
            "hpfreeze: \x1b[31m\x1b[1merror\x1b[m: f: m\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kWarning, d, true),
            "hpfreeze: \x1b[33m\x1b[1mwarning\x1b[m: f: m\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kNote, d, true),
            "hpfreeze: \x1b[32mnote\x1b[m: f: m\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kDebug, d, true),
            "hpfreeze: \x1b[36mdebug\x1b[m: f: m\n");
  // Colour is text's alone.
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, d, true),
            "::error file=f::m\n");
}

TEST(MessageFormat, TextDetailLinesAreIndented) {
  Diagnostic d = make_error("meta.json", "", "differs");
  d.detail = {"~ /a: 1 -> 2", "- /b\t: 3"};
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kError, d),
            "hpfreeze: error: meta.json: differs\n  ~ /a: 1 -> 2\n  - /b\\t: 3\n");
}

TEST(MessageFormat, GithubCommands) {
  const Diagnostic d = located("plan.json", "/modules/a", 3, 7, "expected ','");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, d),
            "::error file=plan.json,line=3,col=7::/modules/a: expected ','\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kWarning,
                           make_warning("meta.json", "/x", "w")),
            "::warning file=meta.json::/x: w\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kNote, make_error("m", "", "n")),
            "::notice file=m::n\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kDebug,
                           make_error("", "", "read: 0.10 ms")),
            "::debug::read: 0.10 ms\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kTrace, make_error("", "", "t")),
            "::debug::t\n");
  // Unknown line and column are left out; a column without a line too.
  EXPECT_EQ(
      format_message(MessageFormat::kGithub, MessageLevel::kError, located("f", "", 4, 0, "m")),
      "::error file=f,line=4::m\n");
  EXPECT_EQ(
      format_message(MessageFormat::kGithub, MessageLevel::kError, located("f", "", 0, 9, "m")),
      "::error file=f::m\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, make_error("", "", "m")),
            "::error::m\n");
}

TEST(MessageFormat, GithubNamesNoFileThatIsNone) {
  // Stdin is no file of the repository: its name and position start the message.
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError,
                           located("<stdin>", "", 3, 1, "expected a value")),
            "::error::<stdin>:3:1: expected a value\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError,
                           located("<stdin>", "/modules/x", 0, 0, "m")),
            "::error::<stdin>: /modules/x: m\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError,
                           located("<stdin>", "", 2, 0, "invalid placement 'S(y)'")),
            "::error::<stdin>:2: invalid placement 'S(y)'\n");
}

// A finding of check --bundle about a generated file: the annotation goes on that file,
// and the meta's name and position start the message (they are no properties of it).
TEST(MessageFormat, GithubAnnotatesTheGeneratedFile) {
  Diagnostic d = located("generated/codegen_meta.json", "/outputs/modeling", 39, 17,
                         "generated/modeling_M_gen_npu.py: hash drift");
  d.annotate_file = "generated/modeling_M_gen_npu.py";
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, d),
            "::error file=generated/modeling_M_gen_npu.py::generated/codegen_meta.json:39:17: "
            "/outputs/modeling: generated/modeling_M_gen_npu.py: hash drift\n");
  d.line = 0;
  d.column = 0;
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, d),
            "::error file=generated/modeling_M_gen_npu.py::generated/codegen_meta.json: "
            "/outputs/modeling: generated/modeling_M_gen_npu.py: hash drift\n");
  // The property is escaped as a property; text and json leave it out.
  d.annotate_file = "g:a,b/__init__.py";
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kWarning, d),
            "::warning file=g%3Aa%2Cb/__init__.py::generated/codegen_meta.json: "
            "/outputs/modeling: generated/modeling_M_gen_npu.py: hash drift\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kError, d),
            "hpfreeze: error: generated/codegen_meta.json: /outputs/modeling: "
            "generated/modeling_M_gen_npu.py: hash drift\n");
  EXPECT_EQ(format_message(MessageFormat::kJson, MessageLevel::kError, d),
            "{\"severity\":\"error\",\"file\":\"generated/codegen_meta.json\",\"pointer\":"
            "\"/outputs/modeling\",\"message\":\"generated/modeling_M_gen_npu.py: hash drift\"}\n");
  // The meta's name starts the message as a text line shows it: a line break in it stays
  // escaped text, which the runner shows as it is, never a break of the annotation.
  d.file = "a\nb/codegen_meta.json";
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, d),
            "::error file=g%3Aa%2Cb/__init__.py::a\\nb/codegen_meta.json: /outputs/modeling: "
            "generated/modeling_M_gen_npu.py: hash drift\n");
}

TEST(MessageFormat, GithubEscaping) {
  // Data: % CR LF. Properties: also : and ,.
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError,
                           make_error("dir:a,b%c\r\nd.json", "", "100% a:b,c\r\nend")),
            "::error file=dir%3Aa%2Cb%25c%0D%0Ad.json::100%25 a:b,c%0D%0Aend\n");
  // The pointer is data inside the message: its : and , stay.
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError,
                           make_error("f", "/a:b,c/%", "m")),
            "::error file=f::/a:b,c/%25: m\n");
  // Other control bytes as text shows them.
  EXPECT_EQ(
      format_message(MessageFormat::kGithub, MessageLevel::kError, make_error("f", "", "a\x01\tb")),
      "::error file=f::a\\x01\\tb\n");
  // Detail lines follow the message after (escaped) LFs.
  Diagnostic d = make_error("meta.json", "", "differs");
  d.detail = {"~ /a: \"50%\" -> 2", "... and 3 more"};
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, d),
            "::error file=meta.json::differs%0A~ /a: \"50%25\" -> 2%0A... and 3 more\n");
}

TEST(MessageFormat, JsonIsACheckFinding) {
  EXPECT_EQ(format_message(MessageFormat::kJson, MessageLevel::kError,
                           located("plan.json", "/modules/a", 3, 7, "expected ','")),
            R"({"severity":"error","file":"plan.json","pointer":"/modules/a",)"
            R"("message":"expected ','","line":3,"column":7})"
            "\n");
  EXPECT_EQ(
      format_message(MessageFormat::kJson, MessageLevel::kWarning, make_warning("m", "/x", "w")),
      R"({"severity":"warning","file":"m","pointer":"/x","message":"w"})"
      "\n");
  EXPECT_EQ(format_message(MessageFormat::kJson, MessageLevel::kNote, make_error("", "", "n")),
            R"({"severity":"note","file":"","pointer":"","message":"n"})"
            "\n");
  EXPECT_EQ(format_message(MessageFormat::kJson, MessageLevel::kDebug, make_error("", "", "read")),
            R"({"severity":"info","file":"","pointer":"","message":"read"})"
            "\n");
  EXPECT_EQ(format_message(MessageFormat::kJson, MessageLevel::kTrace, make_error("", "", "t")),
            R"({"severity":"info","file":"","pointer":"","message":"t"})"
            "\n");
  Diagnostic d = make_error("a\"b.json", "", "differs");
  d.detail = {"~ /a: 1 -> 2"};
  EXPECT_EQ(
      format_message(MessageFormat::kJson, MessageLevel::kError, d),
      R"({"severity":"error","file":"a\"b.json","pointer":"","message":"differs\n~ /a: 1 -> 2"})"
      "\n");
}

// A finding's code (spec/findings.h) ends its text line and its github message, before any
// detail line, and is a "code" key after "severity" in JSON; a line without one has none.
TEST(MessageFormat, AFindingsCodeInEachFormat) {
  Diagnostic d = located("meta.json", "/param_plan/b/params/w/tp", 6, 47, "ambiguous");
  d.severity = Severity::kWarning;
  d.code = "HPF203";
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kWarning, d),
            "hpfreeze: warning: meta.json:6:47: /param_plan/b/params/w/tp: ambiguous [HPF203]\n");
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kWarning, d, true),
            "hpfreeze: \x1b[33m\x1b[1mwarning\x1b[m: meta.json:6:47: /param_plan/b/params/w/tp: "
            "ambiguous [HPF203]\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kWarning, d),
            "::warning file=meta.json,line=6,col=47::/param_plan/b/params/w/tp: ambiguous "
            "[HPF203]\n");
  EXPECT_EQ(format_message(MessageFormat::kJson, MessageLevel::kWarning, d),
            R"({"severity":"warning","code":"HPF203","file":"meta.json",)"
            R"("pointer":"/param_plan/b/params/w/tp","message":"ambiguous","line":6,"column":47})"
            "\n");
  d.detail = {"under it"};
  d.annotate_file = "gen/x.py";
  EXPECT_EQ(format_message(MessageFormat::kText, MessageLevel::kWarning, d),
            "hpfreeze: warning: meta.json:6:47: /param_plan/b/params/w/tp: ambiguous [HPF203]\n"
            "  under it\n");
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kWarning, d),
            "::warning file=gen/x.py::meta.json:6:47: /param_plan/b/params/w/tp: ambiguous "
            "[HPF203]%0Aunder it\n");
}

// The positions of --message-format github, on the in-memory file system: each file read
// again through the file system, never a stream.
class PointerPositions : public ::testing::Test {
 protected:
  std::string spit(const std::string& name, const std::string& text) {
    disk_.add_file(name, text);
    return name;
  }
  io_testing::FakeFileSystem disk_;
};

TEST_F(PointerPositions, EveryFindingInAJsonFileGetsTheLineOfItsValue) {
  const std::string plan = spit("plan.json",
                                "{\n  \"modules\": {\n    \"lin\": {\"params\": {\"w\": {\"tp\": "
                                "{\"$placement\": \"Replicat\"}}}}\n  }\n}\n");
  const std::string meta =
      spit("meta.json", "{\"param_plan\": {\"m\": {\"params\": {\"w\": {\"tp\": \"S(9)\"}}}}}");
  Diagnostics ds = {
      make_error(plan, "/modules/lin/params/w/tp", "unknown placement type 'Replicat'"),
      make_warning(meta, "/param_plan/m/params/w/tp", "dim 9 is out of range"),
      make_error(plan, "/modules/lin/params", "another"),
      make_error(plan, "/modules/gone", "names nothing in the file"),
      make_error(plan, "", "about the whole file"),
      located(plan, "", 3, 4, "a syntax error keeps its own position"),
      make_error("<stdin>", "/modules/lin", "stdin is not read again"),
      make_error("missing.json", "/a", "no such file"),
      make_error("", "/a", "no file"),
  };
  add_pointer_positions(ds, &disk_);
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {
      {3, 36}, {1, 46}, {3, 23}, {0, 0}, {0, 0}, {3, 4}, {0, 0}, {0, 0}, {0, 0}};
  ASSERT_EQ(ds.size(), expected.size());
  for (std::size_t i = 0; i < ds.size(); ++i) {
    EXPECT_EQ(std::pair(ds[i].line, ds[i].column), expected[i]) << ds[i].message;
  }
  EXPECT_EQ(format_message(MessageFormat::kGithub, MessageLevel::kError, ds[0]),
            "::error file=" + plan +
                ",line=3,col=36::/modules/lin/params/w/tp: unknown placement "
                "type 'Replicat'\n");
  // Each file once, for all its findings.
  EXPECT_EQ(io_testing::with_prefix(disk_.log, "open regular "),
            (std::vector<std::string>{"open regular plan.json", "open regular meta.json",
                                      "open regular missing.json"}));
}

TEST_F(PointerPositions, NoStreamIsOpenedOrWaitedFor) {
  // A FIFO (a plan given as one) is neither opened, which would wait for a writer, nor read.
  disk_.add_fifo("plan.fifo");
  Diagnostics ds = {make_error("plan.fifo", "/modules", "m")};
  add_pointer_positions(ds, &disk_);
  EXPECT_EQ(ds.front().line, 0U);
  // Not JSON (a safetensors file): no position, no error.
  spit("ck.safetensors", std::string("\x02\0\0\0\0\0\0\0{}", 10));
  ds = {make_error("ck.safetensors", "/w", "m")};
  add_pointer_positions(ds, &disk_);
  EXPECT_EQ(ds.front().line, 0U);
}

// Many findings in one container (a frozen_sharded_params of bad entries, an outputs object of
// many keys), found wherever they are in it, in any order of the findings.
TEST_F(PointerPositions, ManyFindingsInOneContainer) {
  std::string text = "{\"list\": [\n";
  for (int i = 0; i < 3000; ++i) text += (i == 0 ? "" : ",\n") + std::to_string(i);
  text += "],\n\"map\": {\n";
  for (int i = 0; i < 3000; ++i) {
    text += (i == 0 ? "" : ",\n") + std::string("\"k") + std::to_string(i) + "\": " + "[" +
            std::to_string(i) + "]";
  }
  text += "}}\n";
  spit("big.json", text);
  Diagnostics ds;
  for (int i = 2999; i >= 0; i -= 3) {
    ds.push_back(make_error("big.json", "/list/" + std::to_string(i), "m"));
    ds.push_back(make_error("big.json", "/map/k" + std::to_string(i) + "/0", "m"));
  }
  ds.push_back(make_error("big.json", "/list/3000", "names nothing"));
  ds.push_back(make_error("big.json", "/map/k", "names nothing"));
  add_pointer_positions(ds, &disk_);
  for (std::size_t j = 0; j + 2 < ds.size(); j += 2) {
    const int i = 2999 - static_cast<int>(j / 2) * 3;
    EXPECT_EQ(std::pair(ds[j].line, ds[j].column), std::pair(std::size_t(2 + i), std::size_t(1)));
    const std::size_t key_width = std::to_string(i).size() + 5;  // "kN": [
    EXPECT_EQ(std::pair(ds[j + 1].line, ds[j + 1].column),
              std::pair(std::size_t(3002 + 1 + i), key_width + 2));
  }
  EXPECT_EQ(ds[ds.size() - 2].line, 0U);
  EXPECT_EQ(ds.back().line, 0U);
}

}  // namespace
}  // namespace hpfreeze
