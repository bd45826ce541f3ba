#pragma once
// The JSON of a capacity result (render_capacity_json) and the pieces of it that report
// --json writes too (docs/formats.md, "report --json"), in one place so both say the same.

#include "capacity/capacity.h"
#include "json/json_stream.h"

namespace hpfreeze {

// {"mesh", "devices", "max_rank_bytes", "ties"} of the answer, or null without one.
void write_capacity_answer(JsonStream& w, const CapacityResult* result);

// The array of the meshes shown (all, or the usable ones with fits_only), each with "mesh",
// "devices", the worst and best rank, "divisible", "indivisible", "fits" and
// "over_by_bytes" (and the folded layout's expert view); [] without a result.
void write_capacity_meshes(JsonStream& w, const CapacityResult* result);

// {"stage", "axes", "expert_axis"}, and {"layout", "from"}: how the result was counted
// (the defaults without a result).
void write_capacity_zero(JsonStream& w, const CapacityResult* result);
void write_expert_parallel(JsonStream& w, const CapacityResult* result);

}  // namespace hpfreeze
