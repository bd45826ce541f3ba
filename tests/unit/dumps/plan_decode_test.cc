// Plan dump decoding: the type rules of docs/formats.md ("The plan dump"), with exact
// diagnostics, and what the decoded structs hold.
#include <gtest/gtest.h>

#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "dumps/plan.h"
#include "hpfreeze/base/concurrency.h"
#include "json/encode.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"plan.json"};

std::string plan_error(std::string text) {
  JsonDocument doc = parse(std::move(text));
  Expected<PlanDump> plan = decode_plan_dump(doc);
  EXPECT_FALSE(plan.ok());
  return plan ? "<ok>" : plan.errors().front().location_and_message();
}

// The decoded plan, with its document kept alive beside it (the plan holds views into it).
struct Decoded {
  JsonDocument doc;
  PlanDump plan;
};

Decoded decoded(std::string text) {
  JsonDocument doc = parse(std::move(text));
  Expected<PlanDump> plan = decode_plan_dump(doc);
  EXPECT_TRUE(plan.ok()) << (plan ? "" : plan.errors().front().location_and_message());
  return Decoded{std::move(doc), plan ? std::move(*plan) : PlanDump{}};
}

TEST(DecodePlan, TopLevelRules) {
  EXPECT_EQ(plan_error("[]"), "plan.json: expected an object, got an array");
  EXPECT_EQ(plan_error("{}"), "plan.json: missing required key 'modules'");
  EXPECT_EQ(plan_error(R"j({"modules": null})j"),
            "plan.json: /modules: expected an object, got null");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"out_src": {"$placement": "Replicate"}}}})j"),
            "plan.json: /modules/m/out_src: expected an object of named placements, got a typed "
            "$placement value");
  EXPECT_EQ(plan_error(R"j({"modules": {}, "extra": 1})j"),
            "plan.json: /extra: unknown top-level key 'extra'");
  EXPECT_EQ(plan_error(R"j({"modules": {}, "format": "hpfreeze.plan/v2"})j"),
            "plan.json: /format: unsupported format 'hpfreeze.plan/v2' (expected "
            "'hpfreeze.plan/v1')");
  EXPECT_EQ(plan_error(R"j({"modules": [], "format": "hpfreeze.plan/v1"})j"),
            "plan.json: /modules: expected an object, got an array");
  EXPECT_EQ(plan_error(R"j({"modules": {}, "mesh_dim_names": ["tp", 1]})j"),
            "plan.json: /mesh_dim_names/1: expected a string, got an integer");
  EXPECT_EQ(plan_error(R"j({"modules": {}, "tied_pairs": [["a", "b"], "c"]})j"),
            "plan.json: /tied_pairs/1: expected an array, got a string");
  EXPECT_EQ(plan_error(R"j({"modules": {}, "special_handlers": []})j"),
            "plan.json: /special_handlers: expected an object, got an array");
  EXPECT_EQ(plan_error(R"j({"modules": {}, "sequence_parallel": 1})j"),
            "plan.json: /sequence_parallel: expected a boolean, got an integer");
  EXPECT_EQ(plan_error(R"j({"modules": {"a/b~c": 3}})j"),
            "plan.json: /modules/a~1b~0c: expected an object, got an integer");
}

TEST(DecodePlan, SpecFieldRules) {
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"bogus": 1}}})j"),
            "plan.json: /modules/m/bogus: unknown module-spec field 'bogus'");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"params": []}}})j"),
            "plan.json: /modules/m/params: expected an object, got an array");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"params": {"w": "S(0)"}}}})j"),
            "plan.json: /modules/m/params/w: expected an object, got a string");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"params": {"w": {"tp": null}}}}})j"),
            "plan.json: /modules/m/params/w/tp: expected a placement ({\"$placement\": ...} or a "
            "canonical string), got null");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"params": {"w": {"tp": {"dim": 0}}}}}})j"),
            "plan.json: /modules/m/params/w/tp: expected a placement ({\"$placement\": ...} or a "
            "canonical string), got a plain object");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"params": {"w": {"tp": "S(x)"}}}}})j"),
            "plan.json: /modules/m/params/w/tp: invalid placement 'S(x)': dim 'x' is not an "
            "integer");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"in_src": [1]}}})j"),
            "plan.json: /modules/m/in_src: expected an object, got an array");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"out_names": "abc"}}})j"),
            "plan.json: /modules/m/out_names: expected an array, got a string");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"tp_divide_attrs": 0}}})j"),
            "plan.json: /modules/m/tp_divide_attrs: expected an array, got an integer");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"_ep_stack": [1]}}})j"),
            "plan.json: /modules/m/_ep_stack: expected an object, got an array");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"is_boundary": {"$callable": "f"}}}})j"),
            "plan.json: /modules/m/is_boundary: expected a plain JSON value, got a typed $callable "
            "value");
  EXPECT_EQ(plan_error(R"j({"modules": {"m": {"out_names": [{"x": {"$target": {}}}]}}})j"),
            "plan.json: /modules/m/out_names/0/x: expected a plain JSON value, got a typed "
            "$target value");
}

