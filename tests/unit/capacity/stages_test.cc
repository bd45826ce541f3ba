// Pipeline stages (pipeline.cc, staged_model.cc and the planner through them): the layer
// stack of a model, the split of its layers, docs/capacity.md's worked example, and a walk
// over every rank of every stage of random plans.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "capacity/capacity.h"
#include "capacity/pipeline.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using test_support::keep;
using Side = StagePosition::Side;
using Coords = std::vector<std::uint64_t>;

std::vector<TreeName> names(std::vector<std::pair<std::string, std::uint64_t>> list) {
  std::vector<TreeName> out;
  for (auto& [name, elements] : list) out.push_back({keep(std::move(name)), elements});
  return out;
}

// DeepSeek-V3's layout, small: an embedding, layers 0..3 of which 1..3 hold numbered
// experts, layer 4 the checkpoint's MTP block (numbered in the stack), a norm and a head.
std::vector<TreeName> deepseek_names() {
  std::vector<std::pair<std::string, std::uint64_t>> list{{"model.embed_tokens.weight", 1000}};
  for (int i = 0; i <= 4; ++i) {
    const std::string layer = "model.layers." + std::to_string(i);
    list.emplace_back(layer + ".self_attn.q_proj.weight", 100);
    if (i == 0) continue;
    for (int e = 0; e < 8; ++e) {
      list.emplace_back(layer + ".mlp.experts." + std::to_string(e) + ".up_proj.weight", 50);
    }
  }
  list.emplace_back("model.norm.weight", 10);
  list.emplace_back("lm_head.weight", 1000);
  return names(std::move(list));
}

TEST(LayerStack, TheOutermostRunNotTheExperts) {
  const std::optional<LayerStack> stack = find_layer_stack(deepseek_names());
  ASSERT_TRUE(stack.has_value());
  EXPECT_EQ(stack->prefix, "model.layers");
  EXPECT_EQ(stack->layers, 5U);  // the MTP block, model.layers.4, is a layer
  EXPECT_FALSE(stack->named);
}

TEST(LayerStack, BetweenRunsOfOneDepthTheMostElements) {
  // encoder.layers holds 3 x 10, decoder.layers 2 x 20: the decoder's; a run at depth 1
  // (heads) is outermost and wins whatever it holds; numbers with a gap make no run.
  EXPECT_EQ(find_layer_stack(names({{"encoder.layers.0.w", 10},
                                    {"encoder.layers.1.w", 10},
                                    {"encoder.layers.2.w", 10},
                                    {"decoder.layers.0.w", 20},
                                    {"decoder.layers.1.w", 20}}))
                ->prefix,
            "decoder.layers");
  EXPECT_EQ(find_layer_stack(names({{"model.layers.0.w", 100}, {"heads.0.w", 1}}))->prefix,
            "heads");
  EXPECT_EQ(find_layer_stack(names({{"model.layers.0.w", 100}, {"model.layers.2.w", 100}})),
            std::nullopt);
  // A module dump names a layer that holds no parameter: it still counts.
  const std::optional<LayerStack> with_modules =
      find_layer_stack(names({{"blocks", 0}, {"blocks.0", 0}, {"blocks.1", 0}, {"blocks.0.w", 8}}));
  ASSERT_TRUE(with_modules.has_value());
  EXPECT_EQ(with_modules->layers, 2U);
  // Leading zeros are no layer number; neither is a number first in a name.
  EXPECT_EQ(find_layer_stack(names({{"l.00.w", 1}, {"0.w", 1}})), std::nullopt);
}

TEST(LayerStack, NamedByFlag) {
  const std::vector<TreeName> model = deepseek_names();
  Expected<LayerStack> experts = named_layer_stack(model, "model.layers.1.mlp.experts");
  ASSERT_TRUE(experts.ok());
  EXPECT_EQ(experts->layers, 8U);
  EXPECT_TRUE(experts->named);
  Expected<LayerStack> none = named_layer_stack(model, "model.blocks");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.errors().front().message,
            "--pp-stack: the model has no layer 'model.blocks.0' (no module or parameter is "
            "named 'model.blocks'.N)");
  Expected<LayerStack> gap =
      named_layer_stack(names({{"s.0.w", 1}, {"s.1.w", 1}, {"s.3.w", 1}}), "s");
  ASSERT_FALSE(gap.ok());
  EXPECT_EQ(gap.errors().front().message,
            "--pp-stack: the layers of 's' are not numbered 0 to 2: 's.2' is missing");
}

