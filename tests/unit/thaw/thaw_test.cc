// The thaw pass: thaw_value, thaw_meta and thaw_meta_to_bytes, plus the in-process
// freeze(thaw(m)) == m round trip. run_thaw is tests/unit/commands/thaw_command_test.cc.
#include "thaw/thaw.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dumps/plan.h"
#include "freeze/freeze.h"
#include "freeze/reference.h"
#include "json/encode.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"meta.json"};

std::string thawed_value(std::string text) {
  JsonDocument doc = parse(std::move(text));
  return encode_compact_json(thaw_value(json_from_dom(doc.root())));
}

using test_support::diagnostic_lines;

struct Outcome {
  std::string plan;   // compact JSON, or the errors one per line
  std::string model;  // compact JSON when requested and thawed
  std::string warnings;
};

Outcome thaw(std::string text, bool model = false) {
  JsonDocument doc = parse(std::move(text));
  ThawOptions options;
  options.model = model;
  Outcome out;
  Expected<FrozenMeta> meta = decode_meta(doc, "thaw");
  if (!meta) {
    for (const Diagnostic& d : meta.errors()) out.plan += d.location_and_message() + "\n";
    return out;
  }
  Expected<ThawedPlan> r = thaw_meta(*meta, options);
  // run_thaw's writer, which builds no tree, must give the tree's bytes and findings.
  Expected<ThawedBytes> bytes = thaw_meta_to_bytes(*meta, options);
  EXPECT_EQ(r.ok(), bytes.ok());
  if (!r) {
    for (const Diagnostic& d : r.errors()) out.plan += d.location_and_message() + "\n";
    if (!bytes) {
      EXPECT_EQ(diagnostic_lines(bytes.errors()), diagnostic_lines(r.errors()));
    }
    return out;
  }
  if (bytes) {
    EXPECT_EQ(bytes->plan, encode_plain_json(r->plan) + "\n");
    EXPECT_EQ(bytes->model,
              r->model ? std::optional(encode_plain_json(*r->model) + "\n") : std::nullopt);
    EXPECT_EQ(diagnostic_lines(bytes->warnings), diagnostic_lines(r->warnings));
  }
  out.plan = encode_compact_json(r->plan);
  if (r->model) out.model = encode_compact_json(*r->model);
  for (const Diagnostic& d : r->warnings) out.warnings += d.location_and_message() + "\n";
  return out;
}

// The plan's "modules" member alone, for the tests about module specs.
std::string modules_of(std::string text) {
  const std::string plan = thaw(std::move(text)).plan;
  const std::size_t at = plan.find("\"modules\":");
  return at == std::string::npos ? plan : plan.substr(at + 10, plan.size() - at - 11);
}

TEST(PlacementToDump, EveryKindWithEveryField) {
  EXPECT_EQ(encode_compact_json(placement_to_dump(Placement::shard(1))),
            R"j({"$placement":"Shard","dim":1,"uneven_shard":false})j");
  EXPECT_EQ(encode_compact_json(placement_to_dump(Placement::shard(0, true))),
            R"j({"$placement":"Shard","dim":0,"uneven_shard":true})j");
  EXPECT_EQ(encode_compact_json(placement_to_dump(Placement::strided_shard(2, 4, true))),
            R"j({"$placement":"StridedShard","dim":2,"split_factor":4,"uneven_shard":true})j");
  EXPECT_EQ(encode_compact_json(placement_to_dump(Placement::replicate())),
            R"j({"$placement":"Replicate"})j");
  EXPECT_EQ(encode_compact_json(placement_to_dump(Placement::partial("avg"))),
            R"j({"$placement":"Partial","reduce_op":"avg"})j");
}

