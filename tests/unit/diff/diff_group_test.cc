// diff --group (lib/src/diff/diff_group.cc, group_render.cc): exact lines for the folding
// rules and their edge cases, and a seeded property over random metas and mutations: the
// groups' members, expanded into their patterns, are plain --json's lines exactly.
#include "diff/diff_group.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "diff/diff.h"
#include "json/encode.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"meta.json"};

// Plain --json lines, --group text lines and --group --json lines of one diff.
struct Outputs {
  std::vector<std::string> plain_json;
  std::string plain_text;
  std::string group_text;
  std::string group_json;
  std::size_t groups = 0;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t pos = 0, end; (end = text.find('\n', pos)) != std::string::npos; pos = end + 1) {
    lines.push_back(text.substr(pos, end - pos));
  }
  return lines;
}

// `a` and `b` are metas; a missing param_plan is added so that they decode.
Outputs run(const std::string& a, const std::string& b) {
  auto with_plan = [](std::string t) {
    return t.find("\"param_plan\"") == std::string::npos ? t.insert(1, "\"param_plan\": {}, ") : t;
  };
  JsonDocument da = parse(with_plan(a), "a.json");
  JsonDocument db = parse(with_plan(b), "b.json");
  Expected<FrozenMeta> ma = decode_meta(da, "diff");
  Expected<FrozenMeta> mb = decode_meta(db, "diff");
  Outputs out;
  if (!ma || !mb) {
    ADD_FAILURE() << "does not decode: " << (ma ? mb : ma).errors().front().location_and_message();
    return out;
  }
  DiffGrouper grouper;
  std::string json;
  diff_metas(*ma, *mb, DiffOptions{}, [&](const MetaDifference& d) {
    append_diff_json_line(json, d);
    append_diff_text(out.plain_text, d);
    grouper.add(d);
  });
  out.plain_json = lines_of(json);
  const std::vector<DiffGroup> groups = std::move(grouper).finish();
  out.groups = groups.size();
  for (const DiffGroup& g : groups) {
    append_group_text(out.group_text, g);
    append_group_json_line(out.group_json, g);
  }
  return out;
}

std::string group_text(const std::string& a, const std::string& b) { return run(a, b).group_text; }

TEST(DiffGroup, RangeSets) {
  EXPECT_EQ(range_set({3, 4}), "{3,4}");
  EXPECT_EQ(range_set({0, 1, 2}), "{0..2}");
  EXPECT_EQ(range_set({9, 7, 8, 5, 3, 2, 1, 0, 5}), "{0..3,5,7..9}");
  EXPECT_EQ(range_set({1, 3, 4, 6, 7, 8}), "{1,3,4,6..8}");
  EXPECT_EQ(range_set({999999999999999, 0}), "{0,999999999999999}");
}

// {"param_plan": {NAME: ENTRY, ...}} of (name, entry text) pairs, in their order.
std::string param_plan(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = R"({"param_plan": {)";
  for (const auto& [name, entry] : entries) {
    out += (out.back() == '{' ? "\"" : ", \"") + name + "\": " + entry;
  }
  return out + "}}";
}

TEST(DiffGroup, LayersFoldIntoOneLineWithTheirCount) {
  std::vector<std::pair<std::string, std::string>> a;
  std::vector<std::pair<std::string, std::string>> b;
  for (int i = 0; i < 61; ++i) {
    const std::string layer = "model.layers." + std::to_string(i) + ".self_attn";
    a.emplace_back(layer, R"j({"params": {"o_proj.weight": {"tp": "S(1)"}}})j");
    b.emplace_back(layer, R"({"params": {"o_proj.weight": {"tp": "R"}}})");
  }
  const Outputs out = run(param_plan(a), param_plan(b));
  EXPECT_EQ(out.group_text,
            "~ /param_plan/model.layers.{0..60}.self_attn/params/o_proj.weight/tp: S(1) -> R  "
            "(61)\n");
  std::string members;
  for (int i = 0; i < 61; ++i) members += (i ? ",[" : "[") + std::to_string(i) + "]";
  EXPECT_EQ(out.group_json,
            R"({"op":"change","pointer":"/param_plan/model.layers.{0..60}.self_attn/params/)"
            R"j(o_proj.weight/tp","old":"S(1)","new":"R","members":[)j" +
                members + R"(],"count":61})" + "\n");
}

