// The last step of the report pass (report_totals.h).
#include "report/report_totals.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "capacity/capacity.h"
#include "capacity/chunk_geometry.h"
#include "hpfreeze/base/diagnostic.h"
#include "spec/findings.h"

namespace hpfreeze::report_detail {
namespace {

// Sum that sticks at the maximum and remembers that it did.
struct Total {
  std::uint64_t value = 0;
  bool overflowed = false;
  void add(std::uint64_t v) { overflowed = !chunking::saturating_add(value, v) || overflowed; }
};

}  // namespace

void add_totals(Report& report, const MeasureCounts& counts, const std::string& meta_file,
                const ModelTree& model, const ReportPlanOptions& plan) {
  Total rank0;
  Total replicated;
  Total unsharded;
  Total uncovered;
  for (const ParamReport& p : report.params) {
    rank0.add(p.rank0_bytes);
    unsharded.add(p.full_bytes);
    if (p.replicated) {
      replicated.add(p.rank0_bytes);
      ++report.replicated_params;
    }
  }
  Total uncovered_full;  // for the finding, which gives their size
  for (const UncoveredParam& u : report.uncovered) {
    uncovered.add(u.rank0_bytes);
    uncovered_full.add(u.bytes);
  }
  const std::pair<const char*, Total*> totals[] = {{"rank0_bytes", &rank0},
                                                   {"replicated_bytes", &replicated},
                                                   {"unsharded_bytes", &unsharded},
                                                   {"uncovered_bytes", &uncovered}};
  for (const auto& [name, total] : totals) {
    if (total->overflowed) {
      report.findings.push_back(
          make_finding(finding_rule("HPF512"), meta_file, "",
                       std::string(name) + " exceeds 2^64-1 bytes; it is reported as 2^64-1"));
    }
  }
  report.rank0_bytes = rank0.value;
  report.replicated_bytes = replicated.value;
  report.unsharded_bytes = unsharded.value;
  report.uncovered_bytes = uncovered.value;

  if (counts.missing_dtypes > 0) {
    report.findings.push_back(make_finding(
        finding_rule("HPF511"), model.file, model.parameter_pointer(counts.first_missing_dtype),
        std::to_string(counts.missing_dtypes) + " parameter" +
            (counts.missing_dtypes == 1 ? " has" : "s have") +
            " no dtype, counted as bfloat16 (2 bytes); the first is " +
            quote_for_diagnostic(counts.first_missing_dtype)));
  }
  // Without a meta every parameter is uncovered, and replicated on purpose.
  if (!report.uncovered.empty() && !report.without_meta) {
    const std::size_t n = report.uncovered.size();
    // As `check`: a trainable parameter no plan entry covers is an error (upstream's
    // preflight refuses it) unless --allow-uncovered; frozen ones only warn.
    const bool as_error = counts.uncovered_trainable > 0 && !plan.allow_uncovered;
    Diagnostic& finding =
        report.findings.emplace_back(make_finding(finding_rule("HPF305"), model.file, "", ""));
    if (!as_error) finding.severity = Severity::kWarning;  // the row's one lowering
    finding.message = std::to_string(n) + " model parameter" + (n == 1 ? " is" : "s are") +
                      " not covered by any planned key (" + format_byte_size(uncovered_full.value) +
                      " at full size, " + std::to_string(counts.uncovered_trainable) +
                      " trainable); " + (n == 1 ? "it stays" : "they stay") +
                      " whole on every rank" +
                      (report.capacity.accounting.zero.stage > 0 ? " but for the ZeRO split" : "");
  }
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
