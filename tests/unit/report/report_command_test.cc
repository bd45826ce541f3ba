// Tests of `hpfreeze report`: every expected number below is computed by hand from the
// shapes in the test (the arithmetic is spelled out next to it).
#include "hpfreeze/report_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hpfreeze/json_document.h"

namespace hpfreeze {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Property;

struct ModelParam {
  std::string fqn;
  std::string shape;  // JSON array text
  const char* dtype;  // nullptr: no dtype key
};

std::string model_json(const std::vector<ModelParam>& params) {
  std::string out = R"j({"format": "hpfreeze.model/v1", "modules": {"": "M"}, "parameters": {)j";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i != 0) out += ", ";
    out += "\"" + params[i].fqn + "\": {\"shape\": " + params[i].shape;
    if (params[i].dtype != nullptr) out += ", \"dtype\": \"" + std::string(params[i].dtype) + "\"";
    out += "}";
  }
  return out + "}}";
}

std::vector<AxisSize> mesh(std::vector<AxisSize> axes) { return axes; }

// A Report views the decoded inputs it was built from: the tests keep every one of them
// until the binary exits.
template <class T>
T& keep(T value) {
  static std::deque<T> kept;
  return kept.emplace_back(std::move(value));
}

Report report_of(const std::string& meta, const std::string& model,
                 const std::optional<std::vector<AxisSize>>& mesh_axes,
                 std::optional<std::size_t> sorted_params = std::nullopt) {
  Expected<JsonDocument> meta_doc = parse_json_document("meta.json", meta);
  Expected<JsonDocument> model_doc = parse_json_document("model.json", model);
  if (!meta_doc || !model_doc) {
    ADD_FAILURE() << "test input is not JSON";
    return Report{};
  }
  Expected<ModelTree> tree = decode_model_tree(keep(std::move(*model_doc)));
  if (!tree) {
    ADD_FAILURE() << tree.errors().front().message;
    return Report{};
  }
  Expected<FrozenMeta> decoded = decode_meta(keep(std::move(*meta_doc)), "report");
  if (!decoded) {
    // What run_report prints instead of a report; here as findings, to compare them.
    Report failed;
    failed.findings = decoded.errors();
    return failed;
  }
  return build_report(keep(std::move(*decoded)), keep(std::move(*tree)), mesh_axes, {},
                      sorted_params);
}

// A meta whose param_plan has one boundary "b" with the given params object text.
std::string plan_b(const std::string& params) {
  return R"j({"param_plan": {"b": {"params": )j" + params + "}}}";
}

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

