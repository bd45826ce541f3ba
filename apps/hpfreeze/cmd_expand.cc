// `hpfreeze expand PLAN`
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/expand_command.h"
#include "hpfreeze/io.h"

namespace hpfreeze::cli {

Runner declare_expand(CLI::App& app) {
  auto plan_path = std::make_shared<std::string>();
  app.add_option("PLAN", *plan_path, "Plan dump (hpfreeze.plan/v1); '-' for stdin")
      ->type_name("")
      ->required();
  app.footer(help_footer("the names were printed", "the plan dump was read and rejected",
                         "hpfreeze expand plan.json > sharded_params.txt"));
  return [plan_path]() -> Outcome {
    Expected<std::string> lines = render_expand(*plan_path);
    if (!lines) {
      report(lines.errors());
      return exit_code_for(lines.errors());
    }
    if (Expected<WriteOutcome> written = write_stdout(*lines); !written) {
      report(written.errors());
      return kExitTrouble;
    }
    return kExitOk;
  };
}

}  // namespace hpfreeze::cli
