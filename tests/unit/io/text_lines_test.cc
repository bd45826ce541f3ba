// The line counter: Python's text-mode lines and strict UTF-8, over pieces of any size.
#include "io/text_lines.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

namespace hpfreeze {
namespace {

using namespace std::string_literals;

std::optional<std::uint64_t> lines_of(std::initializer_list<std::string_view> pieces,
                                      LineScan scan = fastest_line_scan()) {
  TextLineCounter counter(scan);
  for (const std::string_view piece : pieces) counter.feed(piece);
  return counter.lines();
}

// Python: sum(1 for _ in open(path, encoding="utf-8")) of a file with these bytes, by hand.
struct Case {
  std::string bytes;
  std::optional<std::uint64_t> lines;
};
const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"", 0},
      {"a", 1},
      {"\n", 1},
      {"\r", 1},
      {"\r\n", 1},
      {"\n\r", 2},
      {"\r\r", 2},
      {"\n\n", 2},
      {"a\nb\n", 2},
      {"a\nb", 2},  // no final newline
      {"a\r\nb\r\n", 2},
      {"a\rb\r", 2},
      {"a\rb", 2},
      {"a\r\n\r\nb", 3},
      {"a\r\r\nb\n\rc", 5},     // mixed: \r, \r\n, \n, \r, then c
      {"x\0y\n"s, 1},           // NUL is a character like any other
      {"\v\f\x1c\xc2\x85", 1},  // only LF, CR and CRLF end a line in text mode (not NEL)
      {"\xef\xbb\xbf"
       "a\n",
       1},  // a byte-order mark is a character
      {"\xc3\xa4\n\xe2\x82\xac\r\xf0\x9f\xa4\x96", 3},
      {"\xf4\x8f\xbf\xbf\n", 1},  // U+10FFFF
      {"\xff\n", std::nullopt},
      {"a\n\x80", std::nullopt},           // a continuation byte alone
      {"\xc0\xaf", std::nullopt},          // overlong '/'
      {"\xe0\x80\xaf", std::nullopt},      // overlong
      {"\xf0\x80\x80\xaf", std::nullopt},  // overlong
      {"\xed\xa0\x80", std::nullopt},      // surrogate U+D800
      {"\xf4\x90\x80\x80", std::nullopt},  // above U+10FFFF
      {"\xf5\x80\x80\x80", std::nullopt},
      {"a\xe2\x82", std::nullopt},   // cut off at the end
      {"\xe2\x82\n", std::nullopt},  // cut off by a newline
  };
  return kCases;
}

TEST(TextLineCounter, WholeBytes) {
  for (const Case& c : cases())
    EXPECT_EQ(lines_of({c.bytes}), c.lines) << testing::PrintToString(c.bytes);
}

TEST(TextLineCounter, EverySplitInTwoAndThreePieces) {
  for (const Case& c : cases()) {
    const std::string_view bytes = c.bytes;
    for (std::size_t i = 0; i <= bytes.size(); ++i) {
      EXPECT_EQ(lines_of({bytes.substr(0, i), bytes.substr(i)}), c.lines)
          << testing::PrintToString(c.bytes) << " split at " << i;
      for (std::size_t j = i; j <= bytes.size(); ++j) {
        EXPECT_EQ(lines_of({bytes.substr(0, i), bytes.substr(i, j - i), bytes.substr(j)}), c.lines)
            << testing::PrintToString(c.bytes) << " split at " << i << " and " << j;
      }
    }
  }
}

TEST(TextLineCounter, ACrlfSplitBetweenPiecesIsOneLineEnd) {
  EXPECT_EQ(lines_of({"a\r", "\nb"}), 2u);
  EXPECT_EQ(lines_of({"a\r", "\n"}), 1u);
  EXPECT_EQ(lines_of({"\r", "\n", "\r", "\n"}), 2u);
  EXPECT_EQ(lines_of({"a\r", "", "\nb"}), 2u);  // an empty piece changes nothing
  EXPECT_EQ(lines_of({"a\r", "b\n"}), 2u);
}

