// `hpfreeze expand PLAN`
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/expand_command.h"

namespace hpfreeze::cli {

Runner declare_expand(CLI::App& app) {
  auto plan_path = std::make_shared<std::string>();
  app.add_option("PLAN", *plan_path, "Plan dump (hpfreeze.plan/v1); '-' for stdin")
      ->type_name("")
      ->required();
  app.footer(help_footer("the names were printed", "the plan dump was read and rejected",
                         "hpfreeze expand plan.json > sharded_params.txt"));
  return [plan_path]() -> Outcome {
    return finish(run_expand(*plan_path, Concurrency::of_this_process()));
  };
}

}  // namespace hpfreeze::cli
