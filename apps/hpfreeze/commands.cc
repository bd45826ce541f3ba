// The command table: every subcommand of hpfreeze, in the order --help lists them.
#include <array>
#include <string>
#include <utility>

#include "cli.h"

namespace hpfreeze::cli {

namespace {

constexpr std::array kCommands{
    Command{"freeze", "Freeze a plan dump and a model tree into codegen_meta.json",
            &declare_freeze},
    Command{"parse", "Parse placement strings and print their canonical form", &declare_parse},
    Command{"expand", "Print the sorted FQNs of a plan dump's sharded parameters, one per line",
            &declare_expand},
    Command{"check", "Check a codegen_meta.json offline, optionally against a model tree",
            &declare_check},
    Command{"diff", "Show the semantic difference of two codegen_meta.json files", &declare_diff,
            "No differences printed, the exit status only (as git diff --quiet), and errors "
            "only: -qq no diagnostics either"},
    Command{"thaw", "Turn a codegen_meta.json back into a plan dump (the inverse of freeze)",
            &declare_thaw},
    Command{"report", "Report per-rank parameter memory of a frozen plan and check it divides",
            &declare_report},
};

}  // namespace

std::span<const Command> commands() { return kCommands; }

int exit_status(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return 0;
    case Outcome::kRejected:
      return 1;
    case Outcome::kTrouble:
      return 2;
  }
  return 2;
}

std::string help_footer(std::string_view ok, std::string_view rejected, std::string_view example,
                        std::string_view trouble) {
  // "Exit status:" and "Examples:" are the headings that docs/man/manpages.cmake turns into
  // the EXIT STATUS and EXAMPLES sections of the man pages.
  std::string text = "Exit status:\n";
  for (const auto& [code, meaning] : {std::pair{'0', ok}, {'1', rejected}, {'2', trouble}}) {
    text += "  ";
    text += code;
    text += "  ";
    text += meaning;
    text += '\n';
  }
  text += "\nExamples:\n  ";
  text += example;
  text += '\n';
  return text;
}

}  // namespace hpfreeze::cli