TEST(DecodePlan, TypedValueRules) {
  auto in_src = [](const std::string& value) {
    return plan_error(R"j({"modules": {"m": {"inner_wrapper": )j" + value + "}}}");
  };
  EXPECT_EQ(in_src(R"j({"$placement": "Shrad"})j"),
            "plan.json: /modules/m/inner_wrapper: unknown placement type 'Shrad'; did you mean "
            "'Shard'? (expected Shard, StridedShard, Replicate or Partial)");
  EXPECT_EQ(in_src(R"j({"$placement": "RaggedShard"})j"),
            "plan.json: /modules/m/inner_wrapper: placement type 'RaggedShard' has no canonical "
            "string form and cannot be frozen");
  EXPECT_EQ(in_src(R"j({"$placement": 3})j"),
            "plan.json: /modules/m/inner_wrapper/$placement: expected a string, got an integer");
  EXPECT_EQ(in_src(R"j({"$placement": "Shard"})j"),
            "plan.json: /modules/m/inner_wrapper: placement Shard needs a dim");
  EXPECT_EQ(in_src(R"j({"$placement": "StridedShard", "dim": 0})j"),
            "plan.json: /modules/m/inner_wrapper: placement StridedShard needs a split_factor");
  EXPECT_EQ(in_src(R"j({"$placement": "StridedShard", "dim": 0, "split_factor": 0})j"),
            "plan.json: /modules/m/inner_wrapper/split_factor: split_factor must be >= 1, got 0");
  EXPECT_EQ(in_src(R"j({"$placement": "Shard", "dim": 1.0})j"),
            "plan.json: /modules/m/inner_wrapper/dim: expected an integer, got a float");
  EXPECT_EQ(in_src(R"j({"$placement": "Shard", "dim": 9223372036854775808})j"),
            "plan.json: /modules/m/inner_wrapper/dim: dim does not fit in a signed 64-bit "
            "integer");
  EXPECT_EQ(in_src(R"j({"$placement": "Shard", "dim": 0, "uneven_shard": 1})j"),
            "plan.json: /modules/m/inner_wrapper/uneven_shard: expected a boolean, got an "
            "integer");
  EXPECT_EQ(in_src(R"j({"$placement": "Shard", "dim": 0, "uneven_shard": null})j"),
            "plan.json: /modules/m/inner_wrapper/uneven_shard: expected a boolean, got null");
  EXPECT_EQ(in_src(R"j({"$placement": "Replicate", "dim": 0})j"),
            "plan.json: /modules/m/inner_wrapper/dim: unknown field 'dim' for placement "
            "Replicate");
  EXPECT_EQ(in_src(R"j({"$placement": "Partial", "reduce_op": ""})j"),
            "plan.json: /modules/m/inner_wrapper/reduce_op: reduce_op must not be empty");
  EXPECT_EQ(in_src(R"j({"$target": []})j"),
            "plan.json: /modules/m/inner_wrapper/$target: expected an object, got an array");
  EXPECT_EQ(in_src(R"j({"$target": {}, "x": 1})j"),
            "plan.json: /modules/m/inner_wrapper: a $target object may hold no other key");
  EXPECT_EQ(in_src(R"j({"$callable": ""})j"),
            "plan.json: /modules/m/inner_wrapper/$callable: a $callable name must not be empty");
  EXPECT_EQ(in_src(R"j({"$callable": 1})j"),
            "plan.json: /modules/m/inner_wrapper/$callable: expected a string, got an integer");
  EXPECT_EQ(in_src(R"j({"$callable": "f", "$target": {}})j"),
            "plan.json: /modules/m/inner_wrapper: object carries two type tags, '$callable' and "
            "'$target'");
}

