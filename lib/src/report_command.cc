#include "hpfreeze/report_command.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "hpfreeze/capacity.h"
#include "hpfreeze/command_result.h"
#include "hpfreeze/encode.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/placement.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kDefaultTextTop = 10;
// A parameter the model tree gives no dtype counts as bfloat16 (with one warning).
constexpr std::string_view kMissingDtype = "bfloat16";

bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Product of the dims times `unit`; false on overflow. A zero dim makes it 0 whatever the rest.
bool checked_volume(const std::vector<std::uint64_t>& shape, std::uint64_t unit,
                    std::uint64_t& out) {
  if (std::find(shape.begin(), shape.end(), std::uint64_t{0}) != shape.end()) {
    out = 0;
    return true;
  }
  std::uint64_t acc = unit;
  for (std::uint64_t d : shape) {
    if (!checked_mul(acc, d, acc)) return false;
  }
  out = acc;
  return true;
}

std::string parameter_pointer(std::string_view fqn) { return pointer_join("/parameters", fqn); }

Diagnostic make_note(std::string file, std::string pointer, std::string message) {
  Diagnostic d = make_error(std::move(file), std::move(pointer), std::move(message));
  d.severity = Severity::kNote;
  return d;
}

using AxisPlan = MetaAxisPlacement;

struct PlannedParam {
  const MetaParam* param;
  std::string_view boundary;
  std::string pointer;  // of the param's axes object in the meta
};

// Sum that sticks at the maximum and remembers that it did.
struct Total {
  std::uint64_t value = 0;
  bool overflowed = false;
  void add(std::uint64_t v) {
    if (__builtin_add_overflow(value, v, &value)) {
      value = std::numeric_limits<std::uint64_t>::max();
      overflowed = true;
    }
  }
};

class ReportBuilder {
 public:
  ReportBuilder(const FrozenMeta& meta, const ModelTree& model)
      : meta_(meta), meta_file_(meta.file), model_(model), coverage_(meta) {}

  Report build(const std::optional<std::vector<MeshAxis>>& mesh, const ReportPlanOptions& plan) {
    plan_ = &plan;
    if (meta_.mesh_dim_names) mesh_dim_names_ = *meta_.mesh_dim_names;
    read_mesh(mesh);
    read_param_plan();
    order_axes();
    note_idle_axes();
    for (const PlannedParam& p : planned_) measure(p);
    measure_uncovered();
    totals_and_warnings();
    plan_capacity_of_meshes();
    return finish();
  }

 private:
  void error(const std::string& file, std::string pointer, std::string message) {
    report_.findings.push_back(make_error(file, std::move(pointer), std::move(message)));
  }
  void warning(const std::string& file, std::string pointer, std::string message) {
    report_.findings.push_back(make_warning(file, std::move(pointer), std::move(message)));
  }

  void read_mesh(const std::optional<std::vector<MeshAxis>>& mesh) {
    if (mesh) {
      report_.mesh_source = MeshSource::kFlag;
      for (const MeshAxis& a : *mesh) sizes_[a.name] = a.size;
    } else {
      read_parallel_dims();
    }
    // A swept axis takes its sizes from --sweep (the caller refuses one also in --mesh);
    // the per-parameter table counts it as size 1.
    for (const AxisSweep& s : plan_->sweeps) sizes_.erase(s.axis);
    for (const auto& [name, size] : sizes_) report_.mesh.push_back(MeshAxis{name, size});
  }