TEST(ThawValue, CanonicalStringsBecomePlacements) {
  EXPECT_EQ(
      thawed_value(R"j(["R", "S(0)", "S(-1)", "SS(-2,3)", "P(sum)", "P( x )"])j"),
      R"j([{"$placement":"Replicate"},{"$placement":"Shard","dim":0,"uneven_shard":false},)j"
      R"j({"$placement":"Shard","dim":0,"uneven_shard":true},)j"
      R"j({"$placement":"StridedShard","dim":1,"split_factor":3,"uneven_shard":true},)j"
      R"j({"$placement":"Partial","reduce_op":"sum"},{"$placement":"Partial","reduce_op":" x "}])j");
}

TEST(ThawValue, OtherStringsStayStrings) {
  // Non-canonical spellings would come back canonical; invalid ones are names or data.
  EXPECT_EQ(thawed_value(R"j(["SS( 0 , 2 )", "S(+3)", "S(-0)", "S(007)", "S(x)", "ring_attn",
                              "", " R", "caf\u00e9"])j"),
            R"j(["SS( 0 , 2 )","S(+3)","S(-0)","S(007)","S(x)","ring_attn",""," R","caf\u00e9"])j");
}

TEST(ThawValue, TargetsAndTaggedObjectsAreCopiedAsTargets) {
  EXPECT_EQ(thawed_value(R"j({"_target_": "pkg.w", "p": "S(0)", "k": {"$callable": "f"}})j"),
            R"j({"$target":{"_target_":"pkg.w","p":"S(0)","k":{"$callable":"f"}}})j");
  EXPECT_EQ(thawed_value(R"j({"$placement": "Shard", "dim": 0})j"),
            R"j({"$target":{"$placement":"Shard","dim":0}})j");
  EXPECT_EQ(thawed_value(R"j({"$callable": "g"})j"), R"j({"$target":{"$callable":"g"}})j");
  EXPECT_EQ(thawed_value(R"j({"$target": {"_target_": "x"}})j"),
            R"j({"$target":{"$target":{"_target_":"x"}}})j");
  // A key that merely starts with '$' is no tag.
  EXPECT_EQ(thawed_value(R"j({"$other": "R"})j"), R"j({"$other":{"$placement":"Replicate"}})j");
}

TEST(ThawValue, ContainersRecurseAndScalarsAreCopied) {
  EXPECT_EQ(thawed_value(R"j({"o": {"tp": "S(1)", "n": [null, true, 2, 2.5, {"a": "R"}]}})j"),
            R"j({"o":{"tp":{"$placement":"Shard","dim":1,"uneven_shard":false},)j"
            R"j("n":[null,true,2,2.5,{"a":{"$placement":"Replicate"}}]}})j");
  EXPECT_EQ(thawed_value("1.0"), "1.0");
  EXPECT_EQ(thawed_value("18446744073709551615"), "18446744073709551615");
  EXPECT_EQ(thawed_value("{}"), "{}");
}

TEST(ThawMeta, WholePlanAndModel) {
  const Outcome out = thaw(R"j({
    "signature": "s", "covered": {"sharding_plan": true}, "mesh_dim_names": ["tp"],
    "tied_pairs": [["a", "b"]], "special_handlers": {"p": "h"},
    "frozen_sharded_params": ["blk.w"], "boundary_classes": {"blk": "Block", "": "Net"},
    "param_plan": {"blk": {"params": {"w": {"tp": "S(0)"}}, "deferred_bias_params": ["b"]},
                   "": {}},
    "injections": [{"match": "blk", "ep_stack": {"ep": [0]}, "ep_size": 2}]})j",
                           true);
  EXPECT_EQ(
      out.plan,
      R"j({"format":"hpfreeze.plan/v1","mesh_dim_names":["tp"],"tied_pairs":[["a","b"]],)j"
      R"j("special_handlers":{"p":"h"},"meta":{"signature":"s","covered":{"sharding_plan":true}},)j"
      R"j("modules":{"blk":{"params":{"w":{"tp":{"$placement":"Shard","dim":0,"uneven_shard":false}}},)j"
      R"j("_deferred_bias_params":["b"],"_ep_stack":{"ep":[0]},"_ep_size":2},"":{}}})j");
  EXPECT_EQ(out.model, R"j({"format":"hpfreeze.model/v1","modules":{"blk":"Block","":"Net"}})j");
  EXPECT_EQ(out.warnings, "");
}

