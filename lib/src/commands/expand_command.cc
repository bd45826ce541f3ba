#include "hpfreeze/commands/expand_command.h"

#include <utility>

#include "freeze/freeze.h"
#include "inputs/inputs.h"
#include "json/output_name.h"

namespace hpfreeze {

namespace {

Expected<std::string> expand_lines(const std::string& plan_path, Concurrency concurrency,
                                   FileSystem* files) {
  const InputSpec plan{"PLAN", plan_path, InputKind::kPlanDump};
  LoadOptions load;
  load.command = "expand";
  load.concurrency = concurrency;
  load.files = files;
  LoadedInputs loaded = load_inputs(std::span(&plan, 1), load);
  if (!loaded) return std::move(loaded.errors);
  const std::string& file = loaded.inputs[0].plan().file;
  std::string out;
  for (const std::string& fqn : expand_sharded_params(loaded.inputs[0].plan())) {
    // One name per line: a name that could break the line or start a workflow command
    // (json/output_name.h) is refused, shown as diagnostics show it.
    if (const NameHazard hazard = name_hazard(fqn); hazard != NameHazard::kNone) {
      return make_error(file, "",
                        "sharded parameter name " + quote_for_diagnostic(fqn) + " " +
                            std::string(describe(hazard)) + ": expand prints one name per line");
    }
    out += fqn;
    out += '\n';
  }
  return out;
}

}  // namespace

CommandResult run_expand(const std::string& plan_path, Concurrency concurrency, FileSystem* files) {
  CommandResult result;
  Expected<std::string> lines = expand_lines(plan_path, concurrency, files);
  if (lines) {
    result.output = std::move(*lines);
  } else {
    result.diagnostics = std::move(lines.errors());
  }
  return result;
}

}  // namespace hpfreeze