TEST(DiffGroup, SeveralNumberedLevelsFoldAtOnce) {
  std::vector<std::pair<std::string, std::string>> a;
  std::vector<std::pair<std::string, std::string>> b;
  for (int layer = 3; layer < 6; ++layer) {
    std::string old_params;
    std::string new_params;
    for (int e = 0; e < 4; ++e) {
      const std::string p = "\"experts." + std::to_string(e) + ".up_proj.weight\": ";
      old_params += (e ? ", " : "") + p + R"j({"tp": "S(0)", "ep": "R"})j";
      new_params += (e ? ", " : "") + p + R"j({"tp": "S(0)", "ep": "S(0)"})j";
    }
    const std::string name = "model.layers." + std::to_string(layer) + ".mlp";
    a.emplace_back(name, "{\"params\": {" + old_params + "}}");
    b.emplace_back(name, "{\"params\": {" + new_params + "}}");
  }
  const Outputs out = run(param_plan(a), param_plan(b));
  EXPECT_EQ(out.group_text,
            "~ /param_plan/model.layers.{3..5}.mlp/params/experts.{0..3}.up_proj.weight/ep: R "
            "-> S(0)  (12)\n");
  EXPECT_NE(
      out.group_json.find(R"("members":[[3,0],[3,1],[3,2],[3,3],[4,0],[4,1],[4,2],[4,3],[5,0],)"),
      std::string::npos)
      << out.group_json;
}

TEST(DiffGroup, SetMembersFoldOnTheirValue) {
  EXPECT_EQ(group_text(R"({"frozen_sharded_params": ["model.layers.0.o.weight",
                          "model.layers.1.o.weight", "model.layers.2.o.weight", "lm_head.weight"]})",
                       R"({"frozen_sharded_params": ["lm_head.weight"]})"),
            "- /frozen_sharded_params: \"model.layers.{0..2}.o.weight\"  (3)\n");
  // A tied pair is one member: its two numbers are two places.
  EXPECT_EQ(group_text(R"({"tied_pairs": [["a.1.w", "b.1.w"], ["a.2.w", "b.2.w"], ["x", "y"]]})",
                       R"({"tied_pairs": [["x", "y"]]})"),
            "- /tied_pairs: [\"a.{1,2}.w\",\"b.{1,2}.w\"]  (2)\n");
}

TEST(DiffGroup, AnInjectionRemovedPerLayerIsOneLine) {
  const Outputs out = run(R"({"injections": [{"match": "model.layers.3.mlp", "ep_size": 8},
                              {"match": "model.layers.4.mlp", "ep_size": 8},
                              {"match": "model.layers.5.mlp", "ep_size": 8}]})",
                          R"({"injections": []})");
  EXPECT_EQ(out.group_text, "- /injections/model.layers.{3..5}.mlp: injection removed  (3)\n");
  EXPECT_EQ(out.group_json, R"({"op":"remove","pointer":"/injections/model.layers.{3..5}.mlp",)"
                            R"("old":{"match":"model.layers.{3..5}.mlp","ep_size":8},)"
                            R"("members":[[3,3],[4,4],[5,5]],"count":3})"
                            "\n");
}