TEST(ThawMeta, MinimalMetaAndNoModelUnlessAsked) {
  const Outcome out = thaw(R"j({"param_plan": {}})j");
  EXPECT_EQ(out.plan, R"j({"format":"hpfreeze.plan/v1","meta":{},"modules":{}})j");
  EXPECT_EQ(out.model, "");
}

TEST(ThawMeta, FieldsInTableOrderWithAttributeNames) {
  EXPECT_EQ(
      modules_of(R"j({"param_plan": {"b": {
      "region_dispatch": "moe", "is_boundary": true, "tp_divide_attrs": ["h"],
      "out_names": ["o"], "out_dst": {}, "out_src": {"o": "R"}, "in_dst": null,
      "in_src": {"x": {"tp": "S(1)"}}, "deferred_bias_params": ["b"], "params": {}}},
      "injections": [{"ep_size": 4, "ep_stack": {"e": 1}, "local_compute_fn": "fn",
                      "inner_out_src": {"o": {"cp": "S(1)"}}, "inner_target": "self",
                      "inner_wrapper": "ring_attn", "match": "b"}]})j"),
      R"j({"b":{"params":{},"in_src":{"x":{"tp":{"$placement":"Shard","dim":1,"uneven_shard":false}}},)j"
      R"j("in_dst":null,"out_src":{"o":{"$placement":"Replicate"}},"out_dst":{},"out_names":["o"],)j"
      R"j("tp_divide_attrs":["h"],"is_boundary":true,"region_dispatch":"moe",)j"
      R"j("_deferred_bias_params":["b"],"inner_wrapper":"ring_attn","inner_target":"self",)j"
      R"j("inner_out_src":{"o":{"cp":{"$placement":"Shard","dim":1,"uneven_shard":false}}},)j"
      R"j("local_compute_fn":"fn","_ep_stack":{"e":1},"_ep_size":4}})j");
}

TEST(ThawMeta, PlainFieldsAreNotConverted) {
  EXPECT_EQ(modules_of(R"j({"param_plan": {"b": {"out_names": ["R"], "region_dispatch": "S(0)"}},
      "injections": [{"match": "b", "inner_target": "R", "ep_stack": {"a": "R"}}]})j"),
            R"j({"b":{"out_names":["R"],"region_dispatch":"S(0)","inner_target":"R",)j"
            R"j("_ep_stack":{"a":"R"}}})j");
}

TEST(ThawMeta, InjectionBearingModulesFollowInjectionOrder) {
  EXPECT_EQ(modules_of(R"j({"param_plan": {"a": {}, "b": {}, "c": {}, "d": {}},
      "injections": [{"match": "d", "ep_size": 1}, {"match": "b", "ep_size": 2}]})j"),
            R"j({"a":{},"d":{"_ep_size":1},"c":{},"b":{"_ep_size":2}})j");
}

TEST(ThawMeta, IdentityFieldsGoToMetaInDocumentOrder) {
  const Outcome out = thaw(R"j({"zeta": 1, "param_plan": {}, "injections": [], "alpha": [1.0],
      "frozen_sharded_params": [], "boundary_classes": {}, "covered": {"axes": []}})j");
  EXPECT_EQ(
      out.plan,
      R"j({"format":"hpfreeze.plan/v1","meta":{"zeta":1,"alpha":[1.0],"covered":{"axes":[]}},)j"
      R"j("modules":{}})j");
}

