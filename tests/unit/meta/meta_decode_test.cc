// decode_meta and CoverageIndex: the typed meta every reader of codegen_meta.json shares.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_document.h"
#include "meta/meta.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"meta.json"};

std::vector<std::string> errors_of(std::string text) {
  JsonDocument doc = parse(std::move(text));
  Expected<FrozenMeta> meta = decode_meta(doc, "test");
  return meta ? std::vector<std::string>{} : test_support::diagnostic_lines(meta.errors());
}

TEST(DecodeMeta, TypedModelOfAFrozenMeta) {
  JsonDocument doc = parse(R"j({"signature": "s", "mesh_dim_names": ["tp", "cp"],
      "param_plan": {"": {"params": {"lm_head.weight": {"tp": "S(0)"}}},
                     "blk": {"params": {"w": {"tp": "R", "cp": "SS( 1 , 2 )"}, "r": {"tp": "R"}},
                             "is_boundary": true}},
      "injections": [{"match": "blk", "ep_size": 2}],
      "frozen_sharded_params": ["blk.w", "lm_head.weight"],
      "boundary_classes": {"blk": "Block"}, "tied_pairs": [["a", "b"]],
      "special_handlers": {}})j");
  Expected<FrozenMeta> meta = decode_meta(doc, "test");
  ASSERT_TRUE(meta.ok());
  ASSERT_EQ(meta->boundaries.size(), 2u);
  const MetaBoundary& blk = meta->boundaries[1];
  EXPECT_EQ(blk.fqn, "blk");
  ASSERT_EQ(blk.params.size(), 2u);
  EXPECT_EQ(blk.params[0].fqn, "blk.w");
  EXPECT_TRUE(blk.params[0].sharded());
  EXPECT_FALSE(blk.params[1].sharded());
  EXPECT_EQ(blk.params[0].axes[1].text, "SS( 1 , 2 )");
  EXPECT_EQ(blk.params[0].axes[1].placement, Placement::strided_shard(1, 2));
  EXPECT_EQ(meta->boundaries[0].params[0].fqn, "lm_head.weight");  // root boundary: no dot
  ASSERT_NE(blk.fields[*find_spec_field_by_meta_key("is_boundary")], nullptr);
  ASSERT_EQ(meta->injections.size(), 1u);
  EXPECT_EQ(meta->injections[0].match, "blk");
  EXPECT_NE(meta->injections[0].fields[*find_spec_field_by_meta_key("ep_size")], nullptr);
  EXPECT_EQ(meta->sharded_params(), (std::vector<std::string_view>{"blk.w", "lm_head.weight"}));
  EXPECT_EQ(meta->frozen_sharded_params.size(), 2u);
  ASSERT_TRUE(meta->mesh_dim_names.has_value());
  EXPECT_EQ(*meta->mesh_dim_names, (std::vector<std::string_view>{"tp", "cp"}));
  EXPECT_EQ(meta->boundary_classes.size(), 1u);
  EXPECT_EQ(meta->tied_pairs.size(), 1u);
  EXPECT_NE(meta->special_handlers, nullptr);
  ASSERT_EQ(meta->identity.size(), 1u);
  EXPECT_EQ(meta->identity[0]->key, "signature");
  EXPECT_EQ(meta->find_boundary("blk"), &blk);
  EXPECT_EQ(meta->find_boundary("nope"), nullptr);
  // What a reader of the values finds without the document's tree: each member and each
  // injection as the document holds it, the identity members by key, the top level in
  // document order.
  ASSERT_NE(meta->members.param_plan, nullptr);
  EXPECT_EQ(meta->members.param_plan->as_object().size(), 2u);
  ASSERT_NE(meta->members.injections, nullptr);
  EXPECT_EQ(meta->injections[0].entry, &meta->members.injections->as_array()[0]);
  EXPECT_EQ(*meta->injections[0].entry->find("ep_size"), Json(std::int64_t{2}));
  ASSERT_NE(meta->identity_member("signature"), nullptr);
  EXPECT_EQ(*meta->identity_member("signature"), Json("s"));
  EXPECT_EQ(meta->identity_member("param_plan"), nullptr);  // not an identity member
  EXPECT_EQ(meta->identity_member("covered"), nullptr);     // absent
  std::vector<std::string_view> keys;
  for (const JsonMember& m : meta->top_level()) keys.push_back(m.key);
  EXPECT_EQ(keys,
            (std::vector<std::string_view>{"signature", "mesh_dim_names", "param_plan",
                                           "injections", "frozen_sharded_params",
                                           "boundary_classes", "tied_pairs", "special_handlers"}));
  EXPECT_TRUE(FrozenMeta{}.top_level().empty());  // nothing decoded
}

