// Well-formed UTF-8 (base/utf8.h) against Python's strict utf-8 codec: every lead byte with
// second, third and fourth bytes on each side of every range boundary.
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "python_reference.h"

namespace hpfreeze {
namespace {

// For each line of hex bytes on stdin: the length of the first character when the bytes
// start with a well-formed one, else 0, then the character's code point in hex.
constexpr std::string_view kFirstCharacter = R"(
import sys
for line in sys.stdin:
    data = bytes.fromhex(line.strip())
    answer = "0 0"
    for k in range(1, 5):
        try:
            text = data[:k].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) == 1:
            answer = f"{k} {ord(text):x}"
        break
    print(answer)
)";

TEST(Utf8, FirstCharacterAsPythonsStrictCodec) {
  const std::vector<unsigned> edges = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  const std::vector<unsigned> tails = {0x7F, 0x80, 0xBF, 0xC0};
  std::vector<std::string> sequences;
  for (unsigned lead = 0; lead < 256; ++lead) {
    for (const unsigned second : edges) {
      for (const unsigned third : tails) {
        for (const unsigned fourth : tails) {
          sequences.push_back({static_cast<char>(lead), static_cast<char>(second),
                               static_cast<char>(third), static_cast<char>(fourth)});
        }
      }
    }
  }
  std::string input;
  char hex[3];
  for (const std::string& s : sequences) {
    for (const char c : s) {
      std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(c));
      input += hex;
    }
    input += '\n';
  }
  const std::vector<std::string> expected =
      testing_python::split_lines(testing_python::run_python(kFirstCharacter, {}, input));
  ASSERT_EQ(expected.size(), sequences.size());
  std::size_t well_formed = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(sequences[i].data());
    char32_t code_point = 0;
    const std::size_t length = decode_utf8_char(bytes, 4, &code_point);
    char got[32];
    std::snprintf(got, sizeof got, "%zu %x", length,
                  length ? static_cast<unsigned>(code_point) : 0u);
    EXPECT_EQ(got, expected[i]) << "bytes " << input.substr(i * 9, 8);
    well_formed += length > 1 ? 1 : 0;
    // The lead byte alone says as much as the whole sequence about its length.
    if (length != 0) {
      EXPECT_EQ(utf8_lead(bytes[0]).length, length);
    }
  }
  EXPECT_GT(well_formed, 1000u);
}

TEST(Utf8, ACharacterCutOffIsNone) {
  char32_t code_point = 0;
  const auto* euro = reinterpret_cast<const unsigned char*>("\xe2\x82\xac");
  EXPECT_EQ(decode_utf8_char(euro, 3, &code_point), 3u);
  EXPECT_EQ(code_point, U'\u20AC');
  EXPECT_EQ(decode_utf8_char(euro, 2, &code_point), 0u);
  EXPECT_EQ(decode_utf8_char(euro, 1, &code_point), 0u);
}

}  // namespace
}  // namespace hpfreeze