TEST(ThawMeta, RejectsWhatNoPlanDumpCanExpress) {
  EXPECT_EQ(thaw("[]").plan,
            "meta.json: expected a JSON object (a codegen_meta.json), got an array\n");
  EXPECT_EQ(thaw("{}").plan, "meta.json: missing param_plan: the meta plans no boundary\n");
  EXPECT_EQ(thaw(R"j({"param_plan": []})j").plan,
            "meta.json: /param_plan: expected an object, got an array\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {"a/b": 1, "c": {"params": {"w": {"tp": "S(x)", "cp": 1},
                                                                   "v": []}}}})j")
                .plan,
            "meta.json: /param_plan/a~1b: expected an object, got an integer\n"
            "meta.json: /param_plan/c/params/w/tp: invalid placement 'S(x)': dim 'x' is not an "
            "integer\n"
            "meta.json: /param_plan/c/params/w/cp: expected a placement string, got an integer\n"
            "meta.json: /param_plan/c/params/v: expected an object (axis -> placement), got an "
            "array\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {"b": {"params": "R", "ep_size": 1, "future": 2}}})j").plan,
            "meta.json: /param_plan/b/params: expected an object (param -> axis -> placement), "
            "got a string\n"
            "meta.json: /param_plan/b/ep_size: 'ep_size' is an injection field and cannot appear "
            "in param_plan\n");
  // Other commands keep an unknown key (a newer upstream's); no plan dump can hold it.
  EXPECT_EQ(thaw(R"j({"param_plan": {"b": {"future": 2}}})j").plan,
            "meta.json: /param_plan/b/future: unknown param_plan field 'future' (no module-spec "
            "attribute to thaw it to)\n");
}

TEST(ThawMeta, RejectsFieldsOfTheWrongTypeForTheirKind) {
  // Wrong types are decoding errors (every command's); tags in plain fields are thaw's.
  EXPECT_EQ(thaw(R"j({"param_plan": {"b": {"in_src": "x", "out_names": {"a": 1},
      "tp_divide_attrs": 3}}})j")
                .plan,
            "meta.json: /param_plan/b/in_src: expected an object (name -> placements), got a "
            "string\n"
            "meta.json: /param_plan/b/out_names: expected an array, got an object\n"
            "meta.json: /param_plan/b/tp_divide_attrs: expected an array, got an integer\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {"b": {"is_boundary": {"$callable": "f"},
      "deferred_bias_params": [{"k": {"$target": {}}}]}}})j")
                .plan,
            "meta.json: /param_plan/b/is_boundary: key '$callable' cannot be expressed in a plan "
            "dump (it would read as a typed value)\n"
            "meta.json: /param_plan/b/deferred_bias_params/0/k: key '$target' cannot be expressed "
            "in a plan dump (it would read as a typed value)\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {"b": {}}, "injections": [
      {"match": "b", "ep_stack": [1], "ep_size": {"$placement": "Replicate"},
       "inner_target": {"x": {"$placement": "Replicate"}}}]})j")
                .plan,
            "meta.json: /injections/0/ep_stack: expected an object, got an array\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {"b": {}}, "injections": [
      {"match": "b", "ep_size": {"$placement": "Replicate"},
       "inner_target": {"x": {"$placement": "Replicate"}}}]})j")
                .plan,
            "meta.json: /injections/0/inner_target/x: key '$placement' cannot be expressed in a "
            "plan dump (it would read as a typed value)\n"
            "meta.json: /injections/0/ep_size: key '$placement' cannot be expressed in a plan dump "
            "(it would read as a typed value)\n");
}

TEST(ThawMeta, FalsyValuesFreezeDropsAreNotChecked) {
  EXPECT_EQ(modules_of(R"j({"param_plan": {"b": {"in_src": false, "out_names": 0,
      "tp_divide_attrs": null}}, "injections": [{"match": "b", "ep_stack": "", "ep_size": 0}]})j"),
            R"j({"b":{"in_src":false,"out_names":0,"tp_divide_attrs":null,"_ep_stack":"",)j"
            R"j("_ep_size":0}})j");
}