// A Partial's reduce_op is written as P(op), which the canonical-string parser must read
// back as the same op: ASCII only, no newline, not empty; everywhere a placement may be.
TEST(DecodePlan, AnUnknownPlacementTypeSuggestsTheNearest) {
  auto type_error = [](const std::string& type) {
    return plan_error(R"j({"modules": {"m": {"params": {"w": {"tp": {"$placement": ")j" + type +
                      R"j("}}}}}})j");
  };
  const std::string expected = " (expected Shard, StridedShard, Replicate or Partial)";
  for (const auto& [typed, meant] :
       std::vector<std::pair<std::string, std::string>>{{"Replicat", "Replicate"},
                                                        {"replicate", "Replicate"},
                                                        {"REPLICATE", "Replicate"},
                                                        {"Repilcate", "Replicate"},
                                                        {"Shadr", "Shard"},
                                                        {"shard", "Shard"},
                                                        {"StridedShrad", "StridedShard"},
                                                        {"Partail", "Partial"},
                                                        {"partial", "Partial"}}) {
    EXPECT_EQ(type_error(typed), "plan.json: /modules/m/params/w/tp: unknown placement type '" +
                                     typed + "'; did you mean '" + meant + "'?" + expected);
  }
  // Nothing near enough: no suggestion; a huge name is not compared cell by cell.
  for (const std::string& typed :
       std::vector<std::string>{"Bogus", "Interleaved", "R", std::string(1 << 20, 'x')}) {
    EXPECT_EQ(type_error(typed), "plan.json: /modules/m/params/w/tp: unknown placement type " +
                                     quote_for_diagnostic(typed) + expected);
  }
}

TEST(DecodePlan, ReduceOpMustReadBackFromItsCanonicalString) {
  auto partial = [](const std::string& op_json) {
    return plan_error(
        R"j({"modules": {"m": {"params": {"w": {"tp": {"$placement": "Partial", "reduce_op": )j" +
        op_json + "}}}}}}");
  };
  EXPECT_EQ(partial(R"j("su\u00e9")j"),
            "plan.json: /modules/m/params/w/tp/reduce_op: reduce_op 'su\\xc3\\xa9' does not read "
            "back from P(...): it must be ASCII without a newline");
  EXPECT_EQ(partial(R"j("sum\nmax")j"),
            "plan.json: /modules/m/params/w/tp/reduce_op: reduce_op 'sum\\nmax' does not read back "
            "from P(...): it must be ASCII without a newline");
  EXPECT_EQ(partial(R"j("")j"),
            "plan.json: /modules/m/params/w/tp/reduce_op: reduce_op must not be empty");
  EXPECT_EQ(partial("null"),
            "plan.json: /modules/m/params/w/tp/reduce_op: expected a string, got null");
  EXPECT_EQ(
      plan_error(
          R"j({"modules": {"m": {"out_src": {"y": [{"$placement": "Partial", "reduce_op": "\u03a3"}]}}}})j"),
      "plan.json: /modules/m/out_src/y/0/reduce_op: reduce_op '\\xce\\xa3' does not read back "
      "from P(...): it must be ASCII without a newline");
  // Any other ASCII text reads back, control characters and parentheses included.
  Decoded ok = decoded(
      R"j({"modules": {"m": {"params": {"w": {"a": {"$placement": "Partial", "reduce_op": "a)b\t\r\u007f"},
                                             "b": {"$placement": "Partial"}}}}}})j");
  const std::span<AxisPlacement> axes = (*ok.plan.modules.at(0).params).at(0).axes;
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(to_canonical(axes[0].placement), "P(a)b\t\r\x7f)");
  EXPECT_EQ(to_canonical(axes[1].placement), "P(sum)");
  for (const AxisPlacement& axis : axes) {
    const std::string text = to_canonical(axis.placement);  // `back` views into it
    Expected<Placement> back = parse_placement(text);
    ASSERT_TRUE(back.ok()) << axis.axis;
    EXPECT_EQ(to_canonical(*back), to_canonical(axis.placement));
  }
}

