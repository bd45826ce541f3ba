// The bundle's file names: the hand-made cases below, and every name against upstream's
// own rule run by Python (artifact.py's _default_modeling_name).
#include "bundle/output_names.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "python_reference.h"

namespace hpfreeze {
namespace {

using namespace std::string_literals;

TEST(ModelingFileName, KeepsLettersDigitsAndUnderscores) {
  EXPECT_EQ(modeling_file_name("Qwen3_Moe"), "modeling_Qwen3_Moe_gen_npu.py");
  EXPECT_EQ(modeling_file_name("Deepseek_V4"), "modeling_Deepseek_V4_gen_npu.py");
}

TEST(ModelingFileName, EmptyIsModel) {
  EXPECT_EQ(modeling_file_name(""), "modeling_model_gen_npu.py");
}

TEST(ModelingFileName, PunctuationAndSpacesBecomeOneUnderscoreEach) {
  EXPECT_EQ(modeling_file_name("Deepseek-V4.1"), "modeling_Deepseek_V4_1_gen_npu.py");
  EXPECT_EQ(modeling_file_name("a b/c\\d"), "modeling_a_b_c_d_gen_npu.py");
  EXPECT_EQ(modeling_file_name("--"), "modeling____gen_npu.py");
  EXPECT_EQ(modeling_file_name("x\ty\n"), "modeling_x_y__gen_npu.py");
  EXPECT_EQ(modeling_file_name("a\0b"s), "modeling_a_b_gen_npu.py");
  EXPECT_EQ(modeling_file_name("../../etc"), "modeling_______etc_gen_npu.py");
}

TEST(ModelingFileName, UnicodeLettersAndNumbersStayOtherCodePointsAreOneUnderscore) {
  // 模型 (Lo), ä (Ll), ² (No), Ⅻ (Nl), ٣ (Nd) stay; an em dash, a combining acute accent,
  // a no-break space and a 4-byte emoji are one '_' each.
  EXPECT_EQ(modeling_file_name("模型ä²Ⅻ٣"), "modeling_模型ä²Ⅻ٣_gen_npu.py");
  EXPECT_EQ(modeling_file_name("Qwen\u2014e\u0301\u00A0\U0001F916"),
            "modeling_Qwen_e____gen_npu.py");
}

TEST(ModelingFileName, EachByteOfBrokenUtf8IsOneUnderscore) {
  EXPECT_EQ(modeling_file_name("\xff"), "modeling___gen_npu.py");
  EXPECT_EQ(modeling_file_name("a\xe2\x82"), "modeling_a___gen_npu.py");          // cut off
  EXPECT_EQ(modeling_file_name("\xc0\xafx"), "modeling___x_gen_npu.py");          // overlong
  EXPECT_EQ(modeling_file_name("\xed\xa0\x80"), "modeling_____gen_npu.py");       // surrogate
  EXPECT_EQ(modeling_file_name("\xf4\x90\x80\x80"), "modeling______gen_npu.py");  // > U+10FFFF
  EXPECT_EQ(modeling_file_name("\x80\xc3\xa4"), "modeling__ä_gen_npu.py");
}

// Upstream's rule, run by Python on each name of stdin (one per line, as JSON strings).
constexpr std::string_view kUpstreamRule = R"(
import json, sys
for line in sys.stdin:
    base = json.loads(line) or "model"
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in base)
    print(json.dumps(f"modeling_{safe}_gen_npu.py"))
)";

std::string json_string(std::u32string_view text) {
  std::string out = "\"";
  char buf[16];
  for (const char32_t cp : text) {
    if (cp < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    } else {
      const char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    }
    out += buf;
  }
  return out + "\"";
}

