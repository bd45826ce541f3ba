// check_meta, the meta checker's pass (lib/src/check/meta_checker.cc), with exact findings.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "check/check.h"
#include "check/findings_lines.h"
#include "dumps/plan.h"
#include "json/json_document.h"
#include "meta/meta.h"

namespace hpfreeze {
namespace {

using check_test::Lines;
using check_test::render;
using check_test::render_all;

// Checks `meta` (named meta.json) and, when given, `model` (named model.json).
Lines check(std::string_view meta, std::optional<std::string_view> model = std::nullopt) {
  Expected<JsonDocument> meta_doc = parse_json_document("meta.json", std::string(meta));
  if (!meta_doc) return {"test input does not parse: " + render(meta_doc.errors().front())};
  std::optional<Expected<JsonDocument>> model_doc;
  std::optional<Expected<ModelTree>> tree;
  if (model) {
    model_doc = parse_json_document("model.json", std::string(*model));
    if (!*model_doc) return {"test model does not parse: " + render(model_doc->errors().front())};
    tree = decode_model_tree(**model_doc);
    if (!*tree) return {"test model does not decode: " + render(tree->errors().front())};
  }
  // As check's loader decodes META: on past the decoding errors, which are findings too.
  Diagnostics findings;
  std::optional<FrozenMeta> decoded = decode_meta_keep_going(
      *meta_doc, "check", findings, MetaDecodeOptions::decoded_params_only());
  if (!decoded) return render_all(findings);
  return render_all(check_meta(*decoded, std::move(findings), tree ? &tree->value() : nullptr));
}

// A meta with no findings; tests add one top-level key to it.
constexpr std::string_view kCleanPlan =
    R"j("param_plan": {"lin": {"params": {"weight": {"tp": "S(0)", "cp": "R"}}}},
        "frozen_sharded_params": ["lin.weight"], "mesh_dim_names": ["tp", "cp"])j";

std::string clean_with(std::string_view extra) {
  std::string out = "{" + std::string(kCleanPlan);
  if (!extra.empty()) out += ", " + std::string(extra);
  return out + "}";
}

// ---------------------------------------------------------------------------------------
// A clean meta

TEST(CheckMeta, CleanMetaHasNoFindings) { EXPECT_EQ(check(clean_with("")), Lines{}); }

TEST(CheckMeta, RootMustBeAnObject) {
  EXPECT_EQ(check("[]"),
            Lines{"error: meta.json: expected a JSON object (a codegen_meta.json), got an array"});
}

// ---------------------------------------------------------------------------------------
// Upstream's schema rules

TEST(CheckSchema, IdentityFieldsMustBeStrings) {
  EXPECT_EQ(
      check(clean_with(
          R"j("codegen_version": 1, "signature": null, "yaml_path": [], "yaml_sha256": {})j")),
      (Lines{"error: meta.json: /codegen_version: expected a string, got an integer",
             "error: meta.json: /signature: expected a string, got null",
             "error: meta.json: /yaml_path: expected a string, got an array",
             "error: meta.json: /yaml_sha256: expected a string, got an object"}));
}

TEST(CheckSchema, SourceParallelDimsOutputsMustBeObjects) {
  EXPECT_EQ(check(clean_with(R"j("source": [], "parallel_dims": "x", "outputs": 1.5)j")),
            (Lines{"error: meta.json: /outputs: expected an object, got a float",
                   "error: meta.json: /parallel_dims: expected an object, got a string",
                   "error: meta.json: /source: expected an object, got an array"}));
}

TEST(CheckSchema, EntrypointsMapStringsToStrings) {
  EXPECT_EQ(check(clean_with(R"j("entrypoints": {"parallelize": "hp", "a/b": 3, "c": null})j")),
            (Lines{"error: meta.json: /entrypoints/a~1b: expected a string, got an integer",
                   "error: meta.json: /entrypoints/c: expected a string, got null"}));
  EXPECT_EQ(check(clean_with(R"j("entrypoints": ["hp"])j")),
            Lines{"error: meta.json: /entrypoints: expected an object, got an array"});
}

TEST(CheckSchema, CoveredShardingPlanIsABoolean) {
  EXPECT_EQ(check(clean_with(R"j("covered": {"sharding_plan": "yes", "axes": 1})j")),
            Lines{"error: meta.json: /covered/sharding_plan: expected a boolean, got a string"});
  EXPECT_EQ(check(clean_with(R"j("covered": null)j")),
            Lines{"error: meta.json: /covered: expected an object, got null"});
  EXPECT_EQ(check(clean_with(R"j("covered": {})j")), Lines{});
}

TEST(CheckSchema, StringArrays) {
  EXPECT_EQ(
      check(clean_with(R"j("not_covered": ["mesh", 1], "remote_siblings": {},
                           "external_state_classes": [null])j")),
      (Lines{"error: meta.json: /external_state_classes/0: expected a string, got null",
             "error: meta.json: /not_covered/1: expected a string, got an integer",
             "error: meta.json: /remote_siblings: expected an array of strings, got an object"}));
}

TEST(CheckSchema, ModuleOverridesIsAnArrayOfObjects) {
  EXPECT_EQ(check(clean_with(R"j("module_overrides": [{}, "x"])j")),
            Lines{"error: meta.json: /module_overrides/1: expected an object, got a string"});
  EXPECT_EQ(
      check(clean_with(R"j("module_overrides": {})j")),
      Lines{"error: meta.json: /module_overrides: expected an array of objects, got an object"});
}

TEST(CheckSchema, FieldsOutsideTheRulesAreNotChecked) {
  // Unknown keys must survive (a newer upstream field); these have no rule upstream.
  // model_name is judged by check --bundle only (bundle_check_test), skipped_overrides by
  // its warnings (skipped_overrides_test).
  EXPECT_EQ(check(clean_with(R"j("model_name": 3, "model_class": [], "future_field": {"x": 1})j")),
            Lines{});
  // special_handlers is a freeze field: decode_meta holds it to what freeze writes.
  EXPECT_EQ(check(clean_with(R"j("special_handlers": 2)j")),
            Lines{"error: meta.json: /special_handlers: expected an object, got an integer"});
}

// ---------------------------------------------------------------------------------------
// param_plan

TEST(CheckParamPlan, MissingOrEmptyIsAnError) {
  EXPECT_EQ(check("{}"), Lines{"error: meta.json: missing param_plan: the meta plans no boundary"});
  EXPECT_EQ(
      check(R"j({"param_plan": {}})j"),
      Lines{"error: meta.json: /param_plan: param_plan is empty: the meta plans no boundary"});
  EXPECT_EQ(check(R"j({"param_plan": []})j"),
            Lines{"error: meta.json: /param_plan: expected an object, got an array"});
}

TEST(CheckParamPlan, EntriesAreObjects) {
  EXPECT_EQ(check(R"j({"param_plan": {"a": 1, "b": {}}})j"),
            Lines{"error: meta.json: /param_plan/a: expected an object, got an integer"});
}

TEST(CheckParamPlan, ParamsLeavesAreValidPlacementStrings) {
  EXPECT_EQ(
      check(R"j({"param_plan": {"m": {"params": {
                  "w": "S(0)", "v": {"tp": 0}, "u": {"tp": "S(x)"}, "t": {"tp": "S( 1 )"}}}},
                "frozen_sharded_params": ["m.t"]})j"),
      (Lines{
          "warning: meta.json: /param_plan/m/params/t/tp: placement 'S( 1 )' is not canonical "
          "(canonical form: 'S(1)')",
          "error: meta.json: /param_plan/m/params/u/tp: invalid placement 'S(x)': dim 'x' is not "
          "an integer",
          "error: meta.json: /param_plan/m/params/v/tp: expected a placement string, got an "
          "integer",
          "error: meta.json: /param_plan/m/params/w: expected an object (axis -> placement), got "
          "a string"}));
}

