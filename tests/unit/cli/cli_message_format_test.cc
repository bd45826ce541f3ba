// --message-format and $HPFREEZE_MESSAGE_FORMAT on usage errors, run in-process. The lines
// are docs/cli.md's ("Message formats") and tests/e2e/test_ci_modes.py's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_tester.h"

namespace hpfreeze::cli::testing {
namespace {

const std::string kPlannGithub = "::error::unknown option '--plann'; did you mean '--plan'?\n";
const std::string kPlannJson =
    "{\"severity\":\"error\",\"file\":\"\",\"pointer\":\"\",\"message\":\"unknown option "
    "'--plann'; did you mean '--plan'?\"}\n";

class CliMessageFormat : public ::testing::Test {
 protected:
  void expect_usage_error(const std::vector<std::string>& args, const std::string& line) {
    EXPECT_EQ(tester_.run(args), CliRun::trouble(line)) << ::testing::PrintToString(args);
  }
  CliTester tester_;
};

// On either side of the command word, as two words or with '='.
TEST_F(CliMessageFormat, UsageErrorInGithub) {
  expect_usage_error({"--message-format", "github", "freeze", "--plann", "x"}, kPlannGithub);
  expect_usage_error({"freeze", "--plann", "x", "--message-format", "github"}, kPlannGithub);
  expect_usage_error({"freeze", "--message-format=github", "--plann", "x"}, kPlannGithub);
}

TEST_F(CliMessageFormat, UsageErrorInJson) {
  expect_usage_error({"--message-format", "json", "freeze", "--plann", "x"}, kPlannJson);
  expect_usage_error({"freeze", "--plann", "x", "--message-format", "json"}, kPlannJson);
  expect_usage_error({"freeze", "--message-format=json", "--plann", "x"}, kPlannJson);
}

TEST_F(CliMessageFormat, UsageErrorInGithubUnderQuiet) {
  expect_usage_error({"-qq", "--message-format", "github", "freeze", "--plann", "x"}, kPlannGithub);
}

// CLI11's own error (a missing required option) and main's own (the command word).
TEST_F(CliMessageFormat, CLI11sOwnAndTheCommandWordsErrors) {
  expect_usage_error({"--message-format", "github", "freeze", "--plan", "p.json"},
                     "::error::--model is required (see 'hpfreeze freeze --help')\n");
  expect_usage_error({"--message-format", "json", "xyzzy"},
                     "{\"severity\":\"error\",\"file\":\"\",\"pointer\":\"\",\"message\":"
                     "\"unknown command 'xyzzy' (see 'hpfreeze --help')\"}\n");
}

TEST_F(CliMessageFormat, ABadFormatIsAUsageErrorInText) {
  expect_usage_error({"--message-format", "xml", "check", "m.json"},
                     CliRun::usage_error("--message-format: unknown message format 'xml' (text, "
                                         "github or json)"));
  expect_usage_error({"check", "m.json", "--message-format=GitHub"},
                     CliRun::usage_error("--message-format: unknown message format 'GitHub' "
                                         "(text, github or json)"));
  expect_usage_error({"check", "m.json", "--message-format"},
                     CliRun::usage_error("--message-format needs a value: text, github or json"));
}

TEST_F(CliMessageFormat, TheEnvironmentVariable) {
  tester_.set_env("HPFREEZE_MESSAGE_FORMAT", "github");
  expect_usage_error({"frezee"}, "::error::unknown command 'frezee'; did you mean 'freeze'?\n");
  // The option wins over it.
  tester_.set_env("HPFREEZE_MESSAGE_FORMAT", "json");
  expect_usage_error({"--message-format", "text", "frezee"},
                     CliRun::usage_error("unknown command 'frezee'; did you mean 'freeze'?"));
  // Empty is unset.
  tester_.set_env("HPFREEZE_MESSAGE_FORMAT", "");
  expect_usage_error({"frezee"},
                     CliRun::usage_error("unknown command 'frezee'; did you mean 'freeze'?"));
  tester_.set_env("HPFREEZE_MESSAGE_FORMAT", "yaml");
  expect_usage_error({"check", "m.json"},
                     CliRun::usage_error("HPFREEZE_MESSAGE_FORMAT: unknown message format 'yaml' "
                                         "(text, github or json)"));
}

// The format of one run is not the next run's: after a run in json, a bad format and a
// plain mistake are text again, as in a process of their own.
TEST_F(CliMessageFormat, OneRunsFormatIsNotTheNexts) {
  expect_usage_error({"--message-format", "json", "freeze", "--plann", "x"}, kPlannJson);
  expect_usage_error({"--message-format", "xml", "check", "m.json"},
                     CliRun::usage_error("--message-format: unknown message format 'xml' (text, "
                                         "github or json)"));
  expect_usage_error({"--message-format", "github", "freeze", "--plann", "x"}, kPlannGithub);
  expect_usage_error({"check", "m.json", "--message-format"},
                     CliRun::usage_error("--message-format needs a value: text, github or json"));
}

}  // namespace
}  // namespace hpfreeze::cli::testing
