#pragma once
// What the capacity planner adds to a report (docs/capacity.md): the report pass's options,
// which `hpfreeze report`'s flags set.

#include <string>
#include <vector>

#include "hpfreeze/capacity/capacity_args.h"

namespace hpfreeze {

struct ReportPlanOptions {
  std::vector<AxisSweep> sweeps;  // one per axis
  // Without --expert-parallel the report picks the layout: folded unless the meta's
  // mesh_dim_names names ep.
  Accounting accounting;
  MeshFilter filter;
  bool allow_uncovered = false;  // uncovered trainable params: warning instead of error
  // --replica-axis: axes no input names that may be in the mesh, holding replicas.
  std::vector<std::string> replica_axes;
  // Finding codes (hpfreeze/spec/finding_codes.h) whose findings the report leaves out, as
  // if their rules had not run: not shown, not counted (the findings line, the summary, the
  // exit status, an answer held back for errors). A meta that does not decode is refused
  // whatever it says. A code the findings table lacks is a usage error.
  std::vector<std::string> silenced = {};
};

}  // namespace hpfreeze
