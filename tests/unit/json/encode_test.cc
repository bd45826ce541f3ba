// Exact bytes for every rule of the encoders. Expected strings are written by hand from
// SPEC.md §5 and Python's json module behaviour, never produced by the encoder.

#include "json/encode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "json/json.h"

namespace hpfreeze {
namespace {

using namespace std::string_literals;

Json i64(std::int64_t i) { return Json(i); }
Json u64(std::uint64_t u) { return Json(u); }
Json obj(std::initializer_list<JsonMember> members) { return Json(JsonObject(members)); }
Json arr(std::initializer_list<Json> elements) { return Json(JsonArray(elements)); }

std::string py_string(std::string_view utf8) {
  std::string out;
  append_python_string(out, utf8);
  return out;
}

std::string in_quotes(std::string_view text) {
  std::string out = "\"";
  out += text;
  out += '"';
  return out;
}

std::string py_float(double d) {
  std::string out;
  append_python_float(out, d);
  return out;
}

// The outputs are large: report where they part instead of printing both.
::testing::AssertionResult same_bytes(const std::string& actual, const std::string& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  const auto diff = std::mismatch(actual.begin(), actual.end(), expected.begin(), expected.end());
  return ::testing::AssertionFailure()
         << "sizes " << actual.size() << " vs " << expected.size() << ", first difference at byte "
         << (diff.first - actual.begin());
}

TEST(EncodePythonJson, Scalars) {
  EXPECT_EQ(encode_python_json(Json()), "null");
  EXPECT_EQ(encode_python_json(Json(true)), "true");
  EXPECT_EQ(encode_python_json(Json(false)), "false");
  EXPECT_EQ(encode_python_json(i64(0)), "0");
  EXPECT_EQ(encode_python_json(i64(-1)), "-1");
  EXPECT_EQ(encode_python_json(i64(std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808");
  EXPECT_EQ(encode_python_json(i64(std::numeric_limits<std::int64_t>::max())),
            "9223372036854775807");
  EXPECT_EQ(encode_python_json(u64(0)), "0");
  EXPECT_EQ(encode_python_json(u64(9223372036854775808u)), "9223372036854775808");
  EXPECT_EQ(encode_python_json(u64(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615");
  EXPECT_EQ(encode_python_json(Json(1.0)), "1.0");
  EXPECT_EQ(encode_python_json(Json("s")), "\"s\"");
}

TEST(EncodePythonJson, EmptyContainersAreInline) {
  EXPECT_EQ(encode_python_json(obj({})), "{}");
  EXPECT_EQ(encode_python_json(arr({})), "[]");
  EXPECT_EQ(encode_python_json(obj({{"b", arr({})}, {"a", obj({})}})),
            "{\n  \"a\": {},\n  \"b\": []\n}");
  EXPECT_EQ(encode_python_json(arr({arr({}), obj({})})), "[\n  [],\n  {}\n]");
}

TEST(EncodePythonJson, NestedLayout) {
  const Json value = obj({
      {"b", arr({i64(1), obj({{"c", Json()}}), Json("x")})},
      {"a", Json(true)},
  });
  EXPECT_EQ(encode_python_json(value),
            "{\n"
            "  \"a\": true,\n"
            "  \"b\": [\n"
            "    1,\n"
            "    {\n"
            "      \"c\": null\n"
            "    },\n"
            "    \"x\"\n"
            "  ]\n"
            "}");
}

TEST(EncodePythonJson, RootArray) {
  EXPECT_EQ(encode_python_json(arr({i64(1), Json("x"), Json(2.5), Json(false)})),
            "[\n  1,\n  \"x\",\n  2.5,\n  false\n]");
}

TEST(EncodePythonJson, KeysSortedByCodePoint) {
  const Json value = obj({
      {"\xF0\x9F\x98\x80", i64(14)},  // U+1F600
      {"z", i64(9)},
      {"a0", i64(7)},
      {"\xEE\x80\x80", i64(13)},  // U+E000: before U+1F600 by code point, after it in UTF-16
      {"a", i64(5)},
      {"B", i64(3)},
      {"\x7F", i64(11)},
      {"a.b", i64(6)},
      {"~", i64(10)},
      {"A", i64(2)},
      {"\xC3\xA9", i64(12)},  // U+00E9
      {"b", i64(8)},
      {"a-b", i64(4)},
      {"", i64(1)},
  });
  EXPECT_EQ(encode_python_json(value),
            "{\n"
            "  \"\": 1,\n"
            "  \"A\": 2,\n"
            "  \"B\": 3,\n"
            "  \"a\": 5,\n"
            "  \"a-b\": 4,\n"
            "  \"a.b\": 6,\n"
            "  \"a0\": 7,\n"
            "  \"b\": 8,\n"
            "  \"z\": 9,\n"
            "  \"~\": 10,\n"
            "  \"\\u007f\": 11,\n"
            "  \"\\u00e9\": 12,\n"
            "  \"\\ue000\": 13,\n"
            "  \"\\ud83d\\ude00\": 14\n"
            "}");
}

// Keys of 8 bytes and more, differing early or late within a word.
TEST(EncodePythonJson, LongKeysSortedByCodePoint) {
  const Json value = obj({
      {"model.layers.9.mlp", i64(5)},
      {"aaaaaaba", i64(3)},
      {"model.layers.10.mlp", i64(4)},
      {"aaaaaaa\xC3\xA9", i64(2)},
      {"aaaaaaab", i64(1)},
      {"aaaaaaaz", i64(0)},
  });
  EXPECT_EQ(encode_python_json(value),
            "{\n"
            "  \"aaaaaaab\": 1,\n"
            "  \"aaaaaaaz\": 0,\n"
            "  \"aaaaaaa\\u00e9\": 2,\n"
            "  \"aaaaaaba\": 3,\n"
            "  \"model.layers.10.mlp\": 4,\n"
            "  \"model.layers.9.mlp\": 5\n"
            "}");
}

TEST(EncodePythonJson, KeysSortedAtEveryLevel) {
  const Json value = obj({
      {"b", obj({{"y", i64(1)}, {"x", i64(2)}})},
      {"a", arr({obj({{"d", i64(3)}, {"c", obj({{"f", i64(4)}, {"e", i64(5)}})}})})},
  });
  EXPECT_EQ(encode_python_json(value),
            "{\n"
            "  \"a\": [\n"
            "    {\n"
            "      \"c\": {\n"
            "        \"e\": 5,\n"
            "        \"f\": 4\n"
            "      },\n"
            "      \"d\": 3\n"
            "    }\n"
            "  ],\n"
            "  \"b\": {\n"
            "    \"x\": 2,\n"
            "    \"y\": 1\n"
            "  }\n"
            "}");
}

TEST(EncodePythonJson, KeyStringsAreEscaped) {
  EXPECT_EQ(encode_python_json(obj({{"q\"b\\n\n", i64(1)}})), "{\n  \"q\\\"b\\\\n\\n\": 1\n}");
}

TEST(EncodePythonJson, DuplicateKeysKeepInsertionOrder) {
  EXPECT_EQ(encode_python_json(obj({{"b", i64(0)}, {"a", i64(1)}, {"a", i64(2)}})),
            "{\n  \"a\": 1,\n  \"a\": 2,\n  \"b\": 0\n}");
  EXPECT_EQ(encode_python_json(obj({{"a", i64(1)}, {"a", i64(2)}, {"b", i64(0)}})),
            "{\n  \"a\": 1,\n  \"a\": 2,\n  \"b\": 0\n}");
}

TEST(EncodePythonJson, AppendsToExistingContent) {
  std::string out = "prefix:";
  append_python_json(obj({{"b", i64(1)}, {"a", i64(2)}}), out);
  append_python_json(arr({Json("\xC3\xA9")}), out);
  EXPECT_EQ(out, "prefix:{\n  \"a\": 2,\n  \"b\": 1\n}[\n  \"\\u00e9\"\n]");
}

TEST(EncodePythonJson, DeepNesting) {
  constexpr int kDepth = 1024;
  Json value = arr({});
  for (int i = 1; i < kDepth; ++i) value = arr({std::move(value)});
  std::string expected;
  for (int i = 0; i < kDepth - 1; ++i) expected += std::string(2 * i, ' ') + "[\n";
  expected += std::string(2 * (kDepth - 1), ' ') + "[]";
  for (int i = kDepth - 2; i >= 0; --i) {
    expected += '\n';
    expected.append(2 * static_cast<std::size_t>(i), ' ');
    expected += ']';
  }
  EXPECT_TRUE(same_bytes(encode_python_json(value), expected));

  Json nested = obj({});
  for (int i = 1; i < kDepth; ++i) nested = obj({{"k", std::move(nested)}});
  std::string compact;
  for (int i = 1; i < kDepth; ++i) compact += "{\"k\":";
  compact += "{}";
  compact.append(kDepth - 1, '}');
  EXPECT_TRUE(same_bytes(encode_compact_json(nested), compact));
}

TEST(AppendPythonString, ShortEscapes) {
  EXPECT_EQ(py_string("\"\\\n\r\t\b\f/"), R"("\"\\\n\r\t\b\f/")");
  EXPECT_EQ(py_string(""), R"("")");
}

// The escaper skips plain bytes 16 and 8 at a time and pads the tail: one byte to escape
// at every offset of plain runs of every length up to 48 must come out where it was, with
// the plain bytes on both sides intact.
TEST(AppendPythonString, EscapeAtEveryOffsetOfPlainRuns) {
  struct Case {
    std::string_view raw;
    std::string_view escaped;
  };
  const Case cases[] = {{"\"", "\\\""},          {"\\", "\\\\"},      {"\n", "\\n"},
                        {"\x1f", "\\u001f"},     {"\x7f", "\\u007f"}, {"\x80", "\\ufffd"},
                        {"\xc3\xa9", "\\u00e9"}, {"\x01", "\\u0001"}};
  for (std::size_t length = 0; length <= 48; ++length) {
    for (std::size_t at = 0; at <= length; ++at) {
      for (const Case& c : cases) {
        std::string raw(at, 'a');
        raw += c.raw;
        raw.append(length - at, '~');
        std::string expected = "\"" + std::string(at, 'a');
        expected += c.escaped;
        expected.append(length - at, '~');
        expected += '"';
        EXPECT_EQ(py_string(raw), expected) << "length " << length << ", at " << at;
      }
    }
  }
}

TEST(AppendPythonString, ControlCharacters) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls.push_back(static_cast<char>(c));
  EXPECT_EQ(py_string(controls),
            R"("\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f)"
            R"(\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c)"
            R"(\u001d\u001e\u001f")");
  EXPECT_EQ(py_string("a\0b"s), R"("a\u0000b")");
}

TEST(AppendPythonString, PrintableAsciiUnchanged) {
  std::string printable;
  for (int c = 0x20; c < 0x7F; ++c) {
    if (c != '"' && c != '\\') printable.push_back(static_cast<char>(c));
  }
  EXPECT_EQ(py_string(printable), in_quotes(printable));
  EXPECT_EQ(py_string("a/b</script>&'"), R"("a/b</script>&'")");
}

TEST(AppendPythonString, NonAsciiAsLowercaseEscapes) {
  EXPECT_EQ(py_string("\x7F"), R"("\u007f")");
  EXPECT_EQ(py_string("\xC2\x80"), R"("\u0080")");      // U+0080
  EXPECT_EQ(py_string("\xC3\xBF"), R"("\u00ff")");      // U+00FF
  EXPECT_EQ(py_string("\xDF\xBF"), R"("\u07ff")");      // U+07FF
  EXPECT_EQ(py_string("\xE0\xA0\x80"), R"("\u0800")");  // U+0800
  EXPECT_EQ(py_string("\xE2\x82\xAC"), R"("\u20ac")");  // euro sign
  EXPECT_EQ(py_string("\xEF\xBB\xBF"), R"("\ufeff")");  // U+FEFF
  EXPECT_EQ(py_string("\xEF\xBF\xBD"), R"("\ufffd")");  // U+FFFD
  EXPECT_EQ(py_string("\xEF\xBF\xBF"), R"("\uffff")");  // U+FFFF
  EXPECT_EQ(py_string("\xED\x9F\xBF"), R"("\ud7ff")");  // U+D7FF, last before surrogates
  EXPECT_EQ(py_string("\xEE\x80\x80"), R"("\ue000")");  // U+E000, first after surrogates
  EXPECT_EQ(py_string("caf\xC3\xA9!"), R"("caf\u00e9!")");
}

TEST(AppendPythonString, AstralAsSurrogatePairs) {
  EXPECT_EQ(py_string("\xF0\x90\x80\x80"), R"("\ud800\udc00")");  // U+10000
  EXPECT_EQ(py_string("\xF0\x9F\x98\x80"), R"("\ud83d\ude00")");  // U+1F600
  EXPECT_EQ(py_string("\xF4\x8F\xBF\xBF"), R"("\udbff\udfff")");  // U+10FFFF
  EXPECT_EQ(py_string("x\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBDy"), R"("x\ud83d\udc4d\ud83c\udffdy")");
}

TEST(AppendPythonString, InvalidUtf8BecomesReplacementPerByte) {
  EXPECT_EQ(py_string("\xFF"), R"("\ufffd")");
  EXPECT_EQ(py_string("\x80"), R"("\ufffd")");    // lone continuation
  EXPECT_EQ(py_string("a\xC3"), R"("a\ufffd")");  // truncated at the end
  EXPECT_EQ(py_string("\xE2\x82"
                      "A"),
            R"("\ufffd\ufffdA")");                                  // truncated before ASCII
  EXPECT_EQ(py_string("\xC0\xAF"), R"("\ufffd\ufffd")");            // overlong '/'
  EXPECT_EQ(py_string("\xE0\x9F\xBF"), R"("\ufffd\ufffd\ufffd")");  // overlong U+07FF
  EXPECT_EQ(py_string("\xED\xA0\x80"), R"("\ufffd\ufffd\ufffd")");  // encoded surrogate
  EXPECT_EQ(py_string("\xF4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // > U+10FFFF
  EXPECT_EQ(py_string("\xF8\x88\x80\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd\ufffd")");
}

TEST(AppendPythonString, LongRunsAndAppending) {
  const std::string run(1000, 'a');
  EXPECT_EQ(py_string(run + "\n" + run), in_quotes(run + "\\n" + run));
  std::string out = "x";
  append_python_string(out, "y");
  EXPECT_EQ(out, "x\"y\"");
}

// Long strings are escaped in pieces; sequences and escapes must survive the seams.
TEST(AppendPythonString, LongStringsAcrossChunkSeams) {
  const std::string emoji = "\xF0\x9F\x98\x80";
  std::string text;
  std::string expected;
  for (int i = 0; i < 5000; ++i) {
    text += emoji;
    expected += R"(\ud83d\ude00)";
  }
  for (std::size_t shift = 4088; shift < 4100; ++shift) {
    const std::string mixed = std::string(shift, 'a') + emoji + "\n" + text + "\x7f";
    EXPECT_TRUE(same_bytes(
        py_string(mixed),
        in_quotes(std::string(shift, 'a') + R"(\ud83d\ude00\n)" + expected + R"(\u007f)")))
        << shift;
    // A sequence cut short at the very end still gives one replacement per byte.
    EXPECT_TRUE(same_bytes(py_string(std::string(shift, 'b') + "\xF0\x9F\x98"),
                           in_quotes(std::string(shift, 'b') + R"(\ufffd\ufffd\ufffd)")))
        << shift;
  }
  std::string controls(10000, '\x01');
  std::string escaped_controls;
  for (int i = 0; i < 10000; ++i) escaped_controls += R"(\u0001)";
  EXPECT_TRUE(same_bytes(py_string(controls), in_quotes(escaped_controls)));
}

TEST(AppendPythonFloat, FixedNotation) {
  EXPECT_EQ(py_float(0.0), "0.0");
  EXPECT_EQ(py_float(-0.0), "-0.0");
  EXPECT_EQ(py_float(1.0), "1.0");
  EXPECT_EQ(py_float(-2.5), "-2.5");
  EXPECT_EQ(py_float(100.0), "100.0");
  EXPECT_EQ(py_float(0.1), "0.1");
  EXPECT_EQ(py_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(py_float(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(py_float(0.0001), "0.0001");
  EXPECT_EQ(py_float(0.00012345), "0.00012345");
  EXPECT_EQ(py_float(123456789.123), "123456789.123");
  EXPECT_EQ(py_float(1e15), "1000000000000000.0");
  EXPECT_EQ(py_float(9999999999999998.0), "9999999999999998.0");
  EXPECT_EQ(py_float(1234567890123456.8), "1234567890123456.8");
}

TEST(AppendPythonFloat, ExponentNotation) {
  EXPECT_EQ(py_float(1e-05), "1e-05");
  EXPECT_EQ(py_float(9.999e-05), "9.999e-05");
  EXPECT_EQ(py_float(1e-07), "1e-07");
  EXPECT_EQ(py_float(2.5e-07), "2.5e-07");
  EXPECT_EQ(py_float(-2.5e-07), "-2.5e-07");
  EXPECT_EQ(py_float(1e16), "1e+16");
  EXPECT_EQ(py_float(1.2345678901234568e+17), "1.2345678901234568e+17");
  EXPECT_EQ(py_float(1e22), "1e+22");
  EXPECT_EQ(py_float(1e100), "1e+100");
  EXPECT_EQ(py_float(1e-100), "1e-100");
  EXPECT_EQ(py_float(5e-324), "5e-324");
  EXPECT_EQ(py_float(2.2250738585072014e-308), "2.2250738585072014e-308");
  EXPECT_EQ(py_float(1.7976931348623157e+308), "1.7976931348623157e+308");
  EXPECT_EQ(py_float(-1.7976931348623157e+308), "-1.7976931348623157e+308");
}

TEST(AppendPythonFloat, NonFiniteUsesPythonSpelling) {
  EXPECT_EQ(py_float(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(py_float(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(py_float(-std::numeric_limits<double>::infinity()), "-Infinity");
}

TEST(AppendPythonFloat, AppendsToExistingContent) {
  std::string out = "[";
  append_python_float(out, 1e16);
  EXPECT_EQ(out, "[1e+16");
}

TEST(EncodePythonJson, FloatsInsideTrees) {
  EXPECT_EQ(encode_python_json(obj({{"x", arr({Json(1.0), Json(-0.0), Json(1e-07)})}})),
            "{\n  \"x\": [\n    1.0,\n    -0.0,\n    1e-07\n  ]\n}");
}

// Insertion order, non-ASCII, nested and empty containers: shared by the two unsorted forms.
Json unsorted_sample() {
  return obj({
      {"b", arr({i64(1), u64(2)})},
      {"a", obj({{"x", Json("\xC3\xA9")}, {"w", Json(0.5)}})},
      {"c", arr({})},
      {"d", obj({})},
      {"e", Json()},
  });
}

TEST(EncodeCompactJson, OneLineInsertionOrder) {
  EXPECT_EQ(encode_compact_json(unsorted_sample()),
            R"({"b":[1,2],"a":{"x":"\u00e9","w":0.5},"c":[],"d":{},"e":null})");
}

TEST(EncodeCompactJson, Scalars) {
  EXPECT_EQ(encode_compact_json(Json("a\tb")), R"("a\tb")");
  EXPECT_EQ(encode_compact_json(Json(1e16)), "1e+16");
  EXPECT_EQ(encode_compact_json(Json(true)), "true");
  EXPECT_EQ(encode_compact_json(i64(-7)), "-7");
  EXPECT_EQ(encode_compact_json(obj({})), "{}");
  EXPECT_EQ(encode_compact_json(arr({Json(), arr({})})), "[null,[]]");
}

TEST(EncodePlainJson, PythonLayoutInsertionOrder) {
  EXPECT_EQ(encode_plain_json(unsorted_sample()),
            "{\n"
            "  \"b\": [\n"
            "    1,\n"
            "    2\n"
            "  ],\n"
            "  \"a\": {\n"
            "    \"x\": \"\\u00e9\",\n"
            "    \"w\": 0.5\n"
            "  },\n"
            "  \"c\": [],\n"
            "  \"d\": {},\n"
            "  \"e\": null\n"
            "}");
}

TEST(EncodePlainJson, Scalars) {
  EXPECT_EQ(encode_plain_json(Json(2.0)), "2.0");
  EXPECT_EQ(encode_plain_json(arr({})), "[]");
}

}  // namespace
}  // namespace hpfreeze
