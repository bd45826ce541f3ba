// The two layouts of ep and the ZeRO groups (rank_layout.cc, and the planner through it):
// hand-computed cases (docs/capacity.md's worked examples) and a walk over every rank of
// both views of random plans.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "capacity/capacity.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "spec/dtypes.h"
#include "support/accounting.h"

namespace hpfreeze {
namespace {

template <class T>
const T& keep(T value) {
  static std::deque<T> kept;
  return kept.emplace_back(std::move(value));
}

Placement placement(std::string_view text) {
  Expected<Placement> p = parse_placement(text);
  EXPECT_TRUE(p.ok()) << text;
  return p ? *p : Placement::replicate();
}

CapacityParam param(std::string fqn, std::vector<std::uint64_t> shape, std::string dtype,
                    std::vector<std::pair<std::string, std::string_view>> placements,
                    bool requires_grad = true) {
  std::vector<CapacityPlacement> axes;
  for (auto& [axis, text] : placements) axes.push_back({keep(std::move(axis)), placement(text)});
  return CapacityParam{keep(std::move(fqn)), keep(std::move(shape)), keep(std::move(dtype)),
                       requires_grad,        keep(std::move(axes)),  {}};
}

using test_support::counting;

Mesh mesh(std::vector<AxisSize> axes, ExpertLayout layout) {
  Mesh m{std::move(axes), 1};
  for (const AxisSize& a : m.axes) {
    if (layout == ExpertLayout::kAxis || a.axis != "ep") m.devices *= a.size;
  }
  return m;
}

MeshCapacity evaluate(const std::vector<CapacityParam>& params, std::vector<std::string> order,
                      const Mesh& m, ExpertLayout layout, int stage,
                      std::vector<std::string> zero_axes = {"dp", "cp"}) {
  Expected<CapacityModel> model = CapacityModel::build(
      params, std::move(order), counting(Optimizer::kAdam, {stage, std::move(zero_axes)}, layout));
  EXPECT_TRUE(model.ok()) << (model ? "" : model.errors().front().message);
  if (!model) return {};
  MeshCapacity one = model->evaluate(m);
  EXPECT_FALSE(one.refused.has_value()) << one.refused.value_or("");
  return one;
}

using Coords = std::vector<std::uint64_t>;

// docs/capacity.md's worked example: mesh_dim_names ["tp"], dp=1 cp=1 tp=4 ep=2 pp=1;
// m.a [8,4] bf16 tp=S(0); stacked experts x.w [4,6,2] bf16 ep=S(0) tp=R; adam, 16 bytes an
// element. Folded: 4 devices, the dense region tp=4 re-sliced as edp=2 x ep=2. Every rank
// holds m.a [2,4] (8 x 16 = 128 B) and x.w [2,6,2] (24 x 16 = 384 B): 512 B. With ZeRO-3
// the dense group dp x cp has 1 rank (128 B stays) and the experts' edp 2: x.w's dim 0 of 2
// splits 1 | 1, 12 x 16 = 192 B: 320 B. Named as an axis, ep multiplies: 8 devices, 512 B.
TEST(FoldedLayout, WorkedExample) {
  const std::vector<CapacityParam> params = {
      param("m.a", {8, 4}, "bfloat16", {{"tp", "S(0)"}}),
      param("x.w", {4, 6, 2}, "bfloat16", {{"ep", "S(0)"}, {"tp", "R"}})};
  const std::vector<AxisSize> sizes = {{"tp", 4}, {"ep", 2}, {"cp", 1}, {"dp", 1}, {"pp", 1}};
  const Mesh folded = mesh(sizes, ExpertLayout::kFolded);
  EXPECT_EQ(folded.devices, 4U);
  const MeshCapacity none = evaluate(params, {"tp"}, folded, ExpertLayout::kFolded, 0);
  EXPECT_EQ(none.max_rank_bytes, 512U);
  EXPECT_EQ(none.min_rank_bytes, 512U);
  ASSERT_TRUE(none.expert.has_value());
  EXPECT_EQ(none.expert->edp, 2U);
  EXPECT_EQ(none.expert->ep, 2U);
  const MeshCapacity three = evaluate(params, {"tp"}, folded, ExpertLayout::kFolded, 3);
  EXPECT_EQ(three.max_rank_bytes, 320U);
  EXPECT_EQ(three.min_rank_bytes, 320U);
  // What ZeRO-3 gathers whole for compute is the plan's piece: x.w [2,6,2] bf16, 48 B.
  EXPECT_EQ(three.largest_gathered, 48U);
  EXPECT_EQ(three.largest_gathered_fqn, "x.w");
  const Mesh axis = mesh(sizes, ExpertLayout::kAxis);
  EXPECT_EQ(axis.devices, 8U);
  const MeshCapacity named = evaluate(params, {"tp", "ep"}, axis, ExpertLayout::kAxis, 0);
  EXPECT_EQ(named.max_rank_bytes, 512U);
  EXPECT_FALSE(named.expert.has_value());
  // Named as an axis, --zero 3 splits nothing: a usage error that says so.
  CapacityRequest request;
  request.params = params;
  request.axis_order = {"tp", "ep"};
  request.fixed = sizes;
  request.accounting.optimizer = Optimizer::kAdam;
  request.accounting.zero.stage = 3;
  Expected<CapacityResult> refused = plan_capacity(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.errors().front().error_class, ErrorClass::kIo);
  EXPECT_EQ(refused.errors().front().message,
            "--zero 3 splits nothing: every ZeRO group has size 1 on every mesh (the "
            "data-parallel axes dp, cp are absent or of size 1); add dp=N to --mesh, or name "
            "the data-parallel axis with --zero-axis");
  request.accounting.layout = ExpertLayout::kFolded;
  Expected<CapacityResult> result = plan_capacity(request);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->meshes.front().max_rank_bytes, 320U);
  EXPECT_EQ(result->meshes.front().zero.expert, 2U);
  EXPECT_EQ(result->meshes.front().zero.dense, 1U);
}

// docs/capacity.md's second example, every stage in both layouts: dp=4 cp=2 ep=4;
// d [5,3] bf16 cp=S(-1), n [7] float32 (replicated), e [10,2] bf16 ep=S(-1); adam, 16 bytes
// an element (kept | split: bf16 16|0, 4|12, 2|14, 0|16; fp32 16|0, 8|8, 4|12, 0|16).
// Folded: the dense region (dp, cp) has 8 ranks r = 2 dp + cp, re-sliced as edp = r / 4,
// ep = r % 4 (ep cuts dp in two). d: cp 0 [3,3], cp 1 [2,3]; its ZeRO group is dp alone
// (the plan shards it on cp): dim 0 3 -> 1,1,1,0 and 2 -> 1,1,0,0 over dp. n: group dp x cp,
// 7 -> 1 on r < 7, 0 on r = 7. e: ep 10 -> 3,3,3,1; folded over edp=2 3 -> 2,1 and 1 -> 1,0;
// as an axis over dp x cp = 8, 3 -> 1,1,1,0.. and 1 -> 1,0...
//   stage 0: worst 144 + 112 + 96 = 352; best r = 3 (dp 1, cp 1; edp 0, ep 3): 96 + 112 + 32
//            = 240; as an axis the same bytes, first at (cp 1, dp 0, ep 3).
//   stage 1: folded worst 72 + 64 + 72 = 208 (e: kept 24 + 12 x 2 x 2); best r = 7: 24 + 56 +
//            8 = 88. Axis worst 72 + 64 + 48 = 184 (e's group has 8 ranks: dim 0 3 -> 1);
//            best (cp 1, dp 3, ep 3) 88.
//   stage 2: folded worst 60 + 40 + 68 = 168, best r = 7: 12 + 28 + 4 = 44; axis worst
//            60 + 40 + 40 = 140, best 44 at (cp 1, dp 3, ep 3).
//   stage 3: folded worst 48 + 16 + 64 = 128, best 0 first at r = 7; axis worst 48 + 16 + 32
//            = 96, best 0 first at (cp 1, dp 3, ep 0).
TEST(FoldedLayout, SecondExampleEveryStageBothLayouts) {
  const std::vector<CapacityParam> params = {param("d", {5, 3}, "bfloat16", {{"cp", "S(-1)"}}),
                                             param("n", {7}, "float32", {}),
                                             param("e", {10, 2}, "bfloat16", {{"ep", "S(-1)"}})};
  const std::vector<AxisSize> sizes = {{"cp", 2}, {"dp", 4}, {"ep", 4}};
  struct Row {
    std::uint64_t worst, best;
    Coords best_at;  // per mesh axis: cp, dp, ep (folded: ep's expert coordinate)
  };
  const Row folded[] = {
      {352, 240, {1, 1, 3}}, {208, 88, {1, 3, 3}}, {168, 44, {1, 3, 3}}, {128, 0, {1, 3, 3}}};
  const std::uint64_t folded_edp[] = {0, 1, 1, 1};
  const Row axis[] = {
      {352, 240, {1, 0, 3}}, {184, 88, {1, 3, 3}}, {140, 44, {1, 3, 3}}, {96, 0, {1, 3, 0}}};
  for (int stage = 0; stage <= kMaxZeroStage; ++stage) {
    const auto s = static_cast<std::size_t>(stage);
    const MeshCapacity f =
        evaluate(params, {"cp"}, mesh(sizes, ExpertLayout::kFolded), ExpertLayout::kFolded, stage);
    EXPECT_EQ(f.mesh.devices, 8U);
    EXPECT_EQ(f.max_rank_bytes, folded[s].worst) << stage;
    EXPECT_EQ(f.min_rank_bytes, folded[s].best) << stage;
    EXPECT_EQ(f.min_rank, folded[s].best_at) << stage;
    EXPECT_EQ(f.max_rank, (Coords{0, 0, 0})) << stage;
    ASSERT_TRUE(f.expert.has_value());
    EXPECT_EQ((Coords{f.expert->min_rank[0], f.expert->min_rank[1]}),
              (Coords{folded_edp[s], folded[s].best_at[2]}))
        << stage;
    const MeshCapacity a =
        evaluate(params, {"cp"}, mesh(sizes, ExpertLayout::kAxis), ExpertLayout::kAxis, stage);
    EXPECT_EQ(a.mesh.devices, 32U);
    EXPECT_EQ(a.max_rank_bytes, axis[s].worst) << stage;
    EXPECT_EQ(a.min_rank_bytes, axis[s].best) << stage;
    EXPECT_EQ(a.min_rank, axis[s].best_at) << stage;
  }
}

TEST(FoldedLayout, EpThatDoesNotDivideTheDenseRegionLaysNothingOut) {
  const std::vector<CapacityParam> params = {param("w", {6}, "bf16", {{"ep", "S(0)"}})};
  const MeshCapacity m =
      evaluate(params, {"tp"}, mesh({{"tp", 4}, {"ep", 3}, {"pp", 2}}, ExpertLayout::kFolded),
               ExpertLayout::kFolded, 0);
  ASSERT_TRUE(m.indivisible.has_value());
  EXPECT_TRUE(m.indivisible->dense_region());
  EXPECT_EQ(m.indivisible->size, 4U);
  EXPECT_EQ(m.indivisible->axis_size, 3U);
  EXPECT_EQ(indivisible_text(*m.indivisible), "the dense region tp (4 ranks) by ep=3");
  EXPECT_FALSE(m.expert.has_value());
  EXPECT_EQ(m.mesh.devices, 8U);  // pp x tp; ep multiplies nothing
}

TEST(FoldedLayout, ADenseRegionOfOneRankIsOneRank) {
  const std::vector<CapacityParam> params = {param("w", {6}, "bf16", {{"ep", "S(0)"}})};
  const MeshCapacity m =
      evaluate(params, {"tp"}, mesh({{"tp", 1}, {"ep", 8}}, ExpertLayout::kFolded),
               ExpertLayout::kFolded, 0);
  ASSERT_TRUE(m.indivisible.has_value());
  EXPECT_EQ(indivisible_text(*m.indivisible), "the dense region tp (1 rank) by ep=8");
}

TEST(FoldedLayout, AnExpertSplitOnAnotherAxisIsAnError) {
  Expected<CapacityModel> model = CapacityModel::build(
      {param("x.w", {4, 6}, "bf16", {{"ep", "S(0)"}, {"tp", "S(1)"}, {"cp", "R"}})}, {"tp"},
      counting(Optimizer::kNone, {}, ExpertLayout::kFolded));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.errors().front().message,
            "parameter 'x.w' is an expert parameter (a Shard on axis 'ep') and has S(1) on axis "
            "'tp'; the folded layout splits experts on ep only");
  // As an axis, the same plan is fine.
  EXPECT_TRUE(CapacityModel::build({param("x.w", {4, 6}, "bf16", {{"ep", "S(0)"}, {"tp", "S(1)"}})},
                                   {"tp"}, Accounting{})
                  .ok());
}

