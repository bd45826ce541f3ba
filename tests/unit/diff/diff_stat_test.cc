// diff --stat (lib/src/diff/diff_stat.cc): the counts by op and top-level key, and their
// text and JSON, with exact bytes.
#include "diff/diff_stat.h"

#include <gtest/gtest.h>

#include <string>

#include "diff/diff.h"
#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"meta.json"};

struct Stat {
  DiffStat stat;
  std::size_t lines = 0;  // plain diff's
};

Stat stat_of(const std::string& a, const std::string& b) {
  JsonDocument da = parse(a, "a.json");
  JsonDocument db = parse(b, "b.json");
  Expected<FrozenMeta> ma = decode_meta(da, "diff");
  Expected<FrozenMeta> mb = decode_meta(db, "diff");
  Stat out;
  if (!ma || !mb) {
    ADD_FAILURE() << "does not decode";
    return out;
  }
  diff_metas(*ma, *mb, DiffOptions{}, [&](const MetaDifference& d) {
    out.stat.add(d);
    ++out.lines;
  });
  return out;
}

const std::string kOld = R"j({"param_plan": {"a": {"params": {"w": {"tp": "S(0)"}}},
    "b": {"params": {"w": {"tp": "S(0)"}}}, "gone": {}},
    "frozen_sharded_params": ["a.w", "b.w", "c.w"], "signature": "x", "a/b": 1})j";
const std::string kNew = R"j({"param_plan": {"a": {"params": {"w": {"tp": "R"}}},
    "b": {"params": {"w": {"tp": "R"}}}, "new": {}},
    "frozen_sharded_params": ["c.w", "d.w"], "signature": "y", "model_name": "M"})j";

TEST(DiffStat, CountsByOpAndTopLevelKeyInDiffOrder) {
  const Stat s = stat_of(kOld, kNew);
  EXPECT_EQ(s.stat.all.total(), s.lines);
  std::string text;
  append_diff_stat_text(text, s.stat);
  EXPECT_EQ(text,
            "a/b                    1  +0  -1  ~0\n"
            "frozen_sharded_params  3  +1  -2  ~0\n"
            "model_name             1  +1  -0  ~0\n"
            "param_plan             4  +1  -1  ~2\n"
            "signature              1  +0  -0  ~1\n"
            "10 differences: 3 added, 4 removed, 3 changed\n");
  std::string json;
  append_diff_stat_json(json, s.stat);
  EXPECT_EQ(json, R"({"differences":10,"added":3,"removed":4,"changed":3,"by_key":{)"
                  R"("a/b":{"added":0,"removed":1,"changed":0},)"
                  R"("frozen_sharded_params":{"added":1,"removed":2,"changed":0},)"
                  R"("model_name":{"added":1,"removed":0,"changed":0},)"
                  R"("param_plan":{"added":1,"removed":1,"changed":2},)"
                  R"("signature":{"added":0,"removed":0,"changed":1}}})"
                  "\n");
}

TEST(DiffStat, GroupsAreCountedWhenGiven) {
  Stat s = stat_of(kOld, kNew);
  s.stat.groups = 1;
  EXPECT_EQ(diff_stat_total(s.stat), "10 differences in 1 group: 3 added, 4 removed, 3 changed");
  std::string json;
  append_diff_stat_json(json, s.stat);
  EXPECT_EQ(json.substr(0, json.find("\"by_key\"")),
            R"({"differences":10,"added":3,"removed":4,"changed":3,"groups":1,)");
}

TEST(DiffStat, NoDifferencesPrintNoTextButAJsonObject) {
  const Stat s = stat_of(kOld, kOld);
  std::string text;
  append_diff_stat_text(text, s.stat);
  EXPECT_EQ(text, "");
  EXPECT_EQ(diff_stat_total(s.stat), "0 differences: 0 added, 0 removed, 0 changed");
  std::string json;
  append_diff_stat_json(json, s.stat);
  EXPECT_EQ(json, R"({"differences":0,"added":0,"removed":0,"changed":0,"by_key":{}})"
                  "\n");
}

TEST(DiffStat, OneDifferenceAndAHostileKey) {
  const Stat s = stat_of(R"({"param_plan": {}, "l\nf": 1})", R"({"param_plan": {}, "l\nf": 2})");
  std::string text;
  append_diff_stat_text(text, s.stat);
  EXPECT_EQ(text, "\"l\\nf\"  1  +0  -0  ~1\n1 difference: 0 added, 0 removed, 1 changed\n");
}

}  // namespace
}  // namespace hpfreeze
