// The report pass (build_report, report.h) on inputs made in memory: every expected number
// below is computed by hand from the shapes in the test (the arithmetic is spelled out next
// to it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "report/report.h"
#include "report/report_of.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using test_support::mesh;
using test_support::model_json;
using test_support::ModelParam;
using test_support::plan_b;
using test_support::report_of;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> findings(const Report& r) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.findings) {
    const char* sev = d.severity == Severity::kError     ? "error"
                      : d.severity == Severity::kWarning ? "warning"
                                                         : "note";
    out.push_back(std::string(sev) + " " + d.file + " " + d.pointer + ": " + d.message);
  }
  return out;
}

const ParamReport* param(const Report& r, std::string_view fqn) {
  for (const ParamReport& p : r.params) {
    if (p.fqn == fqn) return &p;
  }
  ADD_FAILURE() << "no param " << fqn;
  return nullptr;
}

std::vector<std::uint64_t> local(const Report& r, std::string_view fqn) {
  const ParamReport* p = param(r, fqn);
  return p == nullptr ? std::vector<std::uint64_t>{}
                      : std::vector<std::uint64_t>(p->local_shape.begin(), p->local_shape.end());
}

using Shape = std::vector<std::uint64_t>;

// ---- dtypes and units ----

// Element sizes come from the one table (spec/dtypes.h's dtype_element_size, tested in
// capacity_test.cc); these spellings were unknown to report before it shared the table.
TEST(BuildReport, DtypesOfTheSharedTable) {
  const Report r = report_of(plan_b(R"j({"c": {"tp": "R"}, "u": {"tp": "S(0)"}})j"),
                             model_json({{"b.c", "[3]", "complex64"}, {"b.u", "[4]", "uint16"}}),
                             mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(param(r, "b.c")->rank0_bytes, 3u * 8);  // complex64: two float32
  EXPECT_EQ(param(r, "b.u")->rank0_bytes, 2u * 2);
  ASSERT_TRUE(r.capacity.planned());
  ASSERT_EQ(r.capacity.meshes.size(), 1u);
  EXPECT_EQ(r.capacity.meshes[0].max_rank_bytes, 24u + 4);
  EXPECT_EQ(r.capacity.meshes[0].min_rank_bytes, 24u + 4);
}

TEST(BuildReport, UnknownDtypeIsNamed) {
  const Report r = report_of(plan_b(R"j({"w": {"tp": "R"}})j"),
                             model_json({{"b.w", "[3]", "float128"}}), mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r), ElementsAre("error model.json /parameters/b.w/dtype: parameter 'b.w' "
                                       "has unknown dtype 'float128'"));
}

