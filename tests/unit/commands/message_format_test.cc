// format_message: every stderr line in text, github and json, against hand-written lines
// (the runner's escaping rules: docs/cli.md, "--message-format").
#include "hpfreeze/message_format.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace hpfreeze