// Element sizes come from the capacity module's one table (dtype_element_size, tested in
// capacity_test.cc); these spellings were unknown to report before it shared the table.
TEST(BuildReport, DtypesOfTheSharedTable) {
  const Report r = report_of(plan_b(R"j({"c": {"tp": "R"}, "u": {"tp": "S(0)"}})j"),
                             model_json({{"b.c", "[3]", "complex64"}, {"b.u", "[4]", "uint16"}}),
                             mesh({{"tp", 2}}));
  EXPECT_THAT(findings(r), IsEmpty());
  EXPECT_EQ(param(r, "b.c")->rank0_bytes, 3u * 8);  // complex64: two float32
  EXPECT_EQ(param(r, "b.u")->rank0_bytes, 2u * 2);
  ASSERT_TRUE(r.capacity.has_value());
  ASSERT_EQ(r.capacity->meshes.size(), 1u);
  EXPECT_EQ(r.capacity->meshes[0].max_rank_bytes, 24u + 4);
  EXPECT_EQ(r.capacity->meshes[0].min_rank_bytes, 24u + 4);
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
  ASSERT_TRUE(r.capacity.has_value());
  EXPECT_EQ(r.capacity->meshes[0].max_rank_bytes, 6u);
  EXPECT_EQ(r.capacity->meshes[0].min_rank_bytes, 2u);
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
  EXPECT_FALSE(r.capacity.has_value());
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

// ---- rendering ----

Report small_report() {
  return report_of(
      R"j({"mesh_dim_names": ["tp"], "param_plan": {"a": {"params": {"x": {"tp": "S(0)"}}},)j"
      R"j( "b": {"params": {"w": {"tp": "S(0)"}, "r": {"tp": "R"}}}}})j",
      model_json({{"b.w", "[4, 2]", "bfloat16"},
                  {"b.r", "[2]", "float32"},
                  {"a.x", "[2]", nullptr},
                  {"c.u", "[3]", "int8"}}),
      mesh({{"tp", 2}}));
}

TEST(RenderReport, Json) {
  // b.w: [2, 2] x 2 = 8; b.r: 2 x 4 = 8 (replicated); a.x: [1] x 2 = 2; c.u uncovered: 3.
  // Every rank holds the same: 8 + 8 + 2 + 3 = 21 on each of the 2 ranks. No answer while
  // the uncovered trainable c.u is an error. mesh_dim_names does not name ep: folded.
  const std::string out = render_report_json(small_report(), std::nullopt);
  for (const char* piece : {
           R"j({
  "mesh": {
    "tp": 2
  },
  "mesh_source": "--mesh",
  "plan": "meta",
  "placement_order": [
    "tp"
  ],
  "counts": {
    "planned_params": 3,
    "replicated_params": 1,
    "uncovered_params": 1,
    "boundaries": 2
  },
  "rank0_bytes": 18,
  "replicated_bytes": 8,
  "unsharded_bytes": 28,
  "uncovered_bytes": 3,
  "boundaries": [
    {
      "fqn": "b",
      "rank0_bytes": 16,
      "params": 2
    },
    {
      "fqn": "a",
      "rank0_bytes": 2,
      "params": 1
    }
  ],
  "params": [
    {
      "fqn": "b.r",
      "shape": [
        2
      ],
      "dtype": "float32",
      "local_shape": [
        2
      ],
      "rank0_bytes": 8,
      "full_bytes": 8,
      "boundary": "b",
      "placements": {
        "tp": "R"
      },
      "replicated": true
    },)j",
           R"j(  "uncovered": [
    {
      "fqn": "c.u",
      "shape": [
        3
      ],
      "dtype": "int8",
      "bytes": 3
    }
  ],
  "optimizer": "none",
  "budget_bytes": null,
  "zero": {
    "stage": 0,
    "axes": [
      "dp",
      "cp"
    ],
    "expert_axis": null
  },
  "expert_parallel": {
    "layout": "folded",
    "from": "meta"
  },
  "swept": false,
  "answer": null,
  "meshes": [
    {
      "mesh": {
        "tp": 2
      },
      "devices": 2,
      "max_rank_bytes": 21,
      "min_rank_bytes": 21,
      "max_rank": {
        "tp": 0
      },
      "min_rank": {
        "tp": 0
      },
      "divisible": true,
      "indivisible": null,
      "fits": null,
      "over_by_bytes": null
    }
  ],
  "findings": [
    {
      "severity": "error",
      "file": "model.json",
      "pointer": "",
      "message": "1 model parameter is not covered by any planned key (3 B at full size, 1 trainable); it stays whole on every rank"
    },
    {
      "severity": "warning",
      "file": "model.json",
      "pointer": "/parameters/a.x",
      "message": "1 parameter has no dtype, counted as bfloat16 (2 bytes); the first is 'a.x'"
    }
  ]
}
)j"}) {
    EXPECT_NE(out.find(piece), std::string::npos) << piece << "\nnot in\n" << out;
  }
  EXPECT_TRUE(out.starts_with("{\n  \"mesh\": {"));
}

TEST(RenderReport, JsonTopCutsParamsOnly) {
  const std::string out = render_report_json(small_report(), 1);
  EXPECT_NE(out.find(R"j("fqn": "b.r")j"), std::string::npos);
  EXPECT_EQ(out.find(R"j("fqn": "b.w")j"), std::string::npos);
  EXPECT_NE(out.find(R"j("fqn": "a",)j"), std::string::npos);  // boundaries stay complete
  EXPECT_NE(render_report_json(small_report(), 0).find("\"params\": []"), std::string::npos);
}