// ep=4 across dp=4096 and cp=3 (the dense region 4096 x 3 x 2 ranks, ep cutting inside the
// (dp, cp) block of 12288 ranks): that block is one digit enumerated value by value in every
// group of experts, 400 distinct ones here: refused, not slow. A small such mesh is counted.
TEST(FoldedLayout, ACutAcrossAxesIsBoundedNotSlow) {
  std::vector<CapacityParam> params;
  for (std::uint64_t k = 0; k < 400; ++k) {
    params.push_back(param("e" + std::to_string(k), {64 + k}, "bf16", {{"ep", "S(-1)"}}));
  }
  Expected<CapacityModel> model =
      CapacityModel::build(params, {"tp"}, counting(Optimizer::kNone, {}, ExpertLayout::kFolded));
  ASSERT_TRUE(model.ok());
  const Mesh big = mesh({{"dp", 4096}, {"cp", 3}, {"tp", 2}, {"ep", 4}}, ExpertLayout::kFolded);
  const MeshCapacity refused = model->evaluate(big);
  ASSERT_TRUE(refused.refused.has_value());
  EXPECT_EQ(refused_text(refused),
            "the ranks of mesh dp=4096 cp=3 tp=2 ep=4 cut 12288 ranks across axes into expert "
            "groups for 400 groups of parameters; too many to compare exactly");
  const Mesh small = mesh({{"dp", 2}, {"cp", 3}, {"tp", 2}, {"ep", 4}}, ExpertLayout::kFolded);
  EXPECT_FALSE(model->evaluate(small).refused.has_value());
  // One group is counted as one ("for 1 groups of parameters" before).
  Expected<CapacityModel> one = CapacityModel::build(
      {params.front()}, {"tp"}, counting(Optimizer::kNone, {}, ExpertLayout::kFolded));
  ASSERT_TRUE(one.ok());
  const Mesh bigger =
      mesh({{"dp", 524288}, {"cp", 3}, {"tp", 2}, {"ep", 4}}, ExpertLayout::kFolded);
  const MeshCapacity one_refused = one->evaluate(bigger);
  ASSERT_TRUE(one_refused.refused.has_value());
  EXPECT_EQ(refused_text(one_refused),
            "the ranks of mesh dp=524288 cp=3 tp=2 ep=4 cut 1572864 ranks across axes into expert "
            "groups for 1 group of parameters; too many to compare exactly");
}