TEST(DecodeMeta, WrongKindOfFileIsNamed) {
  EXPECT_EQ(errors_of(R"j({"format": "hpfreeze.plan/v1", "modules": {}})j"),
            std::vector<std::string>{"meta.json: this looks like a plan dump (hpfreeze.plan/v1); "
                                     "test wants a codegen_meta.json"});
  EXPECT_EQ(errors_of(R"j({"modules": {"": "Net"}, "parameters": {}})j"),
            std::vector<std::string>{"meta.json: this looks like a model tree dump "
                                     "(hpfreeze.model/v1); test wants a codegen_meta.json"});
  EXPECT_EQ(errors_of("[]"), std::vector<std::string>{"meta.json: expected a JSON object (a "
                                                      "codegen_meta.json), got an array"});
}

TEST(DecodeMeta, ErrorsCarryPointers) {
  EXPECT_EQ(errors_of(R"j({"param_plan": {"a/b": {"params": {"w": {"tp": "S(x)"}},
      "ep_size": 1, "out_names": 3}}, "injections": [{"match": "a/b", "params": {}}],
      "mesh_dim_names": [1], "tied_pairs": [[2]], "boundary_classes": {"x": 1}})j"),
            (std::vector<std::string>{
                "meta.json: /param_plan/a~1b/params/w/tp: invalid placement 'S(x)': dim 'x' is "
                "not an integer",
                "meta.json: /param_plan/a~1b/ep_size: 'ep_size' is an injection field and cannot "
                "appear in param_plan",
                "meta.json: /param_plan/a~1b/out_names: expected an array, got an integer",
                "meta.json: /injections/0/params: 'params' is a param_plan field and cannot "
                "appear in an injection",
                "meta.json: /mesh_dim_names/0: expected a string, got an integer",
                "meta.json: /tied_pairs/0/0: expected a string, got an integer",
                "meta.json: /boundary_classes/x: expected a string, got an integer"}));
  EXPECT_EQ(errors_of("{}"),
            std::vector<std::string>{"meta.json: missing param_plan: the meta plans no boundary"});
}

TEST(DecodeMeta, UnknownFieldsAreKeptAndFalsyValuesAccepted) {
  JsonDocument doc = parse(R"j({"param_plan": {"b": {"future": 1, "in_src": false,
      "out_names": 0, "params": null}}, "mesh_dim_names": null, "tied_pairs": null})j");
  Expected<FrozenMeta> meta = decode_meta(doc, "test");
  ASSERT_TRUE(meta.ok());
  ASSERT_EQ(meta->boundaries[0].unknown.size(), 1u);
  EXPECT_EQ(meta->boundaries[0].unknown[0]->key, "future");
  EXPECT_TRUE(meta->boundaries[0].params.empty());
  EXPECT_FALSE(meta->mesh_dim_names.has_value());
}

TEST(DecodeMeta, ErrorsAreCapped) {
  std::string text = R"j({"param_plan": {"b": {"params": {)j";
  for (int i = 0; i < 150; ++i) text += (i ? ", " : "") + ("\"w" + std::to_string(i) + "\": 1");
  text += "}}}}";
  const std::vector<std::string> errors = errors_of(text);
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors.back(), "meta.json: 50 more errors not shown");
}

TEST(DecodeMeta, KeepGoingKeepsWhatDecoded) {
  JsonDocument doc = parse(R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(x)", "cp": "S(0)"},
      "v": {"tp": "R"}}}}})j");
  Diagnostics errors;
  std::optional<FrozenMeta> meta = decode_meta_keep_going(doc, "check", errors);
  ASSERT_TRUE(meta.has_value());
  ASSERT_EQ(errors.size(), 1u);
  ASSERT_EQ(meta->boundaries[0].params.size(), 2u);
  EXPECT_FALSE(meta->boundaries[0].params[0].complete);
  EXPECT_TRUE(meta->boundaries[0].params[0].sharded());
  EXPECT_TRUE(meta->boundaries[0].params[1].complete);
  JsonDocument plan = parse(R"j({"format": "hpfreeze.plan/v1", "modules": {}})j");
  EXPECT_FALSE(decode_meta_keep_going(plan, "check", errors).has_value());
}

