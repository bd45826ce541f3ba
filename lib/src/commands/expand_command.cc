#include "hpfreeze/expand_command.h"

#include <utility>

#include "hpfreeze/dump_kind.h"
#include "hpfreeze/freeze.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"
#include "io/inputs.h"
#include "json/output_name.h"

namespace hpfreeze {

namespace {

Expected<std::string> expand_lines(const std::string& plan_path, Concurrency concurrency) {
  // One input: nothing to hand on (inputs.h).
  ParseScratch scratch;
  scratch.close();
  LoadStage stage;
  Expected<JsonDocument> document = load_document(plan_path, stage, scratch, true);
  if (!document) return std::move(document.errors());
  Expected<PlanDump> plan = decode_plan_dump(*document, concurrency);
  if (!plan) {
    // A meta or a model tree dump is named as freeze names it, not by its first odd key.
    const DumpKind kind = guess_dump_kind(*document);
    if (auto wrong = wrong_kind_error(*document, kind, DumpKind::kPlan, "expand")) return *wrong;
    return std::move(plan.errors());
  }
  document->release_tree();  // the decoded plan views only the document's strings
  std::string out;
  for (const std::string& fqn : expand_sharded_params(*plan)) {
    // One name per line: a name that could break the line or start a workflow command
    // (json/output_name.h) is refused, shown as diagnostics show it.
    if (const NameHazard hazard = name_hazard(fqn); hazard != NameHazard::kNone) {
      return make_error(document->name(), "",
                        "sharded parameter name " + quote_for_diagnostic(fqn) + " " +
                            std::string(describe(hazard)) + ": expand prints one name per line");
    }
    out += fqn;
    out += '\n';
  }
  return out;
}

}  // namespace

CommandResult run_expand(const std::string& plan_path, Concurrency concurrency) {
  CommandResult result;
  const InputPath input{"PLAN", plan_path, {}};
  result.diagnostics = check_stdout_apart(std::span(&input, 1));
  if (!result.diagnostics.empty()) return result;
  Expected<std::string> lines = expand_lines(plan_path, concurrency);
  if (lines) {
    result.output = std::move(*lines);
  } else {
    result.diagnostics = std::move(lines.errors());
  }
  return result;
}

}  // namespace hpfreeze