  void read_parallel_dims() {
    const Json* dims = meta_.root.find("parallel_dims");
    if (dims != nullptr && !dims->is_null() && !dims->is_object()) {
      error(meta_file_, "/parallel_dims", "expected an object of <axis>_size integers");
      dims = nullptr;
    }
    if (dims != nullptr && dims->is_object()) {
      report_.mesh_source = MeshSource::kParallelDims;
      constexpr std::string_view kSuffix = "_size";
      for (const JsonMember& m : dims->as_object()) {
        if (m.key.size() <= kSuffix.size() || !m.key.ends_with(kSuffix)) continue;
        const std::string axis(m.key.substr(0, m.key.size() - kSuffix.size()));
        std::uint64_t size = 0;
        if (const auto* i = std::get_if<std::int64_t>(&m.value.v); i != nullptr && *i >= 1) {
          size = static_cast<std::uint64_t>(*i);
        }
        if (size == 0) {
          warning(meta_file_, pointer_join("/parallel_dims", m.key),
                  "ignored: expected an integer >= 1; axis '" + axis + "' counts as size 1");
          continue;
        }
        sizes_[axis] = size;
      }
    }
    if (sizes_.empty() && plan_->sweeps.empty()) {
      warning(meta_file_, dims != nullptr ? "/parallel_dims" : "",
              "no mesh sizes: the meta has no <axis>_size in parallel_dims and --mesh was not "
              "given; every axis counts as size 1");
    }
  }

  void read_param_plan() {
    std::unordered_map<std::string_view, std::string> seen;  // FQN -> pointer of its first plan
    for (const MetaBoundary& b : meta_.boundaries) {
      if (b.params.empty()) continue;
      const std::string params_pointer = pointer_join(pointer_join("/param_plan", b.fqn), "params");
      boundary_index_.emplace(b.fqn, report_.boundaries.size());
      BoundaryReport& boundary =
          report_.boundaries.emplace_back(BoundaryReport{std::string(b.fqn), 0, 0});
      for (const MetaParam& p : b.params) {
        PlannedParam planned{&p, b.fqn, pointer_join(params_pointer, p.name)};
        ++boundary.params;
        for (const MetaAxisPlacement& a : p.axes) {
          if (first_use_.emplace(a.axis, pointer_join(planned.pointer, a.axis)).second) {
            axes_seen_.push_back(a.axis);
          }
        }
        if (auto [it, fresh] = seen.emplace(p.fqn, planned.pointer); !fresh) {
          warning(meta_file_, planned.pointer,
                  "parameter " + quote_for_diagnostic(p.fqn) + " is already planned at " +
                      it->second + "; counted once");
          continue;
        }
        planned_.push_back(std::move(planned));
      }
    }
  }

  // mesh_dim_names first, in their order; every other axis of a placement after them, by name.
  void order_axes() {
    for (std::string_view n : mesh_dim_names_) {
      if (axis_rank_.emplace(n, axis_rank_.size()).second) report_.axis_order.emplace_back(n);
    }
    std::vector<std::string_view> rest;
    for (std::string_view a : axes_seen_) {
      if (!axis_rank_.contains(a)) rest.push_back(a);
    }
    std::sort(rest.begin(), rest.end());
    for (std::string_view a : rest) {
      axis_rank_.emplace(a, axis_rank_.size());
      report_.axis_order.emplace_back(a);
    }
  }

  std::uint64_t axis_size(std::string_view axis) const {
    auto it = sizes_.find(std::string(axis));
    return it == sizes_.end() ? 1 : it->second;
  }

  bool swept(std::string_view axis) const {
    return std::any_of(plan_->sweeps.begin(), plan_->sweeps.end(),
                       [axis](const AxisSweep& s) { return s.axis == axis; });
  }

  std::string_view mesh_origin() const {
    return report_.mesh_source == MeshSource::kFlag ? "--mesh" : "parallel_dims";
  }

  void note_idle_axes() {
    for (std::string_view axis : axes_seen_) {
      if (swept(axis)) continue;  // sized per mesh of the sweep
      auto it = sizes_.find(std::string(axis));
      const std::string quoted = quote_for_diagnostic(axis);
      if (it == sizes_.end()) {
        report_.findings.push_back(make_note(meta_file_, first_use_.at(axis),
                                             "axis " + quoted + " is not in the mesh (" +
                                                 std::string(mesh_origin()) +
                                                 "); its placements change nothing"));
      } else if (it->second == 1) {
        report_.findings.push_back(
            make_note(meta_file_, first_use_.at(axis),
                      "axis " + quoted + " has size 1; its placements change nothing"));
      }
    }
  }

