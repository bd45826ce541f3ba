// `hpfreeze check META [--model MODEL] [--json]`
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/check_command.h"

namespace hpfreeze::cli {

Runner declare_check(CLI::App& app) {
  struct Flags {
    std::string meta;
    std::string model;
    bool json = false;
    bool allow_uncovered = false;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("META", flags->meta, "codegen_meta.json to check; '-' for stdin")
      ->type_name("")
      ->required();
  app.add_option("--model", flags->model,
                 "The model to check the meta against: " + std::string(kModelFormats))
      ->type_name(kFile);
  app.add_flag("--allow-uncovered", flags->allow_uncovered,
               "A trainable model parameter no plan entry covers is a warning, not an error "
               "(as report --allow-uncovered)");
  app.add_flag("--json", flags->json,
               "Print findings as JSON Lines on stdout instead of diagnostics on stderr");
  app.footer(help_footer("no error finding (warnings and notes, if any, are printed)",
                         "at least one error finding",
                         "hpfreeze check codegen_meta.json --model model.json"));
  return [flags, &app]() -> Outcome {
    CheckRequest request;
    request.meta_path = flags->meta;
    if (app.count("--model") > 0) request.model_path = flags->model;
    request.allow_uncovered = flags->allow_uncovered;
    request.concurrency = Concurrency::of_this_process();
    request.json = flags->json;
    SeverityCounts counts;
    CommandResult result = run_check(request, &counts);
    const Outcome outcome = result.outcome();
    if (finish(result) == kExitTrouble) return kExitTrouble;
    // -v: one line counting the findings (docs/cli.md, "check").
    log_debug("check: {}", counts.text());
    return outcome;
  };
}

}  // namespace hpfreeze::cli