TEST(CheckParamPlan, ParamsIsAnObjectOrNull) {
  EXPECT_EQ(check(R"j({"param_plan": {"m": {"params": []}}})j"),
            Lines{"error: meta.json: /param_plan/m/params: expected an object (param -> axis -> "
                  "placement), got an array"});
  EXPECT_EQ(check(R"j({"param_plan": {"m": {"params": null}}})j"), Lines{});
}

TEST(CheckParamPlan, EveryStringLeafOfNamedSectionsIsAPlacement) {
  // null and numbers pass through upstream's rebuild; strings inside arrays are leaves too;
  // a falsy section reads as {}.
  EXPECT_EQ(
      check(R"j({"param_plan": {"m": {
                  "in_src": {"x": {"tp": "S(1)", "cp": null, "ep": 3}, "y": ["R", "bogus"],
                             "z": "P(sum)"},
                  "in_dst": [],
                  "out_src": "S(0)",
                  "out_dst": {"output": {"tp": ["SS(0, 2)"]}},
                  "is_boundary": "not checked"}}})j"),
      (Lines{"error: meta.json: /param_plan/m/in_src/y/1: invalid placement 'bogus': unknown "
             "form, expected R, S(dim), SS(dim,factor) or P(reduce_op)",
             "warning: meta.json: /param_plan/m/out_dst/output/tp/0: placement 'SS(0, 2)' is not "
             "canonical (canonical form: 'SS(0,2)')",
             "error: meta.json: /param_plan/m/out_src: expected an object (name -> placements), "
             "got a string"}));
}