// The planner's worst and best rank over every rank, not only rank 0: [10] by tp=4 chunks
// as 3, 3, 3, 1 (torch.chunk), bf16.
TEST(BuildReport, WorstAndBestRankOverAllRanks) {
  const Report r = report_of(plan_b(R"j({"w": {"tp": "S(-1)"}})j"),
                             model_json({{"b.w", "[10]", "bfloat16"}}), mesh({{"tp", 4}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(r.rank0_bytes, 6u);
  ASSERT_TRUE(r.capacity.planned());
  EXPECT_EQ(r.capacity.meshes[0].max_rank_bytes, 6u);
  EXPECT_EQ(r.capacity.meshes[0].min_rank_bytes, 2u);
}

TEST(BuildReport, ShardEven) {
  const Report r =
      report_of(plan_b(R"j({"w": {"tp": "S(0)"}, "v": {"tp": "S(1)"}})j"),
                model_json({{"b.w", "[12, 8]", "bfloat16"}, {"b.v", "[6, 20]", "float32"}}),
                mesh({{"tp", 4}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(local(r, "b.w"), (Shape{3, 8}));  // 12 / 4
  EXPECT_EQ(local(r, "b.v"), (Shape{6, 5}));  // 20 / 4
  EXPECT_EQ(r.rank0_bytes, 3u * 8 * 2 + 6 * 5 * 4);
  EXPECT_EQ(r.unsharded_bytes, 12u * 8 * 2 + 6 * 20 * 4);
  EXPECT_EQ(r.replicated_bytes, 0u);
  EXPECT_EQ(r.replicated_params, 0u);
  ASSERT_EQ(r.params.size(), 2u);
  EXPECT_EQ(r.params[0].fqn, "b.v");  // 120 bytes before 48
  EXPECT_EQ(r.params[0].rank0_bytes, 120u);
  EXPECT_EQ(r.params[0].full_bytes, 480u);
  EXPECT_EQ(placements_text(r.params[0]), "tp=S(1)");
  EXPECT_EQ(r.params[0].dtype(), "float32");
  EXPECT_EQ(r.params[1].fqn, "b.w");
  EXPECT_EQ(r.params[1].rank0_bytes, 48u);
  ASSERT_EQ(r.boundaries.size(), 1u);
  EXPECT_EQ(r.boundaries[0].fqn, "b");
  EXPECT_EQ(r.boundaries[0].rank0_bytes, 168u);
  EXPECT_EQ(r.boundaries[0].params, 2u);
  EXPECT_THAT(r.mesh, ElementsAre(AxisSize{"tp", 4}));
  EXPECT_EQ(r.mesh_source, MeshSource::kFlag);
}

TEST(BuildReport, SortsOnlyTheFirstParamsWhenAsked) {
  // Bytes on tp=2: b.a 2 x 4 = 8, b.b 16, b.c 8, b.d 4, b.e 16: by bytes, then FQN, the
  // order is b.b, b.e, b.a, b.c, b.d.
  const std::string meta = plan_b(
      R"j({"a": {"tp": "S(0)"}, "b": {"tp": "S(0)"}, "c": {"tp": "S(0)"}, "d": {"tp": "S(0)"},)j"
      R"j( "e": {"tp": "S(0)"}})j");
  const std::string model = model_json({{"b.a", "[4]", "float32"},
                                        {"b.b", "[8]", "float32"},
                                        {"b.c", "[4]", "float32"},
                                        {"b.d", "[2]", "float32"},
                                        {"b.e", "[8]", "float32"}});
  auto names = [](const Report& r) {
    std::vector<std::string> out;
    for (const ParamReport& p : r.params) out.emplace_back(p.fqn);
    return out;
  };
  EXPECT_THAT(names(report_of(meta, model, mesh({{"tp", 2}}))),
              ElementsAre("b.b", "b.e", "b.a", "b.c", "b.d"));
  for (std::size_t k : {0, 1, 2, 3, 4, 5, 9}) {
    const Report r = report_of(meta, model, mesh({{"tp", 2}}), k);
    std::vector<std::string> got = names(r);
    ASSERT_EQ(got.size(), 5u);
    const std::vector<std::string> want{"b.b", "b.e", "b.a", "b.c", "b.d"};
    const std::size_t n = std::min<std::size_t>(k, 5);
    EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + static_cast<long>(n)),
              std::vector<std::string>(want.begin(), want.begin() + static_cast<long>(n)))
        << k;
    std::sort(got.begin(), got.end());  // every param is there, once
    EXPECT_THAT(got, ElementsAre("b.a", "b.b", "b.c", "b.d", "b.e")) << k;
    EXPECT_EQ(r.rank0_bytes, 52u) << k;
  }
}

TEST(BuildReport, ShardUnevenTakesTheCeiling) {
  // S(-1) is Shard(0, uneven), S(-2) is Shard(1, uneven).
  const Report r =
      report_of(plan_b(R"j({"a": {"tp": "S(-1)"}, "b": {"tp": "S(-2)"}, "c": {"tp": "S(-1)"},)j"
                       R"j( "d": {"tp": "S(-1)"}, "e": {"tp": "S(0)"}})j"),
                model_json({{"b.a", "[10, 3]", "bfloat16"},
                            {"b.b", "[3, 10]", "bfloat16"},
                            {"b.c", "[2, 5]", "bfloat16"},
                            {"b.d", "[0, 5]", "bfloat16"},
                            {"b.e", "[0, 5]", "bfloat16"}}),
                mesh({{"tp", 4}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(local(r, "b.a"), (Shape{3, 3}));  // ceil(10 / 4)
  EXPECT_EQ(local(r, "b.b"), (Shape{3, 3}));
  EXPECT_EQ(local(r, "b.c"), (Shape{1, 5}));  // ceil(2 / 4)
  EXPECT_EQ(local(r, "b.d"), (Shape{0, 5}));
  EXPECT_EQ(local(r, "b.e"), (Shape{0, 5}));  // 0 divides by anything
  EXPECT_EQ(r.rank0_bytes, (9u + 9 + 5) * 2);
  EXPECT_EQ(r.unsharded_bytes, (30u + 30 + 10) * 2);
}

TEST(BuildReport, ShardEvenThatDoesNotDivideIsAnError) {
  const Report r = report_of(plan_b(R"j({"w": {"tp": "S(0)"}})j"),
                             model_json({{"b.w", "[10, 8]", "bfloat16"}}), mesh({{"tp", 4}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error meta.json /param_plan/b/params/w/tp: parameter 'b.w' dim 0 "
                          "(size 10) is not divisible by 4: S(0) on axis 'tp' of size 4"));
  EXPECT_TRUE(r.has_errors());
  EXPECT_EQ(local(r, "b.w"), (Shape{3, 8}));  // still counted, as ceil(10 / 4)
  EXPECT_EQ(r.rank0_bytes, 3u * 8 * 2);
}

TEST(BuildReport, StridedShardEvenAndUneven) {
  const Report r =
      report_of(plan_b(R"j({"even": {"tp": "SS(0,2)"}, "uneven": {"tp": "SS(-1,2)"},)j"
                       R"j( "exact": {"tp": "SS(-1,2)"}, "inner": {"tp": "SS(-2,3)"}})j"),
                model_json({{"b.even", "[12, 8]", "bfloat16"},
                            {"b.uneven", "[10, 1]", "bfloat16"},
                            {"b.exact", "[16, 1]", "bfloat16"},
                            {"b.inner", "[2, 9]", "bfloat16"}}),
                mesh({{"tp", 3}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(local(r, "b.even"), (Shape{4, 8}));    // 12 % 2 == 0, 12 % 6 == 0: 12 / 3
  EXPECT_EQ(local(r, "b.uneven"), (Shape{4, 1}));  // 2 * ceil(10 / 6) = 4 (plain ceil gives 4)
  EXPECT_EQ(local(r, "b.exact"), (Shape{6, 1}));   // 2 * ceil(16 / 6) = 6 (plain ceil: 6)
  EXPECT_EQ(local(r, "b.inner"), (Shape{2, 3}));   // 3 * ceil(9 / 9) = 3
}

TEST(BuildReport, StridedShardUnevenDiffersFromPlainCeil) {
  const Report r = report_of(plan_b(R"j({"w": {"tp": "SS(-1,2)"}})j"),
                             model_json({{"b.w", "[10]", "bfloat16"}}), mesh({{"tp", 4}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(local(r, "b.w"), (Shape{4}));  // 2 * ceil(10 / 8) = 4, where ceil(10 / 4) = 3
}

TEST(BuildReport, StridedShardThatDoesNotDivide) {
  const Report r = report_of(
      plan_b(R"j({"nf": {"tp": "SS(0,2)"}, "f": {"tp": "SS(0,5)"}, "fu": {"tp": "SS(-1,5)"},)j"
             R"j( "ok": {"tp": "SS(-1,2)"}})j"),
      model_json({{"b.nf", "[12, 8]", "bfloat16"},
                  {"b.f", "[12, 8]", "bfloat16"},
                  {"b.fu", "[12]", "bfloat16"},
                  {"b.ok", "[12]", "bfloat16"}}),
      mesh({{"tp", 4}}));
  EXPECT_THAT(
      findings(r),
      ElementsAre("error meta.json /param_plan/b/params/nf/tp: parameter 'b.nf' dim 0 (size 12) "
                  "is not divisible by 4 x 2 = 8: SS(0,2) on axis 'tp' of size 4",
                  "error meta.json /param_plan/b/params/f/tp: parameter 'b.f' dim 0 (size 12) "
                  "is not divisible by the split factor 5: SS(0,5) on axis 'tp' of size 4"));
  // torch.chunk(12, 8): six chunks of 2, rank 0 holds chunks 0 and 4.
  EXPECT_EQ(local(r, "b.nf"), (Shape{4, 8}));
  // torch.chunk(12, 20): twelve chunks of 1, rank 0 holds 0, 4, 8 (12 and 16 are empty).
  EXPECT_EQ(local(r, "b.f"), (Shape{3, 8}));
  // Uneven: the same geometry and no divisibility rule, as the planner (not even the
  // split factor's).
  EXPECT_EQ(local(r, "b.fu"), (Shape{3}));
  EXPECT_EQ(local(r, "b.ok"), (Shape{4}));
}

TEST(BuildReport, ReplicateAndPartialChangeNothing) {
  const Report r = report_of(
      plan_b(R"j({"r": {"tp": "R"}, "p": {"tp": "P(sum)"}, "q": {"tp": "P(avg)", "cp": "R"},)j"
             R"j( "s": {"tp": "R", "cp": "S(0)"}, "none": {}})j"),
      model_json({{"b.r", "[4, 4]", "bfloat16"},
                  {"b.p", "[4, 4]", "bfloat16"},
                  {"b.q", "[4, 4]", "bfloat16"},
                  {"b.s", "[4, 4]", "bfloat16"},
                  {"b.none", "[4]", "float32"}}),
      mesh({{"tp", 2}, {"cp", 2}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(local(r, "b.r"), (Shape{4, 4}));
  EXPECT_EQ(local(r, "b.p"), (Shape{4, 4}));
  EXPECT_EQ(local(r, "b.q"), (Shape{4, 4}));
  EXPECT_EQ(local(r, "b.s"), (Shape{2, 4}));
  EXPECT_EQ(local(r, "b.none"), (Shape{4}));
  EXPECT_EQ(placements_text(*param(r, "b.none")), "");
  EXPECT_EQ(r.replicated_params, 4u);
  EXPECT_EQ(r.replicated_bytes, 3u * 32 + 16);
  EXPECT_EQ(r.rank0_bytes, 3u * 32 + 16 + 16);
  EXPECT_EQ(r.unsharded_bytes, 4u * 32 + 16);
}

TEST(BuildReport, SeveralAxesShardTheSameDimInMeshDimNamesOrder) {
  const std::string params =
      R"j({"x": {"tp": "S(0)", "cp": "S(0)"}, "y": {"tp": "S(0)", "cp": "S(0)"}})j";
  const std::string model =
      model_json({{"b.x", "[16, 4]", "bfloat16"}, {"b.y", "[12, 4]", "bfloat16"}});
  const auto cp_tp = mesh({{"cp", 2}, {"tp", 4}});

  const Report ct = report_of(
      R"j({"mesh_dim_names": ["cp", "tp"], "param_plan": {"b": {"params": )j" + params + "}}}",
      model, cp_tp);
  EXPECT_EQ(local(ct, "b.x"), (Shape{2, 4}));  // 16 / 2 / 4
  EXPECT_EQ(local(ct, "b.y"), (Shape{2, 4}));  // 12 / 2 = 6, ceil(6 / 4) = 2
  EXPECT_THAT(findings(ct),
              ElementsAre("error meta.json /param_plan/b/params/y/tp: parameter 'b.y' dim 0 "
                          "(local size 6 of 12) is not divisible by 4: S(0) on axis 'tp' of "
                          "size 4"));
  EXPECT_EQ(placements_text(*param(ct, "b.x")), "cp=S(0) tp=S(0)");
  EXPECT_THAT(ct.axis_order, ElementsAre("cp", "tp"));

  const Report tc = report_of(
      R"j({"mesh_dim_names": ["tp", "cp"], "param_plan": {"b": {"params": )j" + params + "}}}",
      model, cp_tp);
  EXPECT_EQ(local(tc, "b.y"), (Shape{2, 4}));  // 12 / 4 = 3, ceil(3 / 2) = 2
  EXPECT_THAT(findings(tc),
              ElementsAre("error meta.json /param_plan/b/params/y/cp: parameter 'b.y' dim 0 "
                          "(local size 3 of 12) is not divisible by 2: S(0) on axis 'cp' of "
                          "size 2"));
  EXPECT_EQ(placements_text(*param(tc, "b.x")), "tp=S(0) cp=S(0)");

  // No mesh_dim_names: axes in name order, so cp before tp.
  const Report sorted =
      report_of(R"j({"mesh_dim_names": null, "param_plan": {"b": {"params": )j" + params + "}}}",
                model, cp_tp);
  EXPECT_EQ(findings(sorted), findings(ct));
  EXPECT_THAT(sorted.axis_order, ElementsAre("cp", "tp"));
}

TEST(BuildReport, OrderOfAxesMattersForStridedShards) {
  const std::string params = R"j({"w": {"tp": "SS(-1,2)", "cp": "S(-1)"}})j";
  const std::string model = model_json({{"b.w", "[10, 1]", "bfloat16"}});
  const auto m = mesh({{"cp", 2}, {"tp", 2}});
  const Report tp_first = report_of(
      R"j({"mesh_dim_names": ["tp", "cp"], "param_plan": {"b": {"params": )j" + params + "}}}",
      model, m);
  EXPECT_THAT(findings(tp_first), IsEmpty());
  EXPECT_EQ(local(tp_first, "b.w"), (Shape{3, 1}));  // 2 * ceil(10 / 4) = 6, ceil(6 / 2) = 3
  const Report cp_first = report_of(
      R"j({"mesh_dim_names": ["cp", "tp"], "param_plan": {"b": {"params": )j" + params + "}}}",
      model, m);
  // Uneven: never a finding, as the planner's verdict (docs/capacity.md, "Divisibility").
  EXPECT_THAT(findings(cp_first), IsEmpty());
  // cp: torch.chunk(10, 2) = 5 | 5; tp: torch.chunk(5, 4) = 2, 2, 1, 0 and rank 0 holds
  // chunks 0 and 2: 3.
  EXPECT_EQ(local(cp_first, "b.w"), (Shape{3, 1}));
}

TEST(BuildReport, AxesOutsideMeshDimNamesComeAfterThemByName) {
  const Report r = report_of(R"j({"mesh_dim_names": ["tp"], "param_plan": {"b": {"params": )j"
                             R"j({"w": {"ep": "S(0)", "tp": "S(1)", "cp": "R"}}}}})j",
                             model_json({{"b.w", "[8, 4]", "bfloat16"}}),
                             mesh({{"ep", 8}, {"tp", 2}, {"cp", 2}}));
  EXPECT_THAT(r.axis_order, ElementsAre("tp", "cp", "ep"));
  EXPECT_EQ(placements_text(*param(r, "b.w")), "tp=S(1) cp=R ep=S(0)");
  EXPECT_EQ(local(r, "b.w"), (Shape{1, 2}));
  EXPECT_THAT(r.mesh, ElementsAre(AxisSize{"cp", 2}, AxisSize{"ep", 8}, AxisSize{"tp", 2}));
}

TEST(BuildReport, AxesNotInTheMeshAndOfSizeOneChangeNothingWithOneNoteEach) {
  // mesh_dim_names names ep: the axis layout, where a param may be split on ep and tp both.
  const Report r = report_of(
      R"j({"mesh_dim_names": ["tp", "ep", "cp"], "param_plan": {"b": {"params": )j"
      R"j({"a": {"tp": "S(0)", "ep": "S(0)", "cp": "S(0)"}, "b": {"ep": "S(1)", "cp": "R"}}}}})j",
      model_json({{"b.a", "[8, 2]", "bfloat16"}, {"b.b", "[8, 2]", "bfloat16"}}),
      mesh({{"tp", 2}, {"cp", 1}}));
  EXPECT_THAT(findings(r),
              ElementsAre("note meta.json /param_plan/b/params/a/ep: axis 'ep' is not in the mesh "
                          "(--mesh); its placements change nothing",
                          "note meta.json /param_plan/b/params/a/cp: axis 'cp' has size 1; its "
                          "placements change nothing"));
  EXPECT_FALSE(r.has_errors());
  EXPECT_EQ(local(r, "b.a"), (Shape{4, 2}));
  EXPECT_EQ(local(r, "b.b"), (Shape{8, 2}));
  EXPECT_EQ(r.replicated_params, 1u);  // b.b: its only shard is on an absent axis
  EXPECT_EQ(r.replicated_bytes, 32u);
}

TEST(BuildReport, NoteNamesParallelDimsWhenTheMeshComesFromThere) {
  const Report r = report_of(
      R"j({"parallel_dims": {"tp_size": 2}, "param_plan": {"b": {"params": {"w": {"ep": "S(0)"}}}}})j",
      model_json({{"b.w", "[8]", "bfloat16"}}), std::nullopt);
  EXPECT_THAT(findings(r), ElementsAre("note meta.json /param_plan/b/params/w/ep: axis 'ep' is "
                                       "not in the mesh (parallel_dims); its placements change "
                                       "nothing"));
}

TEST(BuildReport, DimOutOfRangeIsAnError) {
  const Report r = report_of(plan_b(R"j({"w": {"tp": "S(1)"}, "s": {"tp": "SS(0,2)"}})j"),
                             model_json({{"b.w", "[4]", "bfloat16"}, {"b.s", "[]", "bfloat16"}}),
                             mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error meta.json /param_plan/b/params/w/tp: parameter 'b.w' has 1 dim; "
                          "S(1) on axis 'tp' shards dim 1",
                          "error meta.json /param_plan/b/params/s/tp: parameter 'b.s' has 0 dims; "
                          "SS(0,2) on axis 'tp' shards dim 0"));
  EXPECT_EQ(local(r, "b.w"), (Shape{4}));
  EXPECT_EQ(local(r, "b.s"), (Shape{}));
  EXPECT_EQ(param(r, "b.s")->rank0_bytes, 2u);  // a scalar holds one element
}

// ---- dtypes ----

TEST(BuildReport, EveryDtypeSize) {
  const std::vector<std::pair<const char*, std::uint64_t>> dtypes = {
      {"bfloat16", 2},       {"bf16", 2},         {"float16", 2},       {"half", 2},
      {"float32", 4},        {"float", 4},        {"float64", 8},       {"double", 8},
      {"int8", 1},           {"uint8", 1},        {"bool", 1},          {"int16", 2},
      {"int32", 4},          {"int64", 8},        {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
      {"torch.bfloat16", 2}, {"torch.float64", 8}};
  std::string params = "{";
  std::vector<ModelParam> model;
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    const std::string name = "p" + std::to_string(i);
    params += (i == 0 ? "\"" : ", \"") + name + "\": {\"tp\": \"S(0)\"}";
    model.push_back({"b." + name, "[6, 5]", dtypes[i].first});
    expected += 3 * 5 * dtypes[i].second;
  }
  params += "}";
  const Report r = report_of(plan_b(params), model_json(model), mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r), IsEmpty());
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    EXPECT_EQ(param(r, "b.p" + std::to_string(i))->rank0_bytes, 15 * dtypes[i].second)
        << dtypes[i].first;
  }
  EXPECT_EQ(r.rank0_bytes, expected);
  EXPECT_EQ(r.unsharded_bytes, 2 * expected);
}

TEST(BuildReport, MissingDtypeIsBfloat16WithOneWarning) {
  const Report r = report_of(
      plan_b(R"j({"a": {"tp": "R"}, "c": {"tp": "R"}})j"),
      model_json({{"b.a", "[4]", nullptr}, {"b.c", "[3]", nullptr}, {"b.u", "[5]", nullptr}}),
      mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error model.json : 1 model parameter is not covered by any planned "
                          "key (10 B at full size, 1 trainable); it stays whole on every rank",
                          "warning model.json /parameters/b.a: 3 parameters have no dtype, "
                          "counted as bfloat16 (2 bytes); the first is 'b.a'"));
  EXPECT_EQ(r.rank0_bytes, 14u);
  EXPECT_EQ(r.uncovered_bytes, 10u);
  EXPECT_EQ(param(r, "b.a")->dtype(), std::nullopt);
}

TEST(BuildReport, UnknownDtypeIsAnErrorAndTheParamIsLeftOut) {
  const Report r = report_of(plan_b(R"j({"a": {"tp": "R"}, "c": {"tp": "R"}})j"),
                             model_json({{"b.a", "[4]", "complex256"},
                                         {"b.c", "[3]", "float32"},
                                         {"b.u", "[5]", "torch.float128"}}),
                             mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error model.json /parameters/b.a/dtype: parameter 'b.a' has unknown "
                          "dtype 'complex256'",
                          "error model.json /parameters/b.u/dtype: parameter 'b.u' has unknown "
                          "dtype 'torch.float128'"));
  ASSERT_EQ(r.params.size(), 1u);
  EXPECT_EQ(r.rank0_bytes, 12u);
  EXPECT_EQ(r.uncovered_bytes, 0u);
  EXPECT_THAT(r.uncovered, IsEmpty());
}

// ---- coverage ----

TEST(BuildReport, UncoveredParamsAndPrefixCoverage) {
  const Report r =
      report_of(R"j({"param_plan": {"": {"params": {"lm_head.weight": {"tp": "S(0)"}}},)j"
                R"j( "b": {"params": {"w": {"tp": "S(0)"}}},)j"
                R"j( "m": {"params": {"experts": {"ep": "S(0)"}}}}})j",
                model_json({{"b.w", "[4, 2]", "bfloat16"},
                            {"b.extra", "[4, 4]", "float32"},
                            {"lm_head.weight", "[8, 2]", "bfloat16"},
                            {"m.experts.0.w", "[2, 2]", "bfloat16"},
                            {"m.expertsX.w", "[2, 2]", "bfloat16"}}),
                mesh({{"tp", 2}, {"ep", 2}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error meta.json /param_plan/m/params/experts: parameter 'm.experts' is "
                          "not in the model (model.json)",
                          "error model.json : 2 model parameters are not covered by any planned "
                          "key (72 B at full size, 2 trainable); they stay whole on every rank"));
  ASSERT_EQ(r.uncovered.size(), 2u);
  EXPECT_EQ(r.uncovered[0].fqn, "b.extra");
  EXPECT_EQ(r.uncovered[0].bytes, 64u);
  EXPECT_EQ(Shape(r.uncovered[0].shape.begin(), r.uncovered[0].shape.end()), (Shape{4, 4}));
  EXPECT_EQ(r.uncovered[1].fqn, "m.expertsX.w");  // a prefix only counts up to a dot
  EXPECT_EQ(r.uncovered_bytes, 72u);
  EXPECT_EQ(local(r, "lm_head.weight"), (Shape{4, 2}));  // root boundary: no leading dot
  EXPECT_EQ(r.rank0_bytes, 8u + 16);
  ASSERT_EQ(r.boundaries.size(), 3u);
  EXPECT_EQ(r.boundaries[0].fqn, "");
  EXPECT_EQ(r.boundaries[0].rank0_bytes, 16u);
  EXPECT_EQ(r.boundaries[1].fqn, "b");
  EXPECT_EQ(r.boundaries[2].fqn, "m");  // its one param is missing: 0 bytes
  EXPECT_EQ(r.boundaries[2].rank0_bytes, 0u);
  EXPECT_EQ(r.boundaries[2].params, 1u);
}

// ---- sizes that do not fit ----

TEST(BuildReport, LargeParamsUseCheckedArithmetic) {
  const Report r =
      report_of(plan_b(R"j({"huge": {"tp": "S(0)"}, "big": {"tp": "R"}, "zero": {"tp": "R"}})j"),
                model_json({{"b.huge", "[1099511627776]", "float64"},  // 2^40 elements
                            {"b.big", "[4611686018427387904, 4]", "float32"},
                            {"b.zero", "[0, 4611686018427387904, 16]", "float64"}}),
                mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error model.json /parameters/b.big: parameter 'b.big' of shape "
                          "[4611686018427387904, 4] and 4-byte elements needs more than 2^64-1 "
                          "bytes"));
  EXPECT_EQ(param(r, "b.huge")->full_bytes, 8796093022208u);   // 2^43
  EXPECT_EQ(param(r, "b.huge")->rank0_bytes, 4398046511104u);  // 2^42
  EXPECT_EQ(param(r, "b.zero")->rank0_bytes, 0u);
  EXPECT_EQ(r.params.size(), 2u);
  EXPECT_EQ(r.unsharded_bytes, 8796093022208u);
}

TEST(BuildReport, TotalsThatOverflowAreErrors) {
  const Report r = report_of(plan_b(R"j({"a": {}, "c": {}})j"),
                             model_json({{"b.a", "[1152921504606846976]", "int64"},  // 2^63 bytes
                                         {"b.c", "[1152921504606846976]", "int64"}}),
                             mesh({{"dp", 2}}));
  EXPECT_THAT(findings(r),
              ElementsAre("error meta.json : rank0_bytes exceeds 2^64-1 bytes; it is reported as "
                          "2^64-1",
                          "error meta.json : replicated_bytes exceeds 2^64-1 bytes; it is reported "
                          "as 2^64-1",
                          "error meta.json : unsharded_bytes exceeds 2^64-1 bytes; it is reported "
                          "as 2^64-1",
                          // The planner cannot run: it says which parameter went beyond.
                          "error meta.json : the parameters need more than 2^64-1 bytes "
                          "together; parameter 'b.c' is the first beyond it"));
  EXPECT_FALSE(r.capacity.planned());
  EXPECT_EQ(r.rank0_bytes, 18446744073709551615u);
  // The boundary that holds both saturates as the totals do instead of wrapping to 0 (a
  // fuzz_report find): the error line above already says the sum is beyond 2^64-1.
  ASSERT_EQ(r.boundaries.size(), 1u);
  EXPECT_EQ(r.boundaries[0].rank0_bytes, 18446744073709551615u);
}

// ---- mesh sources ----

TEST(BuildReport, MeshFromParallelDims) {
  const Report r = report_of(
      R"j({"parallel_dims": {"tp_size": 2, "cp_size": 1, "ep_size": "8", "dp_size": 2.0,)j"
      R"j( "pp_size": 0, "etp_size": true, "xp_size": 18446744073709551615, "_size": 3,)j"
      R"j( "yp_size": 9223372036854775808, "zp_size": -9223372036854775808,)j"
      R"j( "sequence_parallel": true, "size": 4}, "param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}}})j",
      model_json({{"b.w", "[4]", "bfloat16"}}), std::nullopt);
  EXPECT_THAT(r.mesh, ElementsAre(AxisSize{"cp", 1}, AxisSize{"tp", 2}));
  EXPECT_EQ(r.mesh_source, MeshSource::kParallelDims);
  EXPECT_THAT(
      findings(r),
      ElementsAre("warning meta.json /parallel_dims/ep_size: ignored: expected an integer >= 1; "
                  "axis 'ep' counts as size 1",
                  "warning meta.json /parallel_dims/dp_size: ignored: expected an integer >= 1; "
                  "axis 'dp' counts as size 1",
                  "warning meta.json /parallel_dims/pp_size: ignored: expected an integer >= 1; "
                  "axis 'pp' counts as size 1",
                  "warning meta.json /parallel_dims/etp_size: ignored: expected an integer >= 1; "
                  "axis 'etp' counts as size 1",
                  "warning meta.json /parallel_dims/xp_size: ignored: 18446744073709551615 is "
                  "above the largest axis size, 2^63-1; axis 'xp' counts as size 1",
                  "warning meta.json /parallel_dims/yp_size: ignored: 9223372036854775808 is "
                  "above the largest axis size, 2^63-1; axis 'yp' counts as size 1",
                  "warning meta.json /parallel_dims/zp_size: ignored: expected an integer >= 1; "
                  "axis 'zp' counts as size 1"));
  EXPECT_EQ(local(r, "b.w"), (Shape{2}));
}

TEST(BuildReport, TheLargestAxisSizeFromParallelDims) {
  const Report r = report_of(
      R"j({"parallel_dims": {"tp_size": 9223372036854775807}, "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j",
      model_json({{"b.w", "[4]", "bfloat16"}}), std::nullopt);
  EXPECT_THAT(r.mesh, ElementsAre(AxisSize{"tp", 9223372036854775807u}));
  EXPECT_THAT(findings(r), IsEmpty());
}

TEST(BuildReport, MeshFlagReplacesParallelDims) {
  const Report r = report_of(
      R"j({"parallel_dims": {"tp_size": 2, "cp_size": "x"}, "param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}}})j",
      model_json({{"b.w", "[8]", "bfloat16"}}), mesh({{"tp", 8}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_THAT(r.mesh, ElementsAre(AxisSize{"tp", 8}));
  EXPECT_EQ(local(r, "b.w"), (Shape{1}));
}

TEST(BuildReport, NoMeshAtAll) {
  const std::string model = model_json({{"b.w", "[8]", "bfloat16"}});
  const Report none = report_of(plan_b(R"j({"w": {"tp": "S(0)"}})j"), model, std::nullopt);
  EXPECT_EQ(none.mesh_source, MeshSource::kNone);
  EXPECT_THAT(findings(none),
              ElementsAre("warning meta.json : no mesh sizes: the meta has no <axis>_size in "
                          "parallel_dims and --mesh was not given; every axis counts as size 1",
                          "note meta.json /param_plan/b/params/w/tp: axis 'tp' is not in the mesh "
                          "(parallel_dims); its placements change nothing"));
  const Report empty =
      report_of(R"j({"parallel_dims": {}, "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j",
                model, std::nullopt);
  EXPECT_EQ(findings(empty)[0],
            "warning meta.json /parallel_dims: no mesh sizes: the meta has no <axis>_size in "
            "parallel_dims and --mesh was not given; every axis counts as size 1");
  const Report wrong =
      report_of(R"j({"parallel_dims": [2], "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j",
                model, std::nullopt);
  EXPECT_EQ(findings(wrong)[0],
            "error meta.json /parallel_dims: expected an object of <axis>_size integers");
}

// ---- malformed metas ----

TEST(BuildReport, MalformedMetasAreDecodingErrors) {
  // decode_meta's errors, the same for every command; no report is built from such a meta.
  const Report r = report_of(
      R"j({"mesh_dim_names": "tp", "param_plan": {"a": {"params": {"b.w": {"tp": "S(0)"}}},)j"
      R"j( "c": 3, "d": {"params": []},)j"
      R"j( "e": {"params": null}, "f": {"params": {"s": "S(0)", "n": {"tp": 0},)j"
      R"j( "x": {"tp": "Shard(0)"}}}, "g": {}}})j",
      model_json({{"a.b.w", "[4]", "bfloat16"}}), mesh({{"tp", 2}}));
  EXPECT_THAT(
      findings(r),
      ElementsAre(
          "error meta.json /mesh_dim_names: expected null or an array of strings, got a string",
          "error meta.json /param_plan/c: expected an object, got an integer",
          "error meta.json /param_plan/d/params: expected an object (param -> axis -> "
          "placement), got an array",
          "error meta.json /param_plan/f/params/s: expected an object (axis -> placement), got a "
          "string",
          "error meta.json /param_plan/f/params/n/tp: expected a placement string, got an integer",
          "error meta.json /param_plan/f/params/x/tp: invalid placement 'Shard(0)': unknown form, "
          "expected R, S(dim), SS(dim,factor) or P(reduce_op)"));
  EXPECT_THAT(r.params, IsEmpty());
}

TEST(BuildReport, ParamPlannedTwiceIsCountedOnce) {
  const Report r = report_of(R"j({"param_plan": {"a": {"params": {"b.w": {"tp": "S(0)"}}},)j"
                             R"j( "a.b": {"params": {"w": {"tp": "S(0)"}}}}})j",
                             model_json({{"a.b.w", "[4]", "bfloat16"}}), mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r), ElementsAre("warning meta.json /param_plan/a.b/params/w: parameter "
                                       "'a.b.w' is already planned at /param_plan/a/params/b.w; "
                                       "counted once"));
  ASSERT_EQ(r.params.size(), 1u);
  EXPECT_EQ(r.rank0_bytes, 4u);
  EXPECT_THAT(r.uncovered, IsEmpty());
}

TEST(BuildReport, MetaWithoutParamPlan) {
  const std::string model = model_json({{"w", "[4]", "bfloat16"}});
  EXPECT_THAT(findings(report_of("[]", model, mesh({{"tp", 2}}))),
              ElementsAre("error meta.json : expected a JSON object (a codegen_meta.json), got an "
                          "array"));
  EXPECT_THAT(findings(report_of("{}", model, mesh({{"tp", 2}}))),
              ElementsAre("error meta.json : missing param_plan: the meta plans no boundary"));
  EXPECT_EQ(findings(report_of(R"j({"param_plan": []})j", model, mesh({{"tp", 2}})))[0],
            "error meta.json /param_plan: expected an object, got an array");
}

}  // namespace
}  // namespace hpfreeze
