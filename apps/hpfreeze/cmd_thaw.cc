// `hpfreeze thaw META [-o PLAN] [--model-out MODEL]`
#include <memory>

#include "cli.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/thaw_command.h"

namespace hpfreeze::cli {

Runner declare_thaw(CLI::App& app) {
  auto request = std::make_shared<ThawRequest>();
  auto model = std::make_shared<std::string>();
  app.add_option("META", request->meta_path, "The codegen_meta.json to thaw; '-' for stdin")
      ->type_name("")
      ->required();
  app.add_option("-o,--output", request->plan_path,
                 "Plan dump (hpfreeze.plan/v1), written atomically; '-' for stdout (default)")
      ->type_name(kFile);
  app.add_option("--model-out", *model,
                 "Also write a model tree dump (hpfreeze.model/v1) built from boundary_classes; "
                 "'-' for stdout")
      ->type_name(kFile);
  app.footer(help_footer("the plan dump (and model tree) were written",
                         "the meta was read and rejected: it is not a meta freeze can write",
                         "hpfreeze thaw codegen_meta.json -o plan.json --model-out model.json"));
  return [request, model, &app]() -> Outcome {
    if (app.count("--model-out") > 0) request->model_path = *model;
    request->concurrency = Concurrency::of_this_process();
    return finish(run_thaw(*request));
  };
}

}  // namespace hpfreeze::cli
