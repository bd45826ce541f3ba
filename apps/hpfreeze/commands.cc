// The command table: every subcommand of hpfreeze, in the order --help lists them.
#include <array>
#include <string>
#include <utility>

#include "cli.h"
#include "hpfreeze/spec/finding_codes.h"

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

void add_silence_option(CLI::App& app, std::vector<std::string>& given) {
  app.add_option("--silence", given,
                 "Leave out the findings of a code (HPF406; docs/cli.md, \"Finding codes\"): "
                 "not shown, not counted in the exit status; comma lists, repeatable")
      ->type_name("CODE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            Expected<std::vector<std::string>> codes = parse_finding_codes(text);
            return codes ? std::string() : codes.errors().front().message;
          },
          ""));
}

std::vector<std::string> silenced_codes(const std::vector<std::string>& given) {
  std::vector<std::string> codes;
  for (const std::string& list : given) {
    const Expected<std::vector<std::string>> parsed = parse_finding_codes(list);
    if (parsed) codes.insert(codes.end(), parsed->begin(), parsed->end());  // else refused
  }
  return codes;
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