TEST(DiffGroup, DifferentChangesStayApartInDiffOrderOfTheirFirstMembers) {
  // layers 0 and 2 change S(0) -> R, layer 1 S(0) -> S(1): two groups, ordered by their
  // first members (layer 0's, layer 1's).
  EXPECT_EQ(group_text(R"j({"param_plan": {"l.0": {"params": {"w": {"tp": "S(0)"}}},
                          "l.1": {"params": {"w": {"tp": "S(0)"}}},
                          "l.2": {"params": {"w": {"tp": "S(0)"}}}}})j",
                       R"j({"param_plan": {"l.0": {"params": {"w": {"tp": "R"}}},
                          "l.1": {"params": {"w": {"tp": "S(1)"}}},
                          "l.2": {"params": {"w": {"tp": "R"}}}}})j"),
            "~ /param_plan/l.{0,2}/params/w/tp: S(0) -> R  (2)\n"
            "~ /param_plan/l.1/params/w/tp: S(0) -> S(1)\n");
  // 1 and 1.0 are different values, so different changes.
  EXPECT_EQ(group_text(R"({"a": {"x.1": 1, "x.2": 1}})", R"({"a": {"x.1": 2, "x.2": 2.0}})"),
            "~ /a/x.1: 1 -> 2\n~ /a/x.2: 1 -> 2.0\n");
}

TEST(DiffGroup, WhatIsANumber) {
  // A leading zero makes no number, so "01" stays text and does not fold with "1".
  EXPECT_EQ(group_text(R"({"a": {"l.01": 1, "l.1": 1, "l.2": 1}})", R"({"a": {}})"),
            "- /a/l.01: 1\n- /a/l.{1,2}: 1  (2)\n");
  // 15 digits are a number, 16 are text.
  EXPECT_EQ(group_text(R"({"a": {"l.999999999999999": 1, "l.0": 1}})", R"({"a": {}})"),
            "- /a/l.{0,999999999999999}: 1  (2)\n");
  EXPECT_EQ(group_text(R"({"a": {"l.1000000000000000": 1, "l.0": 1}})", R"({"a": {}})"),
            "- /a/l.0: 1\n- /a/l.1000000000000000: 1\n");
  // Only whole components between dots and slashes: "w2", "1e3", "-1", "1a" are text.
  EXPECT_EQ(group_text(R"({"a": {"w2": 1, "w3": 1, "-1": 1, "-2": 1}})", R"({"a": {}})"),
            "- /a/-1: 1\n- /a/-2: 1\n- /a/w2: 1\n- /a/w3: 1\n");
  // Array indices are numbers; so are numbers in keys that name no module run.
  EXPECT_EQ(group_text(R"({"a": [0, 0, 0], "v": {"rope.1": "x", "rope.2": "x"}})",
                       R"({"a": [1, 1, 0], "v": {"rope.1": "y", "rope.2": "y"}})"),
            "~ /a/{0,1}: 0 -> 1  (2)\n~ /v/rope.{1,2}: \"x\" -> \"y\"  (2)\n");
}

TEST(DiffGroup, NumbersInValuesAreFoldedOnlyInStrings) {
  // JSON numbers are values: 2 -> 3 and 2 -> 4 are different changes.
  EXPECT_EQ(group_text(R"({"a": {"l.1": 2, "l.2": 2}})", R"({"a": {"l.1": 3, "l.2": 4}})"),
            "~ /a/l.1: 2 -> 3\n~ /a/l.2: 2 -> 4\n");
  // Numbers in strings fold, each string's own place; a number that is the same in every
  // member stays as it is.
  EXPECT_EQ(group_text(R"({"a": {"l.1": "v.7.x", "l.2": "v.7.y"}})",
                       R"({"a": {"l.1": "v.8.x", "l.2": "v.9.y"}})"),
            "~ /a/l.1: \"v.7.x\" -> \"v.8.x\"\n~ /a/l.2: \"v.7.y\" -> \"v.9.y\"\n");
  EXPECT_EQ(group_text(R"({"a": {"l.1": "v.7", "l.2": "v.7"}})",
                       R"({"a": {"l.1": "v.8", "l.2": "v.9"}})"),
            "~ /a/l.{1,2}: \"v.7\" -> \"v.{8,9}\"  (2)\n");
  // Keys inside a value are no places: a whole value with different keys is a different one.
  EXPECT_EQ(group_text(R"({"a": {"l.1": {"k.1": 0}, "l.2": {"k.2": 0}}})", R"({"a": {}})"),
            "- /a/l.1: {\"k.1\":0}\n- /a/l.2: {\"k.2\":0}\n");
}

