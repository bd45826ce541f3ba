// Where the values of JSON Pointers start in a streamed text (json/json_pointer_locator.h).
// Every expected line and column is counted by hand from the texts below.

#include "json/json_pointer_locator.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace hpfreeze {
namespace {

using Found = std::vector<std::optional<TextPosition>>;

// The text in pieces of `piece` bytes; counts how many pieces were asked for.
Found locate(const std::string& text, const std::vector<std::string>& pointers,
             std::size_t piece = 4096, std::size_t* asked = nullptr) {
  std::size_t at = 0;
  std::size_t calls = 0;
  const TextPieces pieces = [&]() -> std::string_view {
    ++calls;
    const std::string_view out = std::string_view(text).substr(std::min(at, text.size()), piece);
    at += out.size();
    return out;
  };
  Found found = locate_pointers(pieces, pointers);
  if (asked != nullptr) *asked = calls;
  return found;
}

constexpr TextPosition at(std::size_t line, std::size_t column) { return {line, column}; }

// A plan as people write it: two-space indent, LF lines.
const std::string kPlan = R"({
  "format": "hpfreeze.plan/v1",
  "modules": {
    "lin": {
      "params": {
        "weight": {"tp": {"$placement": "Replicat"}, "ep": "R"},
        "bias": {"tp": [1, {"k": null}, "x"]}
      }
    },
    "a/b~c": {"n": 1.5e3}
  }
})";

TEST(PointerLocator, ValuesOfEveryKind) {
  for (const std::size_t piece :
       {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{4096}}) {
    EXPECT_EQ(locate(kPlan,
                     {"/modules/lin/params/weight/tp", "/format", "", "/modules",
                      "/modules/lin/params/weight/ep", "/modules/lin/params/bias/tp/1/k",
                      "/modules/lin/params/bias/tp/2", "/modules/a~1b~0c/n",
                      "/modules/lin/params/bias/tp/0"},
                     piece),
              (Found{at(6, 26), at(2, 13), at(1, 1), at(3, 14), at(6, 60), at(7, 34), at(7, 41),
                     at(10, 20), at(7, 25)}))
        << piece;
  }
}

TEST(PointerLocator, WhatIsNotThereIsNotFound) {
  EXPECT_EQ(
      locate(kPlan, {"/modules/nope", "/format/x", "/modules/lin/params/bias/tp/3",
                     "/modules/lin/params/bias/tp/01", "modules", "/modules/lin/params/weight/tp"}),
      (Found{std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, at(6, 26)}));
  EXPECT_EQ(locate(kPlan, {}), Found{});
  EXPECT_EQ(locate("", {""}), Found{std::nullopt});
}

TEST(PointerLocator, ColumnsAreBytesAndLinesEndAtLf) {
  // "é" is two bytes; CR is a byte of the line; a tab is one byte.
  const std::string text = "{\"\xc3\xa9\": 1,\r\n\t\"b\": [true, \"\\u00e9\"], \"c\": -0}";
  EXPECT_EQ(locate(text, {"/\xc3\xa9", "/b/0", "/b/1", "/c"}),
            (Found{at(1, 8), at(2, 8), at(2, 14), at(2, 30)}));
}

TEST(PointerLocator, KeysAreComparedDecoded) {
  // Escapes in keys, a surrogate pair, an escaped quote and slash; a key named twice
  // counts where it is named first, as the readers take the first.
  const std::string text =
      R"({"\u0061": 1, "\ud83d\ude00": 2, "q\"\/": 3, "a": 4, "t\n": {"x": 5}})";
  EXPECT_EQ(locate(text, {"/a", "/\xf0\x9f\x98\x80", "/q\"~1", "/t\n/x"}),
            (Found{at(1, 12), at(1, 31), at(1, 43), at(1, 67)}));
}

TEST(PointerLocator, TheSamePointerTwiceIsFoundForBoth) {
  EXPECT_EQ(locate(kPlan, {"/format", "/format"}), (Found{at(2, 13), at(2, 13)}));
}

TEST(PointerLocator, ReadsNoFurtherThanTheLastValueFound) {
  std::string big = R"({"first": 1, "rest": [)";
  for (int i = 0; i < 100000; ++i) big += "[1, {\"k\": \"v\"}], ";
  big += "0]}";
  std::size_t asked = 0;
  EXPECT_EQ(locate(big, {"/first"}, 64, &asked), (Found{at(1, 11)}));
  EXPECT_EQ(asked, 1U);
  // A value far in is found by reading up to it, skipping what no pointer goes into.
  EXPECT_EQ(locate(big, {"/rest/100000"}, 4096, &asked), (Found{at(1, big.size() - 2)}));
}

TEST(PointerLocator, AfterTheTextStopsBeingJsonNothingIsFound) {
  const std::string text = R"({"a": 1, "b" 2, "c": 3})";
  EXPECT_EQ(locate(text, {"/a", "/c"}), (Found{at(1, 7), std::nullopt}));
  // A safetensors file starts with its binary length: nothing is found, nothing hangs.
  EXPECT_EQ(locate(std::string("\x10\0\0\0\0\0\0\0{\"w\": 1}", 16), {"/w"}), (Found{std::nullopt}));
  EXPECT_EQ(locate(R"({"a": "open)", {"/a", "/b"}), (Found{at(1, 7), std::nullopt}));
  EXPECT_EQ(locate(R"({"a": [1, 2)", {"/b"}), (Found{std::nullopt}));
}

TEST(PointerLocator, DeepNestingIsSkippedWithoutRecursion) {
  const std::string deep =
      "{\"a\": " + std::string(200000, '[') + std::string(200000, ']') + ", \"b\": 1}";
  EXPECT_EQ(locate(deep, {"/b"}), (Found{at(1, 400014)}));
}

}  // namespace
}  // namespace hpfreeze
