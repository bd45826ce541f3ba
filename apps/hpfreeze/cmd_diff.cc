// `hpfreeze diff A B [--json] [--ignore FIELD[,FIELD...]]...`
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
  app.add_option("--ignore", request->options.ignored_fields,
                 "Leave out a top-level key or a JSON Pointer as diff prints it "
                 "(/param_plan/B/params/W), and all under it; comma lists, repeatable; "
                 "naming what neither file has is an error")
      ->type_name("FIELD")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.footer(help_footer("no differences", "the metas differ (with -q, nothing is printed)",
                         "hpfreeze diff old/codegen_meta.json new/codegen_meta.json",
                         "usage error, or an input could not be read or is not a valid meta, "
                         "or the output could not be written"));
  return [request]() -> Outcome {
    // -q/--quiet (either side of the command word): the exit status alone tells.
    request->quiet = quiet_count() > 0;
    // Exit 1 means "different", so every failure to compare is trouble (2).
    return finish(run_diff(*request));
  };
}

}  // namespace hpfreeze::cli
