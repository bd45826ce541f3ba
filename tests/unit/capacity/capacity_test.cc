#include "capacity/capacity.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "capacity/accounting.h"
#include "capacity/capacity_json.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "json/json_stream.h"
#include "spec/dtypes.h"
#include "support/accounting.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

Placement placement(std::string_view text) {
  Expected<Placement> p = parse_placement(text);
  EXPECT_TRUE(p.ok()) << text;
  return p ? *p : Placement::replicate();
}

// CapacityParam views its strings and sizes: the tests keep everything they point at
// until the binary exits.
using test_support::keep;

CapacityParam param_of(std::string fqn, std::vector<std::uint64_t> shape, std::string dtype,
                       std::vector<std::pair<std::string, Placement>> placements,
                       bool requires_grad = true) {
  std::vector<CapacityPlacement> axes;
  for (auto& [axis, p] : placements) axes.push_back({keep(std::move(axis)), p});
  return CapacityParam{keep(std::move(fqn)), keep(std::move(shape)), keep(std::move(dtype)),
                       requires_grad,        keep(std::move(axes)),  {}};
}

CapacityParam param(std::string fqn, std::vector<std::uint64_t> shape, std::string dtype,
                    std::vector<std::pair<std::string, std::string_view>> placements,
                    bool requires_grad = true) {
  std::vector<std::pair<std::string, Placement>> parsed;
  for (auto& [axis, text] : placements) parsed.emplace_back(std::move(axis), placement(text));
  return param_of(std::move(fqn), std::move(shape), std::move(dtype), std::move(parsed),
                  requires_grad);
}

using test_support::counting;

Mesh mesh(std::vector<AxisSize> axes) {
  Mesh m{std::move(axes), 1};
  for (const AxisSize& a : m.axes) m.devices *= a.size;
  return m;
}

MeshCapacity evaluate(const std::vector<CapacityParam>& params, std::vector<std::string> order,
                      const Mesh& m, Optimizer optimizer = Optimizer::kNone) {
  Expected<CapacityModel> model =
      CapacityModel::build(params, std::move(order), counting(optimizer));
  EXPECT_TRUE(model.ok()) << (model ? "" : model.errors().front().message);
  if (!model) return {};
  MeshCapacity one = model->evaluate(m);
  EXPECT_FALSE(one.refused.has_value());
  return one;
}

// The planner's members of report --json, as one compact object.
std::string capacity_json(const CapacityResult& result) {
  std::string out;
  JsonStream w(out, JsonLayout::kOneLine);
  w.start_object();
  write_capacity_json(w, result);
  w.end_object();
  w.end_line();
  return out;
}

std::string build_error(const std::vector<CapacityParam>& params) {
  Expected<CapacityModel> model = CapacityModel::build(params, {}, Accounting{});
  EXPECT_FALSE(model.ok());
  return model ? std::string("<ok>") : model.errors().front().message;
}

TEST(CapacityChunking, ShardFollowsTorchChunk) {
  // [10] bf16 by tp=4: torch.chunk gives 3, 3, 3, 1 elements -> 6 and 2 bytes.
  // [5] bf16 by tp=4: chunks of 2 -> 2, 2, 1, 0 elements -> 4 and 0 bytes.
  const MeshCapacity ten =
      evaluate({param("w", {10}, "bf16", {{"tp", "S(-1)"}})}, {}, mesh({{"tp", 4}}));
  EXPECT_EQ(ten.max_rank_bytes, 6U);
  EXPECT_EQ(ten.min_rank_bytes, 2U);
  EXPECT_EQ(ten.min_rank, std::vector<std::uint64_t>{3});
  const MeshCapacity five =
      evaluate({param("w", {5}, "bf16", {{"tp", "S(-1)"}})}, {}, mesh({{"tp", 4}}));
  EXPECT_EQ(five.max_rank_bytes, 4U);
  EXPECT_EQ(five.min_rank_bytes, 0U);
  EXPECT_EQ(five.min_rank, std::vector<std::uint64_t>{3});  // ranks 3 is the only empty one
  EXPECT_TRUE(five.divisible());                            // uneven shards are declared uneven
}

TEST(CapacityChunking, StridedShardTakesEveryNthChunk) {
  // [10] f32 SS(0,2) by tp=4: torch.chunk into 8 gives 2,2,2,2,2,0,0,0; rank i holds chunks
  // i and i+4: rank 0 -> 2+2, rank 1..3 -> 2+0 elements: 16 and 8 bytes.
  const MeshCapacity m =
      evaluate({param("w", {10}, "float32", {{"tp", "SS(-1,2)"}})}, {}, mesh({{"tp", 4}}));
  EXPECT_EQ(m.max_rank_bytes, 16U);
  EXPECT_EQ(m.min_rank_bytes, 8U);
  EXPECT_EQ(m.min_rank, std::vector<std::uint64_t>{1});
}

TEST(CapacityChunking, ComposedShardsApplyInAxisOrder) {
  // [9] bf16 sharded on dim 0 by ep=2 then tp=4 (both uneven): ep gives 5 | 4, then tp
  // chunks 5 as 2,2,1,0 and 4 as 1,1,1,1. Worst rank (0,0): 2 elements = 4 bytes; best
  // (0,3): 0 bytes: the smallest rank is not on the last ep coordinate.
  const std::vector<CapacityParam> p{param("w", {9}, "bf16", {{"tp", "S(-1)"}, {"ep", "S(-1)"}})};
  const MeshCapacity m = evaluate(p, {"ep", "tp"}, mesh({{"ep", 2}, {"tp", 4}}));
  EXPECT_EQ(m.max_rank_bytes, 4U);
  EXPECT_EQ(m.min_rank_bytes, 0U);
  EXPECT_EQ(m.min_rank, (std::vector<std::uint64_t>{0, 3}));
  // The other order: tp=4 first gives 3,3,3,0, ep=2 then 2|1: worst 2 elements, best 0 at
  // tp=3 (rank (0,3) in ep-major coordinates).
  const MeshCapacity r = evaluate(p, {"tp", "ep"}, mesh({{"ep", 2}, {"tp", 4}}));
  EXPECT_EQ(r.max_rank_bytes, 4U);
  EXPECT_EQ(r.min_rank_bytes, 0U);
  EXPECT_EQ(r.min_rank, (std::vector<std::uint64_t>{0, 3}));
}