// A ZeRO stage on parameters that hold nothing claims nothing: no usage error.
TEST(ZeroGroups, NothingToSplitIsNoError) {
  CapacityRequest request;
  request.params = {param("w", {0, 4}, "bf16", {})};
  request.fixed = {{"tp", 2}};
  request.accounting.zero.stage = 3;
  EXPECT_TRUE(plan_capacity(request).ok());
}

TEST(ZeroGroups, ANamedAxisNoMeshHasIsAUsageError) {
  CapacityRequest request;
  request.params = {param("w", {8}, "bf16", {})};
  request.fixed = {{"dp", 2}};
  request.accounting.zero = ZeroSharding{2, {"dp", "fsdp"}};
  request.accounting.zero_axes_named = true;
  // Stage 2 with the optimizer none splits no byte, yet dp=2 is a group: not "nothing".
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().message,
            "--zero-axis: no mesh has axis 'fsdp'; add it to --mesh or --sweep, or name the "
            "axis the data-parallel ranks are on");
  request.accounting.zero_axes_named = false;  // the default list: an absent axis counts as size 1
  EXPECT_TRUE(plan_capacity(request).ok());
}

// Issue 34: a zero-sized dim beside one of 2^63 or more holds nothing; never an error.
TEST(ZeroSizedDims, HoldNothingWhateverTheOtherDims) {
  const std::uint64_t huge[] = {std::uint64_t{1} << 63, UINT64_MAX};
  for (std::uint64_t big : huge) {
    Expected<CapacityModel> model = CapacityModel::build(
        {param("w", {0, big}, "float32", {{"tp", "S(1)"}}), param("v", {3}, "bf16", {})}, {"tp"},
        counting(Optimizer::kAdam, {3, {"dp"}}));
    ASSERT_TRUE(model.ok()) << model.errors().front().message;
    EXPECT_EQ(model->full_bytes(), 48U);  // v alone: 3 x 16
  }
}

