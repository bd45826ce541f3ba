#pragma once
// The capacity planner's part of a report (docs/capacity.md), apart from the builder
// (build_report.cc): running it on the report's mesh or sweep, and what its result adds
// to the findings.

#include <cstddef>
#include <string>
#include <vector>

#include "capacity/capacity.h"
#include "report/report.h"
#include "report/report_axes.h"

namespace hpfreeze::report_detail {

struct PlanContext {
  const std::string& meta_file;
  const std::string& model_file;
  // The parameters the planner counts, made one at a time: the planned ones every check
  // accepted, then every uncovered one (whole on every rank but for ZeRO).
  CapacityParamSource source;
  const std::vector<AxisInfo>& axes;  // every axis a placement names
  std::size_t missing = 0;            // planned parameters the model lacks
  StackPlan pipeline;                 // the layer stack and the tied parameters
};

// Runs the planner on the report's mesh, or on every mesh of the sweep: report.capacity,
// or the findings or usage errors that say why it could not run (every mesh refused too).
void plan_meshes(Report& report, const ReportPlanOptions& plan, const PlanContext& context);

// What follows from the planner's result: a note per swept axis that shards nothing, notes
// on a budget that looks mistyped or is in powers of 1000, the error of pp > 1 with no
// layer stack, the answer withheld while an error finding stands, a note on an answer
// within 5 % of the budget, and the error line that says why no mesh is usable.
void conclude_plan(Report& report, const ReportPlanOptions& plan, const PlanContext& context);

}  // namespace hpfreeze::report_detail
