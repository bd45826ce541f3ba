// The members check --bundle and the skipped-overrides warning read (MetaBundle,
// MetaSkippedOverrides): decoded as the document holds them, never judged by the decoder
// (freeze copies them from a base), and still identity members.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json_document.h"
#include "meta/meta.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"meta.json"};
using test_support::keep;

const FrozenMeta& decoded(std::string text) {
  const JsonDocument& doc = keep(parse(std::move(text)));
  Expected<FrozenMeta> meta = decode_meta(doc, "test");
  EXPECT_TRUE(meta.ok()) << (meta ? "" : meta.errors().front().location_and_message());
  return keep(meta ? std::move(*meta) : FrozenMeta{});
}

std::string with(std::string_view members) {
  return R"j({"param_plan": {"b": {"params": {"w": {"tp": "R"}}}})j" +
         (members.empty() ? std::string("}") : ", " + std::string(members) + "}");
}

TEST(MetaBundleMembers, ModelNameAsTheDocumentHoldsIt) {
  EXPECT_EQ(decoded(with("")).bundle.model_name, nullptr);
  EXPECT_EQ(decoded(with("")).bundle.modeling_name(), std::optional<std::string_view>(""));
  EXPECT_EQ(decoded(with(R"("model_name": null)")).bundle.modeling_name(),
            std::optional<std::string_view>(""));
  EXPECT_EQ(decoded(with(R"("model_name": "")")).bundle.modeling_name(),
            std::optional<std::string_view>(""));
  EXPECT_EQ(decoded(with(R"("model_name": "Qwen3_Moe")")).bundle.modeling_name(),
            std::optional<std::string_view>("Qwen3_Moe"));
  // Neither a string nor null: no name (check --bundle reports it), and no decoding error.
  for (const char* value : {"3", "true", "[\"a\"]", "{}", "1.5"}) {
    const FrozenMeta& meta = decoded(with(std::string(R"("model_name": )") + value));
    ASSERT_NE(meta.bundle.model_name, nullptr) << value;
    EXPECT_EQ(meta.bundle.modeling_name(), std::nullopt) << value;
    ASSERT_EQ(meta.identity.size(), 1u);
    EXPECT_EQ(meta.identity[0]->key, "model_name");
  }
}

TEST(MetaBundleMembers, OutputsEntriesKeepTheirRecordedValue) {
  const std::string hash(64, 'a');
  const FrozenMeta& meta = decoded(with(R"("outputs": {
      "modeling": {"sha256": ")" + hash +
                                        R"(", "lines": 971},
      "diff": {"lines": 4, "sha256": ")" +
                                        hash + R"("},
      "init": {"sha256": ")" + hash + R"("},
      "upper.py": {"sha256": ")" + std::string(64, 'A') +
                                        R"("},
      "short.py": {"sha256": ")" + std::string(63, 'a') +
                                        R"("},
      "number.py": {"sha256": 7},
      "none.py": {"lines": 1},
      "text.py": "x",
      "lines.py": {"sha256": ")" + hash +
                                        R"(", "lines": -1},
      "float.py": {"sha256": ")" + hash +
                                        R"(", "lines": 2.0},
      "big.py": {"sha256": ")" + hash + R"(", "lines": 18446744073709551615}})"));
  EXPECT_EQ(meta.bundle.outputs_state, MetaMemberState::kObject);
  struct Expect {
    std::string_view key;
    bool sha256;
    std::optional<std::uint64_t> lines;
  };
  const std::vector<Expect> expected = {{"modeling", true, 971},
                                        {"diff", true, 4},
                                        {"init", true, std::nullopt},
                                        {"upper.py", false, std::nullopt},
                                        {"short.py", false, std::nullopt},
                                        {"number.py", false, std::nullopt},
                                        {"none.py", false, 1},
                                        {"text.py", false, std::nullopt},
                                        {"lines.py", true, std::nullopt},
                                        {"float.py", true, std::nullopt},
                                        {"big.py", true, 18446744073709551615ull}};
  ASSERT_EQ(meta.bundle.outputs.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const MetaOutput& o = meta.bundle.outputs[i];
    EXPECT_EQ(o.key, expected[i].key);
    ASSERT_NE(o.recorded, nullptr);
    EXPECT_EQ(o.sha256.has_value(), expected[i].sha256) << o.key;
    if (o.sha256) {
      EXPECT_EQ(*o.sha256, hash);
    }
    EXPECT_EQ(o.lines, expected[i].lines) << o.key;
  }
  EXPECT_TRUE(meta.bundle.outputs[7].recorded->is_string());
  EXPECT_EQ(meta.bundle.find_output("init"), &meta.bundle.outputs[2]);
  EXPECT_EQ(meta.bundle.find_output("absent"), nullptr);
}

TEST(MetaBundleMembers, OutputsAbsentNullEmptyOrAnotherValue) {
  EXPECT_EQ(decoded(with("")).bundle.outputs_state, MetaMemberState::kAbsent);
  EXPECT_EQ(decoded(with(R"("outputs": null)")).bundle.outputs_state, MetaMemberState::kNull);
  EXPECT_EQ(decoded(with(R"("outputs": {})")).bundle.outputs_state, MetaMemberState::kObject);
  EXPECT_TRUE(decoded(with(R"("outputs": {})")).bundle.outputs.empty());
  const FrozenMeta& list = decoded(with(R"("outputs": [{"sha256": "x"}])"));
  EXPECT_EQ(list.bundle.outputs_state, MetaMemberState::kOther);
  EXPECT_TRUE(list.bundle.outputs.empty());
}