TEST(ThawMeta, RejectsBadInjectionsAndTopLevelFields) {
  EXPECT_EQ(thaw(R"j({"param_plan": {}, "injections": [3, {"ep_size": 1}, {"match": 1},
      {"match": "x", "params": {}}]})j")
                .plan,
            "meta.json: /injections/0: expected an object, got an integer\n"
            "meta.json: /injections/1: injection without a 'match'\n"
            "meta.json: /injections/2/match: expected a string, got an integer\n"
            "meta.json: /injections/3/params: 'params' is a param_plan field and cannot appear in "
            "an injection\n");
  EXPECT_EQ(
      thaw(R"j({"param_plan": {"x": {}}, "injections": [{"match": "x", "future": 1}]})j").plan,
      "meta.json: /injections/0/future: unknown injection field 'future' (no module-spec "
      "attribute to thaw it to)\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {}, "injections": {}, "tied_pairs": [["a", 1], "b"],
      "mesh_dim_names": "tp", "special_handlers": [], "covered": null})j")
                .plan,
            "meta.json: /injections: expected an array of objects, got an object\n"
            "meta.json: /tied_pairs/0/1: expected a string, got an integer\n"
            "meta.json: /tied_pairs/1: expected an array of strings, got a string\n"
            "meta.json: /mesh_dim_names: expected null or an array of strings, got a string\n"
            "meta.json: /special_handlers: expected an object, got an array\n");
  // freeze reads the thawed plan's meta as its base, whose covered must be an object.
  EXPECT_EQ(thaw(R"j({"param_plan": {}, "covered": null})j").plan,
            "meta.json: /covered: expected an object, got null\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {}, "tied_pairs": null, "mesh_dim_names": null,
      "special_handlers": null})j")
                .plan,
            R"j({"format":"hpfreeze.plan/v1","mesh_dim_names":null,"tied_pairs":null,)j"
            R"j("special_handlers":null,"meta":{},"modules":{}})j");
}

TEST(ThawMeta, BoundaryClassesAreCheckedOnlyForTheModel) {
  const std::string meta = R"j({"param_plan": {}, "boundary_classes": {"a": 1}})j";
  EXPECT_EQ(thaw(meta).warnings, "");
  EXPECT_EQ(thaw(meta, true).plan,
            "meta.json: /boundary_classes/a: expected a string, got an integer\n");
  EXPECT_EQ(thaw(R"j({"param_plan": {}, "boundary_classes": []})j", true).plan,
            "meta.json: /boundary_classes: expected an object, got an array\n");
}

TEST(ThawMeta, ManyErrorsAreCapped) {
  std::string meta = R"j({"param_plan": {)j";
  for (int i = 0; i < 105; ++i)
    meta += (i ? "," : "") + std::string("\"m") + std::to_string(i) + "\": 1";
  meta += "}}";
  const std::string errors = thaw(meta).plan;
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 101);
  EXPECT_NE(errors.find("meta.json: 5 more errors not shown\n"), std::string::npos);
}

TEST(ThawMeta, WarnsAboutWhatWillNotRoundTrip) {
  const Outcome out = thaw(R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}},
      "frozen_sharded_params": ["x.w"], "boundary_classes": {"b": "B"},
      "injections": [{"match": "b", "ep_size": 1}, {"match": "c", "ep_size": 2},
                     {"match": "b", "ep_size": 3, "inner_target": "t"}]})j",
                           true);
  EXPECT_EQ(out.warnings,
            "meta.json: /injections/1: match 'c' has no param_plan entry: thawed as a module, so "
            "freezing adds the entry {}\n"
            "meta.json: /injections/2: match 'b' appears in more than one injection: merged into "
            "one, later keys win\n"
            "meta.json: /boundary_classes: 1 boundary has no class (first: 'c'); the model tree "
            "gives it the class '' so that freeze accepts the plan\n"
            "meta.json: /frozen_sharded_params: does not match the parameters sharded in "
            "param_plan (1 missing, 1 extra); freezing the thawed plan writes the recomputed "
            "list\n");
  const std::size_t at = out.plan.find("\"modules\":");
  EXPECT_EQ(
      out.plan.substr(at),
      R"j("modules":{"b":{"params":{"w":{"tp":{"$placement":"Shard","dim":0,"uneven_shard":false}}},)j"
      R"j("inner_target":"t","_ep_size":3},"c":{"_ep_size":2}}})j");
  EXPECT_EQ(out.model, R"j({"format":"hpfreeze.model/v1","modules":{"b":"B","c":""}})j");
}

