#pragma once
// How the planner's settings (Accounting and MeshFilter, capacity_args.h) are shown, in the
// text header and in the JSON side by side: a new setting shows in both from this file.

#include <string>

#include "capacity/capacity.h"
#include "json/json_stream.h"

namespace hpfreeze {

// The text header's settings, after "N params, SIZE whole on one device": ", optimizer adam,
// recipe megatron, ZeRO stage 1 (...), budget 80.0 GiB\n", then the line on ep when some mesh
// or placement names it.
std::string settings_text(const CapacityResult& result);

// Into an open object: "optimizer", "recipe" (not dtensor only), "budget_bytes",
// "reserve_bytes", "zero" and "expert_parallel"; of a result whose planner could not run, the
// optimizer and the budget null and ZeRO's defaults.
void write_settings_json(JsonStream& w, const CapacityResult& result);

// Whether the expert view is shown: the layout folded and some mesh or placement naming ep
// (without ep the folded layout changes nothing).
bool expert_view(const CapacityResult& result);

}  // namespace hpfreeze
