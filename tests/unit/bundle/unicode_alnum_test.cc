// Python's str.isalnum() for every code point, the C++ table against the running Python
// (Unicode 14.0 in Python 3.11, Debian 12's).
#include "bundle/unicode_alnum.h"

#include <gtest/gtest.h>

#include <charconv>
#include <string>
#include <vector>

#include "python_reference.h"

namespace hpfreeze {
namespace {

using testing_python::run_python;
using testing_python::split_lines;

// The first line is unicodedata's version; then one line per code point range for which
// isalnum() is true: "FIRST LAST" in hex.
constexpr std::string_view kAlnumRanges = R"(
import sys, unicodedata
print(unicodedata.unidata_version)
start = None
for code in range(0x110000):
    if chr(code).isalnum():
        if start is None:
            start = code
    elif start is not None:
        print(f"{start:x} {code - 1:x}")
        start = None
if start is not None:
    print(f"{start:x} {0x10ffff:x}")
)";

char32_t parse_hex(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << text;
  return value;
}

TEST(UnicodeAlnum, EveryCodePointAsPythonsIsalnum) {
  const std::vector<std::string> lines = split_lines(run_python(kAlnumRanges));
  ASSERT_FALSE(lines.empty());
  if (lines[0] != "14.0.0") {
    GTEST_SKIP() << "this Python has Unicode " << lines[0] << "; the table is Unicode 14.0.0";
  }
  std::vector<bool> expected(0x110000, false);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t space = lines[i].find(' ');
    ASSERT_NE(space, std::string::npos) << lines[i];
    const char32_t first = parse_hex(std::string_view(lines[i]).substr(0, space));
    const char32_t last = parse_hex(std::string_view(lines[i]).substr(space + 1));
    for (char32_t cp = first; cp <= last; ++cp) expected[cp] = true;
  }
  std::size_t mismatches = 0, alnum = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    alnum += expected[cp] ? 1 : 0;
    if (is_unicode_alnum(cp) != expected[cp] && ++mismatches <= 10) {
      ADD_FAILURE() << "U+" << std::hex << static_cast<std::uint32_t>(cp) << ": Python says "
                    << expected[cp];
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(alnum, 100000u);  // the reference is not empty: CJK alone has over 90,000
}

TEST(UnicodeAlnum, HandPickedCodePoints) {
  for (const char32_t cp :
       {U'0', U'9', U'A', U'Z', U'a', U'z', U'\u00AA', U'\u00B2', U'\u00E9', U'\u0663', U'\u216B',
        U'\u4E00', U'\uFF21', U'\U0001D7CE', U'\U0003134A'}) {
    EXPECT_TRUE(is_unicode_alnum(cp)) << std::hex << static_cast<std::uint32_t>(cp);
  }
  for (const char32_t cp :
       {U'\0', U' ', U'-', U'.', U'_', U'/', U'\u00A0', U'\u0301', U'\u2014', U'\u3000',
        U'\U0001F916', U'\U0010FFFF', char32_t{0xD800}, char32_t{0x110000}, char32_t{0xFFFFFFFF}}) {
    EXPECT_FALSE(is_unicode_alnum(cp)) << std::hex << static_cast<std::uint32_t>(cp);
  }
}

}  // namespace
}  // namespace hpfreeze