  // The dtype's element size; a missing dtype counts as bfloat16. nullopt (with an error
  // finding) when the dtype is unknown.
  std::optional<std::uint64_t> element_size(std::string_view fqn, const ModelParameter& p) {
    if (!p.dtype) {
      if (missing_dtype_count_++ == 0) first_missing_dtype_ = std::string(fqn);
      return 2;
    }
    std::optional<std::uint64_t> size = dtype_element_size(*p.dtype);
    if (!size) {
      error(model_.file, pointer_join(parameter_pointer(fqn), "dtype"),
            "parameter " + quote_for_diagnostic(fqn) + " has unknown dtype " +
                quote_for_diagnostic(*p.dtype));
    }
    return size;
  }

  bool full_bytes(std::string_view fqn, const ModelParameter& p, std::uint64_t unit,
                  std::uint64_t& out) {
    if (checked_volume(p.shape, unit, out)) return true;
    error(model_.file, parameter_pointer(fqn),
          "parameter " + quote_for_diagnostic(fqn) + " of shape " + shape_text(p.shape) + " and " +
              std::to_string(unit) + "-byte elements needs more than 2^64-1 bytes");
    return false;
  }

  std::string size_phrase(std::uint64_t local, std::uint64_t full) const {
    if (local == full) return "(size " + std::to_string(local) + ")";
    return "(local size " + std::to_string(local) + " of " + std::to_string(full) + ")";
  }

  void measure(const PlannedParam& planned) {
    const ModelParameter* info = model_.find_parameter(planned.param->fqn);
    if (info == nullptr) {
      error(meta_file_, planned.pointer,
            "parameter " + quote_for_diagnostic(planned.param->fqn) + " is not in the model (" +
                model_.file + ")");
      return;
    }
    const std::optional<std::uint64_t> unit = element_size(planned.param->fqn, *info);
    std::uint64_t full = 0;
    if (!unit || !full_bytes(planned.param->fqn, *info, *unit, full)) return;

    std::vector<const AxisPlan*> axes;
    for (const AxisPlan& a : planned.param->axes) axes.push_back(&a);
    std::sort(axes.begin(), axes.end(), [this](const AxisPlan* x, const AxisPlan* y) {
      return axis_rank_.at(x->axis) < axis_rank_.at(y->axis);
    });

    ParamReport out;
    out.fqn = planned.param->fqn;
    out.boundary = std::string(planned.boundary);
    out.shape = info->shape;
    out.local_shape = info->shape;
    if (info->dtype) out.dtype = std::string(*info->dtype);
    out.replicated = true;
    bool valid = true;
    CapacityParam cap{std::string(planned.param->fqn),
                      {},
                      std::string(info->dtype.value_or(kMissingDtype)),
                      info->requires_grad,
                      {}};
    for (const AxisPlan* a : axes) {
      if (!out.placements.empty()) out.placements += ' ';
      out.placements += std::string(a->axis) + "=" + std::string(a->text);
      out.axes.emplace_back(std::string(a->axis), std::string(a->text));
      valid = apply(planned, *a, out) && valid;
      cap.placements.emplace_back(std::string(a->axis), a->placement);
    }
    // Only parameters every check above accepted reach the planner, so it cannot fail on
    // what is already a finding.
    if (valid) add_capacity_param(std::move(cap), info->shape);
    out.full_bytes = full;
    checked_volume(out.local_shape, *unit, out.rank0_bytes);  // never above `full`
    report_.boundaries[boundary_index_.at(planned.boundary)].rank0_bytes += out.rank0_bytes;
    report_.params.push_back(std::move(out));
  }

