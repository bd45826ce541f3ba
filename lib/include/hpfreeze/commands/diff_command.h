#pragma once
// `hpfreeze diff`: the semantic difference of two codegen_meta.json files (docs/cli.md).

#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/diff/diff_options.h"
#include "hpfreeze/io/file_system.h"
#include "hpfreeze/report/report_options.h"

namespace hpfreeze {

// diff --model: what the plan change costs in memory, by report's pass on each meta with
// the shapes of `model_path`, on `mesh` (nullopt: each meta's own parallel_dims, as report)
// with `plan`'s accounting (docs/cli.md, "--model"). One mesh: `plan.sweeps` must be empty;
// `plan.filter` plays no part. Nothing here is used without `model_path`.
struct DiffMemory {
  std::optional<std::string> model_path;  // "-" for stdin; nullopt: no memory lines
  std::optional<std::vector<AxisSize>> mesh;
  ReportPlanOptions plan;
};

struct DiffRequest {
  std::string old_path;  // "-" for stdin (at most one of the two)
  std::string new_path;
  bool json = false;
  DiffOptions options;
  // No output, the outcome only (diff --quiet, as git diff --quiet); wins over the rest.
  bool quiet = false;
  // The differences folded: one line (object) per group of the same change at different
  // numbers (diff --group).
  bool group = false;
  // A summary instead of the differences, after the groups with `group` (diff --stat).
  bool stat = false;
  // When the metas differ, a note on NEW with --stat's last line (what --message-format
  // github shows as a ::notice on the pull request).
  bool summary_note = false;
  // The files it reads and writes: the real disk when null (the library's tests give an
  // in-memory one).
  FileSystem* files = nullptr;
  // The memory lines (or object) after the rest, and in the note of `summary_note`.
  DiffMemory memory = {};
};

// Reads, decodes (decode_meta) and compares both files. The output holds one line per
// difference (text or, with `json`, JSON Lines), or per group, and/or the summary, then
// with a memory.model_path the memory lines (after an empty line when something precedes
// them) or object, also when the metas are equal; differences make the result negative.
// Errors: unreadable files (kIo), invalid JSON and an invalid meta, model or another kind
// of file (kRejected), an --ignore item that is malformed or matches nothing in either file
// and the usage errors of report's pass (an axis neither meta knows; kIo). Exit status 1
// means "different", so every error is trouble (errors_are_trouble): the front end exits 2
// on any of them. A warning names each meta whose report has error findings.
CommandResult run_diff(const DiffRequest& request);

}  // namespace hpfreeze
