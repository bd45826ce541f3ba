#pragma once
// Rank 0's piece of one planned parameter in the report pass (build_report.cc): its
// placements applied in placement order with the planner's torch.chunk geometry
// (report_local.h), and the findings on a dim that does not divide or does not exist.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dumps/plan.h"
#include "meta/meta.h"
#include "report/report.h"
#include "report/report_axes.h"
#include "report/report_local.h"

namespace hpfreeze::report_detail {

// A parameter of the param_plan, with where the report counts it.
struct PlannedParam {
  const MetaParam* param;
  const MetaBoundary* boundary;
  std::size_t boundary_report;           // index into Report::boundaries
  const ModelParameter* info = nullptr;  // nullptr: not in the model
  std::size_t model_index = 0;           // of `info` among the model's parameters
};

// The pointer of a planned param's axes object in the meta; only diagnostics need it, so it
// is built only for them.
std::string pointer_of(const PlannedParam& p);

class ParamGeometry {
 public:
  // `mesh` gives each axis's rank and size (ordered); findings are located in `meta_file`.
  ParamGeometry(const ReportMesh& mesh, const std::string& meta_file)
      : mesh_(mesh), meta_file_(meta_file) {}

  // Applies the placements of `planned` (in the model with `shape`) in placement order:
  // rank 0's size of each dim into `local` (which holds `shape` on entry), the placements
  // in that order appended to `applied`, a finding per dim that does not divide or is out
  // of range into `findings`. `replicated` is set false when one shards on an axis of size
  // > 1. False when a dim is out of range.
  bool apply(const PlannedParam& planned, std::span<const std::uint64_t> shape,
             std::span<std::uint64_t> local, std::vector<ReportAxis>& applied, bool& replicated,
             Diagnostics& findings);

 private:
  bool apply_axis(const PlannedParam& planned, const MetaAxisPlacement& a, std::uint64_t n,
                  std::span<const std::uint64_t> shape, std::span<std::uint64_t> local, bool empty,
                  bool& replicated, Diagnostics& findings);

  const ReportMesh& mesh_;
  const std::string& meta_file_;
  // Scratch of apply(): a parameter's placements with their axes, in the axes' order.
  std::vector<std::pair<const MetaAxisPlacement*, const AxisInfo*>> order_;
  LocalChunks chunks_;  // of the parameter apply() is at
};

}  // namespace hpfreeze::report_detail
