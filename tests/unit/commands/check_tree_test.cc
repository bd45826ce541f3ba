// run_check over several metas (check PATH...), on the in-memory file system: walk order on
// several threads, the closing note and what it counts, the usage errors of a run of several,
// --bundle's findings among the meta's, one error for a run that cannot hash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check/findings_lines.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/check_command.h"
#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

using check_test::Lines;
using check_test::render_all;
using io_testing::FakeFileSystem;

constexpr Concurrency kTwoCpus{2};

// A meta whose one finding is its param_plan being empty, and one without findings.
constexpr const char* kEmptyPlan = R"j({"param_plan": {}})j";
constexpr const char* kClean =
    R"j({"param_plan": {"lin": {"params": {"w": {"tp": "R"}}}}, "frozen_sharded_params": []})j";
// A clean meta with a bundle of one empty __init__.py (modeling and diff recorded too).
constexpr const char* kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string bundle_meta() {
  const std::string hash = std::string(R"({"sha256": ")") + kEmptySha256 + "\"}";
  return R"j({"param_plan": {"lin": {"params": {"w": {"tp": "R"}}}}, "frozen_sharded_params": [],
              "model_name": "M", "outputs": {"init": )j" +
         hash + R"(, "modeling": )" + hash + R"(, "diff": )" + hash + "}}";
}

class CheckTree : public ::testing::Test {
 protected:
  std::string write(const std::string& path, const std::string& text) {
    disk_.add_tree({{path, text}});
    return path;
  }
  // A bundle that verifies, in `dir`.
  std::string bundle(const std::string& dir) {
    write(dir + "/__init__.py", "");
    write(dir + "/modeling_M_gen_npu.py", "");
    write(dir + "/modeling_M_gen_npu.py.diff", "");
    return write(dir + "/codegen_meta.json", bundle_meta());
  }
  CommandResult check(CheckRequest request, CheckTally* tally = nullptr) {
    request.files = &disk_;
    return run_check(request, tally);
  }
  CommandResult check_bundles(std::vector<std::string> paths) {
    CheckRequest request{std::move(paths), std::nullopt, false, kTwoCpus};
    request.bundle = true;
    return check(request);
  }

  FakeFileSystem disk_;
};

std::string empty_plan_error(const std::string& meta) {
  return "error: " + meta + ": /param_plan: param_plan is empty: the meta plans no boundary";
}

TEST_F(CheckTree, FindingsFollowTheWalkOnEveryThreadCount) {
  // 40 metas, every other one with a finding: the order must be the walk's whatever
  // thread checks which.
  Lines expected;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "t/m" + std::to_string(100 + i) + "/codegen_meta.json";
    write(name, i % 2 == 0 ? kEmptyPlan : kClean);
    if (i % 2 == 0) expected.push_back(empty_plan_error(name));
  }
  expected.push_back("note: check: 20 errors, 0 warnings, 0 notes in 40 metas");
  for (const std::size_t cpus : {1U, 2U, 7U}) {
    CheckTally tally;
    const CommandResult r = check({{"t"}, std::nullopt, false, Concurrency{cpus}}, &tally);
    EXPECT_EQ(render_all(r.diagnostics), expected) << cpus << " CPUs";
    EXPECT_EQ(r.outcome(), Outcome::kRejected);
    EXPECT_EQ(tally.metas, 40U);
    EXPECT_TRUE(tally.summarized);
    EXPECT_EQ(tally.counts.text(), "20 errors, 0 warnings, 0 notes");
  }
}

// What the walk found is read from what it opened, never by its name again.
TEST_F(CheckTree, WalkedMetasAreReadFromWhatTheWalkOpened) {
  write("t/a/codegen_meta.json", kClean);
  write("t/b/codegen_meta.json", kClean);
  disk_.log.clear();
  check({{"t"}, std::nullopt, false, kTwoCpus});
  for (const std::string& call : disk_.log) EXPECT_FALSE(call.starts_with("load ")) << call;
  EXPECT_EQ(io_testing::with_prefix(disk_.log, "read opened ").size(), 2U);
}

TEST_F(CheckTree, OneMetaHasNoClosingNote) {
  const std::string meta = write("t/a/codegen_meta.json", kEmptyPlan);
  CheckTally tally;
  const CommandResult r = check({{"t"}, std::nullopt, false, kTwoCpus}, &tally);
  EXPECT_EQ(render_all(r.diagnostics), Lines{empty_plan_error(meta)});
  EXPECT_FALSE(tally.summarized);
  EXPECT_EQ(tally.metas, 1U);
}

