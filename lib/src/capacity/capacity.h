#pragma once
// Capacity planning: the parameter bytes every rank of a device mesh holds under a frozen
// plan, for one mesh or a sweep of meshes, with optional optimizer accounting and a budget.
//
// Command-independent: the caller decodes the meta (param_plan, mesh_dim_names) and the
// model tree and passes plain values; nothing here reads files. docs/capacity.md describes
// the accounting, the chunking rules, the mesh order and the JSON shape.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capacity/accounting.h"
#include "capacity/pipeline.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "spec/placement.h"

namespace hpfreeze {

struct CapacityPlacement {
  std::string_view axis;
  Placement placement;
};

// One planned parameter: its shape and dtype from the model tree, its placements from the
// meta's param_plan (any order, each axis at most once). Views: the caller keeps what they
// point at alive until plan_capacity / CapacityModel::build returns (the model copies the
// little it keeps). A parameter with a zero-sized dim holds nothing, whatever its other dims.
struct CapacityParam {
  std::string_view fqn;
  std::span<const std::uint64_t> shape;
  std::string_view dtype;  // torch spelling ("bfloat16", "torch.float8_e4m3fn", ...)
  bool requires_grad = true;
  std::span<const CapacityPlacement> placements;
  // Where it sits against the layer stack: the stage pp puts it on (pipeline.h). One
  // stage (pp = 1, or no pp) holds every parameter wherever it sits.
  StagePosition stage;
};

// Parameters made on demand, for a caller that would rather not hold them all at once:
// at(i) for i < count, read a few times each and one at a time (what a returned param
// views need only last until the next call).
struct CapacityParamSource {
  std::size_t count = 0;
  std::function<CapacityParam(std::size_t)> at;
};

// How the expert-parallel axis `ep` is laid out (ExpertLayout, capacity_args.h;
// docs/capacity.md, "Expert parallelism"): kAxis, a mesh axis of its own that multiplies
// the devices; kFolded, HyperParallel's and Megatron's MoE parallel folding: per pipeline
// stage (`pp`) the dense region (every other axis, flattened row-major as the extra axes,
// then dp, cp, tp) is re-sliced as [edp, ep], ep fastest; a parameter a Shard placement puts
// on `ep` (an expert parameter) uses the ep coordinate of that view, and ep must divide the
// dense region.
inline constexpr std::string_view kExpertAxis = "ep";
inline constexpr std::string_view kStageAxis = "pp";
inline constexpr std::string_view kExpertDataAxis = "edp";

// ZeRO / FSDP sharding over a data-parallel group (ZeroSharding, capacity_args.h;
// docs/capacity.md, "ZeRO"): what each stage splits is element_cost's (accounting.h). A
// parameter's group is the product of the listed axes its placements do not shard (its
// coordinate row-major in the listed order); a folded expert parameter's is edp.

// "512 B", "1.5 KiB", "29.9 GiB": binary units, one decimal, rounded half up; the unit is
// the largest that keeps the rounded value below 1024.
std::string format_byte_size(std::uint64_t bytes);

// The largest size of a mesh axis (--mesh, --sweep, a meta's parallel_dims): sizes and
// dims are signed 64-bit numbers in the planner.
inline constexpr std::uint64_t kMaxAxisSize = std::numeric_limits<std::int64_t>::max();

// A mesh: axis sizes in placement order (see CapacityRequest::axis_order).
struct Mesh {
  std::vector<AxisSize> axes;
  // The product of the sizes; in the folded layout, of every size but ep's (ep never
  // multiplies the devices there).
  std::uint64_t devices = 1;
};

// The first sharded dim that does not divide on a mesh: the dim's size where the axis
// shards it (after the earlier axes, for composed shards), the axis and its size. In the
// folded layout, ep not dividing the dense region is one too: `dense_axes` names the
// region's axes, `size` is its size, `axis` is ep, and there is no parameter. And pp that
// cannot split the layer stack: `stack` is its prefix ("" when the model has none), `size`
// its layers, `axis` is pp, and there is no parameter. The last two leave no rank to count.
struct Indivisible {
  std::string fqn;
  std::size_t dim = 0;
  std::uint64_t size = 0;
  std::string axis;
  std::uint64_t axis_size = 0;
  std::uint64_t split_factor = 1;       // > 1 for a StridedShard: it must divide by size x factor
  std::vector<std::string> dense_axes;  // not empty: ep does not divide the dense region
  std::optional<std::string> stack;     // set: pp cannot split the layer stack
  std::size_t param = 0;  // the parameter's index in the list its model was built from

