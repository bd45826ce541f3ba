#include "report/report_axes.h"

#include <algorithm>
#include <string_view>

#include "hpfreeze/base/suggest.h"
#include "json/json.h"
#include "spec/findings.h"

namespace hpfreeze::report_detail {

ParallelDims read_parallel_dims(const FrozenMeta& meta) {
  ParallelDims out;
  const MetaParallelDims& dims = meta.parallel_dims;
  if (dims.state == MetaMemberState::kOther) {
    out.findings.push_back(make_finding(finding_rule("HPF506"), meta.file, "/parallel_dims",
                                        "expected an object of <axis>_size integers"));
    return out;
  }
  out.named = dims.state != MetaMemberState::kAbsent;
  if (dims.state != MetaMemberState::kObject) return out;
  out.present = true;
  for (const MetaAxisSize& size : dims.axes) {
    std::string axis(size.axis);
    if (!size.size) {
      const std::optional<std::uint64_t>& u = size.above_max;
      out.findings.push_back(
          make_finding(finding_rule("HPF507"), meta.file, pointer_join("/parallel_dims", size.key),
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

std::vector<std::string> named_axes(const FrozenMeta& meta,
                                    std::span<const std::string_view> placement_axes) {
  std::vector<std::string_view> names{kStageAxis};  // the layer stack comes from the model
  const auto add = [&names](std::string_view name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  if (meta.parallel_dims.state == MetaMemberState::kObject) {
    for (const MetaAxisSize& size : meta.parallel_dims.axes) add(size.axis);
  }
  if (meta.mesh_dim_names) {
    for (std::string_view name : *meta.mesh_dim_names) add(name);
  }
  for (std::string_view name : placement_axes) add(name);
  std::sort(names.begin(), names.end());
  return {names.begin(), names.end()};
}

std::vector<std::string> known_axes(std::vector<std::string> named, const ReportPlanOptions& plan) {
  const std::vector<std::string>& zero_axes = plan.accounting.zero.axes;
  named.insert(named.end(), zero_axes.begin(), zero_axes.end());
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
                         const std::vector<AxisSweep>& sweeps, bool without_meta) {
  Diagnostics out;
  auto check = [&](std::string_view flag, const std::string& axis) {
    if (std::binary_search(known.begin(), known.end(), axis)) return;
    std::string message = std::string(flag) + ": unknown axis " + quote_for_diagnostic(axis);
    const std::optional<std::string> same = equal_ignoring_case(axis, known);
    if (without_meta && !same) {
      // No plan shards anything: a guess at a near name would mislead.
      out.push_back(make_io_error({}, message +
                                          ": without a META every parameter is "
                                          "replicated: " +
                                          axis + " shards nothing; give the plan's meta"));
      return;
    }
    if (std::optional<std::string> near = same ? same : nearest_ignoring_case(axis, known)) {
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
  if (!usage) {
    return make_finding(finding_rule("HPF509"), meta_file, "/parallel_dims",
                        std::move(error.message));
  }
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

ReportMesh::ReportMesh(const FrozenMeta& meta, const ReportPlanOptions& plan)
    : meta_(meta), plan_(plan) {
  if (meta.mesh_dim_names) mesh_dim_names_ = *meta.mesh_dim_names;
}

void ReportMesh::choose_layout(Report& report) const {
  Accounting& accounting = report.capacity.accounting;
  if (accounting.layout_source == LayoutSource::kFlag) return;  // --expert-parallel said which
  const bool named = std::find(mesh_dim_names_.begin(), mesh_dim_names_.end(), kExpertAxis) !=
                     mesh_dim_names_.end();
  accounting.layout = named ? ExpertLayout::kAxis : ExpertLayout::kFolded;
}

void ReportMesh::read(const std::optional<std::vector<AxisSize>>& mesh, Report& report) {
  choose_layout(report);
  ParallelDims dims = read_parallel_dims(meta_);
  if (mesh) {
    report.mesh_source = MeshSource::kFlag;
    for (const AxisSize& a : *mesh) sizes_[a.axis] = a.size;
  } else {
    if (dims.present) report.mesh_source = MeshSource::kParallelDims;
    for (auto& [axis, size] : dims.sizes) sizes_[axis] = size;
    for (Diagnostic& d : dims.findings) report.findings.push_back(std::move(d));
    if (sizes_.empty() && plan_.sweeps.empty()) {
      report.findings.push_back(make_finding(
          finding_rule("HPF508"), meta_.file, dims.named ? "/parallel_dims" : "",
          "no mesh sizes: the meta has no <axis>_size in parallel_dims and --mesh was not "
          "given; every axis counts as size 1"));
    }
  }
  // The caller refuses an axis both in --mesh and in --sweep.
  for (const AxisSweep& s : plan_.sweeps) sizes_.erase(s.axis);
  for (const auto& [name, size] : sizes_) report.mesh.push_back(AxisSize{name, size});
}

bool ReportMesh::known(const std::optional<std::vector<AxisSize>>& mesh, Report& report) {
  std::vector<std::string_view> placement_axes;
  for (const AxisInfo& a : axes_) placement_axes.push_back(a.name);
  std::vector<std::string> named = named_axes(meta_, placement_axes);
  if (report.without_meta) named.emplace_back("dp");
  report.usage_errors =
      unknown_axes(known_axes(std::move(named), plan_), mesh, plan_.sweeps, report.without_meta);
  if (report.usage_errors.empty()) {
    report.usage_errors = sharded_replica_axes(axes_, plan_, meta_.file);
  }
  return report.usage_errors.empty();
}

bool ReportMesh::swept(std::string_view axis) const {
  return std::any_of(plan_.sweeps.begin(), plan_.sweeps.end(),
                     [axis](const AxisSweep& s) { return s.axis == axis; });
}

void ReportMesh::order(Report& report) {
  std::vector<std::string>& axis_order = report.axis_order;
  for (std::string_view n : mesh_dim_names_) {
    if (std::find(axis_order.begin(), axis_order.end(), n) == axis_order.end()) {
      axis_order.emplace_back(n);
    }
  }
  const auto named_end = axis_order.end();  // the named axes, before `rest`
  std::vector<std::string_view> rest;
  for (const AxisInfo& a : axes_) {
    if (std::find(axis_order.begin(), named_end, a.name) == named_end) rest.push_back(a.name);
  }
  std::sort(rest.begin(), rest.end());
  for (std::string_view a : rest) axis_order.emplace_back(a);
  for (AxisInfo& a : axes_) {
    a.rank = static_cast<std::size_t>(std::find(axis_order.begin(), axis_order.end(), a.name) -
                                      axis_order.begin());
    auto it = sizes_.find(a.name);
    a.size = it == sizes_.end() ? 1 : it->second;
  }
  const std::string_view origin =
      report.mesh_source == MeshSource::kFlag ? "--mesh" : "parallel_dims";
  for (const AxisInfo& axis : axes_) {
    if (swept(axis.name)) continue;  // sized per mesh of the sweep
    auto it = sizes_.find(axis.name);
    const std::string quoted = quote_for_diagnostic(axis.name);
    if (it == sizes_.end()) {
      report.findings.push_back(make_finding(finding_rule("HPF503"), meta_.file, axis.first_use,
                                             "axis " + quoted + " is not in the mesh (" +
                                                 std::string(origin) +
                                                 "); its placements change nothing"));
    } else if (it->second == 1) {
      report.findings.push_back(
          make_finding(finding_rule("HPF503"), meta_.file, axis.first_use,
                       "axis " + quoted + " has size 1; its placements change nothing"));
    }
  }
}

}  // namespace hpfreeze::report_detail

namespace hpfreeze {

std::vector<std::string> named_axes(const FrozenMeta& meta) {
  // Plans repeat a handful of axes over every parameter: the last one found is most often
  // the next one too.
  std::vector<std::string_view> placement_axes;
  for (const MetaBoundary& b : meta.boundaries) {
    for (const MetaParam& p : b.params) {
      for (const MetaAxisPlacement& a : p.axes) {
        if (std::find(placement_axes.rbegin(), placement_axes.rend(), a.axis) ==
            placement_axes.rend()) {
          placement_axes.push_back(a.axis);
        }
      }
    }
  }
  return report_detail::named_axes(meta, placement_axes);
}

}  // namespace hpfreeze
