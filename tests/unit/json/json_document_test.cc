#include "json/json_document.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace hpfreeze {
namespace {

// "LINE:COL message" (or "POINTER message"), so one EXPECT_EQ checks position and text.
std::string error_of(std::string text) {
  auto result = parse_json_document("in.json", std::move(text));
  if (result.ok()) return "accepted";
  EXPECT_EQ(result.errors().size(), 1u);
  const Diagnostic& d = result.errors().front();
  EXPECT_EQ(d.file, "in.json");
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.error_class, ErrorClass::kRejected);
  if (!d.pointer.empty()) {
    EXPECT_EQ(d.line, 0u);
    return d.pointer + " " + d.message;
  }
  return std::to_string(d.line) + ":" + std::to_string(d.column) + " " + d.message;
}

Json parsed(std::string text) {
  auto result = parse_json_document("in.json", std::move(text));
  EXPECT_TRUE(result.ok()) << result.errors().front().message;
  // The Json holds views into the document: keep every document until the tests end.
  static std::vector<JsonDocument> keep_alive;
  keep_alive.push_back(std::move(*result));
  return json_from_dom(keep_alive.back().root());
}

// Concatenation without `"literal" + std::string(...)`, which trips a false -Wrestrict
// in GCC 12.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (const std::string_view part : parts) out.append(part);
  return out;
}

std::string nested_arrays(std::size_t depth) {
  return cat({std::string(depth, '['), std::string(depth, ']')});
}

TEST(LineColumn, CountsBytesFromTheLastNewline) {
  EXPECT_EQ(line_column("", 0), std::make_pair(std::size_t{1}, std::size_t{1}));
  EXPECT_EQ(line_column("ab\ncd", 4), std::make_pair(std::size_t{2}, std::size_t{2}));
  EXPECT_EQ(line_column("ab\ncd", 2), std::make_pair(std::size_t{1}, std::size_t{3}));
  EXPECT_EQ(line_column("ab\ncd", 3), std::make_pair(std::size_t{2}, std::size_t{1}));
  EXPECT_EQ(line_column("a\r\nb", 3), std::make_pair(std::size_t{2}, std::size_t{1}));
  EXPECT_EQ(line_column("a\r\nb", 1), std::make_pair(std::size_t{1}, std::size_t{2}));
  EXPECT_EQ(line_column("\n\n\xc3\xa9x", 4), std::make_pair(std::size_t{3}, std::size_t{3}));
  EXPECT_EQ(line_column("ab", 99), std::make_pair(std::size_t{1}, std::size_t{3}));
}

TEST(ParseJsonDocument, KeepsNameAndBytes) {
  auto result = parse_json_document("plan.json", R"({"a": [1, "x"]})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->name(), "plan.json");
  EXPECT_EQ(result->bytes(), R"({"a": [1, "x"]})");
  EXPECT_EQ(json_type_name(result->root()), "object");
}

// As the file reader hands them over: with SIMDJSON_PADDING spare capacity.
std::string padded(std::string_view text, const char** data) {
  std::string bytes;
  bytes.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  bytes.append(text);
  *data = bytes.data();
  return bytes;
}

TEST(ParseJsonDocument, AcceptsInputThatAlreadyHasPadding) {
  const char* data = nullptr;
  auto result = parse_json_document("x", padded("[true, false, null]", &data));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->bytes().data(), data);  // no copy was made
  EXPECT_EQ(result->bytes(), "[true, false, null]");
}

TEST(ParseJsonDocument, ViewsSurviveMovingTheDocument) {
  auto result = parse_json_document("x", R"({"key": "value"})");
  ASSERT_TRUE(result.ok());
  const Json json = json_from_dom(result->root());
  JsonDocument moved = std::move(*result);
  JsonDocument moved_again(std::move(moved));
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json.as_object().at(0).key, "key");
  EXPECT_EQ(json.as_object().at(0).value.as_string(), "value");
  EXPECT_EQ(json_from_dom(moved_again.root()), json);
}

TEST(ParseJsonDocument, RejectsByteOrderMark) {
  EXPECT_EQ(error_of("\xEF\xBB\xBF{}"), "1:1 byte-order mark is not allowed");
  EXPECT_EQ(error_of("\xEF\xBB\xBF"), "1:1 byte-order mark is not allowed");
  EXPECT_EQ(error_of(" \xEF\xBB\xBF{}"), "1:2 expected a value");
}