TEST(ThawMeta, FrozenShardedParamsWarnings) {
  const std::string plan =
      R"j("param_plan": {"": {"params": {"w": {"tp": "S(0)"}, "r": {"tp": "R"}}},
                                 "b": {"params": {"": {"tp": "P(sum)"}}}})j";
  EXPECT_EQ(thaw("{" + plan + R"j(, "frozen_sharded_params": ["b", "w"]})j").warnings, "");
  EXPECT_EQ(thaw("{" + plan + "}").warnings, "");
  EXPECT_EQ(thaw("{" + plan + R"j(, "frozen_sharded_params": ["w", "b"]})j").warnings,
            "meta.json: /frozen_sharded_params: does not match the parameters sharded in "
            "param_plan (order or duplicates differ); freezing the thawed plan writes the "
            "recomputed list\n");
  EXPECT_EQ(thaw("{" + plan + R"j(, "frozen_sharded_params": {}})j").plan,
            "meta.json: /frozen_sharded_params: expected an array of strings, got an object\n");
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// freeze(thaw(meta)) in-process; the meta bytes or the first error.
std::string round_trip(const std::string& meta_bytes) {
  JsonDocument meta_doc = parse(meta_bytes);
  ThawOptions options;
  options.model = true;
  Expected<FrozenMeta> meta = decode_meta(meta_doc, "thaw");
  if (!meta) return "decode meta: " + meta.errors().front().location_and_message();
  Expected<ThawedPlan> thawed = thaw_meta(*meta, options);
  if (!thawed) return "thaw: " + thawed.errors().front().location_and_message();
  Expected<ThawedBytes> bytes = thaw_meta_to_bytes(*meta, options);
  if (!bytes || bytes->plan != encode_plain_json(thawed->plan) + "\n") {
    return "thaw_meta_to_bytes differs from the tree's encoding";
  }
  JsonDocument plan_doc = parse(encode_plain_json(thawed->plan), "plan.json");
  JsonDocument model_doc = parse(encode_plain_json(*thawed->model), "model.json");
  Expected<PlanDump> plan = decode_plan_dump(plan_doc);
  if (!plan) return "decode: " + plan.errors().front().location_and_message();
  Expected<ModelTree> model = decode_model_tree(model_doc);
  if (!model) return "model: " + model.errors().front().location_and_message();
  FreezeOptions freeze_options;
  freeze_options.allow_empty = true;
  Expected<FreezeResult> frozen = freeze_plan(*plan, *model, freeze_options);
  if (!frozen) return "freeze: " + frozen.errors().front().location_and_message();
  std::optional<Json> base = plan->meta;
  return encode_python_json(assemble_meta(frozen->frozen, base ? &*base : nullptr));
}

TEST(ThawRoundTrip, TrickyMetaComesBackByteForByte) {
  const std::string meta =
      read_file(std::filesystem::path(HPFREEZE_TESTDATA_DIR) / "thaw" / "tricky.json");
  ASSERT_FALSE(meta.empty());
  EXPECT_EQ(round_trip(meta), meta);
}

TEST(ThawRoundTrip, EveryGoldenMetaComesBackByteForByte) {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(HPFREEZE_TESTDATA_DIR) / "cases")) {
    const std::filesystem::path expected = entry.path() / "expected.json";
    if (!std::filesystem::exists(expected)) continue;
    const std::string meta = read_file(expected);
    EXPECT_EQ(round_trip(meta), meta) << expected;
    ++count;
  }
  EXPECT_GT(count, 10u);
}

