// run_expand: the sharded FQNs of a plan dump, and its errors.
#include "hpfreeze/commands/expand_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "hpfreeze/base/concurrency.h"
#include "json/diagnostic_json.h"  // severity_name

namespace hpfreeze {
namespace {

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

using Lines = std::vector<std::string>;

std::string testdata(const std::string& relative) {
  return std::string(HPFREEZE_TESTDATA_DIR) + "/" + relative;
}

Lines render_all(const Diagnostics& ds) {
  Lines out;
  for (const Diagnostic& d : ds) {
    out.push_back(std::string(severity_name(d.severity)) + ": " + d.location_and_message());
  }
  return out;
}

TEST(RunExpand, SortedShardedFqnsOnePerLine) {
  // Root boundary, empty name, Partial, StridedShard, a duplicate FQN, replicated params.
  const CommandResult r = run_expand(testdata("check/expand_plan.json"), kTwoCpus);
  EXPECT_EQ(render_all(r.diagnostics), Lines{});
  EXPECT_EQ(r.output, "a.b.w\nlm_head.weight\nmoe\nmoe.experts.w1\n");
  EXPECT_EQ(r.outcome(), Outcome::kOk);
}

TEST(RunExpand, AFileOfTheWrongKindIsNamedAsFreezeNamesIt) {
  for (const auto& [file, kind] :
       {std::pair{testdata("check/clean_meta.json"), std::string("a codegen_meta.json")},
        std::pair{testdata("cases/tiny/expected.json"), std::string("a codegen_meta.json")},
        std::pair{testdata("cases/tiny/model.json"),
                  std::string("a model tree dump (hpfreeze.model/v1)")}}) {
    const CommandResult rejected = run_expand(file, kTwoCpus);
    EXPECT_EQ(render_all(rejected.diagnostics),
              Lines{"error: " + file + ": this looks like " + kind +
                    "; expand wants a plan dump (hpfreeze.plan/v1)"});
    EXPECT_EQ(rejected.output, "");
    EXPECT_EQ(rejected.outcome(), Outcome::kRejected);
  }
}

TEST(RunExpand, RejectedAndUnreadablePlans) {
  // A damaged plan keeps its decoder's error, even when its `format` names another kind.
  const std::filesystem::path damaged =
      std::filesystem::temp_directory_path() /
      ("hpfreeze_expand_test_" + std::to_string(getpid()) + ".json");
  for (const auto& [text, error] :
       {std::pair{R"j({"modules": {"lin": {"bogus": 1}}})j",
                  "/modules/lin/bogus: unknown module-spec field 'bogus'"},
        std::pair{R"j({"format": "hpfreeze.model/v1", "modules": {"lin": {}}})j",
                  "/format: unsupported format 'hpfreeze.model/v1' (expected "
                  "'hpfreeze.plan/v1')"}}) {
    std::ofstream(damaged, std::ios::binary) << text;
    const CommandResult rejected = run_expand(damaged.string(), kTwoCpus);
    EXPECT_EQ(render_all(rejected.diagnostics), Lines{"error: " + damaged.string() + ": " + error});
    EXPECT_EQ(rejected.outcome(), Outcome::kRejected);
  }
  std::filesystem::remove(damaged);

  const std::string missing = testdata("check/no_such_file.json");
  const CommandResult unreadable = run_expand(missing, kTwoCpus);
  EXPECT_EQ(render_all(unreadable.diagnostics),
            Lines{"error: " + missing + ": cannot open: No such file or directory"});
  EXPECT_EQ(unreadable.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
