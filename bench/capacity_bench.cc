// The capacity planner on a DeepSeek-V3-scale parameter list (61 layers, 3 dense, 58 MoE
// with 256 experts each as separate parameters: about 46,000 planned params), built in
// memory. The sweep should cost a few times one mesh: the per-parameter work is shared.
//
//   hpfreeze_capacity_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "capacity/capacity.h"

namespace hpfreeze {
namespace {

// CapacityParam views what it names: the bench keeps it all for the process's life.
template <class T>
const T& keep(T value) {
  static std::deque<T> kept;
  return kept.emplace_back(std::move(value));
}

CapacityParam make(std::string fqn, std::vector<std::uint64_t> shape,
                   std::vector<std::pair<std::string_view, Placement>> placements,
                   std::string dtype = "bfloat16") {
  std::vector<CapacityPlacement> axes;
  for (const auto& [axis, p] : placements) axes.push_back({axis, p});
  return CapacityParam{keep(std::move(fqn)),   keep(std::move(shape)),
                       keep(std::move(dtype)), true,
                       keep(std::move(axes)),  {}};
}

// DeepSeek-V3's shapes; `folded`: the experts stacked per layer ([256, 4096, 7168] and
// [256, 7168, 2048]) and split on ep only, as HyperParallel's folded layout has them.
std::vector<CapacityParam> deepseek_v3(bool folded = false) {
  const std::uint64_t h = 7168;
  const std::uint64_t vocab = 129280;
  const auto row = Placement::shard(0);
  const auto col = Placement::shard(1);
  const auto rep = Placement::replicate();
  std::vector<CapacityParam> ps;
  ps.push_back(make("model.embed_tokens.weight", {vocab, h}, {{"tp", row}}));
  for (int i = 0; i < 61; ++i) {
    const std::string pre = "model.layers." + std::to_string(i) + ".";
    const std::string att = pre + "self_attn.";
    ps.push_back(make(pre + "input_layernorm.weight", {h}, {{"tp", rep}}));
    ps.push_back(make(att + "q_a_proj.weight", {1536, h}, {}));
    ps.push_back(make(att + "q_a_layernorm.weight", {1536}, {}));
    ps.push_back(make(att + "q_b_proj.weight", {128 * 192, 1536}, {{"tp", row}}));
    ps.push_back(make(att + "kv_a_proj_with_mqa.weight", {576, h}, {}));
    ps.push_back(make(att + "kv_a_layernorm.weight", {512}, {}));
    ps.push_back(make(att + "kv_b_proj.weight", {128 * 256, 512}, {{"tp", row}}));
    ps.push_back(make(att + "o_proj.weight", {h, 128 * 128}, {{"tp", col}}));
    ps.push_back(make(pre + "post_attention_layernorm.weight", {h}, {}));
    const std::string mlp = pre + "mlp.";
    if (i < 3) {
      ps.push_back(make(mlp + "gate_proj.weight", {18432, h}, {{"tp", row}}));
      ps.push_back(make(mlp + "up_proj.weight", {18432, h}, {{"tp", row}}));
      ps.push_back(make(mlp + "down_proj.weight", {h, 18432}, {{"tp", col}}));
      continue;
    }
    ps.push_back(make(mlp + "gate.weight", {256, h}, {{"ep", rep}}));
    ps.push_back(make(mlp + "gate.e_score_correction_bias", {256}, {}, "float32"));
    if (folded) {
      ps.push_back(make(mlp + "experts.gate_up_proj", {256, 2 * 2048, h}, {{"ep", row}}));
      ps.push_back(make(mlp + "experts.down_proj", {256, h, 2048}, {{"ep", row}}));
    }
    for (int e = 0; e < (folded ? 0 : 256); ++e) {
      const std::string ex = mlp + "experts." + std::to_string(e) + ".";
      ps.push_back(make(ex + "gate_proj.weight", {2048, h}, {{"tp", row}, {"ep", rep}}));
      ps.push_back(make(ex + "up_proj.weight", {2048, h}, {{"tp", row}, {"ep", rep}}));
      ps.push_back(make(ex + "down_proj.weight", {h, 2048}, {{"tp", col}, {"ep", rep}}));
    }
    ps.push_back(make(mlp + "shared_experts.gate_proj.weight", {2048, h}, {{"tp", row}}));
    ps.push_back(make(mlp + "shared_experts.up_proj.weight", {2048, h}, {{"tp", row}}));
    ps.push_back(make(mlp + "shared_experts.down_proj.weight", {h, 2048}, {{"tp", col}}));
  }
  ps.push_back(make("model.norm.weight", {h}, {}));
  // Uneven on purpose: tp=3 or 5 leave a smaller last rank, so the rank classes are real.
  ps.push_back(make("lm_head.weight", {vocab, h}, {{"tp", Placement::shard(0, true)}}));
  return ps;
}

CapacityRequest request(std::vector<AxisSweep> sweeps, std::vector<AxisSize> fixed,
                        ExpertLayout layout = ExpertLayout::kAxis, int zero = 0) {
  CapacityRequest r;
  r.params = deepseek_v3(layout == ExpertLayout::kFolded);
  r.axis_order = layout == ExpertLayout::kFolded ? std::vector<std::string>{"tp"}
                                                 : std::vector<std::string>{"ep", "cp", "tp"};
  r.fixed = std::move(fixed);
  r.sweeps = std::move(sweeps);
  r.accounting.optimizer = Optimizer::kAdam;
  r.accounting.zero.stage = zero;
  r.accounting.layout = layout;
  r.filter.budget = std::uint64_t{80} << 30;
  return r;
}

void run(benchmark::State& state, const CapacityRequest& r) {
  std::size_t meshes = 0;
  for (auto _ : state) {
    Expected<CapacityResult> result = plan_capacity(r);
    if (!result) throw std::runtime_error(result.errors().front().message);
    meshes = result->meshes.size();
    benchmark::DoNotOptimize(result->meshes.data());
  }
  state.counters["meshes"] = static_cast<double>(meshes);
  state.counters["params"] = static_cast<double>(r.params.size());
}

void BM_PlanOneMesh(benchmark::State& state) {
  static const CapacityRequest r = request({}, {{"ep", 8}, {"cp", 2}, {"tp", 8}});
  run(state, r);
}
BENCHMARK(BM_PlanOneMesh)->Unit(benchmark::kMillisecond);

void BM_PlanSweep64(benchmark::State& state) {
  static const CapacityRequest r =
      request({{"tp", {1, 2, 4, 8}}, {"ep", {1, 2, 4, 8}}, {"cp", {1, 2, 4, 8}}}, {});
  run(state, r);
}
BENCHMARK(BM_PlanSweep64)->Unit(benchmark::kMillisecond);

// The same 64 meshes on dp=8 with ZeRO-3 over dp x cp, in both layouts (folded: the
// experts stacked and split on ep inside the dense region, over edp with ZeRO).
void BM_PlanSweep64Zero3(benchmark::State& state) {
  static const CapacityRequest r =
      request({{"tp", {1, 2, 4, 8}}, {"ep", {1, 2, 4, 8}}, {"cp", {1, 2, 4, 8}}}, {{"dp", 8}},
              ExpertLayout::kAxis, 3);
  run(state, r);
}
BENCHMARK(BM_PlanSweep64Zero3)->Unit(benchmark::kMillisecond);

void BM_PlanSweep64FoldedZero3(benchmark::State& state) {
  static const CapacityRequest r =
      request({{"tp", {1, 2, 4, 8}}, {"ep", {1, 2, 4, 8}}, {"cp", {1, 2, 4, 8}}}, {{"dp", 8}},
              ExpertLayout::kFolded, 3);
  run(state, r);
}
BENCHMARK(BM_PlanSweep64FoldedZero3)->Unit(benchmark::kMillisecond);

// The stack of deepseek_v3(): where each parameter sits (model.layers.N in layer N, the
// embedding before the stack, the norm and the head after it).
void place_in_stack(CapacityRequest& r) {
  const std::string_view prefix = "model.layers.";
  for (CapacityParam& p : r.params) {
    if (p.fqn.starts_with(prefix)) {
      const std::string_view rest = p.fqn.substr(prefix.size());
      p.stage = {StagePosition::Side::kLayer,
                 std::stoull(std::string(rest.substr(0, rest.find('.'))))};
    } else if (p.fqn != "model.embed_tokens.weight") {
      p.stage = {StagePosition::Side::kAfter, 0};
    }
  }
  r.pipeline.stack = LayerStack{"model.layers", 61, false};
}

// The folded DeepSeek-V3 over pp, tp, ep and dp with ZeRO-1 (issue 41's sweep): 500 meshes,
// 400 of them of 2 to 16 pipeline stages; and the same 100 meshes at pp=1 alone, as the
// planner ran before stages.
void BM_PlanSweepPipelineFolded(benchmark::State& state) {
  static const CapacityRequest r = [] {
    CapacityRequest q = request({{"pp", {1, 2, 4, 8, 16}},
                                 {"tp", {1, 2, 4, 8}},
                                 {"ep", {1, 8, 16, 32, 64}},
                                 {"dp", {8, 16, 32, 64, 128}}},
                                {}, ExpertLayout::kFolded, 1);
    place_in_stack(q);
    return q;
  }();
  run(state, r);
}
BENCHMARK(BM_PlanSweepPipelineFolded)->Unit(benchmark::kMillisecond);

// The same sweep under each recipe at its usual stage (Megatron-LM's distributed optimizer,
// FSDP2 and DeepSpeed at ZeRO-3): flat shares in a mesh's unit, padded chunks, the gathered
// module.
void BM_PlanSweepPipelineFoldedRecipe(benchmark::State& state) {
  static const std::vector<CapacityRequest> requests = [] {
    std::vector<CapacityRequest> out;
    for (const auto& [recipe, stage] :
         {std::pair{Recipe::kMegatron, 1}, {Recipe::kFsdp2, 3}, {Recipe::kDeepspeed, 3}}) {
      CapacityRequest q = request({{"pp", {1, 2, 4, 8, 16}},
                                   {"tp", {1, 2, 4, 8}},
                                   {"ep", {1, 8, 16, 32, 64}},
                                   {"dp", {8, 16, 32, 64, 128}}},
                                  {}, ExpertLayout::kFolded, stage);
      q.accounting.recipe = recipe;
      place_in_stack(q);
      out.push_back(std::move(q));
    }
    return out;
  }();
  state.SetLabel(std::string(
      recipe_name(requests[static_cast<std::size_t>(state.range(0))].accounting.recipe)));
  run(state, requests[static_cast<std::size_t>(state.range(0))]);
}
BENCHMARK(BM_PlanSweepPipelineFoldedRecipe)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

void BM_PlanSweepNoPipelineFolded(benchmark::State& state) {
  static const CapacityRequest r =
      request({{"tp", {1, 2, 4, 8}}, {"ep", {1, 8, 16, 32, 64}}, {"dp", {8, 16, 32, 64, 128}}},
              {{"pp", 1}}, ExpertLayout::kFolded, 1);
  run(state, r);
}
BENCHMARK(BM_PlanSweepNoPipelineFolded)->Unit(benchmark::kMillisecond);

// Uneven meshes (tp=3, 5, 6, 7 do not divide 129280 evenly): several rank classes each.
void BM_PlanSweep64Uneven(benchmark::State& state) {
  static const CapacityRequest r =
      request({{"tp", {3, 5, 6, 7}}, {"ep", {1, 2, 4, 8}}, {"cp", {1, 2, 4, 8}}}, {});
  run(state, r);
}
BENCHMARK(BM_PlanSweep64Uneven)->Unit(benchmark::kMillisecond);

// Distinct uneven shapes on large axes (the shape of a 108 KB meta on the mesh of its own
// parallel_dims): every parameter is its own group and cuts the axes at its own ranks, so
// a walk over rank classes costs groups x runs; the planner's cost should stay about
// linear in the parameters.
std::vector<CapacityParam> uneven_shapes(std::int64_t count, bool composed) {
  std::vector<CapacityParam> ps;
  std::uint64_t seed = 1;
  auto next = [&seed](std::int64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % static_cast<std::uint64_t>(bound) + 1;
  };
  const auto uneven0 = Placement::shard(0, true);
  const auto uneven1 = Placement::shard(1, true);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string name = "m" + std::to_string(i) + ".w";
    std::vector<std::uint64_t> shape{next(5000), next(5000)};
    if (composed) {  // dp then tp on dim 0, ep on dim 1
      ps.push_back(
          make(name, std::move(shape), {{"dp", uneven0}, {"tp", uneven0}, {"ep", uneven1}}));
    } else if (i % 5 == 0) {
      ps.push_back(make(name, std::move(shape), {{"tp", uneven0}, {"ep", uneven0}}));
    } else if (i % 3 == 0) {
      ps.push_back(make(name, std::move(shape), {{"tp", uneven0}, {"ep", uneven1}}));
    } else {
      ps.push_back(make(name, std::move(shape), {{"tp", uneven0}}));
    }
  }
  return ps;
}

CapacityRequest uneven_request(std::int64_t count, bool composed, std::vector<AxisSize> fixed) {
  CapacityRequest r;
  r.params = uneven_shapes(count, composed);
  r.axis_order = {"dp", "tp", "ep"};
  r.fixed = std::move(fixed);
  return r;
}

// Arg: parameters, on dp=4 tp=4999 ep=5003.
void BM_UnevenShapesLargeAxes(benchmark::State& state) {
  const CapacityRequest r =
      uneven_request(state.range(0), false, {{"dp", 4}, {"tp", 4999}, {"ep", 5003}});
  run(state, r);
}
BENCHMARK(BM_UnevenShapesLargeAxes)->Arg(700)->Arg(1500)->Arg(15000)->Unit(benchmark::kMillisecond);

// Uneven compositions on dim 0 (dp then tp), where the earlier axis is searched run by run:
// arg parameters on dp=61 tp=67 ep=71.
void BM_UnevenCompositions(benchmark::State& state) {
  const CapacityRequest r =
      uneven_request(state.range(0), true, {{"dp", 61}, {"tp", 67}, {"ep", 71}});
  run(state, r);
}
BENCHMARK(BM_UnevenCompositions)->Arg(1500)->Arg(15000)->Unit(benchmark::kMillisecond);

// The per-parameter work alone (grouping), which the meshes share.
void BM_BuildModel(benchmark::State& state) {
  const std::vector<CapacityParam> params = deepseek_v3();
  Accounting adam;
  adam.optimizer = Optimizer::kAdam;
  for (auto _ : state) {
    Expected<CapacityModel> model = CapacityModel::build(params, {"ep", "cp", "tp"}, adam);
    if (!model) throw std::runtime_error(model.errors().front().message);
    benchmark::DoNotOptimize(model->groups());
  }
}
BENCHMARK(BM_BuildModel)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hpfreeze

BENCHMARK_MAIN();