TEST(DiffGroup, BracesFoldWithNothing) {
  // A brace of the inputs' own would read as a range set: such a difference is alone.
  const Outputs out =
      run(R"({"a": {"l{1}.1": 1, "l{1}.2": 1, "m.1": "{x}.1", "m.2": "{x}.2"}})", R"({"a": {}})");
  EXPECT_EQ(out.group_text, out.plain_text);
  EXPECT_EQ(out.groups, 4u);
  EXPECT_EQ(lines_of(out.group_json)[0],
            R"({"op":"remove","pointer":"/a/l{1}.1","old":1,"members":[[]],"count":1})");
}

TEST(DiffGroup, IdenticalDifferencesFoldWithoutARangeSet) {
  const Outputs out = run(R"({"frozen_sharded_params": ["a.1", "a.1", "a.1"]})",
                          R"({"frozen_sharded_params": []})");
  EXPECT_EQ(out.group_text, "- /frozen_sharded_params: \"a.1\"  (3)\n");
  EXPECT_EQ(out.group_json,
            R"({"op":"remove","pointer":"/frozen_sharded_params","old":"a.1","members":[[],[],[]],)"
            R"("count":3})"
            "\n");
}

TEST(DiffGroup, AGroupOfOneIsThePlainLine) {
  const std::string a = R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}}, "x": null})j";
  const std::string b = R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(1)"}}}}, "y": [1]})j";
  const Outputs out = run(a, b);
  EXPECT_EQ(out.group_text, out.plain_text);
  ASSERT_EQ(out.plain_json.size(), 3u);
  const std::vector<std::string> grouped = lines_of(out.group_json);
  ASSERT_EQ(grouped.size(), 3u);
  for (std::size_t i = 0; i < grouped.size(); ++i) {
    std::string expected = out.plain_json[i];
    expected.insert(expected.size() - 1, R"(,"members":[[]],"count":1)");
    EXPECT_EQ(grouped[i], expected);
  }
}

TEST(DiffGroup, HostilePointersStayOnOneLine) {
  EXPECT_EQ(group_text(R"({"a": {"l\n.1": 1, "l\n.2": 1}})", R"({"a": {}})"),
            "- \"/a/l\\n.{1,2}\": 1  (2)\n");
}

// ---- the property ----------------------------------------------------------------------

// Replaces each range set of `text`, in order, by the member's next number. A group without
// range sets may hold braces of its own: its pattern is its difference.
std::string expand_text(std::string_view text, const JsonArray& tuple, std::size_t& next) {
  if (tuple.empty()) return std::string(text);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    const std::size_t close = text.find('}', i);
    out += encode_compact_json(tuple.at(next++));
    i = close;
  }
  return out;
}

Json expand_value(const Json& value, const JsonArray& tuple, std::size_t& next,
                  StringArena& arena) {
  if (value.is_string()) return Json(arena.store(expand_text(value.as_string(), tuple, next)));
  if (value.is_array()) {
    JsonArray items;
    for (const Json& item : value.as_array())
      items.push_back(expand_value(item, tuple, next, arena));
    return Json(std::move(items));
  }
  if (value.is_object()) {
    JsonObject members;
    for (const JsonMember& m : value.as_object()) {
      members.push_back({m.key, expand_value(m.value, tuple, next, arena)});
    }
    return Json(std::move(members));
  }
  return value;
}