TEST(CapacityChunking, SumsOverParamsPerRank) {
  // a: [8, 6] bf16 S(0) on tp=3 -> 3,3,2 rows of 6: 36, 36, 24 bytes (uneven).
  // b: [4, 5] f32 S(1) on ep=2 -> 3 | 2 columns of 4 rows: 48 | 32 bytes.
  // c: [7] bf16 replicated everywhere: 14 bytes.
  // Ranks (tp, ep): max (0,0) = 36+48+14 = 98; min (2,1) = 24+32+14 = 70.
  const MeshCapacity m = evaluate({param("a", {8, 6}, "bfloat16", {{"tp", "S(-1)"}}),
                                   param("b", {4, 5}, "float32", {{"ep", "S(-2)"}}),
                                   param("c", {7}, "bfloat16", {{"tp", "R"}, {"ep", "R"}})},
                                  {"tp", "ep"}, mesh({{"tp", 3}, {"ep", 2}}));
  EXPECT_EQ(m.max_rank_bytes, 98U);
  EXPECT_EQ(m.min_rank_bytes, 70U);
  EXPECT_EQ(m.max_rank, (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(m.min_rank, (std::vector<std::uint64_t>{2, 1}));
}

TEST(CapacityChunking, HugeAxesNeedNoRankEnumeration) {
  // [3] bf16 on an axis of 2^40 ranks: ranks 0..2 hold 1 element, every other rank none.
  const MeshCapacity m = evaluate({param("w", {3}, "bf16", {{"tp", "S(-1)"}})}, {},
                                  mesh({{"tp", std::uint64_t{1} << 40}}));
  EXPECT_EQ(m.max_rank_bytes, 2U);
  EXPECT_EQ(m.min_rank_bytes, 0U);
  EXPECT_EQ(m.min_rank, std::vector<std::uint64_t>{3});
}

TEST(CapacityDivisibility, FirstOffendingParamAndAxis) {
  // p0 divides; p1's dim 1 (6) divides by ep=2 but its local 3 not by tp=2; p2 fails too
  // but comes later.
  const std::vector<CapacityParam> p{param("p0", {4}, "bf16", {{"tp", "S(0)"}}),
                                     param("p1", {2, 6}, "bf16", {{"tp", "S(1)"}, {"ep", "S(1)"}}),
                                     param("p2", {3}, "bf16", {{"tp", "S(0)"}})};
  const MeshCapacity m = evaluate(p, {"ep", "tp"}, mesh({{"ep", 2}, {"tp", 2}}));
  ASSERT_FALSE(m.divisible());
  EXPECT_EQ(m.indivisible->fqn, "p1");
  EXPECT_EQ(m.indivisible->dim, 1U);
  EXPECT_EQ(m.indivisible->size, 3U);
  EXPECT_EQ(m.indivisible->axis, "tp");
  EXPECT_EQ(m.indivisible->axis_size, 2U);
  // StridedShard must divide by size x split factor: 12 by 4 x 2 does not.
  const MeshCapacity s =
      evaluate({param("s", {12}, "bf16", {{"tp", "SS(0,2)"}})}, {}, mesh({{"tp", 4}}));
  ASSERT_FALSE(s.divisible());
  EXPECT_EQ(s.indivisible->split_factor, 2U);
  // A size-1 axis shards nothing and always divides.
  EXPECT_TRUE(
      evaluate({param("s", {3}, "bf16", {{"tp", "S(0)"}})}, {}, mesh({{"tp", 1}})).divisible());
}

TEST(CapacityAccounting, OptimizerStatePerElement) {
  // bf16: weight 2, grad 2, fp32 master 4, fp32 moments 4 each.
  EXPECT_EQ(bytes_per_element("bfloat16", 2, true, Optimizer::kNone), 2U);
  EXPECT_EQ(bytes_per_element("bfloat16", 2, true, Optimizer::kSgd), 8U);
  EXPECT_EQ(bytes_per_element("bfloat16", 2, true, Optimizer::kMomentum), 12U);
  EXPECT_EQ(bytes_per_element("bfloat16", 2, true, Optimizer::kAdam), 16U);
  EXPECT_EQ(bytes_per_element("bfloat16", 2, true, Optimizer::kAdamW), 16U);
  // fp32 is its own master: 4 + 4 + 2 x 4; fp64 moments are fp64: 8 + 8 + 2 x 8.
  EXPECT_EQ(bytes_per_element("float32", 4, true, Optimizer::kAdam), 16U);
  EXPECT_EQ(bytes_per_element("float64", 8, true, Optimizer::kAdam), 32U);
  // fp8: 1 + 1 + 4 + 2 x 4.
  EXPECT_EQ(bytes_per_element("float8_e5m2", 1, true, Optimizer::kAdam), 14U);
  // Frozen and integer parameters keep their weight only.
  EXPECT_EQ(bytes_per_element("bfloat16", 2, false, Optimizer::kAdam), 2U);
  EXPECT_EQ(bytes_per_element("int64", 8, true, Optimizer::kAdam), 8U);
}

// What rank 0 of a ZeRO group keeps of a local piece, the report's rank-0 rule: adam at
// stage 1 on bf16 keeps 4 bytes of an element and splits 12. A [4,4] piece over 4 ranks:
// 16 x 4 kept, then dim 0 chunked to 1 row: 4 x 12 split, 112; a 0-dim piece and a group of
// one keep everything; [5,2] over 4 ranks: torch.chunk(5, 4)'s first chunk is 2 rows.
TEST(CapacityAccounting, ZeroRank0Bytes) {
  const ElementCost cost =
      element_cost("bfloat16", 2, true, counting(Optimizer::kAdam, ZeroSharding{1, {"dp"}}));
  EXPECT_EQ(cost.kept, 4U);
  EXPECT_EQ(cost.split(), 12U);
  const std::uint64_t square[] = {4, 4};
  const std::uint64_t odd[] = {5, 2};
  const std::uint64_t empty[] = {0, 3};
  EXPECT_EQ(zero_rank0_bytes(square, cost, 4), 16U * 4 + 4 * 12);
  EXPECT_EQ(zero_rank0_bytes(square, cost, 1), 16U * 16);
  EXPECT_EQ(zero_rank0_bytes({}, cost, 4), 16U);
  EXPECT_EQ(zero_rank0_bytes(odd, cost, 4), 10U * 4 + 4 * 12);
  EXPECT_EQ(zero_rank0_bytes(empty, cost, 4), 0U);
}

// docs/capacity.md's table of recipes, a bf16 element under Adam (weight 2, master 4,
// moments 8; the gradient 2, an fp32 4, or both), as (kept, chunked, padded, flat) at each
// stage the recipe has; and a float32 one, which has no master copy.
TEST(CapacityAccounting, RecipeRows) {
  using Parts = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;
  auto parts = [](Recipe recipe, int stage, std::string_view dtype = "bfloat16") {
    Accounting a = counting(Optimizer::kAdam, ZeroSharding{stage, {"dp"}});
    a.recipe = recipe;
    const ElementCost c = element_cost(dtype, dtype == "bfloat16" ? 2 : 4, true, a);
    return Parts{c.kept, c.chunked, c.padded, c.flat};
  };
  EXPECT_EQ(parts(Recipe::kDtensor, 0), (Parts{16, 0, 0, 0}));
  EXPECT_EQ(parts(Recipe::kDtensor, 3), (Parts{0, 16, 0, 0}));
  EXPECT_EQ(parts(Recipe::kFsdp2, 1), (Parts{4, 12, 0, 0}));
  EXPECT_EQ(parts(Recipe::kFsdp2, 2), (Parts{2, 12, 2, 0}));
  EXPECT_EQ(parts(Recipe::kFsdp2, 3), (Parts{0, 12, 4, 0}));
  EXPECT_EQ(parts(Recipe::kMegatron, 0), (Parts{18, 0, 0, 0}));
  EXPECT_EQ(parts(Recipe::kMegatron, 1), (Parts{6, 0, 0, 12}));
  EXPECT_EQ(parts(Recipe::kMegatron, 1, "float32"), (Parts{8, 0, 0, 8}));
  EXPECT_EQ(parts(Recipe::kDeepspeed, 0), (Parts{16, 0, 0, 0}));
  EXPECT_EQ(parts(Recipe::kDeepspeed, 1), (Parts{4, 0, 0, 12}));
  EXPECT_EQ(parts(Recipe::kDeepspeed, 2), (Parts{2, 0, 0, 18}));
  EXPECT_EQ(parts(Recipe::kDeepspeed, 3), (Parts{0, 0, 0, 18}));
  EXPECT_EQ(parts(Recipe::kDeepspeed, 2, "float32"), (Parts{4, 0, 0, 12}));
  // What ZeRO-3 gathers, the top stage, the names.
  Accounting a = counting(Optimizer::kAdam, ZeroSharding{3, {"dp"}});
  a.recipe = Recipe::kDeepspeed;
  EXPECT_EQ(gathered_module_bytes(a), 4U);
  a.zero.stage = 2;
  EXPECT_EQ(gathered_module_bytes(a), 0U);
  a.recipe = Recipe::kMegatron;
  EXPECT_EQ(accounting_error(a),
            "--zero 2: --recipe megatron has ZeRO stages 0 without its "
            "distributed optimizer and 1 with it (the optimizer state split)");
  a.zero.stage = 1;
  EXPECT_EQ(accounting_error(a), std::nullopt);
  EXPECT_EQ(recipe_names(),
            (std::vector<std::string>{"dtensor", "fsdp2", "megatron", "deepspeed"}));
  EXPECT_EQ(parse_recipe("fsdp2"), Recipe::kFsdp2);
  EXPECT_EQ(parse_recipe("FSDP2"), std::nullopt);
}

// The report's rank-0 rule under the other ways of splitting: a [5,2] piece over 4 ranks, 2
// rows of torch.chunk's first chunk for chunked and padded bytes alike, a flat share of 10
// elements over 4 rounded down, and dim 1 when it is the split dim.
TEST(CapacityAccounting, ZeroRank0BytesOfEachSplit) {
  const std::uint64_t odd[] = {5, 2};
  EXPECT_EQ(zero_rank0_bytes(odd, ElementCost{2, 0, 4, 0}, 4), 10U * 2 + 4U * 4);
  EXPECT_EQ(zero_rank0_bytes(odd, ElementCost{6, 0, 0, 12}, 4), 10U * 6 + 120 / 4);
  EXPECT_EQ(zero_rank0_bytes(odd, ElementCost{0, 0, 0, 3}, 4), 30U / 4);
  EXPECT_EQ(zero_rank0_bytes(odd, ElementCost{0, 16, 0, 0}, 4, 1), 5U * 16);
  EXPECT_EQ(zero_split_dim(ZeroSharding{3, {"dp"}, 1}, true, 3), 1U);
  EXPECT_EQ(zero_split_dim(ZeroSharding{3, {"dp"}, 1}, true, 1), 0U);
  EXPECT_EQ(zero_split_dim(ZeroSharding{3, {"dp"}, 1}, false, 3), 0U);
}

TEST(CapacityAccounting, Dtypes) {
  EXPECT_EQ(dtype_element_size("bfloat16"), 2U);
  EXPECT_EQ(dtype_element_size("torch.float8_e4m3fn"), 1U);
  EXPECT_EQ(dtype_element_size("complex128"), 16U);
  EXPECT_EQ(dtype_element_size("long"), 8U);
  EXPECT_EQ(dtype_element_size("float4_e2m1fn_x2"), 1U);
  EXPECT_EQ(dtype_element_size("uint4"), std::nullopt);
  EXPECT_EQ(dtype_element_size("Float32"), std::nullopt);
  EXPECT_EQ(build_error({param("model.w", {2}, "fp32", {})}),
            "parameter 'model.w' has unknown dtype 'fp32'");
  EXPECT_EQ(build_error({param("model.w", {2}, "", {})}), "parameter 'model.w' has no dtype");
}

TEST(CapacityModelErrors, NameTheParameter) {
  EXPECT_EQ(build_error({param("w", {2, 3}, "bf16", {{"tp", "S(2)"}})}),
            "parameter 'w' has 2 dims; S(2) on axis 'tp' shards dim 2");
  CapacityParam twice = param("w", {2}, "bf16", {{"tp", "S(0)"}, {"tp", "R"}});
  EXPECT_EQ(build_error({twice}), "parameter 'w' has two placements on axis 'tp'");
  EXPECT_EQ(build_error({param("w", {std::uint64_t{1} << 62, 8}, "bf16", {})}),
            "parameter 'w' needs more than 2^64-1 bytes");
}

TEST(CapacityBudget, FormatBytes) {
  EXPECT_EQ(format_byte_size(1023), "1023 B");
  EXPECT_EQ(format_byte_size(1536), "1.5 KiB");
  EXPECT_EQ(format_byte_size(3435973837), "3.2 GiB");  // 3.2 x 2^30, rounded
  EXPECT_EQ(format_byte_size(1048575), "1.0 MiB");     // 1023.999 KiB rounds to 1024.0
}

TEST(CapacityMeshes, Order) {
  // Order: devices, then sizes in axis order (ep before tp here; dp, unlisted, last).
  Expected<std::vector<Mesh>> meshes =
      enumerate_meshes({"ep", "tp"}, {{"dp", 2}}, {{"tp", {4, 1, 2}}, {"ep", {2, 1}}});
  ASSERT_TRUE(meshes.ok());
  std::vector<std::string> got;
  for (const Mesh& m : *meshes) {
    std::string label;
    for (const AxisSize& a : m.axes) label += a.axis + std::to_string(a.size);
    got.push_back(label + ":" + std::to_string(m.devices));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ep1tp1dp2:2", "ep1tp2dp2:4", "ep2tp1dp2:4",
                                           "ep1tp4dp2:8", "ep2tp2dp2:8", "ep2tp4dp2:16"}));
  EXPECT_EQ(enumerate_meshes({}, {{"tp", 2}}, {{"tp", {1}}}).errors().front().message,
            "axis 'tp' is swept and also given a fixed size or another sweep");
  EXPECT_EQ(
      enumerate_meshes({}, {{"a", std::uint64_t{1} << 62}, {"b", 8}}, {}).errors().front().message,
      "mesh a=4611686018427387904 b=8 has more than 2^64-1 devices");
}