TEST_F(CheckTree, JsonLinesInWalkOrderAndTheNoteOnStderr) {
  const std::string a = write("t/a/codegen_meta.json", kEmptyPlan);
  write("t/b/codegen_meta.json", kClean);
  const std::string c = write("t/c/codegen_meta.json", kEmptyPlan);
  CheckRequest request{{"t"}, std::nullopt, false, kTwoCpus};
  request.json = true;
  const CommandResult r = check(request);
  const auto line = [](const std::string& meta) {
    return "{\"severity\":\"error\",\"code\":\"HPF102\",\"file\":\"" + meta +
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
  const std::string bad = write("b/codegen_meta.json", kEmptyPlan);
  const CommandResult r = check({{"a", "nothing_here.json", bad}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(
      render_all(r.diagnostics),
      (Lines{"error: nothing_here.json: cannot open: No such file or directory",
             empty_plan_error(bad), "note: check: 2 errors, 0 warnings, 0 notes in 3 metas"}));
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

// A silenced finding is in no meta's count: the closing note counts what is shown.
TEST_F(CheckTree, TheClosingNoteCountsNoSilencedFinding) {
  write("t/a/codegen_meta.json", kEmptyPlan);
  write("t/b/codegen_meta.json", kClean);
  CheckRequest request{{"t"}, std::nullopt, false, kTwoCpus};
  request.silenced = {"HPF102"};
  CheckTally tally;
  const CommandResult r = check(request, &tally);
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"note: check: 0 errors, 0 warnings, 0 notes in 2 metas"});
  EXPECT_EQ(r.outcome(), Outcome::kOk);
  EXPECT_EQ(tally.counts.text(), "0 errors, 0 warnings, 0 notes");
}

// The count of metas without a bundle stands for their HPF401 notes: silenced, it goes too.
TEST_F(CheckTree, ASilencedNoBundleIsNotCounted) {
  bundle("t/one");
  write("t/codegen_meta.json", kClean);
  CheckRequest request{{"t"}, std::nullopt, false, kTwoCpus};
  request.bundle = true;
  request.silenced = {"HPF401"};
  EXPECT_EQ(render_all(check(request).diagnostics),
            Lines{"note: check: 0 errors, 0 warnings, 0 notes in 2 metas; 1 bundle verified"});
}

TEST_F(CheckTree, ADirectoryWithoutAMetaIsAnIoError) {
  disk_.add_dir("empty");
  const CommandResult r = check({{"empty"}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: empty: no codegen_meta.json in this directory or below"});
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

void expect_usage_error(const CommandResult& r, const std::string& message) {
  EXPECT_EQ(render_all(r.diagnostics), Lines{"error: " + message});
  ASSERT_EQ(r.diagnostics.size(), 1U);
  EXPECT_EQ(r.diagnostics.front().error_class, ErrorClass::kIo);
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

TEST_F(CheckTree, UsageErrorsOfARunOfSeveral) {
  write("t/a/codegen_meta.json", kClean);
  write("t/b/codegen_meta.json", kClean);
  const std::string model = write("model.json", R"j({"modules": {"": "Net"}})j");
  disk_.log.clear();
  expect_usage_error(check({{"t"}, model, false, kTwoCpus}),
                     "--model checks one meta against a model, and this run has 2 metas");
  // Nothing was read: the walk counted them.
  EXPECT_EQ(io_testing::with_prefix(disk_.log, "read opened ").size(), 0U);
  EXPECT_EQ(io_testing::with_prefix(disk_.log, "load ").size(), 0U);
  expect_usage_error(check({{"t/a", "-"}, std::nullopt, false, kTwoCpus}),
                     "META '-' (stdin) must be the only META");
  expect_usage_error(check({{"-", "-"}, std::nullopt, false, kTwoCpus}),
                     "META '-' (stdin) must be the only META");
  expect_usage_error(check({{}, std::nullopt, false, kTwoCpus}), "no META given");
  // A pipe can be read once: named twice among the metas, refused before anything is read.
  disk_.add_fifo("fifo");
  expect_usage_error(check({{"fifo", "t", "fifo"}, std::nullopt, false, kTwoCpus}),
                     "fifo: META 1 and META 3 name the same pipe or socket, which can be read "
                     "only once");
}

// A meta on stdin has no bundle, however it is named: "-", /dev/stdin, a link to it; another
// descriptor has none either.
TEST_F(CheckTree, ABundleNeedsAMetaInADirectory) {
  const std::string stdin_has_none = "--bundle needs META as a path: a meta on stdin has no bundle";
  expect_usage_error(check_bundles({"-"}), stdin_has_none);
  expect_usage_error(check_bundles({"/dev/stdin"}), stdin_has_none);
  disk_.add_symlink("in", "/dev/stdin");
  expect_usage_error(check_bundles({"in"}), stdin_has_none);
  disk_.descriptor_paths["/dev/fd/3"] = 3;
  expect_usage_error(check_bundles({"/dev/fd/3"}),
                     "/dev/fd/3: --bundle needs META as a path: this names descriptor 3, which has "
                     "no bundle");
}

TEST_F(CheckTree, BundleFindingsSitAmongTheMetasOwn) {
  // The bundle's findings (/outputs...) sort between the checker's /mesh_dim_names and
  // /param_plan: one order, by pointer.
  const std::string meta =
      write("g/codegen_meta.json",
            R"j({"param_plan": {}, "mesh_dim_names": 3, "outputs": {"init": {"sha256": "x"}}})j");
  const CommandResult r = check_bundles({meta});
  EXPECT_EQ(render_all(r.diagnostics),
            (Lines{"error: " + meta +
                       ": /mesh_dim_names: expected null or an array of strings, got an integer",
                   "error: " + meta +
                       ": /outputs: missing diff output hash (g/modeling_model_gen_npu.py.diff): "
                       "regenerate the bundle",
                   "error: " + meta +
                       ": /outputs: missing modeling output hash (g/modeling_model_gen_npu.py): "
                       "regenerate the bundle",
                   "error: " + meta +
                       ": /outputs/init: expected an object with a 'sha256' of 64 lowercase hex "
                       "digits, got 'x': regenerate the bundle",
                   empty_plan_error(meta)}));
  // Without --bundle, the meta's own findings only.
  EXPECT_EQ(check({{meta}, std::nullopt, false, kTwoCpus}).diagnostics.size(), 2U);
}

// A run of several says in its closing note what it verified; the metas without a bundle
// that the walk found are counted there, not noted one by one (a repository's root meta would
// be noted on every run). A meta named on its own keeps its note.
TEST_F(CheckTree, TheClosingNoteSaysWhatWasVerified) {
  bundle("t/one");
  bundle("t/two");
  write("t/codegen_meta.json", kClean);
  EXPECT_EQ(render_all(check_bundles({"t"}).diagnostics),
            Lines{"note: check: 0 errors, 0 warnings, 0 notes in 3 metas; 2 bundles verified, 1 "
                  "meta without a bundle"});
  EXPECT_EQ(render_all(check_bundles({"t/one", "t/two"}).diagnostics),
            Lines{"note: check: 0 errors, 0 warnings, 0 notes in 2 metas; 2 bundles verified"});
  const std::string note =
      "note: t/codegen_meta.json: the meta records no generated bundle (no outputs): nothing to "
      "verify";
  EXPECT_EQ(render_all(check_bundles({"t/codegen_meta.json", "t/one"}).diagnostics),
            (Lines{note,
                   "note: check: 0 errors, 0 warnings, 1 note in 2 metas; 1 bundle verified, "
                   "1 meta without a bundle"}));
  // Alone, a meta's output is what it always was, the note included.
  EXPECT_EQ(render_all(check_bundles({"t/codegen_meta.json"}).diagnostics), Lines{note});
  disk_.nodes.erase("t/one");
  disk_.add_dir("u");
  disk_.rename_tree("t/two", "u/two");
  disk_.rename_tree("t/codegen_meta.json", "u/codegen_meta.json");
  EXPECT_EQ(render_all(check_bundles({"u"}).diagnostics),
            Lines{"note: check: 0 errors, 0 warnings, 0 notes in 2 metas; 1 bundle verified, 1 "
                  "meta without a bundle"});
  // A drifted bundle is verified, and its error counted.
  write("u/two/__init__.py", "edited\n");
  const Lines lines = render_all(check_bundles({"u"}).diagnostics);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1],
            "note: check: 1 error, 0 warnings, 0 notes in 2 metas; 1 bundle verified, 1 "
            "meta without a bundle");
}

// No libcrypto: nothing can be hashed, and that is one I/O error for the run (exit 2), not a
// finding on every generated file.
TEST_F(CheckTree, NoWayToHashIsOneIoErrorForTheRun) {
  bundle("t/one");
  bundle("t/two");
  disk_.no_digests = "cannot load libcrypto.so.3: libcrypto.so.3: cannot open shared object file";
  disk_.log.clear();
  const CommandResult r = check_bundles({"t"});
  expect_usage_error(r,
                     "--bundle cannot hash files: cannot load libcrypto.so.3: libcrypto.so.3: "
                     "cannot open shared object file");
  EXPECT_EQ(r.diagnostics.front().annotate_file, "");
  EXPECT_TRUE(io_testing::with_prefix(disk_.log, "digest ").empty());
  // Without --bundle nothing is hashed: the run goes on.
  EXPECT_EQ(check({{"t"}, std::nullopt, false, kTwoCpus}).outcome(), Outcome::kOk);
}

}  // namespace
}  // namespace hpfreeze
