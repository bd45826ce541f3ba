// diff_metas (lib/src/diff/differ.cc), its --ignore items (ignore.cc) and the renderings of
// a difference (diff_render.cc), with exact output lines.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "diff/diff.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

// Keeps both documents alive while their values are compared and rendered.
struct Pair {
  JsonDocument a;
  JsonDocument b;
};

constexpr test_support::DocumentParser parse{"meta.json"};

// Most tests are about fields other than param_plan: a meta without one gets an empty one,
// so that it decodes.
std::string with_param_plan(std::string text) {
  if (text.find("\"param_plan\"") != std::string::npos) return text;
  const std::size_t brace = text.find('{');
  const bool empty = text.find_first_not_of(" \n", brace + 1) == text.find('}', brace);
  return text.insert(brace + 1, empty ? "\"param_plan\": {}" : "\"param_plan\": {}, ");
}

std::string diff_with(std::string a, std::string b, const DiffOptions& options, bool json) {
  JsonDocument da = parse(with_param_plan(std::move(a)), "a.json");
  JsonDocument db = parse(with_param_plan(std::move(b)), "b.json");
  Expected<FrozenMeta> ma = decode_meta(da, "diff");
  Expected<FrozenMeta> mb = decode_meta(db, "diff");
  if (!ma || !mb)
    return "does not decode: " + (ma ? mb : ma).errors().front().location_and_message();
  std::string out;
  diff_metas(*ma, *mb, options, [&](const MetaDifference& d) {
    if (json) {
      append_diff_json_line(out, d);
    } else {
      append_diff_text(out, d);
    }
  });
  return out;
}

std::string diff_text(std::string a, std::string b, DiffOptions options = {}) {
  return diff_with(std::move(a), std::move(b), options, false);
}

std::string diff_json(std::string a, std::string b) {
  return diff_with(std::move(a), std::move(b), DiffOptions{}, true);
}

// A meta with one boundary `b` holding `entry` (a JSON object text).
std::string boundary(const std::string& entry) {
  return R"j({"param_plan": {"b": )j" + entry + "}}";
}

TEST(Diff, EqualMetasHaveNoDifferencesWhateverTheKeyOrder) {
  EXPECT_EQ(diff_text(R"j({"a": 1, "b": {"x": [1, 2], "y": null}})j",
                      R"j({"b": {"y": null, "x": [1, 2]}, "a": 1})j"),
            "");
  EXPECT_EQ(diff_text("{}", "{}"), "");
}

TEST(Diff, PythonDistinguishesIntFromFloatAndZeroFromMinusZero) {
  EXPECT_EQ(diff_text(R"j({"a": 1})j", R"j({"a": 1.0})j"), "~ /a: 1 -> 1.0\n");
  EXPECT_EQ(diff_text(R"j({"a": 0.0})j", R"j({"a": -0.0})j"), "~ /a: 0.0 -> -0.0\n");
  EXPECT_EQ(diff_text(R"j({"a": 1e2})j", R"j({"a": 100.0})j"), "");
  EXPECT_EQ(diff_text(R"j({"a": "\u00e9"})j", R"j({"a": "é"})j"), "");
  EXPECT_EQ(diff_text(R"j({"a": true})j", R"j({"a": 1})j"), "~ /a: true -> 1\n");
}

// Objects that are the same member by member are skipped whole: what tells 0.0 from -0.0
// or 1 from 1.0 must still see inside them, at any depth.
TEST(Diff, NestedObjectsThatLookAlikeAreStillCompared) {
  EXPECT_EQ(diff_text(R"j({"b": {"x": 0.0, "y": [1, {"z": 1}]}})j",
                      R"j({"b": {"x": -0.0, "y": [1, {"z": 1.0}]}})j"),
            "~ /b/x: 0.0 -> -0.0\n~ /b/y/1/z: 1 -> 1.0\n");
  EXPECT_EQ(diff_text(R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(0)"}}, "k": [0.0]}}})j",
                      R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(0)"}}, "k": [-0.0]}}})j"),
            "~ /param_plan/m/k: [0.0] -> [-0.0]\n");
  EXPECT_EQ(diff_text(R"j({"param_plan": {"m": {"params": {"w": {"tp": "S(0)", "cp": "R"}}}}})j",
                      R"j({"param_plan": {"m": {"params": {"w": {"tp": "S( 0 )", "cp": "R"}}}}})j"),
            "");
}

