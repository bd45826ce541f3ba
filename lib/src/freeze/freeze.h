#pragma once
// The freeze passes and the meta assembly (docs/formats.md, "The meta").

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dumps/plan.h"
#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/freeze/freeze_options.h"
#include "json/json.h"

namespace hpfreeze {

// The meta's param_plan (docs/formats.md, "The meta") in the order it is written: boundaries
// sorted by FQN, each one's params sorted by name, each param's axes sorted by axis name
// (code point order, as Python's sort_keys). Flat tables instead of a Json tree: one
// record per param and per axis, no allocation per param, and the meta writer walks them
// without sorting or visiting members.
struct FrozenAxis {
  std::string_view axis;
  std::string_view placement;  // canonical string
};
struct FrozenParam {
  std::string_view name;
  std::size_t first_axis = 0;  // into FrozenParamPlan::axes
  std::size_t axis_count = 0;
  bool sharded = false;  // Shard, StridedShard or Partial on some axis
};
struct FrozenBoundary {
  std::string_view fqn;
  bool has_params = false;      // `params` is written (as {} when empty)
  std::size_t first_param = 0;  // into FrozenParamPlan::params
  std::size_t param_count = 0;
  JsonObject fields;  // the other param_plan members, in kSpecFields order
};
struct FrozenParamPlan {
  std::vector<FrozenBoundary> boundaries;
  std::vector<FrozenParam> params;
  std::vector<FrozenAxis> axes;
};

// The JSON-safe projection of a plan. Views point into the plan's document and into
// `strings`, which owns every string the passes made (canonical placements, joined FQNs)
// and copies of the model's class names: the model dump may go once the plan is frozen.
struct FrozenPlan {
  StringArena strings;
  FrozenParamPlan param_plan;
  Json injections = JsonArray{};
  Json tied_pairs = JsonArray{};
  Json special_handlers = JsonObject{};
  std::vector<std::string_view> frozen_sharded_params;  // sorted, without duplicates
  Json boundary_classes = JsonObject{};
  Json mesh_dim_names;  // null when the plan names no axes
};

struct FreezeResult {
  FrozenPlan frozen;
  Diagnostics warnings;
};

// The checks of a plan against the model's parameters that finish() makes when
// FreezeOptions::verify is set and the model lists its parameters: every planned
// parameter is in the model, every dim is within its parameter's rank, every tied
// parameter exists (their errors, in that order); and the trainable parameters no planned
// key covers (dumps/coverage.h), one warning (an error under FreezeOptions::strict).
struct ModelChecks {
  ErrorList errors;
  std::vector<std::size_t> uncovered;  // into ModelTree::parameters, in model order
};
ModelChecks check_against_model(const PlanDump& plan, const ModelTree& model,
                                const FreezeOptions& options);

// The freeze pass in two steps: the constructor does all the work that needs only the plan
// (param_plan, injections, frozen_sharded_params, ...), so that it can run while the model
// dump is still being read; finish() adds what needs the model (boundary_classes, the
// checks against its parameters). Same result and diagnostics as freeze_plan
// (freeze/reference.h). `plan` must outlive the freezer.
class PlanFreezer {
 public:
  PlanFreezer(const PlanDump& plan, const FreezeOptions& options);
  PlanFreezer(PlanFreezer&&) noexcept;
  PlanFreezer& operator=(PlanFreezer&&) = delete;
  ~PlanFreezer();

  Expected<FreezeResult> finish(const ModelTree& model) &&;
  // The same, with the checks against the model's parameters already made (they need
  // neither the freezer nor its tables, so they may run while it is being built).
  Expected<FreezeResult> finish(const ModelTree& model, ModelChecks checks) &&;

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

// The meta's assembly (assemble_meta, freeze/reference.h) in two steps, without a Json tree
// of param_plan and frozen_sharded_params:
// meta_defaults_and_base(base) is the meta's defaults with the members of `base` (may be
// null; strings still view what it views) and covered.sharding_plan = true; encode_meta
// then writes the bytes of encode_python_json(assemble_meta(frozen, base)), the frozen
// fields taking their places, straight from the frozen tables.
JsonObject meta_defaults_and_base(const Json* base);
// A large meta is written in two halves at once where `concurrency` has a second CPU.
std::string encode_meta(const FrozenPlan& frozen, const JsonObject& defaults_and_base,
                        Concurrency concurrency = {});

}  // namespace hpfreeze
