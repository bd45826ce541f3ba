// Decoding and freeze passes in-process, with exact diagnostics.
#include "hpfreeze/freeze.h"

#include <gtest/gtest.h>

#include "hpfreeze/encode.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {
namespace {

JsonDocument parse(std::string text, std::string name = "plan.json") {
  Expected<JsonDocument> doc = parse_json_document(std::move(name), std::move(text));
  EXPECT_TRUE(doc.ok()) << (doc ? "" : doc.errors().front().message);
  return std::move(*doc);
}

constexpr const char* kModel = R"j({"modules": {"": "Net", "lin": "Linear", "b": "Block"},
  "parameters": {"lin.weight": {"shape": [8, 4]}, "b.w": {"shape": [2, 3, 4]}}})j";

struct Frozen {
  JsonDocument plan_doc;
  JsonDocument model_doc;
  PlanDump plan;
  ModelTree model;
  FreezeResult result;
};

// Freezes and returns param_plan (or the first error) as compact JSON.
std::string freeze_param_plan(std::string plan_text, std::string model_text = kModel,
                              FreezeOptions options = {}) {
  JsonDocument plan_doc = parse(std::move(plan_text));
  JsonDocument model_doc = parse(std::move(model_text), "model.json");
  Expected<PlanDump> plan = decode_plan_dump(plan_doc);
  if (!plan) return "decode: " + plan.errors().front().location_and_message();
  Expected<ModelTree> model = decode_model_tree(model_doc);
  if (!model) return "model: " + model.errors().front().location_and_message();
  Expected<FreezeResult> r = freeze_plan(*plan, *model, options);
  if (!r) return "freeze: " + r.errors().front().location_and_message();
  Json meta = assemble_meta(r->frozen, nullptr);
  return encode_compact_json(*meta.find("param_plan")) + " " +
         encode_compact_json(*meta.find("injections"));
}

TEST(FreezePasses, WriteConditionsPerKind) {
  // null is never written; falsy values are written by every kind but name_list,
  // dict_copy and int_truthy; named_placements turn a falsy value into {}.
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"lin": {
      "params": null, "in_src": null, "out_names": null, "tp_divide_attrs": null,
      "is_boundary": null, "inner_wrapper": null, "_ep_stack": null, "_ep_size": null}}})j"),
            R"j({"lin":{}} [])j");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"lin": {
      "params": {}, "in_src": 0, "in_dst": "", "out_src": [], "out_dst": false,
      "out_names": [], "tp_divide_attrs": [], "is_boundary": false, "region_dispatch": 0,
      "_deferred_bias_params": {}, "inner_wrapper": "", "inner_target": 0,
      "inner_out_src": [], "local_compute_fn": false, "_ep_stack": {}, "_ep_size": 0}}})j"),
            R"j({"lin":{"params":{},"in_src":{},"in_dst":{},"out_src":{},"out_dst":{},)j"
            R"j("tp_divide_attrs":[],"is_boundary":false,"region_dispatch":0}} )j"
            R"j([{"match":"lin","inner_wrapper":"","inner_target":0,"inner_out_src":[],)j"
            R"j("local_compute_fn":false}])j");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"lin": {
      "out_names": ["o"], "_deferred_bias_params": ["b"], "_ep_stack": {"k": 1}, "_ep_size": 8,
      "_is_terminal": {"$placement": "Bogus"}}}})j"),
            R"j({"lin":{"out_names":["o"],"deferred_bias_params":["b"]}} )j"
            R"j([{"match":"lin","ep_stack":{"k":1},"ep_size":8}])j");
}

TEST(FreezePasses, ValueToDictAtAnyDepth) {
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"lin": {
      "out_src": {"output": [{"$placement": "Shard", "dim": 1, "uneven_shard": true},
                             {"deep": {"$callable": "f"}}, {"$target": {"_target_": "x.y", "a": 1}},
                             "S(0)", null, 1.5]},
      "inner_out_src": {"tp": {"$placement": "StridedShard", "dim": 0, "split_factor": 3}}}}})j"),
            R"j({"lin":{"out_src":{"output":["S(-2)",{"deep":"f"},{"_target_":"x.y","a":1},"S(0)",)j"
            R"j(null,1.5]}}} [{"match":"lin","inner_out_src":{"tp":"SS(0,3)"}}])j");
}