// Ties for the smallest mesh are named: tp=1 dp=4 is the answer (sizes in axis order, tp
// first), and tp=2 dp=2, tp=4 dp=1 fit with 4 devices too.
TEST(Answer, NamesTheTies) {
  CapacityRequest request;
  request.params = {param("w", {8, 4}, "bf16", {{"tp", "S(0)"}})};
  request.axis_order = {"tp"};
  request.sweeps = {{"tp", {1, 2, 4}}, {"dp", {1, 2, 4}}};
  request.accounting.optimizer = Optimizer::kAdam;
  request.accounting.zero.stage = 3;
  request.filter.budget = 140;
  Expected<CapacityResult> r = plan_capacity(request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(capacity_ties(*r), 2U);
  // tp=1 dp=4: 8 rows over dp=4, 2 x 4 x 16 = 128 bytes.
  EXPECT_EQ(capacity_answer_text(*r),
            "smallest mesh that fits: tp=1 dp=4 (4 devices, worst rank 128 B of 140 B), and 2 "
            "more with 4 devices");
  r->no_answer = "3 planned parameters are not in the model";
  EXPECT_EQ(capacity_answer(*r), nullptr);
  EXPECT_EQ(capacity_answer_text(*r), "no answer: 3 planned parameters are not in the model");
}

std::vector<std::uint64_t> torch_chunk(std::uint64_t length, std::uint64_t chunks) {
  std::vector<std::uint64_t> out(chunks, 0);
  if (length == 0) return out;
  const std::uint64_t c = (length + chunks - 1) / chunks;
  for (std::uint64_t i = 0; i * c < length; ++i) out[i] = std::min(c, length - i * c);
  return out;
}

std::uint64_t held(std::uint64_t length, const Placement& p, std::uint64_t n, std::uint64_t at) {
  const auto f = static_cast<std::uint64_t>(
      p.kind == PlacementKind::kStridedShard ? std::max<std::int64_t>(1, p.split_factor) : 1);
  const std::vector<std::uint64_t> pieces = torch_chunk(length, n * f);
  std::uint64_t out = 0;
  for (std::uint64_t r = 0; r < f; ++r) out += pieces[at + r * n];
  return out;
}

// Random plans on random meshes of pp, dp, cp, tp and ep, every ZeRO stage, both layouts,
// against a walk over every rank: the global rank numbers ranks pp first, then the dense
// region (dp, cp, tp) row-major, re-sliced as (edp, ep) in the folded layout; the ZeRO
// group of a dense param is dp x cp less the axes it is sharded on, an expert's edp.
TEST(FoldedLayout, RandomPlansMatchEveryRankOfBothViews) {
  std::mt19937 rng(33);
  auto pick = [&rng](int lo, int hi) {
    return static_cast<std::uint64_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  const std::vector<std::string> dense_axes{"dp", "cp", "tp"};
  for (int round = 0; round < 2000; ++round) {
    const ExpertLayout layout = round % 3 == 0 ? ExpertLayout::kAxis : ExpertLayout::kFolded;
    const int stage = static_cast<int>(pick(0, 3));
    // Sizes: pp, dp, cp, tp, then ep, a divisor of dp x cp x tp when folded.
    const std::uint64_t pp = pick(1, 2);
    const std::uint64_t n[3] = {pick(1, 4), pick(1, 3), pick(1, 4)};
    const std::uint64_t region = n[0] * n[1] * n[2];
    std::vector<std::uint64_t> divisors;
    for (std::uint64_t d = 1; d <= region; ++d) {
      if (region % d == 0) divisors.push_back(d);
    }
    const std::uint64_t ep = layout == ExpertLayout::kFolded
                                 ? divisors[pick(0, static_cast<int>(divisors.size()) - 1)]
                                 : pick(1, 3);
    std::vector<CapacityParam> params;
    struct Plan {
      std::vector<std::uint64_t> shape;
      std::vector<std::pair<std::size_t, Placement>> axes;  // 0..2 dense, 3 ep, 4 pp
      bool expert;
    };
    std::vector<Plan> plans;
    const int count = static_cast<int>(pick(1, 5));
    for (int i = 0; i < count; ++i) {
      Plan plan;
      const std::uint64_t rank = pick(1, 2);
      for (std::uint64_t d = 0; d < rank; ++d) plan.shape.push_back(pick(0, 13));
      plan.expert = pick(0, 2) == 0;
      std::vector<std::pair<std::string, std::string_view>> text;
      auto shard = [&](std::uint64_t dim) -> std::string_view {
        static const char* kForms[] = {"S(-1)", "S(-2)", "SS(-1,2)", "SS(-2,2)"};
        return kForms[(dim == 0 ? 0 : 1) + 2 * pick(0, 1)];
      };
      if (plan.expert) {
        text.emplace_back("ep", shard(pick(0, static_cast<int>(rank) - 1)));
        if (pick(0, 1) != 0) text.emplace_back("tp", "R");
      } else {
        for (std::size_t a = 0; a < 3; ++a) {
          if (pick(0, 2) == 0)
            text.emplace_back(dense_axes[a], shard(pick(0, static_cast<int>(rank) - 1)));
        }
        if (pick(0, 3) == 0) text.emplace_back("pp", shard(pick(0, static_cast<int>(rank) - 1)));
      }
      for (const auto& [axis, t] : text) {
        const std::size_t a = axis == "ep"   ? 3
                              : axis == "pp" ? 4
                              : axis == "dp" ? 0
                              : axis == "cp" ? 1
                                             : 2;
        if (t != "R") plan.axes.emplace_back(a, placement(t));
      }
      params.push_back(param("p" + std::to_string(i), plan.shape,
                             pick(0, 1) != 0 ? "bf16" : "float32", text, pick(0, 4) != 0));
      plans.push_back(std::move(plan));
    }
    // The placement order: cp, tp named, then dp, ep, pp by name.
    const std::vector<std::string> order{"cp", "tp"};
    const std::size_t apply_order[] = {1, 2, 0, 3, 4};
    const Mesh m = mesh({{"cp", n[1]}, {"tp", n[2]}, {"dp", n[0]}, {"ep", ep}, {"pp", pp}}, layout);
    const MeshCapacity got = evaluate(params, order, m, layout, stage);

    std::uint64_t max = 0;
    std::uint64_t min = UINT64_MAX;
    Coords max_at;
    Coords min_at;  // cp, tp, dp, ep, pp as the mesh lists them
    Coords min_expert;
    const bool folded = layout == ExpertLayout::kFolded;
    const std::uint64_t ranks = folded ? pp * region : pp * region * ep;
    for (std::uint64_t g = 0; g < ranks; ++g) {
      // Rank numbers: folded pp, dp, cp, tp; as an axis row-major in mesh order (cp, tp,
      // dp, ep, pp).
      std::uint64_t c[5];  // dp, cp, tp, ep, pp
      std::uint64_t edp = 0;
      if (folded) {
        c[4] = g / region;
        const std::uint64_t r = g % region;
        c[0] = r / (n[1] * n[2]);
        c[1] = r / n[2] % n[1];
        c[2] = r % n[2];
        c[3] = r % ep;
        edp = r / ep;
      } else {
        std::uint64_t rest = g;
        c[4] = rest % pp, rest /= pp;
        c[3] = rest % ep, rest /= ep;
        c[0] = rest % n[0], rest /= n[0];
        c[2] = rest % n[2], rest /= n[2];
        c[1] = rest;
      }
      const std::uint64_t size[5] = {n[0], n[1], n[2], ep, pp};
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < plans.size(); ++i) {
        const Plan& plan = plans[i];
        std::vector<std::uint64_t> local = plan.shape;
        for (std::size_t a : apply_order) {
          for (const auto& [axis, p] : plan.axes) {
            if (axis != a || size[a] == 1) continue;
            const auto d = static_cast<std::size_t>(p.dim);
            local[d] = held(local[d], p, size[a], c[a]);
          }
        }
        const ElementCost cost = element_cost(params[i].dtype, *dtype_element_size(params[i].dtype),
                                              params[i].requires_grad,
                                              counting(Optimizer::kAdam, {stage, {"dp", "cp"}}));
        std::uint64_t group = 1;
        std::uint64_t at = 0;
        if (folded && plan.expert) {
          group = region / ep;
          at = edp;
        } else {
          for (std::size_t a : {std::size_t{0}, std::size_t{1}}) {  // dp, cp listed
            const bool sharded = std::any_of(plan.axes.begin(), plan.axes.end(),
                                             [a](const auto& x) { return x.first == a; });
            if (sharded) continue;
            group *= size[a];
            at = at * size[a] + c[a];
          }
        }
        std::uint64_t kept = cost.kept;
        std::uint64_t split = cost.split();
        if (group == 1) kept += std::exchange(split, 0);
        std::uint64_t elements = 1;
        for (std::uint64_t s : local) elements *= s;
        total += kept * elements;
        if (split != 0) {
          local[0] = torch_chunk(local[0], group)[at];
          std::uint64_t rest = 1;
          for (std::uint64_t s : local) rest *= s;
          total += split * rest;
        }
      }
      const Coords mesh_at{c[1], c[2], c[0], c[3], c[4]};
      if (total > max || max_at.empty()) {
        max = total;
        max_at = mesh_at;
      }
      if (total < min) {
        min = total;
        min_at = mesh_at;
        min_expert = {edp, c[3]};
      }
    }
    ASSERT_TRUE(got.divisible() || !got.indivisible->dense_region()) << round;
    ASSERT_EQ(got.max_rank_bytes, max) << "round " << round;
    ASSERT_EQ(got.min_rank_bytes, min) << "round " << round;
    ASSERT_EQ(got.max_rank, max_at) << "round " << round;
    ASSERT_EQ(got.min_rank, min_at) << "round " << round;
    if (folded) {
      ASSERT_EQ((Coords{got.expert->min_rank[0], got.expert->min_rank[1]}), min_expert)
          << "round " << round;
    }
  }
}

// ---- Every rank of every pipeline stage, random plans: the brute force ----
//
// A rank's bytes are the pieces it holds of the parameters of its stage; how a piece
// costs is the accounting's (a recipe). The walk below knows the mesh, the stages and the
// ZeRO groups; each recipe is one function over a rank's pieces, worked out here from
// docs/capacity.md's table of recipes alone, run over the same cases.

// One parameter on one rank: what the plan leaves of it (`local`), and of it on the
// stage's first rank (`origin`, coordinate 0 everywhere), its ZeRO group's size, this
// rank's coordinate in it and the dim ZeRO chunks; its dtype, whether it trains, the
// module that owns it.
struct Piece {
  std::vector<std::uint64_t> local;
  std::vector<std::uint64_t> origin;
  std::uint64_t group = 1;
  std::uint64_t coordinate = 0;
  std::size_t dim = 0;
  bool bf16 = true;
  bool trainable = true;
  std::size_t module = 0;
};
using RecipeBytes = std::uint64_t (*)(const std::vector<Piece>& pieces, int stage);

std::uint64_t elements(const std::vector<std::uint64_t>& shape) {
  std::uint64_t out = 1;
  for (std::uint64_t d : shape) out *= d;
  return out;
}

// The elements of `p` this rank holds when ZeRO chunks its dim over the group like
// torch.chunk: its own chunk, or (`padded`) the first, the largest.
std::uint64_t chunk_elements(const Piece& p, bool padded) {
  std::vector<std::uint64_t> local = p.local;
  local[p.dim] = torch_chunk(local[p.dim], p.group)[padded ? 0 : p.coordinate];
  return elements(local);
}

// One element's bytes by class (weight, gradient, master, moments) under Adam: bf16 2, 2,
// 4, 8; float32 4, 4, 0, 8; a frozen one its weight alone.
struct Classes {
  std::uint64_t weight, grad, master, moments;
};
Classes adam_classes(const Piece& p) {
  const std::uint64_t w = p.bf16 ? 2 : 4;
  if (!p.trainable) return {w, 0, 0, 0};
  return {w, w, p.bf16 ? 4U : 0U, 8};
}

// Whether ZeRO leaves the piece whole: no dim, or a group of one rank.
bool whole(const Piece& p) { return p.local.empty() || p.group == 1; }

// dtensor (docs/capacity.md, "ZeRO"): the split classes' dim chunked like torch.chunk,
// each rank its own rows, nothing padded.
std::uint64_t dtensor_bytes(const std::vector<Piece>& pieces, int stage) {
  std::uint64_t total = 0;
  for (const Piece& p : pieces) {
    const Classes c = adam_classes(p);
    const std::uint64_t state = c.master + c.moments;
    const std::uint64_t split[] = {0, state, c.grad + state, c.weight + c.grad + state};
    const std::uint64_t all = c.weight + c.grad + state;
    const std::uint64_t cut = whole(p) ? 0 : split[stage];
    total += (all - cut) * elements(p.local) + (cut == 0 ? 0 : cut * chunk_elements(p, false));
  }
  return total;
}

// fsdp2: the same chunks; the weight (stage 3) and the gradient (stage 2) at the first
// chunk's size on every rank, the master and moments on the rank's own rows.
std::uint64_t fsdp2_bytes(const std::vector<Piece>& pieces, int stage) {
  std::uint64_t total = 0;
  for (const Piece& p : pieces) {
    const Classes c = adam_classes(p);
    const std::uint64_t all = c.weight + c.grad + c.master + c.moments;
    if (whole(p)) {
      total += all * elements(p.local);
      continue;
    }
    const std::uint64_t padded = (stage >= 3 ? c.weight : 0) + (stage >= 2 ? c.grad : 0);
    const std::uint64_t chunked = stage >= 1 ? c.master + c.moments : 0;
    total += (all - padded - chunked) * elements(p.local) + padded * chunk_elements(p, true) +
             chunked * chunk_elements(p, false);
  }
  return total;
}

// A rank's bytes whole (`kept`, per piece) and in flat shares: every piece's flat bytes
// over its group, summed exactly (over the groups' least common multiple) and rounded down
// once.
struct FlatSum {
  std::uint64_t kept = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shares;  // (bytes, group)
  void add(const Piece& p, std::uint64_t kept_unit, std::uint64_t flat_unit) {
    if (whole(p)) kept_unit += std::exchange(flat_unit, 0);
    kept += kept_unit * elements(p.local);
    if (flat_unit != 0) shares.emplace_back(flat_unit * elements(p.local), p.group);
  }
  [[nodiscard]] std::uint64_t bytes() const {
    std::uint64_t lcm = 1;
    for (const auto& [b, g] : shares) lcm = std::lcm(lcm, g);
    std::uint64_t sum = 0;
    for (const auto& [b, g] : shares) sum += b * (lcm / g);
    return kept + sum / lcm;
  }
};

// megatron: an fp32 main gradient (4 bytes) beside the weight, both whole; the fp32 master
// and the moments whole at stage 0, one flat buffer split evenly at stage 1 (its
// distributed optimizer).
std::uint64_t megatron_bytes(const std::vector<Piece>& pieces, int stage) {
  FlatSum sum;
  for (const Piece& p : pieces) {
    Classes c = adam_classes(p);
    if (p.trainable) c.grad = 4;
    const std::uint64_t state = c.master + c.moments;
    sum.add(p, c.weight + c.grad + (stage >= 1 ? 0 : state), stage >= 1 ? state : 0);
  }
  return sum.bytes();
}

// deepspeed: 16 bytes a bf16 element at stage 0 (the ZeRO paper), 4 whole and 12 flat at
// stage 1, 2 whole and 2 + 4 + 4 + 8 flat at stage 2 (the 16-bit and an fp32 gradient:
// estimate_zero2), 2 + 4 + 4 + 8 flat at stage 3 (estimate_zero3: the weight and an fp32
// gradient), where every rank also holds 4 bytes an element of the module owning the most
// elements on the stage's first rank.
std::uint64_t deepspeed_bytes(const std::vector<Piece>& pieces, int stage) {
  FlatSum sum;
  std::map<std::size_t, std::uint64_t> modules;
  for (const Piece& p : pieces) {
    Classes c = adam_classes(p);
    if (p.trainable && stage == 2 && p.bf16) c.grad += 4;
    if (p.trainable && stage == 3) c.grad = 4;
    const std::uint64_t state = c.master + c.moments;
    const std::uint64_t flat[] = {0, state, c.grad + state, c.weight + c.grad + state};
    sum.add(p, c.weight + c.grad + state - flat[stage], flat[stage]);
    modules[p.module] += elements(p.origin);
  }
  std::uint64_t largest = 0;
  for (const auto& [m, n] : modules) largest = std::max(largest, n);
  return sum.bytes() + (stage == 3 ? 4 * largest : 0);
}

struct NamedRecipe {
  Recipe recipe;
  RecipeBytes bytes;
};
constexpr NamedRecipe kRecipes[] = {{Recipe::kDtensor, dtensor_bytes},
                                    {Recipe::kFsdp2, fsdp2_bytes},
                                    {Recipe::kMegatron, megatron_bytes},
                                    {Recipe::kDeepspeed, deepspeed_bytes}};

// Megatron-LM has ZeRO stages 0 and 1: the others are the case's stage folded onto them.
int stage_of(Recipe recipe, int stage) { return recipe == Recipe::kMegatron ? stage % 2 : stage; }

struct StagedCase {
  ExpertLayout layout = ExpertLayout::kAxis;
  int stage = 0;
  std::uint64_t expert_dim = 0;
  std::uint64_t size[5] = {1, 1, 1, 1, 1};  // dp, cp, tp, ep, pp
  std::uint64_t layers = 0;
  std::vector<std::uint64_t> given;  // --pp-layers
  struct Plan {
    std::vector<std::uint64_t> shape;
    std::vector<std::pair<std::size_t, Placement>> axes;  // 0..2 dense, 3 ep
    bool expert = false;
    bool bf16 = true;
    bool trainable = true;
    std::size_t module = 0;
    StagePosition at;
  };
  std::vector<Plan> plans;
  std::vector<TiedGroup> tied;
};

// The stage of each layer, by the split docs/capacity.md describes.
std::size_t stage_of_position(const StagedCase& c, const StagePosition& at) {
  const std::uint64_t pp = c.size[4];
  if (at.side == StagePosition::Side::kBefore) return 0;
  if (at.side == StagePosition::Side::kAfter) return pp - 1;
  std::uint64_t end = 0;
  for (std::size_t s = 0; s < pp; ++s) {
    end += c.given.empty() ? c.layers / pp + (s < c.layers % pp ? 1 : 0) : c.given[s];
    if (at.layer < end) return s;
  }
  return pp - 1;
}

// Which parameters stage `s` holds: its own, and a tied one where another of its names
// lands, unless one the planner counts is there.
std::vector<std::size_t> held_by(const StagedCase& c, std::size_t s) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < c.plans.size(); ++i) {
    if (stage_of_position(c, c.plans[i].at) == s) out.push_back(i);
  }
  for (const TiedGroup& t : c.tied) {
    const bool holds = std::any_of(t.params.begin(), t.params.end(), [&](std::size_t i) {
      return stage_of_position(c, c.plans[i].at) == s;
    });
    const bool lands = std::any_of(t.elsewhere.begin(), t.elsewhere.end(),
                                   [&](const auto& at) { return stage_of_position(c, at) == s; });
    if (!holds && lands) out.push_back(t.params.front());
  }
  return out;
}

