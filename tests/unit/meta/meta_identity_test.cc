// The identity members decode_meta decodes for its readers (covered, parallel_dims, the
// members thaw copies whole) and decode_base_meta, freeze's rule for a base meta.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "json/json_document.h"
#include "meta/meta.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"meta.json"};

FrozenMeta decoded(const JsonDocument& doc, MetaDecodeOptions options = {}) {
  Expected<FrozenMeta> meta = decode_meta(doc, "test", options);
  EXPECT_TRUE(meta.ok());
  return std::move(*meta);
}

std::string first_error(const Expected<Json>& base) {
  return base ? std::string("ok") : base.errors().front().location_and_message();
}

TEST(MetaIdentity, CoveredIsDecodedAndStaysAnIdentityMember) {
  JsonDocument doc = parse(R"j({"covered": {"sharding_plan": true}, "param_plan": {}})j");
  const FrozenMeta meta = decoded(doc);
  EXPECT_EQ(meta.covered.state, MetaMemberState::kObject);
  ASSERT_NE(meta.covered.object, nullptr);
  EXPECT_EQ(meta.covered.object->size(), 1u);
  EXPECT_TRUE(meta.covered.valid());
  ASSERT_EQ(meta.identity.size(), 1u);
  EXPECT_EQ(meta.identity[0]->key, "covered");
}

TEST(MetaIdentity, CoveredAbsentNullOrAnotherValue) {
  JsonDocument absent = parse(R"j({"param_plan": {}})j");
  EXPECT_EQ(decoded(absent).covered.state, MetaMemberState::kAbsent);
  EXPECT_TRUE(decoded(absent).covered.valid());
  JsonDocument null = parse(R"j({"covered": null, "param_plan": {}})j");
  EXPECT_EQ(decoded(null).covered.state, MetaMemberState::kNull);
  EXPECT_FALSE(decoded(null).covered.valid());
  EXPECT_EQ(decoded(null).covered.type, "null");
  JsonDocument list = parse(R"j({"covered": [1], "param_plan": {}})j");
  const FrozenMeta meta = decoded(list);  // not the decoder's to refuse: freeze copies it
  EXPECT_EQ(meta.covered.state, MetaMemberState::kOther);
  EXPECT_EQ(meta.covered.object, nullptr);
  EXPECT_FALSE(meta.covered.valid());
  EXPECT_EQ(meta.covered.type, "an array");
}

TEST(MetaIdentity, ParallelDimsSizesInDocumentOrder) {
  JsonDocument doc = parse(R"j({"parallel_dims": {"tp_size": 4, "_size": 2, "ep_size": 0,
      "world": 8, "cp_size": "2", "dp_size": 2.0, "xp_size": 9223372036854775808,
      "pp_size": 9223372036854775807}, "param_plan": {}})j");
  const FrozenMeta meta = decoded(doc);
  EXPECT_EQ(meta.parallel_dims.state, MetaMemberState::kObject);
  const std::vector<MetaAxisSize>& axes = meta.parallel_dims.axes;
  ASSERT_EQ(axes.size(), 6u);  // "_size" names no axis, "world" is no size
  EXPECT_EQ(axes[0].key, "tp_size");
  EXPECT_EQ(axes[0].axis, "tp");
  EXPECT_EQ(axes[0].size, std::optional<std::uint64_t>(4));
  EXPECT_EQ(axes[1].axis, "ep");
  EXPECT_EQ(axes[1].size, std::nullopt);  // below 1
  EXPECT_EQ(axes[1].above_max, std::nullopt);
  EXPECT_EQ(axes[2].axis, "cp");
  EXPECT_EQ(axes[2].size, std::nullopt);  // a string
  EXPECT_EQ(axes[3].axis, "dp");
  EXPECT_EQ(axes[3].size, std::nullopt);  // a float, even a whole one
  EXPECT_EQ(axes[4].axis, "xp");
  EXPECT_EQ(axes[4].size, std::nullopt);
  EXPECT_EQ(axes[4].above_max, std::optional<std::uint64_t>(9223372036854775808ull));
  EXPECT_EQ(axes[5].size, std::optional<std::uint64_t>(9223372036854775807ull));
}

