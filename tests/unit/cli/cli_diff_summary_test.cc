// diff --group and --stat through the front end, run in-process: their outputs and their
// combinations with --json and -q, and the ::notice --message-format github adds
// (docs/cli.md, "hpfreeze diff").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/cli_tester.h"

namespace hpfreeze::cli::testing {
namespace {

// Three layers whose o_proj goes from S(1) to R (and out of frozen_sharded_params), and a
// signature that changes.
std::string meta(const char* placement, bool frozen, const char* signature) {
  std::string plan;
  std::string names;
  for (int i = 0; i < 3; ++i) {
    const std::string layer = "model.layers." + std::to_string(i) + ".self_attn";
    plan += (i ? ", \"" : "\"") + layer + "\": {\"params\": {\"o_proj.weight\": {\"tp\": \"" +
            placement + "\"}}}";
    if (frozen) names += (i ? ", \"" : "\"") + layer + ".o_proj.weight\"";
  }
  return "{\"param_plan\": {" + plan + "}, \"frozen_sharded_params\": [" + names +
         "], \"signature\": \"" + signature + "\"}";
}

class CliDiffSummary : public ::testing::Test {
 protected:
  CliDiffSummary()
      : old_(tester_.write_file("old.json", meta("S(1)", true, "a"))),
        new_(tester_.write_file("new.json", meta("R", false, "b"))) {}

  CliRun diff(std::vector<std::string> flags) {
    std::vector<std::string> args{"diff", old_, new_};
    args.insert(args.end(), flags.begin(), flags.end());
    return tester_.run(args);
  }

  CliTester tester_;
  std::string old_;
  std::string new_;
};

const std::string kGroups =
    "- /frozen_sharded_params: \"model.layers.{0..2}.self_attn.o_proj.weight\"  (3)\n"
    "~ /param_plan/model.layers.{0..2}.self_attn/params/o_proj.weight/tp: S(1) -> R  (3)\n"
    "~ /signature: \"a\" -> \"b\"\n";
const std::string kStatRows =
    "frozen_sharded_params  3  +0  -3  ~0\n"
    "param_plan             3  +0  -0  ~3\n"
    "signature              1  +0  -0  ~1\n";
const std::string kTotal = "7 differences: 0 added, 3 removed, 4 changed";

TEST_F(CliDiffSummary, Group) {
  EXPECT_EQ(diff({"--group"}), (CliRun{1, kGroups, ""}));
  const CliRun json = diff({"--group", "--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(json.out.substr(0, json.out.find('\n') + 1),
            "{\"op\":\"remove\",\"pointer\":\"/frozen_sharded_params\",\"old\":\"model.layers.{0.."
            "2}.self_attn.o_proj.weight\",\"members\":[[0],[1],[2]],\"count\":3}\n");
}

TEST_F(CliDiffSummary, Stat) {
  EXPECT_EQ(diff({"--stat"}), (CliRun{1, kStatRows + kTotal + "\n", ""}));
  EXPECT_EQ(diff({"--stat", "--json"}),
            (CliRun{1,
                    "{\"differences\":7,\"added\":0,\"removed\":3,\"changed\":4,\"by_key\":{"
                    "\"frozen_sharded_params\":{\"added\":0,\"removed\":3,\"changed\":0},"
                    "\"param_plan\":{\"added\":0,\"removed\":0,\"changed\":3},"
                    "\"signature\":{\"added\":0,\"removed\":0,\"changed\":1}}}\n",
                    ""}));
  // Equal metas: no text, one JSON object, exit 0.
  EXPECT_EQ(tester_.run({"diff", old_, old_, "--stat"}), (CliRun{0, "", ""}));
  EXPECT_EQ(
      tester_.run({"diff", old_, old_, "--stat", "--json"}),
      (CliRun{0, "{\"differences\":0,\"added\":0,\"removed\":0,\"changed\":0,\"by_key\":{}}\n",
              ""}));
}

TEST_F(CliDiffSummary, StatWithGroupPrintsTheGroupsThenTheSummary) {
  EXPECT_EQ(diff({"--stat", "--group"}),
            (CliRun{1,
                    kGroups + "\n" + kStatRows +
                        "7 differences in 3 groups: 0 added, 3 removed, 4 changed\n",
                    ""}));
  const CliRun json = diff({"--group", "--stat", "--json"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_EQ(json.out.substr(json.out.rfind('{', json.out.find("\"differences\""))),
            "{\"differences\":7,\"added\":0,\"removed\":3,\"changed\":4,\"groups\":3,\"by_key\":{"
            "\"frozen_sharded_params\":{\"added\":0,\"removed\":3,\"changed\":0},"
            "\"param_plan\":{\"added\":0,\"removed\":0,\"changed\":3},"
            "\"signature\":{\"added\":0,\"removed\":0,\"changed\":1}}}\n");
  EXPECT_EQ(std::count(json.out.begin(), json.out.end(), '\n'), 4);
}

TEST_F(CliDiffSummary, QuietPrintsNothingWhateverTheFlags) {
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"-q", "--stat"},
                                             {"-q", "--group"},
                                             {"--stat", "--group", "-q"},
                                             {"-q", "--stat", "--group", "--json"},
                                             {"--quiet", "--stat", "--message-format", "github"}}) {
    EXPECT_EQ(diff(flags), (CliRun{1, "", ""})) << ::testing::PrintToString(flags);
  }
  EXPECT_EQ(tester_.run({"-q", "diff", old_, old_, "--stat", "--json"}), (CliRun{0, "", ""}));
}

TEST_F(CliDiffSummary, GithubPutsTheSummaryOnTheNewMeta) {
  const std::string notice = "::notice file=" + new_ + "::" + kTotal +
                             "%0Afrozen_sharded_params  3  +0  -3  ~0"
                             "%0Aparam_plan             3  +0  -0  ~3"
                             "%0Asignature              1  +0  -0  ~1\n";
  const CliRun plain = diff({});
  EXPECT_EQ(plain.err, "");
  // stdout as without it, whatever the output form.
  EXPECT_EQ(diff({"--message-format", "github"}), (CliRun{1, plain.out, notice}));
  EXPECT_EQ(diff({"--message-format=github", "--group"}),
            (CliRun{1, kGroups,
                    "::notice file=" + new_ +
                        "::7 differences in 3 groups: 0 added, 3 removed, 4 changed"
                        "%0Afrozen_sharded_params  3  +0  -3  ~0"
                        "%0Aparam_plan             3  +0  -0  ~3"
                        "%0Asignature              1  +0  -0  ~1\n"}));
  // No differences, no notice; the other formats add nothing.
  EXPECT_EQ(tester_.run({"--message-format", "github", "diff", old_, old_}), (CliRun{0, "", ""}));
  EXPECT_EQ(diff({"--message-format", "json"}), (CliRun{1, plain.out, ""}));
  tester_.set_env("HPFREEZE_MESSAGE_FORMAT", "github");
  EXPECT_EQ(diff({}).err, notice);
  // NEW on stdin: no file to annotate, its name starts the message.
  tester_.set_stdin(meta("R", false, "b"));
  const CliRun piped = tester_.run({"diff", old_, "-"});
  EXPECT_EQ(piped.err.substr(0, piped.err.find("%0A")), "::notice::<stdin>: " + kTotal);
}

}  // namespace
}  // namespace hpfreeze::cli::testing
