// diff --model's figures (diff_memory.h): report's pass on each meta, one after the other.
#include "commands/diff_memory.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capacity/accounting.h"
#include "report/report.h"

namespace hpfreeze {
namespace {

// One meta's figures: its report on the model, kept no longer than its figures are read.
// `usage_errors` gets the report's, when it has any.
MeshMemory meta_memory(const FrozenMeta& meta, const ModelTree& model, const DiffMemory& request,
                       const std::vector<std::string>& own,
                       const std::vector<std::string>& other_axes, Diagnostics& usage_errors,
                       Diagnostics& warnings) {
  ReportPlanOptions plan = request.plan;
  std::set_difference(other_axes.begin(), other_axes.end(), own.begin(), own.end(),
                      std::back_inserter(plan.replica_axes));
  Report report = build_report(meta, model, request.mesh, plan, 0);
  if (!report.usage_errors.empty()) {
    usage_errors = std::move(report.usage_errors);
    return {};
  }
  const std::size_t errors = count_severities(report.findings).errors;
  if (errors > 0) {
    warnings.push_back(make_warning(
        meta.file, "",
        "report finds " + plural(errors, "error") + " in this meta with " + model.file +
            " (hpfreeze report lists them); the memory lines count as it does"));
  }
  // The planner runs unless an input error stopped it: the first one says why.
  const auto first_error =
      std::find_if(report.findings.begin(), report.findings.end(),
                   [](const Diagnostic& d) { return d.severity == Severity::kError; });
  const std::string not_planned =
      "not counted: " +
      (first_error == report.findings.end() ? std::string("no mesh") : first_error->message);
  return mesh_memory(report.capacity, std::move(report.mesh), errors, not_planned);
}

}  // namespace

Expected<MemoryChange> count_memory(const FrozenMeta& old_meta, const FrozenMeta& new_meta,
                                    const ModelTree& model, const DiffMemory& request,
                                    Diagnostics& warnings) {
  if (!request.plan.sweeps.empty()) {
    return Diagnostics{make_io_error({}, "diff --model counts one mesh: it takes no sweep")};
  }
  if (std::optional<std::string> why = accounting_error(request.plan.accounting)) {
    return Diagnostics{make_io_error({}, std::move(*why))};
  }
  const std::vector<std::string> old_axes = named_axes(old_meta);
  const std::vector<std::string> new_axes = named_axes(new_meta);
  MemoryChange change;
  Diagnostics old_errors;
  Diagnostics new_errors;
  change.old_memory =
      meta_memory(old_meta, model, request, old_axes, new_axes, old_errors, warnings);
  change.new_memory =
      meta_memory(new_meta, model, request, new_axes, old_axes, new_errors, warnings);
  // Both metas know the same axes, so an unknown axis is the same line twice.
  for (Diagnostic& d : new_errors) {
    const bool repeated = std::any_of(old_errors.begin(), old_errors.end(),
                                      [&d](const Diagnostic& e) { return e.message == d.message; });
    if (!repeated) old_errors.push_back(std::move(d));
  }
  if (!old_errors.empty()) return old_errors;
  return change;
}

}  // namespace hpfreeze
