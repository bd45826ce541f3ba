#pragma once
// The last step of the report pass (build_report.cc), once every parameter is measured: the
// byte totals, the findings that sum up several parameters, and the order of the lists.

#include <cstddef>
#include <optional>
#include <string>

#include "dumps/plan.h"
#include "report/report.h"

namespace hpfreeze::report_detail {

// What the builder counted while measuring, beside the report itself.
struct MeasureCounts {
  std::size_t missing_dtypes = 0;   // parameters without a dtype, counted as bfloat16
  std::string first_missing_dtype;  // the FQN of the first
  std::size_t uncovered_trainable = 0;
};

// The four byte totals of `report` (rank0, replicated, unsharded, uncovered), each
// saturating at 2^64-1 with an error when it does; one warning on the parameters without a
// dtype, and one finding on the uncovered ones (an error when a trainable one is and
// --allow-uncovered is not given).
void add_totals(Report& report, const MeasureCounts& counts, const std::string& meta_file,
                const ModelTree& model, const ReportPlanOptions& plan);

// Puts the lists of a report in their documented order (report.h): params by
// rank-0 bytes, then FQN (only the first `sorted_params` when given), boundaries the same,
// uncovered params by bytes, then FQN, findings by severity (stable).
void sort_report(Report& report, std::optional<std::size_t> sorted_params);

}  // namespace hpfreeze::report_detail