TEST(CapacityVerdict, ExitCodeAndText) {
  // w: [8, 6] bf16 S(0) on tp; n: [5] bf16 whole. tp=1: 96 + 10 = 106 bytes; tp=2: 48 + 10
  // = 58; tp=3: 8 rows do not divide by 3.
  CapacityRequest request;
  request.params = {param("model.w", {8, 6}, "bfloat16", {{"tp", "S(0)"}}),
                    param("model.n", {5}, "bfloat16", {})};
  request.sweeps = {{"tp", {3, 2, 1}}};
  request.filter.budget = 100;
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->meshes.size(), 3U);
  EXPECT_EQ(r->meshes[0].max_rank_bytes, 106U);
  EXPECT_EQ(r->meshes[0].over_by, 6U);
  EXPECT_EQ(r->meshes[1].max_rank_bytes, 58U);
  EXPECT_EQ(capacity_exit_code(*r), 0);  // tp=2 fits
  // A log scale from 46 (1 cell) to 106 (32 cells): ln(106/46) / ln(1.09) = 9.7 cells of 9 %
  // fit in 32. 58 -> 1 + round(31 ln(58/46) / ln(106/46)) = 1 + round(8.61) = 10; the
  // budget 100 -> 1 + round(28.84) = 30. tp=3's worst 3 rows (36 bytes) + 10 = 46; its
  // best 2 rows + 10 = 34.
  // The answer comes apart (the report puts it first): one line, as the mesh has one stage.
  EXPECT_EQ(render_capacity_answer(*r),
            "smallest mesh that fits: tp=2 (2 devices, worst rank 58 B of 100 B)\n");
  EXPECT_EQ(render_capacity_text(*r),
            "2 params, 106 B whole on one device, optimizer none, budget 100 B\n"
            "fits counts the weights only: no gradients or optimizer state (--optimizer), "
            "activations, all-gather and bucket buffers or allocator slack\n"
            "MESH  DEVICES  WORST RANK  BEST RANK  BAR                                VERDICT\n"
            "tp=1        1       106 B      106 B  ##############################|##  over by 6 B\n"
            "tp=2        2        58 B       58 B  ##########....................|..  fits\n"
            "tp=3        3        46 B       34 B  #.............................|..  does not "
            "divide: model.w dim 0 by tp=3\n"
            "BAR: the worst rank, log scale from 1 '#' at 46 B to 32 at 106 B; '|' marks the "
            "budget\n");
  // --fits-only: the usable rows; the answer is the same.
  request.filter.fits_only = true;
  Expected<CapacityResult> fitting = plan_capacity(request);
  const std::string text = render_capacity_text(*fitting);
  EXPECT_NE(text.find("\ntp=2 "), std::string::npos) << text;
  EXPECT_EQ(text.find("\ntp=1 "), std::string::npos) << text;
  EXPECT_EQ(text.find("\ntp=3 "), std::string::npos) << text;
  EXPECT_NE(
      capacity_json(*fitting).find(
          R"("answer":{"mesh":{"tp":2},"devices":2,"max_rank_bytes":58,"ties":0},"meshes":[{"mesh":{"tp":2})"),
      std::string::npos);
  request.filter.fits_only = false;
  request.sweeps = {{"tp", {3, 1}}};
  Expected<CapacityResult> none_fit = plan_capacity(request);
  ASSERT_TRUE(none_fit.ok());
  EXPECT_EQ(capacity_exit_code(*none_fit), 1);  // over budget, and not divisible
  EXPECT_EQ(closest_mesh(*none_fit), &none_fit->meshes[0]);
  EXPECT_EQ(capacity_answer_text(*none_fit),
            "no mesh fits the 100 B budget; closest: tp=1 (1 device, worst rank 106 B, over by "
            "6 B)");
  request.sweeps = {{"tp", {3}}};
  EXPECT_EQ(capacity_answer_text(*plan_capacity(request)),
            "the mesh does not divide: model.w dim 0 (size 8) by tp=3");
  request.sweeps = {{"tp", {3, 5}}};
  EXPECT_EQ(capacity_answer_text(*plan_capacity(request)),
            "no mesh divides; the first, tp=3, fails on model.w dim 0 (size 8) by tp=3");
  request.sweeps = {{"tp", {3, 1}}};
  request.filter.budget.reset();
  Expected<CapacityResult> no_budget = plan_capacity(request);
  ASSERT_TRUE(no_budget.ok());
  EXPECT_EQ(capacity_exit_code(*no_budget), 0);  // tp=1 divides; nothing to fit
  EXPECT_FALSE(no_budget->meshes[0].fits.has_value());
}

