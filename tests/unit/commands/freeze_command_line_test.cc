// The command freeze --check names under its error (freeze_command_line): what rewrites OUT,
// as one line a POSIX shell reads back as the same words. No file is read.
#include <gtest/gtest.h>

#include <string>

#include "commands/freeze_steps.h"
#include "hpfreeze/commands/freeze_command.h"

namespace hpfreeze {
namespace {

FreezeRequest request(std::string plan, std::string model, std::string out) {
  FreezeRequest r;
  r.plan_path = std::move(plan);
  r.model_path = std::move(model);
  r.output_path = std::move(out);
  r.check = true;
  return r;
}

TEST(FreezeCommandLine, TheInputsAndOutAsGiven) {
  FreezeRequest r = request("plan.json", "models/m-1.json", "gen/codegen_meta.json");
  EXPECT_EQ(freeze_command_line(r),
            "hpfreeze freeze --plan plan.json --model models/m-1.json -o gen/codegen_meta.json");
  r.base_path = "gen/codegen_meta.json";
  r.if_changed = true;  // changes no byte of OUT
  EXPECT_EQ(freeze_command_line(r),
            "hpfreeze freeze --plan plan.json --model models/m-1.json --base "
            "gen/codegen_meta.json -o gen/codegen_meta.json");
}

TEST(FreezeCommandLine, TheFlagsThatDecideWhetherItSucceeds) {
  FreezeRequest r = request("-", "model.json", "meta.json");
  r.options.verify = false;
  r.options.strict = true;
  r.options.allow_empty = true;
  EXPECT_EQ(freeze_command_line(r),
            "hpfreeze freeze --plan - --model model.json -o meta.json --no-verify --strict "
            "--allow-empty");
}

TEST(FreezeCommandLine, WordsAShellWouldSplitAreQuoted) {
  EXPECT_EQ(freeze_command_line(request("my plan.json", "it's.json", "")),
            "hpfreeze freeze --plan 'my plan.json' --model 'it'\\''s.json' -o ''");
  EXPECT_EQ(freeze_command_line(request("$HOME/p.json", "*.json", "a;b")),
            "hpfreeze freeze --plan '$HOME/p.json' --model '*.json' -o 'a;b'");
  EXPECT_EQ(freeze_command_line(request("~/p.json", "m\xc3\xa9.json", "o\\.json")),
            "hpfreeze freeze --plan '~/p.json' --model 'm\xc3\xa9.json' -o 'o\\.json'");
  // A control byte cannot be typed inside '...': $'...' with the byte as \xNN.
  EXPECT_EQ(freeze_command_line(request("a\nb.json", "it's\t\\.json", "m.json")),
            "hpfreeze freeze --plan $'a\\x0ab.json' --model $'it\\'s\\x09\\\\.json' -o m.json");
}

}  // namespace
}  // namespace hpfreeze
