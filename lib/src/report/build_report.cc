// The report pass (report.h): a decoded meta and model tree into a Report, every input
// problem a finding; the mesh side is in report_axes.cc, the rank-0 chunks in report_local.h,
// the planner's part in report_plan.cc.
#include "hpfreeze/report.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <unordered_map>
#include <utility>

#include "hpfreeze/capacity.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/placement.h"
#include "report/report_accounting.h"
#include "report/report_axes.h"
#include "report/report_local.h"
#include "report/report_plan.h"

namespace hpfreeze {
namespace {

// A parameter the model tree gives no dtype counts as bfloat16 (with one warning).
constexpr std::string_view kMissingDtype = "bfloat16";

using chunking::checked_mul;  // chunk_geometry.h, through report_local.h

using report_detail::checked_volume;

Diagnostic make_note(std::string file, std::string pointer, std::string message) {
  Diagnostic d = make_error(std::move(file), std::move(pointer), std::move(message));
  d.severity = Severity::kNote;
  return d;
}

using AxisPlan = MetaAxisPlacement;

struct PlannedParam {
  const MetaParam* param;
  const MetaBoundary* boundary;
  std::size_t boundary_report;           // index into Report::boundaries
  const ModelParameter* info = nullptr;  // nullptr: not in the model
};

// The pointer of a planned param's axes object in the meta; only diagnostics need it, so it
// is built only for them.
std::string pointer_of(const PlannedParam& p) {
  return pointer_join(pointer_join(pointer_join("/param_plan", p.boundary->fqn), "params"),
                      p.param->name);
}

using report_detail::AxisInfo;

// Sum that sticks at the maximum and remembers that it did.
struct Total {
  std::uint64_t value = 0;
  bool overflowed = false;
  void add(std::uint64_t v) { overflowed = !chunking::saturating_add(value, v) || overflowed; }
};

class ReportBuilder {
 public:
  ReportBuilder(const FrozenMeta& meta, const ModelTree& model, bool without_meta)
      : meta_(meta), meta_file_(meta.file), model_(model) {
    report_.without_meta = without_meta;
  }

  Report build(const std::optional<std::vector<AxisSize>>& mesh, const ReportPlanOptions& plan,
               std::optional<std::size_t> sorted_params) {
    plan_ = &plan;
    if (meta_.mesh_dim_names) mesh_dim_names_ = *meta_.mesh_dim_names;
    choose_layout();
    read_mesh(mesh);
    read_param_plan();
    if (!known_axes(mesh)) return std::move(report_);
    order_axes();
    note_idle_axes();
    look_up_params();
    // The accounting of the meshes table, at rank 0 of the report's mesh.
    report_.optimizer = plan.optimizer;
    report_.zero_stage = plan.zero.stage;
    report_.rank0_zero = report_detail::rank0_zero_groups(plan.zero, report_.layout, sizes_);
    for (const PlannedParam& p : planned_) measure(p);
    measure_uncovered();
    totals_and_warnings();
    const report_detail::PlanContext context{meta_file_, planner_source(), axes_, missing_};
    report_detail::plan_meshes(report_, plan, context);
    to_plan_ = {};  // the planner keeps nothing of its input
    if (!report_.usage_errors.empty()) return std::move(report_);
    report_detail::conclude_plan(report_, plan, context);
    return finish(sorted_params);
  }

 private:
  void error(const std::string& file, std::string pointer, std::string message) {
    report_.findings.push_back(make_error(file, std::move(pointer), std::move(message)));
  }
  void warning(const std::string& file, std::string pointer, std::string message) {
    report_.findings.push_back(make_warning(file, std::move(pointer), std::move(message)));
  }

