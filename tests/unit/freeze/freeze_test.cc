// Decoding and freeze passes in-process, with exact diagnostics.
#include "freeze/freeze.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dumps/plan.h"
#include "freeze/reference.h"
#include "hpfreeze/base/concurrency.h"
#include "json/encode.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"plan.json"};

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
  EXPECT_EQ(
      freeze_param_plan(R"j({"modules": {"lin": {
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
  EXPECT_EQ(freeze_param_plan(R"j({"modules": {"b": {"params": {"w": {"tp": "S(9)"}}}}})j", kModel,
                              lenient),
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
      "out_src": {"o": {"tp": {"$placement": "Shard", "dim": -2}}}},
      "lin": {"params": {"weight": {"tp": "R"}}}}})j");
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
  frozen.param_plan.boundaries.push_back({"m", false, 0, 0, {}});
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

// Freezes `plan_text` against a model naming its boundaries (no parameter checks) and
// returns encode_meta's bytes, or encode_python_json(assemble_meta(...))'s with `via_tree`.
// The meta's bytes: through the Json tree, or written by encode_meta with `concurrency`
// (its two halves at once with a second CPU, when the meta is large).
std::string meta_bytes(const std::string& plan_text, const std::string& model_text,
                       const std::string* base_text, bool via_tree, Concurrency concurrency = {2}) {
  JsonDocument plan_doc = parse(plan_text);
  JsonDocument model_doc = parse(model_text, "model.json");
  std::optional<JsonDocument> base_doc;
  std::optional<Json> base;
  if (base_text != nullptr) {
    base_doc.emplace(parse(*base_text, "base.json"));
    base = json_from_dom(base_doc->root());
  }
  Expected<PlanDump> plan = decode_plan_dump(plan_doc, concurrency);
  Expected<ModelTree> model = decode_model_tree(model_doc);
  if (!plan || !model) return "decode failed";
  FreezeOptions options;
  options.verify = false;
  options.allow_empty = true;
  Expected<FreezeResult> r = freeze_plan(*plan, *model, options);
  if (!r) return "freeze: " + r.errors().front().location_and_message();
  const Json* base_ptr = base ? &*base : nullptr;
  if (via_tree) return encode_python_json(assemble_meta(r->frozen, base_ptr));
  return encode_meta(r->frozen, meta_defaults_and_base(base_ptr), concurrency);
}

TEST(MetaEncoding, FrozenTablesWrittenInKeyOrder) {
  // Hand-written from docs/formats.md "The meta" and Python's json.dump(indent=2,
  // sort_keys=True): boundaries, params and axes sorted; out_names ("o") before
  // "params", tp_divide_attrs after it; empty params and axes inline.
  const std::string plan = R"j({"modules": {
      "z": {"params": {"w": {"tp": "S(0)", "ep": "R"}, "b": {}}, "tp_divide_attrs": ["n"],
            "out_names": ["o"]},
      "a": {"params": {}},
      "m": {}}})j";
  const std::string model = R"j({"modules": {"z": "Z", "a": "A", "m": "M"}})j";
  const std::string bytes = meta_bytes(plan, model, nullptr, false);
  const std::string expected_plan =
      "  \"param_plan\": {\n"
      "    \"a\": {\n"
      "      \"params\": {}\n"
      "    },\n"
      "    \"m\": {},\n"
      "    \"z\": {\n"
      "      \"out_names\": [\n"
      "        \"o\"\n"
      "      ],\n"
      "      \"params\": {\n"
      "        \"b\": {},\n"
      "        \"w\": {\n"
      "          \"ep\": \"R\",\n"
      "          \"tp\": \"S(0)\"\n"
      "        }\n"
      "      },\n"
      "      \"tp_divide_attrs\": [\n"
      "        \"n\"\n"
      "      ]\n"
      "    }\n"
      "  },\n";
  EXPECT_NE(bytes.find(expected_plan), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("  \"frozen_sharded_params\": [\n    \"z.w\"\n  ],\n"), std::string::npos)
      << bytes;
}

