// The report's pipeline stages and the meshes it refuses (report_pipeline.cc, report_plan.cc):
// the stack of a model dump, the parameters outside it, the
// rules of --pp-layers and --pp-stack, a mesh past the rank-class cap among answered ones,
// and a zero-sized parameter beside experts. Expected numbers are worked out in comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dumps/plan.h"
#include "json/json_document.h"
#include "meta/meta.h"
#include "report/report.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using test_support::keep;
using test_support::model_json;
using test_support::parse_document;
using ::testing::ElementsAre;

Report report(const std::string& meta, const std::string& model,
              std::optional<std::vector<AxisSize>> mesh, const ReportPlanOptions& plan) {
  const JsonDocument& meta_doc = keep(parse_document(meta, "meta.json"));
  const JsonDocument& model_doc = keep(parse_document(model, "model.json"));
  Expected<ModelTree> tree = decode_model_tree(model_doc);
  Expected<FrozenMeta> decoded = decode_meta(meta_doc, "report");
  EXPECT_TRUE(tree.ok() && decoded.ok());
  return build_report(keep(std::move(*decoded)), keep(std::move(*tree)), mesh, plan);
}

std::vector<std::string> messages(const Diagnostics& list) {
  std::vector<std::string> out;
  for (const Diagnostic& d : list) out.push_back(d.message);
  return out;
}

// A model dump in registration order: embed, blocks 0..2 (a module each), norm, head; each
// [4, 2] bfloat16 (16 B), planned on tp=R.
const char* const kStackModel = R"j({"format": "hpfreeze.model/v1",
  "modules": {"": "M", "embed": "E", "blocks": "L", "blocks.0": "B", "blocks.1": "B",
              "blocks.2": "B", "norm": "N", "head": "H"},
  "parameters": {"embed.w": {"shape": [4, 2], "dtype": "bfloat16"},
                 "blocks.0.w": {"shape": [4, 2], "dtype": "bfloat16"},
                 "blocks.1.w": {"shape": [4, 2], "dtype": "bfloat16"},
                 "blocks.2.w": {"shape": [4, 2], "dtype": "bfloat16"},
                 "norm.w": {"shape": [4, 2], "dtype": "bfloat16"},
                 "head.w": {"shape": [4, 2], "dtype": "bfloat16"}}})j";
const char* const kStackMeta = R"j({"mesh_dim_names": ["tp"], "param_plan": {
  "embed": {"params": {"w": {"tp": "R"}}}, "blocks.0": {"params": {"w": {"tp": "R"}}},
  "blocks.1": {"params": {"w": {"tp": "R"}}}, "blocks.2": {"params": {"w": {"tp": "R"}}},
  "norm": {"params": {"w": {"tp": "R"}}}, "head": {"params": {"w": {"tp": "R"}}}}})j";

// pp=2 splits blocks 2 | 1: stage 0 holds embed, blocks 0 and 1 (48 B), stage 1 block 2, norm
// and head (48 B); pp=3 one block each, 32 | 16 | 48 B.
TEST(ReportStages, AModelDumpsStackAndWhatSitsOutsideIt) {
  ReportPlanOptions plan;
  plan.sweeps = {{"pp", {1, 2, 3}}};
  const Report r = report(kStackMeta, kStackModel, std::vector<AxisSize>{{"tp", 1}}, plan);
  ASSERT_TRUE(r.usage_errors.empty()) << r.usage_errors.front().message;
  ASSERT_TRUE(r.pipeline.stack.has_value());
  EXPECT_EQ(r.pipeline.stack->prefix, "blocks");
  EXPECT_EQ(r.pipeline.stack->layers, 3U);
  EXPECT_THAT(r.pipeline.first_stage, ElementsAre("embed.w"));
  EXPECT_THAT(r.pipeline.last_stage, ElementsAre("norm.w", "head.w"));
  ASSERT_EQ(r.capacity.meshes.size(), 3U);
  EXPECT_EQ(r.capacity.meshes[0].max_rank_bytes, 96U);
  EXPECT_EQ(r.capacity.meshes[1].stages[0].max_rank_bytes, 48U);
  EXPECT_EQ(r.capacity.meshes[1].stages[1].max_rank_bytes, 48U);
  EXPECT_EQ(r.capacity.meshes[2].stages[1].max_rank_bytes, 16U);
  EXPECT_EQ(r.capacity.meshes[2].max_rank_bytes, 48U);
  EXPECT_EQ(r.capacity.meshes[2].worst_stage(), 2U);
  // --pp-stack names the same stack: the report says it was named (a checkpoint's order,
  // by name, is testdata/report/stages_tied_checkpoint's).
  plan.accounting.pipeline.stack = "blocks";
  const Report named = report(kStackMeta, kStackModel, std::vector<AxisSize>{{"tp", 1}}, plan);
  EXPECT_TRUE(named.pipeline.stack->named);
}

