// The report pass (report.h): a decoded meta and model tree into a Report, every input
// problem a finding. This file measures each parameter (its bytes, with the accounting)
// and runs the steps in order; the mesh side is in report_axes.cc, each parameter's rank-0
// piece in report_geometry.cc, the totals and the lists' order in report_totals.cc, the
// planner's part in report_plan.cc.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <unordered_map>
#include <utility>

#include "capacity/capacity.h"
#include "meta/meta.h"
#include "report/report.h"
#include "report/report_accounting.h"
#include "report/report_axes.h"
#include "report/report_geometry.h"
#include "report/report_pipeline.h"
#include "report/report_plan.h"
#include "report/report_totals.h"
#include "spec/dtypes.h"
#include "spec/findings.h"

namespace hpfreeze {
namespace {

// A parameter the model tree gives no dtype counts as bfloat16 (with one warning).
constexpr std::string_view kMissingDtype = "bfloat16";

using report_detail::checked_volume;
using report_detail::PlannedParam;
using report_detail::pointer_of;

class ReportBuilder {
 public:
  ReportBuilder(const FrozenMeta& meta, const ModelTree& model, bool without_meta,
                const ReportPlanOptions& plan)
      : meta_(meta),
        meta_file_(meta.file),
        model_(model),
        plan_(plan),
        mesh_(meta, plan),
        geometry_(mesh_, meta.file) {
    report_.without_meta = without_meta;
    // The one copy of the settings in the report: the layout is resolved below (read()).
    report_.capacity.accounting = plan.accounting;
    report_.capacity.filter = plan.filter;
    report_.capacity.swept = !plan.sweeps.empty();
  }

  Report build(const std::optional<std::vector<AxisSize>>& mesh,
               std::optional<std::size_t> sorted_params) {
    mesh_.read(mesh, report_);
    read_param_plan();
    if (!mesh_.known(mesh, report_) || !place_stages()) return std::move(report_);
    mesh_.order(report_);
    look_up_params();
    // The accounting of the meshes table, at rank 0 of the report's mesh.
    report_.rank0_zero = report_detail::rank0_zero_groups(accounting(), mesh_.sizes());
    for (const PlannedParam& p : planned_) measure(p);
    measure_uncovered();
    report_detail::add_totals(report_, counts_, meta_file_, model_, plan_);
    const report_detail::PlanContext context{meta_file_,   model_.file, planner_source(),
                                             mesh_.axes(), missing_,    {placer_->stack(), tied()}};
    report_detail::plan_meshes(report_, plan_, context);
    to_plan_ = {};  // the planner keeps nothing of its input
    if (!report_.usage_errors.empty()) return std::move(report_);
    // A silenced finding counts nowhere, not even in the answer held back for errors.
    drop_silenced(report_.findings, plan_.silenced);
    report_detail::conclude_plan(report_, plan_, context);
    drop_silenced(report_.findings, plan_.silenced);  // what concluding found
    report_detail::sort_report(report_, sorted_params);
    return std::move(report_);
  }

 private:
  [[nodiscard]] const Accounting& accounting() const { return report_.capacity.accounting; }

  void add(const FindingRule& rule, const std::string& file, std::string pointer,
           std::string message) {
    report_.findings.push_back(make_finding(rule, file, std::move(pointer), std::move(message)));
  }

  // The layer stack (--pp-stack's, or the model's) and --pp-layers against it: false, with
  // the usage errors in the report, when they do not hold.
  bool place_stages() {
    Expected<report_detail::StagePlacer> placer =
        report_detail::StagePlacer::make(model_, plan_.accounting.pipeline.stack);
    if (!placer) {
      report_.usage_errors = std::move(placer.errors());
      return false;
    }
    placer_ = std::move(*placer);
    report_.usage_errors = report_detail::pp_layers_errors(plan_, report_, placer_->stack());
    if (!report_.usage_errors.empty()) return false;
    placer_->outside(report_.pipeline);
    return true;
  }