  [[nodiscard]] bool dense_region() const { return !dense_axes.empty(); }
  [[nodiscard]] bool stack_split() const { return stack.has_value(); }
  // No rank can be laid out: there is nothing to count.
  [[nodiscard]] bool no_ranks() const { return dense_region() || stack_split(); }
};

// The folded layout's second view of a mesh: [edp, ep] per pipeline stage.
struct ExpertMesh {
  std::uint64_t edp = 1;
  std::uint64_t ep = 1;
  // (edp, ep) coordinates of the ranks MeshCapacity::max_rank and min_rank name.
  std::uint64_t max_rank[2] = {0, 0};
  std::uint64_t min_rank[2] = {0, 0};
};

// What one pipeline stage of a mesh holds: its layers of the stack (nullopt: none, or no
// stack), its worst and best rank, and their coordinates (as MeshCapacity's, pp = the
// stage).
struct StageCapacity {
  std::optional<std::pair<std::uint64_t, std::uint64_t>> layers;  // first, last
  std::uint64_t max_rank_bytes = 0;
  std::uint64_t min_rank_bytes = 0;
  std::vector<std::uint64_t> max_rank;
  std::vector<std::uint64_t> min_rank;
};

// The sizes of the ZeRO groups of one mesh that some parameter is split over; 1 when none.
struct ZeroGroups {
  std::uint64_t dense = 1;   // the largest group of a dense parameter
  std::uint64_t expert = 1;  // edp, when some folded expert parameter is split
};

struct MeshCapacity {
  Mesh mesh;
  ZeroGroups zero;
  // 0 when the mesh cannot be laid out (Indivisible::dense_region): no rank exists.
  std::uint64_t max_rank_bytes = 0;
  std::uint64_t min_rank_bytes = 0;
  // Coordinates (one per mesh axis, same order) of the first rank that holds
  // max_rank_bytes / min_rank_bytes: first in row-major mesh order, in the folded layout
  // first by global rank (pp, then the dense region's flattened index); there ep's entry is
  // the rank's expert coordinate, which `expert` repeats.
  std::vector<std::uint64_t> max_rank;
  std::vector<std::uint64_t> min_rank;
  std::optional<ExpertMesh> expert;  // the folded layout only
  // The largest weight alone (dtype size x elements) of one parameter on the worst rank
  // under the plan's placements, before ZeRO: what ZeRO-3 gathers whole for compute.
  std::uint64_t largest_gathered = 0;
  std::string largest_gathered_fqn;
  // The group of its model that largest_gathered_fqn names (npos: the parameters no axis
  // shards), so that a model of the same groups under other names names it its own way
  // (CapacityModel::rename).
  std::size_t gathered_group = static_cast<std::size_t>(-1);
  // What the worst rank keeps that ZeRO does not split (all of it without ZeRO).
  std::uint64_t unsplit_bytes = 0;
  // Per pipeline stage, in stage order (one without pp or at pp = 1); empty when no rank
  // can be laid out. max_rank_bytes is the worst of them, min_rank_bytes the best.
  std::vector<StageCapacity> stages;
  std::optional<Indivisible> indivisible;  // nullopt: every sharded dim divides
  // Why the ranks were not counted (too many classes of distinct sizes): the mesh is not
  // usable, the others of a sweep are answered.
  std::optional<std::string> refused;
  std::optional<bool> fits;   // nullopt without a budget; false if not laid out or indivisible
  std::uint64_t over_by = 0;  // max_rank_bytes - (budget - reserve) when above it

