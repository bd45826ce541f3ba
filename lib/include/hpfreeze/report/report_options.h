#pragma once
// What the capacity planner adds to a report (docs/capacity.md): the report pass's options,
// which `hpfreeze report`'s flags set.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/capacity/capacity_args.h"

namespace hpfreeze {

struct ReportPlanOptions {
  std::vector<AxisSweep> sweeps;  // one per axis
  Optimizer optimizer = Optimizer::kNone;
  ZeroSharding zero;             // --zero, --zero-axis
  bool zero_axes_named = false;  // --zero-axis was given
  // --expert-parallel; nullopt: folded unless the meta's mesh_dim_names names ep.
  std::optional<ExpertLayout> expert_parallel;
  std::optional<std::uint64_t> budget;
  std::string budget_text;       // --budget as given, for the note on a budget that looks mistyped
  bool allow_uncovered = false;  // uncovered trainable params: warning instead of error
  bool fits_only = false;        // list the usable meshes only
  // --replica-axis: axes no input names that may be in the mesh, holding replicas.
  std::vector<std::string> replica_axes;
};

}  // namespace hpfreeze