// The plain --json lines a --group --json line stands for, in its members' order.
std::vector<std::string> expand_group(const std::string& line) {
  JsonDocument doc = parse(line, "group");
  const Json group = json_from_dom(doc.root());
  std::vector<std::string> out;
  StringArena arena;
  for (const Json& member : group.find("members")->as_array()) {
    const JsonArray& tuple = member.as_array();
    std::size_t next = 0;
    JsonObject object;
    object.push_back({"op", *group.find("op")});
    object.push_back({"pointer", expand_value(*group.find("pointer"), tuple, next, arena)});
    for (const char* side : {"old", "new"}) {
      if (const Json* v = group.find(side)) {
        object.push_back({side, expand_value(*v, tuple, next, arena)});
      }
    }
    EXPECT_EQ(next, tuple.size()) << line;
    out.push_back(encode_compact_json(Json(std::move(object))));
  }
  EXPECT_EQ(group.find("count")->v, Json(static_cast<std::int64_t>(out.size())).v) << line;
  return out;
}

// A meta of `layers` numbered blocks with experts, injections, sets and a few names that
// look like numbers but are not ("01", 16 digits) or hold braces.
struct MetaMaker {
  std::mt19937 rng;
  int layers = 0;
  int experts = 0;

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

  std::string placement() {
    static const char* const kChoices[] = {"R", "S(0)", "S(1)", "P(sum)", "SS(0,2)"};
    return kChoices[pick(5)];
  }

  std::string layer_name(int i) {
    switch (pick(12)) {
      case 0:
        return "model.layers.0" + std::to_string(i);  // a leading zero: no number
      case 1:
        return "model.layers.1000000000000000" + std::to_string(i);  // too long
      case 2:
        return "model.layers.{" + std::to_string(i) + "}";  // a brace of its own
      default:
        return "model.layers." + std::to_string(i);
    }
  }
};

struct RandomPair {
  std::string a;
  std::string b;
};

// One meta as a JSON tree in text, then the same with whole-pattern and scattered edits.
RandomPair random_pair(std::uint32_t seed) {
  MetaMaker m{std::mt19937(seed)};
  m.layers = 1 + m.pick(9);
  m.experts = m.pick(5);
  std::vector<std::string> names;
  for (int i = 0; i < m.layers; ++i) names.push_back(m.layer_name(i));
  // Per layer: params (name -> axis -> placement), an injection, frozen names.
  struct Layer {
    std::map<std::string, std::map<std::string, std::string>> params;
    bool injection = true;
    int ep_size = 8;
    std::vector<std::string> frozen;
    std::string dispatch;
    bool present = true;
  };
  std::vector<Layer> old_layers(static_cast<std::size_t>(m.layers));
  for (int i = 0; i < m.layers; ++i) {
    Layer& l = old_layers[static_cast<std::size_t>(i)];
    for (const char* p : {"o_proj.weight", "q_proj.weight"}) {
      l.params[p] = {{"tp", m.placement()}, {"ep", "R"}};
    }
    for (int e = 0; e < m.experts; ++e) {
      for (const char* p : {"gate_proj.weight", "up_proj.weight"}) {
        l.params["experts." + std::to_string(e) + "." + p] = {{"tp", "S(0)"}, {"ep", "R"}};
      }
    }
    l.injection = m.pick(3) != 0;
    for (const auto& [p, axes] : l.params) {
      if (axes.at("tp") != "R") l.frozen.push_back(names[static_cast<std::size_t>(i)] + "." + p);
    }
    l.dispatch = names[static_cast<std::size_t>(i)] + ".gate";
  }
  std::vector<Layer> new_layers = old_layers;
  // Pattern edits (the same change in every layer) and scattered ones.
  for (int edit = 0, edits = 1 + m.pick(4); edit < edits; ++edit) {
    const int kind = m.pick(7);
    const std::string expert_param =
        "experts." + std::to_string(m.experts ? m.pick(m.experts) : 0) + ".up_proj.weight";
    for (int i = 0; i < m.layers; ++i) {
      Layer& l = new_layers[static_cast<std::size_t>(i)];
      const bool all = m.pick(4) != 0;  // most edits touch (nearly) every layer
      if (!all && m.pick(2) == 0) continue;
      switch (kind) {
        case 0:
          l.params["o_proj.weight"]["tp"] = "R";
          break;
        case 1:
          for (auto& [p, axes] : l.params) {
            if (p.starts_with("experts.")) axes["ep"] = "S(0)";
          }
          break;
        case 2:
          l.injection = !l.injection;
          break;
        case 3:
          l.ep_size = 16;
          break;
        case 4:
          if (!l.frozen.empty()) l.frozen.pop_back();
          break;
        case 5:
          l.present = false;  // the whole boundary, whose in_src keys hold numbers
          break;
        default:
          if (l.params.count(expert_param) != 0u) l.params.erase(expert_param);
          l.dispatch = names[static_cast<std::size_t>(i)] + ".router." + std::to_string(i % 3);
          break;
      }
    }
  }
  auto text = [&](const std::vector<Layer>& layers) {
    std::string t = "{\"param_plan\": {";
    std::string injections;
    std::string frozen;
    for (int i = 0; i < m.layers; ++i) {
      const Layer& l = layers[static_cast<std::size_t>(i)];
      const std::string name = "\"" + names[static_cast<std::size_t>(i)] + "\"";
      if (!l.present) continue;
      t += (t.back() == '{' ? "" : ", ") + name + ": {\"region_dispatch\": \"" + l.dispatch +
           "\", \"in_src\": {\"h." + std::to_string(i % 2) + "\": {\"tp\": \"R\"}}, \"params\": {";
      bool first = true;
      for (const auto& [p, axes] : l.params) {
        t += std::string(first ? "" : ", ") + "\"" + p + "\": {";
        first = false;
        bool first_axis = true;
        for (const auto& [axis, placement] : axes) {
          t += std::string(first_axis ? "" : ", ") + "\"" + axis + "\": \"" + placement + "\"";
          first_axis = false;
        }
        t += "}";
      }
      t += "}}";
      if (l.injection) {
        injections += std::string(injections.empty() ? "" : ", ") + "{\"match\": " + name +
                      ", \"ep_size\": " + std::to_string(l.ep_size) + "}";
      }
      for (const std::string& f : l.frozen) {
        frozen += std::string(frozen.empty() ? "" : ", ") + "\"" + f + "\"";
      }
    }
    return t + "}, \"injections\": [" + injections + "], \"frozen_sharded_params\": [" + frozen +
           "]}";
  };
  return {text(old_layers), text(new_layers)};
}

