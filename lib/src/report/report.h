#pragma once
// The report pass (docs/cli.md, "report"): what a frozen plan puts on one rank, and
// whether it divides at all; the command that reads its inputs is run_report
// (hpfreeze/commands/report_command.h).
//
// From a decoded meta (its param_plan, mesh_dim_names and parallel_dims) and a model tree
// (shapes and dtypes), compute for every planned parameter the shard held by the rank at
// coordinate 0 of every mesh axis (the largest shard under ceil chunking) and add up the
// bytes. Problems in the inputs become findings; the report is still produced.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capacity/capacity.h"
#include "capacity/pipeline.h"
#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/report/report_options.h"
#include "meta/meta.h"

namespace hpfreeze {

// A mesh is a list of AxisSize (capacity_args.h), as --mesh gives it (parse_mesh_arg,
// capacity_args.h, with the other command-line values).

// Element sizes are spec/dtypes.h's, byte formatting the capacity module's
// (format_byte_size in capacity.h): one table and one formatter for every byte count.

enum class MeshSource { kFlag, kParallelDims, kNone };

// One applied placement of a planned parameter: the decoded meta's own (axis, the text as
// the meta spells it, the parsed placement).
using ReportAxis = const MetaAxisPlacement*;

// The report's strings and shapes are views into the decoded meta and model tree it was
// built from (both must outlive it) or into the Report's own pools below.
struct ParamReport {
  std::string_view fqn;
  std::string_view boundary;
  const ModelParameter* info = nullptr;        // the model tree's entry: shape, dtype
  std::span<const std::uint64_t> local_shape;  // rank 0's piece
  std::span<const ReportAxis> axes;            // in the order they were applied
  std::uint64_t rank0_bytes = 0;
  std::uint64_t full_bytes = 0;
  bool replicated = false;  // no Shard/StridedShard on a mesh axis of size > 1
  StagePosition stage;      // where it sits against the layer stack

  [[nodiscard]] std::span<const std::uint64_t> shape() const { return info->shape; }
  // As the model tree spells it; nullopt when missing.
  [[nodiscard]] std::optional<std::string_view> dtype() const { return info->dtype; }
};

// "tp=S(0) ep=R": the axes in the order they were applied; empty when there are none.
std::string placements_text(const ParamReport& param);

struct BoundaryReport {
  std::string_view fqn;
  std::uint64_t rank0_bytes = 0;
  std::size_t params = 0;
};

struct UncoveredParam {
  std::string_view fqn;
  std::span<const std::uint64_t> shape;  // the model tree's
  std::optional<std::string_view> dtype;
  std::uint64_t bytes = 0;        // full size, with the accounting
  std::uint64_t rank0_bytes = 0;  // what rank 0 holds: `bytes`, less what ZeRO splits off
  bool requires_grad = true;
  StagePosition stage;  // where it sits against the layer stack
};

// The layer stack of the report's model (docs/capacity.md, "Pipeline stages"), and the
// parameters outside it, in the model's order, on the first stage and on the last.
struct ReportStack {
  std::optional<LayerStack> stack;
  std::vector<std::string_view> first_stage;
  std::vector<std::string_view> last_stage;
};

// Move-only: the params view the report's own pools, which a copy would not carry along.
struct Report {
  Report() = default;
  Report(Report&&) noexcept = default;
  Report& operator=(Report&&) noexcept = default;
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  ~Report() = default;

  std::vector<AxisSize> mesh;  // sorted by axis name
  MeshSource mesh_source = MeshSource::kNone;
  bool without_meta = false;            // no META: every parameter of the model is replicated
  std::vector<std::string> axis_order;  // order placements are applied: every axis seen
  // The ZeRO groups at rank 0 of the mesh above (capacity.accounting is what every byte
  // count below counts, as the meshes table does).
  ZeroGroups rank0_zero;
  std::uint64_t rank0_bytes = 0;
  std::uint64_t replicated_bytes = 0;
  std::uint64_t unsharded_bytes = 0;
  std::uint64_t uncovered_bytes = 0;  // what rank 0 holds of them
  std::size_t replicated_params = 0;
  std::size_t expert_params = 0;  // folded: the planned parameters split on ep
  // rank0_bytes descending, then FQN; with build_report's `sorted_params`, only that many
  // come first in this order and the rest follow in no particular order.
  std::vector<ParamReport> params;
  std::vector<BoundaryReport> boundaries;  // rank0_bytes descending, then FQN
  std::vector<UncoveredParam> uncovered;   // bytes descending, then FQN
  ReportStack pipeline;
  Diagnostics findings;  // errors, then warnings, then notes
  // The capacity planner's part (docs/capacity.md): the accounting and the mesh filter of
  // the whole report (its layout resolved), whether --sweep was given, and the answer for
  // the mesh above or for every mesh of the sweep: worst and best rank over all ranks.
  // !capacity.planned() when the planner could not run (an input error it would repeat is
  // already a finding).
  CapacityResult capacity;
  // Command-line mistakes only the inputs reveal (an axis they do not know, sizes the
  // flags make into no mesh): exit 2, and nothing else of the report counts.
  Diagnostics usage_errors;
  // What ParamReport::local_shape and ::axes view: one allocation each for all params.
  std::vector<std::uint64_t> local_dims;
  std::vector<ReportAxis> applied_axes;

  [[nodiscard]] bool has_errors() const;
};

// Builds the report from a decoded meta; `mesh` is the --mesh value, nullopt to read
// parallel_dims. Every --mesh and --sweep axis must be one the inputs know (else
// usage_errors, and nothing more is computed). Swept axes count as size 1 in the
// per-parameter table. `meta` and `model` must outlive the report (it views their strings
// and shapes); `meta` nullptr: no META, every model parameter replicated (a mesh or a
// sweep is then required). `sorted_params`: put only that many params in order (a renderer
// showing the top K needs no more); nullopt: all.
Report build_report(const FrozenMeta* meta, const ModelTree& model,
                    const std::optional<std::vector<AxisSize>>& mesh,
                    const ReportPlanOptions& plan = {},
                    std::optional<std::size_t> sorted_params = std::nullopt);
inline Report build_report(const FrozenMeta& meta, const ModelTree& model,
                           const std::optional<std::vector<AxisSize>>& mesh,
                           const ReportPlanOptions& plan = {},
                           std::optional<std::size_t> sorted_params = std::nullopt) {
  return build_report(&meta, model, mesh, plan, sorted_params);
}

// The axes a report of `meta` knows without the flags' (docs/cli.md, "Known axes"): pp, the
// axes of mesh_dim_names, of parallel_dims's <axis>_size keys (usable or not) and of every
// placement; sorted, each once. --zero-axis and --replica-axis add theirs.
std::vector<std::string> named_axes(const FrozenMeta& meta);

// The readable table; params and boundaries lists are cut to `top` entries.
std::string render_report_text(const Report& report, std::size_t top);

// One JSON object (indent 2, trailing newline): mesh, the four totals, every boundary,
// params (cut to `top` when given, else all) and findings.
std::string render_report_json(const Report& report, std::optional<std::size_t> top);

}  // namespace hpfreeze
