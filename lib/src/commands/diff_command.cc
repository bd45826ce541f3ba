// run_diff: both metas loaded (inputs/inputs.h), then diff_metas' differences streamed as
// text or JSON Lines (or, with quiet, only whether there are any).
#include "hpfreeze/commands/diff_command.h"

#include <utility>
#include <vector>

#include "diff/diff.h"
#include "inputs/inputs.h"

namespace hpfreeze {

CommandResult run_diff(const DiffRequest& request) {
  CommandResult result;
  result.errors_are_trouble = true;
  if (std::optional<Diagnostic> twice =
          stdin_twice_error({&request.old_path, &request.new_path}, "the two metas")) {
    result.diagnostics.push_back(std::move(*twice));
    return result;
  }
  // A malformed --ignore is a usage error, found before any file is read.
  Expected<std::vector<IgnoredPointer>> ignored = ignored_pointers(request.options);
  if (!ignored) {
    result.diagnostics = std::move(ignored.errors());
    return result;
  }
  // Both files are loaded before an error is returned, so one run names both; diff
  // compares the documents' values, never decoded params.
  const InputSpec metas[] = {{"OLD", request.old_path, InputKind::kMeta},
                             {"NEW", request.new_path, InputKind::kMeta}};
  LoadOptions load;
  load.command = "diff";
  load.meta = MetaReading::kValuesOnly;
  load.files = request.files;
  LoadedInputs loaded = load_inputs(metas, load);
  result.diagnostics = std::move(loaded.errors);
  if (!result.diagnostics.empty()) return result;
  const FrozenMeta& old_meta = loaded.inputs[0].meta();
  const FrozenMeta& new_meta = loaded.inputs[1].meta();
  result.diagnostics = check_ignored(*ignored, old_meta, new_meta);
  if (!result.diagnostics.empty()) return result;
  diff_metas(old_meta, new_meta, request.options, [&](const MetaDifference& d) {
    result.negative = true;
    if (request.quiet) return;
    if (request.json) {
      append_diff_json_line(result.output, d);
    } else {
      append_diff_text(result.output, d);
    }
  });
  return result;
}

}  // namespace hpfreeze