// The bars of one table, in mesh order (the word of each row made of '#', '.' and '|').
std::vector<std::string> bars_of(const std::string& text, std::size_t rows) {
  std::vector<std::string> bars;
  std::size_t at = text.find("VERDICT\n") + 8;
  for (std::size_t k = 0; k < rows; ++k) {
    const std::size_t end = text.find('\n', at);
    std::istringstream words(text.substr(at, end - at));
    std::string word;
    while (words >> word && word.find_first_not_of("#.|") != std::string::npos) {
    }
    bars.push_back(word);
    at = end + 1;
  }
  return bars;
}

// The bar is 32 cells whatever the range, so a table keeps its width (issue 34: a budget of
// 80 bytes against 16 GiB rows drew 224 cells): here 2^22 elements over tp from 1 to 2^20
// (worst 8 MiB down to 8 bytes) with a budget in between, marked on every row.
TEST(CapacityBar, AlwaysThirtyTwoCellsWide) {
  CapacityRequest request;
  request.params = {param("w", {std::uint64_t{1} << 22}, "bfloat16", {{"tp", "S(0)"}})};
  AxisSweep tp{"tp", {}};
  for (std::uint64_t n = 1; n <= (std::uint64_t{1} << 20); n = n * 5 / 4 + 1) tp.sizes.push_back(n);
  request.sweeps = {tp};
  for (const std::uint64_t budget :
       {std::uint64_t{3000}, std::uint64_t{80}, std::uint64_t{1} << 40}) {
    request.filter.budget = budget;
    Expected<CapacityResult> r = plan_capacity(request);
    ASSERT_TRUE(r.ok());
    for (const std::string& bar : bars_of(render_capacity_text(*r), r->meshes.size())) {
      EXPECT_EQ(bar.size(), 33U) << bar;  // 32 cells and the budget's '|'
      EXPECT_EQ(std::count(bar.begin(), bar.end(), '|'), 1) << bar;
    }
  }
}

