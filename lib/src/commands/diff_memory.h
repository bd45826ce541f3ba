#pragma once
// The memory lines of diff --model (hpfreeze/commands/diff_command.h, DiffMemory): report's
// pass on both metas with one model, reduced to the figures of their mesh.

#include "capacity/capacity_change.h"
#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/commands/diff_command.h"
#include "meta/meta.h"

namespace hpfreeze {

// Each meta's report (build_report, with `request`'s mesh and plan) on `model`; each meta
// also knows the axes only the other names, as replica axes, so that a mesh axis one plan
// adds holds replicas in the other. Errors: the reports' usage errors (kIo), each once.
// `warnings` gets one per meta whose report has error findings.
Expected<MemoryChange> count_memory(const FrozenMeta& old_meta, const FrozenMeta& new_meta,
                                    const ModelTree& model, const DiffMemory& request,
                                    Diagnostics& warnings);

}  // namespace hpfreeze