TEST(ParseJsonDocument, RejectsEmptyInput) {
  EXPECT_EQ(error_of(""), "1:1 empty input");
  EXPECT_EQ(error_of("   "), "1:4 empty input");
  EXPECT_EQ(error_of(" \n\t "), "2:3 empty input");
  EXPECT_EQ(error_of("\r\n\r\n"), "3:1 empty input");
}

TEST(ParseJsonDocument, ReportsTruncatedInputAtTheEnd) {
  EXPECT_EQ(error_of("[1,"), "1:4 unexpected end of input");
  EXPECT_EQ(error_of("["), "1:2 unexpected end of input");
  EXPECT_EQ(error_of("{"), "1:2 unexpected end of input");
  EXPECT_EQ(error_of("{\"a\""), "1:5 unexpected end of input");
  EXPECT_EQ(error_of("{\"a\":"), "1:6 unexpected end of input");
  EXPECT_EQ(error_of("{\"a\":1,"), "1:8 unexpected end of input");
  EXPECT_EQ(error_of("{\"a\":1"), "1:7 unexpected end of input");
  EXPECT_EQ(error_of("\"abc"), "1:5 unexpected end of input");
  EXPECT_EQ(error_of("\"ab\\"), "1:5 unexpected end of input");
  EXPECT_EQ(error_of("\"\\u12"), "1:6 unexpected end of input");
  EXPECT_EQ(error_of("\"\xc3"), "1:3 unexpected end of input");
  EXPECT_EQ(error_of("[12"), "1:4 unexpected end of input");
  EXPECT_EQ(error_of("-"), "1:2 unexpected end of input");
  EXPECT_EQ(error_of("1."), "1:3 unexpected end of input");
  EXPECT_EQ(error_of("1e"), "1:3 unexpected end of input");
  EXPECT_EQ(error_of("1e-"), "1:4 unexpected end of input");
  EXPECT_EQ(error_of("tru"), "1:4 unexpected end of input");
  EXPECT_EQ(error_of("[fals"), "1:6 unexpected end of input");
  EXPECT_EQ(error_of("[\n1,\n"), "3:1 unexpected end of input");
  EXPECT_EQ(error_of("{\"a\": [\r\n  {\"b\": nul"), "2:12 unexpected end of input");
}

TEST(ParseJsonDocument, ReportsStructuralErrors) {
  EXPECT_EQ(error_of("{\"a\" 1}"), "1:6 expected ':' after object key");
  EXPECT_EQ(error_of("{\"a\":1 \"b\":2}"), "1:8 expected ',' or '}' after object member");
  EXPECT_EQ(error_of("{\"a\":1]"), "1:7 expected ',' or '}' after object member");
  EXPECT_EQ(error_of("[1 2]"), "1:4 expected ',' or ']' after array element");
  EXPECT_EQ(error_of("[1,2}"), "1:5 expected ',' or ']' after array element");
  EXPECT_EQ(error_of("[1,]"), "1:4 expected a value");
  EXPECT_EQ(error_of("{\"a\":}"), "1:6 expected a value");
  EXPECT_EQ(error_of("[#]"), "1:2 expected a value");
  EXPECT_EQ(error_of("{,}"), "1:2 expected a string key or '}'");
  EXPECT_EQ(error_of("{1:2}"), "1:2 expected a string key or '}'");
  EXPECT_EQ(error_of("{\"a\":1,}"), "1:8 expected a string key");
  EXPECT_EQ(error_of("{'a':1}"), "1:2 expected a string key or '}'");
}

TEST(ParseJsonDocument, ReportsPositionsOnLaterLines) {
  EXPECT_EQ(error_of("{\n  \"a\": 1,\n  \"b\" 2\n}"), "3:7 expected ':' after object key");
  EXPECT_EQ(error_of("{\r\n  \"a\": tru\r\n}"), "2:11 invalid literal");
  EXPECT_EQ(error_of("[\r\n1,\r\n2\r\n3]"), "4:1 expected ',' or ']' after array element");
  EXPECT_EQ(error_of("{\"\xc3\xa9\": 1,\n\"x\": [1,\n2,,]}"), "3:3 expected a value");
}

TEST(ParseJsonDocument, RejectsTrailingContent) {
  EXPECT_EQ(error_of("{} x"), "1:4 trailing content after the JSON document");
  EXPECT_EQ(error_of("[1]]"), "1:4 trailing content after the JSON document");
  EXPECT_EQ(error_of("1 2"), "1:3 trailing content after the JSON document");
  EXPECT_EQ(error_of("{}\n\n  {}\n"), "3:3 trailing content after the JSON document");
  EXPECT_EQ(error_of(std::string("1\0", 2)), "1:2 trailing content after the JSON document");
  EXPECT_EQ(error_of("\"a\"\xff"), "1:4 trailing content after the JSON document");
  EXPECT_EQ(error_of("true false"), "1:6 trailing content after the JSON document");
  EXPECT_TRUE(parse_json_document("x", " {} \r\n\t ").ok());
}

