// run_check: META and --model loaded (inputs/inputs.h), the meta checker (check.h) run on
// them, its findings as diagnostics or, with --json, JSON Lines.
#include "hpfreeze/commands/check_command.h"

#include <utility>
#include <vector>

#include "check/check.h"
#include "inputs/inputs.h"
#include "json/diagnostic_json.h"

namespace hpfreeze {

CommandResult run_check(const CheckRequest& request, SeverityCounts* counts) {
  CommandResult result;
  if (std::optional<Diagnostic> twice = stdin_twice_error(
          {&request.meta_path, request.model_path ? &*request.model_path : nullptr},
          "META and --model")) {
    result.diagnostics.push_back(std::move(*twice));
    return result;
  }
  // Every decode error of the meta is a finding: check lists them all in one run.
  std::vector<InputSpec> inputs{{"META", request.meta_path, InputKind::kMetaKeepGoing}};
  if (request.model_path) inputs.push_back({"--model", *request.model_path, InputKind::kModel});
  LoadOptions load;
  load.command = "check";
  load.concurrency = request.concurrency;
  load.schedule = Schedule::kReadAheadBesideFirst;
  LoadedInputs loaded = load_inputs(inputs, load);
  result.diagnostics = std::move(loaded.errors);
  if (result.diagnostics.empty()) {
    LoadedInput& meta = loaded.inputs.front();
    const ModelTree* model = request.model_path ? &loaded.inputs.back().model() : nullptr;
    result.diagnostics = meta.has_value() ? check_meta(meta.meta(), std::move(meta.findings), model,
                                                       request.allow_uncovered)
                                          : std::move(meta.findings);
  }
  if (counts != nullptr) *counts = count_severities(result.diagnostics);
  if (request.json && result.outcome() != Outcome::kTrouble) {
    // The findings go to stdout as JSON Lines instead of to stderr; an error among them
    // still rejects the meta.
    result.output = render_findings_json_lines(result.diagnostics);
    result.negative = result.failed();
    result.diagnostics.clear();
  }
  return result;
}

}  // namespace hpfreeze
