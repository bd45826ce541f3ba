#pragma once
// The freeze passes (SPEC §4) and the meta assembly (SPEC §5).

#include <string>
#include <vector>

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

struct FreezeOptions {
  bool verify = true;        // check planned params against the model's `parameters`
  bool strict = false;       // warnings (negative dims) become errors
  bool allow_empty = false;  // accept a plan without modules
};

// The JSON-safe projection of a plan. Views point into the decoded documents and into
// `strings`, which owns every string the passes made (canonical placements, joined FQNs).
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

// At most this many cross-file errors are listed; a last line counts the rest.
inline constexpr std::size_t kMaxReportedErrors = 100;

Expected<FreezeResult> freeze_plan(const PlanDump& plan, const ModelTree& model,
                                   const FreezeOptions& options);

// The expand pass alone: FQNs of every param with a Shard, StridedShard or Partial on
// some axis, de-duplicated and sorted by code point.
std::vector<std::string> expand_sharded_params(const PlanDump& plan);

// The whole CodegenMeta: defaults, then `base` (the --base file or the plan's meta; may be
// null), then the frozen fields with covered.sharding_plan = true. The frozen fields are
// moved into the result; `frozen.strings` must outlive it.
Json assemble_meta(FrozenPlan& frozen, const Json* base);

}  // namespace hpfreeze
