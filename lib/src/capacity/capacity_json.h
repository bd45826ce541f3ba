#pragma once
// The JSON of a capacity result: the planner's members of report --json (docs/formats.md,
// "report --json"; docs/capacity.md, "JSON"), written in one place.

#include "capacity/capacity.h"
#include "json/json_stream.h"

namespace hpfreeze {

// Into an open object: "optimizer", "budget_bytes", "zero", "expert_parallel", "swept",
// "answer" and "meshes" (all, or with --fits-only the usable ones). Of a result whose planner
// could not run (!planned()): the optimizer and the budget null, ZeRO's defaults, no answer
// and no mesh; the layout and "swept" as set.
void write_capacity_json(JsonStream& w, const CapacityResult& result);

// {"tp": 4, "ep": 8}: a mesh's sizes in its axis order, as "mesh" of a meshes entry.
void write_mesh_json(JsonStream& w, const Mesh& mesh);

}  // namespace hpfreeze