TEST(MetaEncoding, SameBytesAsTheAssembledTree) {
  const std::string model = R"j({"modules": {"": "Net", "b": "B", "b.c": "C", "\u00e9": "E",
      "x\"y": "Q", "b-c": "D"}})j";
  const std::string plans[] = {
      R"j({"modules": {}})j",
      R"j({"modules": {"b.c": {"params": {"z": {"tp": "S(1)"}, "a": {"tp": "R", "cp": "S(0)",
          "ep": {"$placement": "Partial", "reduce_op": "avg"}}}},
          "b": {"params": {"c.z": {"tp": "S(0)"}}, "in_src": {"x": {"tp": "R"}},
                "is_boundary": false, "region_dispatch": 2, "inner_wrapper": "w"},
          "b-c": {"params": {"\u00e9\u00e9": {"tp": "SS(0,2)"}, "e": {"tp": "R"}}},
          "\u00e9": {"params": {"x\ty": {"tp": "S(0)"}}},
          "x\"y": {}, "": {"params": {"lm_head.weight": {"tp": "S(-1)"}}}},
          "mesh_dim_names": ["tp", "cp", "ep"], "tied_pairs": [["a", "b"]],
          "special_handlers": {"k": {"z": 1, "a": [2.5, null]}},
          "meta": {"signature": "s", "zz": {"b": 1, "a": 2}}})j"};
  const std::string base = R"j({"param_plan": {"stale": {}}, "frozen_sharded_params": ["s"],
      "covered": {"axes": ["tp"], "sharding_plan": false}, "aa": [], "yaml_path": "p"})j";
  for (const std::string& plan : plans) {
    const std::string tree = meta_bytes(plan, model, nullptr, true);
    ASSERT_EQ(tree.rfind("{\n", 0), 0u) << tree;
    EXPECT_EQ(meta_bytes(plan, model, nullptr, false), tree);
    EXPECT_EQ(meta_bytes(plan, model, &base, false), meta_bytes(plan, model, &base, true));
  }
}

TEST(MetaEncoding, ShardedParamsMergedAcrossBoundaries) {
  // Joined FQNs of different boundaries interleave ("a" + "b-c.d" sorts before "a.b" +
  // "a": '-' < '.'), and two boundaries can name the same parameter ("a" + "b.c", "a.b" +
  // "c"): sorted by code point, listed once, replicated params left out.
  const std::string plan = R"j({"modules": {
      "": {"params": {"a.b.z": {"tp": "S(0)"}, "zz": {"tp": "S(0)"}}},
      "a": {"params": {"b.c": {"tp": "S(0)"}, "b-c.d": {"tp": "S(1)"}, "": {"tp": "P(sum)"}}},
      "a.b": {"params": {"c": {"tp": "S(0)"}, "a": {"tp": "SS(0,2)"}, "r": {"tp": "R"}}},
      "a.b-c": {"params": {"a": {"tp": "S(0)"}}}}})j";
  const std::string model = R"j({"modules": {"": "M", "a": "A", "a.b": "B", "a.b-c": "C"}})j";
  const std::string bytes = meta_bytes(plan, model, nullptr, false);
  EXPECT_NE(bytes.find("  \"frozen_sharded_params\": [\n    \"a\",\n    \"a.b-c.a\",\n"
                       "    \"a.b-c.d\",\n    \"a.b.a\",\n    \"a.b.c\",\n    \"a.b.z\",\n"
                       "    \"zz\"\n  ],\n"),
            std::string::npos)
      << bytes;
}