// Without the params kept, every leaf is still checked, with the same messages.
TEST(DecodeMeta, ParamsCheckedButNotKept) {
  MetaDecodeOptions options;
  options.keep_params = false;
  JsonDocument good = parse(R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(0)"}}}},
      "frozen_sharded_params": ["m.w"]})j");
  Expected<FrozenMeta> meta = decode_meta(good, "diff", options);
  ASSERT_TRUE(meta.ok());
  ASSERT_EQ(meta->boundaries.size(), 1u);
  EXPECT_TRUE(meta->boundaries[0].params.empty());
  EXPECT_NE(meta->boundaries[0].fields[kParamsField], nullptr);
  EXPECT_TRUE(meta->sharded_params().empty());
  EXPECT_EQ(meta->frozen_sharded_params, std::vector<std::string_view>{"m.w"});

  JsonDocument bad = parse(R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(x)", "cp": 1},
      "v": 2}}}})j");
  Expected<FrozenMeta> rejected = decode_meta(bad, "diff", options);
  ASSERT_FALSE(rejected.ok());
  Expected<FrozenMeta> kept = decode_meta(bad, "diff");
  ASSERT_FALSE(kept.ok());
  std::vector<std::string> lines;
  for (const Diagnostic& d : rejected.errors()) lines.push_back(d.location_and_message());
  std::vector<std::string> kept_lines;
  for (const Diagnostic& d : kept.errors()) kept_lines.push_back(d.location_and_message());
  EXPECT_EQ(lines, kept_lines);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "meta.json: /param_plan/m/params/w/cp: expected a placement string, got an integer");
  EXPECT_EQ(
      lines[2],
      "meta.json: /param_plan/m/params/v: expected an object (axis -> placement), got an integer");
}

// Params decoded straight from the document (check's, thaw's and report's way) give the same
// decoded meta and the same errors as through the tree, which then holds {} for each params
// object and null where params is null.
TEST(DecodeMeta, ParamsOutOfTheTreeDecodeTheSame) {
  const MetaDecodeOptions outside = MetaDecodeOptions::decoded_params_only();
  ASSERT_FALSE(outside.params_in_tree);
  const auto describe = [](const FrozenMeta& meta) {
    std::string out;
    for (const MetaBoundary& b : meta.boundaries) {
      out += std::string(b.fqn) + "{";
      for (const MetaParam& p : b.params) {
        out += std::string(p.fqn) + (p.complete ? "" : "!") + "[";
        for (const MetaAxisPlacement& a : p.axes) {
          out += std::string(a.axis) + "=" + std::string(a.text) + ";";
        }
        out += "]";
      }
      out += "}";
    }
    for (const std::string_view s : meta.sharded_params()) out += " " + std::string(s);
    return out;
  };
  const std::vector<std::string> texts = {
      R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(0)", "ep": "R"}, "v": {"tp": "P(sum)"}},
          "in_src": {"x": {"tp": "R"}}}, "n": {"params": null}, "o": {"params": {}},
          "q": {"future": 1}, "": {"params": {"lm_head.weight": {"tp": "S(-1)"}}}},
          "parallel_dims": {"tp_size": 2}})j",
      R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(x)", "cp": 1}, "v": 2}},
          "n": {"params": [1]}, "p": 3, "o": {"ep_size": 1, "params": {"z": {}}}}})j",
      R"j({"param_plan": [], "injections": []})j",
      R"j([1, 2])j",
  };
  std::size_t decoded = 0;
  for (const std::string& text : texts) {
    JsonDocument doc = parse(text);
    // check's keep-going decode: the same findings and the same parts decoded.
    Diagnostics found_in;
    Diagnostics found_out;
    const std::optional<FrozenMeta> kept_in = decode_meta_keep_going(doc, "check", found_in);
    const std::optional<FrozenMeta> kept_out =
        decode_meta_keep_going(doc, "check", found_out, outside);
    ASSERT_EQ(kept_in.has_value(), kept_out.has_value()) << text;
    if (kept_in) {
      EXPECT_EQ(describe(*kept_out), describe(*kept_in)) << text;
    }
    ASSERT_EQ(found_in.size(), found_out.size()) << text;
    for (std::size_t i = 0; i < found_in.size(); ++i) {
      EXPECT_EQ(found_out[i].location_and_message(), found_in[i].location_and_message());
    }
    Expected<FrozenMeta> in_tree = decode_meta(doc, "report");
    Expected<FrozenMeta> out_of_tree = decode_meta(doc, "report", outside);
    ASSERT_EQ(in_tree.ok(), out_of_tree.ok()) << text;
    if (!in_tree.ok()) {
      std::vector<std::string> a;
      std::vector<std::string> b;
      for (const Diagnostic& d : in_tree.errors()) a.push_back(d.location_and_message());
      for (const Diagnostic& d : out_of_tree.errors()) b.push_back(d.location_and_message());
      EXPECT_EQ(a, b) << text;
      continue;
    }
    ++decoded;
    EXPECT_EQ(describe(*out_of_tree), describe(*in_tree)) << text;
    const Json* m = out_of_tree->members.param_plan->find("m");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(*m->find("params"), Json(JsonObject{}));  // stands in for the params object
    EXPECT_TRUE(out_of_tree->members.param_plan->find("n")->find("params")->is_null());
    EXPECT_NE(m->find("in_src"), nullptr);
    EXPECT_EQ(*out_of_tree->identity_member("parallel_dims")->find("tp_size"),
              Json(std::int64_t{2}));
  }
  EXPECT_EQ(decoded, 1u);  // the first text; the others are rejected
}

