// Checkpoints as --model (checkpoint.h): the safetensors header decoder, and how a JSON
// reader names a safetensors file (dump_kind.h). Reading checkpoint files and sharded
// indexes: tests/unit/inputs/model_input_test.cc.
#include "dumps/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dumps/dump_kind.h"
#include "json/json_document.h"
#include "spec/dtypes.h"
#include "support/checkpoints.h"

namespace hpfreeze {
namespace {

using ::testing::HasSubstr;

Expected<ModelTree> decode(std::string header, std::uint64_t data) {
  const std::uint64_t size = 8 + header.size() + data;
  return decode_safetensors_header("ck.safetensors", std::move(header), size);
}

using test_support::error_of;
using test_support::one_tensor;

TEST(SafetensorsDtypes, EveryCodeMapsToTorchsName) {
  // The issue's table, with torch's itemsize of each name and whether it is floating.
  struct Row {
    const char* code;
    const char* torch;
    std::uint64_t size;
    bool floating;
  };
  const Row rows[] = {
      {"BOOL", "bool", 1, false},
      {"U8", "uint8", 1, false},
      {"I8", "int8", 1, false},
      {"I16", "int16", 2, false},
      {"U16", "uint16", 2, false},
      {"I32", "int32", 4, false},
      {"U32", "uint32", 4, false},
      {"I64", "int64", 8, false},
      {"U64", "uint64", 8, false},
      {"F16", "float16", 2, true},
      {"BF16", "bfloat16", 2, true},
      {"F32", "float32", 4, true},
      {"F64", "float64", 8, true},
      {"C64", "complex64", 8, true},
      {"F8_E4M3", "float8_e4m3fn", 1, true},
      {"F8_E5M2", "float8_e5m2", 1, true},
      {"F8_E8M0", "float8_e8m0fnu", 1, true},
  };
  for (const Row& r : rows) {
    ASSERT_NE(safetensors_dtype(r.code), nullptr) << r.code;
    EXPECT_EQ(safetensors_dtype(r.code)->name, r.torch) << r.code;
    const std::uint64_t bytes = 3 * 5 * r.size;
    const Expected<ModelTree> m =
        decode(one_tensor(r.code, "[3,5]", "[0," + std::to_string(bytes) + "]"), bytes);
    ASSERT_TRUE(m.ok()) << r.code << ": " << error_of(m);
    ASSERT_EQ(m->parameters.size(), 1U);
    const auto& [name, p] = m->parameters.front();
    EXPECT_EQ(name, "w");
    EXPECT_EQ(p.dtype, std::optional<std::string_view>(r.torch));
    EXPECT_EQ(p.requires_grad, r.floating) << r.code;
    EXPECT_EQ(std::vector<std::uint64_t>(p.shape.begin(), p.shape.end()),
              (std::vector<std::uint64_t>{3, 5}));
    EXPECT_TRUE(m->checkpoint);
    EXPECT_TRUE(m->modules.empty());
  }
}

TEST(SafetensorsDtypes, SubByteAndUnknownCodesNameTheTensor) {
  // The entry "w" starts at header byte 1, file byte 9.
  for (const char* code : {"F4", "F6_E2M3", "F6_E3M2"}) {
    EXPECT_EQ(safetensors_dtype(code), nullptr);
    EXPECT_EQ(error_of(decode(one_tensor(code, "[2]", "[0,1]"), 1)),
              std::string("ck.safetensors: /w/dtype: tensor 'w' (at byte 9) has the sub-byte "
                          "dtype '") +
                  code + "', whose element size the planner cannot count");
  }
  for (const char* code : {"F8_E4M3FNUZ", "bf16", "Q4_K", ""}) {
    EXPECT_EQ(safetensors_dtype(code), nullptr);
    EXPECT_EQ(error_of(decode(one_tensor(code, "[2]", "[0,1]"), 1)),
              std::string("ck.safetensors: /w/dtype: tensor 'w' (at byte 9) has unknown dtype '") +
                  code + "'");
  }
}

TEST(SafetensorsHeader, MetadataAndEmptyTensors) {
  // __metadata__ is no tensor; an empty tensor may share its offset with the next one.
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
      R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const Expected<ModelTree> m = decode(header, 8);
  ASSERT_TRUE(m.ok()) << error_of(m);
  ASSERT_EQ(m->parameters.size(), 2U);
  EXPECT_EQ(m->parameters[0].first, "e");
  EXPECT_EQ(m->parameters[1].first, "w");
  EXPECT_EQ(m->parameter_pointer("w"), "/w");
}

TEST(SafetensorsHeader, CorruptHeadersNameTheByte) {
  // Not JSON: `{"w": }` fails at its '}', header byte 6, file byte 14.
  EXPECT_THAT(error_of(decode(R"({"w": })", 0)), HasSubstr("at byte 14"));
  EXPECT_THAT(error_of(decode(R"({"w": })", 0)),
              HasSubstr("the safetensors header (bytes 8 to 15): "));
  EXPECT_EQ(error_of(decode("[1, 2]", 0)),
            "ck.safetensors: : the safetensors header at byte 8 is not an object of tensors");
  // Offsets outside the 8 data bytes, which start at file byte 8 + header size.
  const std::string outside = one_tensor("BF16", "[8]", "[0,16]");
  EXPECT_EQ(error_of(decode(outside, 8)),
            "ck.safetensors: /w/data_offsets: tensor 'w' (at byte 9) ends at byte 16 of the "
            "data, past its end: the data are 8 bytes (from byte " +
                std::to_string(8 + outside.size()) + " of the file)");
  EXPECT_EQ(
      error_of(decode(one_tensor("BF16", "[2]", "[4,2]"), 8)),
      "ck.safetensors: /w/data_offsets: tensor 'w' (at byte 9) ends (2) before it begins (4)");
  EXPECT_EQ(error_of(decode(one_tensor("BF16", "[3]", "[0,4]"), 8)),
            "ck.safetensors: /w/data_offsets: tensor 'w' (at byte 9) holds 4 bytes, but its shape "
            "and dtype need 6");
  EXPECT_EQ(error_of(decode(one_tensor("BF16", "[3]", "[0]"), 8)),
            "ck.safetensors: /w/data_offsets: tensor 'w' (at byte 9): data_offsets must be two "
            "non-negative integers");
  EXPECT_EQ(error_of(decode(one_tensor("BF16", "[-3]", "[0,6]"), 8)),
            "ck.safetensors: /w/shape/0: tensor 'w' (at byte 9) has a shape entry that is not a "
            "non-negative integer");
  // Overlapping: b (header byte 55, file byte 63) begins inside a.
  const std::string overlap = R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})";
  const std::uint64_t data_start = 8 + overlap.size();
  EXPECT_EQ(error_of(decode(overlap, 12)),
            "ck.safetensors: /b/data_offsets: tensor 'b' overlaps tensor 'a': it begins at byte " +
                std::to_string(data_start + 4) + " of the file, before the other ends at byte " +
                std::to_string(data_start + 8));
  EXPECT_EQ(error_of(decode(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":5})", 8)),
            "ck.safetensors: /b: expected an object, got an integer");
  EXPECT_EQ(error_of(decode(R"({"a":{"dtype":"U8","shape":[1]}})", 8)),
            "ck.safetensors: /a: tensor 'a' (at byte 9) has no 'data_offsets'");
  // A tensor named twice: the second name is at header byte 53, file byte 61.
  EXPECT_EQ(error_of(decode(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                            R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                            2)),
            "ck.safetensors: /a: 'a' is named twice, at byte 9 and at byte 61");
  EXPECT_EQ(
      error_of(decode(R"({"a":{"dtype":"U8","shape":[1],"dtype":"U8","data_offsets":[0,1]}})", 1)),
      "ck.safetensors: /a/dtype: tensor 'a' (at byte 9) has 'dtype' twice");
  EXPECT_EQ(error_of(decode(R"({"__metadata__":{"k":"1","k":"2"}})", 0)),
            "ck.safetensors: /__metadata__: __metadata__ (at byte 9) repeats a key");
}

