// run_check on files (lib/src/commands/check_command.cc): findings, read errors, --json.
#include "hpfreeze/commands/check_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "check/findings_lines.h"
#include "hpfreeze/base/concurrency.h"

namespace hpfreeze {
namespace {

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

using check_test::Lines;
using check_test::render_all;

std::string testdata(std::string_view name) {
  return std::string(HPFREEZE_TESTDATA_DIR) + "/" + std::string(name);
}

// ---------------------------------------------------------------------------------------
// run_check on files

TEST(RunCheck, CleanFilesHaveNoFindings) {
  const CommandResult r = run_check(
      {{testdata("check/clean_meta.json")}, testdata("check/clean_model.json"), false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics), Lines{});
  EXPECT_EQ(r.outcome(), Outcome::kOk);
}

TEST(RunCheck, WarningsAndNotesAreNotErrors) {
  const std::string meta = testdata("check/warnings_meta.json");
  const CommandResult r = run_check({{meta}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            (Lines{"note: " + meta +
                       ": /param_plan/head/out_dst/output/cp: axis 'cp' is not in mesh_dim_names "
                       "['tp']; the runtime ignores it (3 placements)",
                   "warning: " + meta +
                       ": /param_plan/head/out_dst/output/tp: ambiguous negative dim: 'S(-1)' "
                       "reads back as an uneven shard of dim 0, not as dim -1 counted from the "
                       "end (2 negative-dim placements of 'output' on boundary 'head')",
                   "warning: " + meta +
                       ": /param_plan/head/params/weight/tp: placement 'S( 0 )' is not canonical "
                       "(canonical form: 'S(0)')"}));
  EXPECT_EQ(r.outcome(), Outcome::kOk);
}

TEST(RunCheck, ErrorsInMetaAndModel) {
  const std::string meta = testdata("check/errors_meta.json");
  const std::string model = testdata("check/errors_model.json");
  const CommandResult r = run_check({{meta}, model, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            (Lines{"error: " + meta +
                       ": /frozen_sharded_params: missing 'lin.bias', which param_plan shards "
                       "(/param_plan/lin/params/bias)",
                   "error: " + meta +
                       ": /frozen_sharded_params/0: 'ghost.weight' is not a parameter of "
                       "param_plan",
                   "error: " + meta +
                       ": /injections/1/match: second injection for 'lin' (first at "
                       "/injections/0)",
                   "error: " + meta +
                       ": /param_plan/lin/params/weight/tp: invalid placement 'Shard(0)': unknown "
                       "form, expected R, S(dim), SS(dim,factor) or P(reduce_op)",
                   "error: " + meta + ": /signature: expected a string, got an integer",
                   "error: " + model +
                       ": /parameters/other.w: trainable parameter 'other.w' is not covered by "
                       "any param_plan entry of " +
                       meta}));
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
}

TEST(RunCheck, SyntaxErrorIsAFindingWithAPosition) {
  const std::string meta = testdata("check/syntax_error.json");
  const CommandResult r = run_check({{meta}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics), Lines{"error: " + meta + ":3:1: expected a value"});
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
}

TEST(RunCheck, ModelDecodeErrorIsAFinding) {
  const std::string model = testdata("check/bad_model.json");
  const CommandResult r = run_check({{testdata("check/clean_meta.json")}, model, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: " + model + ": /extra: unknown top-level key 'extra'"});
}

// A repeated key in the model is a load error, listed beside the meta's syntax error, not
// left out as a decode error would be (a guard for a model parse that leaves the keys to
// its decoder, lib/src/io/inputs.h).
TEST(RunCheck, ARepeatedModelKeyIsListedWithTheMetasSyntaxError) {
  const std::string meta = testdata("check/syntax_error.json");
  const std::string model = ::testing::TempDir() + "check_command_test_repeated_model.json";
  std::ofstream(model, std::ios::binary)
      << R"j({"modules": {"": "Net"}, "parameters": {}, "zz": 1, "zz": 2})j";
  const CommandResult r = run_check({{meta}, model, false, kTwoCpus});
  std::remove(model.c_str());
  EXPECT_EQ(render_all(r.diagnostics), (Lines{"error: " + meta + ":3:1: expected a value",
                                              "error: " + model + ": /zz: duplicate key 'zz'"}));
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
}

TEST(RunCheck, UnreadableFileIsAnIoError) {
  const std::string missing = testdata("check/no_such_file.json");
  const CommandResult r =
      run_check({{testdata("check/syntax_error.json")}, missing, false, kTwoCpus});
  // Nothing is checked when an input cannot be read, not even the other file (whose syntax
  // error is not listed).
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: " + missing + ": cannot open: No such file or directory"});
  ASSERT_EQ(r.diagnostics.size(), 1U);
  EXPECT_EQ(r.diagnostics.front().error_class, ErrorClass::kIo);
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

// The request's one rule between its paths, checked by run_check itself before anything
// is read (stdin cannot be read twice): a usage error, exit 2.
TEST(RunCheck, StdinForBothInputsIsRefusedBeforeAnythingIsRead) {
  const CommandResult r = run_check({{"-"}, std::string("-"), false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: at most one of META and --model may be '-' (stdin)"});
  ASSERT_EQ(r.diagnostics.size(), 1U);
  EXPECT_EQ(r.diagnostics.front().error_class, ErrorClass::kIo);
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
  // One of them on stdin is a request like any other (here stdin is not read: the model
  // cannot be opened, and read errors come first).
  const CommandResult one =
      run_check({{testdata("check/no_such_file.json")}, std::string("-"), false, kTwoCpus});
  ASSERT_EQ(one.diagnostics.size(), 1U);
  EXPECT_NE(one.diagnostics.front().message.find("cannot open"), std::string::npos);
}

// --json: the findings on stdout as JSON Lines (json/diagnostic_json.h), nothing on
// stderr, and the outcome of the findings; read errors stay diagnostics.
TEST(RunCheck, JsonPutsTheFindingsOnStdout) {
  const std::string meta = testdata("check/syntax_error.json");
  CheckRequest request{{meta}, std::nullopt, false, kTwoCpus};
  request.json = true;
  CheckTally tally;
  CommandResult r = run_check(request, &tally);
  EXPECT_EQ(r.output, "{\"severity\":\"error\",\"file\":\"" + meta +
                          "\",\"pointer\":\"\",\"message\":\"expected a value\",\"line\":3,"
                          "\"column\":1}\n");
  EXPECT_EQ(r.diagnostics.size(), 0U);
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
  EXPECT_EQ(tally.counts.text(), "1 error, 0 warnings, 0 notes");

  request.paths = {testdata("check/warnings_meta.json")};
  r = run_check(request, &tally);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 3);
  EXPECT_EQ(r.outcome(), Outcome::kOk);
  EXPECT_EQ(tally.counts.text(), "0 errors, 2 warnings, 1 note");

  request.paths = {testdata("check/no_such_file.json")};
  r = run_check(request, &tally);
  EXPECT_EQ(r.output, "");
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: " + request.paths[0] + ": cannot open: No such file or directory"});
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
