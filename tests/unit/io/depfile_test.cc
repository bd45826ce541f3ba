// Depfile paths: the allow-list of docs/cli.md ("--depfile") and its escapes, written out
// by hand. tests/e2e/test_depfile.py reads every allowed byte back with the real make and
// ninja.
#include "io/depfile.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace hpfreeze {
namespace {

bool writable(std::string_view path, bool is_target) {
  return !depfile_refusal(path, is_target).has_value();
}

// The bytes allowed everywhere inside a path, from the rule's text.
bool listed(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80 ||
         std::string(
             "+,/_.(){}@!-"
             " #$:\\~%")
                 .find(static_cast<char>(c)) != std::string::npos;
}

TEST(DepfileRefusal, EveryByteInTheMiddleOfAPathFollowsTheList) {
  for (int c = 1; c <= 0xff; ++c) {
    const std::string path = std::string("dir/x") + static_cast<char>(c) + "y.json";
    SCOPED_TRACE(c);
    // '%' is refused in the target only.
    EXPECT_EQ(writable(path, false), listed(c));
    EXPECT_EQ(writable(path, true), listed(c) && c != '%');
  }
}

TEST(DepfileRefusal, ListedBytesEverywhereButTheirPlaces) {
  EXPECT_TRUE(writable("a/b.c_d-e+f,g(h)i{j}k@l!m", false));
  EXPECT_TRUE(writable("\xc3\xa4\x80\xff", true));
  EXPECT_TRUE(writable("#$:%\\a", false));
  EXPECT_TRUE(writable(" lead space/ and#hash$:x", false));
  EXPECT_TRUE(writable("x~", false));
  EXPECT_TRUE(writable("dir/~x", true));
}

TEST(DepfileRefusal, BackslashOnlyBeforeABytePassedAsItIs) {
  for (char next : std::string("ab0.()/\\~%\x80_")) {
    EXPECT_TRUE(writable(std::string("x\\") + next + "y", false)) << next;
  }
  for (char next : std::string(" #:$")) {
    EXPECT_FALSE(writable(std::string("x\\") + next + "y", false)) << next;
    EXPECT_FALSE(writable(std::string("x\\") + next + "y", true)) << next;
  }
  EXPECT_FALSE(writable("plan\\", false));
  EXPECT_FALSE(writable("plan\\", true));
  EXPECT_FALSE(writable("\\", false));
}

TEST(DepfileRefusal, TildeNotFirst) {
  EXPECT_FALSE(writable("~", false));
  EXPECT_FALSE(writable("~/plan.json", false));
  EXPECT_FALSE(writable("~user/out.json", true));
  EXPECT_TRUE(writable("a~", true));
}

TEST(DepfileRefusal, PercentOnlyInAPrerequisite) {
  EXPECT_TRUE(writable("%", false));
  EXPECT_TRUE(writable("100%.json", false));
  EXPECT_FALSE(writable("%", true));
  EXPECT_FALSE(writable("out/100%.json", true));
}

TEST(DepfileRefusal, ClosingParenthesisNotLast) {
  EXPECT_TRUE(writable("model (1).json", false));
  EXPECT_TRUE(writable("x)y(", true));
  EXPECT_TRUE(writable("(a) b", true));
  for (bool is_target : {false, true}) {
    EXPECT_FALSE(writable("lib(member)", is_target));
    EXPECT_FALSE(writable(")", is_target));
    EXPECT_FALSE(writable("a b)", is_target));
  }
}

TEST(DepfileRefusal, APrerequisiteDoesNotEndInASpaceOrColon) {
  EXPECT_FALSE(writable("plan ", false));
  EXPECT_FALSE(writable("plan:", false));
  EXPECT_TRUE(writable("out ", true));
  EXPECT_TRUE(writable("out:", true));
  EXPECT_TRUE(writable("pl :an", false));
}

TEST(DepfileRefusal, EachReasonNamesTheByte) {
  EXPECT_EQ(depfile_refusal("", false), "an empty path names no file");
  EXPECT_EQ(depfile_refusal("a;b", false),
            "';' (0x3b) is not a byte that make and ninja both read back as itself");
  EXPECT_EQ(depfile_refusal("it's", false),
            "'\\'' (0x27) is not a byte that make and ninja both read back as itself");
  EXPECT_EQ(depfile_refusal("a\x01", false),
            "'\\x01' (0x01) is not a byte that make and ninja both read back as itself");
  EXPECT_EQ(depfile_refusal("a\x7f", false),
            "'\\x7f' (0x7f) is not a byte that make and ninja both read back as itself");
  EXPECT_EQ(depfile_refusal("a\nb", false),
            "'\\n' (0x0a): make syntax has no newline or carriage return");
  EXPECT_EQ(depfile_refusal("a\rb", true),
            "'\\r' (0x0d): make syntax has no newline or carriage return");
  EXPECT_EQ(depfile_refusal("a\tb", false),
            "'\\t' (0x09): ninja keeps the backslash of an escaped tab and make splits the "
            "path at a bare one");
  EXPECT_EQ(depfile_refusal("plan\\", false),
            "'\\\\' (0x5c) at the end: make and ninja read it as escaping the separator after it");
  EXPECT_EQ(depfile_refusal("a\\#b", false),
            "'\\\\' (0x5c) before '#' (0x23): no spelling of the two reads back the same in make "
            "and ninja");
  EXPECT_EQ(depfile_refusal("~/p", false),
            "'~' (0x7e) first: make expands a leading '~' to a home directory");
  EXPECT_EQ(depfile_refusal("o%", true),
            "'%' (0x25) in the target: make reads it as a pattern rule");
  EXPECT_EQ(depfile_refusal("l(m)", false),
            "')' (0x29) at the end: make reads a word ending in ')' after a '(' as an archive "
            "member");
  EXPECT_EQ(depfile_refusal("p ", false),
            "' ' (0x20) at the end of a prerequisite: make drops a space at the end of the "
            "line, escaped or not");
  EXPECT_EQ(depfile_refusal("p:", false),
            "':' (0x3a) at the end of a prerequisite: ninja reads '\\:' there as a backslash "
            "and drops the colon");
  // The first offending byte is the one named.
  EXPECT_EQ(depfile_refusal("a*b;", false),
            "'*' (0x2a) is not a byte that make and ninja both read back as itself");
}

TEST(EscapeDepfilePath, PlainPathsAreUnchanged) {
  EXPECT_EQ(escape_depfile_path("out/codegen_meta.json"), "out/codegen_meta.json");
  EXPECT_EQ(escape_depfile_path("/abs/p-q_r.s+t~u%v(w){x}@y!z,\\a"),
            "/abs/p-q_r.s+t~u%v(w){x}@y!z,\\a");
  EXPECT_EQ(escape_depfile_path("pl\xc3\xa4n.json"), "pl\xc3\xa4n.json");
}

TEST(EscapeDepfilePath, SpaceHashColonGetABackslashDollarIsDoubled) {
  EXPECT_EQ(escape_depfile_path("a b.json"), "a\\ b.json");
  EXPECT_EQ(escape_depfile_path("  "), "\\ \\ ");
  EXPECT_EQ(escape_depfile_path("h#ash"), "h\\#ash");
  EXPECT_EQ(escape_depfile_path("d$ollar$$"), "d$$ollar$$$$");
  EXPECT_EQ(escape_depfile_path("c:olon"), "c\\:olon");
  EXPECT_EQ(escape_depfile_path("\\a b"), "\\a\\ b");
}

TEST(RenderDepfile, OneRuleOnOneLine) {
  const Expected<std::string> text = render_depfile(
      {"-o", "out/meta.json"},
      {{"--plan", "plan.json"}, {"--model", "model.json"}, {"--base", "my base.json"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "out/meta.json: plan.json model.json my\\ base.json\n");
}

TEST(RenderDepfile, TargetIsEscapedToo) {
  const Expected<std::string> text = render_depfile({"-o", "o b#$:.json"}, {{"--plan", "p"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "o\\ b\\#$$\\:.json: p\n");
}

TEST(RenderDepfile, ExactDuplicatesAreListedOnce) {
  const Expected<std::string> text = render_depfile(
      {"-o", "o"}, {{"--plan", "a"}, {"--model", "b"}, {"--base", "a"}, {"--x", "./a"}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "o: a b ./a\n");
}

TEST(RenderDepfile, NoPrerequisites) {
  const Expected<std::string> text = render_depfile({"-o", "o"}, {});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "o:\n");
}

TEST(RenderDepfile, ABackslashBeforeTheSeparatorIsRefusedNotMerged) {
  // Written as "out.json: plan\ mo\ del.json", both tools read one file "plan mo del.json".
  const Expected<std::string> text =
      render_depfile({"-o", "out.json"}, {{"--plan", "plan\\"}, {"--model", "mo del.json"}});
  ASSERT_FALSE(text.ok());
  ASSERT_EQ(text.errors().size(), 1u);
  EXPECT_EQ(text.errors()[0].location_and_message(),
            "cannot write --plan 'plan\\\\' to a depfile: '\\\\' (0x5c) at the end: make and "
            "ninja read it as escaping the separator after it");
}

TEST(RenderDepfile, EveryUnwritablePathIsAnErrorWithItsFlag) {
  const Expected<std::string> text =
      render_depfile({"-o", "o\nx"}, {{"--plan", "ok"}, {"--model", ""}, {"--base", "a;b"}});
  ASSERT_FALSE(text.ok());
  ASSERT_EQ(text.errors().size(), 3u);
  EXPECT_EQ(text.errors()[0].location_and_message(),
            "cannot write -o 'o\\nx' to a depfile: '\\n' (0x0a): make syntax has no newline or "
            "carriage return");
  EXPECT_EQ(text.errors()[1].location_and_message(),
            "cannot write --model '' to a depfile: an empty path names no file");
  EXPECT_EQ(text.errors()[2].location_and_message(),
            "cannot write --base 'a;b' to a depfile: ';' (0x3b) is not a byte that make and "
            "ninja both read back as itself");
}

}  // namespace
}  // namespace hpfreeze
