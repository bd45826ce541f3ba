// run_check on files (lib/src/commands/check_command.cc): findings, read errors, --json; on
// the in-memory file system, the inputs copied from testdata/.
#include "hpfreeze/commands/check_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "check/findings_lines.h"
#include "hpfreeze/base/concurrency.h"
#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

using check_test::Lines;
using check_test::render_all;

class RunCheck : public ::testing::Test {
 protected:
  // The testdata file `name`, on the disk the command reads, under its name in testdata/.
  std::string testdata(std::string_view name) {
    disk_.add_copy(std::string(name), std::string(HPFREEZE_TESTDATA_DIR) + "/" + std::string(name));
    return std::string(name);
  }
  CommandResult run_check(CheckRequest request, CheckTally* tally = nullptr) {
    request.files = &disk_;
    return hpfreeze::run_check(request, tally);
  }
  io_testing::FakeFileSystem disk_;
};

// ---------------------------------------------------------------------------------------
// run_check on files

TEST_F(RunCheck, CleanFilesHaveNoFindings) {
  const CommandResult r = run_check(
      {{testdata("check/clean_meta.json")}, testdata("check/clean_model.json"), false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics), Lines{});
  EXPECT_EQ(r.outcome(), Outcome::kOk);
}

TEST_F(RunCheck, WarningsAndNotesAreNotErrors) {
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

TEST_F(RunCheck, ErrorsInMetaAndModel) {
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

TEST_F(RunCheck, SyntaxErrorIsAFindingWithAPosition) {
  const std::string meta = testdata("check/syntax_error.json");
  const CommandResult r = run_check({{meta}, std::nullopt, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics), Lines{"error: " + meta + ":3:1: expected a value"});
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
}

TEST_F(RunCheck, ModelDecodeErrorIsAFinding) {
  const std::string model = testdata("check/bad_model.json");
  const CommandResult r = run_check({{testdata("check/clean_meta.json")}, model, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: " + model + ": /extra: unknown top-level key 'extra'"});
}

// A repeated key in the model is a load error, listed beside the meta's syntax error, not
// left out as a decode error would be (a guard for a model parse that leaves the keys to
// its decoder, lib/src/io/inputs.h).
TEST_F(RunCheck, ARepeatedModelKeyIsListedWithTheMetasSyntaxError) {
  const std::string meta = testdata("check/syntax_error.json");
  const std::string model = "repeated_model.json";
  disk_.add_file(model, R"j({"modules": {"": "Net"}, "parameters": {}, "zz": 1, "zz": 2})j");
  const CommandResult r = run_check({{meta}, model, false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics), (Lines{"error: " + meta + ":3:1: expected a value",
                                              "error: " + model + ": /zz: duplicate key 'zz'"}));
  EXPECT_EQ(r.outcome(), Outcome::kRejected);
}

TEST_F(RunCheck, UnreadableFileIsAnIoError) {
  const std::string missing = "check/no_such_file.json";
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
TEST_F(RunCheck, StdinForBothInputsIsRefusedBeforeAnythingIsRead) {
  const CommandResult r = run_check({{"-"}, std::string("-"), false, kTwoCpus});
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: at most one of META and --model may be '-' (stdin)"});
  ASSERT_EQ(r.diagnostics.size(), 1U);
  EXPECT_EQ(r.diagnostics.front().error_class, ErrorClass::kIo);
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
  // One of them on stdin is a request like any other (here what stdin holds is not looked
  // at: the meta cannot be opened, and read errors come first).
  disk_.stdin_text = "";
  const CommandResult one =
      run_check({{"check/no_such_file.json"}, std::string("-"), false, kTwoCpus});
  ASSERT_EQ(one.diagnostics.size(), 1U);
  EXPECT_NE(one.diagnostics.front().message.find("cannot open"), std::string::npos);
}

// --json: the findings on stdout as JSON Lines (json/diagnostic_json.h), nothing on
// stderr, and the outcome of the findings; read errors stay diagnostics.
TEST_F(RunCheck, JsonPutsTheFindingsOnStdout) {
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

  request.paths = {"check/no_such_file.json"};
  r = run_check(request, &tally);
  EXPECT_EQ(r.output, "");
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: " + request.paths[0] + ": cannot open: No such file or directory"});
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

// --silence: the findings of the codes named are left out as if their rules had not run: not
// listed, not counted, no part of the outcome; the others stay.
TEST_F(RunCheck, SilencedFindingsCountNowhere) {
  const std::string meta = testdata("check/warnings_meta.json");
  CheckRequest request{{meta}, std::nullopt, false, kTwoCpus};
  request.silenced = {"HPF203", "HPF204"};
  CheckTally tally;
  CommandResult r = run_check(request, &tally);
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"warning: " + meta +
                  ": /param_plan/head/params/weight/tp: placement 'S( 0 )' is not canonical "
                  "(canonical form: 'S(0)')"});
  EXPECT_EQ(tally.counts.text(), "0 errors, 1 warning, 0 notes");
  request.json = true;
  r = run_check(request, &tally);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1);
  EXPECT_NE(r.output.find("\"code\":\"HPF202\""), std::string::npos) << r.output;

  // Every error silenced: the meta passes.
  const std::string errors = testdata("check/errors_meta.json");
  const std::string model = testdata("check/errors_model.json");
  CheckRequest strict{{errors}, model, false, kTwoCpus};
  EXPECT_EQ(run_check(strict).outcome(), Outcome::kRejected);
  strict.silenced = {"HPF101", "HPF201", "HPF206", "HPF207", "HPF303", "HPF304", "HPF305"};
  r = run_check(strict, &tally);
  EXPECT_EQ(render_all(r.diagnostics), Lines{});
  EXPECT_EQ(r.outcome(), Outcome::kOk);
  EXPECT_EQ(tally.counts.text(), "0 errors, 0 warnings, 0 notes");
  // A syntax error is no finding of a rule: nothing silences it.
  strict.paths = {testdata("check/syntax_error.json")};
  EXPECT_EQ(run_check(strict).outcome(), Outcome::kRejected);
}

// The decode keeps the first 100 errors and counts the rest in one line: a silenced code is
// neither kept nor counted there.
TEST_F(RunCheck, SilencedDecodeErrorsPastTheCapAreNotCounted) {
  std::string members;
  for (int i = 0; i < 150; ++i)
    members += (i > 0 ? ", " : "") + std::string("\"b") + std::to_string(i) + "\": 3";
  disk_.add_file("many.json", "{\"param_plan\": {" + members + "}}");
  CheckRequest request{{"many.json"}, std::nullopt, false, kTwoCpus};
  CommandResult r = run_check(request);
  ASSERT_EQ(r.diagnostics.size(), 101U);
  EXPECT_EQ(render_all(r.diagnostics).front(), "error: many.json: 50 more errors not shown");
  request.silenced = {"HPF103"};
  r = run_check(request);
  EXPECT_EQ(render_all(r.diagnostics), Lines{});
  EXPECT_EQ(r.outcome(), Outcome::kOk);
}

// A code the table lacks is a usage error, before anything is read.
TEST_F(RunCheck, AnUnknownSilencedCodeIsAUsageError) {
  CheckRequest request{{"check/no_such_file.json"}, std::nullopt, false, kTwoCpus};
  request.silenced = {"HPF406", "HPF4O6"};
  const CommandResult r = run_check(request);
  EXPECT_EQ(render_all(r.diagnostics),
            Lines{"error: --silence: unknown finding code 'HPF4O6'; did you mean 'HPF406'?"});
  EXPECT_EQ(r.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
