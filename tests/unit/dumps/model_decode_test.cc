// Model tree decoding (docs/formats.md, "The model tree dump") and its name lookups.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dumps/plan.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"model.json"};

std::string model_error(std::string text) {
  JsonDocument doc = parse(std::move(text));
  Expected<ModelTree> model = decode_model_tree(doc);
  EXPECT_FALSE(model.ok());
  return model ? "<ok>" : model.errors().front().location_and_message();
}

TEST(DecodeModel, Rules) {
  EXPECT_EQ(model_error("{}"), "model.json: missing required key 'modules'");
  EXPECT_EQ(model_error(R"j({"modules": {"": 1}})j"),
            "model.json: /modules/: expected a string, got an integer");
  EXPECT_EQ(model_error(R"j({"modules": {}, "parameters": {"w": {}}})j"),
            "model.json: /parameters/w: parameter has no 'shape'");
  EXPECT_EQ(model_error(R"j({"modules": {}, "parameters": {"w": {"shape": [-1]}}})j"),
            "model.json: /parameters/w/shape/0: shape dimensions must be non-negative, got -1");
  EXPECT_EQ(model_error(R"j({"modules": {}, "parameters": {"w": {"shape": [1.5]}}})j"),
            "model.json: /parameters/w/shape/0: expected a non-negative integer, got a float");
  EXPECT_EQ(model_error(R"j({"modules": {}, "parameters": {"w": {"shape": [], "x": 1}}})j"),
            "model.json: /parameters/w/x: unknown parameter field 'x'");
  EXPECT_EQ(
      model_error(R"j({"modules": {}, "parameters": {"w": {"shape": [], "requires_grad": 0}}})j"),
      "model.json: /parameters/w/requires_grad: expected a boolean, got an integer");
  EXPECT_EQ(model_error(R"j({"modules": {}, "format": "hpfreeze.plan/v1"})j"),
            "model.json: /format: unsupported format 'hpfreeze.plan/v1' (expected "
            "'hpfreeze.model/v1')");
}

TEST(DecodeModel, NullMeansAbsent) {
  JsonDocument doc = parse(R"j({"format": null, "modules": {"": "Net"}, "parameters": null})j");
  Expected<ModelTree> model = decode_model_tree(doc);
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(model->has_parameters);
  JsonDocument doc2 = parse(
      R"j({"modules": {}, "parameters": {"w": {"shape": [2], "dtype": null, "requires_grad": null}}})j");
  Expected<ModelTree> model2 = decode_model_tree(doc2);
  ASSERT_TRUE(model2.ok());
  const ModelParameter* w = model2->find_parameter("w");
  ASSERT_NE(w, nullptr);
  EXPECT_FALSE(w->dtype.has_value());
  EXPECT_TRUE(w->requires_grad);
}

std::vector<std::uint64_t> dims(const ModelParameter* p) {
  return {p->shape.begin(), p->shape.end()};
}

// A model of `n` modules m0 ... (class Ci) and `n` parameters mi.w of shape [i].
std::string numbered_model(int n) {
  std::string text = R"j({"modules": {"": "Net")j";
  std::string params;
  for (int i = 0; i < n; ++i) {
    text += ", \"m" + std::to_string(i) + "\": \"C" + std::to_string(i) + "\"";
    params += std::string(i == 0 ? "" : ", ") + "\"m" + std::to_string(i) + ".w\": {\"shape\": [" +
              std::to_string(i) + "]}";
  }
  return text + "}, \"parameters\": {" + params + "}}";
}