TEST(ParseJsonDocument, RejectsInvalidLiterals) {
  EXPECT_EQ(error_of("NaN"), "1:1 invalid literal");
  EXPECT_EQ(error_of("[1, NaN]"), "1:5 invalid literal");
  EXPECT_EQ(error_of("Infinity"), "1:1 invalid literal");
  EXPECT_EQ(error_of("{\"a\": Infinity}"), "1:7 invalid literal");
  EXPECT_EQ(error_of("[-Infinity]"), "1:3 invalid number");
  EXPECT_EQ(error_of("[tru]"), "1:5 invalid literal");
  EXPECT_EQ(error_of("[trUe]"), "1:4 invalid literal");
  EXPECT_EQ(error_of("True"), "1:1 invalid literal");
  EXPECT_EQ(error_of("[nulll]"), "1:6 expected ',' or ']' after array element");
  EXPECT_EQ(error_of("falsey"), "1:6 trailing content after the JSON document");
}

TEST(ParseJsonDocument, RejectsMalformedNumbers) {
  EXPECT_EQ(error_of("01"), "1:2 invalid number");
  EXPECT_EQ(error_of("[-01]"), "1:4 invalid number");
  EXPECT_EQ(error_of("[-]"), "1:3 invalid number");
  EXPECT_EQ(error_of("[1.e5]"), "1:4 invalid number");
  EXPECT_EQ(error_of("[1.]"), "1:4 invalid number");
  EXPECT_EQ(error_of("[1e+]"), "1:5 invalid number");
  EXPECT_EQ(error_of("[.5]"), "1:2 expected a value");
  EXPECT_EQ(error_of("[+1]"), "1:2 expected a value");
  EXPECT_EQ(error_of("[1x]"), "1:3 expected ',' or ']' after array element");
  EXPECT_EQ(error_of("[0x10]"), "1:3 expected ',' or ']' after array element");
}