  void read_mesh(const std::optional<std::vector<AxisSize>>& mesh) {
    report_detail::ParallelDims dims = report_detail::read_parallel_dims(meta_);
    named_axes_ = std::move(dims.axes);  // known whichever source gives the sizes
    if (mesh) {
      report_.mesh_source = MeshSource::kFlag;
      for (const AxisSize& a : *mesh) sizes_[a.axis] = a.size;
    } else {
      if (dims.present) report_.mesh_source = MeshSource::kParallelDims;
      for (auto& [axis, size] : dims.sizes) sizes_[axis] = size;
      for (Diagnostic& d : dims.findings) report_.findings.push_back(std::move(d));
      if (sizes_.empty() && plan_->sweeps.empty()) {
        warning(meta_file_, dims.named ? "/parallel_dims" : "",
                "no mesh sizes: the meta has no <axis>_size in parallel_dims and --mesh was not "
                "given; every axis counts as size 1");
      }
    }
    // A swept axis takes its sizes from --sweep (the caller refuses one also in --mesh);
    // the per-parameter table counts it as size 1.
    for (const AxisSweep& s : plan_->sweeps) sizes_.erase(s.axis);
    for (const auto& [name, size] : sizes_) report_.mesh.push_back(AxisSize{name, size});
  }

  // Folded unless mesh_dim_names names ep (or --expert-parallel says which).
  void choose_layout() {
    if (plan_->expert_parallel) {
      report_.layout = *plan_->expert_parallel;
      report_.layout_source = LayoutSource::kFlag;
      return;
    }
    const bool named = std::find(mesh_dim_names_.begin(), mesh_dim_names_.end(), kExpertAxis) !=
                       mesh_dim_names_.end();
    report_.layout = named ? ExpertLayout::kAxis : ExpertLayout::kFolded;
  }

  // Every --mesh and --sweep axis is one the inputs know, and no --replica-axis is one the
  // plan shards; false (usage errors) otherwise.
  bool known_axes(const std::optional<std::vector<AxisSize>>& mesh) {
    std::vector<std::string> named = std::move(named_axes_);
    named.insert(named.end(), mesh_dim_names_.begin(), mesh_dim_names_.end());
    for (const AxisInfo& a : axes_) named.emplace_back(a.name);
    if (report_.without_meta) named.emplace_back("dp");
    report_.usage_errors = report_detail::unknown_axes(
        report_detail::known_axes(std::move(named), *plan_), mesh, plan_->sweeps);
    if (report_.usage_errors.empty()) {
      report_.usage_errors = report_detail::sharded_replica_axes(axes_, *plan_, meta_file_);
    }
    return report_.usage_errors.empty();
  }

  AxisInfo* find_axis(std::string_view name) {
    for (AxisInfo& a : axes_) {
      if (a.name == name) return &a;
    }
    return nullptr;
  }

  void read_param_plan() {
    std::size_t count = 0;
    for (const MetaBoundary& b : meta_.boundaries) count += b.params.size();
    planned_.reserve(count);
    for (const MetaBoundary& b : meta_.boundaries) {
      if (b.params.empty()) continue;
      const std::size_t boundary_report = report_.boundaries.size();
      BoundaryReport& boundary = report_.boundaries.emplace_back(BoundaryReport{b.fqn, 0, 0});
      for (const MetaParam& p : b.params) {
        const PlannedParam planned{&p, &b, boundary_report};
        ++boundary.params;
        for (const MetaAxisPlacement& a : p.axes) {
          AxisInfo* axis = find_axis(a.axis);
          if (axis == nullptr) {
            axis = &axes_.emplace_back(AxisInfo{a.axis, pointer_join(pointer_of(planned), a.axis)});
          }
          axis->shards = axis->shards || a.placement.has_dim();
        }
        planned_.push_back(planned);  // repeats are dropped by look_up_params
      }
    }
  }

  // mesh_dim_names first, in their order; every other axis of a placement after them, by name.
  void order_axes() {
    for (std::string_view n : mesh_dim_names_) {
      if (std::find(report_.axis_order.begin(), report_.axis_order.end(), n) ==
          report_.axis_order.end()) {
        report_.axis_order.emplace_back(n);
      }
    }
    const auto named_end = report_.axis_order.end();  // the named axes, before `rest`
    std::vector<std::string_view> rest;
    for (const AxisInfo& a : axes_) {
      if (std::find(report_.axis_order.begin(), named_end, a.name) == named_end) {
        rest.push_back(a.name);
      }
    }
    std::sort(rest.begin(), rest.end());
    for (std::string_view a : rest) report_.axis_order.emplace_back(a);
    for (AxisInfo& a : axes_) {
      a.rank = static_cast<std::size_t>(
          std::find(report_.axis_order.begin(), report_.axis_order.end(), a.name) -
          report_.axis_order.begin());
      auto it = sizes_.find(a.name);
      a.size = it == sizes_.end() ? 1 : it->second;
    }
  }

