// `hpfreeze freeze --plan PLAN --model MODEL [--base META] [-o OUT] ...`
#include <memory>

#include "cli.h"
#include "hpfreeze/freeze_command.h"

namespace hpfreeze::cli {

Runner declare_freeze(CLI::App& app) {
  auto request = std::make_shared<FreezeRequest>();
  auto base = std::make_shared<std::string>();
  auto no_verify = std::make_shared<bool>(false);
  app.add_option("--plan", request->plan_path, "Plan dump (hpfreeze.plan/v1); '-' for stdin")
      ->type_name(kFile)
      ->required();
  app.add_option("--model", request->model_path,
                 "Model tree dump (hpfreeze.model/v1); '-' for stdin")
      ->type_name(kFile)
      ->required();
  app.add_option("--base", *base,
                 "Base meta whose identity fields are kept (default: the plan's 'meta'); '-' for "
                 "stdin")
      ->type_name(kFile);
  app.add_option("-o,--output", request->output_path,
                 "Output file, written atomically; '-' for stdout (default)")
      ->type_name(kFile);
  app.add_flag("--if-changed", request->if_changed,
               "Leave OUT (and its mtime) untouched when it already holds the same bytes");
  auto depfile = std::make_shared<std::string>();
  app.add_option("--depfile", *depfile,
                 "Also write a Make-syntax depfile 'OUT: PLAN MODEL [BASE]' for make and ninja "
                 "(needs -o FILE and no '-' input)")
      ->type_name(kFile);
  app.add_flag("--no-verify", *no_verify, "Skip the checks against the model's parameters");
  app.add_flag("--strict", request->options.strict, "Treat warnings as errors");
  app.add_flag("--allow-empty", request->options.allow_empty, "Accept a plan with no modules");
  app.footer(
      help_footer("the meta was written (warnings, if any, on stderr)",
                  "an input was read and rejected: invalid content, a check against the "
                  "model failed, a warning under --strict",
                  "hpfreeze freeze --plan plan.json --model model.json -o codegen_meta.json"));
  return [request, base, depfile, no_verify, &app]() -> Outcome {
    if (app.count("--base") > 0) request->base_path = *base;
    if (app.count("--depfile") > 0) request->depfile_path = *depfile;
    request->options.verify = !*no_verify;
    const int stdin_users = (request->plan_path == "-") + (request->model_path == "-") +
                            (request->base_path && *request->base_path == "-");
    if (stdin_users > 1) {
      report(make_error({}, {}, "at most one of --plan, --model and --base may be '-' (stdin)"));
      return kExitTrouble;
    }
    const CommandResult result = run_freeze(*request);
    report(result.diagnostics);
    if (result.io_failed()) return kExitTrouble;
    return result.failed() ? kExitRejected : kExitOk;
  };
}

}  // namespace hpfreeze::cli
