#include "report/report_axes.h"

#include <algorithm>
#include <string_view>

#include "hpfreeze/json.h"
#include "hpfreeze/suggest.h"

namespace hpfreeze::report_detail {

ParallelDims read_parallel_dims(const FrozenMeta& meta) {
  ParallelDims out;
  const MetaParallelDims& dims = meta.parallel_dims;
  if (dims.state == MetaMemberState::kOther) {
    out.findings.push_back(
        make_error(meta.file, "/parallel_dims", "expected an object of <axis>_size integers"));
    return out;
  }
  out.named = dims.state != MetaMemberState::kAbsent;
  if (dims.state != MetaMemberState::kObject) return out;
  out.present = true;
  for (const MetaAxisSize& size : dims.axes) {
    std::string axis(size.axis);
    out.axes.push_back(axis);
    if (!size.size) {
      const std::optional<std::uint64_t>& u = size.above_max;
      out.findings.push_back(
          make_warning(meta.file, pointer_join("/parallel_dims", size.key),
                       "ignored: " +
                           (u ? std::to_string(*u) + " is above the largest axis size, 2^63-1"
                              : std::string("expected an integer >= 1")) +
                           "; axis '" + axis + "' counts as size 1"));
      continue;
    }
    out.sizes.emplace_back(std::move(axis), *size.size);
  }
  return out;
}

std::vector<std::string> known_axes(std::vector<std::string> named, const ReportPlanOptions& plan) {
  named.insert(named.end(), plan.zero.axes.begin(), plan.zero.axes.end());
  named.insert(named.end(), plan.replica_axes.begin(), plan.replica_axes.end());
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  return named;
}

Diagnostics sharded_replica_axes(const std::vector<AxisInfo>& axes, const ReportPlanOptions& plan,
                                 const std::string& meta_file) {
  Diagnostics out;
  for (const std::string& name : plan.replica_axes) {
    auto it = std::find_if(axes.begin(), axes.end(),
                           [&name](const AxisInfo& a) { return a.shards && a.name == name; });
    if (it == axes.end()) continue;
    out.push_back(make_io_error(
        {}, "--replica-axis: axis " + quote_for_diagnostic(name) +
                " is sharded by the plan (it is named first at " + meta_file + ": " +
                it->first_use +
                "), so it holds no replicas; the inputs know it without --replica-axis"));
  }
  return out;
}

Diagnostics unknown_axes(const std::vector<std::string>& known,
                         const std::optional<std::vector<AxisSize>>& mesh,
                         const std::vector<AxisSweep>& sweeps) {
  Diagnostics out;
  auto check = [&](std::string_view flag, const std::string& axis) {
    if (std::binary_search(known.begin(), known.end(), axis)) return;
    std::string message = std::string(flag) + ": unknown axis " + quote_for_diagnostic(axis);
    if (std::optional<std::string> near = nearest_ignoring_case(axis, known)) {
      message += "; did you mean " + quote_for_diagnostic(*near) + "?";
    }
    message += " (the inputs know ";
    for (std::size_t i = 0; i < known.size(); ++i) {
      message += (i == 0 ? "" : ", ") + known[i];
    }
    message += "; --replica-axis NAME adds an axis that only holds replicas)";
    out.push_back(make_io_error({}, std::move(message)));
  };
  if (mesh) {
    for (const AxisSize& a : *mesh) check("--mesh", a.axis);
  }
  for (const AxisSweep& s : sweeps) check("--sweep", s.axis);
  return out;
}

Diagnostic mesh_sizes_error(Diagnostic error, MeshesProblem problem, bool mesh_flag,
                            const std::vector<AxisSweep>& sweeps,
                            const std::vector<AxisSize>& from_parallel_dims,
                            const std::string& meta_file, bool& usage) {
  std::string flags = mesh_flag ? "--mesh" : "";
  if (!sweeps.empty()) flags += flags.empty() ? "--sweep" : " and --sweep";
  usage = !flags.empty();
  if (!usage) return make_error(meta_file, "/parallel_dims", std::move(error.message));
  std::string message = flags + ": " + error.message;
  // The sizes of a mesh too large, when parallel_dims gave some of them.
  if (problem == MeshesProblem::kTooManyDevices && !from_parallel_dims.empty()) {
    std::string sizes;
    for (const AxisSize& a : from_parallel_dims) {
      sizes += (sizes.empty() ? "" : " ") + a.axis + "=" + std::to_string(a.size);
    }
    message += " (" + sizes + " from parallel_dims in " + meta_file + ")";
  }
  return make_io_error({}, std::move(message));
}

void sort_report(Report& report, std::optional<std::size_t> sorted_params) {
  auto by_bytes = [](const auto& a, const auto& b) {
    if (a.rank0_bytes != b.rank0_bytes) return a.rank0_bytes > b.rank0_bytes;
    return a.fqn < b.fqn;
  };
  std::vector<ParamReport>& params = report.params;
  if (sorted_params && *sorted_params < params.size()) {
    // FQNs are unique here, so the first K are the same as after a full sort.
    std::partial_sort(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(*sorted_params),
                      params.end(), by_bytes);
  } else {
    std::sort(params.begin(), params.end(), by_bytes);
  }
  std::sort(report.boundaries.begin(), report.boundaries.end(), by_bytes);
  std::sort(report.uncovered.begin(), report.uncovered.end(),
            [](const UncoveredParam& a, const UncoveredParam& b) {
              if (a.bytes != b.bytes) return a.bytes > b.bytes;
              return a.fqn < b.fqn;
            });
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return static_cast<int>(a.severity) < static_cast<int>(b.severity);
                   });
}

}  // namespace hpfreeze::report_detail