TEST(RenderReport, Text) {
  EXPECT_EQ(render_report_text(small_report(), 10),
            "mesh: tp=2 (from --mesh)\n"
            "placement order: tp\n"
            "\n"
            "                                        PARAMS  BYTES  EXACT\n"
            "rank 0, planned params                       3   18 B     18\n"
            "  of which replicated                        1    8 B      8\n"
            "planned params at full size                  3   28 B     28\n"
            "uncovered params (whole on every rank)       1    3 B      3\n"
            "rank 0 total                                 4   21 B     21\n"
            "\n"
            // The planner: 16 + 8 + 4 + 3 = 31 B whole; every rank of tp=2 holds 21 B.
            "meshes (worst and best rank over all ranks; uncovered params included):\n"
            "4 params, 31 B whole on one device, optimizer none, no budget\n"
            "no answer: the inputs have 1 error (on stderr)\n"
            "MESH  DEVICES  WORST RANK  BEST RANK  BAR                               VERDICT\n"
            "tp=2        2        21 B       21 B  ################################  divides\n"
            "BAR: the worst rank, full at 21 B\n"
            "\n"
            "boundaries (all 2, by rank-0 bytes):\n"
            "  BYTES  PARAMS  BOUNDARY\n"
            "   16 B       2  b\n"
            "    2 B       1  a\n"
            "\n"
            "params (all 3, by rank-0 bytes):\n"
            "  BYTES  DTYPE     SHAPE   LOCAL   PLACEMENTS  PARAM\n"
            "    8 B  float32   [2]     [2]     tp=R        b.r\n"
            "    8 B  bfloat16  [4, 2]  [2, 2]  tp=S(0)     b.w\n"
            "    2 B  -         [2]     [1]     tp=S(0)     a.x\n"
            "\n"
            "uncovered params (all 1, by bytes):\n"
            "  BYTES  DTYPE  SHAPE  PARAM\n"
            "    3 B  int8   [3]    c.u\n"
            "\n"
            "findings: 1 error, 1 warning, 0 notes (on stderr)\n");
}

TEST(RenderReport, TextTopCutsListsAndCountsTheRest) {
  const std::string out = render_report_text(small_report(), 1);
  EXPECT_NE(out.find("boundaries (top 1 of 2, by rank-0 bytes):\n"
                     "  BYTES  PARAMS  BOUNDARY\n"
                     "   16 B       2  b\n"
                     "  ... 1 more, 2 B\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("params (top 1 of 3, by rank-0 bytes):\n"), std::string::npos);
  EXPECT_EQ(out.find("b.w"), std::string::npos);
  const std::string none = render_report_text(small_report(), 0);
  EXPECT_EQ(none.find("boundaries"), std::string::npos);
  EXPECT_EQ(none.find("\nparams ("), std::string::npos);
  EXPECT_EQ(none.find("by bytes"), std::string::npos);  // the uncovered list
}

TEST(RenderReport, TextWithoutMeshAndRootBoundary) {
  const Report r = report_of(R"j({"param_plan": {"": {"params": {"w": {}}}}})j",
                             model_json({{"w", "[2]", "bfloat16"}}), std::nullopt);
  const std::string out = render_report_text(r, 10);
  EXPECT_EQ(out.substr(0, 40), "mesh: none, every axis counts as size 1\n");
  EXPECT_NE(out.find("    4 B       1  (root)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    4 B  bfloat16  [2]    [2]    -           w\n"), std::string::npos) << out;
}

// ---- run_report ----

class RunReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hpfreeze_report_test_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::filesystem::path dir_;
};

TEST_F(RunReportTest, ReadFailureIsAnIoError) {
  ReportRequest request;
  request.meta_path = (dir_ / "missing.json").string();
  request.model_path = write("model.json", model_json({{"w", "[2]", "bfloat16"}}));
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  EXPECT_EQ(out.output, "");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kIo);
}

TEST_F(RunReportTest, ModelWithoutParameters) {
  ReportRequest request;
  request.meta_path = write("meta.json", R"j({"param_plan": {}})j");
  request.model_path = write("model.json", R"j({"modules": {"": "M"}})j");
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_EQ(out.output, "");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(
      out.diagnostics[0].location_and_message(),
      request.model_path + ": the model tree has no 'parameters'; a report needs their shapes");
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kRejected);
}

