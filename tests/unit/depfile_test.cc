// Depfile escaping: the expected strings are what GCC 12 writes with -MD/-MQ for the same
// names (checked by hand), plus the documented `\:` for colons.
#include "hpfreeze/depfile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hpfreeze {
namespace {

TEST(EscapeDepfilePath, PlainPathsAreUnchanged) {
  EXPECT_EQ(escape_depfile_path("out/codegen_meta.json"), "out/codegen_meta.json");
  EXPECT_EQ(escape_depfile_path("/abs/p-q_r.s+t~u%v*w?x[y]z"), "/abs/p-q_r.s+t~u%v*w?x[y]z");
}

TEST(EscapeDepfilePath, SpaceAndTabGetABackslash) {
  EXPECT_EQ(escape_depfile_path("a b.json"), "a\\ b.json");
  EXPECT_EQ(escape_depfile_path("a\tb"), "a\\\tb");
  EXPECT_EQ(escape_depfile_path("  "), "\\ \\ ");
}

TEST(EscapeDepfilePath, BackslashesBeforeASpaceAreDoubled) {
  // GCC: "bs\ sp.h" -> "bs\\\ sp.h" (2N+1 backslashes + space = N backslashes + space).
  EXPECT_EQ(escape_depfile_path("bs\\ sp"), "bs\\\\\\ sp");
  EXPECT_EQ(escape_depfile_path("x\\\\ y"), "x\\\\\\\\\\ y");
  // Backslashes elsewhere stay single.
  EXPECT_EQ(escape_depfile_path("a\\b\\"), "a\\b\\");
  EXPECT_EQ(escape_depfile_path("a\\#"), "a\\\\#");
}

TEST(EscapeDepfilePath, HashDollarAndColon) {
  EXPECT_EQ(escape_depfile_path("h#ash"), "h\\#ash");
  EXPECT_EQ(escape_depfile_path("d$ollar$$"), "d$$ollar$$$$");
  EXPECT_EQ(escape_depfile_path("c:olon"), "c\\:olon");
}

TEST(EscapeDepfilePath, NonAsciiBytesPassThrough) {
  EXPECT_EQ(escape_depfile_path("pl\xc3\xa4n.json"), "pl\xc3\xa4n.json");
}

TEST(DepfileCanExpress, RejectsEmptyNewlineAndCarriageReturn) {
  EXPECT_TRUE(depfile_can_express("a b#$:\\\t"));
  EXPECT_FALSE(depfile_can_express(""));
  EXPECT_FALSE(depfile_can_express("a\nb"));
  EXPECT_FALSE(depfile_can_express("a\rb"));
}

TEST(RenderDepfile, OneRuleOnOneLine) {
  const Expected<std::string> text =
      render_depfile("out/meta.json", {"plan.json", "model.json", "my base.json"});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "out/meta.json: plan.json model.json my\\ base.json\n");
}

TEST(RenderDepfile, TargetIsEscapedToo) {
  const Expected<std::string> text = render_depfile("o b#$:.json", {"p"});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "o\\ b\\#$$\\:.json: p\n");
}

TEST(RenderDepfile, ExactDuplicatesAreListedOnce) {
  const Expected<std::string> text = render_depfile("o", {"a", "b", "a", "./a"});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "o: a b ./a\n");
}

TEST(RenderDepfile, NoPrerequisites) {
  const Expected<std::string> text = render_depfile("o", {});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "o:\n");
}

TEST(RenderDepfile, EveryUnwritablePathIsAnError) {
  const Expected<std::string> text = render_depfile("o\nx", {"ok", "", "a\rb"});
  ASSERT_FALSE(text.ok());
  ASSERT_EQ(text.errors().size(), 3u);
  EXPECT_EQ(text.errors()[0].location_and_message(),
            "cannot write 'o\\nx' to a depfile: make syntax has no newline or carriage return");
  EXPECT_EQ(text.errors()[1].location_and_message(),
            "an empty path cannot be written to a depfile");
  EXPECT_EQ(text.errors()[2].location_and_message(),
            "cannot write 'a\\rb' to a depfile: make syntax has no newline or carriage return");
}

}  // namespace
}  // namespace hpfreeze