  bool swept(std::string_view axis) const {
    return std::any_of(plan_->sweeps.begin(), plan_->sweeps.end(),
                       [axis](const AxisSweep& s) { return s.axis == axis; });
  }

  std::string_view mesh_origin() const {
    return report_.mesh_source == MeshSource::kFlag ? "--mesh" : "parallel_dims";
  }

  void note_idle_axes() {
    for (const AxisInfo& axis : axes_) {
      if (swept(axis.name)) continue;  // sized per mesh of the sweep
      auto it = sizes_.find(axis.name);
      const std::string quoted = quote_for_diagnostic(axis.name);
      if (it == sizes_.end()) {
        report_.findings.push_back(make_note(meta_file_, axis.first_use,
                                             "axis " + quoted + " is not in the mesh (" +
                                                 std::string(mesh_origin()) +
                                                 "); its placements change nothing"));
      } else if (it->second == 1) {
        report_.findings.push_back(
            make_note(meta_file_, axis.first_use,
                      "axis " + quoted + " has size 1; its placements change nothing"));
      }
    }
  }

  // Finds every planned param in the model (plans list them in about the model's order, so
  // the cursor mostly hits), drops an FQN planned twice (a warning; the first plan counts),
  // and sizes the pools so that the spans taken into them stay valid. A repeat is found
  // through the model param it names; only names the model lacks need a table.
  void look_up_params() {
    constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
    first_plan_.assign(model_.parameters.size(), kNone);
    std::unordered_map<std::string_view, std::size_t> absent;  // FQN -> its first plan
    std::size_t cursor = 0;
    std::size_t dims = 0;
    std::size_t axes = 0;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < planned_.size(); ++i) {
      PlannedParam p = planned_[i];
      p.info = model_.find_parameter(p.param->fqn, cursor);
      std::size_t& first = p.info != nullptr
                               ? first_plan_[cursor - 1]
                               : absent.try_emplace(p.param->fqn, kNone).first->second;
      if (first != kNone) {
        warning(meta_file_, pointer_of(p),
                "parameter " + quote_for_diagnostic(p.param->fqn) + " is already planned at " +
                    pointer_of(planned_[first]) + "; counted once");
        continue;
      }
      first = kept;
      if (p.info != nullptr) {
        dims += p.info->shape.size();
        axes += p.param->axes.size();
      }
      planned_[kept++] = p;
    }
    planned_.resize(kept);
    report_.params.reserve(planned_.size());
    report_.local_dims.reserve(dims);
    report_.applied_axes.reserve(axes);
    to_plan_.reserve(planned_.size());  // of report_.params
  }

  // The dtype's element size; a missing dtype counts as bfloat16. nullopt (with an error
  // finding) when the dtype is unknown.
  std::optional<std::uint64_t> element_size(std::string_view fqn, const ModelParameter& p) {
    if (!p.dtype) {
      if (missing_dtype_count_++ == 0) first_missing_dtype_ = std::string(fqn);
      return 2;
    }
    if (*p.dtype != last_dtype_ || !last_size_) {
      last_dtype_ = *p.dtype;  // parameters of one model mostly share a dtype
      last_size_ = dtype_element_size(*p.dtype);
    }
    const std::optional<std::uint64_t> size = last_size_;
    if (!size) {
      error(model_.file, pointer_join(model_.parameter_pointer(fqn), "dtype"),
            "parameter " + quote_for_diagnostic(fqn) + " has unknown dtype " +
                quote_for_diagnostic(*p.dtype));
    }
    return size;
  }

