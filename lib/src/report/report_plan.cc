// The capacity planner's part of a report (report_plan.h).
#include "report/report_plan.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "capacity/accounting.h"
#include "json/output_name.h"
#include "spec/dtypes.h"
#include "spec/findings.h"

namespace hpfreeze::report_detail {
namespace {

bool listed(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A swept axis no placement shards (and that ZeRO does not split over) only multiplies
// the devices: one note says so, rather than rows that differ in nothing else.
void note_swept_axes_that_shard_nothing(Report& report, const ReportPlanOptions& plan,
                                        const PlanContext& context) {
  const CapacityResult& cap = report.capacity;
  const ZeroSharding& zero = cap.accounting.zero;
  const bool folded = cap.accounting.layout == ExpertLayout::kFolded;
  // Folded, every axis of the dense region sizes edp, the experts' ZeRO group.
  const bool expert_zero =
      folded && std::any_of(cap.meshes.begin(), cap.meshes.end(),
                            [](const MeshCapacity& m) { return m.zero.expert > 1; });
  for (const AxisSweep& s : plan.sweeps) {
    if (zero.stage > 0 && listed(zero.axes, s.axis)) continue;
    if (expert_zero && s.axis != kExpertAxis && s.axis != kStageAxis) continue;
    if (s.axis == kStageAxis) continue;  // pp splits the layer stack
    const AxisInfo* axis = find_axis(std::span(context.axes), s.axis);
    if (axis != nullptr && axis->shards) continue;
    const bool ep = folded && s.axis == kExpertAxis;
    report.findings.push_back(make_finding(
        finding_rule("HPF504"), context.meta_file,
        axis != nullptr ? axis->first_use : std::string(),
        "axis " + quote_for_diagnostic(s.axis) + " shards no parameter: " +
            (ep ? "in the folded layout its sizes change nothing but the meshes it divides"
                : "its sizes only multiply the devices")));
  }
}

// A budget under 1 MiB, or under every mesh's worst rank, given without a unit of GiB or
// more, is most likely a unit left out: `--budget 80` is 80 bytes.
void note_mistyped_budget(Report& report) {
  const MeshFilter& filter = report.capacity.filter;
  if (!filter.budget) return;
  const std::uint64_t budget = *filter.budget;
  std::uint64_t least = UINT64_MAX;
  for (const MeshCapacity& m : report.capacity.meshes) {
    if (m.laid_out()) least = std::min(least, m.max_rank_bytes);
  }
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  const bool small = budget < kMiB;
  const bool below = least != UINT64_MAX && budget < least;
  const std::string text = filter.budget_text.empty() ? std::to_string(budget) : filter.budget_text;
  const std::size_t digits = text.find_first_not_of("0123456789.");
  const std::string_view unit =
      digits == std::string::npos ? std::string_view() : std::string_view(text).substr(digits);
  const bool large_unit =
      !unit.empty() && std::string_view("GTPE").find(unit[0]) != std::string_view::npos;
  if ((!small && !below) || large_unit) return;
  std::string message = "--budget " + text + " is " + format_byte_size(budget);
  if (small) message += ", under 1 MiB";
  if (below)
    message += ", below every mesh's worst rank (the least is " + format_byte_size(least) + ")";
  message += "; did you mean " + text.substr(0, digits) + "GiB?";
  // About a flag: no file.
  report.findings.push_back(make_finding(finding_rule("HPF515"), "", "", std::move(message)));
}

// "80GB" read as powers of 1000 where a device's memory is sold in powers of 1024: a note
// with the GiB reading, for a unit of G or more.
void note_decimal_budget(Report& report) {
  const MeshFilter& filter = report.capacity.filter;
  const std::string& text = filter.budget_text;
  if (!filter.budget || text.empty()) return;
  const std::size_t digits = text.find_first_not_of("0123456789.");
  if (digits == std::string::npos) return;
  const std::string_view unit = std::string_view(text).substr(digits);
  const std::size_t power = std::string_view("GTPE").find(unit[0]);
  if (power == std::string_view::npos || unit.find('i') != std::string_view::npos) return;
  const std::string number = text.substr(0, digits);
  report.findings.push_back(
      make_finding(finding_rule("HPF518"), "", "",
                   "--budget " + text + " is " + number + " x 10^" + std::to_string(9 + 3 * power) +
                       " bytes, " + format_byte_size(*filter.budget) + "; a device sold as " +
                       number + " " + std::string(1, unit[0]) + "B mostly has " + number + " " +
                       unit[0] + "iB: write " + number + unit[0] + "iB"));
}

// "99.6 %": `part` of `whole` in tenths of a percent, rounded down.
// Whether some finding of `findings` is of the rule `code`.
bool has_code(const Diagnostics& findings, std::string_view code) {
  return std::any_of(findings.begin(), findings.end(),
                     [code](const Diagnostic& d) { return d.code == code; });
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  __extension__ using U128 = unsigned __int128;
  const auto tenths = static_cast<std::uint64_t>(U128{part} * 1000 / (whole == 0 ? 1 : whole));
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " %";
}

// An answer within 5 % of what model states may use leaves almost nothing for what fits
// does not count (activations, buffers): a note says how much is left.
void note_answer_near_budget(Report& report) {
  const CapacityResult& cap = report.capacity;
  const MeshCapacity* answer = capacity_answer(cap);
  const std::optional<std::uint64_t> budget = cap.filter.states_budget();
  if (answer == nullptr || !budget) return;
  __extension__ using U128 = unsigned __int128;
  if (U128{answer->max_rank_bytes} * 100 <= U128{*budget} * 95) return;
  const std::string of = cap.filter.reserve > 0
                             ? "the " + format_byte_size(*budget) + " model states may use"
                             : "the " + format_byte_size(*budget) + " budget";
  report.findings.push_back(
      make_finding(finding_rule("HPF519"), "", "",
                   "the answer, " + format_mesh(answer->mesh) + ", uses " +
                       percent(answer->max_rank_bytes, *budget) + " of " + of +
                       " on its worst rank: " + format_byte_size(*budget - answer->max_rank_bytes) +
                       " is left for activations and buffers, which fits does not count" +
                       (cap.filter.reserve > 0 ? "" : "; --reserve SIZE keeps room for them")));
}

// A folded expert's piece whose split dim is smaller than its edp group leaves ranks of the
// group without any of its optimizer state, when the recipe chunks it per tensor: one note,
// at rank 0 of the report's mesh, naming the first such tensor.
void note_idle_expert_ranks(Report& report) {
  const Accounting& accounting = report.capacity.accounting;
  const std::uint64_t group = report.rank0_zero.expert;
  if (!state_in_chunks(accounting) || accounting.layout != ExpertLayout::kFolded || group < 2) {
    return;
  }
  const ParamReport* first = nullptr;
  std::size_t more = 0;
  for (const ParamReport& p : report.params) {
    const std::span<const std::uint64_t> local = p.local_shape;
    const bool expert = std::any_of(p.axes.begin(), p.axes.end(), [](ReportAxis a) {
      return a->axis == kExpertAxis && a->placement.has_dim();
    });
    const std::optional<std::uint64_t> size = dtype_element_size(p.dtype().value_or("bfloat16"));
    if (!expert || local.empty() || !size ||
        std::find(local.begin(), local.end(), std::uint64_t{0}) != local.end()) {
      continue;
    }
    const ElementBytes bytes = element_bytes(p.dtype().value_or("bfloat16"), *size,
                                             p.info->requires_grad, accounting.optimizer);
    if (bytes.master + bytes.moments == 0) continue;
    if (local[zero_split_dim(accounting.zero, true, local.size())] >= group) continue;
    if (first == nullptr) {
      first = &p;
    } else {
      ++more;
    }
  }
  if (first == nullptr) return;
  const std::span<const std::uint64_t> local = first->local_shape;
  const std::size_t dim = zero_split_dim(accounting.zero, true, local.size());
  // torch.chunk of fewer rows than ranks gives one row to each of the first ones.
  std::string message = std::to_string(group - local[dim]) + " of " + std::to_string(group) +
                        " ranks of the expert group hold none of " + output_name(first->fqn) +
                        "'s optimizer state";
  if (more > 0) message += " (" + plural(more, "more expert tensor") + " split so)";
  if (dim != 1 && local.size() > 1 && local[1] >= group) {
    message += "; --expert-zero-dim 1 spreads it";
  }
  report.findings.push_back(make_finding(finding_rule("HPF520"), "", "", std::move(message)));
}

// pp > 1 with no stack in the model: every such mesh cannot be laid out, and the run is in
// error.
void no_stack_error(Report& report, const std::string& model_file) {
  if (report.pipeline.stack) return;
  const bool staged = std::any_of(
      report.capacity.meshes.begin(), report.capacity.meshes.end(),
      [](const MeshCapacity& m) { return m.indivisible && m.indivisible->stack_split(); });
  if (!staged) return;
  report.findings.push_back(make_finding(
      finding_rule("HPF517"), model_file, "",
      "pp > 1 splits the layer stack into pipeline stages, and the model has none (no "
      "modules PREFIX.0 .. PREFIX.N outside a numbered module); --pp-stack PREFIX names one"));
}

// Every mesh refused (too many rank classes): a usage error naming the flags that gave the
// sizes, or with the meta's own mesh an error at /parallel_dims.
void every_mesh_refused(Report& report, const ReportPlanOptions& plan, const PlanContext& context) {
  const std::vector<MeshCapacity>& meshes = report.capacity.meshes;
  if (meshes.empty() || !std::all_of(meshes.begin(), meshes.end(),
                                     [](const MeshCapacity& m) { return m.refused.has_value(); })) {
    return;
  }
  std::string flags = report.mesh_source == MeshSource::kFlag ? "--mesh" : "";
  if (!plan.sweeps.empty()) flags += flags.empty() ? "--sweep" : " and --sweep";
  const std::string why = (meshes.size() == 1 ? "" : "every mesh is refused; the first: ") +
                          refused_text(meshes.front());
  if (flags.empty()) {
    // What the planner cannot count exactly, as plan_meshes says of the planner's errors.
    report.findings.push_back(
        make_finding(finding_rule("HPF513"), context.meta_file, "/parallel_dims", why));
  } else {
    report.usage_errors.push_back(make_io_error({}, flags + ": " + why));
  }
}

}  // namespace

void plan_meshes(Report& report, const ReportPlanOptions& plan, const PlanContext& context) {
  const CapacityRequest request{{},
                                context.source,
                                report.axis_order,
                                report.mesh,
                                plan.sweeps,
                                report.capacity.accounting,
                                report.capacity.filter,
                                context.pipeline};
  MeshesProblem problem{};
  auto meshes = enumerate_meshes(request.axis_order, request.fixed, request.sweeps, &problem,
                                 request.accounting.layout);
  if (!meshes) {
    bool usage = false;
    Diagnostic d = mesh_sizes_error(
        std::move(meshes.errors().front()), problem, report.mesh_source == MeshSource::kFlag,
        plan.sweeps,
        report.mesh_source == MeshSource::kParallelDims ? report.mesh : std::vector<AxisSize>{},
        context.meta_file, usage);
    (usage ? report.usage_errors : report.findings).push_back(std::move(d));
    return;
  }
  Expected<CapacityResult> result = plan_capacity(request);
  if (!result) {
    for (Diagnostic& d : result.errors()) {
      // The ZeRO request's own mistakes are usage errors; the rest are the meta's.
      if (d.error_class == ErrorClass::kIo) {
        report.usage_errors.push_back(std::move(d));
        continue;
      }
      if (d.file.empty()) d.file = context.meta_file;
      // A finding of the planner's own rule keeps its code (a placement on pp, HPF516); the
      // rest is what it cannot count exactly (report_plan.h).
      if (d.code.empty()) {
        d = make_finding(finding_rule("HPF513"), std::move(d.file), std::move(d.pointer),
                         std::move(d.message));
      }
      report.findings.push_back(std::move(d));
    }
    return;
  }
  report.capacity = std::move(*result);  // the same settings, now with the meshes
  every_mesh_refused(report, plan, context);
}

void conclude_plan(Report& report, const ReportPlanOptions& plan, const PlanContext& context) {
  if (!report.capacity.planned()) return;
  CapacityResult& cap = report.capacity;
  note_swept_axes_that_shard_nothing(report, plan, context);
  note_mistyped_budget(report);
  note_decimal_budget(report);
  note_idle_expert_ranks(report);
  no_stack_error(report, context.model_file);
  // No answer line while an input is in error: the numbers miss what the error left out. A
  // silenced error (HPF517 just above) holds back nothing.
  const std::size_t errors = static_cast<std::size_t>(
      std::count_if(report.findings.begin(), report.findings.end(), [&plan](const Diagnostic& d) {
        return d.severity == Severity::kError && !is_silenced(d.code, plan.silenced);
      }));
  // The findings here are the shown ones (build_report dropped the silenced), so a silenced
  // missing parameter is not named as the reason.
  const bool missing_shown = has_code(report.findings, "HPF303");
  if (errors > 0 && capacity_answer(cap) != nullptr) {
    cap.no_answer = context.missing > 0 && missing_shown
                        ? plural(context.missing, "planned parameter") +
                              (context.missing == 1 ? " is" : " are") + " not in the model"
                        : "the inputs have " + plural(errors, "error") + " (on stderr)";
  }
  // No usable mesh is an error that says why: the closest mesh and by how much, or the
  // first mesh's first parameter that does not divide. The one mesh of a report without
  // --sweep that does not divide has its findings already (HPF501, unless silenced), which
  // agree with it, unless it cannot be laid out at all. Silenced too, it fails nothing.
  note_answer_near_budget(report);
  if (capacity_exit_code(cap) == 0) return;
  const MeshCapacity& first = cap.meshes.front();
  if (!cap.swept && !first.refused && !first.divisible() && !first.indivisible->no_ranks() &&
      has_code(report.findings, "HPF501")) {
    return;
  }
  report.findings.push_back(
      make_finding(finding_rule("HPF514"), context.meta_file, "", capacity_answer_text(cap)));
}

}  // namespace hpfreeze::report_detail