// The params of each boundary and frozen_sharded_params come out in unsigned byte order
// (Python's sort_keys on UTF-8) for names made to trip a sort keyed eight bytes at a time:
// long shared prefixes, names that are prefixes of others, NUL and non-ASCII bytes,
// duplicates across boundaries, and runs of tied words at every depth.
TEST(FreezePasses, ParamsAndShardedFqnsSortedByUnsignedBytes) {
  std::uint64_t state = 12345;
  const auto next = [&state](std::uint64_t bound) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return (state >> 33) % bound;
  };
  const std::string pieces[] = {"a",        "b",        ".",
                                "-",        "0",        "1",
                                "10",       "experts.", std::string(1, '\0'),
                                "\xc3\xa9", "\x7f",     "shared.prefix.of.some.length."};
  const auto json_string = [](const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
      if (c == '\0') {
        out += "\\u0000";
      } else if (c == '\x7f') {
        out += "\\u007f";
      } else {
        out += c;
      }
    }
    return out + "\"";
  };
  const std::vector<std::string> boundaries = {"", "a", "a.b", "a.b-c", "experts.1"};
  std::string plan = R"j({"modules": {)j";
  std::string model = R"j({"modules": {)j";
  std::vector<std::string> expected_sharded;
  std::vector<std::vector<std::string>> expected_params;
  for (std::size_t b = 0; b < boundaries.size(); ++b) {
    std::set<std::string> names;
    while (names.size() < 300) {
      std::string name;
      for (std::uint64_t n = next(6); n > 0; --n) name += pieces[next(std::size(pieces))];
      names.insert(name);
    }
    plan += (b > 0 ? ", " : "") + json_string(boundaries[b]) + R"j(: {"params": {)j";
    model += (b > 0 ? ", " : "") + json_string(boundaries[b]) + R"j(: "M")j";
    // Written in a shuffled order; the sort must not depend on it.
    std::vector<std::string> order(names.begin(), names.end());
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[next(i)]);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const bool sharded = next(3) != 0;
      plan += (i > 0 ? ", " : "") + json_string(order[i]) +
              (sharded ? R"j(: {"tp": "S(0)"})j" : R"j(: {"tp": "R"})j");
      if (sharded) {
        expected_sharded.push_back(boundaries[b].empty() || order[i].empty()
                                       ? boundaries[b] + order[i]
                                       : boundaries[b] + "." + order[i]);
      }
    }
    plan += "}}";
    expected_params.emplace_back(names.begin(), names.end());
  }
  plan += "}}";
  model += "}}";
  std::sort(expected_sharded.begin(), expected_sharded.end());
  expected_sharded.erase(std::unique(expected_sharded.begin(), expected_sharded.end()),
                         expected_sharded.end());

  JsonDocument plan_doc = parse(plan);
  JsonDocument model_doc = parse(model, "model.json");
  Expected<PlanDump> decoded = decode_plan_dump(plan_doc);
  ASSERT_TRUE(decoded.ok()) << decoded.errors().front().location_and_message();
  Expected<ModelTree> tree = decode_model_tree(model_doc);
  ASSERT_TRUE(tree.ok());
  Expected<FreezeResult> r = freeze_plan(*decoded, *tree, {});
  ASSERT_TRUE(r.ok()) << r.errors().front().location_and_message();
  const FrozenParamPlan& frozen = r->frozen.param_plan;
  std::vector<std::string> sorted_boundaries = boundaries;
  std::sort(sorted_boundaries.begin(), sorted_boundaries.end());
  ASSERT_EQ(frozen.boundaries.size(), boundaries.size());
  for (std::size_t b = 0; b < frozen.boundaries.size(); ++b) {
    const FrozenBoundary& boundary = frozen.boundaries[b];
    EXPECT_EQ(boundary.fqn, sorted_boundaries[b]);
    const auto original = static_cast<std::size_t>(
        std::find(boundaries.begin(), boundaries.end(), sorted_boundaries[b]) - boundaries.begin());
    std::vector<std::string> got;
    for (std::size_t p = 0; p < boundary.param_count; ++p) {
      got.emplace_back(frozen.params[boundary.first_param + p].name);
    }
    EXPECT_EQ(got, expected_params[original]) << "boundary '" << boundary.fqn << "'";
  }
  const std::vector<std::string> sharded(r->frozen.frozen_sharded_params.begin(),
                                         r->frozen.frozen_sharded_params.end());
  EXPECT_EQ(sharded, expected_sharded);
}