// The dump form reads back as what placement_to_dump wrote, for every kind.
TEST(DecodePlan, DumpFormOfEveryKindReadsBack) {
  const Placement placements[] = {Placement::shard(1), Placement::shard(0, true),
                                  Placement::strided_shard(2, 4, true), Placement::replicate(),
                                  Placement::partial("avg")};
  std::set<PlacementKind> kinds;
  for (const Placement& p : placements) {
    kinds.insert(p.kind);
    const std::string dump = encode_compact_json(placement_to_dump(p));
    Decoded d = decoded(R"j({"modules": {"m": {"params": {"w": {"tp": )j" + dump + "}}}}}");
    ASSERT_FALSE(d.plan.modules.empty()) << dump;
    const std::span<AxisPlacement> axes = (*d.plan.modules[0].params).at(0).axes;
    ASSERT_EQ(axes.size(), 1u) << dump;
    EXPECT_EQ(axes[0].placement, p) << dump;
  }
  EXPECT_EQ(kinds.size(), kPlacementKinds);
}

// Null is absent for every optional top-level key and module-spec key.
TEST(DecodePlan, NullMeansAbsent) {
  Decoded d = decoded(R"j({"format": null, "mesh_dim_names": null, "tied_pairs": null,
      "special_handlers": null, "meta": null, "sequence_parallel": null, "loss_parallel": null,
      "modules": {"m": {"params": null, "in_src": null, "is_boundary": null, "inner_wrapper": null,
                        "_ep_size": null, "_tp_local_attr_plan": null}}})j");
  EXPECT_TRUE(d.plan.mesh_dim_names.empty());
  EXPECT_TRUE(d.plan.tied_pairs.empty());
  EXPECT_TRUE(d.plan.special_handlers.is_object());
  EXPECT_FALSE(d.plan.meta.has_value());
  ASSERT_EQ(d.plan.modules.size(), 1u);
  EXPECT_EQ(d.plan.modules[0].fqn, "m");
  EXPECT_FALSE(d.plan.modules[0].params.has_value());
  EXPECT_TRUE(d.plan.modules[0].fields.empty());
}

// $target contents, special_handlers and meta are plain JSON: look-alike tags are data.
TEST(DecodePlan, PlainJsonPlacesKeepLookAlikeTags) {
  Decoded d = decoded(R"j({"modules": {"m": {"inner_wrapper": {"$target": {"_target_": "w",
          "f": {"$callable": ""}, "p": {"$placement": "Partial", "reduce_op": "\n"}}}}},
      "special_handlers": {"x": {"$placement": "Bogus", "$callable": 1}},
      "meta": {"source": {"$target": 5}}})j");
  ASSERT_EQ(d.plan.modules.at(0).fields.size(), 1u);
  const auto* target = std::get_if<Target>(&d.plan.modules[0].fields[0].value.v);
  ASSERT_NE(target, nullptr);
  const Json* f = target->object.find("f");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(f->find("$callable"), nullptr);
  EXPECT_TRUE(d.plan.special_handlers.find("x")->is_object());
  EXPECT_TRUE(d.plan.meta->find("source")->find("$target") != nullptr);
}

TEST(DecodePlan, WhatTheStructsHold) {
  Decoded d = decoded(R"j({"mesh_dim_names": ["cp", "tp"], "tied_pairs": [["a", "b"], []],
      "modules": {"": {"params": {"w": {"tp": "S(-1)", "cp": {"$placement": "Shard", "dim": -2}}}},
                  "x": {"local_compute_fn": {"$callable": "f"}, "out_names": ["o"], "params": {}}}})j");
  ASSERT_EQ(d.plan.modules.size(), 2u);
  EXPECT_EQ(d.plan.modules[0].fqn, "");
  const ParamPlacements& w = d.plan.modules[0].params->at(0);
  EXPECT_EQ(w.name, "w");
  ASSERT_EQ(w.axes.size(), 2u);
  EXPECT_EQ(w.axes[0].axis, "tp");
  EXPECT_EQ(to_canonical(w.axes[0].placement), "S(-1)");  // uneven Shard(0), not a negative dim
  EXPECT_EQ(to_canonical(w.axes[1].placement), "S(-2)");
  // Only the typed Shard(-2) counts as a negative real dim.
  EXPECT_EQ(d.plan.negative_dims.count, 1u);
  EXPECT_EQ(d.plan.negative_dims.first_pointer, "/modules//params/w/cp");
  EXPECT_EQ(d.plan.mesh_dim_names, (std::vector<std::string_view>{"cp", "tp"}));
  ASSERT_EQ(d.plan.tied_pairs.size(), 2u);
  EXPECT_TRUE(d.plan.tied_pairs[1].empty());
  // Fields sorted by their index in the field table: out_names before local_compute_fn.
  const ModuleSpec& x = d.plan.modules[1];
  EXPECT_TRUE(x.params.has_value() && x.params->empty());
  ASSERT_EQ(x.fields.size(), 2u);
  EXPECT_EQ(kSpecFields[x.fields[0].index].attribute, "out_names");
  EXPECT_EQ(kSpecFields[x.fields[1].index].attribute, "local_compute_fn");
  const auto* callable = std::get_if<Callable>(&x.fields[1].value.v);
  ASSERT_NE(callable, nullptr);
  EXPECT_EQ(callable->name, "f");
}

