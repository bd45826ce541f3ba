// freeze's warning about trainable model parameters no planned key covers (upstream's
// preflight rule, dumps/coverage.h, as check --model counts them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check/check.h"
#include "dumps/plan.h"
#include "freeze/freeze.h"
#include "freeze/reference.h"
#include "json/encode.h"
#include "json/json_document.h"
#include "meta/meta.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"plan.json"};

// Six trainable parameters under "blk" and "lin", one frozen, one under a planned key.
constexpr const char* kModel = R"j({"modules": {"": "Net", "lin": "Linear", "blk": "Block",
  "head": "Linear"}, "parameters": {
  "lin.weight": {"shape": [8, 4]}, "lin.bias": {"shape": [8]},
  "blk.a": {"shape": [2]}, "blk.b": {"shape": [2]}, "blk.c": {"shape": [2]},
  "blk.d": {"shape": [2]}, "blk.e": {"shape": [2], "requires_grad": false},
  "head.weight": {"shape": [4, 4]}, "head.weight.scale": {"shape": [1]}}})j";

struct FreezeRun {
  Expected<FreezeResult> result;
  std::vector<std::string> lines;  // warnings, or errors
};

FreezeRun freeze(const std::string& plan_text, FreezeOptions options = {},
                 const std::string& model_text = kModel) {
  JsonDocument& plan_doc = test_support::keep(parse(plan_text));
  JsonDocument& model_doc = test_support::keep(parse(model_text, "model.json"));
  Expected<PlanDump> plan = decode_plan_dump(plan_doc);
  Expected<ModelTree> model = decode_model_tree(model_doc);
  EXPECT_TRUE(plan.ok() && model.ok());
  PlanDump& kept_plan = test_support::keep(std::move(*plan));
  FreezeRun run{freeze_plan(kept_plan, *model, options), {}};
  run.lines =
      test_support::diagnostic_lines(run.result ? run.result->warnings : run.result.errors());
  return run;
}

constexpr const char* kEverything = R"j({"modules": {
  "lin": {"params": {"weight": {"tp": "S(0)"}, "bias": {"tp": "R"}}},
  "blk": {"params": {"a": {"tp": "R"}, "b": {"tp": "R"}, "c": {"tp": "R"}, "d": {"tp": "R"}}},
  "head": {"params": {"weight": {"tp": "R"}}}}})j";

TEST(FreezeCoverage, APlanThatCoversEveryTrainableParameterWarnsOfNothing) {
  // head.weight.scale lies under the planned key head.weight; blk.e is frozen.
  const FreezeRun run = freeze(kEverything);
  ASSERT_TRUE(run.result.ok());
  EXPECT_TRUE(run.lines.empty()) << run.lines.front();
}

TEST(FreezeCoverage, ADroppedBoundaryIsOneWarningWithTheCountAndTheFirstThree) {
  const FreezeRun run = freeze(R"j({"modules": {"head": {"params": {"weight": {"tp": "R"}}},
      "lin": {"params": {"weight": {"tp": "S(0)"}}}}})j");
  ASSERT_TRUE(run.result.ok());
  EXPECT_EQ(run.lines,
            (std::vector<std::string>{
                "model.json: /parameters/lin.bias: 5 trainable parameters are not covered by "
                "any planned parameter of plan.json, first here: 'lin.bias', 'blk.a', 'blk.b' "
                "and 2 more (upstream's preflight refuses them at run time)"}));
}

TEST(FreezeCoverage, OneUncoveredParameterIsNamedAlone) {
  const FreezeRun run = freeze(R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}},
      "blk": {"params": {"a": {}, "b": {}, "c": {}, "d": {}}},
      "head": {"params": {"weight": {"tp": "R"}}}}})j");
  ASSERT_TRUE(run.result.ok());
  EXPECT_EQ(run.lines, (std::vector<std::string>{
                           "model.json: /parameters/lin.bias: 1 trainable parameter is not "
                           "covered by any planned parameter of plan.json: 'lin.bias' "
                           "(upstream's preflight refuses it at run time)"}));
}

TEST(FreezeCoverage, StrictMakesItAnError) {
  FreezeOptions strict;
  strict.strict = true;
  const FreezeRun run = freeze(R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}},
      "blk": {"params": {"a": {}, "b": {}, "c": {}, "d": {}}},
      "head": {"params": {"weight": {"tp": "R"}}}}})j",
                               strict);
  ASSERT_FALSE(run.result.ok());
  EXPECT_EQ(run.lines, (std::vector<std::string>{
                           "model.json: /parameters/lin.bias: 1 trainable parameter is not "
                           "covered by any planned parameter of plan.json: 'lin.bias' "
                           "(upstream's preflight refuses it at run time) (--strict makes this "
                           "an error)"}));
  EXPECT_TRUE(freeze(kEverything, strict).result.ok());
}

TEST(FreezeCoverage, NoVerifyOrAModelWithoutParametersSkipsIt) {
  const std::string plan = R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}}}})j";
  FreezeOptions no_verify;
  no_verify.verify = false;
  no_verify.strict = true;
  EXPECT_TRUE(freeze(plan, no_verify).lines.empty());
  const FreezeRun modules_only = freeze(plan, {}, R"j({"modules": {"": "Net", "lin": "Linear"}})j");
  ASSERT_TRUE(modules_only.result.ok());
  EXPECT_TRUE(modules_only.lines.empty());
}

TEST(FreezeCoverage, CountedAsCheckModelCountsThem) {
  // Keys joined across boundaries ("blk" + "a", "" + "blk.b"), one key covering by prefix
  // (head.weight), two keys joining to one name: check's findings on the meta this freeze
  // writes are exactly the parameters the warning counts.
  FreezeRun run = freeze(R"j({"modules": {"blk": {"params": {"a": {"tp": "R"}}},
      "": {"params": {"blk.b": {"tp": "R"}, "blk.a": {"tp": "R"}, "head.weight": {"tp": "R"}}}}})j");
  ASSERT_TRUE(run.result.ok());
  ASSERT_EQ(run.lines.size(), 1u);
  EXPECT_EQ(run.lines[0],
            "model.json: /parameters/lin.weight: 4 trainable parameters are not covered by any "
            "planned parameter of plan.json, first here: 'lin.weight', 'lin.bias', 'blk.c' and "
            "1 more (upstream's preflight refuses them at run time)");

  Json meta_tree = assemble_meta(run.result->frozen, nullptr);
  JsonDocument& meta_doc = test_support::keep(parse(encode_compact_json(meta_tree), "meta.json"));
  Expected<FrozenMeta> meta = decode_meta(meta_doc, "check");
  ASSERT_TRUE(meta.ok());
  JsonDocument& model_doc = test_support::keep(parse(kModel, "model.json"));
  Expected<ModelTree> model = decode_model_tree(model_doc);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(test_support::diagnostic_lines(check_meta(*meta, {}, &*model, false)),
            (std::vector<std::string>{
                "model.json: /parameters/blk.c: trainable parameter 'blk.c' is not covered by "
                "any param_plan entry of meta.json",
                "model.json: /parameters/blk.d: trainable parameter 'blk.d' is not covered by "
                "any param_plan entry of meta.json",
                "model.json: /parameters/lin.bias: trainable parameter 'lin.bias' is not "
                "covered by any param_plan entry of meta.json",
                "model.json: /parameters/lin.weight: trainable parameter 'lin.weight' is not "
                "covered by any param_plan entry of meta.json"}));
}

}  // namespace
}  // namespace hpfreeze