// Over a range 32 cells of 9 % can hold (1.09^31 is about 14), rows 10 % or more apart
// never draw the same bar: [4096] bf16 over tp from 1 to 12, with no budget.
TEST(CapacityBar, TenPercentApartNeverShareABarWithinFourteenfold) {
  CapacityRequest request;
  request.params = {param("w", {4096}, "bfloat16", {{"tp", "S(-1)"}})};
  request.sweeps = {{"tp", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}};
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_TRUE(r.ok());
  const std::vector<std::string> bars = bars_of(render_capacity_text(*r), r->meshes.size());
  for (std::size_t i = 0; i < bars.size(); ++i) {
    EXPECT_EQ(bars[i].size(), 32U);
    for (std::size_t j = 0; j < bars.size(); ++j) {
      const double a = static_cast<double>(r->meshes[i].max_rank_bytes);
      const double b = static_cast<double>(r->meshes[j].max_rank_bytes);
      if (a >= 1.1 * b) {
        EXPECT_NE(bars[i], bars[j]) << a << " vs " << b;
      }
    }
  }
}

// torch.chunk of `length` into `chunks`, padded with empty chunks: the sizes, rank by rank.
std::vector<std::uint64_t> torch_chunk(std::uint64_t length, std::uint64_t chunks) {
  std::vector<std::uint64_t> out(chunks, 0);
  if (length == 0) return out;
  const std::uint64_t c = (length + chunks - 1) / chunks;
  for (std::uint64_t i = 0; i * c < length; ++i) out[i] = std::min(c, length - i * c);
  return out;
}

TEST(CapacityChunking, ManyDistinctUnevenSizesOnHugeAxesAreExact) {
  // 3 axes of 2^20 ranks, 200 distinct uneven sizes v = 2^21 + 7k + 1 each, one axis per
  // param: chunks of ceil(v / 2^20) = 3, so a rank i holds min(3, max(0, v - 3i)) and the
  // ranks from ceil(v / 3) on hold nothing. Worst rank: 3 elements of every param,
  // 600 x 3 x 2 bytes. Best: 0 bytes, first reached on each axis where its largest size
  // (k = 199: 2^21 + 1394) runs out, ceil((2^21 + 1394) / 3) = 699516.
  std::vector<CapacityParam> params;
  for (const char* axis : {"a", "b", "c"}) {
    for (std::uint64_t k = 0; k < 200; ++k) {
      params.push_back(param(std::string(axis) + std::to_string(k),
                             {(std::uint64_t{1} << 21) + 7 * k + 1}, "bf16", {{axis, "S(-1)"}}));
    }
  }
  const std::uint64_t n = std::uint64_t{1} << 20;
  const MeshCapacity m = evaluate(params, {"a", "b", "c"}, mesh({{"a", n}, {"b", n}, {"c", n}}));
  EXPECT_EQ(m.max_rank_bytes, 3600U);
  EXPECT_EQ(m.max_rank, (std::vector<std::uint64_t>{0, 0, 0}));
  EXPECT_EQ(m.min_rank_bytes, 0U);
  EXPECT_EQ(m.min_rank, (std::vector<std::uint64_t>{699516, 699516, 699516}));
}

TEST(CapacityChunking, ManyRunsOfComposedAxesAreRefusedNotEnumerated) {
  // Each param composes two uneven shards of dim 0, a (2^20 ranks) then b (3 ranks), of
  // a size v = 3 x 2^20 + 28k + 3: a's chunks are 4 and the partial one 3, on rank v / 4,
  // a different rank for each k. b gives rank 2 nothing of a 4 (2,2,0) but 1 of a 3
  // (1,1,1): the bytes do not fall along a, so a is searched run by run. 3000 sizes give
  // about 6000 runs; with a second such pair, x then y, the runs multiply past 2^22.
  std::vector<CapacityParam> params;
  const std::uint64_t n = std::uint64_t{1} << 20;
  for (std::uint64_t k = 0; k < 3000; ++k) {
    for (const auto& [outer, inner] : {std::pair{"a", "b"}, std::pair{"x", "y"}}) {
      params.push_back(param(std::string(outer) + std::to_string(k), {3 * n + 28 * k + 3}, "bf16",
                             {{outer, "S(-1)"}, {inner, "S(-1)"}}));
    }
  }
  Expected<CapacityModel> model = CapacityModel::build(params, {"a", "b", "x", "y"}, Accounting{});
  ASSERT_TRUE(model.ok());
  const MeshCapacity m = model->evaluate(mesh({{"a", n}, {"b", 3}, {"x", n}, {"y", 3}}));
  ASSERT_TRUE(m.refused.has_value());
  EXPECT_FALSE(m.laid_out());
  EXPECT_FALSE(m.usable());
  EXPECT_EQ(refused_text(m),
            "the ranks of mesh a=1048576 b=3 x=1048576 y=3 fall into more than 4194304 classes "
            "of distinct sizes; too many to compare exactly");
}