// A plan parsed without the duplicate-key check (as freeze parses it): the decoder finds a
// repeated key in every object it walks or copies and reports it as the parse would have,
// at the second occurrence, before any decode error.
TEST(DecodePlan, RepeatedKeysWhenTheParseDidNotCheck) {
  auto decode = [](const std::string& text) {
    ParseOptions unchecked;
    unchecked.check_duplicate_keys = false;
    Expected<JsonDocument> doc = parse_json_document("plan.json", text, unchecked);
    EXPECT_TRUE(doc.ok());
    Expected<PlanDump> plan = decode_plan_dump(*doc);
    return plan ? std::string("<ok>") : plan.errors().front().location_and_message();
  };
  const std::string shard = R"j({"$placement": "Shard", "dim": 0})j";
  // Root, modules, module-spec fields and exempt attributes (bits).
  EXPECT_EQ(decode(R"j({"modules": {}, "format": "hpfreeze.plan/v1", "modules": {}})j"),
            "plan.json: /modules: duplicate key 'modules'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {}, "b": {}, "a": {}}})j"),
            "plan.json: /modules/a: duplicate key 'a'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"is_boundary": true, "is_boundary": false}}})j"),
            "plan.json: /modules/a/is_boundary: duplicate key 'is_boundary'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"_is_terminal": 1, "_is_terminal": 2}}})j"),
            "plan.json: /modules/a/_is_terminal: duplicate key '_is_terminal'");
  // Inside values that are ignored or copied without a walk.
  EXPECT_EQ(decode(R"j({"modules": {"a": {"_is_terminal": {"x": 1, "x": 2}}}})j"),
            "plan.json: /modules/a/_is_terminal/x: duplicate key 'x'");
  EXPECT_EQ(decode(R"j({"modules": {}, "special_handlers": {"w": "h", "w": "h"}})j"),
            "plan.json: /special_handlers/w: duplicate key 'w'");
  EXPECT_EQ(decode(R"j({"modules": {}, "meta": {"k": [{"z": 1, "z": 1}]}})j"),
            "plan.json: /meta/k/0/z: duplicate key 'z'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"inner_wrapper": {"$target": {"t": 1, "t": 2}}}}})j"),
            "plan.json: /modules/a/inner_wrapper/$target/t: duplicate key 't'");
  // Parameters (pairwise below 17 names, hashed above), axes and placement fields.
  EXPECT_EQ(decode(R"j({"modules": {"a": {"params": {"w": {}, "w": {}}}}})j"),
            "plan.json: /modules/a/params/w: duplicate key 'w'");
  std::string many;
  for (int i = 0; i < 40; ++i) many += "\"p" + std::to_string(i) + "\": {\"tp\": " + shard + "}, ";
  EXPECT_EQ(decode(R"j({"modules": {"a": {"params": {)j" + many + R"j("p7": {}}}}})j"),
            "plan.json: /modules/a/params/p7: duplicate key 'p7'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"params": {)j" + many + R"j("p40": {}}}}})j"), "<ok>");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"params": {"w": {"tp": )j" + shard + R"j(, "tp": )j" +
                   shard + "}}}}}"),
            "plan.json: /modules/a/params/w/tp: duplicate key 'tp'");
  EXPECT_EQ(
      decode(
          R"j({"modules": {"a": {"params": {"w": {"tp": {"$placement": "Shard", "dim": 0, "dim": 1}}}}}})j"),
      "plan.json: /modules/a/params/w/tp/dim: duplicate key 'dim'");
  // Named placements, plain values.
  EXPECT_EQ(decode(R"j({"modules": {"a": {"out_src": {"o": {"tp": "R"}, "o": {"tp": "R"}}}}})j"),
            "plan.json: /modules/a/out_src/o: duplicate key 'o'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"region_dispatch": {"r": 1, "r": 1}}}})j"),
            "plan.json: /modules/a/region_dispatch/r: duplicate key 'r'");
  // The repeat comes first even when a decode error comes earlier in the document.
  EXPECT_EQ(decode(R"j({"modules": {"a": {"bogus": 1}}, "meta": {"k": 1, "k": 2}})j"),
            "plan.json: /meta/k: duplicate key 'k'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"bogus": 1}}})j"),
            "plan.json: /modules/a/bogus: unknown module-spec field 'bogus'");
  EXPECT_EQ(decode(R"j({"modules": {"a": {"params": {"w": {"tp": "S(0)", "ep": "R"}},
                        "out_src": {"o": {"tp": "R"}}, "region_dispatch": {"r": 1, "s": 1}}},
                        "meta": {"k": 1}})j"),
            "<ok>");
}

