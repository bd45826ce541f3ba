// Names on the lines of a text output (json/output_name.h). The quoted forms are Python's
// json.dumps(name) (ensure_ascii), written here by hand.

#include "json/output_name.h"

#include <gtest/gtest.h>

#include <string>

namespace hpfreeze {
namespace {

TEST(OutputNameTest, PlainNamesStayAsTheyAre) {
  for (const char* name : {"model.layers.0.mlp.up_proj.weight", "a::b", "tp", "\xc3\xa9t\xc3\xa9",
                           "x\xc2\xa0y", "(root)", "a\"b", "", "\xf0\x9f\x98\x80", "P(sum)"}) {
    EXPECT_EQ(name_hazard(name), NameHazard::kNone) << name;
    EXPECT_EQ(output_name(name), name);
  }
}

TEST(OutputNameTest, EveryControlIsQuoted) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string name = std::string("a") + static_cast<char>(c) + "b";
    EXPECT_EQ(name_hazard(name), NameHazard::kControl) << c;
    std::string expected = "\"a";
    if (c == '\n') {
      expected += "\\n";
    } else if (c == '\r') {
      expected += "\\r";
    } else if (c == '\t') {
      expected += "\\t";
    } else if (c == '\b') {
      expected += "\\b";
    } else if (c == '\f') {
      expected += "\\f";
    } else {
      expected += "\\u00";
      expected += "0123456789abcdef"[c >> 4];
      expected += "0123456789abcdef"[c & 15];
    }
    EXPECT_EQ(output_name(name), expected + "b\"");
  }
  EXPECT_EQ(output_name("a\x7f"), "\"a\\u007f\"");
  EXPECT_EQ(name_hazard("a\x7f"), NameHazard::kControl);
}

TEST(OutputNameTest, C1ControlsAndSeparatorsAreQuoted) {
  // U+0080..U+009F (NEL is U+0085), U+2028 and U+2029; the rest of the name is escaped too.
  EXPECT_EQ(output_name("\xc2\x80"), "\"\\u0080\"");
  EXPECT_EQ(output_name("n\xc2\x85l\xc3\xa9"), "\"n\\u0085l\\u00e9\"");
  EXPECT_EQ(output_name("\xc2\x9f"), "\"\\u009f\"");
  EXPECT_EQ(name_hazard("\xc2\x85"), NameHazard::kControl);
  EXPECT_EQ(output_name("a\xe2\x80\xa8"
                        "b"),
            "\"a\\u2028b\"");
  EXPECT_EQ(output_name("a\xe2\x80\xa9"), "\"a\\u2029\"");
  EXPECT_EQ(name_hazard("a\xe2\x80\xa9"), NameHazard::kLineSeparator);
  // Neighbours of the ranges are plain: U+00A0, U+2027, U+202A.
  EXPECT_EQ(name_hazard("\xc2\xa0\xe2\x80\xa7\xe2\x80\xaa"), NameHazard::kNone);
  // A control outranks a separator.
  EXPECT_EQ(name_hazard("\xe2\x80\xa8\n"), NameHazard::kControl);
}

TEST(OutputNameTest, ALeadingDoubleColonIsQuoted) {
  EXPECT_EQ(name_hazard("::error file=x::y"), NameHazard::kCommandStart);
  EXPECT_EQ(output_name("::error file=x::y"), "\"::error file=x::y\"");
  // After the white space the runner trims: space, NBSP, U+2003, U+3000.
  EXPECT_EQ(output_name("  ::x"), "\"  ::x\"");
  EXPECT_EQ(output_name("\xc2\xa0::x"), "\"\\u00a0::x\"");
  EXPECT_EQ(output_name("\xe2\x80\x83::x"), "\"\\u2003::x\"");
  EXPECT_EQ(output_name("\xe3\x80\x80::x"), "\"\\u3000::x\"");
  // Anywhere else, or after other characters, "::" is plain.
  EXPECT_EQ(output_name("a ::x"), "a ::x");
  EXPECT_EQ(output_name(":x::"), ":x::");
}

TEST(OutputNameTest, ALeadingQuoteIsQuotedSoTheFormsStayApart) {
  // The name "a\nb" (with its quotes and backslash) would otherwise print as the quoted
  // form of a name holding LF.
  EXPECT_EQ(output_name("\"a\\nb\""), "\"\\\"a\\\\nb\\\"\"");
  EXPECT_EQ(output_name("a\"b"), "a\"b");
}

TEST(OutputNameTest, BytesThatAreNoUtf8AreQuotedAsReplacementCharacters) {
  EXPECT_EQ(name_hazard("a\xff"), NameHazard::kNotUtf8);
  EXPECT_EQ(output_name("a\xff"), "\"a\\ufffd\"");
  EXPECT_EQ(name_hazard("\xc0\xaf"), NameHazard::kNotUtf8);      // overlong '/'
  EXPECT_EQ(name_hazard("\xed\xa0\x80"), NameHazard::kNotUtf8);  // a surrogate
  EXPECT_EQ(name_hazard("\xe2\x80"), NameHazard::kNotUtf8);      // cut short
  EXPECT_EQ(name_hazard("\xff\n"), NameHazard::kControl);
}

TEST(OutputNameTest, DescribesEachHazard) {
  EXPECT_EQ(describe(NameHazard::kNone), "");
  EXPECT_EQ(describe(NameHazard::kControl), "holds a control character");
  EXPECT_EQ(describe(NameHazard::kLineSeparator),
            "holds a line or paragraph separator (U+2028 or U+2029)");
  EXPECT_EQ(describe(NameHazard::kCommandStart), "starts with '::' as a workflow command does");
  EXPECT_EQ(describe(NameHazard::kNotUtf8), "is not UTF-8");
}

}  // namespace
}  // namespace hpfreeze