StagedCase random_staged_case(std::mt19937& rng, int round) {
  auto pick = [&rng](int lo, int hi) {
    return static_cast<std::uint64_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  StagedCase c;
  c.layout = round % 3 == 0 ? ExpertLayout::kAxis : ExpertLayout::kFolded;
  c.stage = static_cast<int>(pick(0, 3));
  c.size[0] = pick(1, 3), c.size[1] = pick(1, 2), c.size[2] = pick(1, 3);
  const std::uint64_t region = c.size[0] * c.size[1] * c.size[2];
  std::vector<std::uint64_t> divisors;
  for (std::uint64_t d = 1; d <= region; ++d) {
    if (region % d == 0) divisors.push_back(d);
  }
  c.size[3] = c.layout == ExpertLayout::kFolded
                  ? divisors[pick(0, static_cast<int>(divisors.size()) - 1)]
                  : pick(1, 2);
  c.layers = pick(1, 6);
  c.size[4] = pick(1, static_cast<int>(c.layers) + (round % 7 == 0 ? 1 : 0));
  if (pick(0, 4) == 0) {  // --pp-layers: any counts summing to the layers, zeros allowed
    c.given.assign(c.size[4], 0);
    for (std::uint64_t l = 0; l < c.layers; ++l)
      ++c.given[pick(0, static_cast<int>(c.size[4]) - 1)];
  }
  static const char* kForms[] = {"S(-1)", "S(-2)", "SS(-1,2)", "SS(-2,2)"};
  const int count = static_cast<int>(pick(1, 7));
  for (int i = 0; i < count; ++i) {
    StagedCase::Plan plan;
    const std::uint64_t rank = pick(1, 2);
    for (std::uint64_t d = 0; d < rank; ++d) plan.shape.push_back(pick(0, 11));
    plan.expert = pick(0, 2) == 0;
    for (std::size_t a = 0; a < 4; ++a) {
      const bool on = plan.expert ? a == 3 : a < 3 && pick(0, 2) == 0;
      if (!on) continue;
      const std::uint64_t dim = pick(0, static_cast<int>(rank) - 1);
      plan.axes.emplace_back(a, *parse_placement(kForms[(dim == 0 ? 0 : 1) + 2 * pick(0, 1)]));
    }
    plan.bf16 = pick(0, 1) != 0;
    plan.trainable = pick(0, 4) != 0;
    const std::uint64_t where = pick(0, static_cast<int>(c.layers) + 1);
    plan.at = where == 0         ? StagePosition{}
              : where > c.layers ? StagePosition{StagePosition::Side::kAfter, 0}
                                 : StagePosition{StagePosition::Side::kLayer, where - 1};
    c.plans.push_back(std::move(plan));
  }
  if (pick(0, 2) == 0) {
    c.tied.push_back({{pick(0, count - 1)}, {{StagePosition::Side::kAfter, 0}}});
  }
  // What only the recipes read, from a stream of its own (the cases above are as before):
  // the modules owning the parameters, and the dim ZeRO chunks experts on.
  std::mt19937 more(static_cast<std::mt19937::result_type>(round));
  c.expert_dim = std::uniform_int_distribution<int>(0, 2)(more) == 0 ? 1 : 0;
  for (StagedCase::Plan& plan : c.plans) {
    plan.module = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 2)(more));
  }
  return c;
}