TEST(Diff, BoundariesAddedAndRemoved) {
  EXPECT_EQ(diff_text(R"j({"param_plan": {"old.block": {}, "same": {}}})j",
                      R"j({"param_plan": {"same": {}, "new.block": {"params": {}}}})j"),
            "+ /param_plan/new.block: boundary added\n"
            "- /param_plan/old.block: boundary removed\n");
  EXPECT_EQ(diff_text(R"j({"param_plan": {}})j", R"j({"param_plan": {"": {}}})j"),
            "+ /param_plan/: boundary added\n");
}

TEST(Diff, PlacementsPerParamAndAxis) {
  EXPECT_EQ(diff_text(boundary(R"j({"params": {"w": {"tp": "S(0)", "cp": "R"}, "gone": {}}})j"),
                      boundary(R"j({"params": {"w": {"tp": "S(1)", "ep": "P(sum)"},
                                               "new": {"tp": "R"}}})j")),
            "- /param_plan/b/params/gone: {}\n"
            "+ /param_plan/b/params/new: {\"tp\":\"R\"}\n"
            "- /param_plan/b/params/w/cp: R\n"
            "+ /param_plan/b/params/w/ep: P(sum)\n"
            "~ /param_plan/b/params/w/tp: S(0) -> S(1)\n");
}

TEST(Diff, PlacementStringsCompareByCanonicalForm) {
  EXPECT_EQ(diff_text(boundary(R"j({"params": {"w": {"tp": "SS( 0 , 2 )", "cp": "S(+3)",
                                                      "ep": "S(-0)", "dp": "S(007)"}}})j"),
                      boundary(R"j({"params": {"w": {"tp": "SS(0,2)", "cp": "S(3)",
                                                      "ep": "S(0)", "dp": "S(7)"}}})j")),
            "");
  // Uneven shards are not plain shards.
  EXPECT_EQ(diff_text(boundary(R"j({"params": {"w": {"tp": "S(-1)", "cp": "R"}}})j"),
                      boundary(R"j({"params": {"w": {"tp": "S(0)", "cp": "R"}}})j")),
            "~ /param_plan/b/params/w/tp: S(-1) -> S(0)\n");
  // Both inputs are decoded first: an invalid params leaf is an error, not a difference.
  EXPECT_EQ(diff_text(boundary(R"j({"params": {"w": {"tp": 1}}})j"),
                      boundary(R"j({"params": {"w": {"tp": "R"}}})j")),
            "does not decode: a.json: /param_plan/b/params/w/tp: expected a placement string, got "
            "an integer");
  EXPECT_EQ(diff_text(boundary(R"j({"params": {"w": {"tp": "R"}}})j"),
                      boundary(R"j({"params": {"w": {"tp": "S(x)"}}})j")),
            "does not decode: b.json: /param_plan/b/params/w/tp: invalid placement 'S(x)': dim "
            "'x' is not an integer");
}

TEST(Diff, NamedPlacementsPerNameAndAxis) {
  EXPECT_EQ(diff_text(boundary(R"j({"in_src": {"hidden_states": {"tp": "S(1)"}},
                                   "in_dst": {"x": {"tp": "R"}},
                                   "out_src": {"output": {"tp": "P(sum)", "cp": "S(1)"}},
                                   "out_dst": {"output": {"deep": {"tp": "SS(0,2)"}}}})j"),
                      boundary(R"j({"in_src": {"hidden_states": {"tp": "S( 1 )"}},
                                   "in_dst": {"y": {"tp": "R"}},
                                   "out_src": {"output": {"tp": "P(avg)"}},
                                   "out_dst": {"output": {"deep": {"tp": "SS(0,4)"}}}})j")),
            "- /param_plan/b/in_dst/x: {\"tp\":\"R\"}\n"
            "+ /param_plan/b/in_dst/y: {\"tp\":\"R\"}\n"
            "~ /param_plan/b/out_dst/output/deep/tp: SS(0,2) -> SS(0,4)\n"
            "- /param_plan/b/out_src/output/cp: S(1)\n"
            "~ /param_plan/b/out_src/output/tp: P(sum) -> P(avg)\n");
  EXPECT_EQ(
      diff_text(boundary(R"j({"in_src": {}})j"), boundary(R"j({"in_src": {"x": {"tp": "R"}}})j")),
      "+ /param_plan/b/in_src/x: {\"tp\":\"R\"}\n");
  EXPECT_EQ(diff_text(boundary(R"j({"out_dst": {"output": ["R", "S(0)"]}})j"),
                      boundary(R"j({"out_dst": {"output": ["R", "S( 0)"]}})j")),
            "");
}