  [[nodiscard]] bool divisible() const { return !indivisible.has_value(); }
  // Its ranks were counted: it can be laid out and was not refused.
  [[nodiscard]] bool laid_out() const {
    return !refused && !(indivisible && indivisible->no_ranks());
  }
  // Usable: counted, divides, and fits the budget when there is one.
  [[nodiscard]] bool usable() const { return !refused && divisible() && fits.value_or(true); }
  // The stage of the worst rank (its first).
  [[nodiscard]] std::size_t worst_stage() const;
};

class CapacityModelBuilder;  // capacity_model.cc

// The mesh-independent part of the work, done once per parameter list and shared by every
// mesh: parameters with the same sharded dims and placements are merged into one group.
class CapacityModel {
 public:
  // `axis_order` is the order placements are applied in (DTensor applies them in mesh-dim
  // order); axes of placements missing from it are appended by name. Each element costs
  // element_cost under `accounting`, whose layout says how ep is laid out. Errors name the
  // parameter: unknown dtype, dim out of range, more than 2^64-1 bytes, and in the folded
  // layout an expert parameter placed on another axis too. With ZeRO, the split part of
  // each parameter is chunked once more on dim 0 of its local piece over its ZeRO group,
  // after every placement of the plan. Any subset of a model's parameters makes a model of
  // its own (a pipeline stage's, say), evaluated on its own mesh.
  static Expected<CapacityModel> build(const std::vector<CapacityParam>& params,
                                       std::vector<std::string> axis_order,
                                       const Accounting& accounting);
  static Expected<CapacityModel> build(const CapacityParamSource& params,
                                       std::vector<std::string> axis_order,
                                       const Accounting& accounting);

  // Exact worst/best rank bytes over every rank of `mesh` (one stage: pp splits nothing
  // here, its stages are plan_capacity's); axes of the mesh the model does not know hold no
  // sharded dim. When the ranks fall into more distinct size classes than can be enumerated
  // (docs/capacity.md, "How it is computed") the mesh is `refused`, with the reason.
  // Whether the mesh fits is judge's.
  [[nodiscard]] MeshCapacity evaluate(const Mesh& mesh) const;

  [[nodiscard]] const std::vector<std::string>& axis_order() const { return axis_order_; }
  [[nodiscard]] std::uint64_t full_bytes() const { return full_bytes_; }
  [[nodiscard]] std::size_t groups() const { return groups_.size(); }
  [[nodiscard]] ExpertLayout layout() const { return layout_; }
  // The ZeRO group sizes on `mesh`, for the usage error of a ZeRO that splits nothing and
  // the text header.
  [[nodiscard]] ZeroGroups zero_groups(const Mesh& mesh) const;
  // Whether some dense parameter (or, folded, some expert one) has a ZeRO group: one that
  // holds bytes, is not 0-dim and is not sharded by the plan on every listed axis.
  [[nodiscard]] bool dense_zero() const;
  [[nodiscard]] bool expert_zero() const;
  // Whether some placement shards a listed ZeRO axis (then what ZeRO keeps whole shrinks
  // as that axis grows).
  [[nodiscard]] bool shards_zero_axes() const { return shards_zero_axes_; }

  struct Step {  // one view of the mesh (an axis, or a ZeRO group) sharding one dim
    std::uint32_t view = 0;
    std::uint64_t split_factor = 1;
    bool uneven = false;
    // Every rank of the view holds its first chunk, the largest (FSDP2's padding): the
    // piece does not depend on the rank's coordinate in the view.
    bool padded = false;
    friend bool operator==(const Step&, const Step&) = default;
  };
  struct ShardedDim {
    std::size_t dim = 0;
    std::uint64_t size = 0;
    std::vector<Step> steps;  // in axis order; a ZeRO split last
    friend bool operator==(const ShardedDim&, const ShardedDim&) = default;
  };
  struct Group {
    std::vector<ShardedDim> dims;
    std::uint64_t weight = 0;  // sum over members of bytes per element x unsharded numel
    std::size_t first_param = 0;
    // The largest member's weight alone per unit of its sharded dims (dtype size x
    // unsharded numel), and its FQN: what ZeRO-3 gathers is this times its plan piece.
    std::uint64_t gathered = 0;
    std::string gathered_fqn;
    bool split = false;  // its members are what ZeRO splits (a step on a ZeRO view)
    // Its members are part of one flat buffer divided evenly over this ZeRO view (an index
    // of the model's views): a rank holds its bytes over the view's size, whatever its
    // coordinate in it.
    std::optional<std::uint32_t> flat;
  };
  // One parameter of a recipe that counts what ZeRO-3 gathers by module: the module that
  // owns it directly, the group of its piece under the plan (npos: the parameters no axis
  // shards) and its elements per unit of that group's sharded dims.
  struct ModuleShare {
    std::uint32_t module = 0;
    std::size_t group = static_cast<std::size_t>(-1);
    std::uint64_t elements = 0;
    friend bool operator==(const ModuleShare&, const ModuleShare&) = default;
  };
  // A ZeRO group: the axes (indexes into axis_order) it is the product of, in the listed
  // order, or the folded layout's edp. Its view is axis_order().size() + its index.
  struct ZeroView {
    std::vector<std::uint32_t> axes;
    bool expert = false;
    friend bool operator==(const ZeroView&, const ZeroView&) = default;
  };