// The model is parsed without the duplicate-key walk (its decoder checks keys): a repeat
// still gets the parse's diagnostic, alone or beside the other unreadable input.
TEST_F(RunReportTest, RepeatedKeyInTheModel) {
  const std::string model = R"j({"modules": {"": "M"}, "parameters": {)j"
                            R"j("b.w": {"shape": [4]}, "b.w": {"shape": [2]}}})j";
  const std::string repeated_field =
      R"j({"modules": {"": "M"}, "parameters": {"b.w": {"shape": [4], "shape": [2]}}})j";
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model);
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_EQ(out.output, "");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].location_and_message(),
            request.model_path + ": /parameters/b.w: duplicate key 'b.w'");
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kRejected);

  request.model_path = write("field.json", repeated_field);
  out = run_report(request);
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].location_and_message(),
            request.model_path + ": /parameters/b.w/shape: duplicate key 'shape'");

  request.meta_path = (dir_ / "missing.json").string();
  request.model_path = write("model.json", model);
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  ASSERT_EQ(out.diagnostics.size(), 2u);
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kIo);
  EXPECT_EQ(out.diagnostics[1].location_and_message(),
            request.model_path + ": /parameters/b.w: duplicate key 'b.w'");
}

TEST_F(RunReportTest, ManyFindingsAreCutOnStderrButNotInJson) {
  std::string params = "{";
  std::vector<ModelParam> model;
  for (int i = 0; i < 150; ++i) {
    params += (i == 0 ? "\"p" : ", \"p") + std::to_string(i) + "\": {\"tp\": \"S(0)\"}";
    model.push_back({"b.p" + std::to_string(i), "[3]", "bfloat16"});
  }
  params += "}";
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(params));
  request.model_path = write("model.json", model_json(model));
  request.mesh = mesh({{"tp", 2}});
  request.json = true;
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  ASSERT_EQ(out.diagnostics.size(), 102u);
  EXPECT_EQ(out.diagnostics[100].message, "50 more findings not shown (--json lists them all)");
  EXPECT_EQ(out.diagnostics[100].severity, Severity::kError);
  // Then the summary of every finding, shown or not.
  EXPECT_EQ(out.diagnostics[101].message, "report: 150 errors, 0 warnings, 0 notes");
  EXPECT_EQ(out.diagnostics[101].severity, Severity::kNote);
  std::size_t in_json = 0;
  for (std::size_t at = 0;
       (at = out.output.find("\"severity\": \"error\"", at)) != std::string::npos; ++at) {
    ++in_json;
  }
  EXPECT_EQ(in_json, 150u);
}

TEST_F(RunReportTest, CleanReportDoesNotFail) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 2}});
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kOk);
  EXPECT_THAT(out.diagnostics, IsEmpty());
  EXPECT_EQ(out.output.substr(0, 25), "mesh: tp=2 (from --mesh)\n");
}