TEST(Diff, OtherParamPlanKeysAsValues) {
  EXPECT_EQ(diff_text(boundary(R"j({"out_names": ["output"], "tp_divide_attrs": ["num_heads"],
                                   "is_boundary": true, "region_dispatch": "moe",
                                   "deferred_bias_params": ["b"]})j"),
                      boundary(R"j({"out_names": ["out", "aux"], "tp_divide_attrs": [],
                                   "is_boundary": false, "deferred_bias_params": ["b"],
                                   "params": {}})j")),
            "~ /param_plan/b/is_boundary: true -> false\n"
            "~ /param_plan/b/out_names: [\"output\"] -> [\"out\",\"aux\"]\n"
            "+ /param_plan/b/params: {}\n"
            "- /param_plan/b/region_dispatch: \"moe\"\n"
            "~ /param_plan/b/tp_divide_attrs: [\"num_heads\"] -> []\n");
  // Upstream's runtime reads an absent is_boundary as true; false is a difference.
  EXPECT_EQ(diff_text(boundary(R"j({"is_boundary": true})j"), boundary("{}")), "");
  EXPECT_EQ(diff_text(boundary("{}"), boundary(R"j({"is_boundary": true})j")), "");
  EXPECT_EQ(diff_text(boundary("{}"), boundary(R"j({"is_boundary": false})j")),
            "+ /param_plan/b/is_boundary: false\n");
}

TEST(Diff, InjectionsPairUpByMatchWhateverTheirOrder) {
  const std::string a = R"j({"injections": [
      {"match": "x", "inner_target": "self", "ep_size": 8},
      {"match": "y", "local_compute_fn": "f"},
      {"match": "gone", "ep_size": 2}]})j";
  const std::string b = R"j({"injections": [
      {"match": "new", "ep_size": 2},
      {"ep_size": 4, "match": "x", "inner_wrapper": {"_target_": "w"}},
      {"local_compute_fn": "f", "match": "y"}]})j";
  EXPECT_EQ(diff_text(a, b),
            "- /injections/gone: injection removed\n"
            "+ /injections/new: injection added\n"
            "~ /injections/x/ep_size: 8 -> 4\n"
            "- /injections/x/inner_target: \"self\"\n"
            "+ /injections/x/inner_wrapper: {\"_target_\":\"w\"}\n");
  EXPECT_EQ(diff_text(R"j({"injections": [{"match": "a", "ep_size": 1}, {"match": "b"}]})j",
                      R"j({"injections": [{"match": "b"}, {"ep_size": 1, "match": "a"}]})j"),
            "");
}

TEST(Diff, InjectionPlacementsCanonicalOnlyInValueToDictFields) {
  EXPECT_EQ(diff_text(R"j({"injections": [{"match": "x", "inner_out_src": {"o": {"cp": "S(1)"}},
                                          "inner_target": "S(1)"}]})j",
                      R"j({"injections": [{"match": "x", "inner_out_src": {"o": {"cp": "S( 1)"}},
                                          "inner_target": "S( 1)"}]})j"),
            "~ /injections/x/inner_target: \"S(1)\" -> \"S( 1)\"\n");
}

TEST(Diff, DuplicateAndUnmatchedInjections) {
  EXPECT_EQ(
      diff_text(R"j({"injections": [{"match": "x", "ep_size": 1}, {"match": "x", "ep_size": 2},
                                         {"match": "y", "ep_size": 3}]})j",
                R"j({"injections": [{"match": "x", "ep_size": 1}, {"match": "x", "ep_size": 5},
                                    {"match": "x", "ep_size": 4}]})j"),
      "+ /injections/x: injection added\n"
      "~ /injections/x/ep_size: 2 -> 5\n"
      "- /injections/y: injection removed\n");
  EXPECT_EQ(diff_text(R"j({"injections": [{"ep_size": 3}]})j", R"j({"injections": []})j"),
            "does not decode: a.json: /injections/0: injection without a 'match'");
}