  // Applies one axis's placement to out.local_shape. A dim that does not divide is an error
  // and is then chunked with ceil, so the totals stay an upper bound.
  // False when the dim is out of range.
  bool apply(const PlannedParam& planned, const AxisPlan& a, ParamReport& out) {
    const Placement& p = a.placement;
    if (!p.has_dim()) return true;
    const std::string pointer = pointer_join(planned.pointer, a.axis);
    const std::string who = "parameter " + quote_for_diagnostic(planned.param->fqn);
    const std::string where = std::string(a.text) + " on axis " + quote_for_diagnostic(a.axis);
    const auto rank = static_cast<std::uint64_t>(out.shape.size());
    const auto dim = static_cast<std::uint64_t>(p.dim);  // parse_placement gives dim >= 0
    if (dim >= rank) {
      error(meta_file_, pointer,
            who + " has " + plural(rank, "dim") + "; " + where + " shards dim " +
                std::to_string(dim));
      return false;
    }
    const std::uint64_t n = axis_size(a.axis);
    if (n == 1) return true;
    out.replicated = false;
    const std::uint64_t s = out.local_shape[dim];
    const std::string dim_text =
        who + " dim " + std::to_string(dim) + " " + size_phrase(s, out.shape[dim]);
    const std::string on_axis = where + " of size " + std::to_string(n);
    if (p.kind == PlacementKind::kShard) {
      if (!p.uneven_shard && s % n != 0) {
        error(meta_file_, pointer,
              dim_text + " is not divisible by " + std::to_string(n) + ": " + on_axis);
      }
      out.local_shape[dim] = ceil_div(s, n);
      return true;
    }
    const auto f = static_cast<std::uint64_t>(p.split_factor);
    if (s % f != 0) {
      error(
          meta_file_, pointer,
          dim_text + " is not divisible by the split factor " + std::to_string(f) + ": " + on_axis);
      out.local_shape[dim] = ceil_div(s, n);
      return true;
    }
    std::uint64_t nf = 0;
    const bool nf_fits = checked_mul(n, f, nf);
    // s is a multiple of f, so f * ceil(s / (f * n)) = f * ceil((s / f) / n).
    const std::uint64_t local = f * ceil_div(s / f, n);
    if (!p.uneven_shard && (nf_fits ? s % nf != 0 : s != 0)) {
      error(meta_file_, pointer,
            dim_text + " is not divisible by " + std::to_string(n) + " x " + std::to_string(f) +
                (nf_fits ? " = " + std::to_string(nf) : std::string()) + ": " + on_axis);
    }
    out.local_shape[dim] = local;
    return true;
  }

  void add_capacity_param(CapacityParam param, const std::vector<std::uint64_t>& shape) {
    for (std::uint64_t d : shape) param.shape.push_back(static_cast<std::int64_t>(d));
    capacity_params_.push_back(std::move(param));
  }

  // The same planner as `report --sweep` (docs/capacity.md), here for the report's mesh
  // or the sweep: the worst and best rank over every rank, not only rank 0.
  void plan_capacity_of_meshes() {
    CapacityRequest request;
    request.params = std::move(capacity_params_);
    request.axis_order = report_.axis_order;
    for (const MeshAxis& a : report_.mesh) request.fixed.push_back(AxisSize{a.name, a.size});
    request.sweeps = plan_->sweeps;
    request.optimizer = plan_->optimizer;
    request.budget = plan_->budget;
    report_.swept = !plan_->sweeps.empty();
    Expected<CapacityResult> result = plan_capacity(request);
    if (!result) {
      for (Diagnostic& d : result.errors()) {
        if (d.file.empty()) d.file = meta_file_;
        report_.findings.push_back(std::move(d));
      }
      return;
    }
    report_.capacity = std::move(*result);
  }

