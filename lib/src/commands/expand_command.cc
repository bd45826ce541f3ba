#include "hpfreeze/expand_command.h"

#include <algorithm>
#include <utility>

#include "io/inputs.h"
#include "hpfreeze/dump_kind.h"
#include "hpfreeze/freeze.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

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
    // One name per line: a name holding a byte that diagnostics escape (a control
    // character) could forge lines, so it is refused, shown as diagnostics show it.
    if (std::any_of(fqn.begin(), fqn.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      return make_error(document->name(), "",
                        "sharded parameter name " + quote_for_diagnostic(fqn) +
                            " holds a control character: expand prints one name per line");
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
