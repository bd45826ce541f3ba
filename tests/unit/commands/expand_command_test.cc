// run_expand: the sharded FQNs of a plan dump, and its errors.
#include "hpfreeze/commands/expand_command.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "hpfreeze/base/concurrency.h"
#include "io/fake_file_system.h"
#include "json/diagnostic_json.h"  // severity_name

namespace hpfreeze {
namespace {

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

using Lines = std::vector<std::string>;

// The plans and the files of the wrong kind, on the in-memory disk the command reads.
io_testing::FakeFileSystem& disk() {
  static io_testing::FakeFileSystem files;
  return files;
}

std::string testdata(const std::string& relative) {
  disk().add_copy(relative, std::string(HPFREEZE_TESTDATA_DIR) + "/" + relative);
  return relative;
}

CommandResult expand(const std::string& plan_path) {
  return run_expand(plan_path, kTwoCpus, &disk());
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
  const CommandResult r = expand(testdata("check/expand_plan.json"));
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
    const CommandResult rejected = expand(file);
    EXPECT_EQ(render_all(rejected.diagnostics),
              Lines{"error: " + file + ": this looks like " + kind +
                    "; expand wants a plan dump (hpfreeze.plan/v1)"});
    EXPECT_EQ(rejected.output, "");
    EXPECT_EQ(rejected.outcome(), Outcome::kRejected);
  }
}

TEST(RunExpand, RejectedAndUnreadablePlans) {
  // A damaged plan keeps its decoder's error, even when its `format` names another kind.
  const std::string damaged = "damaged.json";
  for (const auto& [text, error] :
       {std::pair{R"j({"modules": {"lin": {"bogus": 1}}})j",
                  "/modules/lin/bogus: unknown module-spec field 'bogus'"},
        std::pair{R"j({"format": "hpfreeze.model/v1", "modules": {"lin": {}}})j",
                  "/format: unsupported format 'hpfreeze.model/v1' (expected "
                  "'hpfreeze.plan/v1')"}}) {
    disk().add_file(damaged, text);
    const CommandResult rejected = expand(damaged);
    EXPECT_EQ(render_all(rejected.diagnostics), Lines{"error: " + damaged + ": " + error});
    EXPECT_EQ(rejected.outcome(), Outcome::kRejected);
  }

  const std::string missing = "check/no_such_file.json";
  const CommandResult unreadable = expand(missing);
  EXPECT_EQ(render_all(unreadable.diagnostics),
            Lines{"error: " + missing + ": cannot open: No such file or directory"});
  EXPECT_EQ(unreadable.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
