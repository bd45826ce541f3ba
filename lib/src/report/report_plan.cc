// The capacity planner's part of a report (report_plan.h).
#include "report/report_plan.h"

#include <algorithm>
#include <string_view>
#include <utility>

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
    if (!m.indivisible || !m.indivisible->dense_region()) least = std::min(least, m.max_rank_bytes);
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

}  // namespace

void plan_meshes(Report& report, const ReportPlanOptions& plan, const PlanContext& context) {
  const CapacityRequest request{{},
                                context.source,
                                report.axis_order,
                                report.mesh,
                                plan.sweeps,
                                report.capacity.accounting,
                                report.capacity.filter};
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
      // What the planner cannot count exactly (report_plan.h): the meta's finding.
      report.findings.push_back(make_finding(finding_rule("HPF513"),
                                             d.file.empty() ? context.meta_file : d.file,
                                             std::move(d.pointer), std::move(d.message)));
    }
    return;
  }
  report.capacity = std::move(*result);  // the same settings, now with the meshes
}

void conclude_plan(Report& report, const ReportPlanOptions& plan, const PlanContext& context) {
  if (!report.capacity.planned()) return;
  CapacityResult& cap = report.capacity;
  note_swept_axes_that_shard_nothing(report, plan, context);
  note_mistyped_budget(report);
  // No answer line while an input is in error: the numbers miss what the error left out.
  const std::size_t errors = static_cast<std::size_t>(
      std::count_if(report.findings.begin(), report.findings.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::kError; }));
  if (errors > 0 && capacity_answer(cap) != nullptr) {
    cap.no_answer = context.missing > 0
                        ? plural(context.missing, "planned parameter") +
                              (context.missing == 1 ? " is" : " are") + " not in the model"
                        : "the inputs have " + plural(errors, "error") + " (on stderr)";
  }
  // No usable mesh is an error that says why: the closest mesh and by how much, or the
  // first mesh's first parameter that does not divide. The one mesh of a report without
  // --sweep that does not divide has its findings already, which agree with it, unless it
  // cannot be laid out at all.
  if (capacity_exit_code(cap) == 0) return;
  const MeshCapacity& first = cap.meshes.front();
  if (!cap.swept && !first.divisible() && !first.indivisible->dense_region()) return;
  report.findings.push_back(
      make_finding(finding_rule("HPF514"), context.meta_file, "", capacity_answer_text(cap)));
}

}  // namespace hpfreeze::report_detail