  // Whether `other` has the same groups, bytes and views, whatever their parameters'
  // names (two pipeline stages of the same layers): then every mesh gives both the same
  // figures, and `rename` turns the one's into the other's.
  [[nodiscard]] bool same_groups(const CapacityModel& other) const;
  // `m`, evaluated on a model of the same groups (`from`), with this model's names.
  void rename(MeshCapacity& m, const CapacityModel& from) const;

 private:
  friend class CapacityModelBuilder;
  std::vector<std::string> axis_order_;
  std::vector<std::string> first_fqns_;  // of each group's first parameter
  std::vector<Group> groups_;
  std::vector<ZeroView> zero_views_;
  ExpertLayout layout_ = ExpertLayout::kAxis;
  std::uint64_t constant_bytes_ = 0;  // parameters no axis shards
  bool shards_zero_axes_ = false;
  std::uint64_t full_bytes_ = 0;  // every parameter whole
  // Of the parameters no axis shards: the largest weight alone, and its FQN.
  std::uint64_t constant_gathered_ = 0;
  std::string constant_gathered_fqn_;
  // With a recipe that counts it (gathered_module_bytes): what each module owns directly,
  // and the bytes per element of the largest, which every rank of a mesh is charged.
  std::vector<ModuleShare> module_shares_;
  std::uint64_t module_unit_ = 0;
};

// Whether `mesh` is usable under `filter`: sets its `fits` (with a budget: it divides and
// its worst rank is within the budget) and `over_by`.
void judge(MeshCapacity& mesh, const MeshFilter& filter);

struct CapacityRequest {
  std::vector<CapacityParam> params;
  CapacityParamSource source;           // used instead of `params` when source.at is set
  std::vector<std::string> axis_order;  // the meta's mesh_dim_names; may be empty
  std::vector<AxisSize> fixed;          // --mesh, or the mesh the meta implies
  std::vector<AxisSweep> sweeps;        // one per axis, none also in `fixed`
  Accounting accounting;                // its layout resolved
  MeshFilter filter;
  // The layer stack and the tied parameters, for meshes with pp > 1 (each parameter's
  // position is its `stage`).
  StackPlan pipeline;
};

// The planner's answer, and the settings it was counted with (the request's, copied whole).
// A report holds one even when its planner could not run: then only the settings and
// `swept` are set, and `meshes` is empty.
struct CapacityResult {
  Accounting accounting;
  MeshFilter filter;
  bool swept = false;  // the request had sweeps
  // Resolved: the request's, then every other axis a placement names, by name, then the
  // axes only `fixed` or a sweep has, by name.
  std::vector<std::string> axis_order;
  std::size_t params = 0;
  std::uint64_t full_bytes = 0;      // every parameter whole on one device, with accounting
  std::vector<MeshCapacity> meshes;  // by devices, then sizes in axis order; all of them
  // Whether some dense parameter has a ZeRO group (the text names that group only then).
  bool dense_zero = true;
  // With ZeRO stage 1 or 2 and no placement on a ZeRO axis: the least any mesh's worst rank
  // keeps that ZeRO never splits, whatever the size of its data-parallel axes.
  std::optional<std::uint64_t> unsplit_floor;
  // Set by a caller whose inputs have errors: the reason no answer is given, although
  // some mesh may be usable ("12 planned parameters are not in the model").
  std::optional<std::string> no_answer;