TEST(ReportStages, PpLayersAndPpStackRules) {
  ReportPlanOptions plan;
  auto errors = [&](std::vector<AxisSize> mesh) {
    return messages(report(kStackMeta, kStackModel, mesh, plan).usage_errors);
  };
  plan.accounting.pipeline.layers = {1, 1};
  EXPECT_THAT(errors({{"pp", 2}}),
              ElementsAre("--pp-layers: the numbers sum to 2; the stack blocks has 3 layers"));
  EXPECT_THAT(errors({{"pp", 3}}),
              ElementsAre("--pp-layers: 2 numbers for pp=3; give one per stage"));
  EXPECT_THAT(errors({{"tp", 1}}),
              ElementsAre("--pp-layers: 2 numbers for pp=1; give one per stage"));
  plan.accounting.pipeline.layers = {0, 3};
  EXPECT_THAT(errors({{"pp", 2}}), ElementsAre());
  const Report given = report(kStackMeta, kStackModel, std::vector<AxisSize>{{"pp", 2}}, plan);
  EXPECT_EQ(given.capacity.meshes[0].stages[0].max_rank_bytes, 16U);  // embed alone
  EXPECT_EQ(given.capacity.meshes[0].stages[0].layers, std::nullopt);
  plan.sweeps = {{"pp", {2, 4}}};
  EXPECT_THAT(errors({{"tp", 1}}),
              ElementsAre("--pp-layers: --sweep pp has 2 sizes; one split is for one pp size"));
  plan.sweeps.clear();
  plan.accounting.pipeline.layers.clear();
  plan.accounting.pipeline.stack = "embed";
  EXPECT_THAT(errors({{"pp", 2}}),
              ElementsAre("--pp-stack: the model has no layer 'embed.0' (no module or "
                          "parameter is named 'embed'.N)"));
}

// 400 distinct uneven experts on ep=4 across dp and cp (folded): at dp=4096 the ranks cut
// across axes are too many to enumerate, so that mesh is refused and dp=2 still answered;
// when every mesh is, the flag that gave them is named (a usage error).
TEST(ReportStages, AMeshPastTheRankClassCapIsItsOwnVerdict) {
  std::vector<test_support::ModelParam> params;
  std::string plan_text;
  for (int k = 0; k < 400; ++k) {
    params.push_back({"x.e" + std::to_string(k), "[" + std::to_string(64 + k) + "]", "bfloat16"});
    plan_text +=
        (k == 0 ? "" : ", ") + std::string("\"e") + std::to_string(k) + "\": {\"ep\": \"S(-1)\"}";
  }
  const std::string meta =
      R"j({"mesh_dim_names": ["tp", "cp"], "param_plan": {"x": {"params": {)j" + plan_text + "}}}}";
  ReportPlanOptions plan;
  plan.sweeps = {{"dp", {2, 4096}}};
  const std::vector<AxisSize> fixed{{"cp", 3}, {"tp", 2}, {"ep", 4}};
  Report r = report(meta, model_json(params), fixed, plan);
  ASSERT_TRUE(r.usage_errors.empty()) << r.usage_errors.front().message;
  ASSERT_EQ(r.capacity.meshes.size(), 2U);
  EXPECT_FALSE(r.capacity.meshes[0].refused.has_value());
  ASSERT_TRUE(r.capacity.meshes[1].refused.has_value());
  EXPECT_FALSE(r.capacity.meshes[1].usable());
  ASSERT_NE(capacity_answer(r.capacity), nullptr);
  EXPECT_EQ(capacity_answer(r.capacity)->mesh.axes.back().size, 2U);  // dp
  plan.sweeps = {{"dp", {4096}}};
  r = report(meta, model_json(params), fixed, plan);
  EXPECT_THAT(messages(r.usage_errors),
              ElementsAre("--mesh and --sweep: the ranks of mesh tp=2 cp=3 ep=4 dp=4096 cut 12288 "
                          "ranks across axes into expert groups for 400 groups of parameters; "
                          "too many to compare exactly"));
}

// A parameter of [0, 0] holds nothing: beside experts whose edp is 2 the ZeRO run goes on;
// where edp is 1 the usage error says that edp is, not that dp is absent.
TEST(ReportStages, AZeroSizedParameterNeverMakesZeroSplitNothing) {
  const std::string meta = R"j({"mesh_dim_names": ["tp"], "param_plan": {
    "x": {"params": {"w": {"ep": "S(0)"}}}, "z": {"params": {"e": {"tp": "R"}}}}})j";
  const std::string model =
      model_json({{"x.w", "[4, 6]", "bfloat16"}, {"z.e", "[0, 0]", "bfloat16"}});
  ReportPlanOptions plan;
  plan.accounting.optimizer = Optimizer::kAdam;
  plan.accounting.zero.stage = 1;
  Report r = report(meta, model, std::vector<AxisSize>{{"ep", 2}, {"dp", 4}}, plan);
  ASSERT_TRUE(r.usage_errors.empty()) << r.usage_errors.front().message;
  EXPECT_FALSE(r.capacity.dense_zero);
  EXPECT_EQ(r.capacity.meshes[0].zero.expert, 2U);
  r = report(meta, model, std::vector<AxisSize>{{"ep", 2}, {"dp", 2}}, plan);
  EXPECT_THAT(messages(r.usage_errors),
              ElementsAre("--zero 1 splits nothing: every ZeRO group has size 1 on every mesh "
                          "(the expert parameters' group edp has size 1: ep takes the whole "
                          "dense region, and no other parameter has a group); add dp=N to "
                          "--mesh, or name the data-parallel axis with --zero-axis"));
}

}  // namespace
}  // namespace hpfreeze