TEST(LayerStack, WhereANameSits) {
  const LayerStack stack{"model.layers", 5, false};
  EXPECT_EQ(stack_layer(stack, "model.layers.4.mlp.experts.7.w"), 4U);
  EXPECT_EQ(stack_layer(stack, "model.layers.5.w"), std::nullopt);  // past the stack
  EXPECT_EQ(stack_layer(stack, "model.layers_x.0.w"), std::nullopt);
  EXPECT_EQ(stack_layer(stack, "model.layers"), std::nullopt);
  EXPECT_EQ(checkpoint_side("model.embed_tokens.weight"), Side::kBefore);
  EXPECT_EQ(checkpoint_side("transformer.wte.weight"), Side::kBefore);
  EXPECT_EQ(checkpoint_side("transformer.wpe.weight"), Side::kBefore);
  EXPECT_EQ(checkpoint_side("bert.embeddings.word_embeddings.weight"), Side::kBefore);
  EXPECT_EQ(checkpoint_side("lm_head.weight"), Side::kAfter);
  EXPECT_EQ(checkpoint_side("model.norm.weight"), Side::kAfter);
}

TEST(StageSplit, EvenFirstStagesLongerOrAsGiven) {
  const StageSplit even(61, 16, {});  // 13 stages of 4, then 3 of 3
  EXPECT_EQ(even.stages(), 16U);
  EXPECT_EQ(even.layers(0), (std::pair<std::uint64_t, std::uint64_t>{0, 3}));
  EXPECT_EQ(even.layers(12), (std::pair<std::uint64_t, std::uint64_t>{48, 51}));
  EXPECT_EQ(even.layers(13), (std::pair<std::uint64_t, std::uint64_t>{52, 54}));
  EXPECT_EQ(even.layers(15), (std::pair<std::uint64_t, std::uint64_t>{58, 60}));
  EXPECT_EQ(even.stage_of({Side::kLayer, 60}), 15U);
  EXPECT_EQ(even.stage_of({Side::kBefore, 0}), 0U);
  EXPECT_EQ(even.stage_of({Side::kAfter, 0}), 15U);
  const StageSplit given(4, 3, {0, 3, 1});
  EXPECT_EQ(given.layers(0), std::nullopt);
  EXPECT_EQ(given.stage_of({Side::kLayer, 0}), 1U);
  EXPECT_EQ(given.stage_of({Side::kLayer, 3}), 2U);
  EXPECT_EQ(given.stage_of({Side::kBefore, 0}), 0U);
}

CapacityParam param(std::string fqn, std::vector<std::uint64_t> shape, std::string dtype,
                    std::vector<std::pair<std::string, std::string_view>> placements,
                    StagePosition at, bool requires_grad = true) {
  std::vector<CapacityPlacement> axes;
  for (auto& [axis, text] : placements) {
    Expected<Placement> p = parse_placement(text);
    EXPECT_TRUE(p.ok()) << text;
    axes.push_back({keep(std::move(axis)), p ? *p : Placement::replicate()});
  }
  return CapacityParam{keep(std::move(fqn)), keep(std::move(shape)), keep(std::move(dtype)),
                       requires_grad,        keep(std::move(axes)),  at};
}