  // The meta's tied parameters, by the planner's indexes (planner_source's order).
  std::vector<TiedGroup> tied() const {
    if (meta_.tied_pairs.empty()) return {};
    std::unordered_map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < to_plan_.size(); ++i)
      index.emplace(report_.params[to_plan_[i]].fqn, i);
    for (std::size_t k = 0; k < report_.uncovered.size(); ++k) {
      index.emplace(report_.uncovered[k].fqn, to_plan_.size() + k);
    }
    return report_detail::tied_groups(
        meta_, *placer_, [&index](std::string_view fqn) -> std::optional<std::size_t> {
          const auto it = index.find(fqn);
          return it == index.end() ? std::nullopt : std::optional(it->second);
        });
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
          mesh_.use(a.axis, a.placement.has_dim(),
                    [&] { return pointer_join(pointer_of(planned), a.axis); });
        }
        planned_.push_back(planned);  // repeats are dropped by look_up_params
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
      if (p.info != nullptr) p.model_index = cursor - 1;
      std::size_t& first = p.info != nullptr
                               ? first_plan_[cursor - 1]
                               : absent.try_emplace(p.param->fqn, kNone).first->second;
      if (first != kNone) {
        report_.findings.push_back(make_finding(
            finding_rule("HPF505"), meta_file_, pointer_of(p),
            "parameter " + quote_for_diagnostic(p.param->fqn) + " is already planned at " +
                pointer_of(planned_[first]) + "; counted once"));
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
      if (counts_.missing_dtypes++ == 0) counts_.first_missing_dtype = std::string(fqn);
      return 2;
    }
    if (*p.dtype != last_dtype_ || !last_size_) {
      last_dtype_ = *p.dtype;  // parameters of one model mostly share a dtype
      last_size_ = dtype_element_size(*p.dtype);
    }
    const std::optional<std::uint64_t> size = last_size_;
    if (!size) {
      add(finding_rule("HPF510"), model_.file, pointer_join(model_.parameter_pointer(fqn), "dtype"),
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
    const Optimizer optimizer = accounting().optimizer;
    const std::string per_element = optimizer == Optimizer::kNone
                                        ? std::to_string(unit) + "-byte elements"
                                        : std::to_string(unit) +
                                              " bytes per element with --optimizer " +
                                              std::string(optimizer_name(optimizer));
    add(finding_rule("HPF512"), model_.file, model_.parameter_pointer(fqn),
        "parameter " + quote_for_diagnostic(fqn) + " of shape " + shape_text(p.shape) + " and " +
            per_element + " needs more than 2^64-1 bytes");
    return false;
  }

  // The accounting of one parameter's elements: what ZeRO keeps and splits of each.
  ElementCost cost_of(const ModelParameter& p, std::uint64_t element) const {
    return element_cost(p.dtype.value_or(kMissingDtype), element, p.requires_grad, accounting());
  }

  void measure(const PlannedParam& planned) {
    const MetaParam& param = *planned.param;
    const ModelParameter* info = planned.info;
    if (info == nullptr) {
      ++missing_;
      add(finding_rule("HPF303"), meta_file_, pointer_of(planned),
          "parameter " + quote_for_diagnostic(param.fqn) + " is not in the model (" + model_.file +
              ")");
      return;
    }
    const std::optional<std::uint64_t> element = element_size(param.fqn, *info);
    if (!element) return;
    const ElementCost cost = cost_of(*info, *element);
    std::uint64_t full = 0;
    if (!full_bytes(param.fqn, *info, cost.total(), full)) return;

    const std::size_t dims_at = report_.local_dims.size();
    report_.local_dims.insert(report_.local_dims.end(), info->shape.begin(), info->shape.end());
    const std::span<std::uint64_t> local(report_.local_dims.data() + dims_at, info->shape.size());
    const std::size_t axes_at = report_.applied_axes.size();
    ParamReport out;
    out.fqn = param.fqn;
    out.boundary = planned.boundary->fqn;
    out.info = info;
    out.replicated = true;
    out.stage = placer_->position(param.fqn, planned.model_index);
    bool valid = geometry_.apply(planned, info->shape, local, report_.applied_axes, out.replicated,
                                 report_.findings);
    out.local_shape = local;
    out.axes = {report_.applied_axes.data() + axes_at, report_.applied_axes.size() - axes_at};
    const bool expert = report_detail::is_expert(accounting().layout, param);
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
    const ZeroSharding& zero = accounting().zero;
    out.rank0_bytes = zero_rank0_bytes(
        out.local_shape, cost,
        report_detail::zero_group_of(zero, mesh_.sizes(), &param, expert, report_.rank0_zero),
        zero_split_dim(zero, expert, out.local_shape.size()));
    // Saturates as the totals do; the rank-0 total then overflows too and says so.
    chunking::saturating_add(report_.boundaries[planned.boundary_report].rank0_bytes,
                             out.rank0_bytes);
    report_.params.push_back(out);
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
        return CapacityParam{u.fqn,           u.shape, u.dtype.value_or(kMissingDtype),
                             u.requires_grad, {},      u.stage};
      }
      const ParamReport& p = report_.params[to_plan_[i]];
      for (const ReportAxis a : p.axes) scratch_.push_back({a->axis, a->placement});
      return CapacityParam{
          p.fqn,    p.info->shape, p.info->dtype.value_or(kMissingDtype), p.info->requires_grad,
          scratch_, p.stage};
    };
    return source;
  }

