// diff --model through the front end, run in-process: report's planner flags, which diff
// declares with report's own code (apps/hpfreeze/planner_flags.cc) and takes only with
// --model, -q, and the memory lines in the ::notice of --message-format github (docs/cli.md,
// "hpfreeze diff").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_tester.h"

namespace hpfreeze::cli::testing {
namespace {

// b.w (8 x 4 bfloat16) split on tp or whole, beside b.v (6 float32), on tp=2.
std::string meta(const char* placement) {
  return std::string(R"j({"param_plan": {"b": {"params": {"w": {"tp": ")j") + placement +
         R"j("}, "v": {"tp": "R"}}}}, "parallel_dims": {"tp_size": 2}})j";
}

class CliDiffMemory : public ::testing::Test {
 protected:
  CliDiffMemory()
      : old_(tester_.write_file("old.json", meta("S(0)"))),
        new_(tester_.write_file("new.json", meta("R"))),
        model_(tester_.write_file(
            "model.json",
            R"j({"format": "hpfreeze.model/v1", "modules": {"": "M"}, "parameters": {
                 "b.w": {"shape": [8, 4], "dtype": "bfloat16"},
                 "b.v": {"shape": [6], "dtype": "float32"}}})j")) {}

  CliRun diff(std::vector<std::string> flags) {
    std::vector<std::string> args{"diff", old_, new_};
    args.insert(args.end(), flags.begin(), flags.end());
    return tester_.run(args);
  }

  CliTester tester_;
  std::string old_;
  std::string new_;
  std::string model_;
};

const std::string kChange = "~ /param_plan/b/params/w/tp: S(0) -> R\n";

TEST_F(CliDiffMemory, TheLinesComeLast) {
  EXPECT_EQ(diff({"--model", model_}),
            (CliRun{1,
                    kChange + "\nworst rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)\n"
                              "best rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)\n",
                    ""}));
  // report's flags, parsed by report's code: --mesh and the accounting (adam: 16 bytes an
  // element of either dtype; old 8 + 6 elements a rank, new 32 + 6).
  EXPECT_EQ(diff({"--model", model_, "--mesh", "tp=4", "--optimizer", "adam", "--zero", "0",
                  "--expert-parallel", "axis", "--allow-uncovered"}),
            (CliRun{1,
                    kChange + "\nworst rank on tp=4: 224 B -> 608 B (+384 B, +171.4 %)\n"
                              "best rank on tp=4: 224 B -> 608 B (+384 B, +171.4 %)\n",
                    ""}));
}

TEST_F(CliDiffMemory, ThePlannersFlagsNeedModel) {
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"--mesh", "tp=2"},
                                             {"--replica-axis", "dq"},
                                             {"--pp-stack", "model.layers"},
                                             {"--pp-layers", "1,2"},
                                             {"--optimizer", "adam"},
                                             {"--zero", "1"},
                                             {"--zero-axis", "dp"},
                                             {"--recipe", "megatron"},
                                             {"--expert-zero-dim", "1"},
                                             {"--expert-parallel", "folded"},
                                             {"--allow-uncovered"}}) {
    EXPECT_EQ(
        diff(flags),
        CliRun::trouble(CliRun::usage_error(
            flags[0] + " needs --model: it is for the memory lines, which diff prints with --model "
                       "only (see 'hpfreeze diff --help')")))
        << flags[0];
  }
  // A value report refuses is refused here with report's message.
  EXPECT_EQ(diff({"--model", model_, "--mesh", "tp=0"}).err,
            CliRun::usage_error("--mesh: 'tp=0': the size must be a decimal integer >= 1 (see "
                                "'hpfreeze diff --help')"));
  // report's flags of several meshes or of a budget are report's alone.
  EXPECT_EQ(diff({"--model", model_, "--sweep", "tp=1,2"}).err,
            CliRun::usage_error("unknown option '--sweep' (see 'hpfreeze diff --help')"));
  EXPECT_EQ(diff({"--model", model_, "--budget", "80GiB"}).exit_code, 2);
  // A ZeRO stage the recipe lacks: report's usage error, before any line is printed.
  EXPECT_EQ(diff({"--model", model_, "--recipe", "megatron", "--zero", "2"}),
            CliRun::trouble(CliRun::usage_error(
                "--zero 2: --recipe megatron has ZeRO stages 0 without its distributed optimizer "
                "and 1 with it (the optimizer state split)")));
}

TEST_F(CliDiffMemory, QuietPrintsNothing) {
  EXPECT_EQ(diff({"-q", "--model", model_, "--stat", "--group"}), (CliRun{1, "", ""}));
  EXPECT_EQ(tester_.run({"-q", "diff", old_, old_, "--model", model_, "--json"}),
            (CliRun{0, "", ""}));
  // Errors still print: an axis neither meta knows, with report's line.
  EXPECT_EQ(diff({"-q", "--model", model_, "--mesh", "tq=2"}),
            CliRun::trouble(CliRun::usage_error(
                "--mesh: unknown axis 'tq'; did you mean 'tp'? (the inputs know cp, dp, pp, tp; "
                "--replica-axis NAME adds an axis that only holds replicas)")));
}

TEST_F(CliDiffMemory, TheNoticeHasTheLines) {
  EXPECT_EQ(diff({"--model", model_, "--stat", "--message-format", "github"}),
            (CliRun{1,
                    "param_plan  1  +0  -0  ~1\n"
                    "1 difference: 0 added, 0 removed, 1 changed\n"
                    "\n"
                    "worst rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)\n"
                    "best rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)\n",
                    "::notice file=" + new_ +
                        "::1 difference: 0 added, 0 removed, 1 changed"
                        "%0Aparam_plan  1  +0  -0  ~1"
                        "%0Aworst rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %25)"
                        "%0Abest rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %25)\n"}));
}

}  // namespace
}  // namespace hpfreeze::cli::testing
