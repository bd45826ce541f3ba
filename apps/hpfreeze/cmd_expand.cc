// `hpfreeze expand PLAN`
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/expand_command.h"
#include "hpfreeze/io.h"

namespace hpfreeze::cli {

namespace {

Runner register_expand(CLI::App& app) {
  auto plan_path = std::make_shared<std::string>();
  app.add_option("plan", *plan_path, "Plan dump (hpfreeze.plan/v1); '-' for stdin")->required();
  return [plan_path]() -> int {
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

const bool registered [[maybe_unused]] = add_command(
    {"expand", "Print the sorted FQNs of a plan dump's sharded parameters, one per line", 30,
     &register_expand});

}  // namespace
}  // namespace hpfreeze::cli