TEST(DiffGroup, ExpandingTheGroupsGivesPlainJsonExactly) {
  std::size_t folded = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RandomPair pair = random_pair(seed);
    const Outputs out = run(pair.a, pair.b);
    // Each plain line is claimed by the first expanded line equal to it not yet claimed.
    std::map<std::string, std::vector<std::size_t>> where;
    for (std::size_t i = out.plain_json.size(); i-- > 0;) where[out.plain_json[i]].push_back(i);
    std::size_t expanded = 0;
    std::size_t previous_first = 0;
    const std::vector<std::string> group_lines = lines_of(out.group_json);
    ASSERT_EQ(group_lines.size(), out.groups);
    ASSERT_EQ(lines_of(out.group_text).size(), out.groups);
    for (std::size_t g = 0; g < group_lines.size(); ++g) {
      std::size_t previous = 0;
      const std::vector<std::string> members = expand_group(group_lines[g]);
      for (std::size_t k = 0; k < members.size(); ++k) {
        std::vector<std::size_t>& at = where[members[k]];
        ASSERT_FALSE(at.empty()) << "not a plain line: " << members[k] << "\nfrom "
                                 << group_lines[g];
        const std::size_t index = at.back();
        at.pop_back();
        // Members in diff order; groups in the order of their first members.
        if (k > 0) {
          EXPECT_LT(previous, index) << group_lines[g];
        } else if (g > 0) {
          EXPECT_LT(previous_first, index) << group_lines[g];
        }
        if (k == 0) previous_first = index;
        previous = index;
      }
      expanded += members.size();
      folded += members.size() > 1 ? 1 : 0;
    }
    EXPECT_EQ(expanded, out.plain_json.size());
  }
  EXPECT_GT(folded, 300u);  // the property is about groups, not only groups of one
}

}  // namespace
}  // namespace hpfreeze