TEST(FreezePasses, VerificationAgainstTheModel) {
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"lin": {"params": {"bias": {"tp": "R"}}}}})j"),
            "freeze: plan.json: /modules/lin/params/bias: parameter 'lin.bias' is not in the "
            "model (model.json)");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"b": {"params": {"w": {"tp": "S(3)"}}}}})j"),
            "freeze: plan.json: /modules/b/params/w/tp: dim 3 out of range for parameter 'b.w' "
            "of shape [2, 3, 4] (rank 3)");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"b": {"params": {"w": {"tp":
      {"$placement": "Shard", "dim": -4}}}}}})j"),
            "freeze: plan.json: /modules/b/params/w/tp: dim -4 out of range for parameter 'b.w' "
            "of shape [2, 3, 4] (rank 3)");
  FreezeOptions lenient;
  lenient.verify = false;
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"b": {"params": {"w": {"tp": "S(9)"}}}}})j",
                              kModel, lenient),
            R"j({"b":{"params":{"w":{"tp":"S(9)"}}}} [])j");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"nope": {}}})j"),
            "freeze: plan.json: /modules/nope: boundary module 'nope' is not in the model tree "
            "(model.json)");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"": {"params": {"lin.weight": {"tp": "S(1)"}}}},
      "tied_pairs": [["lin.weight", "gone"]]})j"),
            "freeze: plan.json: /tied_pairs/0/1: tied parameter 'gone' is not in the model "
            "(model.json)");
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {}})j"),
            "freeze: plan.json: /modules: the plan has no modules (use --allow-empty to accept "
            "an empty plan)");
  FreezeOptions allow_empty;
  allow_empty.allow_empty = true;
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {}})j", kModel, allow_empty), "{} []");
}

TEST(FreezePasses, StrictTurnsTheNegativeDimWarningIntoAnError) {
  JsonDocument plan_doc = parse(R"j({"modules": {"b": {"params": {"w": {"tp":
      {"$placement": "Shard", "dim": -1}}},
      "out_src": {"o": {"tp": {"$placement": "Shard", "dim": -2}}}}}})j");
  JsonDocument model_doc = parse(kModel, "model.json");
  Expected<PlanDump> plan = decode_plan_dump(plan_doc);
  Expected<ModelTree> model = decode_model_tree(model_doc);
  ASSERT_TRUE(plan.ok() && model.ok());
  Expected<FreezeResult> lenient = freeze_plan(*plan, *model, {});
  ASSERT_TRUE(lenient.ok());
  ASSERT_EQ(lenient->warnings.size(), 1u);
  EXPECT_EQ(lenient->warnings[0].location_and_message(),
            "plan.json: /modules/b/params/w/tp: 2 placement(s) with a negative dim, first here: "
            "S(-k) reads back as an uneven shard of dim k-1; written verbatim as upstream does");
  FreezeOptions strict;
  strict.strict = true;
  Expected<FreezeResult> rejected = freeze_plan(*plan, *model, strict);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.errors()[0].pointer, "/modules/b/params/w/tp");
}

TEST(FreezePasses, ExpandJoinsAndSorts) {
  JsonDocument plan_doc = parse(R"j({"modules": {
      "z": {"params": {"w": {"tp": "S(0)"}, "r": {"tp": "R", "cp": "R"}, "": {"ep": "P(sum)"}}},
      "": {"params": {"lm_head.weight": {"tp": "S(-1)"}, "é": {"tp": "SS(0,2)"}}},
      "a": {"params": {"b.c": {"tp": "R", "ep": "S(0)"}}},
      "a.b": {"params": {"c": {"tp": "S(1)"}}}}})j");
  Expected<PlanDump> plan = decode_plan_dump(plan_doc);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(expand_sharded_params(*plan),
            (std::vector<std::string>{"a.b.c", "lm_head.weight", "z", "z.w", "\xc3\xa9"}));
}

TEST(MetaAssembly, BaseKeysReplaceDefaultsAndUnknownKeysSurvive) {
  JsonDocument base_doc = parse(R"j({"signature": "abc", "future_field": [1, 2.5],
      "covered": {"axes": ["tp"], "sharding_plan": false}, "param_plan": {"stale": {}},
      "mesh_dim_names": ["stale"]})j",
                                "base.json");
  Json base = json_from_dom(base_doc.root());
  FrozenPlan frozen;
  frozen.param_plan = JsonObject{{"m", JsonObject{}}};
  Json meta = assemble_meta(frozen, &base);
  EXPECT_EQ(encode_compact_json(*meta.find("covered")),
            R"j({"axes":["tp"],"sharding_plan":true})j");
  EXPECT_EQ(encode_compact_json(*meta.find("future_field")), "[1,2.5]");
  EXPECT_EQ(encode_compact_json(*meta.find("param_plan")), R"j({"m":{}})j");
  EXPECT_EQ(encode_compact_json(*meta.find("mesh_dim_names")), "null");
  EXPECT_EQ(meta.find("signature")->as_string(), "abc");
  EXPECT_EQ(meta.find("yaml_path")->as_string(), "");
  EXPECT_EQ(meta.as_object().size(), 24u);
}

}  // namespace
}  // namespace hpfreeze