TEST(Diff, FrozenShardedParamsAsMultiset) {
  EXPECT_EQ(diff_text(R"j({"frozen_sharded_params": ["a.w", "b.w", "c.w"]})j",
                      R"j({"frozen_sharded_params": ["c.w", "d.w", "a.w"]})j"),
            "- /frozen_sharded_params: \"b.w\"\n"
            "+ /frozen_sharded_params: \"d.w\"\n");
  EXPECT_EQ(diff_text(R"j({"frozen_sharded_params": ["a", "a"]})j",
                      R"j({"frozen_sharded_params": ["a"]})j"),
            "- /frozen_sharded_params: \"a\"\n");
}

TEST(Diff, FrozenShardedParamsSharedEndsCancelOut) {
  // The members both lists hold at the same place from either end are not counted; what
  // lies between still compares as a multiset, duplicates included.
  const auto fsp = [](const char* names) {
    return std::string(R"j({"frozen_sharded_params": [)j") + names + "]}";
  };
  EXPECT_EQ(diff_text(fsp(R"j("a", "b", "c", "b", "z")j"), fsp(R"j("a", "b", "b", "c", "z")j")),
            "");
  EXPECT_EQ(diff_text(fsp(R"j("a", "b", "c", "y", "z")j"), fsp(R"j("a", "c", "b", "b", "z")j")),
            "- /frozen_sharded_params: \"y\"\n"
            "+ /frozen_sharded_params: \"b\"\n");
  EXPECT_EQ(diff_text(fsp(R"j("a", "b")j"), fsp(R"j("a", "b", "a", "b")j")),
            "+ /frozen_sharded_params: \"a\"\n"
            "+ /frozen_sharded_params: \"b\"\n");
  EXPECT_EQ(diff_text(fsp(R"j("m", "a", "b")j"), fsp(R"j("a", "b")j")),
            "- /frozen_sharded_params: \"m\"\n");
  EXPECT_EQ(diff_text(fsp(R"j("a", "a")j"), fsp(R"j("a", "a")j")), "");
  EXPECT_EQ(diff_text(fsp(""), fsp(R"j("a")j")), "+ /frozen_sharded_params: \"a\"\n");
}

TEST(Diff, TiedPairsOrderInsensitiveButEachPairOrdered) {
  EXPECT_EQ(diff_text(R"j({"tied_pairs": [["e.w", "h.w"], ["a", "b"]]})j",
                      R"j({"tied_pairs": [["a", "b"], ["e.w", "h.w"]]})j"),
            "");
  EXPECT_EQ(diff_text(R"j({"tied_pairs": [["e.w", "h.w"], ["a", "b"]]})j",
                      R"j({"tied_pairs": [["h.w", "e.w"], ["c", "d"], ["a", "b"]]})j"),
            "- /tied_pairs: [\"e.w\",\"h.w\"]\n"
            "+ /tied_pairs: [\"c\",\"d\"]\n"
            "+ /tied_pairs: [\"h.w\",\"e.w\"]\n");
}

TEST(Diff, SpecialHandlersPerKey) {
  EXPECT_EQ(diff_text(R"j({"special_handlers": {"a": "h1", "b": "h2"}})j",
                      R"j({"special_handlers": {"a": "h3", "c": "h2"}})j"),
            "~ /special_handlers/a: \"h1\" -> \"h3\"\n"
            "- /special_handlers/b: \"h2\"\n"
            "+ /special_handlers/c: \"h2\"\n");
}

TEST(Diff, MeshDimNamesAsOneValue) {
  EXPECT_EQ(
      diff_text(R"j({"mesh_dim_names": ["cp", "tp"]})j", R"j({"mesh_dim_names": ["tp", "cp"]})j"),
      "~ /mesh_dim_names: [\"cp\",\"tp\"] -> [\"tp\",\"cp\"]\n");
  EXPECT_EQ(diff_text(R"j({"mesh_dim_names": null})j", R"j({"mesh_dim_names": ["tp"]})j"),
            "~ /mesh_dim_names: null -> [\"tp\"]\n");
}