// Sizes that make no mesh are the command line's problem when a flag gave one of them: a
// usage error naming the flags (and the sizes parallel_dims gave), no report; with
// parallel_dims alone, the meta's.
TEST_F(RunReportTest, MeshesTheSizesCannotMake) {
  constexpr std::uint64_t kBig = 9223372036854775807u;  // 2^63-1
  const std::string plain = write(
      "meta.json",
      R"j({"mesh_dim_names": ["tp", "cp"], "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j");
  const std::string dims = write(
      "dims.json",
      R"j({"mesh_dim_names": ["tp", "cp", "dp"], "parallel_dims": {"dp_size": 4, "tp_size": 9223372036854775807}, "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j");
  std::string many;
  for (int i = 1; i <= 300; ++i) many += (i == 1 ? "" : ",") + std::to_string(i);
  struct Case {
    std::string meta;
    std::optional<std::vector<AxisSize>> mesh;
    std::vector<AxisSweep> sweeps;
    std::string error;
  };
  const Case cases[] = {
      {plain,
       std::nullopt,
       {{"tp", {kBig, 2}}, {"cp", {4}}},
       "--sweep: mesh tp=9223372036854775807 cp=4 has more than 2^64-1 devices"},
      {plain,
       mesh({{"tp", kBig}}),
       {{"cp", {1, 3}}},
       "--mesh and --sweep: mesh tp=9223372036854775807 cp=3 has more than 2^64-1 devices"},
      {plain,
       mesh({{"cp", 4}, {"tp", kBig}}),
       {},
       "--mesh: mesh tp=9223372036854775807 cp=4 has more than 2^64-1 devices"},
      {dims,
       std::nullopt,
       {{"cp", {2}}},
       "--sweep: mesh tp=9223372036854775807 cp=2 dp=4 has more than 2^64-1 devices (dp=4 "
       "tp=9223372036854775807 from parallel_dims in " +
           dims + ")"},
      {plain,
       std::nullopt,
       {*parse_sweep_arg("a=" + many), *parse_sweep_arg("b=" + many)},
       "--sweep: the sweeps make more than 65536 meshes"},
  };
  for (const Case& c : cases) {
    ReportRequest request;
    request.meta_path = c.meta;
    request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
    request.mesh = c.mesh;
    request.plan.sweeps = c.sweeps;
    request.plan.replica_axes = {"a", "b"};
    const CommandResult out = run_report(request);
    EXPECT_EQ(out.outcome(), Outcome::kTrouble) << c.error;
    EXPECT_EQ(out.output, "");
    ASSERT_EQ(out.diagnostics.size(), 1u) << c.error;
    EXPECT_EQ(out.diagnostics[0].location_and_message(), c.error);
  }
  ReportRequest request;
  request.meta_path = dims;
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_NE(out.output, "");
  ASSERT_FALSE(out.diagnostics.empty());
  EXPECT_EQ(
      out.diagnostics[0].location_and_message(),
      dims + ": /parallel_dims: mesh tp=9223372036854775807 dp=4 has more than 2^64-1 devices");
}

// No usable mesh is an error that says why (the report is still printed): the closest mesh
// and by how much, or the first mesh's first parameter that does not divide.
TEST_F(RunReportTest, NoUsableMeshSaysWhyInOneErrorLine) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[6]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 2}});
  request.plan.budget = 5;  // bytes: rank 0 holds 3 elements, 6 bytes
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_NE(out.output, "");
  EXPECT_THAT(
      out.diagnostics,
      Contains(Property(&Diagnostic::location_and_message,
                        request.meta_path + ": no mesh fits the 5 B budget; closest: "
                                            "tp=2 (2 devices, worst rank 6 B, over by 1 B)")));
  // A sweep none of whose meshes divides: the first mesh's first offender. tp=4: 6 by 4.
  request.mesh.reset();
  request.plan.budget.reset();
  request.plan.sweeps = {{"tp", {4, 5}}};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_THAT(out.diagnostics,
              Contains(Property(&Diagnostic::location_and_message,
                                request.meta_path + ": no mesh divides; the first, tp=4, fails on "
                                                    "b.w dim 0 (size 6) by tp=4")));
}

// ---- known axes ----

// Every --mesh and --sweep axis must be one the inputs know; an unknown one is a usage
// error listing them and suggesting the nearest (equal ignoring case first), and it wins
// over the findings (here a dim that does not divide and an uncovered parameter).
TEST_F(RunReportTest, UnknownAxesAreUsageErrorsWithTheNearest) {
  ReportRequest request;
  request.meta_path =
      write("meta.json",
            R"j({"mesh_dim_names": ["tp", "ep"], "parallel_dims": {"cp_size": 1, "ep_size": 2},)j"
            R"j( "param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}}})j");
  request.model_path =
      write("model.json", model_json({{"b.w", "[5]", "bfloat16"}, {"c.u", "[3]", "int8"}}));
  const std::string known =
      " (the inputs know cp, dp, ep, tp; --replica-axis NAME adds an axis that only holds "
      "replicas)";
  request.mesh = mesh({{"TP", 4}, {"EP", 8}});
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  EXPECT_EQ(out.output, "");
  std::vector<std::string> lines;
  for (const Diagnostic& d : out.diagnostics) lines.push_back(d.location_and_message());
  EXPECT_THAT(lines, ElementsAre("--mesh: unknown axis 'TP'; did you mean 'tp'?" + known,
                                 "--mesh: unknown axis 'EP'; did you mean 'ep'?" + known));
  // A typo by edit distance in a sweep; a name near nothing gets no suggestion.
  request.mesh = mesh({{"ep", 8}});
  request.plan.sweeps = {{"tq", {1, 2}}, {"pipeline", {2}}};
  out = run_report(request);
  lines.clear();
  for (const Diagnostic& d : out.diagnostics) lines.push_back(d.location_and_message());
  EXPECT_THAT(lines, ElementsAre("--sweep: unknown axis 'tq'; did you mean 'tp'?" + known,
                                 "--sweep: unknown axis 'pipeline'" + known));
  // Known: parallel_dims's axes (cp, even with --mesh), the ZeRO axis, --replica-axis.
  request.plan.sweeps = {{"pp", {1, 4}}};
  request.plan.replica_axes = {"pp"};
  request.plan.zero.axes = {"fsdp"};
  request.mesh = mesh({{"cp", 1}, {"fsdp", 2}, {"tp", 1}});
  out = run_report(request);
  EXPECT_NE(out.outcome(), Outcome::kTrouble);
  EXPECT_NE(out.output, "");
}

