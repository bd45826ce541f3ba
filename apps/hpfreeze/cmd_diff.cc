// `hpfreeze diff A B [--json] [--group] [--stat] [--ignore FIELD[,FIELD...]]...`
#include <memory>

#include "cli.h"
#include "hpfreeze/commands/diff_command.h"

namespace hpfreeze::cli {

Runner declare_diff(CLI::App& app) {
  auto request = std::make_shared<DiffRequest>();
  app.add_option("OLD", request->old_path, "The old codegen_meta.json; '-' for stdin")
      ->type_name("")
      ->required();
  app.add_option("NEW", request->new_path, "The new codegen_meta.json; '-' for stdin")
      ->type_name("")
      ->required();
  app.add_flag("--json", request->json,
               "Print one JSON object per difference: {\"op\", \"pointer\", \"old\", \"new\"}");
  app.add_flag("--group", request->group,
               "Fold the differences that are the same change at different numbers "
               "(model.layers.N, experts.N) into one line each: the numbers as range sets "
               "({0..60}) and the count; with --json {\"op\", \"pointer\", \"old\", "
               "\"new\", \"members\", \"count\"}");
  app.add_flag("--stat", request->stat,
               "Print a summary instead of the differences: counts per top-level key and a "
               "last line 'N differences: A added, R removed, C changed' (with --group after "
               "the groups); with --json one object");
  app.add_option("--ignore", request->options.ignored_fields,
                 "Leave out a top-level key or a JSON Pointer as diff prints it "
                 "(/param_plan/B/params/W), and all under it; comma lists, repeatable; "
                 "naming what neither file has is an error")
      ->type_name("FIELD")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.footer(help_footer("no differences",
                         "the metas differ (with -q, nothing is printed, whatever --stat and "
                         "--group say)",
                         "hpfreeze diff old/codegen_meta.json new/codegen_meta.json",
                         "usage error, or an input could not be read or is not a valid meta, "
                         "or the output could not be written"));
  return [request]() -> Outcome {
    // -q/--quiet (either side of the command word): the exit status alone tells.
    request->quiet = quiet_count() > 0;
    // A pull request shows the summary as a ::notice on the new meta.
    request->summary_note = message_format() == MessageFormat::kGithub;
    // Exit 1 means "different", so every failure to compare is trouble (2).
    return finish(run_diff(*request));
  };
}

}  // namespace hpfreeze::cli
