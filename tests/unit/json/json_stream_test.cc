// Exact bytes of the --json stream writer. Expected strings are written by hand from
// Python's json module behaviour (json.dumps with indent=2, or separators=(",", ":")),
// never produced by the writer. The first four tests pin where RapidJSON alone would
// write other bytes.

#include "json/json_stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "json/json.h"

namespace hpfreeze {
namespace {

template <class Write>
std::string written(JsonLayout layout, Write write) {
  std::string out;
  {
    JsonStream w(out, layout);
    write(w);
    EXPECT_TRUE(w.complete());
  }
  return out;
}

std::string one_line(const Json& value) {
  return written(JsonLayout::kOneLine, [&](JsonStream& w) { w.value(value); });
}

std::string indented(const Json& value) {
  return written(JsonLayout::kIndented, [&](JsonStream& w) { w.value(value); });
}

Json obj(std::initializer_list<JsonMember> members) { return Json(JsonObject(members)); }
Json arr(std::initializer_list<Json> elements) { return Json(JsonArray(elements)); }

// RapidJSON's Writer::Double gives "1e-7".
TEST(JsonStream, SmallFloatHasTwoExponentDigits) {
  EXPECT_EQ(one_line(Json(1e-7)), "1e-07");
  EXPECT_EQ(one_line(arr({Json(1e-7), Json(-2.5e-5)})), "[1e-07,-2.5e-05]");
  EXPECT_EQ(indented(obj({{"x", Json(1e-7)}})), "{\n  \"x\": 1e-07\n}");
}

// RapidJSON's Writer::Double gives "10000000000000000.0".
TEST(JsonStream, LargeFloatInExponentForm) {
  EXPECT_EQ(one_line(Json(1e16)), "1e+16");
  EXPECT_EQ(one_line(arr({Json(1e16), Json(9999999999999998.0), Json(0.5), Json(3.0)})),
            "[1e+16,9999999999999998.0,0.5,3.0]");
}

// RapidJSON's ASCII output writes "\u00E9".
TEST(JsonStream, NonAsciiAsLowerCaseEscapes) {
  EXPECT_EQ(one_line(Json("caf\xC3\xA9")), "\"caf\\u00e9\"");
  // A code point above U+FFFF as a surrogate pair; a key the same as a string.
  EXPECT_EQ(one_line(obj({{"\xC3\xA9", Json("\xF0\x9F\x98\x80")}})),
            "{\"\\u00e9\":\"\\ud83d\\ude00\"}");
}

// RapidJSON leaves DEL as it is.
TEST(JsonStream, DelEscaped) {
  EXPECT_EQ(one_line(Json("a\x7F"
                          "b")),
            "\"a\\u007fb\"");
  EXPECT_EQ(one_line(Json("\t\n\"\\/\x01")), "\"\\t\\n\\\"\\\\/\\u0001\"");
}

TEST(JsonStream, NestingOneLine) {
  const Json value = obj({{"b", arr({Json(std::int64_t{1}), obj({}), arr({}), Json()})},
                          {"a", obj({{"c", Json(true)}, {"d", arr({Json(false)})}})},
                          {"b", Json(std::uint64_t{18446744073709551615u})},
                          {"e", Json(std::int64_t{-7})}});
  EXPECT_EQ(one_line(value),
            R"({"b":[1,{},[],null],"a":{"c":true,"d":[false]},"b":18446744073709551615,"e":-7})");
  EXPECT_EQ(one_line(obj({})), "{}");
  EXPECT_EQ(one_line(arr({})), "[]");
}

TEST(JsonStream, NestingIndented) {
  const Json value =
      obj({{"z", arr({Json(std::int64_t{1}), obj({}), arr({}), arr({obj({{"k", Json("v")}})})})},
           {"a", obj({})},
           {"m", arr({})}});
  EXPECT_EQ(indented(value),
            "{\n"
            "  \"z\": [\n"
            "    1,\n"
            "    {},\n"
            "    [],\n"
            "    [\n"
            "      {\n"
            "        \"k\": \"v\"\n"
            "      }\n"
            "    ]\n"
            "  ],\n"
            "  \"a\": {},\n"
            "  \"m\": []\n"
            "}");
  EXPECT_EQ(indented(arr({})), "[]");
  EXPECT_EQ(indented(Json("x")), "\"x\"");
}

TEST(JsonStream, MembersWrittenByCalls) {
  const std::vector<std::uint64_t> shape{4, 8};
  const std::string out = written(JsonLayout::kIndented, [&](JsonStream& w) {
    w.start_object();
    w.key("fqn").string("m.w");
    w.key("shape").numbers(shape);
    w.key("empty").numbers({});
    w.key("dtype").optional_string(std::nullopt);
    w.key("name").optional_string("bf16");
    w.key("size").number(2);
    w.key("budget").optional_number(std::nullopt);
    w.key("bytes").optional_number(7);
    w.key("fits").optional_boolean(std::nullopt);
    w.key("divisible").optional_boolean(false);
    w.key("axes").start_object().key("tp").start_array().integer(-1);
    w.end_array();
    w.end_object();
    w.end_object();
  });
  EXPECT_EQ(out,
            "{\n"
            "  \"fqn\": \"m.w\",\n"
            "  \"shape\": [\n"
            "    4,\n"
            "    8\n"
            "  ],\n"
            "  \"empty\": [],\n"
            "  \"dtype\": null,\n"
            "  \"name\": \"bf16\",\n"
            "  \"size\": 2,\n"
            "  \"budget\": null,\n"
            "  \"bytes\": 7,\n"
            "  \"fits\": null,\n"
            "  \"divisible\": false,\n"
            "  \"axes\": {\n"
            "    \"tp\": [\n"
            "      -1\n"
            "    ]\n"
            "  }\n"
            "}");
}

TEST(JsonStream, CompleteOnlyWhenEveryContainerIsClosed) {
  std::string out;
  JsonStream w(out, JsonLayout::kOneLine);
  EXPECT_FALSE(w.complete());
  w.start_object().key("a").start_array();
  EXPECT_FALSE(w.complete());
  w.end_array();
  EXPECT_FALSE(w.complete());
  w.end_object();
  EXPECT_TRUE(w.complete());
}

TEST(JsonStream, JsonLinesAppendToTheOutput) {
  std::string out = "head\n";
  {
    JsonStream w(out, JsonLayout::kOneLine);
    w.start_object().key("op").string("add");
    w.end_object();
    w.end_line();
    EXPECT_FALSE(w.complete());
    w.value(arr({Json(1.5)}));
    w.end_line();
  }
  EXPECT_EQ(out, "head\n{\"op\":\"add\"}\n[1.5]\n");
}

// After end_line() the string is whole and the stream no longer touches it: it may be
// taken while the stream lives (render_report_json returns it so).
TEST(JsonStream, LeavesTheStringAloneAfterEndLine) {
  std::string out;
  std::string taken;
  {
    JsonStream w(out, JsonLayout::kIndented);
    w.start_object().key("a").number(1);
    w.end_object();
    w.end_line();
    taken = std::move(out);
    out = "x";
  }
  EXPECT_EQ(taken, "{\n  \"a\": 1\n}\n");
  EXPECT_EQ(out, "x");
}

// A long string with escapes spread over it: the raw value is copied whole.
TEST(JsonStream, LongStringWholeAndEscaped) {
  std::string text;
  std::string expected = "\"";
  for (int i = 0; i < 5000; ++i) {
    text += "ab\x7F";
    expected += "ab\\u007f";
  }
  expected += '"';
  const std::string out = one_line(Json(std::string_view(text)));
  EXPECT_TRUE(out == expected) << "sizes " << out.size() << " vs " << expected.size();
}

}  // namespace
}  // namespace hpfreeze