TEST(Diff, IdentityFieldsAndUnknownTopLevelKeys) {
  EXPECT_EQ(diff_text(R"j({"signature": "a", "model_name": null, "source": {"sha": "1", "n": 2},
                          "not_covered": ["mesh", "pp"], "module_overrides": [{"f": "x"}],
                          "old_field": 1})j",
                      R"j({"signature": "b", "model_name": "M", "source": {"sha": "2", "n": 2},
                          "not_covered": ["mesh"], "module_overrides": [{"f": "y"}],
                          "new_field": {"k": [1]}})j"),
            "~ /model_name: null -> \"M\"\n"
            "~ /module_overrides/0/f: \"x\" -> \"y\"\n"
            "+ /new_field: {\"k\":[1]}\n"
            "~ /not_covered: [\"mesh\",\"pp\"] -> [\"mesh\"]\n"
            "- /old_field: 1\n"
            "~ /signature: \"a\" -> \"b\"\n"
            "~ /source/sha: \"1\" -> \"2\"\n");
}

TEST(Diff, TypeChangesOfStructuredFieldsAreWholeValues) {
  // Each meta is decoded first: a freeze field of the wrong type is an error.
  EXPECT_EQ(diff_text(R"j({"param_plan": {"b": {}}, "tied_pairs": []})j",
                      R"j({"param_plan": {"b": {}}, "tied_pairs": null})j"),
            "~ /tied_pairs: [] -> null\n");
  EXPECT_EQ(diff_text(R"j({"param_plan": {"b": {}}})j", R"j({"param_plan": []})j"),
            "does not decode: b.json: /param_plan: expected an object, got an array");
  EXPECT_EQ(diff_text(R"j({"param_plan": {"b": {}}})j", R"j({"param_plan": {"b": 3}})j"),
            "does not decode: b.json: /param_plan/b: expected an object, got an integer");
}

TEST(Diff, IgnoredTopLevelFields) {
  DiffOptions options;
  options.ignored_fields = {"signature", "param_plan", "absent"};
  EXPECT_EQ(diff_text(R"j({"signature": "a", "yaml_path": "p", "param_plan": {"x": {}}})j",
                      R"j({"signature": "b", "yaml_path": "q"})j", options),
            "~ /yaml_path: \"p\" -> \"q\"\n");
}

TEST(Diff, IgnoredPointersLeaveOutTheirSubtreeOnly) {
  DiffOptions options;
  // A comma list and a repeated flag; a top-level key, pointers with escapes and an
  // injection addressed by its match, as diff prints it.
  options.ignored_fields = {"signature,/param_plan/b/params/v", "/special_handlers/x~1y",
                            "/injections/m.x/ep_size"};
  EXPECT_EQ(diff_text(R"j({"signature": "a", "special_handlers": {"x/y": 1, "z": 1},
                     "param_plan": {"b": {"params": {"v": {"tp": "R"}, "vv": {"tp": "R"}}}},
                     "injections": [{"match": "m.x", "ep_size": 1, "inner_target": "t"}]})j",
                      R"j({"signature": "b", "special_handlers": {"x/y": 2, "z": 2},
                     "param_plan": {"b": {"params": {"v": {"tp": "S(0)"}, "vv": {"tp": "S(1)"}}}},
                     "injections": [{"match": "m.x", "ep_size": 2, "inner_target": "u"}]})j",
                      options),
            "~ /injections/m.x/inner_target: \"t\" -> \"u\"\n"
            "~ /param_plan/b/params/vv/tp: R -> S(1)\n"
            "~ /special_handlers/z: 1 -> 2\n");
  // A whole value above an ignored pointer is still one difference.
  options.ignored_fields = {"/param_plan/b/params/v"};
  EXPECT_EQ(diff_text(R"j({"param_plan": {}})j",
                      R"j({"param_plan": {"b": {"params": {"v": {"tp": "R"}}}}})j", options),
            "+ /param_plan/b: boundary added\n");
}