// What plan_capacity makes of the case under `recipe`, on its one mesh (cp, tp, dp, ep,
// pp); nullopt when its ZeRO splits nothing (a usage error). Parameter i of module m is
// named "m<m>.p<i>".
std::optional<MeshCapacity> plan_staged(const StagedCase& c, Recipe recipe) {
  static const char* kAxes[] = {"dp", "cp", "tp", "ep"};
  CapacityRequest request;
  for (std::size_t i = 0; i < c.plans.size(); ++i) {
    const StagedCase::Plan& plan = c.plans[i];
    std::vector<CapacityPlacement> axes;
    for (const auto& [a, p] : plan.axes) axes.push_back({kAxes[a], p});
    request.params.push_back(CapacityParam{
        keep("m" + std::to_string(plan.module) + ".p" + std::to_string(i)), keep(plan.shape),
        plan.bf16 ? "bfloat16" : "float32", plan.trainable, keep(std::move(axes)), plan.at});
  }
  request.axis_order = {"cp", "tp", "dp", "ep", "pp"};
  request.fixed = {{"cp", c.size[1]},
                   {"tp", c.size[2]},
                   {"dp", c.size[0]},
                   {"ep", c.size[3]},
                   {"pp", c.size[4]}};
  request.accounting =
      counting(Optimizer::kAdam, {stage_of(recipe, c.stage), {"dp", "cp"}, c.expert_dim}, c.layout);
  request.accounting.recipe = recipe;
  request.accounting.pipeline.layers = c.given;
  request.pipeline = StackPlan{LayerStack{"layers", c.layers, false}, c.tied};
  Expected<CapacityResult> r = plan_capacity(request);
  if (!r) {
    EXPECT_NE(r.errors().front().message.find("splits nothing"), std::string::npos)
        << r.errors().front().message;
    return std::nullopt;
  }
  return r->meshes.front();
}