// ---------------------------------------------------------------------------------------
// Negative dims

TEST(CheckNegativeDims, OneWarningPerBoundaryAndNameWithACount) {
  EXPECT_EQ(
      check(R"j({"param_plan": {
                  "lm_head": {"out_src": {"output": {"tp": "S(-1)"}},
                              "out_dst": {"output": {"tp": "S(-1)", "cp": "SS(-2,4)"}},
                              "params": {"weight": {"tp": "S(-1)"}}},
                  "blk": {"in_src": {"output": {"tp": "S(-3)"}},
                          "params": {"w": {"tp": "S(-0)"}}}},
                "frozen_sharded_params": ["blk.w", "lm_head.weight"]})j"),
      (Lines{"warning: meta.json: /param_plan/blk/in_src/output/tp: ambiguous negative dim: "
             "'S(-3)' reads back as an uneven shard of dim 2, not as dim -3 counted from the end "
             "(1 negative-dim placement of 'output' on boundary 'blk')",
             "warning: meta.json: /param_plan/blk/params/w/tp: placement 'S(-0)' is not canonical "
             "(canonical form: 'S(0)')",
             "warning: meta.json: /param_plan/lm_head/out_src/output/tp: ambiguous negative dim: "
             "'S(-1)' reads back as an uneven shard of dim 0, not as dim -1 counted from the end "
             "(3 negative-dim placements of 'output' on boundary 'lm_head')",
             "warning: meta.json: /param_plan/lm_head/params/weight/tp: ambiguous negative dim: "
             "'S(-1)' reads back as an uneven shard of dim 0, not as dim -1 counted from the end "
             "(1 negative-dim placement of 'weight' on boundary 'lm_head')"}));
}

TEST(CheckNegativeDims, StridedShard) {
  EXPECT_EQ(check(R"j({"param_plan": {"b": {"params": {"w": {"tp": "SS(-2,4)"}}}},
                      "frozen_sharded_params": ["b.w"]})j"),
            Lines{"warning: meta.json: /param_plan/b/params/w/tp: ambiguous negative dim: "
                  "'SS(-2,4)' reads back as an uneven shard of dim 1, not as dim -2 counted from "
                  "the end (1 negative-dim placement of 'w' on boundary 'b')"});
}

// ---------------------------------------------------------------------------------------
// Axes outside mesh_dim_names

constexpr std::string_view kAxesPlan =
    R"j("param_plan": {
          "a": {"params": {"w": {"tp": "S(0)", "ep": "R", "dp": "R"}},
                "in_src": {"x": {"ep": "R", "zz": null}}},
          "b": {"params": {"w": {"ep": "S(0)"}}, "out_src": {"output": [{"cp": "R"}, "R"]}}},
        "frozen_sharded_params": ["a.w", "b.w"])j";

TEST(CheckAxes, OneNotePerUndeclaredAxisAtItsFirstUse) {
  EXPECT_EQ(check("{" + std::string(kAxesPlan) + R"j(, "mesh_dim_names": ["tp", "cp"]})j"),
            (Lines{"note: meta.json: /param_plan/a/params/w/dp: axis 'dp' is not in "
                   "mesh_dim_names ['tp', 'cp']; the runtime ignores it (1 placement)",
                   "note: meta.json: /param_plan/a/params/w/ep: axis 'ep' is not in "
                   "mesh_dim_names ['tp', 'cp']; DTensor ignores it, but the expert-parallel path "
                   "splits the experts it shards over groups of ep ranks folded into the dense "
                   "region (3 placements)"}));
}

TEST(CheckAxes, NoNotesWithoutDeclaredAxes) {
  EXPECT_EQ(check("{" + std::string(kAxesPlan) + R"j(, "mesh_dim_names": null})j"), Lines{});
  EXPECT_EQ(check("{" + std::string(kAxesPlan) + R"j(, "mesh_dim_names": []})j"), Lines{});
  EXPECT_EQ(check("{" + std::string(kAxesPlan) + "}"), Lines{});
}

// ---------------------------------------------------------------------------------------
// mesh_dim_names