TEST(MetaBundleMembers, RemoteSiblingsKeepTheirIndex) {
  const FrozenMeta& meta =
      decoded(with(R"("remote_siblings": ["configuration_x.py", 3, "tokenizer_x.py"])"));
  const std::vector<std::pair<std::size_t, std::string_view>> expected = {{0, "configuration_x.py"},
                                                                          {2, "tokenizer_x.py"}};
  EXPECT_EQ(meta.bundle.remote_siblings, expected);
  EXPECT_TRUE(decoded(with(R"("remote_siblings": "x.py")")).bundle.remote_siblings.empty());
}

TEST(MetaBundleMembers, SkippedOverridesEntries) {
  const FrozenMeta& meta = decoded(with(R"("skipped_overrides": [
      {"match": ["model.layers.0.mlp"], "reason": "no_match"}, "text", {"reason": 1}, {}])"));
  const MetaSkippedOverrides& skipped = meta.skipped_overrides;
  ASSERT_NE(skipped.value, nullptr);
  ASSERT_EQ(skipped.entries.size(), 4u);
  EXPECT_EQ(skipped.entries[0].index, 0u);
  ASSERT_NE(skipped.entries[0].match, nullptr);
  EXPECT_TRUE(skipped.entries[0].match->is_array());
  EXPECT_EQ(skipped.entries[0].reason->as_string(), "no_match");
  EXPECT_TRUE(skipped.entries[1].entry->is_string());
  EXPECT_EQ(skipped.entries[1].match, nullptr);
  EXPECT_EQ(skipped.entries[1].reason, nullptr);
  EXPECT_EQ(skipped.entries[2].match, nullptr);
  ASSERT_NE(skipped.entries[2].reason, nullptr);
  EXPECT_EQ(skipped.entries[3].index, 3u);
  EXPECT_EQ(skipped.entries[3].reason, nullptr);

  EXPECT_EQ(decoded(with("")).skipped_overrides.value, nullptr);
  const FrozenMeta& object = decoded(with(R"("skipped_overrides": {"a": 1})"));
  ASSERT_NE(object.skipped_overrides.value, nullptr);
  EXPECT_TRUE(object.skipped_overrides.entries.empty());
}

// Decoded the same way whether the params are in the tree or not (check's options), and
// whatever the order of the members.
TEST(MetaBundleMembers, SameUnderEveryDecodeOption) {
  const std::string text = R"j({"outputs": {"init": {"sha256": ")j" + std::string(64, '0') +
                           R"j(", "lines": 6}}, "param_plan": {"b": {"params": {"w": {"tp": "R"}}}},
      "model_name": "M", "skipped_overrides": [{"match": "x", "reason": "r"}]})j";
  for (const MetaDecodeOptions options :
       {MetaDecodeOptions{}, MetaDecodeOptions::decoded_params_only()}) {
    const JsonDocument& doc = keep(parse(text));
    Expected<FrozenMeta> meta = decode_meta(doc, "test", options);
    ASSERT_TRUE(meta.ok());
    const FrozenMeta moved = std::move(*meta);  // the views survive a move
    EXPECT_EQ(moved.bundle.modeling_name(), std::optional<std::string_view>("M"));
    ASSERT_EQ(moved.bundle.outputs.size(), 1u);
    EXPECT_EQ(moved.bundle.outputs[0].lines, 6u);
    EXPECT_EQ(*moved.bundle.outputs[0].sha256, std::string(64, '0'));
    ASSERT_EQ(moved.skipped_overrides.entries.size(), 1u);
    EXPECT_EQ(moved.skipped_overrides.entries[0].match->as_string(), "x");
    EXPECT_EQ(moved.identity.size(), 3u);
  }
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Upstream's own metas: model_name a string, the three roles with sha256 and lines, no
// remote siblings, no skipped overrides.
TEST(MetaBundleMembers, RealWorldMetas) {
  for (const char* name : {"qwen3_moe_training_demo.json", "qwen3_moe_training_demo_v2.json",
                           "deepseek_v41_toy.json"}) {
    const FrozenMeta& meta =
        decoded(slurp(std::filesystem::path(HPFREEZE_TESTDATA_DIR) / "realworld" / name));
    ASSERT_TRUE(meta.bundle.modeling_name()) << name;
    EXPECT_FALSE(meta.bundle.modeling_name()->empty()) << name;
    ASSERT_EQ(meta.bundle.outputs.size(), 3u) << name;
    for (const MetaOutput& o : meta.bundle.outputs) {
      EXPECT_TRUE(o.sha256.has_value()) << name << " " << o.key;
      EXPECT_TRUE(o.lines.has_value()) << name << " " << o.key;
    }
    EXPECT_TRUE(meta.bundle.remote_siblings.empty());
    ASSERT_NE(meta.skipped_overrides.value, nullptr);
    EXPECT_TRUE(meta.skipped_overrides.entries.empty());
  }
}

}  // namespace
}  // namespace hpfreeze