// What the plan leaves of `plan` on the rank at coordinates `c` (dp, cp, tp, ep).
std::vector<std::uint64_t> plan_piece(const StagedCase& k, const StagedCase::Plan& plan,
                                      const std::uint64_t (&c)[5]) {
  const std::size_t apply_order[] = {1, 2, 0, 3};  // cp, tp, dp, ep
  std::vector<std::uint64_t> local = plan.shape;
  for (std::size_t a : apply_order) {
    for (const auto& [axis, p] : plan.axes) {
      if (axis != a || k.size[a] == 1) continue;
      const auto d = static_cast<std::size_t>(p.dim);
      local[d] = held(local[d], p, k.size[a], c[a]);
    }
  }
  return local;
}

// The pieces the rank at coordinates `c` (dp, cp, tp, ep, pp; `edp` folded) holds.
std::vector<Piece> pieces_at(const StagedCase& k, const std::uint64_t (&c)[5], std::uint64_t edp) {
  const bool folded = k.layout == ExpertLayout::kFolded;
  const std::uint64_t first[5] = {0, 0, 0, 0, c[4]};
  std::vector<Piece> out;
  for (std::size_t i : held_by(k, c[4])) {
    const StagedCase::Plan& plan = k.plans[i];
    Piece piece;
    piece.local = plan_piece(k, plan, c);
    piece.origin = plan_piece(k, plan, first);
    piece.bf16 = plan.bf16;
    piece.trainable = plan.trainable;
    piece.module = plan.module;
    if (folded && plan.expert) {
      piece.group = k.size[0] * k.size[1] * k.size[2] / k.size[3];
      piece.coordinate = edp;
      piece.dim = k.expert_dim < plan.shape.size() ? k.expert_dim : 0;
    } else {
      for (std::size_t a : {std::size_t{0}, std::size_t{1}}) {  // dp, cp listed
        const bool sharded = std::any_of(plan.axes.begin(), plan.axes.end(),
                                         [a](const auto& x) { return x.first == a; });
        if (sharded) continue;
        piece.group *= k.size[a];
        piece.coordinate = piece.coordinate * k.size[a] + c[a];
      }
    }
    out.push_back(std::move(piece));
  }
  return out;
}