// docs/capacity.md's worked example: embed [8,4] bf16 tp=S(0); a stack of 5 layers, each
// layers.i.w [4,4] bf16 tp=S(0); norm [4] bf16; head [8,4] bf16 tp=S(0); adam (16 bytes an
// element), tp=2 pp=2. Each rank holds embed [4,4] (256 B), a layer [2,4] (128 B), norm
// (64 B), head [4,4] (256 B). Split 3 | 2: stage 0 256 + 3 x 128 = 640 B, stage 1 2 x 128
// + 64 + 256 = 576 B; whole (pp=1) 1216 B. --pp-layers 2,3: 512 B and 704 B. With head
// tied to embed and only embed in the model (a checkpoint's), stage 1 holds embed in the
// head's place: 576 B again.
TEST(Stages, WorkedExample) {
  std::vector<CapacityParam> params{param("embed", {8, 4}, "bfloat16", {{"tp", "S(0)"}}, {})};
  for (std::uint64_t i = 0; i < 5; ++i) {
    params.push_back(param("layers." + std::to_string(i) + ".w", {4, 4}, "bfloat16",
                           {{"tp", "S(0)"}}, {Side::kLayer, i}));
  }
  params.push_back(param("norm", {4}, "bfloat16", {}, {Side::kAfter, 0}));
  params.push_back(param("head", {8, 4}, "bfloat16", {{"tp", "S(0)"}}, {Side::kAfter, 0}));
  CapacityRequest request;
  request.params = params;
  request.axis_order = {"tp"};
  request.fixed = {{"tp", 2}};
  request.sweeps = {{"pp", {1, 2}}};
  request.accounting.optimizer = Optimizer::kAdam;
  request.pipeline.stack = LayerStack{"layers", 5, false};
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_TRUE(r.ok()) << r.errors().front().message;
  ASSERT_EQ(r->meshes.size(), 2U);
  EXPECT_EQ(r->meshes[0].max_rank_bytes, 1216U);
  ASSERT_EQ(r->meshes[0].stages.size(), 1U);
  EXPECT_EQ(r->meshes[0].stages[0].layers, (std::pair<std::uint64_t, std::uint64_t>{0, 4}));
  const MeshCapacity& two = r->meshes[1];
  EXPECT_EQ(two.mesh.devices, 4U);
  ASSERT_EQ(two.stages.size(), 2U);
  EXPECT_EQ(two.stages[0].max_rank_bytes, 640U);
  EXPECT_EQ(two.stages[1].max_rank_bytes, 576U);
  EXPECT_EQ(two.stages[1].layers, (std::pair<std::uint64_t, std::uint64_t>{3, 4}));
  EXPECT_EQ(two.max_rank_bytes, 640U);
  EXPECT_EQ(two.min_rank_bytes, 576U);
  EXPECT_EQ(two.max_rank, (Coords{0, 0}));  // tp, pp
  EXPECT_EQ(two.min_rank, (Coords{0, 1}));
  EXPECT_EQ(two.worst_stage(), 0U);
  EXPECT_EQ(capacity_answer_text(*r),
            "smallest mesh that divides: tp=2 pp=1 (2 devices, worst rank 1.2 KiB)");
  request.sweeps.clear();
  request.fixed.push_back({"pp", 2});
  request.accounting.pipeline.layers = {2, 3};
  Expected<CapacityResult> given = plan_capacity(request);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->meshes[0].stages[0].max_rank_bytes, 512U);
  EXPECT_EQ(given->meshes[0].max_rank_bytes, 704U);
  EXPECT_EQ(capacity_answer_text(*given),
            "smallest mesh that divides: tp=2 pp=2 (4 devices, worst rank 704 B, on stage 1 of 2)");
  request.params.pop_back();  // a checkpoint's: the head is the embedding's other name
  request.pipeline.tied = {TiedGroup{{0}, {{Side::kAfter, 0}}}};
  request.accounting.pipeline.layers.clear();
  Expected<CapacityResult> tied = plan_capacity(request);
  ASSERT_TRUE(tied.ok());
  EXPECT_EQ(tied->meshes[0].stages[0].max_rank_bytes, 640U);
  EXPECT_EQ(tied->meshes[0].stages[1].max_rank_bytes, 576U);
}

TEST(Stages, MoreStagesThanLayersOrNoStackLayNothingOut) {
  CapacityRequest request;
  request.params = {param("w", {4}, "bfloat16", {}, {Side::kLayer, 0})};
  request.fixed = {{"pp", 3}};
  request.pipeline.stack = LayerStack{"layers", 2, false};
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_TRUE(r.ok());
  const MeshCapacity& m = r->meshes.front();
  EXPECT_FALSE(m.laid_out());
  ASSERT_TRUE(m.indivisible && m.indivisible->stack_split());
  EXPECT_EQ(indivisible_text(*m.indivisible), "the 2 layers of layers by pp=3");
  EXPECT_EQ(capacity_answer_text(*r), "the mesh does not divide: the 2 layers of layers by pp=3");
  EXPECT_EQ(capacity_exit_code(*r), 1);
  request.pipeline.stack.reset();
  Expected<CapacityResult> none = plan_capacity(request);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(indivisible_text(*none->meshes.front().indivisible),
            "no layer stack to split by pp=3 (the model has no modules PREFIX.0 .. PREFIX.N; "
            "--pp-stack names one)");
  // Given the split, more stages than layers is fine: a stage may hold no layer.
  request.pipeline.stack = LayerStack{"layers", 2, false};
  request.accounting.pipeline.layers = {1, 0, 1};
  Expected<CapacityResult> given = plan_capacity(request);
  ASSERT_TRUE(given.ok());
  EXPECT_TRUE(given->meshes.front().laid_out());
  EXPECT_EQ(given->meshes.front().stages[1].layers, std::nullopt);
}

TEST(Stages, APlacementOnPpIsAnErrorWhenPpSplitsTheStack) {
  CapacityRequest request;
  request.params = {param("w", {4}, "bfloat16", {{"pp", "S(0)"}}, {})};
  request.pipeline.stack = LayerStack{"layers", 2, false};
  request.fixed = {{"pp", 1}};
  EXPECT_TRUE(plan_capacity(request).ok());  // one stage: pp splits nothing
  request.fixed = {{"pp", 2}};
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().message,
            "parameter 'w' has S(0) on axis 'pp', which splits the layer stack into pipeline "
            "stages and shards no parameter");
  EXPECT_EQ(r.errors().front().code, "HPF516");  // report keeps the planner's finding
}

}  // namespace
}  // namespace hpfreeze