  // Whether the planner ran: every request makes one mesh at least.
  [[nodiscard]] bool planned() const { return !meshes.empty(); }
};

// Whether a rendering shows `mesh`: every mesh, or with --fits-only the usable ones.
bool capacity_shown(const CapacityResult& result, const MeshCapacity& mesh);

// The answer: the first usable mesh in the result's order (the smallest that divides
// and, with a budget, fits); nullptr when none is, or when `no_answer` is set.
const MeshCapacity* capacity_answer(const CapacityResult& result);

// The other usable meshes with as many devices as the answer: they tie with it, and the
// order of meshes (docs/capacity.md, "Meshes and their order") put the answer first.
std::size_t capacity_ties(const CapacityResult& result);

// Of the meshes that divide, the one whose worst rank is over the budget by the least
// (the first of equals); nullptr when none divides or some mesh is usable.
const MeshCapacity* closest_mesh(const CapacityResult& result);

// One sentence: "smallest mesh that fits: tp=8 dp=4 (32 devices, worst rank 61.2 GiB of
// 80.0 GiB)" (", on stage 3 of 16" inside the brackets when the mesh has several
// stages; then ", and 3 more with 32 devices" for ties), or why no mesh is usable: "no
// mesh fits the 80.0 GiB budget; closest: ... over by 13.3 GiB" (and, at ZeRO stage 1 or
// 2 when no data-parallel size can help, "; ZeRO-1 keeps weights and gradients whole: at
// least X a rank at any dp; ..."), "no mesh divides; the first, tp=3, does not divide
// ...", or "no answer: " and `no_answer`. The budget is what model states may use.
std::string capacity_answer_text(const CapacityResult& result);

// The answer line, then, when the mesh it names has several stages, a table of them:
// each stage's layers, worst and best rank. Ends with a newline.
std::string render_capacity_answer(const CapacityResult& result);

// "the ranks of mesh tp=2 dp=4 fall into more than ...; too many to compare exactly": why
// a mesh was not counted (it is `refused`).
std::string refused_text(const MeshCapacity& mesh);

// "tp=2 dp=4", "(no axes)".
std::string format_mesh(const Mesh& mesh);

// How a mesh fails to divide: "model.w dim 0 by tp=3" (" x split factor 2"), "the dense
// region dp x tp (4 ranks) by ep=3", or "the 61 layers of model.layers by pp=64".
std::string indivisible_text(const Indivisible& x);

// Every combination of the sweeps with the fixed sizes, each axis at the position of
// `axis_order` (mesh axes it lacks appended by name), sorted by device count (in the
// folded layout not counting ep), then by the sizes in axis order. Errors: an axis given
// twice, a sweep with no size, more than 65536 meshes, a mesh of more than 2^64-1
// devices. `problem`, when given, says which kind of error it was.
enum class MeshesProblem : std::uint8_t { kInvalid, kTooManyMeshes, kTooManyDevices };
Expected<std::vector<Mesh>> enumerate_meshes(const std::vector<std::string>& axis_order,
                                             const std::vector<AxisSize>& fixed,
                                             const std::vector<AxisSweep>& sweeps,
                                             MeshesProblem* problem = nullptr,
                                             ExpertLayout layout = ExpertLayout::kAxis);

// Each mesh with pp > 1 is split into stages by request.pipeline: the stack split as
// accounting.pipeline.layers says (its counts are the caller's to check) or evenly, every
// stage a model of its own parameters evaluated on the mesh's other axes; no stack, or
// more stages than layers, leaves no rank to count. Errors: the model's and
// enumerate_meshes's, a placement that shards pp while some mesh splits it into stages,
// and two usage errors (ErrorClass::kIo, no file, no pointer) about the ZeRO
// request: a --zero N >= 1 whose every group has size 1 on every mesh, and an axis named
// with --zero-axis (zero_axes_named) that no mesh has.
Expected<CapacityResult> plan_capacity(const CapacityRequest& request);

// 1 when no evaluated mesh is usable (a single mesh that does not divide or does not fit,
// or every mesh of a sweep), else 0.
int capacity_exit_code(const CapacityResult& result);

// The header (parameters, bytes, optimizer, ZeRO, budget; ep's layout; what fits leaves
// out), then one line per mesh (the usable ones with --fits-only): mesh, devices, worst
// rank (and its stage, when some mesh has several), best rank, a bar of the worst rank on
// a log scale (with '|' at the budget less the reserve), the verdict, then a line saying
// what the bar shows. The answer is render_capacity_answer's. Ends with a newline.
std::string render_capacity_text(const CapacityResult& result);

}  // namespace hpfreeze
