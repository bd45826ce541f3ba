// `hpfreeze check PATH... [--model MODEL] [--bundle] [--allow-uncovered] [--json]
//  [--silence CODE[,CODE...]]...`
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/check_command.h"

namespace hpfreeze::cli {

Runner declare_check(CLI::App& app) {
  struct Flags {
    std::vector<std::string> paths;
    std::string model;
    bool json = false;
    bool allow_uncovered = false;
    bool bundle = false;
    std::vector<std::string> silence;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("PATH", flags->paths,
                 "codegen_meta.json to check, or a directory to check every codegen_meta.json "
                 "below (depth first, in byte order; .git, venv, .venv, __pycache__ and "
                 ".codegen_tmp_*/.codegen_old_* skipped); '-' for stdin (alone)")
      ->type_name("")
      ->required();
  app.add_option("--model", flags->model,
                 "The model to check the meta against: " + std::string(kModelFormats))
      ->type_name(kFile);
  app.add_flag("--allow-uncovered", flags->allow_uncovered,
               "A trainable model parameter no plan entry covers is a warning, not an error "
               "(as report --allow-uncovered)");
  app.add_flag("--bundle", flags->bundle,
               "Also verify each meta's generated bundle: every file its outputs record, in "
               "the meta's directory, must still have its recorded sha256 (META must be a path)");
  app.add_flag("--json", flags->json,
               "Print findings as JSON Lines on stdout instead of diagnostics on stderr");
  add_silence_option(app, flags->silence);
  app.footer(help_footer("no error finding (warnings and notes, if any, are printed)",
                         "at least one error finding",
                         "hpfreeze check codegen_meta.json --model model.json"));
  return [flags, &app]() -> Outcome {
    CheckRequest request;
    request.paths = flags->paths;
    if (app.count("--model") > 0) request.model_path = flags->model;
    request.allow_uncovered = flags->allow_uncovered;
    request.concurrency = Concurrency::of_this_process();
    request.json = flags->json;
    request.bundle = flags->bundle;
    request.silenced = silenced_codes(flags->silence);
    CheckTally tally;
    CommandResult result = run_check(request, &tally);
    const Outcome outcome = result.outcome();
    if (finish(result) == kExitTrouble) return kExitTrouble;
    // -v: one line counting the findings of one meta (docs/cli.md, "check"); a run of
    // several has its closing note instead.
    if (!tally.summarized) log_debug("check: {}", tally.counts.text());
    return outcome;
  };
}

}  // namespace hpfreeze::cli