struct Extremes {
  std::uint64_t max = 0, min = UINT64_MAX;
  Coords max_at, min_at;
  void add(std::uint64_t bytes, const Coords& at) {
    if (bytes > max || max_at.empty()) max = bytes, max_at = at;
    if (bytes < min) min = bytes, min_at = at;
  }
};

// Every rank in rank order (folded: pp, then the dense region dp, cp, tp; as an axis:
// row-major cp, tp, dp, ep, pp), each with its stage's pieces under `recipe`: the mesh's
// extremes and each stage's.
std::pair<Extremes, std::vector<Extremes>> walk(const StagedCase& k, RecipeBytes recipe,
                                                int stage) {
  const std::uint64_t* n = k.size;
  const std::uint64_t region = n[0] * n[1] * n[2];
  const bool folded = k.layout == ExpertLayout::kFolded;
  Extremes mesh;
  std::vector<Extremes> stages(n[4]);
  const std::uint64_t ranks = folded ? n[4] * region : n[4] * region * n[3];
  for (std::uint64_t g = 0; g < ranks; ++g) {
    std::uint64_t c[5];  // dp, cp, tp, ep, pp
    std::uint64_t edp = 0;
    if (folded) {
      const std::uint64_t r = g % region;
      c[4] = g / region, c[0] = r / (n[1] * n[2]), c[1] = r / n[2] % n[1], c[2] = r % n[2];
      c[3] = r % n[3], edp = r / n[3];
    } else {
      std::uint64_t rest = g;
      c[4] = rest % n[4], rest /= n[4];
      c[3] = rest % n[3], rest /= n[3];
      c[0] = rest % n[0], rest /= n[0];
      c[2] = rest % n[2], c[1] = rest / n[2];
    }
    const std::uint64_t bytes = recipe(pieces_at(k, c, edp), stage);
    const Coords at{c[1], c[2], c[0], c[3], c[4]};
    mesh.add(bytes, at);
    stages[c[4]].add(bytes, at);
  }
  return {mesh, stages};
}

// Random plans of random stacks (uneven splits, --pp-layers with empty stages, more stages
// than layers, outside parameters before and after, a tied tensor on a second stage) on
// random meshes of dp, cp, tp, ep and pp, both layouts, every ZeRO stage, experts chunked
// on dim 0 or 1, under every recipe: every rank of every stage walked against the planner.
TEST(Stages, RandomPlansMatchEveryRankOfEveryStage) {
  std::mt19937 rng(41);
  int laid_out[std::size(kRecipes)] = {};
  for (int round = 0; round < 1500; ++round) {
    const StagedCase k = random_staged_case(rng, round);
    for (std::size_t r = 0; r < std::size(kRecipes); ++r) {
      const auto [recipe, bytes] = kRecipes[r];
      const std::string at =
          "round " + std::to_string(round) + " recipe " + std::string(recipe_name(recipe));
      const std::optional<MeshCapacity> planned = plan_staged(k, recipe);
      if (!planned) continue;
      const MeshCapacity& got = *planned;
      if (k.given.empty() && k.size[4] > k.layers) {
        ASSERT_TRUE(got.indivisible && got.indivisible->stack_split()) << at;
        continue;
      }
      const auto [mesh, stages] = walk(k, bytes, stage_of(recipe, k.stage));
      ASSERT_TRUE(got.laid_out()) << at;
      ASSERT_EQ(got.max_rank_bytes, mesh.max) << at;
      ASSERT_EQ(got.min_rank_bytes, mesh.min) << at;
      ASSERT_EQ(got.max_rank, mesh.max_at) << at;
      ASSERT_EQ(got.min_rank, mesh.min_at) << at;
      ASSERT_EQ(got.stages.size(), stages.size()) << at;
      for (std::size_t s = 0; s < stages.size(); ++s) {
        ASSERT_EQ(got.stages[s].max_rank_bytes, stages[s].max) << at << " stage " << s;
        ASSERT_EQ(got.stages[s].min_rank_bytes, stages[s].min) << at << " stage " << s;
        ASSERT_EQ(got.stages[s].max_rank, stages[s].max_at) << at << " stage " << s;
        ASSERT_EQ(got.stages[s].min_rank, stages[s].min_at) << at << " stage " << s;
      }
      ++laid_out[r];
    }
  }
  for (std::size_t r = 0; r < std::size(kRecipes); ++r) {
    EXPECT_GE(laid_out[r], 1000) << recipe_name(kRecipes[r].recipe);
  }
}

}  // namespace
}  // namespace hpfreeze