// finish() with the model checks made beforehand (as freeze makes them beside the
// freezer's construction) reports what finish() alone does, in the same order and with
// the same cut: boundary errors first, then the checks', past the reporting limit.
TEST(FreezePasses, ModelChecksMadeBeforehandGiveFinishsErrors) {
  std::string params;
  for (int i = 0; i < 120; ++i) {
    params += "\"gone" + std::to_string(i) + "\": {\"tp\": \"R\"}, ";
  }
  const std::string plan_text = R"j({"modules": {"nope": {}, "b": {"params": {)j" + params +
                                R"j("w": {"tp": "S(5)"}}}, "also_nope": {}},
      "tied_pairs": [["b.w", "gone"]]})j";
  JsonDocument plan_doc = parse(plan_text);
  JsonDocument model_doc = parse(kModel, "model.json");
  Expected<PlanDump> plan = decode_plan_dump(plan_doc);
  Expected<ModelTree> model = decode_model_tree(model_doc);
  ASSERT_TRUE(plan && model);
  const auto messages = [](Expected<FreezeResult> r) {
    std::vector<std::string> out;
    if (r) return out;
    for (const Diagnostic& d : r.errors()) out.push_back(d.location_and_message());
    return out;
  };
  const std::vector<std::string> alone =
      messages(PlanFreezer(*plan, FreezeOptions{}).finish(*model));
  ASSERT_EQ(alone.size(), kMaxReportedErrors + 1);
  EXPECT_EQ(alone[0],
            "plan.json: /modules/nope: boundary module 'nope' is not in the model tree "
            "(model.json)");
  EXPECT_EQ(alone[1],
            "plan.json: /modules/also_nope: boundary module 'also_nope' is not in the model "
            "tree (model.json)");
  EXPECT_EQ(alone[2],
            "plan.json: /modules/b/params/gone0: parameter 'b.gone0' is not in the model "
            "(model.json)");
  // 2 boundaries, 120 missing params, 1 dim out of range, 1 tied parameter.
  EXPECT_EQ(alone.back(), "plan.json: 24 more errors not shown");
  ModelChecks checks = check_against_model(*plan, *model, FreezeOptions{});
  EXPECT_EQ(messages(PlanFreezer(*plan, FreezeOptions{}).finish(*model, std::move(checks))), alone);
}

// Makes a plan whose meta is large enough (about 6 MB) to be written in two halves on two
// threads, with escapes and non-ASCII names on both sides of any split, fields before and
// after "params", and top-level members after param_plan.
std::string large_plan(std::string& model) {
  std::string modules;
  model = R"j({"modules": {)j";
  for (int m = 0; m < 300; ++m) {
    const std::string fqn = "layers." + std::to_string(m) + (m % 7 == 0 ? ".\u00e9\\\"q" : "");
    std::string params;
    for (int p = 0; p < 150; ++p) {
      params += (p > 0 ? ", " : "") + std::string("\"proj_") + std::to_string(p) +
                (p % 11 == 0 ? "\\t\u4e2d" : "") +
                R"j(.weight": {"tp": "S(0)", "ep": "R", "cp": {"$placement": "Partial"}})j";
    }
    modules += (m > 0 ? ", " : "") + std::string("\"") + fqn + R"j(": {"out_names": ["o"],
        "tp_divide_attrs": ["n"], "params": {)j" +
               params + "}}";
    model += (m > 0 ? ", " : "") + std::string("\"") + fqn + R"j(": "Layer")j";
  }
  model += "}}";
  return R"j({"mesh_dim_names": ["tp", "cp", "ep"], "meta": {"signature": "s", "zz": [1]},
      "modules": {)j" +
         modules + "}}";
}

TEST(MetaEncoding, LargeMetaWrittenInTwoHalvesHasTheTreesBytes) {
  std::string model;
  const std::string plan = large_plan(model);
  const std::string tree = meta_bytes(plan, model, nullptr, true);
  ASSERT_GT(tree.size(), std::size_t{5} << 20);
  const std::string one_thread = meta_bytes(plan, model, nullptr, false, Concurrency{1});
  EXPECT_TRUE(one_thread == tree);
  for (int run = 0; run < 3; ++run) {
    const std::string two_threads = meta_bytes(plan, model, nullptr, false);
    ASSERT_EQ(two_threads.size(), tree.size());
    EXPECT_TRUE(two_threads == tree) << "run " << run;
  }
}

}  // namespace
}  // namespace hpfreeze