TEST(SafetensorsHeader, MetadataHoldsStringsOnly) {
  // {"__metadata__":{"format":"pt","n":1}}: "n" at header byte 31, file byte 39.
  EXPECT_EQ(error_of(decode(R"({"__metadata__":{"format":"pt","n":1}})", 0)),
            "ck.safetensors: /__metadata__/n: __metadata__ value 'n' (at byte 39): expected a "
            "string, got an integer (__metadata__ holds strings only)");
  // The first entry that is no string is named, whatever its type; key "a" at file byte 25.
  for (const auto& [value, got] :
       std::vector<std::pair<std::string, std::string>>{{"null", "null"},
                                                        {"true", "a boolean"},
                                                        {"1.5", "a float"},
                                                        {R"({"b":"c"})", "an object"},
                                                        {R"(["x"])", "an array"}}) {
    EXPECT_EQ(error_of(decode(R"({"__metadata__":{"a":)" + value + R"(,"z":2}})", 0)),
              "ck.safetensors: /__metadata__/a: __metadata__ value 'a' (at byte 25): expected "
              "a string, got " +
                  got + " (__metadata__ holds strings only)");
  }
  // After a tensor (53 bytes), and with white space: "k" is at header byte 87, file byte 95.
  const std::string header = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"( "__metadata__" : { "ok": "yes",  "k" : [] }})";
  EXPECT_EQ(error_of(decode(header, 1)),
            "ck.safetensors: /__metadata__/k: __metadata__ value 'k' (at byte 95): expected a "
            "string, got an array (__metadata__ holds strings only)");
  EXPECT_TRUE(decode(R"({"__metadata__":{}})", 0).ok());
  EXPECT_EQ(error_of(decode(R"({"__metadata__":"pt"})", 0)),
            "ck.safetensors: /__metadata__: expected an object, got a string");
}

