// run_diff: both metas loaded (inputs/inputs.h), with --model the model and what each
// meta's report counts on it (diff_memory.h), then diff_metas' differences streamed as text
// or JSON Lines, or folded (--group) and counted (--stat) and rendered after the walk, then
// the memory lines (or, with quiet, only whether there are differences).
#include "hpfreeze/commands/diff_command.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands/diff_memory.h"
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

  // The memory lines last, after an empty line when something precedes them.
  void memory(const MemoryChange& change) {
    if (request_.json) {
      append_memory_change_json(out_, change);
      return;
    }
    if (!out_.empty()) out_ += '\n';
    append_memory_change_text(out_, change);
  }

 private:
  const DiffRequest& request_;
  std::string& out_;
  DiffStat stat_;
  DiffGrouper grouper_;
};

void append_lines(std::vector<std::string>& lines, const std::string& text) {
  for (std::size_t pos = 0, end; (end = text.find('\n', pos)) != text.npos; pos = end + 1) {
    lines.push_back(text.substr(pos, end - pos));
  }
}

// The note on NEW: the total line, the lines per key under it, then the memory lines.
Diagnostic summary_note(const std::string& new_name, const DiffStat& stat,
                        const std::optional<MemoryChange>& memory) {
  Diagnostic note = make_note(new_name, {}, diff_stat_total(stat));
  std::string text;
  append_diff_stat_text(text, stat);
  append_lines(note.detail, text);
  note.detail.pop_back();  // the total line, which is the message
  if (memory) {
    text.clear();
    append_memory_change_text(text, *memory);
    append_lines(note.detail, text);
  }
  return note;
}

}  // namespace

CommandResult run_diff(const DiffRequest& request) {
  CommandResult result;
  result.errors_are_trouble = true;
  const DiffMemory& memory = request.memory;
  const bool with_model = memory.model_path.has_value();
  if (std::optional<Diagnostic> twice = stdin_twice_error(
          {&request.old_path, &request.new_path, with_model ? &*memory.model_path : nullptr},
          with_model ? "OLD, NEW and --model" : "the two metas")) {
    result.diagnostics.push_back(std::move(*twice));
    return result;
  }
  // A malformed --ignore is a usage error, found before any file is read.
  Expected<std::vector<IgnoredPointer>> ignored = ignored_pointers(request.options);
  if (!ignored) {
    result.diagnostics = std::move(ignored.errors());
    return result;
  }
  // Every file is loaded before an error is returned, so one run names them all; diff
  // compares the documents' values, and only a report needs the decoded params.
  std::vector<InputSpec> inputs{{"OLD", request.old_path, InputKind::kMeta},
                                {"NEW", request.new_path, InputKind::kMeta}};
  if (with_model) inputs.emplace_back("--model", *memory.model_path, InputKind::kModel);
  LoadOptions load;
  load.command = "diff";
  load.meta = with_model ? MetaReading::kValuesAndParams : MetaReading::kValuesOnly;
  load.parameters_needed_by = "diff --model";
  load.files = request.files;
  LoadedInputs loaded = load_inputs(inputs, load);
  result.diagnostics = std::move(loaded.errors);
  if (!result.diagnostics.empty()) return result;
  const FrozenMeta& old_meta = loaded.inputs[0].meta();
  const FrozenMeta& new_meta = loaded.inputs[1].meta();
  result.diagnostics = check_ignored(*ignored, old_meta, new_meta);
  if (!result.diagnostics.empty()) return result;
  // What each plan costs, before any output: a usage error leaves none.
  std::optional<MemoryChange> change;
  Diagnostics warnings;
  if (with_model) {
    Expected<MemoryChange> counted =
        count_memory(old_meta, new_meta, loaded.inputs[2].model(), memory, warnings);
    if (!counted) {
      result.diagnostics = std::move(counted.errors());
      return result;
    }
    change = std::move(*counted);
  }
  result.diagnostics = std::move(warnings);
  DiffOutput output(request, result.output);
  diff_metas(old_meta, new_meta, request.options, [&](const MetaDifference& d) {
    result.negative = true;
    if (!request.quiet) output.add(d);
  });
  if (request.quiet) return result;
  const DiffStat& stat = output.finish();
  if (change) output.memory(*change);
  if (request.summary_note && result.negative)
    result.diagnostics.push_back(summary_note(loaded.inputs[1].stage.name, stat, change));
  return result;
}

}  // namespace hpfreeze