// torch.chunk's two properties the planner's search rests on (chunk_geometry.h): no rank
// holds more than rank 0, and rank 0's piece never shrinks as the chunked size grows.
TEST(CapacityChunking, RankZeroHoldsMostAndGrowsWithTheSize) {
  for (std::uint64_t n = 1; n <= 9; ++n) {
    for (std::uint64_t f = 1; f <= 4; ++f) {
      std::uint64_t previous = 0;
      for (std::uint64_t v = 0; v <= 120; ++v) {
        const std::vector<std::uint64_t> pieces = torch_chunk(v, n * f);
        std::vector<std::uint64_t> held(n, 0);
        for (std::uint64_t i = 0; i < n; ++i) {
          for (std::uint64_t r = 0; r < f; ++r) held[i] += pieces[i + r * n];
        }
        for (std::uint64_t i = 1; i < n; ++i) {
          ASSERT_LE(held[i], held[i - 1]) << v << " on " << n << " x " << f;
        }
        ASSERT_GE(held[0], previous) << v << " on " << n << " x " << f;
        previous = held[0];
        // And the planner's bytes for [v] on that axis agree.
        const Placement p =
            f == 1 ? Placement::shard(0, true) : Placement::strided_shard(0, f, true);
        const MeshCapacity m =
            evaluate({param_of("w", {v}, "uint8", {{"t", p}})}, {"t"}, mesh({{"t", n}}));
        ASSERT_EQ(m.max_rank_bytes, held[0]);
        ASSERT_EQ(m.min_rank_bytes, held[n - 1]);
      }
    }
  }
}

// Random small plans against a rank-by-rank walk: every rank, every parameter, each axis
// chunking the local size in turn. The second kind of round puts every shard on dim 0, so
// that uneven compositions (whose earlier axes the planner may have to search run by run)
// are the rule.
struct RandomRounds {
  const char* name;
  unsigned seed;
  int rounds;
  int max_params;
  int max_rank;
  int max_size;
  bool dim0_only;
  std::vector<int> max_axis;
};

void PrintTo(const RandomRounds& rounds, std::ostream* out) { *out << rounds.name; }

class CapacityRandom : public ::testing::TestWithParam<RandomRounds> {};