TEST(CheckMeshDimNames, NullOrDistinctStrings) {
  EXPECT_EQ(check(R"j({"param_plan": {"a": {}}, "mesh_dim_names": "tp"})j"),
            Lines{"error: meta.json: /mesh_dim_names: expected null or an array of strings, got "
                  "a string"});
  EXPECT_EQ(check(R"j({"param_plan": {"a": {}}, "mesh_dim_names": ["tp", 1, "cp", "tp"]})j"),
            (Lines{"error: meta.json: /mesh_dim_names/1: expected a string, got an integer",
                   "error: meta.json: /mesh_dim_names/3: duplicate axis 'tp' (first at "
                   "/mesh_dim_names/0)"}));
}

// ---------------------------------------------------------------------------------------
// frozen_sharded_params

TEST(CheckFrozenShardedParams, MissingAndExtraEntriesAreNamed) {
  EXPECT_EQ(
      check(R"j({"param_plan": {
                  "": {"params": {"lm_head.weight": {"tp": "P(avg)"}}},
                  "blk": {"params": {"": {"tp": "SS(0,2)"}, "r": {"tp": "R"},
                                     "bad": {"tp": "S(?)"}}},
                  "x": {"params": {"w": {"tp": "R", "cp": "S(0)"}}}},
                "frozen_sharded_params": ["blk", "blk.r", "blk.bad", "ghost.weight"]})j"),
      (Lines{"error: meta.json: /frozen_sharded_params: missing 'lm_head.weight', which "
             "param_plan shards (/param_plan//params/lm_head.weight)",
             "error: meta.json: /frozen_sharded_params: missing 'x.w', which param_plan shards "
             "(/param_plan/x/params/w)",
             "error: meta.json: /frozen_sharded_params/1: 'blk.r' is replicated on every axis in "
             "param_plan (/param_plan/blk/params/r)",
             "error: meta.json: /frozen_sharded_params/3: 'ghost.weight' is not a parameter of "
             "param_plan",
             "error: meta.json: /param_plan/blk/params/bad/tp: invalid placement 'S(?)': dim '?' "
             "is not an integer"}));
}

TEST(CheckFrozenShardedParams, AMissingListIsEmpty) {
  EXPECT_EQ(check(R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}}})j"),
            Lines{"error: meta.json: /frozen_sharded_params: missing 'b.w', which param_plan "
                  "shards (/param_plan/b/params/w)"});
}

TEST(CheckFrozenShardedParams, OneFqnPlannedTwiceIsShardedIfEitherIs) {
  EXPECT_EQ(check(R"j({"param_plan": {"a": {"params": {"b.w": {"tp": "R"}}},
                                      "a.b": {"params": {"w": {"tp": "S(0)"}}}},
                       "frozen_sharded_params": ["a.b.w"]})j"),
            Lines{});
}

TEST(CheckFrozenShardedParams, MustBeAnArrayOfStrings) {
  EXPECT_EQ(check(R"j({"param_plan": {"a": {}}, "frozen_sharded_params": {}})j"),
            Lines{"error: meta.json: /frozen_sharded_params: expected an array of strings, got an "
                  "object"});
  // With a broken list, the comparison is skipped.
  EXPECT_EQ(check(R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}},
                 "frozen_sharded_params": [1]})j"),
            Lines{"error: meta.json: /frozen_sharded_params/0: expected a string, got an integer"});
}

// ---------------------------------------------------------------------------------------
// injections and boundary_classes

TEST(CheckInjections, MatchesAreDistinctBoundaries) {
  EXPECT_EQ(check(clean_with(R"j("injections": [{"match": "lin"}, {"match": "ghost"},
                                                {"match": "lin", "ep_size": 2}, {"ep_size": 1},
                                                {"match": 3}, "x"])j")),
            (Lines{"error: meta.json: /injections/1/match: 'ghost' is not a param_plan boundary",
                   "error: meta.json: /injections/2/match: second injection for 'lin' (first at "
                   "/injections/0)",
                   "error: meta.json: /injections/3: injection without a 'match'",
                   "error: meta.json: /injections/4/match: expected a string, got an integer",
                   "error: meta.json: /injections/5: expected an object, got a string"}));
  EXPECT_EQ(check(clean_with(R"j("injections": {})j")),
            Lines{"error: meta.json: /injections: expected an array of objects, got an object"});
}

TEST(CheckBoundaryClasses, ObjectOfStrings) {
  EXPECT_EQ(check(clean_with(R"j("boundary_classes": {"lin": 1})j")),
            Lines{"error: meta.json: /boundary_classes/lin: expected a string, got an integer"});
  EXPECT_EQ(check(clean_with(R"j("boundary_classes": [])j")),
            Lines{"error: meta.json: /boundary_classes: expected an object, got an array"});
}