TEST(MetaIdentity, ParallelDimsAbsentNullOrAnotherValue) {
  JsonDocument absent = parse(R"j({"param_plan": {}})j");
  EXPECT_EQ(decoded(absent).parallel_dims.state, MetaMemberState::kAbsent);
  JsonDocument null = parse(R"j({"parallel_dims": null, "param_plan": {}})j");
  EXPECT_EQ(decoded(null).parallel_dims.state, MetaMemberState::kNull);
  JsonDocument list = parse(R"j({"parallel_dims": [{"tp_size": 2}], "param_plan": {}})j");
  EXPECT_EQ(decoded(list).parallel_dims.state, MetaMemberState::kOther);
  EXPECT_TRUE(decoded(list).parallel_dims.axes.empty());
}

TEST(MetaIdentity, MembersTellAbsentFromNullAndEmpty) {
  JsonDocument doc = parse(R"j({"mesh_dim_names": null, "tied_pairs": [],
      "frozen_sharded_params": [], "param_plan": {}})j");
  for (const MetaDecodeOptions options :
       {MetaDecodeOptions{}, MetaDecodeOptions::decoded_params_only()}) {
    const FrozenMeta meta = decoded(doc, options);
    ASSERT_NE(meta.members.mesh_dim_names, nullptr);
    EXPECT_TRUE(meta.members.mesh_dim_names->is_null());
    EXPECT_FALSE(meta.mesh_dim_names.has_value());
    ASSERT_NE(meta.members.tied_pairs, nullptr);
    EXPECT_TRUE(meta.members.tied_pairs->is_array());
    ASSERT_NE(meta.members.frozen_sharded_params, nullptr);
    EXPECT_TRUE(meta.frozen_sharded_params.empty());
    EXPECT_EQ(meta.members.special_handlers, nullptr);
  }
  JsonDocument none = parse(R"j({"param_plan": {}})j");
  const FrozenMeta meta = decoded(none);
  EXPECT_EQ(meta.members.frozen_sharded_params, nullptr);  // absent reads as [] ...
  EXPECT_TRUE(meta.frozen_sharded_params.empty());         // ... but is told apart
  EXPECT_EQ(meta.members.mesh_dim_names, nullptr);
  EXPECT_EQ(meta.members.tied_pairs, nullptr);
}

TEST(DecodeBaseMeta, AnObjectWhoseCoveredIsAnObject) {
  EXPECT_EQ(first_error(decode_base_meta(Json(JsonObject{}), "plan.json", "/meta")), "ok");
  EXPECT_EQ(first_error(decode_base_meta(Json(JsonArray{}), "plan.json", "/meta")),
            "plan.json: /meta: a base meta must be a JSON object");
  const Json null_covered(JsonObject{{"covered", Json(nullptr)}});
  EXPECT_EQ(first_error(decode_base_meta(null_covered, "plan.json", "/meta")),
            "plan.json: /meta/covered: 'covered' must be an object in a base meta");
  const Json covered(JsonObject{{"covered", Json(JsonObject{})}, {"x", Json(std::int64_t{1})}});
  Expected<Json> kept = decode_base_meta(covered, "plan.json", "/meta");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, covered);
}

TEST(DecodeBaseMeta, AWholeDocument) {
  JsonDocument doc = parse(R"j({"signature": "s", "covered": "all"})j");
  EXPECT_EQ(first_error(decode_base_meta(doc)),
            "meta.json: /covered: 'covered' must be an object in a base meta");
  JsonDocument list = parse("[]");
  EXPECT_EQ(first_error(decode_base_meta(list)), "meta.json: a base meta must be a JSON object");
  JsonDocument good = parse(R"j({"signature": "s", "covered": {}})j");
  Expected<Json> base = decode_base_meta(good);
  ASSERT_TRUE(base.ok());
  ASSERT_TRUE(base->is_object());
  EXPECT_EQ(base->as_object().size(), 2u);
}

}  // namespace
}  // namespace hpfreeze
