#pragma once
// The reference paths the tests, fuzz targets and benchmarks hold the production ones
// against: freeze in one step, and the meta as a Json tree. No command calls them; run_freeze
// uses PlanFreezer and encode_meta (freeze/freeze.h), which must give the same results.

#include "dumps/plan.h"
#include "freeze/freeze.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/freeze/freeze_options.h"
#include "json/json.h"

namespace hpfreeze {

// PlanFreezer(plan, options).finish(model): the plan's part and the model's in one call.
inline Expected<FreezeResult> freeze_plan(const PlanDump& plan, const ModelTree& model,
                                          const FreezeOptions& options) {
  return PlanFreezer(plan, options).finish(model);
}

// The whole CodegenMeta as a tree: defaults, then `base` (the --base file or the plan's meta;
// may be null), then the frozen fields with covered.sharding_plan = true.
// encode_python_json of it is encode_meta's bytes. The frozen fields are moved into the
// result; `frozen.strings` must outlive it.
Json assemble_meta(FrozenPlan& frozen, const Json* base);

}  // namespace hpfreeze