// A plan of `count` modules, each with two params on three axes (the modules of a large
// plan are decoded on two threads when two CPUs are usable). Modules from
// `first_negative` on have a typed Shard with a negative dim; each module listed in `bad`
// has a placement with an unknown type, named after the module.
std::string many_modules(int count, int first_negative, const std::set<int>& bad = {}) {
  std::string text = R"j({"mesh_dim_names": ["cp", "tp", "ep"], "modules": {)j";
  for (int i = 0; i < count; ++i) {
    const std::string n = std::to_string(i);
    const std::string dim = i >= first_negative ? "-1" : std::to_string(i % 3);
    const std::string type = bad.count(i) != 0 ? "Bogus" + n : "Shard";
    text += (i > 0 ? ", " : "") + std::string("\"m") + n + R"j(": {"params": {"w)j" + n +
            R"j(": {"tp": {"$placement": ")j" + type + R"j(", "dim": )j" + dim +
            R"j(}, "cp": "R", "ep": "S(1)"}, "b": {"ep": "P(max)", "tp": "SS(0,2)"}}})j";
  }
  return text + "}}";
}

// What a decoded plan holds, as text: modules, params, axes and the negative dims.
std::string summary(const PlanDump& plan) {
  std::string out =
      std::to_string(plan.negative_dims.count) + " " + plan.negative_dims.first_pointer + "\n";
  for (const ModuleSpec& spec : plan.modules) {
    out += std::string(spec.fqn) + ":";
    for (const ParamPlacements& param : *spec.params) {
      out += " " + std::string(param.name) + "{";
      for (const AxisPlacement& a : param.axes) {
        out += std::string(a.axis) + "=" + to_canonical(a.placement) + ";";
      }
      out += "}";
    }
    out += "\n";
  }
  return out;
}

std::string decode_summary(const JsonDocument& doc, Concurrency concurrency = {2}) {
  Expected<PlanDump> plan = decode_plan_dump(doc, concurrency);
  return plan ? summary(*plan) : plan.errors().front().location_and_message();
}

TEST(DecodePlan, ModulesDecodedOnTwoThreadsHoldWhatOnePassHolds) {
  const JsonDocument doc = parse(many_modules(600, 37));
  const std::string one_pass = decode_summary(doc, Concurrency{1});
  EXPECT_NE(one_pass.find("563 /modules/m37/params/w37/tp\n"), std::string::npos)
      << one_pass.substr(0, 200);
  EXPECT_NE(one_pass.find("\nm599: w599{tp=S(-1);cp=R;ep=S(1);} b{ep=P(max);tp=SS(0,2);}\n"),
            std::string::npos);
  // The threads race differently each time: every run must match the one pass.
  for (int run = 0; run < 20; ++run) ASSERT_EQ(decode_summary(doc), one_pass) << "run " << run;
}

TEST(DecodePlan, FirstFailingModuleInDocumentOrderIsReported) {
  const JsonDocument doc = parse(many_modules(600, 600, {123, 124, 300, 599}));
  const std::string first =
      "plan.json: /modules/m123/params/w123/tp: unknown placement type 'Bogus123' (expected "
      "Shard, StridedShard, Replicate or Partial)";
  EXPECT_EQ(decode_summary(doc, Concurrency{1}), first);
  for (int run = 0; run < 20; ++run) ASSERT_EQ(decode_summary(doc), first) << "run " << run;
  // Only the last module is bad: every other one was decoded first.
  const JsonDocument last = parse(many_modules(600, 600, {599}));
  EXPECT_EQ(decode_summary(last),
            "plan.json: /modules/m599/params/w599/tp: unknown placement type 'Bogus599' (expected "
            "Shard, StridedShard, Replicate or Partial)");
}

}  // namespace
}  // namespace hpfreeze