// One verdict per mesh: a dim the planner calls divisible is no finding (a zero-sized
// parameter, a composed uneven shard), and one it does not is, at the size it names; the
// exit status is the same from --mesh and from a sweep of that one mesh.
TEST_F(RunReportTest, FindingsAgreeWithThePlannersVerdict) {
  struct Case {
    std::string params;
    std::string shape;
    std::vector<AxisSize> mesh;
    bool divides;
  };
  const Case cases[] = {
      // [0, 7] S(1) on tp=2: holds nothing, divides.
      {R"j({"w": {"tp": "S(1)"}})j", "[0, 7]", {{"tp", 2}}, true},
      // [10] uneven on ep=4 (3, 3, 3, 1), then S(0) on tp=3: rank 0's 3 divides, ep 3's 1
      // does not.
      {R"j({"w": {"ep": "S(-1)", "tp": "S(0)"}})j", "[10]", {{"ep", 4}, {"tp", 3}}, false},
      // [6] uneven SS with a split factor that does not divide it: uneven, divides.
      {R"j({"w": {"tp": "SS(-1,4)"}})j", "[6]", {{"tp", 2}}, true},
  };
  for (const Case& c : cases) {
    const std::string meta =
        write("meta.json", R"j({"mesh_dim_names": ["ep", "tp"], "param_plan": {"b": {"params": )j" +
                               c.params + "}}}");
    ReportRequest request;
    request.meta_path = meta;
    request.model_path = write("model.json", model_json({{"b.w", c.shape, "bfloat16"}}));
    request.mesh = c.mesh;
    const CommandResult from_mesh = run_report(request);
    request.mesh.reset();
    request.plan.sweeps.clear();
    for (const AxisSize& a : c.mesh) request.plan.sweeps.push_back({a.axis, {a.size}});
    const CommandResult from_sweep = run_report(request);
    EXPECT_EQ(from_mesh.outcome(), c.divides ? Outcome::kOk : Outcome::kRejected) << c.params;
    EXPECT_EQ(from_sweep.outcome(), from_mesh.outcome()) << c.params;
    bool divisibility_finding = false;
    for (const Diagnostic& d : from_mesh.diagnostics) {
      divisibility_finding =
          divisibility_finding || d.message.find("divisible") != std::string::npos;
    }
    EXPECT_EQ(divisibility_finding, !c.divides) << c.params;
  }
  // The composed case names the size the planner names: ep rank 3's 1 element.
  ReportRequest request;
  request.meta_path =
      write("meta.json", R"j({"mesh_dim_names": ["ep", "tp"], "param_plan": {"b": {"params": )j"
                         R"j({"w": {"ep": "S(-1)", "tp": "S(0)"}}}}})j");
  request.model_path = write("model.json", model_json({{"b.w", "[10]", "bfloat16"}}));
  request.mesh = mesh({{"ep", 4}, {"tp", 3}});
  EXPECT_THAT(run_report(request).diagnostics,
              Contains(::testing::Field(&Diagnostic::message,
                                        std::string("parameter 'b.w' dim 0 (local size 1 of 10) "
                                                    "is not divisible by 3: S(0) on axis 'tp' "
                                                    "of size 3"))));
}

}  // namespace
}  // namespace hpfreeze