  void measure_uncovered() {
    for (const auto& [fqn, info] : model_.parameters) {
      if (coverage_.covers(fqn)) continue;
      const std::optional<std::uint64_t> unit = element_size(fqn, info);
      std::uint64_t bytes = 0;
      if (!unit || !full_bytes(fqn, info, *unit, bytes)) continue;
      if (info.requires_grad) ++uncovered_trainable_;
      // Whole on every rank: a parameter with no placement.
      add_capacity_param(CapacityParam{std::string(fqn),
                                       {},
                                       std::string(info.dtype.value_or(kMissingDtype)),
                                       info.requires_grad,
                                       {}},
                         info.shape);
      UncoveredParam u{std::string(fqn), info.shape, std::nullopt, bytes};
      if (info.dtype) u.dtype = std::string(*info.dtype);
      report_.uncovered.push_back(std::move(u));
    }
  }

  void totals_and_warnings() {
    Total rank0;
    Total replicated;
    Total unsharded;
    Total uncovered;
    for (const ParamReport& p : report_.params) {
      rank0.add(p.rank0_bytes);
      unsharded.add(p.full_bytes);
      if (p.replicated) {
        replicated.add(p.rank0_bytes);
        ++report_.replicated_params;
      }
    }
    for (const UncoveredParam& u : report_.uncovered) uncovered.add(u.bytes);
    const std::pair<const char*, Total*> totals[] = {{"rank0_bytes", &rank0},
                                                     {"replicated_bytes", &replicated},
                                                     {"unsharded_bytes", &unsharded},
                                                     {"uncovered_bytes", &uncovered}};
    for (const auto& [name, total] : totals) {
      if (total->overflowed) {
        error(meta_file_, "",
              std::string(name) + " exceeds 2^64-1 bytes; it is reported as 2^64-1");
      }
    }
    report_.rank0_bytes = rank0.value;
    report_.replicated_bytes = replicated.value;
    report_.unsharded_bytes = unsharded.value;
    report_.uncovered_bytes = uncovered.value;

    if (missing_dtype_count_ > 0) {
      warning(model_.file, parameter_pointer(first_missing_dtype_),
              std::to_string(missing_dtype_count_) + " parameter" +
                  (missing_dtype_count_ == 1 ? " has" : "s have") +
                  " no dtype, counted as bfloat16 (2 bytes); the first is " +
                  quote_for_diagnostic(first_missing_dtype_));
    }
    if (!report_.uncovered.empty()) {
      const std::size_t n = report_.uncovered.size();
      // As `check`: a trainable parameter no plan entry covers is an error (upstream's
      // preflight refuses it) unless --allow-uncovered; frozen ones only warn.
      const bool as_error = uncovered_trainable_ > 0 && !plan_->allow_uncovered;
      (as_error ? report_.findings.emplace_back(make_error(model_.file, "", ""))
                : report_.findings.emplace_back(make_warning(model_.file, "", "")))
          .message = std::to_string(n) + " model parameter" + (n == 1 ? " is" : "s are") +
                     " not covered by any planned key (" +
                     format_byte_size(report_.uncovered_bytes) + " at full size, " +
                     std::to_string(uncovered_trainable_) + " trainable); " +
                     (n == 1 ? "it stays" : "they stay") + " whole on every rank";
    }
  }

  Report finish() {
    auto by_bytes = [](const auto& a, const auto& b) {
      if (a.rank0_bytes != b.rank0_bytes) return a.rank0_bytes > b.rank0_bytes;
      return a.fqn < b.fqn;
    };
    std::sort(report_.params.begin(), report_.params.end(), by_bytes);
    std::sort(report_.boundaries.begin(), report_.boundaries.end(), by_bytes);
    std::sort(report_.uncovered.begin(), report_.uncovered.end(),
              [](const UncoveredParam& a, const UncoveredParam& b) {
                if (a.bytes != b.bytes) return a.bytes > b.bytes;
                return a.fqn < b.fqn;
              });
    std::stable_sort(report_.findings.begin(), report_.findings.end(),
                     [](const Diagnostic& a, const Diagnostic& b) {
                       return static_cast<int>(a.severity) < static_cast<int>(b.severity);
                     });
    return std::move(report_);
  }