// A meta large enough (about 9 MB as a plan dump) to be written in two halves on two
// threads, with escapes and non-ASCII names on both sides of any split, modules with
// fields and injections, null, empty and axis-less params, and a frozen_sharded_params
// long enough to be checked on the second thread (and wrong, so that it warns).
std::string large_meta() {
  std::string plan;
  std::string sharded;
  std::string classes;
  for (int m = 0; m < 300; ++m) {
    const std::string fqn = "layers." + std::to_string(m) + (m % 7 == 0 ? ".\u00e9\\\"q" : "");
    classes += (m > 0 ? ", " : "") + std::string("\"") + fqn + R"j(": "Layer")j";
    std::string entry = R"j("out_names": ["o"], "tp_divide_attrs": ["n"])j";
    if (m % 50 == 3) {
      plan += (m > 0 ? ", " : "") + std::string("\"") + fqn + "\": {" + entry +
              (m % 100 == 3 ? R"j(, "params": null})j" : R"j(, "params": {}})j");
      continue;
    }
    std::string params;
    for (int p = 0; p < 150; ++p) {
      const std::string name = "proj_" + std::to_string(p) + (p % 11 == 0 ? "\\t\u4e2d" : "");
      params += (p > 0 ? ", " : "") + std::string("\"") + name +
                "\": " + (p == 149 ? "{}" : R"j({"cp": "P(max)", "ep": "R", "tp": "SS(0,2)"})j");
      if (p != 149 && (m + p) % 97 != 0) {
        sharded += (sharded.empty() ? "" : ", ") + std::string("\"") + fqn + "." + name + "\"";
      }
    }
    plan += (m > 0 ? ", " : "") + std::string("\"") + fqn + "\": {" + entry +
            (m % 2 == 0 ? ", \"is_boundary\": true" : "") + ", \"params\": {" + params + "}}";
  }
  return R"j({"boundary_classes": {)j" + classes + R"j(}, "covered": {"sharding_plan": true},
      "frozen_sharded_params": [)j" +
         sharded + R"j(],
      "injections": [{"match": "layers.1", "ep_size": 2}, {"match": "layers.0.\u00e9\"q",
                      "ep_stack": {"ep": [0]}}],
      "mesh_dim_names": ["tp", "cp", "ep"], "param_plan": {)j" +
         plan + R"j(},
      "special_handlers": {"layers.2.proj_1": "h"}, "tied_pairs": [], "zz": [1]})j";
}

TEST(ThawMeta, LargePlanWrittenInTwoHalvesHasTheTreesBytes) {
  JsonDocument doc = parse(large_meta());
  Expected<FrozenMeta> meta = decode_meta(doc, "thaw", MetaDecodeOptions::decoded_params_only());
  ASSERT_TRUE(meta.ok()) << meta.errors().front().location_and_message();
  ASSERT_GE(meta->frozen_sharded_params.size(), 10000u);
  ThawOptions options;
  options.model = true;
  Expected<ThawedPlan> tree = thaw_meta(*meta, options);
  ASSERT_TRUE(tree.ok());
  const std::string expected = encode_plain_json(tree->plan) + "\n";
  ASSERT_GT(expected.size(), std::size_t{8} << 20);
  ASSERT_EQ(tree->warnings.size(), 1u) << tree->warnings.front().location_and_message();
  EXPECT_NE(tree->warnings.front().message.find("448 missing"), std::string::npos)
      << tree->warnings.front().message;
  options.concurrency = Concurrency{1};
  Expected<ThawedBytes> one_thread = thaw_meta_to_bytes(*meta, options);
  ASSERT_TRUE(one_thread.ok());
  EXPECT_TRUE(one_thread->plan == expected);
  EXPECT_EQ(diagnostic_lines(one_thread->warnings), diagnostic_lines(tree->warnings));
  options.concurrency = Concurrency{2};
  for (int run = 0; run < 3; ++run) {
    Expected<ThawedBytes> two_threads = thaw_meta_to_bytes(*meta, options);
    ASSERT_TRUE(two_threads.ok());
    ASSERT_EQ(two_threads->plan.size(), expected.size());
    EXPECT_TRUE(two_threads->plan == expected) << "run " << run;
    EXPECT_EQ(two_threads->model, encode_plain_json(*tree->model) + "\n");
    EXPECT_EQ(diagnostic_lines(two_threads->warnings), diagnostic_lines(tree->warnings));
  }
}

}  // namespace
}  // namespace hpfreeze