TEST(MetaCoverage, PlannedKeysAndWhatLiesUnderThem) {
  JsonDocument doc = parse(R"j({"param_plan": {"m": {"params": {"w": {"tp": "R"},
      "sub.x": {"tp": "R"}}}, "": {"params": {"top": {"tp": "R"}}}}})j");
  Expected<FrozenMeta> meta = decode_meta(doc, "test");
  ASSERT_TRUE(meta.ok());
  const CoverageIndex coverage = coverage_of(*meta);
  EXPECT_TRUE(coverage.covers("m.w"));
  EXPECT_TRUE(coverage.covers("m.w.extra"));
  EXPECT_TRUE(coverage.covers("m.sub.x"));
  EXPECT_TRUE(coverage.covers("top"));
  EXPECT_TRUE(coverage.covers("top.a.b"));
  EXPECT_FALSE(coverage.covers("m.ww"));
  EXPECT_FALSE(coverage.covers("m"));
  EXPECT_FALSE(coverage.covers("m.sub"));
  EXPECT_FALSE(coverage.covers(""));
  EXPECT_FALSE(coverage.covers("to"));
}

// Enough keys to fill many probe chains of the table, one FQN planned twice, and a meta
// with no params at all.
TEST(MetaCoverage, ManyKeysDuplicatesAndNone) {
  std::string params;
  for (int i = 0; i < 5000; ++i) {
    if (i > 0) params += ", ";
    params += "\"layers." + std::to_string(i) + ".w\": {\"tp\": \"R\"}";
  }
  JsonDocument doc = parse("{\"param_plan\": {\"m\": {\"params\": {" + params +
                           "}}, \"m.layers.7\": {\"params\": {\"w\": {\"tp\": \"R\"}}}}}");
  Expected<FrozenMeta> meta = decode_meta(doc, "test");
  ASSERT_TRUE(meta.ok());
  const CoverageIndex coverage = coverage_of(*meta);
  for (int i = 0; i < 5000; ++i) {
    const std::string fqn = "m.layers." + std::to_string(i) + ".w";
    EXPECT_TRUE(coverage.covers(fqn)) << fqn;
    EXPECT_TRUE(coverage.covers(fqn + ".bias")) << fqn;
    EXPECT_FALSE(coverage.covers("m.layers." + std::to_string(i) + ".v")) << fqn;
  }
  EXPECT_FALSE(coverage.covers("m.layers.5000.w"));
  EXPECT_FALSE(coverage.covers("m.layers"));

  JsonDocument empty = parse(R"j({"param_plan": {"m": {}}})j");
  Expected<FrozenMeta> none = decode_meta(empty, "test");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(coverage_of(*none).covers("m.w"));
}

}  // namespace
}  // namespace hpfreeze