  // Upstream's coverage rule (CoverageIndex): a model param is covered by a planned FQN
  // equal to its name, which look_up_params found, or by one that is a dotted prefix of
  // it; the prefix index is built only when some param is not matched by name.
  bool covered(std::size_t k, std::string_view fqn) {
    if (first_plan_[k] != std::numeric_limits<std::size_t>::max()) return true;
    if (!coverage_) coverage_.emplace(coverage_of(meta_));
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
      if (!full_bytes(fqn, info, cost.total(), bytes)) continue;
      if (info.requires_grad) ++counts_.uncovered_trainable;
      // Whole on every rank but for ZeRO: a parameter with no placement.
      const std::uint64_t rank0 =
          zero_rank0_bytes(info.shape, cost,
                           report_detail::zero_group_of(accounting().zero, mesh_.sizes(), nullptr,
                                                        false, report_.rank0_zero));
      report_.uncovered.push_back(UncoveredParam{fqn, info.shape, info.dtype, bytes, rank0,
                                                 info.requires_grad, placer_->position(fqn, k)});
    }
  }

  const FrozenMeta& meta_;
  const std::string& meta_file_;
  const ModelTree& model_;
  const ReportPlanOptions& plan_;
  report_detail::ReportMesh mesh_;
  report_detail::ParamGeometry geometry_;
  std::optional<report_detail::StagePlacer> placer_;  // set before any parameter is measured
  std::optional<CoverageIndex> coverage_;
  Report report_;
  std::vector<PlannedParam> planned_;
  std::vector<std::size_t> first_plan_;  // per model param: the plan of its name, or max
  std::string_view last_dtype_;          // element_size's last lookup
  std::optional<std::uint64_t> last_size_;
  // What the planner gets, in order: the planned params every check accepted (indexes of
  // report_.params), then every uncovered one (whole on every rank).
  std::vector<std::size_t> to_plan_;
  std::vector<CapacityPlacement> scratch_;  // the placements of the one param made last
  report_detail::MeasureCounts counts_;
  std::size_t missing_ = 0;  // planned parameters the model lacks
};

}  // namespace

bool Report::has_errors() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

Report build_report(const FrozenMeta* meta, const ModelTree& model,
                    const std::optional<std::vector<AxisSize>>& mesh, const ReportPlanOptions& plan,
                    std::optional<std::size_t> sorted_params) {
  if (meta != nullptr) return ReportBuilder(*meta, model, false, plan).build(mesh, sorted_params);
  // No META: an empty plan, whose report views nothing of it.
  const FrozenMeta empty;
  return ReportBuilder(empty, model, true, plan).build(mesh, sorted_params);
}

}  // namespace hpfreeze
