#include "hpfreeze/commands/parse_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hpfreeze {
namespace {

struct Line {
  std::string text;
  std::size_t line;
  bool too_long;
  bool operator==(const Line&) const = default;
};

std::vector<Line> lines_of(const std::vector<ParseInput>& inputs) {
  std::vector<Line> out;
  for (const ParseInput& in : inputs) {
    EXPECT_EQ(in.origin, "<stdin>");
    out.push_back({std::string(in.text), in.line, in.too_long});
  }
  return out;
}

TEST(LineSplitterTest, LinesCutAcrossChunksComeOutWhole) {
  LineSplitter splitter("<stdin>");
  EXPECT_EQ(lines_of(splitter.feed("S(0")), std::vector<Line>{});
  EXPECT_EQ(lines_of(splitter.feed(")\nR\r\n\nP(s")),
            (std::vector<Line>{{"S(0)", 1, false}, {"R", 2, false}, {"", 3, false}}));
  EXPECT_EQ(lines_of(splitter.feed("um)")), std::vector<Line>{});
  EXPECT_EQ(lines_of(splitter.finish()), (std::vector<Line>{{"P(sum)", 4, false}}));
  EXPECT_EQ(lines_of(splitter.finish()), std::vector<Line>{});
}

TEST(LineSplitterTest, InputEndingInNewlineHasNoExtraLine) {
  LineSplitter splitter("<stdin>");
  EXPECT_EQ(lines_of(splitter.feed("R\n")), (std::vector<Line>{{"R", 1, false}}));
  EXPECT_EQ(lines_of(splitter.finish()), std::vector<Line>{});
}

TEST(LineSplitterTest, OverlongLineIsSkippedToItsEnd) {
  LineSplitter splitter("<stdin>");
  const std::string piece(kMaxParseLine / 2 + 1, ' ');
  EXPECT_EQ(lines_of(splitter.feed(piece)), std::vector<Line>{});
  EXPECT_EQ(lines_of(splitter.feed(piece)), std::vector<Line>{});  // now over the limit
  EXPECT_EQ(lines_of(splitter.feed(piece + "\nR\n")),
            (std::vector<Line>{{"", 1, true}, {"R", 2, false}}));
  // An unfinished overlong last line still counts.
  EXPECT_EQ(lines_of(splitter.feed(std::string(kMaxParseLine + 1, 'x'))), std::vector<Line>{});
  EXPECT_EQ(lines_of(splitter.finish()), (std::vector<Line>{{"", 3, true}}));
}

TEST(LineSplitterTest, LineOfExactlyTheLimitIsKept) {
  LineSplitter splitter("<stdin>");
  const std::string line(kMaxParseLine, 'x');
  const std::vector<Line> got = lines_of(splitter.feed(line + "\n"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].too_long);
  EXPECT_EQ(got[0].text.size(), kMaxParseLine);
}

TEST(RunParseTest, OverlongLineIsOneErrorAtItsLine) {
  const std::vector<ParseInput> inputs = {ParseInput{"R", "<stdin>", 1, false},
                                          ParseInput{"", "<stdin>", 2, true}};
  const CommandResult result = run_parse(inputs, {});
  EXPECT_EQ(result.output, "R\n");
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            "<stdin>:2: line longer than 1048576 bytes");
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

}  // namespace
}  // namespace hpfreeze
