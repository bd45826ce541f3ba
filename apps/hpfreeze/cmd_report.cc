// `hpfreeze report [META] --model MODEL [--mesh AXIS=N,...] [--sweep AXIS=N,...]...
//  [--replica-axis NAME]... [--expert-parallel folded|axis] [--pp-stack PREFIX]
//  [--pp-layers N,N,...] [--optimizer NAME] [--recipe NAME] [--zero 0|1|2|3]
//  [--zero-axis AXIS[,AXIS...]] [--expert-zero-dim D] [--budget SIZE] [--reserve SIZE]
//  [--fits-only] [--allow-uncovered] [--json] [--top K] [--silence CODE[,CODE...]]...`
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/commands/report_command.h"
#include "planner_flags.h"

namespace hpfreeze::cli {

Runner declare_report(CLI::App& app) {
  struct Flags {
    ReportRequest request;
    PlannerFlags planner;
    std::string top;
    std::vector<std::string> sweeps;
    std::string budget;
    std::string reserve;
    std::vector<std::string> silence;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("META", flags->request.meta_path,
                 "codegen_meta.json; '-' for stdin. Without it every parameter is replicated "
                 "(then --mesh or --sweep is required)")
      ->type_name("");
  app.add_option("--model", flags->request.model_path,
                 "Parameter shapes: " + std::string(kModelFormats))
      ->type_name(kFile);
  flags->planner.declare_mesh(app);
  app.add_option("--sweep", flags->sweeps,
                 "Evaluate every size of one axis, e.g. tp=1,2,4,8 (repeatable, one per axis; "
                 "every combination with the --mesh axes)")
      ->type_name("AXIS=N[,N...]")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(parsed_by(parse_sweep_arg));
  flags->planner.declare_accounting(app, flags->request.plan);
  app.add_option("--budget", flags->budget,
                 "Device memory per rank, e.g. 80GiB, 75G or bytes: mark each mesh fits or not")
      ->type_name("SIZE")
      ->check(parsed_by(parse_byte_size));
  app.add_option("--reserve", flags->reserve,
                 "Memory per rank kept from --budget for what fits does not count "
                 "(activations, buffers), e.g. 16GiB: model states may use the rest")
      ->type_name("SIZE")
      ->check(parsed_by(parse_byte_size));
  app.add_flag("--fits-only", flags->request.plan.filter.fits_only,
               "List only the usable meshes: those that divide and, with --budget, fit");
  app.add_flag("--allow-uncovered", flags->request.plan.allow_uncovered,
               "A trainable model parameter no plan entry covers is a warning, not an error "
               "(as check --allow-uncovered)");
  app.add_flag("--json", flags->request.json, "Print one JSON object instead of the table");
  add_silence_option(app, flags->silence);
  app.add_option("--top", flags->top,
                 "List this many params and boundaries (default: 10; with --json, all params)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const bool digits =
                !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
            return digits ? std::string() : "expected a non-negative integer, got '" + text + "'";
          },
          ""))
      ->type_name("N");
  app.footer(help_footer("every finding is a warning or a note, and some mesh is usable",
                         "an error finding (a sharded dim does not divide on the mesh, the "
                         "meta does not fit the model, an uncovered trainable parameter), or "
                         "no mesh divides and fits the --budget (one error line says why)",
                         "hpfreeze report codegen_meta.json --model model.json --mesh dp=8 "
                         "--sweep tp=1,2,4,8 --optimizer adam --zero 3 --budget 80GiB",
                         "usage error (an axis the inputs do not know, among others), or an "
                         "input or output could not be read or written"));
  return [flags, &app]() -> Outcome {
    ReportRequest& request = flags->request;
    MeshFilter& filter = request.plan.filter;
    flags->planner.apply(app, request.mesh, request.plan);
    for (const std::string& text : flags->sweeps) {
      request.plan.sweeps.push_back(*parse_sweep_arg(text));
    }
    if (app.count("--budget") > 0) {
      filter.budget = *parse_byte_size(flags->budget);
      filter.budget_text = flags->budget;
    }
    if (app.count("--reserve") > 0) {
      filter.reserve = *parse_byte_size(flags->reserve);
      request.reserve_given = true;
    }
    if (app.count("--top") > 0) {
      // Digits only (checked above); a count beyond any list is as good as "all".
      std::size_t top = 0;
      for (char c : flags->top) {
        if (__builtin_mul_overflow(top, std::size_t{10}, &top) ||
            __builtin_add_overflow(top, static_cast<std::size_t>(c - '0'), &top)) {
          top = std::numeric_limits<std::size_t>::max();
          break;
        }
      }
      request.top = top;
    }
    request.plan.silenced = silenced_codes(flags->silence);
    request.quiet = quiet_count() > 0;  // -q: no findings line on stdout either
    // The rules between values (a sweep twice, an axis in --mesh and --sweep, two inputs on
    // stdin) are run_report's.
    return finish(run_report(request));
  };
}

}  // namespace hpfreeze::cli