// Lookups by name, with and without the cursor, before and after index(), and on a moved
// tree (the lazily built indexes move with it).
TEST(DecodeModel, Lookups) {
  JsonDocument doc = parse(numbered_model(100));
  Expected<ModelTree> decoded = decode_model_tree(doc);
  ASSERT_TRUE(decoded.ok());
  ModelTree model = std::move(*decoded);
  ASSERT_NE(model.find_class("m42"), nullptr);
  EXPECT_EQ(*model.find_class("m42"), "C42");
  EXPECT_EQ(*model.find_class(""), "Net");
  EXPECT_EQ(model.find_class("m100"), nullptr);
  ModelTree moved = std::move(model);
  std::size_t cursor = 0;
  EXPECT_EQ(dims(moved.find_parameter("m0.w", cursor)), (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(cursor, 1u);
  EXPECT_EQ(dims(moved.find_parameter("m70.w", cursor)), (std::vector<std::uint64_t>{70}));
  EXPECT_EQ(cursor, 71u);
  EXPECT_EQ(dims(moved.find_parameter("m71.w", cursor)), (std::vector<std::uint64_t>{71}));
  EXPECT_EQ(moved.find_parameter("nope", cursor), nullptr);
  moved.index();
  EXPECT_EQ(dims(moved.find_parameter("m99.w")), (std::vector<std::uint64_t>{99}));
  EXPECT_EQ(*moved.find_class("m7"), "C7");
}

// The lazy indexes are built under a once_flag: threads that look names up in one fresh
// tree at once each see every name (ThreadSanitizer, `ctest -L threaded`, sees no race).
TEST(DecodeModel, LookupsFromSeveralThreadsAtOnce) {
  constexpr int kNames = 20000;
  JsonDocument doc = parse(numbered_model(kNames));
  Expected<ModelTree> decoded = decode_model_tree(doc);
  ASSERT_TRUE(decoded.ok());
  const ModelTree& model = *decoded;
  std::atomic<int> ready{0};
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < 4) {
      }
      for (int k = 0; k < kNames; ++k) {
        const int i = (k * 7919 + t * 4999) % kNames;  // each thread in its own order
        const std::string name = "m" + std::to_string(i);
        const std::string_view* cls = model.find_class(name);
        const ModelParameter* p = model.find_parameter(name + ".w");
        if (cls == nullptr || *cls != "C" + std::to_string(i) || p == nullptr ||
            dims(p) != std::vector<std::uint64_t>{static_cast<std::uint64_t>(i)}) {
          ++wrong[static_cast<std::size_t>(t)];
        }
      }
      if (model.find_parameter("nope") != nullptr) ++wrong[static_cast<std::size_t>(t)];
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

// A dump parsed without the duplicate-key check: the decoder finds repeated keys itself and
// reports each as the parse would have, before any decode error.
TEST(DecodeModel, RepeatedKeysWhenTheParseDidNotCheck) {
  auto error = [](const std::string& text) {
    ParseOptions unchecked;
    unchecked.check_duplicate_keys = false;
    Expected<JsonDocument> doc = parse_json_document("model.json", text, unchecked);
    EXPECT_TRUE(doc.ok());
    Expected<ModelTree> model = decode_model_tree(*doc);
    return model ? std::string("<ok>") : model.errors().front().location_and_message();
  };
  EXPECT_EQ(error(R"j({"modules": {"a": "A", "b": "B", "a": "C"}})j"),
            "model.json: /modules/a: duplicate key 'a'");
  EXPECT_EQ(error(R"j({"modules": {}, "modules": {}})j"),
            "model.json: /modules: duplicate key 'modules'");
  EXPECT_EQ(error(R"j({"modules": {}, "parameters": {"w": {"shape": [1]}, "w": {"shape": [2]}}})j"),
            "model.json: /parameters/w: duplicate key 'w'");
  EXPECT_EQ(
      error(
          R"j({"modules": {}, "parameters": {"w": {"shape": [1], "dtype": "f", "dtype": "g"}}})j"),
      "model.json: /parameters/w/dtype: duplicate key 'dtype'");
  // The repeat comes first even when a decode error comes earlier in the document.
  EXPECT_EQ(error(R"j({"modules": {"a": 1}, "x": {"k": 1, "k": 2}})j"),
            "model.json: /x/k: duplicate key 'k'");
  EXPECT_EQ(error(R"j({"modules": {"a": 1}})j"),
            "model.json: /modules/a: expected a string, got an integer");
  EXPECT_EQ(error(R"j({"modules": {"a": "A"}, "parameters": {"a.w": {"shape": [3]}}})j"), "<ok>");
}

}  // namespace
}  // namespace hpfreeze