  // The bytes of a parameter whole, `unit` per element (with the accounting); false, with
  // an error at the parameter in the model, past 2^64-1 bytes.
  bool full_bytes(std::string_view fqn, const ModelParameter& p, std::uint64_t unit,
                  std::uint64_t& out) {
    if (checked_volume(p.shape, unit, out)) return true;
    const std::string per_element = plan_->optimizer == Optimizer::kNone
                                        ? std::to_string(unit) + "-byte elements"
                                        : std::to_string(unit) +
                                              " bytes per element with --optimizer " +
                                              std::string(optimizer_name(plan_->optimizer));
    error(model_.file, model_.parameter_pointer(fqn),
          "parameter " + quote_for_diagnostic(fqn) + " of shape " + shape_text(p.shape) + " and " +
              per_element + " needs more than 2^64-1 bytes");
    return false;
  }

  // The accounting of one parameter's elements: what ZeRO keeps and splits of each.
  ElementCost cost_of(const ModelParameter& p, std::uint64_t element) const {
    return element_cost(p.dtype.value_or(kMissingDtype), element, p.requires_grad, plan_->optimizer,
                        plan_->zero.stage);
  }

  static std::string size_phrase(std::uint64_t local, std::uint64_t full) {
    if (local == full) return "(size " + std::to_string(local) + ")";
    return "(local size " + std::to_string(local) + " of " + std::to_string(full) + ")";
  }

  void measure(const PlannedParam& planned) {
    const MetaParam& param = *planned.param;
    const ModelParameter* info = planned.info;
    if (info == nullptr) {
      ++missing_;
      error(meta_file_, pointer_of(planned),
            "parameter " + quote_for_diagnostic(param.fqn) + " is not in the model (" +
                model_.file + ")");
      return;
    }
    const std::optional<std::uint64_t> element = element_size(param.fqn, *info);
    if (!element) return;
    const ElementCost cost = cost_of(*info, *element);
    std::uint64_t full = 0;
    if (!full_bytes(param.fqn, *info, cost.kept + cost.split, full)) return;

    // The axes in placement order (distinct axes: distinct ranks), by insertion: a param
    // has a few.
    order_.clear();
    for (const AxisPlan& a : param.axes) {
      const std::size_t rank = find_axis(a.axis)->rank;
      std::size_t j = order_.size();
      order_.push_back({&a, rank});
      for (; j > 0 && order_[j - 1].second > rank; --j) order_[j] = order_[j - 1];
      order_[j] = {&a, rank};
    }

    const std::size_t dims_at = report_.local_dims.size();
    report_.local_dims.insert(report_.local_dims.end(), info->shape.begin(), info->shape.end());
    const std::span<std::uint64_t> local(report_.local_dims.data() + dims_at, info->shape.size());
    const std::size_t axes_at = report_.applied_axes.size();
    ParamReport out;
    out.fqn = param.fqn;
    out.boundary = planned.boundary->fqn;
    out.info = info;
    out.replicated = true;
    bool valid = true;
    const bool empty =
        std::find(info->shape.begin(), info->shape.end(), std::uint64_t{0}) != info->shape.end();
    chunks_.start(info->shape);
    for (const auto& [a, rank] : order_) {
      report_.applied_axes.push_back(a);
      valid = apply(planned, *a, info->shape, local, empty, out.replicated) && valid;
    }
    out.local_shape = local;
    out.axes = {report_.applied_axes.data() + axes_at, order_.size()};
    const bool expert = report_detail::is_expert(report_.layout, param);
    if (expert) {
      Diagnostics errors =
          report_detail::expert_placement_errors(param, meta_file_, pointer_of(planned));
      valid = valid && errors.empty();
      report_.expert_params += errors.empty() ? 1 : 0;
      for (Diagnostic& d : errors) report_.findings.push_back(std::move(d));
    }
    // Only parameters every check above accepted reach the planner, so it cannot fail on
    // what is already a finding.
    if (valid) to_plan_.push_back(report_.params.size());
    out.full_bytes = full;
    out.rank0_bytes = report_detail::rank0_bytes(
        out.local_shape, cost,
        report_detail::zero_group_of(plan_->zero, sizes_, &param, expert, report_.rank0_zero));
    // Saturates as the totals do; the rank-0 total then overflows too and says so.
    chunking::saturating_add(report_.boundaries[planned.boundary_report].rank0_bytes,
                             out.rank0_bytes);
    report_.params.push_back(out);
  }

