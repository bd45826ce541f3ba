// Mistakes on the command line, run in-process: each is named on one line of stderr, exit
// status 2, nothing on stdout. The texts are docs/cli.md's ("Usage errors") and those of
// tests/e2e/test_cli.py, which checks the same against the binary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_tester.h"

namespace hpfreeze::cli::testing {
namespace {

class CliMistakes : public ::testing::Test {
 protected:
  // One usage error: exit 2, no output, exactly this line on stderr.
  void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
    EXPECT_EQ(tester_.run(args), CliRun::trouble(CliRun::usage_error(message)))
        << ::testing::PrintToString(args);
  }
  CliTester tester_;
};

TEST_F(CliMistakes, UnknownCommandSuggestsTheNearest) {
  expect_usage_error({"frezee"}, "unknown command 'frezee'; did you mean 'freeze'?");
  expect_usage_error({"chek", "meta.json"}, "unknown command 'chek'; did you mean 'check'?");
}

TEST_F(CliMistakes, UnknownCommandAfterAGlobalFlag) {
  expect_usage_error({"-v", "thwa"}, "unknown command 'thwa'; did you mean 'thaw'?");
}

// --optimizer's choices come from the planner's optimizer table (capacity_args.h).
TEST_F(CliMistakes, AnOptimizerNotInTheTable) {
  expect_usage_error({"report", "m.json", "--model", "x", "--optimizer", "lion"},
                     "--optimizer: lion not in {none,sgd,momentum,adam,adamw} (see 'hpfreeze "
                     "report --help')");
}

// --silence names finding codes (docs/cli.md, "Finding codes"): anything else is refused
// while the command line is parsed, with the nearest code, in each item of a list.
TEST_F(CliMistakes, ASilencedCodeTheTableLacks) {
  expect_usage_error({"check", "m.json", "--silence", "HPF4O6"},
                     "--silence: unknown finding code 'HPF4O6'; did you mean 'HPF406'? (see "
                     "'hpfreeze check --help')");
  expect_usage_error({"report", "m.json", "--model", "x", "--silence", "HPF101,indivisible-dim"},
                     "--silence: unknown finding code 'indivisible-dim'; did you mean 'HPF501'? "
                     "(see 'hpfreeze report --help')");
  expect_usage_error({"check", "m.json", "--silence", "HPF101,"},
                     "--silence: empty finding code in 'HPF101,' (see 'hpfreeze check --help')");
  // Only check and report have findings to silence; diff --model takes the planner's flags,
  // not this one.
  expect_usage_error({"diff", "a.json", "b.json", "--silence", "HPF101"},
                     "unknown option '--silence' (see 'hpfreeze diff --help')");
  expect_usage_error({"diff", "a.json", "b.json", "--model", "m.json", "--silence", "HPF501"},
                     "unknown option '--silence' (see 'hpfreeze diff --help')");
}

// --recipe's choices come from the planner's recipe table (accounting.cc); --expert-zero-dim
// takes a dim.
TEST_F(CliMistakes, ARecipeNotInTheTableAndADimThatIsNone) {
  expect_usage_error({"report", "m.json", "--model", "x", "--recipe", "colossal"},
                     "--recipe: colossal not in {dtensor,fsdp2,megatron,deepspeed} (see 'hpfreeze "
                     "report --help')");
  expect_usage_error({"report", "m.json", "--model", "x", "--expert-zero-dim", "-1"},
                     "--expert-zero-dim: '-1' is not a dim; expected a decimal integer >= 0 (1: "
                     "the experts' ZeRO chunks on dim 1) (see 'hpfreeze report --help')");
}

TEST_F(CliMistakes, UnknownCommandWithoutANearOne) {
  expect_usage_error({"xyzzy"}, "unknown command 'xyzzy' (see 'hpfreeze --help')");
}

// An unknown option is named before the required option it leaves unset.
TEST_F(CliMistakes, MisspeltOptionIsNamedNotReportedAsAMissingOne) {
  expect_usage_error({"freeze", "--plann", "p.json", "--model", "m.json"},
                     "unknown option '--plann'; did you mean '--plan'?");
}

TEST_F(CliMistakes, MisspeltOptionWithItsValueAfterAnEqualsSign) {
  expect_usage_error({"freeze", "--plann=p.json"},
                     "unknown option '--plann'; did you mean '--plan'?");
}

// A flag takes no value: CLI11 alone ran 'diff --quiet=1' as --quiet, and '--json=0' turned
// --json off. Every flag, global or a command's, before or after the command word.
TEST_F(CliMistakes, AFlagGivenAValue) {
  expect_usage_error({"diff", "--quiet=1", "a.json", "b.json"},
                     "'--quiet=1': --quiet takes no value (see 'hpfreeze diff --help')");
  expect_usage_error({"diff", "a.json", "b.json", "--quiet=0"},
                     "'--quiet=0': --quiet takes no value (see 'hpfreeze diff --help')");
  expect_usage_error({"--quiet=1", "diff", "a.json", "b.json"},
                     "'--quiet=1': --quiet takes no value (see 'hpfreeze --help')");
  expect_usage_error({"check", "m.json", "--verbose="},
                     "'--verbose=': --verbose takes no value (see 'hpfreeze check --help')");
  expect_usage_error({"report", "m.json", "--model", "x", "--json=0"},
                     "'--json=0': --json takes no value (see 'hpfreeze report --help')");
  expect_usage_error({"freeze", "--plan", "p", "--model", "m", "--check=true"},
                     "'--check=true': --check takes no value (see 'hpfreeze freeze --help')");
  // An option that takes a value still takes it after '='; after "--" nothing is an option.
  EXPECT_EQ(tester_.run({"parse", "--message-format=text", "--", "--json=1"}).err,
            "hpfreeze: error: argument 1: invalid placement '--json=1': unknown form, expected R, "
            "S(dim), SS(dim,factor) or P(reduce_op)\n");
}

TEST_F(CliMistakes, MisspeltMesh) {
  expect_usage_error({"report", "m.json", "--model", "x", "--mehs", "tp=2"},
                     "unknown option '--mehs'; did you mean '--mesh'?");
}

TEST_F(CliMistakes, MisspeltGlobalFlagBeforeTheCommand) {
  expect_usage_error({"--verbos", "parse", "R"},
                     "unknown option '--verbos'; did you mean '--verbose'?");
}

TEST_F(CliMistakes, UnknownOptionWithoutANearOne) {
  expect_usage_error({"freeze", "--zzzzzz"},
                     "unknown option '--zzzzzz' (see 'hpfreeze freeze --help')");
}

// hpfreeze's own flags take no value: a command's option before the command word is named,
// with the command it belongs to, instead of its value being taken for the command.
TEST_F(CliMistakes, CommandOptionBeforeTheCommandWord) {
  expect_usage_error({"--plan", "p.json", "freeze", "--model", "m.json"},
                     "'--plan' is an option of 'freeze': put it after the command word "
                     "(hpfreeze freeze --plan ...)");
}

TEST_F(CliMistakes, CommandOptionWithItsValueBeforeTheCommandWord) {
  expect_usage_error({"-v", "--mesh=tp=2", "report", "meta.json"},
                     "'--mesh' is an option of 'report': put it after the command word "
                     "(hpfreeze report --mesh ...)");
}

TEST_F(CliMistakes, OptionOfAnotherCommandBeforeTheCommandWord) {
  expect_usage_error({"--mesh", "tp=2", "freeze"},
                     "unknown option '--mesh' (see 'hpfreeze --help')");
}

TEST_F(CliMistakes, CommandOptionWithNoCommand) {
  expect_usage_error({"--plan", "p.json"}, "unknown option '--plan' (see 'hpfreeze --help')");
}

// Own flags, also combined, still work before the command word.
TEST_F(CliMistakes, CombinedGlobalFlagsBeforeTheCommandWord) {
  const CliRun r = tester_.run({"-vq", "parse", "R"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "R\n");
}

TEST_F(CliMistakes, UnexpectedArgument) {
  expect_usage_error({"expand", "a.json", "b.json"},
                     "unexpected argument 'b.json' (see 'hpfreeze expand --help')");
}

TEST_F(CliMistakes, NoCommand) {
  expect_usage_error({}, "no command given (see 'hpfreeze --help')");
  expect_usage_error({"-v"}, "no command given (see 'hpfreeze --help')");
}

TEST_F(CliMistakes, MissingRequiredOptionStillSaysSo) {
  expect_usage_error({"freeze", "--model", "m.json"},
                     "--plan is required (see 'hpfreeze freeze --help')");
}

TEST_F(CliMistakes, RequiredOptionWithoutItsValue) {
  expect_usage_error({"freeze", "--plan"},
                     "--plan: 1 required FILE missing (see 'hpfreeze freeze --help')");
}

// Usage errors are printed whatever -q says (docs/cli.md, "Usage errors").
TEST_F(CliMistakes, UsageErrorsArePrintedUnderQuiet) {
  expect_usage_error({"-qq", "frezee"}, "unknown command 'frezee'; did you mean 'freeze'?");
  expect_usage_error({"freeze", "-qq", "--plann", "x"},
                     "unknown option '--plann'; did you mean '--plan'?");
}

// At most one input may be stdin: a usage error before anything is read.
TEST_F(CliMistakes, TwoInputsFromStdin) {
  tester_.set_stdin("{}");
  expect_usage_error({"diff", "-", "-"}, "at most one of the two metas may be '-' (stdin)");
  expect_usage_error({"check", "-", "--model", "-"},
                     "at most one of META and --model may be '-' (stdin)");
  expect_usage_error({"report", "-", "--model", "-"},
                     "at most one of META and --model may be '-' (stdin)");
  const CliRun r = tester_.run({"freeze", "--plan", "-", "--model", "-"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("at most one of --plan, --model and --base may be '-'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace hpfreeze::cli::testing
