// Replays the fuzz inputs kept in the repository (testdata/fuzz/seeds/<target>/ and
// testdata/fuzz/regressions/<target>/) through the fuzz targets' property checks, so that
// every crash the fuzzers ever found stays fixed in the normal and the sanitizer builds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../fuzz/fuzz_checkpoint_harness.h"
#include "../fuzz/fuzz_meta_harness.h"
#include "../fuzz/fuzz_walk_harness.h"

namespace hpfreeze::fuzz {
namespace {

namespace fs = std::filesystem;

struct FuzzTarget {
  const char* name;
  std::string (*check)(std::string_view);
};

const FuzzTarget kTargets[] = {
    {"placement", &check_placement},   {"freeze", &check_freeze}, {"model", &check_model},
    {"encode", &check_encode},         {"check", &check_check},   {"thaw", &check_thaw},
    {"report", &check_report},         {"diff", &check_diff},     {"expand", &check_expand},
    {"checkpoint", &check_checkpoint}, {"walk", &check_walk}};

const fs::path kFuzzData = fs::path(HPFREEZE_TESTDATA_DIR) / "fuzz";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzCorpus : public testing::TestWithParam<FuzzTarget> {};

TEST_P(FuzzCorpus, SeedsHoldEveryProperty) {
  const std::vector<fs::path> files = files_in(kFuzzData / "seeds" / GetParam().name);
  EXPECT_FALSE(files.empty()) << "no committed seeds for " << GetParam().name;
  for (const fs::path& file : files) EXPECT_EQ(GetParam().check(slurp(file)), "") << file;
}

TEST_P(FuzzCorpus, RegressionsStayFixed) {
  for (const fs::path& file : files_in(kFuzzData / "regressions" / GetParam().name)) {
    EXPECT_EQ(GetParam().check(slurp(file)), "") << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, testing::ValuesIn(kTargets),
                         [](const testing::TestParamInfo<FuzzTarget>& target) {
                           return std::string(target.param.name);
                         });

// The seed corpus scripts/fuzz.sh builds from the golden cases, checked without fuzzing.
TEST(FuzzCorpus, GoldenCasesHoldEveryProperty) {
  std::size_t cases = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(HPFREEZE_TESTDATA_DIR) / "cases")) {
    ++cases;
    for (const fs::path& file : files_in(entry.path())) {
      if (file.extension() != ".json") continue;
      const std::string bytes = slurp(file);
      EXPECT_EQ(check_encode(bytes), "") << file;
      if (file.filename() == "expected.json") {
        // What freeze wrote: every meta reader's properties hold on it.
        for (const auto check : {&check_check, &check_thaw, &check_report, &check_diff}) {
          EXPECT_EQ(check(bytes), "") << file;
        }
      } else if (file.filename() == "plan.json") {
        EXPECT_EQ(check_freeze(bytes), "") << file;
        EXPECT_EQ(check_expand(bytes), "") << file;
      } else if (file.filename() == "model.json") {
        EXPECT_EQ(check_model(bytes), "") << file;
      }
    }
  }
  EXPECT_GT(cases, 100u);
  std::ifstream lines(fs::path(HPFREEZE_TESTDATA_DIR) / "placements.jsonl");
  std::size_t placements = 0;
  for (std::string line; std::getline(lines, line);) {
    Expected<JsonDocument> doc = parse_json_document("placements.jsonl", line);
    ASSERT_TRUE(doc.ok()) << line;
    const Json value = json_from_dom(doc->root());
    const Json* input = value.find("input");
    ASSERT_TRUE(input != nullptr && input->is_string()) << line;
    EXPECT_EQ(check_placement(input->as_string()), "") << line;
    ++placements;
  }
  EXPECT_GT(placements, 10u);
}

// A misspelt directory would silently never be replayed.
TEST(FuzzCorpusLayout, EveryDirectoryNamesATarget) {
  for (const char* kind : {"seeds", "regressions"}) {
    if (!fs::is_directory(kFuzzData / kind)) continue;
    for (const auto& entry : fs::directory_iterator(kFuzzData / kind)) {
      if (!entry.is_directory()) continue;  // notes such as README.md
      const std::string name = entry.path().filename().string();
      EXPECT_TRUE(std::any_of(std::begin(kTargets), std::end(kTargets), [&](const FuzzTarget& t) {
        return name == t.name;
      })) << entry.path();
    }
  }
}

// The checks themselves must be able to fail.
TEST(FuzzHarness, ReferencePlacementReadsSpecExamples) {
  EXPECT_EQ(reference_placement("SS( 0 , 2 )"), Placement::strided_shard(0, 2));
  EXPECT_EQ(reference_placement("S(-2)"), Placement::shard(1, true));
  EXPECT_EQ(reference_placement("S(1_0)"), Placement::shard(10));
  EXPECT_EQ(reference_placement("S(\x1c"
                                "7\x0b)"),
            Placement::shard(7));
  EXPECT_EQ(reference_placement("P( x)"), Placement::partial(" x"));
  EXPECT_EQ(reference_placement("S(-9223372036854775808)"),
            Placement::shard(9223372036854775807, true));
  for (const char* bad : {"", " R", "S()", "S(0,)", "SS(0)", "SS(0,0)", "S(1__0)", "S(_1)",
                          "S(9223372036854775808)", "P()", "P(a\nb)", "s(0)", "S(\xd9\xa1)"}) {
    EXPECT_EQ(reference_placement(bad), std::nullopt) << bad;
  }
}

TEST(FuzzHarness, ReplacementFollowsTheEncoderContract) {
  EXPECT_EQ(replace_invalid_utf8("a\xe2\x82"), "a\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(replace_invalid_utf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(replace_invalid_utf8("\xf0\x9f\x98\x80\xc0\xaf"),
            "\xf0\x9f\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(FuzzHarness, ComparisonSeesSignOfZeroAndIntegerKind) {
  EXPECT_FALSE(same_json(Json(0.0), Json(-0.0), false));
  EXPECT_FALSE(same_json(Json(std::int64_t{1}), Json(std::uint64_t{1}), false));
  const Json ab = JsonObject{{"a", Json(nullptr)}, {"b", Json(true)}};
  const Json ba = JsonObject{{"b", Json(true)}, {"a", Json(nullptr)}};
  EXPECT_FALSE(same_json(ab, ba, false));
  EXPECT_TRUE(same_json(ab, ba, true));
}

TEST(FuzzHarness, EncodedCheckReportsAWrongValue) {
  const Json value = JsonArray{Json(std::int64_t{1})};
  EXPECT_EQ(check_encoded(value, "[2]", "compact", false, true),
            "compact output reads back as a different value");
  EXPECT_EQ(check_encoded(value, "[1,", "compact", false, true),
            "compact output does not parse: compact:1:4: unexpected end of input");
  EXPECT_EQ(check_encoded(value, "[ 1]", "compact", false, true),
            "compact encoding is not a fixed point");
  EXPECT_EQ(check_encoded(value, "[1]", "compact", false, true), "");
}

TEST(FuzzHarness, FixedPlanFreezesAgainstFixedModel) {
  EXPECT_EQ(check_freeze(kFixedPlan), "");
  EXPECT_EQ(check_model(kFixedModel), "");
  // The fixed plan needs these names: a model without them is rejected with diagnostics.
  EXPECT_EQ(check_model(R"({"modules": {"": "Net"}})"), "");
}

}  // namespace
}  // namespace hpfreeze::fuzz
