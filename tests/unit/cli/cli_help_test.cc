// `help`, --help and --version, run in-process: on stdout, exit 0, nothing on stderr; a
// failed write of them is exit 2. What the texts must hold is docs/cli.md's ("Global
// options", "Help, man pages, completion") and tests/e2e/test_cli.py's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli.h"
#include "cli/cli_tester.h"

namespace hpfreeze::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The command table's names, in its order (apps/hpfreeze/commands.cc): --help lists them so.
std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& command : commands()) names.emplace_back(command.name);
  return names;
}
const std::vector<std::string> kCommands = command_names();

class CliHelp : public ::testing::Test {
 protected:
  std::string help_text(const std::vector<std::string>& args) {
    const CliRun r = tester_.run(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args);
    EXPECT_EQ(r.err, "") << ::testing::PrintToString(args);
    return r.out;
  }
  CliTester tester_;
};

TEST_F(CliHelp, HelpCommandAndFlagsAgree) {
  const std::string main = help_text({"--help"});
  EXPECT_THAT(main, StartsWith("hpfreeze: freeze a HyperParallel sharding plan"));
  EXPECT_EQ(help_text({"-h"}), main);
  EXPECT_EQ(help_text({"help"}), main);
}

TEST_F(CliHelp, HelpOfACommandIsItsHelpFlag) {
  for (const std::string& c : kCommands) {
    const std::string text = help_text({c, "--help"});
    EXPECT_THAT(text, HasSubstr("Usage: hpfreeze " + c + " [OPTIONS]")) << c;
    EXPECT_EQ(help_text({"help", c}), text) << c;
    EXPECT_EQ(help_text({c, "-h"}), text) << c;
    EXPECT_NE(text, help_text({"--help"})) << c;
  }
}

TEST_F(CliHelp, MainHelpListsTheCommandsInOrder) {
  const std::string text = help_text({"--help"});
  const std::size_t section = text.find("\nSubcommands:\n");
  ASSERT_NE(section, std::string::npos) << text;
  const std::string rest = text.substr(section);
  const std::regex entry("\n  ([a-z]+)  ");
  std::vector<std::string> listed;
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), entry);
       it != std::sregex_iterator(); ++it) {
    listed.push_back((*it)[1]);
  }
  EXPECT_EQ(listed, kCommands);
}

// docs/cli.md ("Help, man pages, completion") names the commands in the table's order too.
TEST_F(CliHelp, TheDocsListTheCommandsInTheTablesOrder) {
  std::ifstream in(std::string(HPFREEZE_TESTDATA_DIR) + "/../docs/cli.md");
  std::string docs;
  for (std::string word; in >> word;) docs += word + " ";  // as if on one line
  const std::string lead = "lists the global options and the commands in this order: ";
  const std::size_t at = docs.find(lead);
  ASSERT_NE(at, std::string::npos) << "docs/cli.md lacks: " << lead;
  const std::size_t end = docs.find('.', at);
  std::string names;
  for (const std::string& name : kCommands) names += (names.empty() ? "" : ", ") + name;
  EXPECT_EQ(docs.substr(at + lead.size(), end - at - lead.size()), names);
}

// The lines after the last "Exit status:" heading.
std::vector<std::string> ending_lines(const std::string& text) {
  std::vector<std::string> lines;
  const std::size_t at = text.rfind("\nExit status:\n");
  if (at == std::string::npos) return lines;
  std::size_t start = at + 1;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  if (start != text.size()) lines.push_back(text.substr(start));  // no final newline
  return lines;
}

TEST_F(CliHelp, EveryHelpListsTheGlobalFlagsAndEndsWithExitStatusAndAnExample) {
  std::vector<std::vector<std::string>> all = {{"--help"}};
  for (const std::string& c : kCommands) all.push_back({c, "--help"});
  for (const std::vector<std::string>& args : all) {
    const std::string text = help_text(args);
    for (const char* flag : {"  -v,--verbose ", "  -q,--quiet ", "  --version ", "  -h,--help ",
                             "  --message-format "}) {
      EXPECT_THAT(text, HasSubstr(flag)) << ::testing::PrintToString(args);
    }
    // Exit status: 0, 1 and 2 with their meaning, a blank line, one example, the end.
    // (CLI11 ends the help with a blank line, which a regular expression's $ allows.)
    std::vector<std::string> lines = ending_lines(text);
    if (lines.size() == 8 && lines.back().empty()) lines.pop_back();
    ASSERT_EQ(lines.size(), 7U) << text;
    EXPECT_EQ(lines[0], "Exit status:");
    EXPECT_THAT(lines[1], ::testing::MatchesRegex("  0  [^ ].*"));
    EXPECT_THAT(lines[2], ::testing::MatchesRegex("  1  [^ ].*"));
    EXPECT_THAT(lines[3], ::testing::MatchesRegex("  2  [^ ].*"));
    EXPECT_EQ(lines[4], "");
    EXPECT_EQ(lines[5], "Examples:");
    const std::string example = args.size() == 2 ? "  hpfreeze " + args[0] + " " : "  hpfreeze ";
    EXPECT_THAT(lines[6], StartsWith(example));
  }
}

TEST_F(CliHelp, ModelOfReportAndCheckNamesTheCheckpointFiles) {
  // --help is what the man pages and the zsh and fish descriptions are made from.
  const std::string files =
      "a model tree dump (hpfreeze.model/v1), a checkpoint's model.safetensors, or a sharded "
      "one's model.safetensors.index.json (headers only); '-' for stdin (a dump or an index)\n";
  EXPECT_THAT(help_text({"report", "--help"}),
              HasSubstr("  --model FILE                Parameter shapes: " + files));
  EXPECT_THAT(
      help_text({"check", "--help"}),
      HasSubstr("  --model FILE                The model to check the meta against: " + files));
}

TEST_F(CliHelp, HelpOfAnUnknownCommandSuggestsTheNearest) {
  EXPECT_EQ(
      tester_.run({"help", "frezee"}),
      CliRun::trouble(CliRun::usage_error("unknown command 'frezee'; did you mean 'freeze'?")));
}

TEST_F(CliHelp, HelpTakesAtMostOneCommand) {
  EXPECT_EQ(tester_.run({"help", "freeze", "parse"}),
            CliRun::trouble(
                CliRun::usage_error("help takes at most one command (see 'hpfreeze --help')")));
}

TEST_F(CliHelp, VersionAnywhere) {
  const std::string expected = std::string("hpfreeze ") + HPFREEZE_PROJECT_VERSION + "\n";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--version"},
                                             {"parse", "--version"},
                                             {"freeze", "--version"},
                                             {"report", "--version"},
                                             {"-v", "--version"}}) {
    const CliRun r = tester_.run(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args);
    EXPECT_EQ(r.out, expected) << ::testing::PrintToString(args);
    EXPECT_EQ(r.err, "") << ::testing::PrintToString(args);
  }
}

// Help and version are output like any other: on a full stdout, one error line, exit 2.
TEST_F(CliHelp, HelpAndVersionToAFullStdout) {
  tester_.set_stdout_path("/dev/full");
  const std::regex line("hpfreeze: error: .*stdout.*No space left on device\n");
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"--version"},
                                             {"help"},
                                             {"help", "freeze"},
                                             {"freeze", "--help"},
                                             {"report", "--version"}}) {
    const CliRun r = tester_.run(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_TRUE(std::regex_match(r.err, line)) << ::testing::PrintToString(args) << r.err;
  }
}

}  // namespace
}  // namespace hpfreeze::cli::testing