TEST(Diff, IgnoredItemsParse) {
  DiffOptions options;
  options.ignored_fields = {"a,/b~0c", "x/y", "/"};
  Expected<std::vector<IgnoredPointer>> pointers = ignored_pointers(options);
  ASSERT_TRUE(pointers.ok());
  std::vector<std::string> got;
  for (const IgnoredPointer& p : *pointers) got.push_back(p.given + " " + p.pointer);
  EXPECT_EQ(got, (std::vector<std::string>{"a /a", "/b~0c /b~0c", "x/y /x~1y", "/ /"}));
  for (const auto& [given, message] : std::vector<std::pair<std::string, std::string>>{
           {"a,,b", "--ignore 'a,,b': empty field name"},
           {"", "--ignore '': empty field name"},
           {"a,", "--ignore 'a,': empty field name"},
           {"/a~2", "--ignore '/a~2': not a JSON Pointer ('~' must be followed by 0 or 1)"},
           {"/a~", "--ignore '/a~': not a JSON Pointer ('~' must be followed by 0 or 1)"}}) {
    options.ignored_fields = {given};
    pointers = ignored_pointers(options);
    ASSERT_FALSE(pointers.ok()) << given;
    ASSERT_EQ(pointers.errors().size(), 1u);
    EXPECT_EQ(pointers.errors()[0].location_and_message(), message);
    EXPECT_EQ(pointers.errors()[0].error_class, ErrorClass::kIo);
  }
}

TEST(Diff, SortedByPointerInNaturalOrderThenRemoveAddChange) {
  EXPECT_EQ(
      diff_text(
          R"j({"param_plan": {"layers.10": {}, "layers.9": {"region_dispatch": 1}, "layers.9.a": {}},
                          "a": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]})j",
          R"j({"param_plan": {"layers.2": {}, "layers.9": {"region_dispatch": 2}},
                          "a": [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]})j"),
      "~ /a/2: 0 -> 1\n"
      "~ /a/10: 0 -> 1\n"
      "+ /param_plan/layers.2: boundary added\n"
      "~ /param_plan/layers.9/region_dispatch: 1 -> 2\n"
      "- /param_plan/layers.9.a: boundary removed\n"
      "- /param_plan/layers.10: boundary removed\n");
}

TEST(Diff, PointersEscapeSlashAndTildeAndQuoteControlCharacters) {
  EXPECT_EQ(diff_text(R"j({"special_handlers": {"a/b~c": 1, "l\nf": 1}})j",
                      R"j({"special_handlers": {"a/b~c": 2, "l\nf": 2}})j"),
            "~ /special_handlers/a~1b~0c: 1 -> 2\n"
            "~ \"/special_handlers/l\\nf\": 1 -> 2\n");
}

TEST(Diff, JsonLinesLeaveOutTheMissingSide) {
  EXPECT_EQ(
      diff_json(
          R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}, "old": {}},
                          "x": 1})j",
          R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(1)"}}}, "new": {"region_dispatch": 1}},
                          "y": null})j"),
      R"j({"op":"change","pointer":"/param_plan/b/params/w/tp","old":"S(0)","new":"S(1)"})j"
      "\n"
      R"j({"op":"add","pointer":"/param_plan/new","new":{"region_dispatch":1}})j"
      "\n"
      R"j({"op":"remove","pointer":"/param_plan/old","old":{}})j"
      "\n"
      R"j({"op":"remove","pointer":"/x","old":1})j"
      "\n"
      R"j({"op":"add","pointer":"/y","new":null})j"
      "\n");
  EXPECT_EQ(diff_json("{}", "{}"), "");
}

TEST(Diff, SameJson) {
  JsonDocument a = parse(R"j([1, 1.0, {"a": 1, "b": 2}, "s", null, 18446744073709551615])j", "a");
  JsonDocument b = parse(R"j([1, 1.0, {"b": 2, "a": 1}, "s", null, 18446744073709551615])j", "b");
  EXPECT_TRUE(same_json(json_from_dom(a.root()), json_from_dom(b.root())));
  EXPECT_FALSE(same_json(Json(std::int64_t{1}), Json(1.0)));
  EXPECT_FALSE(same_json(Json(JsonObject{{"a", Json()}}), Json(JsonObject{{"b", Json()}})));
  EXPECT_FALSE(same_json(Json(JsonArray{Json(true)}), Json(JsonArray{})));
}

}  // namespace
}  // namespace hpfreeze