std::string utf8(std::u32string_view text) {
  std::string out;
  for (const char32_t cp : text) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

// Python's json.dumps of an ASCII-escaped string back to UTF-8 (only \uXXXX and \" \\).
std::string from_json_string(std::string_view json) {
  std::u32string text;
  for (std::size_t i = 1; i + 1 < json.size(); ++i) {
    if (json[i] != '\\') {
      text += static_cast<char32_t>(static_cast<unsigned char>(json[i]));
      continue;
    }
    if (json[++i] != 'u') {
      text += static_cast<char32_t>(json[i]);
      continue;
    }
    char32_t unit =
        static_cast<char32_t>(std::stoul(std::string(json.substr(i + 1, 4)), nullptr, 16));
    i += 4;
    if (unit >= 0xD800 && unit < 0xDC00) {
      const auto low =
          static_cast<char32_t>(std::stoul(std::string(json.substr(i + 3, 4)), nullptr, 16));
      unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
      i += 6;
    }
    text += unit;
  }
  return utf8(text);
}

TEST(ModelingFileName, AsUpstreamsRuleInPython) {
  // Names drawn from every plane's assigned and unassigned code points, the ASCII
  // punctuation, and the categories around the letters (marks, spaces, symbols).
  std::mt19937 random(20261205);
  std::vector<std::u32string> names = {U"", U"model", U"Qwen3-Moe", U"_", U"\u00B2\u0301"};
  const std::vector<std::pair<char32_t, char32_t>> pools = {
      {0x20, 0x7E},       {0x80, 0x2FF},      {0x300, 0x36F},     {0x370, 0x1FFF},
      {0x2000, 0x2BFF},   {0x3000, 0x9FFF},   {0xA000, 0xD7FF},   {0xE000, 0xFFFF},
      {0x10000, 0x1FFFF}, {0x20000, 0x3FFFF}, {0xE0000, 0x10FFFF}};
  for (int n = 0; n < 3000; ++n) {
    std::u32string name;
    const int length = static_cast<int>(random() % 12);
    for (int i = 0; i < length; ++i) {
      const auto& [low, high] = pools[random() % pools.size()];
      name += static_cast<char32_t>(low + random() % (high - low + 1));
    }
    names.push_back(name);
  }
  std::string input;
  for (const std::u32string& name : names) input += json_string(name) + "\n";
  const std::vector<std::string> expected =
      testing_python::split_lines(testing_python::run_python(kUpstreamRule, {}, input));
  ASSERT_EQ(expected.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(modeling_file_name(utf8(names[i])), from_json_string(expected[i]))
        << json_string(names[i]);
  }
}

TEST(OutputFileName, RolesNameUpstreamsFiles) {
  EXPECT_EQ(output_role("modeling"), OutputRole::kModeling);
  EXPECT_EQ(output_role("diff"), OutputRole::kDiff);
  EXPECT_EQ(output_role("init"), OutputRole::kInit);
  EXPECT_EQ(output_role("Modeling"), OutputRole::kFile);
  EXPECT_EQ(output_file_name("modeling", "Qwen3_Moe"), "modeling_Qwen3_Moe_gen_npu.py");
  EXPECT_EQ(output_file_name("diff", "Qwen3_Moe"), "modeling_Qwen3_Moe_gen_npu.py.diff");
  EXPECT_EQ(output_file_name("diff", ""), "modeling_model_gen_npu.py.diff");
  EXPECT_EQ(output_file_name("init", "x/y"), "__init__.py");
  EXPECT_EQ(output_file_name("modeling", "../x"), "modeling____x_gen_npu.py");
}

TEST(OutputFileName, AnyOtherKeyIsAFileNameOfTheBundle) {
  for (const std::string_view key : {"configuration_deepseek.py", "...", ".hidden", " ", "-",
                                     "modeling.py", "__init__.py", "a:b", "é.py"}) {
    EXPECT_EQ(output_file_name(key, "m"), key);
    EXPECT_TRUE(is_plain_file_name(key)) << key;
  }
}

TEST(OutputFileName, AKeyThatIsNoPlainFileNameNamesNothing) {
  for (const std::string& key :
       {""s, "."s, ".."s, "a/b"s, "/etc/passwd"s, "dir/"s, "a\\b"s, "..\\x"s, "a\0b"s, "\0"s}) {
    EXPECT_EQ(output_file_name(key, "m"), std::nullopt) << key;
    EXPECT_FALSE(is_plain_file_name(key)) << key;
  }
  EXPECT_EQ(kInvalidOutputFilename, "invalid output filename");
}

TEST(Sha256Hex, SixtyFourLowercaseHexDigits) {
  const std::string good = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  EXPECT_TRUE(is_sha256_hex(good));
  EXPECT_FALSE(is_sha256_hex(good.substr(1)));
  EXPECT_FALSE(is_sha256_hex(good + "0"));
  EXPECT_FALSE(is_sha256_hex(""));
  std::string upper = good;
  upper[0] = 'E';
  EXPECT_FALSE(is_sha256_hex(upper));
  std::string letter = good;
  letter[5] = 'g';
  EXPECT_FALSE(is_sha256_hex(letter));
  std::string space = good;
  space[63] = ' ';
  EXPECT_FALSE(is_sha256_hex(space));
}

}  // namespace
}  // namespace hpfreeze
