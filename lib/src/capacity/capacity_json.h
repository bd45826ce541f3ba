#pragma once
// The JSON of a capacity result (render_capacity_json) and the pieces of it that report
// --json writes too (docs/formats.md, "report --json"), in one place so both say the same.

#include "hpfreeze/capacity.h"
#include "json/json_stream.h"

namespace hpfreeze {

// {"mesh", "devices", "max_rank_bytes"} of the answer, or null without one.
void write_capacity_answer(JsonStream& w, const MeshCapacity* answer);

// The array of the meshes shown (all, or the usable ones with fits_only), each with "mesh",
// "devices", the worst and best rank, "divisible", "indivisible", "fits" and
// "over_by_bytes"; [] without a result.
void write_capacity_meshes(JsonStream& w, const CapacityResult* result);

}  // namespace hpfreeze