  // Applies one axis's placement to `local` (rank 0's shape so far) with the planner's
  // torch.chunk geometry (report_local.h). A dim divides as the planner says (docs/capacity.md,
  // "Divisibility"): every such size by the axis size (times the split factor), except for an
  // uneven placement or a parameter with a zero-sized dim; the largest size that does not is the
  // error. False when the dim is out of range. The messages are built only when one is given.
  bool apply(const PlannedParam& planned, const AxisPlan& a, std::span<const std::uint64_t> shape,
             std::span<std::uint64_t> local, bool empty, bool& replicated) {
    const Placement& p = a.placement;
    if (!p.has_dim()) return true;
    auto pointer = [&] { return pointer_join(pointer_of(planned), a.axis); };
    auto who = [&] { return "parameter " + quote_for_diagnostic(planned.param->fqn); };
    auto where = [&] { return std::string(a.text) + " on axis " + quote_for_diagnostic(a.axis); };
    const auto rank = static_cast<std::uint64_t>(shape.size());
    const auto dim = static_cast<std::uint64_t>(p.dim);  // parse_placement gives dim >= 0
    if (dim >= rank) {
      error(meta_file_, pointer(),
            who() + " has " + plural(rank, "dim") + "; " + where() + " shards dim " +
                std::to_string(dim));
      return false;
    }
    const std::uint64_t n = find_axis(a.axis)->size;
    if (n == 1) return true;
    replicated = false;
    const std::uint64_t f = p.chunk_factor();
    const std::optional<std::uint64_t> bad = chunks_.shard(dim, n, f);
    if (!empty && !p.uneven_shard && bad) {
      const std::string dim_text =
          who() + " dim " + std::to_string(dim) + " " + size_phrase(*bad, shape[dim]);
      const std::string on_axis = where() + " of size " + std::to_string(n);
      std::uint64_t nf = 0;
      const std::string by =
          f == 1          ? std::to_string(n)
          : *bad % f != 0 ? "the split factor " + std::to_string(f)
          : checked_mul(n, f, nf)
              ? std::to_string(n) + " x " + std::to_string(f) + " = " + std::to_string(nf)
              : std::to_string(n) + " x " + std::to_string(f);
      error(meta_file_, pointer(), dim_text + " is not divisible by " + by + ": " + on_axis);
    }
    local[dim] = chunks_.rank0(dim);
    return true;
  }

  // What the planner counts (report_plan.h), made one at a time from the decoded inputs:
  // no second copy of every parameter.
  CapacityParamSource planner_source() {
    CapacityParamSource source;
    source.count = to_plan_.size() + report_.uncovered.size();
    source.at = [this](std::size_t i) {
      scratch_.clear();
      if (i >= to_plan_.size()) {
        const UncoveredParam& u = report_.uncovered[i - to_plan_.size()];
        return CapacityParam{u.fqn, u.shape, u.dtype.value_or(kMissingDtype), u.requires_grad, {}};
      }
      const ParamReport& p = report_.params[to_plan_[i]];
      for (const ReportAxis a : p.axes) scratch_.push_back({a->axis, a->placement});
      return CapacityParam{p.fqn, p.info->shape, p.info->dtype.value_or(kMissingDtype),
                           p.info->requires_grad, scratch_};
    };
    return source;
  }

  // Upstream's coverage rule (CoverageIndex): a model param is covered by a planned FQN
  // equal to its name, which look_up_params found, or by one that is a dotted prefix of
  // it; the prefix index is built only when some param is not matched by name.
  bool covered(std::size_t k, std::string_view fqn) {
    if (first_plan_[k] != std::numeric_limits<std::size_t>::max()) return true;
    if (!coverage_) coverage_.emplace(meta_);
    return coverage_->covers(fqn);
  }

