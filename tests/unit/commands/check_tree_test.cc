// run_check over several metas (check PATH...): walk order on several threads, the closing
// note, the usage errors of a run of several, and --bundle's findings among the meta's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "check/findings_lines.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/check_command.h"

namespace hpfreeze {
namespace {

namespace fs = std::filesystem;
using check_test::Lines;
using check_test::render_all;

constexpr Concurrency kTwoCpus{2};

// A meta whose one finding is its param_plan being empty, and one without findings.
constexpr const char* kEmptyPlan = R"j({"param_plan": {}})j";
constexpr const char* kClean =
    R"j({"param_plan": {"lin": {"params": {"w": {"tp": "R"}}}}, "frozen_sharded_params": []})j";

class CheckTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("check_tree_test_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string write(const std::string& relative, const std::string& text) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string dir(const std::string& relative = "") const { return (root_ / relative).string(); }

  fs::path root_;
};

std::string empty_plan_error(const std::string& meta) {
  return "error: " + meta + ": /param_plan: param_plan is empty: the meta plans no boundary";
}

TEST_F(CheckTree, FindingsFollowTheWalkOnEveryThreadCount) {
  // 40 metas, every other one with a finding: the order must be the walk's whatever
  // thread checks which.
  Lines expected;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "m" + std::to_string(100 + i) + "/codegen_meta.json";
    const std::string path = write(name, i % 2 == 0 ? kEmptyPlan : kClean);
    if (i % 2 == 0) expected.push_back(empty_plan_error(path));
  }
  expected.push_back("note: check: 20 errors, 0 warnings, 0 notes in 40 metas");
  for (const std::size_t cpus : {1U, 2U, 7U}) {
    CheckRequest request{{dir()}, std::nullopt, false, Concurrency{cpus}};
    CheckTally tally;
    const CommandResult r = run_check(request, &tally);
    EXPECT_EQ(render_all(r.diagnostics), expected) << cpus << " CPUs";
    EXPECT_EQ(r.outcome(), Outcome::kRejected);
    EXPECT_EQ(tally.metas, 40U);
    EXPECT_TRUE(tally.summarized);
    EXPECT_EQ(tally.counts.text(), "20 errors, 0 warnings, 0 notes");
  }
}

TEST_F(CheckTree, OneMetaHasNoClosingNote) {
  const std::string meta = write("a/codegen_meta.json", kEmptyPlan);
  CheckTally tally;
  const CommandResult r = run_check({{dir()}, std::nullopt, false, kTwoCpus}, &tally);
  EXPECT_EQ(render_all(r.diagnostics), Lines{empty_plan_error(meta)});
  EXPECT_FALSE(tally.summarized);
  EXPECT_EQ(tally.metas, 1U);
}

TEST_F(CheckTree, JsonLinesInWalkOrderAndTheNoteOnStderr) {
  const std::string a = write("a/codegen_meta.json", kEmptyPlan);
  write("b/codegen_meta.json", kClean);
  const std::string c = write("c/codegen_meta.json", kEmptyPlan);
  CheckRequest request{{dir()}, std::nullopt, false, kTwoCpus};
  request.json = true;
  const CommandResult r = run_check(request);
  const auto line = [](const std::string& meta) {
    return "{\"severity\":\"error\",\"file\":\"" + meta +
           "\",\"pointer\":\"/param_plan\",\"message\":\"param_plan is empty: the meta plans "
           "no boundary\"}\n";
  };
  EXPECT_EQ(r.output, line(a) + line(c));
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"note: check: 2 errors, 0 warnings, 0 notes in 3 metas"});
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
}

TEST_F(CheckTree, TheWorstMetaDecidesTheOutcome) {
  write("a/codegen_meta.json", kClean);
  const std::string missing = dir("nothing_here.json");
  const std::string bad = write("b/codegen_meta.json", kEmptyPlan);
  const CommandResult r = run_check({{dir("a"), missing, bad}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(
      render_all(r.diagnostics),
      (Lines{"error: " + missing + ": cannot open: No such file or directory",
             empty_plan_error(bad), "note: check: 2 errors, 0 warnings, 0 notes in 3 metas"}));
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

TEST_F(CheckTree, ADirectoryWithoutAMetaIsAnIoError) {
  fs::create_directories(root_ / "empty");
  const CommandResult r = run_check({{dir("empty")}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: " + dir("empty") + ": no codegen_meta.json in this directory or below"});
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

void expect_usage_error(const CommandResult& r, const std::string& message) {
  EXPECT_EQ(render_all(r.diagnostics), Lines{"error: " + message});
  ASSERT_EQ(r.diagnostics.size(), 1U);
  EXPECT_EQ(r.diagnostics.front().error_class, ErrorClass::kIo);
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

TEST_F(CheckTree, UsageErrorsOfARunOfSeveral) {
  write("a/codegen_meta.json", kClean);
  write("b/codegen_meta.json", kClean);
  const std::string model = write("model.json", R"j({"modules": {"": "Net"}})j");
  expect_usage_error(run_check({{dir()}, model, false, kTwoCpus}),
                     "--model checks one meta against a model, and this run has 2 metas");
  expect_usage_error(run_check({{dir("a"), "-"}, std::nullopt, false, kTwoCpus}),
                     "META '-' (stdin) must be the only META");
  expect_usage_error(run_check({{"-", "-"}, std::nullopt, false, kTwoCpus}),
                     "META '-' (stdin) must be the only META");
  CheckRequest request{{"-"}, std::nullopt, false, kTwoCpus};
  request.bundle = true;
  expect_usage_error(run_check(request),
                     "--bundle needs META as a path: a meta on stdin has no bundle");
  expect_usage_error(run_check({{}, std::nullopt, false, kTwoCpus}), "no META given");
}

TEST_F(CheckTree, BundleFindingsSitAmongTheMetasOwn) {
  // The bundle's findings (/outputs...) sort between the checker's /mesh_dim_names and
  // /param_plan: one order, by pointer.
  const std::string meta =
      write("g/codegen_meta.json",
            R"j({"param_plan": {}, "mesh_dim_names": 3, "outputs": {"init": {"sha256": "x"}}})j");
  CheckRequest request{{meta}, std::nullopt, false, kTwoCpus};
  request.bundle = true;
  const CommandResult r = run_check(request);
  const std::string g = dir("g") + "/";
  EXPECT_EQ(render_all(r.diagnostics),
            (Lines{"error: " + meta +
                       ": /mesh_dim_names: expected null or an array of strings, "
                       "got an integer",
                   "error: " + meta + ": /outputs: missing diff output hash (" + g +
                       "modeling_model_gen_npu.py.diff)",
                   "error: " + meta + ": /outputs: missing modeling output hash (" + g +
                       "modeling_model_gen_npu.py)",
                   "error: " + meta +
                       ": /outputs/init: expected an object with a 'sha256' of 64 lowercase hex "
                       "digits, got 'x'",
                   empty_plan_error(meta)}));
  // Without --bundle, the meta's own findings only.
  request.bundle = false;
  EXPECT_EQ(run_check(request).diagnostics.size(), 2U);
}

}  // namespace
}  // namespace hpfreeze
