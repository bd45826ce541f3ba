// `hpfreeze diff OLD NEW [--json] [--group] [--stat] [--ignore FIELD[,FIELD...]]...
//  [--model MODEL [--mesh AXIS=N,...] [report's accounting flags] [--allow-uncovered]]`
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "hpfreeze/commands/diff_command.h"
#include "planner_flags.h"

namespace hpfreeze::cli {

Runner declare_diff(CLI::App& app) {
  struct Flags {
    DiffRequest request;
    PlannerFlags planner;
    std::string model;
    CLI::Option* allow_uncovered = nullptr;
  };
  auto flags = std::make_shared<Flags>();
  DiffRequest* request = &flags->request;
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
  // The memory lines: report's planner on both metas, with report's flags for one mesh.
  app.add_option("--model", flags->model,
                 "End with what each meta's report counts on one mesh with these parameter "
                 "shapes, old -> new: the worst and the best rank (and the devices when they "
                 "differ); " +
                     std::string(kModelFormats))
      ->type_name(kFile);
  flags->planner.declare_mesh(app);
  flags->planner.declare_accounting(app, request->memory.plan);
  flags->allow_uncovered =
      app.add_flag("--allow-uncovered", request->memory.plan.allow_uncovered,
                   "A trainable model parameter no plan entry covers is no error of a report "
                   "behind the memory lines (as report --allow-uncovered)");
  app.footer(help_footer("no differences",
                         "the metas differ (with -q, nothing is printed, whatever --stat and "
                         "--group say)",
                         "hpfreeze diff old/codegen_meta.json new/codegen_meta.json",
                         "usage error (with --model, an axis neither meta knows, among "
                         "others), or an input could not be read or is not a valid meta or "
                         "model, or the output could not be written"));
  return [flags, request, &app]() -> Outcome {
    // The planner's flags say how the memory lines count: without --model there are none.
    if (app.count("--model") > 0) request->memory.model_path = flags->model;
    if (!request->memory.model_path) {
      std::vector<const CLI::Option*> planner(flags->planner.options().begin(),
                                              flags->planner.options().end());
      planner.push_back(flags->allow_uncovered);
      for (const CLI::Option* option : planner) {
        if (option->count() == 0) continue;
        report_usage_error(option->get_name() +
                           " needs --model: it is for the memory lines, which diff prints with "
                           "--model only (see 'hpfreeze diff --help')");
        return kExitTrouble;
      }
    }
    flags->planner.apply(app, request->memory.mesh, request->memory.plan);
    // -q/--quiet (either side of the command word): the exit status alone tells.
    request->quiet = quiet_count() > 0;
    // A pull request shows the summary as a ::notice on the new meta.
    request->summary_note = message_format() == MessageFormat::kGithub;
    // Exit 1 means "different", so every failure to compare is trouble (2).
    return finish(run_diff(*request));
  };
}

}  // namespace hpfreeze::cli