  void measure_uncovered() {
    for (std::size_t k = 0; k < model_.parameters.size(); ++k) {
      const auto& [fqn, info] = model_.parameters[k];
      if (covered(k, fqn)) continue;
      const std::optional<std::uint64_t> element = element_size(fqn, info);
      if (!element) continue;
      const ElementCost cost = cost_of(info, *element);
      std::uint64_t bytes = 0;
      if (!full_bytes(fqn, info, cost.kept + cost.split, bytes)) continue;
      if (info.requires_grad) ++uncovered_trainable_;
      // Whole on every rank but for ZeRO: a parameter with no placement.
      const std::uint64_t rank0 = report_detail::rank0_bytes(
          info.shape, cost,
          report_detail::zero_group_of(plan_->zero, sizes_, nullptr, false, report_.rank0_zero));
      report_.uncovered.push_back(
          UncoveredParam{fqn, info.shape, info.dtype, bytes, rank0, info.requires_grad});
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
    Total uncovered_full;  // for the finding, which gives their size
    for (const UncoveredParam& u : report_.uncovered) {
      uncovered.add(u.rank0_bytes);
      uncovered_full.add(u.bytes);
    }
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
      warning(model_.file, model_.parameter_pointer(first_missing_dtype_),
              std::to_string(missing_dtype_count_) + " parameter" +
                  (missing_dtype_count_ == 1 ? " has" : "s have") +
                  " no dtype, counted as bfloat16 (2 bytes); the first is " +
                  quote_for_diagnostic(first_missing_dtype_));
    }
    // Without a meta every parameter is uncovered, and replicated on purpose.
    if (!report_.uncovered.empty() && !report_.without_meta) {
      const std::size_t n = report_.uncovered.size();
      // As `check`: a trainable parameter no plan entry covers is an error (upstream's
      // preflight refuses it) unless --allow-uncovered; frozen ones only warn.
      const bool as_error = uncovered_trainable_ > 0 && !plan_->allow_uncovered;
      (as_error ? report_.findings.emplace_back(make_error(model_.file, "", ""))
                : report_.findings.emplace_back(make_warning(model_.file, "", "")))
          .message = std::to_string(n) + " model parameter" + (n == 1 ? " is" : "s are") +
                     " not covered by any planned key (" + format_byte_size(uncovered_full.value) +
                     " at full size, " + std::to_string(uncovered_trainable_) + " trainable); " +
                     (n == 1 ? "it stays" : "they stay") + " whole on every rank" +
                     (plan_->zero.stage > 0 ? " but for the ZeRO split" : "");
    }
  }

  Report finish(std::optional<std::size_t> sorted_params) {
    report_detail::sort_report(report_, sorted_params);
    return std::move(report_);
  }

  const FrozenMeta& meta_;
  const std::string& meta_file_;
  const ModelTree& model_;
  std::optional<CoverageIndex> coverage_;
  Report report_;
  std::vector<std::string_view> mesh_dim_names_;
  std::vector<std::string> named_axes_;  // parallel_dims's <axis>_size axes
  std::map<std::string, std::uint64_t, std::less<>> sizes_;
  std::vector<PlannedParam> planned_;
  std::vector<AxisInfo> axes_;           // every axis a placement names, in first-use order
  std::vector<std::size_t> first_plan_;  // per model param: the plan of its name, or max
  std::string_view last_dtype_;          // element_size's last lookup
  std::optional<std::uint64_t> last_size_;
  std::vector<std::pair<const AxisPlan*, std::size_t>> order_;  // scratch of measure()
  report_detail::LocalChunks chunks_;                           // of the parameter measure() is at
  const ReportPlanOptions* plan_ = nullptr;
  // What the planner gets, in order: the planned params every check accepted (indexes of
  // report_.params), then every uncovered one (whole on every rank).
  std::vector<std::size_t> to_plan_;
  std::vector<CapacityPlacement> scratch_;  // the placements of the one param made last
  std::size_t uncovered_trainable_ = 0;
  std::size_t missing_ = 0;  // planned parameters the model lacks
  std::size_t missing_dtype_count_ = 0;
  std::string first_missing_dtype_;
};

}  // namespace

bool Report::has_errors() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

Report build_report(const FrozenMeta* meta, const ModelTree& model,
                    const std::optional<std::vector<AxisSize>>& mesh, const ReportPlanOptions& plan,
                    std::optional<std::size_t> sorted_params) {
  if (meta != nullptr) return ReportBuilder(*meta, model, false).build(mesh, plan, sorted_params);
  // No META: an empty plan, whose report views nothing of it.
  const FrozenMeta empty;
  return ReportBuilder(empty, model, true).build(mesh, plan, sorted_params);
}

}  // namespace hpfreeze
