// run_expand: the sharded FQNs of a plan dump, and its errors.
#include "hpfreeze/expand_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hpfreeze/check_command.h"  // severity_name

namespace hpfreeze {
namespace {

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
  const CommandResult r = run_expand(testdata("check/expand_plan.json"));
  EXPECT_EQ(render_all(r.diagnostics), Lines{});
  EXPECT_EQ(r.output, "a.b.w\nlm_head.weight\nmoe\nmoe.experts.w1\n");
  EXPECT_EQ(r.outcome(), Outcome::kOk);
}

TEST(RunExpand, RejectedAndUnreadablePlans) {
  const std::string meta = testdata("check/clean_meta.json");
  const CommandResult rejected = run_expand(meta);
  EXPECT_EQ(
      render_all(rejected.diagnostics),
      Lines{"error: " + meta + ": /boundary_classes: unknown top-level key 'boundary_classes'"});
  EXPECT_EQ(rejected.output, "");
  EXPECT_EQ(rejected.outcome(), Outcome::kRejected);

  const std::string missing = testdata("check/no_such_file.json");
  const CommandResult unreadable = run_expand(missing);
  EXPECT_EQ(render_all(unreadable.diagnostics),
            Lines{"error: " + missing + ": cannot open: No such file or directory"});
  EXPECT_EQ(unreadable.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