  const FrozenMeta& meta_;
  const std::string& meta_file_;
  const ModelTree& model_;
  const CoverageIndex coverage_;
  Report report_;
  std::vector<std::string_view> mesh_dim_names_;
  std::map<std::string, std::uint64_t> sizes_;
  std::vector<PlannedParam> planned_;
  std::unordered_map<std::string_view, std::size_t> boundary_index_;
  std::vector<std::string_view> axes_seen_;                      // first-use order
  std::unordered_map<std::string_view, std::string> first_use_;  // axis -> pointer
  std::unordered_map<std::string_view, std::size_t> axis_rank_;
  const ReportPlanOptions* plan_ = nullptr;
  std::vector<CapacityParam> capacity_params_;
  std::size_t uncovered_trainable_ = 0;
  std::size_t missing_dtype_count_ = 0;
  std::string first_missing_dtype_;
};

}  // namespace

bool Report::has_errors() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

Report build_report(const FrozenMeta& meta, const ModelTree& model,
                    const std::optional<std::vector<MeshAxis>>& mesh,
                    const ReportPlanOptions& plan) {
  return ReportBuilder(meta, model).build(mesh, plan);
}

ReportOutput run_report(const ReportRequest& request) {
  ReportOutput result;
  auto load = [&result](const std::string& path) -> std::optional<JsonDocument> {
    Expected<InputFile> input = read_input(path);
    if (!input) {
      result.diagnostics.insert(result.diagnostics.end(), input.errors().begin(),
                                input.errors().end());
      return std::nullopt;
    }
    Expected<JsonDocument> doc = parse_json_document(input->display_name, std::move(input->bytes));
    if (!doc) {
      result.diagnostics.insert(result.diagnostics.end(), doc.errors().begin(), doc.errors().end());
      return std::nullopt;
    }
    return std::move(*doc);
  };
  // Both inputs are read before either is judged, so every unreadable file shows up at once.
  std::optional<JsonDocument> meta_doc = load(request.meta_path);
  std::optional<JsonDocument> model_doc = load(request.model_path);
  result.failed = !result.diagnostics.empty();
  if (result.failed) return result;

  Expected<ModelTree> model = decode_model_tree(*model_doc);
  if (!model) {
    result.diagnostics = std::move(model.errors());
    result.failed = true;
    return result;
  }
  if (!model->has_parameters) {
    result.diagnostics.push_back(make_error(
        model->file, "", "the model tree has no 'parameters'; a report needs their shapes"));
    result.failed = true;
    return result;
  }

  Expected<FrozenMeta> meta = decode_meta(*meta_doc, "report");
  if (!meta) {
    result.diagnostics = std::move(meta.errors());
    result.failed = true;
    return result;
  }
  Report report = build_report(*meta, *model, request.mesh, request.plan);
  result.output = request.json ? render_report_json(report, request.top)
                               : render_report_text(report, request.top.value_or(kDefaultTextTop));
  result.failed =
      report.has_errors() || (report.capacity && capacity_exit_code(*report.capacity) != 0);
  // The summary after the per-parameter findings (the full list is in --json).
  std::size_t counts[3] = {0, 0, 0};
  for (const Diagnostic& d : report.findings) ++counts[static_cast<int>(d.severity)];
  const bool summarize = !report.findings.empty();
  if (report.findings.size() > kMaxReportedErrors) {
    const std::size_t rest = report.findings.size() - kMaxReportedErrors;
    Diagnostic more = report.findings[kMaxReportedErrors];
    more.file.clear();
    more.pointer.clear();
    more.message = std::to_string(rest) + " more finding" + (rest == 1 ? "" : "s") +
                   " not shown (--json lists them all)";
    report.findings.resize(kMaxReportedErrors);
    report.findings.push_back(std::move(more));
  }
  if (summarize) {
    report.findings.push_back(make_note({}, {},
                                        "report: " + plural(counts[0], "error") + ", " +
                                            plural(counts[1], "warning") + ", " +
                                            plural(counts[2], "note")));
  }
  result.diagnostics = std::move(report.findings);
  return result;
}

}  // namespace hpfreeze
