// run_diff: both metas loaded (inputs/inputs.h), then diff_metas' differences streamed as
// text or JSON Lines, or folded (--group) and counted (--stat) and rendered after the walk
// (or, with quiet, only whether there are any).
#include "hpfreeze/commands/diff_command.h"

#include <string>
#include <utility>
#include <vector>

#include "diff/diff.h"
#include "diff/diff_group.h"
#include "diff/diff_stat.h"
#include "inputs/inputs.h"

namespace hpfreeze {
namespace {

// The differences as the request shows them.
class DiffOutput {
 public:
  DiffOutput(const DiffRequest& request, std::string& out) : request_(request), out_(out) {}

  void add(const MetaDifference& d) {
    if (request_.stat || request_.summary_note) stat_.add(d);
    if (request_.group) {
      grouper_.add(d);
    } else if (!request_.stat) {
      request_.json ? append_diff_json_line(out_, d) : append_diff_text(out_, d);
    }
  }

  // The groups, then the summary; returns the summary.
  const DiffStat& finish() {
    if (request_.group) {
      const std::vector<DiffGroup> groups = std::move(grouper_).finish();
      stat_.groups = groups.size();
      for (const DiffGroup& g : groups) {
        request_.json ? append_group_json_line(out_, g) : append_group_text(out_, g);
      }
      if (request_.stat && !request_.json && !groups.empty()) out_ += '\n';
    }
    if (request_.stat) {
      request_.json ? append_diff_stat_json(out_, stat_) : append_diff_stat_text(out_, stat_);
    }
    return stat_;
  }

 private:
  const DiffRequest& request_;
  std::string& out_;
  DiffStat stat_;
  DiffGrouper grouper_;
};

// The note on NEW: the total line, the lines per key under it.
Diagnostic summary_note(const std::string& new_name, const DiffStat& stat) {
  Diagnostic note = make_note(new_name, {}, diff_stat_total(stat));
  std::string text;
  append_diff_stat_text(text, stat);
  for (std::size_t pos = 0, end; (end = text.find('\n', pos)) != text.npos; pos = end + 1) {
    note.detail.push_back(text.substr(pos, end - pos));
  }
  note.detail.pop_back();  // the total line, which is the message
  return note;
}

}  // namespace

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
  DiffOutput output(request, result.output);
  diff_metas(old_meta, new_meta, request.options, [&](const MetaDifference& d) {
    result.negative = true;
    if (!request.quiet) output.add(d);
  });
  if (request.quiet) return result;
  const DiffStat& stat = output.finish();
  if (request.summary_note && result.negative)
    result.diagnostics.push_back(summary_note(loaded.inputs[1].stage.name, stat));
  return result;
}

}  // namespace hpfreeze