TEST(SafetensorsHeader, TensorsCoverTheDataExactly) {
  const auto u8 = [](std::string_view name, int shape, int begin, int end) {
    return "\"" + std::string(name) + R"(":{"dtype":"U8","shape":[)" + std::to_string(shape) +
           R"(],"data_offsets":[)" + std::to_string(begin) + "," + std::to_string(end) + "]}";
  };
  const auto error_at = [](const std::string& header, std::uint64_t data) {
    return std::pair{error_of(decode(header, data)), 8 + header.size()};
  };
  // A gap between two tensors.
  std::string header = "{" + u8("a", 4, 0, 4) + "," + u8("b", 4, 6, 10) + "}";
  auto [error, data] = error_at(header, 10);
  EXPECT_EQ(error,
            "ck.safetensors: /b/data_offsets: 2 bytes of data belong to no tensor: from "
            "byte " +
                std::to_string(data + 4) + " of the file, after tensor 'a', to byte " +
                std::to_string(data + 6) +
                ", where tensor 'b' begins; the tensors must cover the data exactly");
  // Before the first tensor, listed second.
  header = "{" + u8("b", 4, 6, 10) + "," + u8("a", 4, 2, 6) + "}";
  std::tie(error, data) = error_at(header, 10);
  EXPECT_EQ(error,
            "ck.safetensors: /a/data_offsets: 2 bytes of data belong to no tensor: from "
            "byte " +
                std::to_string(data) + " of the file, where the data begin, to byte " +
                std::to_string(data + 2) +
                ", where tensor 'a' begins; the tensors must cover the data exactly");
  // Trailing bytes after the last tensor, and data with no tensor at all.
  header = "{" + u8("a", 4, 0, 4) + "}";
  std::tie(error, data) = error_at(header, 7);
  EXPECT_EQ(error,
            "ck.safetensors: /a/data_offsets: 3 bytes of data belong to no tensor: from "
            "byte " +
                std::to_string(data + 4) +
                " of the file, after tensor 'a', to the "
                "end of the file at byte " +
                std::to_string(data + 7) + "; the tensors must cover the data exactly");
  EXPECT_EQ(error_of(decode(R"({"__metadata__":{}})", 5)),
            "ck.safetensors: : 5 bytes of data belong to no tensor: from byte 27 of the file, "
            "where the data begin, to the end of the file at byte 32; the tensors must cover "
            "the data exactly");
  // An empty tensor inside another's bytes overlaps it, as the reference loader has it.
  header = "{" + u8("a", 8, 0, 8) + "," + u8("e", 0, 4, 4) + "}";
  std::tie(error, data) = error_at(header, 8);
  EXPECT_EQ(error,
            "ck.safetensors: /e/data_offsets: tensor 'e' overlaps tensor 'a': it begins "
            "at byte " +
                std::to_string(data + 4) + " of the file, before the other ends at byte " +
                std::to_string(data + 8));
  // Exact cover in any header order, empty tensors at the ends and between, is fine.
  header = "{" + u8("c", 3, 5, 8) + "," + u8("e", 0, 0, 0) + "," + u8("a", 5, 0, 5) + "," +
           u8("f", 0, 5, 5) + "," + u8("g", 0, 8, 8) + "}";
  const Expected<ModelTree> m = decode(header, 8);
  ASSERT_TRUE(m.ok()) << error_of(m);
  EXPECT_EQ(m->parameters.size(), 5U);
  EXPECT_TRUE(decode("{}", 0).ok());
}

// A file size below the end of the header (a caller that did not check the length first, or
// a size that wrapped past 2^64 as the fuzzer once made one) is the length check's error, not
// an empty data section: found by CI's fuzz_checkpoint smoke run (testdata/fuzz/regressions).
TEST(SafetensorsHeader, AFileShorterThanItsHeaderIsAnError) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})";
  for (const std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7},
                                   std::uint64_t{8}, 8 + header.size() - 1}) {
    EXPECT_EQ(error_of(decode_safetensors_header("ck.safetensors", header, size)),
              "ck.safetensors: : the safetensors header length at byte 0 (" +
                  std::to_string(header.size()) + " bytes) runs past the end of the file (" +
                  std::to_string(size) + (size == 1 ? " byte)" : " bytes)"))
        << size;
  }
  EXPECT_FALSE(decode("{}", ~std::uint64_t{0}).ok());  // 8 + 2 + (2^64 - 1) wraps to 9
  EXPECT_TRUE(decode_safetensors_header("ck.safetensors", header, 8 + header.size()).ok());
}

