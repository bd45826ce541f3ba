// Upstream's coverage rule (dumps/coverage.h), as check --model, freeze and report share it.
#include "dumps/coverage.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dumps/plan.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"model.json"};

using Keys = std::vector<PlannedKey>;

// The FQNs of the uncovered parameters, in the order given.
std::vector<std::string> names(const ModelTree& model, const std::vector<std::size_t>& indexes) {
  std::vector<std::string> out;
  for (const std::size_t i : indexes) out.emplace_back(model.parameters[i].first);
  return out;
}

TEST(CoverageIndex, KeysJoinedAsFreezeJoinsThem) {
  // The root boundary's params are named alone; a param named "" is its boundary.
  const CoverageIndex coverage(Keys{{"m", "w"}, {"m", "sub.x"}, {"", "top"}, {"blk", ""}});
  for (const std::string_view fqn :
       {"m.w", "m.w.extra", "m.sub.x", "top", "top.a.b", "blk", "blk.weight"}) {
    EXPECT_TRUE(coverage.covers(fqn)) << fqn;
  }
  for (const std::string_view fqn : {"m.ww", "m", "m.sub", "", "to", "mw", "bl", "blkx", ".top"}) {
    EXPECT_FALSE(coverage.covers(fqn)) << fqn;
  }
  EXPECT_FALSE(CoverageIndex(Keys{}).covers("m.w"));
  // A key already joined (a meta's) covers as its two parts do.
  const CoverageIndex joined(Keys{{"m.w", ""}});
  EXPECT_TRUE(joined.covers("m.w"));
  EXPECT_TRUE(joined.covers("m.w.x"));
  EXPECT_FALSE(joined.covers("m"));
}

TEST(CoverageIndex, PlannedKeysOfAPlanDump) {
  JsonDocument doc = parse(R"j({"modules": {"m": {"params": {"w": {"tp": "R"}}},
      "n": {"in_src": {}}, "": {"params": {"top": {"tp": "R"}, "x": {}}}}})j",
                           "plan.json");
  Expected<PlanDump> plan = decode_plan_dump(doc);
  ASSERT_TRUE(plan.ok()) << plan.errors().front().location_and_message();
  std::vector<std::string> keys;
  for (const PlannedKey& key : planned_keys(*plan)) {
    keys.push_back(join_fqn(key.boundary, key.name));
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"m.w", "top", "x"}));
}

TEST(UncoveredTrainableParameters, ModelOrderAndFrozenOnesLeftOut) {
  JsonDocument doc = parse(R"j({"modules": {"": "M"}, "parameters": {
      "z.w": {"shape": [2]}, "m.w": {"shape": [2]}, "m.w.scale": {"shape": [1]},
      "a.bias": {"shape": [2], "requires_grad": true},
      "frozen.w": {"shape": [2], "requires_grad": false}, "m.v": {"shape": [2]}}})j");
  Expected<ModelTree> model = decode_model_tree(doc);
  ASSERT_TRUE(model.ok());
  int built = 0;
  const auto coverage = [&built] {
    ++built;
    return CoverageIndex(Keys{{"m", "w"}});
  };
  EXPECT_EQ(names(*model, uncovered_trainable_parameters(*model, coverage)),
            (std::vector<std::string>{"z.w", "a.bias", "m.v"}));
  EXPECT_EQ(built, 1);
}

TEST(UncoveredTrainableParameters, FlaggedParametersAreCoveredWithoutTheIndex) {
  JsonDocument doc = parse(R"j({"modules": {"": "M"}, "parameters": {
      "a": {"shape": [2]}, "b": {"shape": [2]}, "c": {"shape": [2], "requires_grad": false}}})j");
  Expected<ModelTree> model = decode_model_tree(doc);
  ASSERT_TRUE(model.ok());
  int built = 0;
  const auto nothing_planned = [&built] {
    ++built;
    return CoverageIndex(Keys{});
  };
  // Every trainable parameter flagged: none is uncovered and no index is built.
  const std::vector<std::uint8_t> both{1, 1, 0};
  EXPECT_TRUE(uncovered_trainable_parameters(*model, nothing_planned, both).empty());
  EXPECT_EQ(built, 0);
  // One left: it is looked up, in an index built once.
  const std::vector<std::uint8_t> first{1, 0, 0};
  EXPECT_EQ(names(*model, uncovered_trainable_parameters(*model, nothing_planned, first)),
            (std::vector<std::string>{"b"}));
  EXPECT_EQ(built, 1);
  // No flags: each trainable parameter is looked up.
  EXPECT_EQ(names(*model, uncovered_trainable_parameters(*model, nothing_planned)),
            (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace hpfreeze