TEST_P(CapacityRandom, PlansMatchRankByRankWalk) {
  const RandomRounds& config = GetParam();
  std::mt19937 rng(config.seed);
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::vector<std::string> axes{"x", "y", "z"};
  for (int round = 0; round < config.rounds; ++round) {
    std::vector<CapacityParam> params;
    const int count = pick(1, config.max_params);
    for (int i = 0; i < count; ++i) {
      const std::string dtype = pick(0, 1) != 0 ? "bf16" : "float32";
      std::vector<std::uint64_t> shape;
      std::vector<std::pair<std::string, Placement>> placements;
      const int rank = pick(1, config.max_rank);
      for (int d = 0; d < rank; ++d)
        shape.push_back(static_cast<std::uint64_t>(pick(0, config.max_size)));
      for (const std::string& a : axes) {
        const int kind = pick(0, 4);
        const auto dim = static_cast<std::int64_t>(config.dim0_only ? 0 : pick(0, rank - 1));
        const bool uneven = pick(0, 1) != 0;
        if (kind == 0) continue;
        placements.emplace_back(a, kind == 1   ? Placement::replicate()
                                   : kind == 2 ? Placement::partial()
                                   : kind == 3 ? Placement::shard(dim, uneven)
                                               : Placement::strided_shard(dim, pick(1, 3), uneven));
      }
      const CapacityParam p =
          param_of("p" + std::to_string(i), std::move(shape), dtype, std::move(placements));
      params.push_back(p);
    }
    const std::vector<std::uint64_t> n{static_cast<std::uint64_t>(pick(1, config.max_axis[0])),
                                       static_cast<std::uint64_t>(pick(1, config.max_axis[1])),
                                       static_cast<std::uint64_t>(pick(1, config.max_axis[2]))};
    const MeshCapacity got =
        evaluate(params, axes, mesh({{"x", n[0]}, {"y", n[1]}, {"z", n[2]}}), Optimizer::kAdam);
    std::uint64_t max = 0;
    std::uint64_t min = UINT64_MAX;
    std::vector<std::uint64_t> max_at;
    std::vector<std::uint64_t> min_at;
    for (std::uint64_t i = 0; i < n[0]; ++i) {
      for (std::uint64_t j = 0; j < n[1]; ++j) {
        for (std::uint64_t k = 0; k < n[2]; ++k) {
          const std::uint64_t at[3] = {i, j, k};
          std::uint64_t total = 0;
          for (const CapacityParam& p : params) {
            std::vector<std::uint64_t> local(p.shape.begin(), p.shape.end());
            for (std::size_t a = 0; a < 3; ++a) {
              for (const auto& [axis, pl] : p.placements) {
                if (axis != axes[a] || !pl.has_dim()) continue;
                const auto d = static_cast<std::size_t>(pl.dim);
                const std::uint64_t f = static_cast<std::uint64_t>(pl.split_factor);
                const std::vector<std::uint64_t> pieces = torch_chunk(local[d], n[a] * f);
                std::uint64_t held = 0;
                for (std::uint64_t r = 0; r < f; ++r) held += pieces[at[a] + r * n[a]];
                local[d] = held;
              }
            }
            std::uint64_t elements = 1;
            for (std::uint64_t s : local) elements *= s;
            total += elements * 16;  // adam: 16 bytes per bf16 or fp32 element
          }
          if (total > max || max_at.empty()) {
            max = total;
            max_at = {i, j, k};
          }
          if (total < min) {
            min = total;
            min_at = {i, j, k};
          }
        }
      }
    }
    ASSERT_EQ(got.max_rank_bytes, max) << "round " << round;
    ASSERT_EQ(got.min_rank_bytes, min) << "round " << round;
    ASSERT_EQ(got.max_rank, max_at) << "round " << round;
    ASSERT_EQ(got.min_rank, min_at) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Capacity, CapacityRandom,
    ::testing::Values(RandomRounds{"AnyDims", 16, 300, 4, 3, 23, false, {5, 4, 3}},
                      RandomRounds{"ComposedOnDim0", 25, 400, 8, 2, 90, true, {7, 5, 4}}),
    [](const ::testing::TestParamInfo<RandomRounds>& rounds) { return rounds.param.name; });

// A source that makes each param into one reused buffer gives what the list gives: the
// planner keeps no view of a param past the next one (a stale view would read the bytes of
// a later, different param).
TEST(CapacitySource, MatchesTheListWithOneReusedBuffer) {
  std::vector<CapacityParam> params;
  for (int i = 0; i < 40; ++i) {
    const std::string axis = i % 3 == 0 ? "tp" : i % 3 == 1 ? "ep" : "zz";
    params.push_back(param(
        "layer" + std::to_string(i) + ".w", {static_cast<std::uint64_t>(8 + i % 5), 12},
        i % 2 == 0 ? "bf16" : "float32", {{axis, i % 4 == 0 ? "S(-1)" : "S(1)"}}, i % 7 != 0));
  }
  struct Buffer {
    std::string fqn, dtype, axis;
    std::vector<std::uint64_t> shape;
    std::vector<CapacityPlacement> placements;
  } buffer;
  CapacityRequest request;
  request.axis_order = {"tp"};
  request.fixed = {{"tp", 4}};
  request.sweeps = {{"ep", {1, 2, 8}}, {"zz", {3, 5}}};
  request.accounting.optimizer = Optimizer::kAdam;
  request.filter.budget = 4096;
  request.source.count = params.size();
  request.source.at = [&](std::size_t i) {
    const CapacityParam& p = params[i];
    buffer.fqn.assign(p.fqn);
    buffer.dtype.assign(p.dtype);
    buffer.shape.assign(p.shape.begin(), p.shape.end());
    buffer.axis.assign(p.placements[0].axis);
    buffer.placements = {{buffer.axis, p.placements[0].placement}};
    return CapacityParam{buffer.fqn,      buffer.shape,      buffer.dtype,
                         p.requires_grad, buffer.placements, {}};
  };
  Expected<CapacityResult> from_source = plan_capacity(request);
  request.source = {};
  request.params = params;
  Expected<CapacityResult> from_list = plan_capacity(request);
  ASSERT_TRUE(from_source.ok() && from_list.ok());
  EXPECT_EQ(from_source->params, 40U);
  EXPECT_EQ(from_source->meshes.size(), 6U);
  EXPECT_EQ(capacity_json(*from_source), capacity_json(*from_list));
  EXPECT_EQ(render_capacity_text(*from_source), render_capacity_text(*from_list));
}

// docs/capacity.md's hand example: a [8,4] bf16 tp=S(0), b [6] float32 tp=R, c [3,2] bf16
// tp=S(-1) (uneven dim 0) on tp=2 dp=4 with adam, 16 bytes an element for both dtypes
// (bf16 2+2+4+8, fp32 4+4+8). Rank (tp 0) holds a [4,4], b [6], c [2,2]; (tp 1) a [4,4],
// b [6], c [1,2]. ZeRO chunks dim 0 of those over dp=4: a 4 -> 1,1,1,1; b 6 -> 2,2,2,0;
// c 2 -> 1,1,0,0 and 1 -> 1,0,0,0. Per element kept | split (bf16; fp32):
//   stage 0: 16 | 0;  1: 4 | 12 (8 | 8);  2: 2 | 14 (4 | 12);  3: 0 | 16.
// Worst rank (tp 0, dp 0), best (tp 1, dp 3), by hand:
//   stage 0: 16*16 + 6*16 + 4*16 = 416;                 best 256 + 96 + 2*16 = 384
//   stage 1: (16*4 + 4*12) + (6*8 + 2*8) + (4*4 + 2*12) = 112 + 64 + 40 = 216;
//            best (64 + 48) + (48 + 0) + (2*4 + 0) = 168
//   stage 2: (32 + 56) + (24 + 24) + (8 + 28) = 172;    best 88 + 24 + 2*2 = 116
//   stage 3: 4*16 + 2*16 + 2*16 = 128;                  best 64 + 0 + 0 = 64, first at
//            (tp 0, dp 3) in row-major order (tp 1, dp 3 holds 64 too)
TEST(CapacityZero, HandExampleEveryStage) {
  const std::vector<CapacityParam> params = {param("a", {8, 4}, "bfloat16", {{"tp", "S(0)"}}),
                                             param("b", {6}, "float32", {{"tp", "R"}}),
                                             param("c", {3, 2}, "bfloat16", {{"tp", "S(-1)"}})};
  const std::uint64_t worst[] = {416, 216, 172, 128};
  const std::uint64_t best[] = {384, 168, 116, 64};
  for (int stage = 0; stage <= kMaxZeroStage; ++stage) {
    Expected<CapacityModel> model =
        CapacityModel::build(params, {"tp", "dp"}, counting(Optimizer::kAdam, {stage, {"dp"}}));
    ASSERT_TRUE(model.ok());
    const MeshCapacity m = model->evaluate(mesh({{"tp", 2}, {"dp", 4}}));
    ASSERT_FALSE(m.refused.has_value());
    EXPECT_EQ(m.max_rank_bytes, worst[stage]) << stage;
    EXPECT_EQ(m.min_rank_bytes, best[stage]) << stage;
    EXPECT_TRUE(m.divisible()) << stage;   // the split never makes a mesh indivisible
    EXPECT_EQ(model->full_bytes(), 704u);  // (32 + 6 + 6) x 16, whatever the stage
  }
  Expected<CapacityModel> three =
      CapacityModel::build(params, {"tp", "dp"}, counting(Optimizer::kAdam, {3, {"dp"}}));
  EXPECT_EQ(three->evaluate(mesh({{"tp", 2}, {"dp", 4}})).min_rank,
            (std::vector<std::uint64_t>{0, 3}));
}

// What is split and what is not: a parameter the plan shards on the ZeRO axis keeps its
// plan (8 rows by dp=2 S(0): 4 rows, 16 bytes each with adam); a 0-dim one is whole; a
// frozen one loses only its weight at stage 3; without the axis in the mesh nothing moves.
TEST(CapacityZero, WhatIsSplit) {
  const std::vector<CapacityParam> params = {
      param("e", {8}, "float32", {{"dp", "S(0)"}}), param("scale", {}, "float32", {}),
      param("frozen", {6}, "bfloat16", {}, /*requires_grad=*/false)};
  auto worst = [&](int stage, const Mesh& m) {
    Expected<CapacityModel> model =
        CapacityModel::build(params, {"dp"}, counting(Optimizer::kAdam, {stage, {"dp"}}));
    return model->evaluate(m).max_rank_bytes;
  };
  // e: 4 x 16 = 64; scale: 16; frozen: 6 x 2 = 12 (weight only).
  EXPECT_EQ(worst(0, mesh({{"dp", 2}})), 64u + 16 + 12);
  EXPECT_EQ(worst(2, mesh({{"dp", 2}})), 64u + 16 + 12);  // frozen: no gradient, no state
  EXPECT_EQ(worst(3, mesh({{"dp", 2}})), 64u + 16 + 3 * 2);
  EXPECT_EQ(worst(3, mesh({{"dp", 4}})), 2u * 16 + 16 + 2 * 2);  // e 8 -> 2; frozen 6 -> 2
  EXPECT_EQ(worst(3, mesh({})), 8u * 16 + 16 + 12);
}

// Flat shares are counted in units of 1/L byte, L the least common multiple of the flat
// groups' sizes: 18 B x 2^40 elements over dp = 3 is 6,597,069,766,656 B a rank, exact;
// over dp = 2^21, in units of 2^-21 byte, the bytes pass 2^64-1 and the mesh is refused,
// as a mesh of too many rank classes is, rather than counted wrong.
TEST(CapacityZero, FlatSharesInAMeshsUnit) {
  Accounting a = counting(Optimizer::kAdam, {1, {"dp"}});
  a.recipe = Recipe::kMegatron;
  Expected<CapacityModel> model =
      CapacityModel::build({param("w", {std::uint64_t{1} << 40}, "bfloat16", {})}, {"dp"}, a);
  ASSERT_TRUE(model.ok());
  const MeshCapacity three = model->evaluate(mesh({{"dp", 3}}));
  EXPECT_EQ(three.max_rank_bytes, (std::uint64_t{6} << 40) + (std::uint64_t{4} << 40));
  EXPECT_EQ(three.unsplit_bytes, std::uint64_t{6} << 40);
  const MeshCapacity wide = model->evaluate(mesh({{"dp", std::uint64_t{1} << 21}}));
  EXPECT_EQ(refused_text(wide),
            "the ranks of mesh dp=2097152 divide flat buffers over groups whose sizes need a "
            "unit too fine for 2^64-1 of their bytes; too many to compare exactly");
}

// A fixture's position of a parameter against the stack: ["before"], ["layer", N], ["after"].
StagePosition position(simdjson::dom::array at) {
  const std::string_view side = at.at(0);
  if (side == "layer") return {StagePosition::Side::kLayer, std::uint64_t(at.at(1))};
  return {side == "after" ? StagePosition::Side::kAfter : StagePosition::Side::kBefore, 0};
}

// A fixture case's stack, --pp-layers, tied groups and --reserve.
void read_stages(simdjson::dom::element c, CapacityRequest& request) {
  simdjson::dom::element stack;
  if (c["stack"].get(stack) == simdjson::SUCCESS) {
    request.pipeline.stack =
        LayerStack{std::string(std::string_view(stack["prefix"])), std::uint64_t(stack["layers"])};
  }
  simdjson::dom::array layers;
  if (c["pp_layers"].get(layers) == simdjson::SUCCESS) {
    for (std::uint64_t n : layers) request.accounting.pipeline.layers.push_back(n);
  }
  simdjson::dom::array tied;
  if (c["tied"].get(tied) == simdjson::SUCCESS) {
    for (simdjson::dom::element t : tied) {
      TiedGroup group;
      for (std::uint64_t i : t["params"].get_array()) group.params.push_back(i);
      for (simdjson::dom::array at : t["elsewhere"].get_array())
        group.elsewhere.push_back(position(at));
      request.pipeline.tied.push_back(std::move(group));
    }
  }
  std::string_view reserve;
  if (c["reserve"].get(reserve) == simdjson::SUCCESS)
    request.filter.reserve = *parse_byte_size(reserve);
}

// The cases computed by tests/e2e/capacity_model.py, which visits every rank and chunks
// like torch; the planner's members of report --json must match its bytes, and the
// result its totals.
TEST(CapacityFixture, MatchesIndependentCalculator) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      parser.load(std::string(HPFREEZE_TESTDATA_DIR) + "/report/sweep/cases.json");
  int cases = 0;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    const std::string name{std::string_view(c["name"])};
    CapacityRequest request;
    for (std::string_view a : c["axis_order"].get_array()) request.axis_order.emplace_back(a);
    for (simdjson::dom::array f : c["fixed"].get_array()) {
      request.fixed.push_back({std::string(std::string_view(f.at(0))), uint64_t(f.at(1))});
    }
    for (simdjson::dom::array s : c["sweeps"].get_array()) {
      AxisSweep sweep{std::string(std::string_view(s.at(0))), {}};
      for (std::uint64_t v : s.at(1).get_array()) sweep.sizes.push_back(v);
      request.sweeps.push_back(std::move(sweep));
    }
    request.accounting.optimizer = *parse_optimizer(std::string_view(c["optimizer"]));
    if (!c["budget"].is_null())
      request.filter.budget = *parse_byte_size(std::string_view(c["budget"]));
    simdjson::dom::array zero;
    if (c["zero"].get(zero) == simdjson::SUCCESS) {
      request.accounting.zero.stage = int(int64_t(zero.at(0)));
      request.accounting.zero.axes.clear();
      for (std::string_view a : zero.at(1).get_array())
        request.accounting.zero.axes.emplace_back(a);
    }
    std::string_view layout;
    if (c["layout"].get(layout) == simdjson::SUCCESS)
      request.accounting.layout = *parse_expert_layout(layout);
    std::string_view recipe;
    if (c["recipe"].get(recipe) == simdjson::SUCCESS)
      request.accounting.recipe = *parse_recipe(recipe);
    std::uint64_t expert_dim = 0;
    if (c["expert_dim"].get(expert_dim) == simdjson::SUCCESS)
      request.accounting.zero.expert_dim = expert_dim;
    read_stages(c, request);
    for (simdjson::dom::element p : c["params"].get_array()) {
      std::vector<std::uint64_t> shape;
      for (std::uint64_t d : p["shape"].get_array()) shape.push_back(d);
      std::vector<std::pair<std::string, Placement>> placements;
      for (simdjson::dom::array pl : p["placements"].get_array()) {
        placements.emplace_back(std::string(std::string_view(pl.at(0))),
                                placement(std::string_view(pl.at(1))));
      }
      CapacityParam cp = param_of(std::string(std::string_view(p["fqn"])), std::move(shape),
                                  std::string(std::string_view(p["dtype"])), std::move(placements),
                                  bool(p["requires_grad"]));
      cp.stage = position(p["stage"]);
      request.params.push_back(cp);
    }
    Expected<CapacityResult> result = plan_capacity(request);
    ASSERT_TRUE(result.ok()) << name << ": " << result.errors().front().message;
    EXPECT_EQ(capacity_json(*result), std::string(std::string_view(c["expected_json"])) + "\n")
        << name;
    simdjson::dom::element totals = c["expected_totals"];
    std::vector<std::string> order;
    for (std::string_view axis : totals["axis_order"].get_array()) order.emplace_back(axis);
    EXPECT_EQ(result->axis_order, order) << name;
    EXPECT_EQ(result->params, std::uint64_t(totals["params"])) << name;
    EXPECT_EQ(result->full_bytes, std::uint64_t(totals["full_bytes"])) << name;
    EXPECT_EQ(capacity_exit_code(*result), int64_t(c["expected_exit"])) << name;
    const simdjson::dom::element floor = totals["unsplit_floor"];
    EXPECT_EQ(result->unsplit_floor,
              floor.is_null() ? std::nullopt : std::optional(std::uint64_t(floor)))
        << name;
    ++cases;
  }
  EXPECT_EQ(cases, 39);
}

}  // namespace
}  // namespace hpfreeze