TEST(TextLineCounter, AFileThatIsNotUtf8HasNoCountWhateverFollows) {
  EXPECT_EQ(lines_of({"\xff", "abc\n"}), std::nullopt);
  EXPECT_EQ(lines_of({"\xe2", "\x82", "\xac\n"}), 1u);  // one character over three pieces
  EXPECT_EQ(lines_of({"\xe2", "\x82"}), std::nullopt);
}

TEST(TextLineCounter, EveryScanAgrees) {
  for (const LineScan scan : available_line_scans()) {
    for (const Case& c : cases()) {
      EXPECT_EQ(lines_of({c.bytes}, scan), c.lines) << testing::PrintToString(c.bytes);
    }
  }
}

// Long text, where the vector scans say which blocks hold a byte that is not ASCII: one
// character or one bad byte at every offset of 600 bytes, and beyond a scan block.
TEST(TextLineCounter, NonAsciiAnywhereInLongText) {
  for (const LineScan scan : available_line_scans()) {
    for (const std::size_t size : {std::size_t{600}, std::size_t{255 * 32 * 2 + 40}}) {
      const std::string text(size, 'x');
      for (std::size_t at = 0; at + 2 <= size; at += size > 600 ? 37 : 1) {
        std::string good = text, bad = text, cut = text;
        good.replace(at, 2, "\xc3\xa4");
        bad[at] = '\x80';
        cut[at] = '\xc3';  // a lead byte followed by ASCII
        EXPECT_EQ(lines_of({good}, scan), 1u) << at;
        EXPECT_EQ(lines_of({bad}, scan), std::nullopt) << at;
        EXPECT_EQ(lines_of({cut}, scan), std::nullopt) << at;
        // A character split where a piece ends.
        EXPECT_EQ(lines_of({std::string_view(good).substr(0, at + 1),
                            std::string_view(good).substr(at + 1)},
                           scan),
                  1u)
            << at;
      }
    }
  }
}

// The byte-at-a-time line ends of `text`, written out here as the rule says.
std::uint64_t reference_line_ends(std::string_view text) {
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' || (text[i] == '\n' && (i == 0 || text[i - 1] != '\r'))) ++count;
  }
  return count;
}

// Every scan against the rule, on random text of every length to 600 with line ends at
// every offset from a vector's edge, and over 255 rounds, where the lanes are summed.
TEST(CountLineEnds, EveryScanAsTheRule) {
#if defined(__SSE2__)
  EXPECT_GE(available_line_scans().size(), 2u);
#endif
  std::mt19937 random(7);
  const std::string alphabet = "\r\n\r\na\xc3";
  for (const LineScan scan : available_line_scans()) {
    for (std::size_t length = 0; length <= 600; ++length) {
      for (int round = 0; round < 4; ++round) {
        std::string text(length, 'x');
        for (char& c : text) c = alphabet[random() % alphabet.size()];
        EXPECT_EQ(count_line_ends(text, scan), reference_line_ends(text))
            << testing::PrintToString(text);
      }
    }
    std::string lines;
    for (std::size_t i = 0; i < 10000; ++i)
      lines += i % 3 == 0 ? "\r\n" : i % 3 == 1 ? "x\n" : "\r";
    EXPECT_EQ(count_line_ends(lines, scan), 10000u);
    EXPECT_EQ(count_line_ends(std::string(20000, '\n'), scan), 20000u);
    EXPECT_EQ(count_line_ends(std::string(20000, '\r'), scan), 20000u);
    EXPECT_EQ(count_line_ends(std::string(20000, '\0'), scan), 0u);
  }
}

TEST(CountLineEnds, ByHand) {
  EXPECT_EQ(count_line_ends(""), 0u);
  EXPECT_EQ(count_line_ends("\n"), 1u);
  EXPECT_EQ(count_line_ends("\r\n\r\n\n\r"), 4u);
}

}  // namespace
}  // namespace hpfreeze
