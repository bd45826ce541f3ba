#pragma once
// The freeze passes and the meta assembly (docs/formats.md, "The meta").

#include <memory>
#include <string>
#include <vector>

#include "hpfreeze/command_result.h"
#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

struct FreezeOptions {
  bool verify = true;        // check planned params against the model's `parameters`
  bool strict = false;       // warnings (negative dims) become errors
  bool allow_empty = false;  // accept a plan without modules
};

// The JSON-safe projection of a plan. Views point into the plan's document and into
// `strings`, which owns every string the passes made (canonical placements, joined FQNs)
// and copies of the model's class names: the model dump may go once the plan is frozen.
struct FrozenPlan {
  StringArena strings;
  Json param_plan = JsonObject{};
  Json injections = JsonArray{};
  Json tied_pairs = JsonArray{};
  Json special_handlers = JsonObject{};
  Json frozen_sharded_params = JsonArray{};
  Json boundary_classes = JsonObject{};
  Json mesh_dim_names;  // null when the plan names no axes
};

struct FreezeResult {
  FrozenPlan frozen;
  Diagnostics warnings;
};

Expected<FreezeResult> freeze_plan(const PlanDump& plan, const ModelTree& model,
                                   const FreezeOptions& options);

// freeze_plan in two steps: the constructor does all the work that needs only the plan
// (param_plan, injections, frozen_sharded_params, ...), so that it can run while the model
// dump is still being read; finish() adds what needs the model (boundary_classes, the
// checks against its parameters). Same result and diagnostics as freeze_plan. `plan`
// must outlive the freezer.
class PlanFreezer {
 public:
  PlanFreezer(const PlanDump& plan, const FreezeOptions& options);
  PlanFreezer(PlanFreezer&&) noexcept;
  PlanFreezer& operator=(PlanFreezer&&) = delete;
  ~PlanFreezer();

  Expected<FreezeResult> finish(const ModelTree& model) &&;

 private:
  const PlanDump& plan_;
  FreezeOptions options_;
  bool empty_ = false;  // a plan without modules, not allowed: finish() says so
  FreezeResult result_;
  std::unique_ptr<ErrorList> errors_;
};

// The expand pass alone: FQNs of every param with a Shard, StridedShard or Partial on
// some axis, de-duplicated and sorted by code point.
std::vector<std::string> expand_sharded_params(const PlanDump& plan);

// The whole CodegenMeta: defaults, then `base` (the --base file or the plan's meta; may be
// null), then the frozen fields with covered.sharding_plan = true. The frozen fields are
// moved into the result; `frozen.strings` must outlive it.
Json assemble_meta(FrozenPlan& frozen, const Json* base);

}  // namespace hpfreeze
