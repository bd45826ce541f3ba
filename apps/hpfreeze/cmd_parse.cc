// `hpfreeze parse [--json] [--check] [PLACEMENT...]`
#include <string>
#include <vector>

#include "cli.h"
#include "hpfreeze/commands/parse_command.h"
#include "hpfreeze/io/standard_streams.h"

namespace hpfreeze::cli {

Runner declare_parse(CLI::App& app) {
  struct Flags {
    std::vector<std::string> placements;
    ParseCommandOptions options;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("PLACEMENT", flags->placements,
                 "Placement strings (S(0), SS(0,2), R, P(sum)); stdin lines when none are given")
      ->type_name("");
  app.add_flag("--json", flags->options.json,
               "Print one JSON object per line: the plan-dump form plus \"canonical\"");
  app.add_flag("--check", flags->options.check,
               "Also fail on valid input that is not already in canonical form");
  app.footer(help_footer("every placement is valid (and, with --check, canonical)",
                         "a placement is invalid, or with --check not in canonical form",
                         "hpfreeze parse 'SS( 0 , 2 )' 'S(+3)' 'P(sum)'"));
  return [flags]() -> Outcome {
    bool rejected = false;
    // Each batch is printed as soon as it is parsed: stdin may never end.
    auto parse_and_print = [&](const std::vector<ParseInput>& inputs) {
      const Outcome outcome = finish(run_parse(inputs, flags->options));
      rejected = rejected || outcome == kExitRejected;
      return outcome != kExitTrouble;
    };
    if (!flags->placements.empty()) {
      std::vector<ParseInput> inputs;
      for (std::size_t i = 0; i < flags->placements.size(); ++i) {
        inputs.push_back(ParseInput{flags->placements[i], "argument " + std::to_string(i + 1), 0});
      }
      if (!parse_and_print(inputs)) return kExitTrouble;
      return rejected ? kExitRejected : kExitOk;
    }
    const InputPath stdin_input{"stdin", "-", {}};
    if (Diagnostics clash = check_stdout_apart(std::span(&stdin_input, 1)); !clash.empty()) {
      report(clash);
      return kExitTrouble;
    }
    LineSplitter lines("<stdin>");
    for (;;) {
      Expected<std::string> chunk = read_stdin_chunk(64 * 1024);
      if (!chunk) {
        report(chunk.errors());
        return kExitTrouble;
      }
      if (chunk->empty()) break;
      if (!parse_and_print(lines.feed(*chunk))) return kExitTrouble;
    }
    if (!parse_and_print(lines.finish())) return kExitTrouble;
    return rejected ? kExitRejected : kExitOk;
  };
}

}  // namespace hpfreeze::cli
