// The exit statuses 0, 1 and 2 (docs/cli.md, "Exit codes"), stdin and the global flags on
// either side of the command word, run in-process. Expected bytes are docs/cli.md's and
// tests/e2e's, and the example's expected.json is the independent oracle's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_tester.h"

namespace hpfreeze::cli::testing {
namespace {

using ::testing::StartsWith;

class CliExitStatus : public ::testing::Test {
 protected:
  CliTester tester_;
};

TEST_F(CliExitStatus, ZeroForValidInput) {
  const CliRun r = tester_.run({"parse", "R"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "R\n");
  EXPECT_EQ(r.err, "");
}

// docs/cli.md, "hpfreeze parse": every rejected input has its line; the others are printed.
TEST_F(CliExitStatus, OneForRejectedInput) {
  const CliRun r = tester_.run({"parse", "SS( 0 , 2 )", "S(x)", "P(sum)"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "SS(0,2)\nP(sum)\n");
  EXPECT_EQ(r.err,
            "hpfreeze: error: argument 2: invalid placement 'S(x)': dim 'x' is not an integer\n");
}

TEST_F(CliExitStatus, TwoForAnInputThatCannotBeRead) {
  const CliRun r = tester_.run({"-q", "freeze", "--plan", testdata("cases/corners/plan.json"),
                                "--model", testdata("cases/corners/missing.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("hpfreeze: error: "));
}

// docs/cli.md, "hpfreeze parse": `printf 'R\nS(-1)\n' | hpfreeze parse --json`.
TEST_F(CliExitStatus, ParseReadsStdinLines) {
  tester_.set_stdin("R\nS(-1)\n", Stdin::kPipe);
  const CliRun r = tester_.run({"parse", "--json"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "{\"$placement\":\"Replicate\",\"canonical\":\"R\"}\n"
            "{\"$placement\":\"Shard\",\"dim\":0,\"uneven_shard\":true,\"canonical\":\"S(-1)\"}\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliExitStatus, FreezeWritesTheOraclesBytes) {
  const std::string expected = read_file(testdata("example/expected.json"));
  ASSERT_FALSE(expected.empty());
  const CliRun r = tester_.run({"freeze", "--plan", testdata("example/plan.json"), "--model",
                                testdata("example/model.json")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
  EXPECT_EQ(r.err, "");
}

// The plan from stdin, a pipe and a regular file alike.
TEST_F(CliExitStatus, FreezeReadsThePlanFromStdin) {
  const std::string expected = read_file(testdata("example/expected.json"));
  const std::string plan = read_file(testdata("example/plan.json"));
  for (const Stdin kind : {Stdin::kPipe, Stdin::kBytes}) {
    tester_.set_stdin(plan, kind);
    const std::string output = tester_.dir() + "/codegen_meta.json";
    const CliRun r = tester_.run(
        {"freeze", "--plan", "-", "--model", testdata("example/model.json"), "-o", output});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(read_file(output), expected);
  }
}

// tests/e2e/test_io_faults.py: a closed stdin is a clear error, never a file read as stdin.
TEST_F(CliExitStatus, ClosedStdin) {
  tester_.close_stdin();
  const std::string closed = "hpfreeze: error: <stdin>: cannot read: standard input is closed\n";
  CliRun r = tester_.run({"parse"});
  EXPECT_EQ((std::pair{r.exit_code, r.err}), (std::pair{2, closed}));
  r = tester_.run({"freeze", "--plan", testdata("example/plan.json"), "--model", "-"});
  EXPECT_EQ((std::pair{r.exit_code, r.err}), (std::pair{2, closed}));
  EXPECT_EQ(r.out, "");
}

// -qq: not even errors, on any side of the command word (the exit status still tells).
// --silence: comma lists, repeatable; what it leaves out is not shown and not counted, by
// the exit status or -v's line.
TEST_F(CliExitStatus, SilencedFindingsNeitherShowNorCount) {
  const std::string meta = testdata("check/errors_meta.json");
  CliRun r = tester_.run({"check", meta, "--silence", "HPF206,HPF207", "--silence", "HPF201"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "hpfreeze: error: " + meta +
                       ": /signature: expected a string, got an integer [HPF101]\n");
  r = tester_.run({"-v", "check", meta, "--silence", "HPF206,HPF207,HPF201", "--silence=HPF101"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "hpfreeze: debug: check: 0 errors, 0 warnings, 0 notes\n");
}

TEST_F(CliExitStatus, QuietOnEitherSideOfTheCommandWord) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"parse", "S(x)", "-qq"}, {"parse", "-qq", "S(x)"}, {"-qq", "parse", "S(x)"}}) {
    const CliRun r = tester_.run(args);
    EXPECT_EQ(r.exit_code, 1) << ::testing::PrintToString(args);
    EXPECT_EQ(r.out, "") << ::testing::PrintToString(args);
    EXPECT_EQ(r.err, "") << ::testing::PrintToString(args);
  }
}

// -q shows errors, -qq nothing: one -q on each side is -qq.
TEST_F(CliExitStatus, QuietCountsAddUpAcrossTheCommandWord) {
  CliRun r = tester_.run({"-q", "parse", "S(x)", "-q"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "");
  r = tester_.run({"-q", "freeze", "-q", "--plan", testdata("cases/corners/plan.json"), "--model",
                   testdata("cases/corners/missing.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "");
}

TEST_F(CliExitStatus, VerboseAfterTheCommandWord) {
  const CliRun r = tester_.run({"parse", "-v", "R", "-vv"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "R\n");
}

}  // namespace
}  // namespace hpfreeze::cli::testing