TEST(SafetensorsAsJson, AJsonReaderNamesIt) {
  // Given to a reader of JSON (freeze's --model, a stream on stdin), a safetensors file is
  // named as such instead of a syntax error at its first byte.
  ParseOptions options;
  options.not_json = not_json_kind;  // as the loader parses every input
  std::string bytes("\x02\0\0\0\0\0\0\0{}", 10);
  Expected<JsonDocument> doc = parse_json_document("model.safetensors", bytes, options);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.errors().front().location_and_message(),
            "model.safetensors: this looks like a safetensors checkpoint, not JSON (report and "
            "check read one as --model FILE, by path)");
  // Anything short of a whole file (a length past the end, a stream cut at its first
  // NUL, a header not an object) is still a syntax error where it stops being JSON.
  for (const std::string& text :
       {std::string("\x40\0\0\0\0\0\0\0{}", 10), std::string("\x02\0\0\0\0\0\0\0[]", 10),
        std::string("\x40\0", 2), std::string("{\"a\": 1}\0\0", 10)}) {
    doc = parse_json_document("x.json", text, options);
    ASSERT_FALSE(doc.ok());
    EXPECT_THAT(doc.errors().front().location_and_message(), HasSubstr("x.json:1:"));
    EXPECT_EQ(not_json_kind(text), std::nullopt);
  }
  // Without the loader's question, the parser names no format: JSON is all it knows.
  doc = parse_json_document("model.safetensors", bytes);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.errors().front().location_and_message(), "model.safetensors:1:1: expected a value");
}

}  // namespace
}  // namespace hpfreeze