// ---------------------------------------------------------------------------------------
// Against a model tree

TEST(CheckModel, EveryModelFinding) {
  EXPECT_EQ(
      check(R"j({"param_plan": {
                  "lin": {"params": {"weight": {"tp": "S(1)", "cp": "S(-3)"},
                                     "bias": {"tp": "S(1)"}, "ghost": {"tp": "R"}}},
                  "gone": {"params": {}},
                  "": {}},
                "boundary_classes": {"lin": "Linear", "": "Model", "gone": "X", "blk": "Block"},
                "frozen_sharded_params": ["lin.bias", "lin.weight"],
                "mesh_dim_names": ["tp", "cp"]})j",
            R"j({"modules": {"": "Net", "lin": "Linear", "blk": "Block", "blk.sub": "Sub"},
                "parameters": {"lin.weight": {"shape": [4, 8]}, "lin.bias": {"shape": [4]},
                               "lin.weight_scale": {"shape": [1]},
                               "blk.frozen": {"shape": [1], "requires_grad": false},
                               "blk.sub.w": {"shape": [2]}}})j"),
      (Lines{
          "error: meta.json: /boundary_classes/: class 'Model' disagrees with the model tree, "
          "which has 'Net' (model.json)",
          "error: meta.json: /boundary_classes/gone: module 'gone' is not in the model tree "
          "(model.json)",
          "error: meta.json: /param_plan/gone: boundary module 'gone' is not in the model tree "
          "(model.json)",
          "error: meta.json: /param_plan/lin/params/bias/tp: 'S(1)' shards dim 1, but parameter "
          "'lin.bias' has rank 1 (shape [4] in model.json)",
          "error: meta.json: /param_plan/lin/params/ghost: parameter 'lin.ghost' is not in the "
          "model (model.json)",
          "error: meta.json: /param_plan/lin/params/weight/cp: 'S(-3)' shards dim 2, but "
          "parameter 'lin.weight' has rank 2 (shape [4, 8] in model.json)",
          "warning: meta.json: /param_plan/lin/params/weight/cp: ambiguous negative dim: 'S(-3)' "
          "reads back as an uneven shard of dim 2, not as dim -3 counted from the end (1 "
          "negative-dim placement of 'weight' on boundary 'lin')",
          "error: model.json: /parameters/blk.sub.w: trainable parameter 'blk.sub.w' is not "
          "covered by any param_plan entry of meta.json",
          "error: model.json: /parameters/lin.weight_scale: trainable parameter "
          "'lin.weight_scale' is not covered by any param_plan entry of meta.json"}));
}

TEST(CheckModel, CoverageIsExactOrByDottedPrefix) {
  EXPECT_EQ(check(R"j({"param_plan": {"moe": {"params": {"experts": {"ep": "S(0)"}}}},
                       "frozen_sharded_params": ["moe.experts"]})j",
                  R"j({"modules": {"moe": "MoE"},
                       "parameters": {"moe.experts": {"shape": [8, 4]},
                                      "moe.experts.w1": {"shape": [8]},
                                      "moe.expertsx": {"shape": [1]}}})j"),
            Lines{"error: model.json: /parameters/moe.expertsx: trainable parameter "
                  "'moe.expertsx' is not covered by any param_plan entry of meta.json"});
}

TEST(CheckModel, UnevenShardUsesTheRealDim) {
  // S(-2) is Shard(1, uneven): the checked dim is 1, which fits rank 2.
  EXPECT_EQ(check(R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(-2)"}}}},
                 "frozen_sharded_params": ["b.w"]})j",
                  R"j({"modules": {"b": "B"}, "parameters": {"b.w": {"shape": [2, 2]}}})j"),
            Lines{"warning: meta.json: /param_plan/b/params/w/tp: ambiguous negative dim: 'S(-2)' "
                  "reads back as an uneven shard of dim 1, not as dim -2 counted from the end (1 "
                  "negative-dim placement of 'w' on boundary 'b')"});
}

TEST(CheckModel, WithoutParametersTheParameterChecksAreSkipped) {
  // Findings in the meta come before findings in the model, whatever their pointers.
  EXPECT_EQ(check(clean_with(R"j("signature": 1)j"), R"j({"modules": {"lin": "Linear"}})j"),
            (Lines{"error: meta.json: /signature: expected a string, got an integer",
                   "note: model.json: the model tree has no 'parameters': parameter checks "
                   "skipped"}));
}

}  // namespace
}  // namespace hpfreeze