TEST(ParseJsonDocument, ChecksIntegerRange) {
  constexpr std::string_view kMessage = "integer out of range [-2^63, 2^64-1]";
  EXPECT_EQ(error_of("[18446744073709551616]"), cat({"1:2 ", kMessage}));
  EXPECT_EQ(error_of("18446744073709551616"), cat({"1:1 ", kMessage}));
  EXPECT_EQ(error_of("{\"a\": -9223372036854775809}"), cat({"1:7 ", kMessage}));
  EXPECT_EQ(error_of("[1,\n  100000000000000000000]"), cat({"2:3 ", kMessage}));
  EXPECT_EQ(error_of(std::string(100000, '9')), cat({"1:1 ", kMessage}));
  EXPECT_EQ(error_of(cat({"[-", std::string(100000, '1'), "]"})), cat({"1:2 ", kMessage}));

  const Json limits = parsed(
      "[-9223372036854775808, 9223372036854775807, 9223372036854775808, "
      "18446744073709551615, 0]");
  const JsonArray& a = limits.as_array();
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0], Json(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(a[1], Json(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(a[2], Json(std::uint64_t{9223372036854775808u}));
  EXPECT_EQ(a[3], Json(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_EQ(a[4], Json(std::int64_t{0}));
}

TEST(ParseJsonDocument, ChecksFloatRange) {
  EXPECT_EQ(error_of("1e400"), "1:1 number out of range");
  EXPECT_EQ(error_of("[1, -1e400]"), "1:5 number out of range");
  EXPECT_EQ(error_of("[1.7976931348623159e308]"), "1:2 number out of range");
  EXPECT_EQ(error_of(cat({"[", std::string(400, '9'), ".5]"})), "1:2 number out of range");
  EXPECT_EQ(error_of("[0.001e99999999999999999999]"), "1:2 number out of range");

  const Json ok = parsed("[1.7976931348623157e308, 1e-400, 0e999999, 0.0001e-310]");
  const JsonArray& a = ok.as_array();
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0], Json(std::numeric_limits<double>::max()));
  EXPECT_EQ(a[1], Json(0.0));
  EXPECT_EQ(a[2], Json(0.0));
  EXPECT_EQ(a[3], Json(1e-314));
}

TEST(ParseJsonDocument, RejectsInvalidUtf8) {
  EXPECT_EQ(error_of("\"\xff\""), "1:2 invalid UTF-8 byte 0xff");
  EXPECT_EQ(error_of("[\"ok\", \"a\xc0\x80\"]"), "1:10 invalid UTF-8 byte 0xc0");
  EXPECT_EQ(error_of("\"\xe2\x82\""),
            "1:4 invalid UTF-8 byte 0x22: the multi-byte sequence started by 0xe2 is cut short");
  EXPECT_EQ(error_of("\"\xed\xa0\x80\""), "1:3 invalid UTF-8 byte 0xa0");      // UTF-16 surrogate
  EXPECT_EQ(error_of("\"\xe0\x9f\xbf\""), "1:3 invalid UTF-8 byte 0x9f");      // overlong
  EXPECT_EQ(error_of("\"\xf4\x90\x80\x80\""), "1:3 invalid UTF-8 byte 0x90");  // > U+10FFFF
  EXPECT_EQ(error_of("{\"k\xf0\x9f\x98\": 1}"),
            "1:7 invalid UTF-8 byte 0x22: the multi-byte sequence started by 0xf0 is cut short");
  EXPECT_EQ(error_of("\"\x80\""), "1:2 invalid UTF-8 byte 0x80");

  const Json ok = parsed("[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\x7f\"]");
  EXPECT_EQ(ok.as_array().at(0).as_string(),
            "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\x7f");
}

TEST(ParseJsonDocument, RejectsControlCharactersInStrings) {
  EXPECT_EQ(error_of("\"a\nb\""), "1:3 unescaped control character 0x0a in string");
  EXPECT_EQ(error_of("{\"k\": \"\tx\"}"), "1:8 unescaped control character 0x09 in string");
  EXPECT_EQ(error_of(std::string("[\"\0\"]", 5)), "1:3 unescaped control character 0x00 in string");
  EXPECT_EQ(error_of("{\"a\x1f\": 1}"), "1:4 unescaped control character 0x1f in string");
}

TEST(ParseJsonDocument, RejectsInvalidEscapes) {
  EXPECT_EQ(error_of("\"\\x\""), "1:3 invalid escape");
  EXPECT_EQ(error_of("[\"a\\'\"]"), "1:5 invalid escape");
  EXPECT_EQ(error_of("\"\\u12g4\""), "1:6 invalid escape");
  EXPECT_EQ(error_of("\"\\U0041\""), "1:3 invalid escape");
  EXPECT_EQ(error_of("\"\\ud83d\\udeZZ\""), "1:12 invalid escape");

  const Json ok = parsed(R"(["\"\\\/\b\f\n\r\t\u0041\u00e9\u0000"])");
  EXPECT_EQ(ok.as_array().at(0).as_string(), std::string_view("\"\\/\b\f\n\r\tA\xc3\xa9\0", 12));
}

TEST(ParseJsonDocument, RejectsLoneSurrogateEscapes) {
  EXPECT_EQ(error_of(R"("\ud800")"), R"(1:2 lone surrogate escape \ud800)");
  EXPECT_EQ(error_of(R"(["ab\udc00"])"), R"(1:5 lone surrogate escape \udc00)");
  EXPECT_EQ(error_of(R"({"k": "\uDBFFx"})"), R"(1:8 lone surrogate escape \uDBFF)");
  EXPECT_EQ(error_of(R"("\ud800\u0041")"), R"(1:2 lone surrogate escape \ud800)");
  EXPECT_EQ(error_of(R"("\ud800\ud800")"), R"(1:2 lone surrogate escape \ud800)");
  EXPECT_EQ(error_of(R"("\ud800\n")"), R"(1:2 lone surrogate escape \ud800)");
  EXPECT_EQ(error_of(R"("x\ud83d\ude00\ude00")"), R"(1:15 lone surrogate escape \ude00)");
  EXPECT_EQ(error_of(R"("\ud800)"), "1:8 unexpected end of input");

  const Json ok = parsed(R"(["\ud83d\ude00", "\uD83D\uDE00", "\udbff\udfff"])");
  const JsonArray& a = ok.as_array();
  EXPECT_EQ(a.at(0).as_string(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(a.at(1).as_string(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(a.at(2).as_string(), "\xf4\x8f\xbf\xbf");
}

TEST(ParseJsonDocument, LimitsNesting) {
  EXPECT_TRUE(parse_json_document("x", nested_arrays(kMaxJsonDepth)).ok());
  EXPECT_EQ(error_of(nested_arrays(1025)), "1:1025 nesting deeper than 1024 levels");
  EXPECT_EQ(error_of(std::string(100000, '[')), "1:1025 nesting deeper than 1024 levels");
  EXPECT_EQ(error_of(nested_arrays(100000)), "1:1025 nesting deeper than 1024 levels");

  std::string objects;
  for (int i = 0; i < 1025; ++i) objects += "{\"a\":";
  objects += "1";
  objects += std::string(1025, '}');
  EXPECT_EQ(error_of(objects), "1:5121 nesting deeper than 1024 levels");
  objects.erase(0, 5);
  objects.pop_back();
  EXPECT_TRUE(parse_json_document("x", objects).ok());

  // simdjson counts a scalar in the innermost container as a level; we count containers.
  EXPECT_TRUE(
      parse_json_document("x", cat({std::string(1024, '['), "1", std::string(1024, ']')})).ok());
  std::string deep_empty_object;
  for (int i = 0; i < 1024; ++i) deep_empty_object += "{\"a\":";
  deep_empty_object += "{}";
  deep_empty_object += std::string(1024, '}');
  EXPECT_EQ(error_of(deep_empty_object), "1:5121 nesting deeper than 1024 levels");
  // Duplicate keys and this depth check run on the parsed DOM, in document order.
  EXPECT_EQ(error_of(cat({"[{\"a\":1,\"a\":2},", nested_arrays(1024), "]"})),
            "/0/a duplicate key 'a'");
  EXPECT_EQ(error_of(cat({"[", nested_arrays(1024), ",{\"a\":1,\"a\":2}]"})),
            "1:1025 nesting deeper than 1024 levels");
}

TEST(DuplicateKeys, ReportsThePointerOfTheSecondOccurrence) {
  EXPECT_EQ(error_of(R"({"lin":1,"lin":2})"), "/lin duplicate key 'lin'");
  EXPECT_EQ(error_of(R"({"":1,"":2})"), "/ duplicate key ''");
  EXPECT_EQ(error_of(R"({"b":1,"a":1,"a":2,"b":2})"), "/a duplicate key 'a'");
  EXPECT_EQ(error_of(R"([{"a":1},{"a":1,"a":2}])"), "/1/a duplicate key 'a'");
  EXPECT_EQ(error_of(R"({"x":[0,{"a/b":{"m~n":1,"m~n":2}}]})"),
            "/x/1/a~1b/m~0n duplicate key 'm~n'");
  EXPECT_EQ(error_of("{\"\xc3\xa9\":{\"\\u00e9\":1,\"\xc3\xa9\":2}}"),
            "/\xc3\xa9/\xc3\xa9 duplicate key '\\xc3\\xa9'");
  EXPECT_EQ(error_of(R"({"it's":1,"it's":2})"), "/it's duplicate key 'it\\'s'");
}

TEST(DuplicateKeys, ReportsTheFirstInDocumentOrder) {
  EXPECT_EQ(error_of(R"({"a":{"b":1,"b":2},"a":3})"), "/a/b duplicate key 'b'");
  EXPECT_EQ(error_of(R"({"a":1,"a":{"b":1,"b":2}})"), "/a duplicate key 'a'");
  EXPECT_EQ(error_of(R"({"a":1,"a":2,"a":3})"), "/a duplicate key 'a'");
  EXPECT_EQ(error_of(R"([[{"p":{}}],{"q":[],"r":0,"q":{"s":1,"s":1}}])"), "/1/q duplicate key 'q'");
}

TEST(DuplicateKeys, DistinguishesKeysThatOnlyLookAlike) {
  const Json ok =
      parsed(R"({"a\u0000b":1,"a\u0000c":2,"a":3,"A":4,"a ":5,"\u00e9":6,"e\u0301":7})");
  EXPECT_EQ(ok.as_object().size(), 7u);
  EXPECT_TRUE(parse_json_document("x", R"([{"a":1},{"a":1},{"b":{"a":1}}])").ok());
}

std::string many_keys(int count, const std::string& tail) {
  std::string text = "{";
  for (int i = 0; i < count; ++i) {
    text += cat({"\"k", std::to_string(i), "\":", std::to_string(i), ","});
  }
  text += tail;
  text += "}";
  return text;
}

TEST(DuplicateKeys, HandlesLargeObjects) {
  EXPECT_TRUE(parse_json_document("x", many_keys(200000, R"("last":0)")).ok());
  EXPECT_EQ(error_of(many_keys(200000, R"("k199999":0)")), "/k199999 duplicate key 'k199999'");
  EXPECT_EQ(error_of(many_keys(200000, R"("k5":0,"k3":0)")), "/k5 duplicate key 'k5'");
  EXPECT_EQ(error_of(cat({"[0,{\"big\":", many_keys(200000, R"("k0":{"k0":1,"k0":2})"), "}]"})),
            "/1/big/k0 duplicate key 'k0'");
  EXPECT_EQ(
      error_of(cat({"{\"a\":", many_keys(20, cat({"\"x\":", many_keys(30, "\"k29\":1")})), "}"})),
      "/a/x/k29 duplicate key 'k29'");
  // Just above the pairwise limit.
  EXPECT_EQ(error_of(many_keys(17, R"("k16":0)")), "/k16 duplicate key 'k16'");
  EXPECT_TRUE(parse_json_document("x", many_keys(17, R"("k17":0)")).ok());
}

TEST(JsonFromDom, KeepsPythonsIntFloatSplit) {
  const Json j = parsed("[-0, -0.0, 1e2, 1.0, 1, 1E-2, 2.5e+3]");
  const JsonArray& a = j.as_array();
  ASSERT_EQ(a.size(), 7u);
  ASSERT_TRUE(std::holds_alternative<std::int64_t>(a[0].v));
  EXPECT_EQ(std::get<std::int64_t>(a[0].v), 0);
  ASSERT_TRUE(std::holds_alternative<double>(a[1].v));
  EXPECT_TRUE(std::signbit(std::get<double>(a[1].v)));
  EXPECT_EQ(std::get<double>(a[1].v), 0.0);
  ASSERT_TRUE(std::holds_alternative<double>(a[2].v));
  EXPECT_EQ(std::get<double>(a[2].v), 100.0);
  ASSERT_TRUE(std::holds_alternative<double>(a[3].v));
  EXPECT_EQ(a[4], Json(std::int64_t{1}));
  EXPECT_EQ(a[5], Json(0.01));
  EXPECT_EQ(a[6], Json(2500.0));
}

TEST(JsonFromDom, BuildsObjectsInInsertionOrder) {
  const Json j = parsed(
      "{\"z\": null, \"\xc3\xa9\": \"\xc3\xbc\", \"\xe6\x97\xa5\xe6\x9c\xac\": [true, false], "
      "\"a\": {}, \"b\": []}");
  const JsonObject expected{
      {"z", Json(nullptr)},
      {"\xc3\xa9", Json("\xc3\xbc")},
      {"\xe6\x97\xa5\xe6\x9c\xac", Json(JsonArray{Json(true), Json(false)})},
      {"a", Json(JsonObject{})},
      {"b", Json(JsonArray{})},
  };
  EXPECT_EQ(j, Json(expected));
}

TEST(JsonFromDom, StringsAreViewsIntoTheDocument) {
  auto result = parse_json_document("x", R"({"key": ["value"]})");
  ASSERT_TRUE(result.ok());
  const Json j = json_from_dom(result->root());
  const std::string_view key = j.as_object().at(0).key;
  const std::string_view value = j.as_object().at(0).value.as_array().at(0).as_string();
  std::string_view from_dom;
  ASSERT_EQ(result->root()["key"].at(0).get(from_dom), simdjson::SUCCESS);
  EXPECT_EQ(value.data(), from_dom.data());
  EXPECT_EQ(key, "key");
}

TEST(JsonTypeName, NamesEveryType) {
  auto result = parse_json_document(
      "x", R"([{}, [], "s", 1, -1, 18446744073709551615, 1.5, 1e2, true, false, null])");
  ASSERT_TRUE(result.ok());
  simdjson::dom::array array;
  ASSERT_EQ(result->root().get_array().get(array), simdjson::SUCCESS);
  std::vector<std::string> names;
  for (const simdjson::dom::element e : array) names.push_back(json_type_name(e));
  EXPECT_EQ(names,
            (std::vector<std::string>{"object", "array", "string", "integer", "integer", "integer",
                                      "float", "float", "boolean", "boolean", "null"}));
}

// Bytes of address space the process has mapped now (first field of /proc/self/statm).
std::size_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// What parse_json_document says about a valid 32 MB document when the address space allows
// only `spare` more bytes: run in a child, so the limit cannot hurt the other tests. The
// child exits 0 for an out-of-memory I/O error, 1 for any other error, 2 for success.
[[maybe_unused]] int parse_with_spare_address_space(std::size_t spare, bool padded) {
  std::string text = "[";
  while (text.size() < (std::size_t{32} << 20)) text += "0,";
  text += "0]";
  if (padded) {
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  } else {
    text.shrink_to_fit();
  }
  const std::string expected =
      "out of memory while parsing (" + std::to_string(text.size()) + " bytes)";
  const pid_t child = fork();
  if (child == 0) {
    const rlimit limit{mapped_bytes() + spare, RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    Expected<JsonDocument> result = parse_json_document("big.json", std::move(text));
    if (result) _exit(2);
    const Diagnostic& d = result.errors().front();
    _exit(d.error_class == ErrorClass::kIo && d.message == expected && d.file == "big.json" ? 0
                                                                                            : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A failed allocation says nothing about the input: it is an I/O-class error (exit 2),
// never a rejection, whether simdjson reports it (MEMALLOC) or std::bad_alloc is thrown.
TEST(ParseJsonDocument, OutOfMemoryIsAnIoError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "address-space limits and AddressSanitizer's shadow memory do not mix";
#else
  // Padded: the first allocation to fail is simdjson's (its parser buffers).
  EXPECT_EQ(parse_with_spare_address_space(std::size_t{8} << 20, true), 0);
  // Unpadded: adding the padding already needs a second 32 MB buffer (std::bad_alloc).
  EXPECT_EQ(parse_with_spare_address_space(std::size_t{8} << 20, false), 0);
#endif
}

// Without the duplicate-key check (for a decoder that makes it), repeated keys pass the
// parse and find_duplicate_key() reports them as the parse would; the rest is still checked.
TEST(ParseJsonDocument, DuplicateKeysLeftToTheCaller) {
  ParseOptions unchecked;
  unchecked.check_duplicate_keys = false;
  const std::string text = R"j({"a": {"b": 1, "c": [{"d": 1, "d": 2}]}, "a": 3})j";
  Expected<JsonDocument> doc = parse_json_document("in.json", text, unchecked);
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE(doc->keys_checked());
  std::optional<Diagnostic> repeated = find_duplicate_key(*doc);
  ASSERT_TRUE(repeated.has_value());
  EXPECT_EQ(repeated->location_and_message(), "in.json: /a/c/0/d: duplicate key 'd'");
  EXPECT_EQ(error_of(text), "/a/c/0/d duplicate key 'd'");

  Expected<JsonDocument> clean = parse_json_document("in.json", R"({"a": {"a": 1}})", unchecked);
  ASSERT_TRUE(clean.ok());
  EXPECT_FALSE(find_duplicate_key(*clean).has_value());
  Expected<JsonDocument> checked = parse_json_document("in.json", R"({"a": 1})");
  ASSERT_TRUE(checked.ok());
  EXPECT_TRUE(checked->keys_checked());

  // The depth limit holds either way: 1024 levels pass, an empty container below them not.
  auto nested = [](std::size_t depth, const std::string& inner) {
    return std::string(depth, '[') + inner + std::string(depth, ']');
  };
  for (const std::string& inner : {std::string("0"), std::string("{}"), std::string("1.5")}) {
    EXPECT_TRUE(parse_json_document("in.json", nested(1023, inner), unchecked).ok()) << inner;
  }
  EXPECT_TRUE(parse_json_document("in.json", nested(1024, ""), unchecked).ok());
  Expected<JsonDocument> deep = parse_json_document("in.json", nested(1024, "{}"), unchecked);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.errors().front().location_and_message(),
            "in.json:1:1025: nesting deeper than 1024 levels");
  EXPECT_EQ(error_of(nested(1024, "{}")), "1:1025 nesting deeper than 1024 levels");
}

// release_tree() frees the structure and keeps the strings that views point into.
TEST(ParseJsonDocument, ReleasedTreeKeepsItsStrings) {
  ParseOptions unchecked;
  unchecked.check_duplicate_keys = false;
  Expected<JsonDocument> doc =
      parse_json_document("in.json", R"j({"name": "a long enough string", "k": [1]})j", unchecked);
  ASSERT_TRUE(doc.ok());
  std::string_view key;
  std::string_view value;
  for (auto it = doc->root().get_object().value().begin();
       it != doc->root().get_object().value().end(); ++it) {
    key = it.key();
    if (!it.value().get_string().get(value)) break;
  }
  const Json copied = json_from_dom(doc->root());
  EXPECT_FALSE(doc->tree_released());
  doc->release_tree();
  EXPECT_TRUE(doc->tree_released());
  EXPECT_TRUE(doc->keys_checked());
  EXPECT_EQ(key, "name");
  EXPECT_EQ(value, "a long enough string");
  EXPECT_EQ(copied.find("name")->as_string(), "a long enough string");
  JsonDocument moved = std::move(*doc);
  EXPECT_EQ(value, "a long enough string");
}

// A document of about `bytes` bytes: an object of string members, each distinct.
std::string big_document(std::size_t bytes, std::string_view tag) {
  std::string text = "{";
  for (std::size_t i = 0; text.size() < bytes; ++i) {
    if (i > 0) text += ',';
    text += "\"" + std::string(tag) + std::to_string(i) + "\": [\"value " + std::to_string(i) +
            "\", " + std::to_string(i) + ", 1.5, null, true]";
  }
  return text + "}";
}

// One ParseScratch through several parses: each document is what a parse without it
// gives, and the strings of a document whose tree and text went to the scratch stay valid
// while the next parses reuse that memory.
TEST(ParseScratch, LaterParsesReuseMemoryAndEarlierStringsSurvive) {
  const std::string first = big_document(std::size_t{5} << 20, "a");   // huge-page path
  const std::string second = big_document(std::size_t{6} << 20, "b");  // larger: the hint
  const std::string third = big_document(std::size_t{9} << 20, "c");   // beyond the hint
  const std::string small = R"({"x": ["y", 2]})";
  ParseScratch scratch;
  scratch.expect_input(second.size());
  ParseOptions options;
  options.check_duplicate_keys = false;
  options.scratch = &scratch;

  Expected<JsonDocument> a = parse_json_document("a.json", first, options);
  ASSERT_TRUE(a.ok());
  const Json a_json = json_from_dom(a->root());
  a->release_bytes(scratch);
  a->release_tree(scratch);
  std::string buffer = scratch.take_text();
  EXPECT_GE(buffer.capacity(), first.size());  // the released text came back
  buffer.assign(second);
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"b.json", std::move(buffer)},
                                   {"c.json", third},
                                   {"s.json", small}}) {
    Expected<JsonDocument> plain = parse_json_document(name, text);
    Expected<JsonDocument> reused = parse_json_document(name, text, options);
    ASSERT_TRUE(plain.ok() && reused.ok()) << name;
    EXPECT_EQ(json_from_dom(reused->root()), json_from_dom(plain->root())) << name;
    reused->release_tree(scratch);
  }
  // Closed: it holds nothing and keeps nothing handed to it, and a parse still works.
  scratch.close();
  scratch.keep_text(std::string(100'000, 'x'));
  EXPECT_LT(scratch.take_text().capacity(), 100'000u);
  Expected<JsonDocument> after = parse_json_document("s.json", small, options);
  ASSERT_TRUE(after.ok());
  after->release_tree(scratch);
  EXPECT_TRUE(after->tree_released());
  // a's strings live in its own string buffer, which no later parse touched.
  const Json& member = a_json.as_object().front().value;
  EXPECT_EQ(a_json.as_object().front().key, "a0");
  EXPECT_EQ(member.as_array().front().as_string(), "value 0");
  EXPECT_EQ(a_json.as_object().size(),
            json_from_dom(parse_json_document("a", first)->root()).as_object().size());
}

// The expected input is a hint: when that much memory cannot be had, or the size is more
// than simdjson parses at all, each parse allocates for its own input. Errors come out as
// without a scratch, and the scratch still serves the next parse.
TEST(ParseScratch, AnImpossibleHintFallsBackAndErrorsAreUnchanged) {
  ParseScratch scratch;
  scratch.expect_input(std::numeric_limits<std::size_t>::max() / 4);
  ParseOptions options;
  options.scratch = &scratch;
  Expected<JsonDocument> doc = parse_json_document("in.json", R"({"k": [1, 2]})", options);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(json_from_dom(doc->root()).find("k")->as_array().size(), 2u);
  Expected<JsonDocument> bad = parse_json_document("in.json", "{\"k\": [1, 2}", options);
  Expected<JsonDocument> bad_plain = parse_json_document("in.json", "{\"k\": [1, 2}");
  ASSERT_FALSE(bad.ok());
  ASSERT_FALSE(bad_plain.ok());
  EXPECT_EQ(bad.errors().front().location_and_message(),
            bad_plain.errors().front().location_and_message());
  Expected<JsonDocument> repeated = parse_json_document("in.json", R"({"k": 1, "k": 2})", options);
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.errors().front().location_and_message(),
            parse_json_document("in.json", R"({"k": 1, "k": 2})")
                .errors()
                .front()
                .location_and_message());
  EXPECT_TRUE(parse_json_document("in.json", "[true]", options).ok());
}

}  // namespace
}  // namespace hpfreeze
