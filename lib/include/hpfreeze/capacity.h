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

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/placement.h"

namespace hpfreeze {

struct CapacityPlacement {
  std::string_view axis;
  Placement placement;
};

// One planned parameter: its shape and dtype from the model tree, its placements from the
// meta's param_plan (any order, each axis at most once). Views: the caller keeps what they
// point at alive until plan_capacity / CapacityModel::build returns (the model copies the
// little it keeps).
struct CapacityParam {
  std::string_view fqn;
  std::span<const std::int64_t> shape;
  std::string_view dtype;  // torch spelling ("bfloat16", "torch.float8_e4m3fn", ...)
  bool requires_grad = true;
  std::span<const CapacityPlacement> placements;
};

// Parameters made on demand, for a caller that would rather not hold them all at once:
// at(i) for i < count, read a few times each and one at a time (what a returned param
// views need only last until the next call).
struct CapacityParamSource {
  std::size_t count = 0;
  std::function<CapacityParam(std::size_t)> at;
};

enum class Optimizer : std::uint8_t { kNone, kSgd, kMomentum, kAdam, kAdamW };
inline constexpr std::size_t kOptimizers = 5;  // the enum's values, 0 .. kOptimizers-1

// "none", "sgd", "momentum", "adam", "adamw" (parse_optimizer, capacity_args.h, reads them).
std::string_view optimizer_name(Optimizer optimizer);

// Bytes per element of a torch dtype name (torch's dtype.itemsize), "torch." prefix and
// the short aliases (half, float, double, long, int, short, cfloat, ...) accepted; nullopt
// for a name not in the table, sub-byte types included (docs/capacity.md lists it).
std::optional<std::uint64_t> dtype_element_size(std::string_view dtype);

// Bytes one element of a parameter costs under `optimizer`: the weight, and for a
// floating-point parameter that requires grad and an optimizer other than none, its
// gradient (the param's dtype), an fp32 master copy when the dtype is narrower than 4
// bytes, and 0/1/2 moments (sgd/momentum/adam(w)) of max(4, element size) bytes each.
std::uint64_t bytes_per_element(std::string_view dtype, std::uint64_t element_size,
                                bool requires_grad, Optimizer optimizer);

// ZeRO / FSDP sharding over a data-parallel axis (docs/capacity.md, "ZeRO"): stage 1
// splits the optimizer state (master copy and moments), 2 the gradients too, 3 the
// weights too.
inline constexpr int kMaxZeroStage = 3;
struct ZeroSharding {
  int stage = 0;  // 0 (none) .. kMaxZeroStage
  std::string axis = "dp";
};

// bytes_per_element in two parts: what every rank of the ZeRO axis keeps of its local
// piece, and what ZeRO `stage` splits over that axis. kept + split is bytes_per_element.
struct ElementCost {
  std::uint64_t kept = 0;
  std::uint64_t split = 0;
};
ElementCost element_cost(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                         Optimizer optimizer, int zero_stage);

// "512 B", "1.5 KiB", "29.9 GiB": binary units, one decimal, rounded half up; the unit is
// the largest that keeps the rounded value below 1024.
std::string format_byte_size(std::uint64_t bytes);

// The largest size of a mesh axis (--mesh, --sweep, a meta's parallel_dims): sizes and
// dims are signed 64-bit numbers in the planner.
inline constexpr std::uint64_t kMaxAxisSize = std::numeric_limits<std::int64_t>::max();

struct AxisSize {
  std::string axis;
  std::uint64_t size = 1;
  friend bool operator==(const AxisSize& a, const AxisSize& b) = default;
};

struct AxisSweep {
  std::string axis;
  std::vector<std::uint64_t> sizes;  // in the order given
};

// A mesh: axis sizes in placement order (see CapacityRequest::axis_order).
struct Mesh {
  std::vector<AxisSize> axes;
  std::uint64_t devices = 1;  // product of the sizes
};

// The first sharded dim that does not divide on a mesh: the dim's size where the axis
// shards it (after the earlier axes, for composed shards), the axis and its size.
struct Indivisible {
  std::string fqn;
  std::size_t dim = 0;
  std::uint64_t size = 0;
  std::string axis;
  std::uint64_t axis_size = 0;
  std::uint64_t split_factor = 1;  // > 1 for a StridedShard: it must divide by size x factor
};

struct MeshCapacity {
  Mesh mesh;
  std::uint64_t max_rank_bytes = 0;
  std::uint64_t min_rank_bytes = 0;
  // Coordinates (one per mesh axis, same order) of the first rank in row-major order that
  // holds max_rank_bytes / min_rank_bytes.
  std::vector<std::uint64_t> max_rank;
  std::vector<std::uint64_t> min_rank;
  std::optional<Indivisible> indivisible;  // nullopt: every sharded dim divides
  std::optional<bool> fits;                // nullopt without a budget; false if indivisible
  std::uint64_t over_by = 0;               // max_rank_bytes - budget when above it

  [[nodiscard]] bool divisible() const { return !indivisible.has_value(); }
  // Usable: divides, and fits the budget when there is one.
  [[nodiscard]] bool usable() const { return divisible() && fits.value_or(true); }
};

// The mesh-independent part of the work, done once per parameter list and shared by every
// mesh: parameters with the same sharded dims and placements are merged into one group.
class CapacityModel {
 public:
  // `axis_order` is the order placements are applied in (DTensor applies them in mesh-dim
  // order); axes of placements missing from it are appended by name. Errors name the
  // parameter: unknown dtype, negative size, dim out of range, more than 2^64-1 bytes.
  // With `zero`, the split part of each parameter (element_cost) is chunked once more on
  // dim 0 of its local piece over the ZeRO axis, after every placement of the plan.
  static Expected<CapacityModel> build(const std::vector<CapacityParam>& params,
                                       std::vector<std::string> axis_order, Optimizer optimizer,
                                       const ZeroSharding& zero = {});
  static Expected<CapacityModel> build(const CapacityParamSource& params,
                                       std::vector<std::string> axis_order, Optimizer optimizer,
                                       const ZeroSharding& zero = {});

  // Exact worst/best rank bytes over every rank of `mesh`; axes of the mesh the model does
  // not know hold no sharded dim. Fails only when the ranks fall into more distinct size
  // classes than can be enumerated (docs/capacity.md, "How it is computed").
  [[nodiscard]] Expected<MeshCapacity> evaluate(const Mesh& mesh,
                                                std::optional<std::uint64_t> budget) const;

  [[nodiscard]] const std::vector<std::string>& axis_order() const { return axis_order_; }
  [[nodiscard]] std::uint64_t full_bytes() const { return full_bytes_; }
  [[nodiscard]] std::size_t groups() const { return groups_.size(); }

  struct Step {  // one axis sharding one dim
    std::uint32_t axis = 0;
    std::uint64_t split_factor = 1;
    bool uneven = false;
  };
  struct ShardedDim {
    std::size_t dim = 0;
    std::uint64_t size = 0;
    std::vector<Step> steps;  // in axis order; a ZeRO split last
  };
  struct Group {
    std::vector<ShardedDim> dims;
    std::uint64_t weight = 0;  // sum over members of bytes per element x unsharded numel
    std::size_t first_param = 0;
  };

 private:
  std::vector<std::string> axis_order_;
  std::vector<std::string> first_fqns_;  // of each group's first parameter
  std::vector<Group> groups_;
  std::uint64_t constant_bytes_ = 0;  // parameters no axis shards
  std::uint64_t full_bytes_ = 0;      // every parameter whole
};

struct CapacityRequest {
  std::vector<CapacityParam> params;
  CapacityParamSource source;           // used instead of `params` when source.at is set
  std::vector<std::string> axis_order;  // the meta's mesh_dim_names; may be empty
  std::vector<AxisSize> fixed;          // --mesh, or the mesh the meta implies
  std::vector<AxisSweep> sweeps;        // one per axis, none also in `fixed`
  Optimizer optimizer = Optimizer::kNone;
  ZeroSharding zero;
  std::optional<std::uint64_t> budget;
  bool fits_only = false;  // the renderings list the usable meshes only
};

struct CapacityResult {
  Optimizer optimizer = Optimizer::kNone;
  ZeroSharding zero;
  std::optional<std::uint64_t> budget;
  bool fits_only = false;
  std::vector<std::string> axis_order;  // resolved: the request's, then the rest by name
  std::size_t params = 0;
  std::uint64_t full_bytes = 0;      // every parameter whole on one device, with accounting
  std::vector<MeshCapacity> meshes;  // by devices, then sizes in axis order; all of them
};

// The answer: the first usable mesh in the result's order (the smallest that divides
// and, with a budget, fits); nullptr when none is.
const MeshCapacity* capacity_answer(const CapacityResult& result);

// Of the meshes that divide, the one whose worst rank is over the budget by the least
// (the first of equals); nullptr when none divides or some mesh is usable.
const MeshCapacity* closest_mesh(const CapacityResult& result);

// One sentence: "smallest mesh that fits: tp=8 dp=4 (32 devices, worst rank 61.2 GiB of
// 80.0 GiB)", or why no mesh is usable: "no mesh fits the 80.0 GiB budget; closest: ...
// over by 13.3 GiB", "no mesh divides; the first, tp=3, does not divide ...".
std::string capacity_answer_text(const CapacityResult& result);

// "tp=2 dp=4", "(no axes)".
std::string format_mesh(const Mesh& mesh);

// How a mesh fails to divide: "model.w dim 0 (size 10) by tp=3" (" x split factor 2").
std::string indivisible_text(const Indivisible& x);

// Every combination of the sweeps with the fixed sizes, each axis at the position of
// `axis_order` (mesh axes it lacks appended by name), sorted by device count, then by the
// sizes in axis order. Errors: an axis given twice, a sweep with no size, more than 65536
// meshes, a mesh of more than 2^64-1 devices. `problem`, when given, says which kind of
// error it was.
enum class MeshesProblem : std::uint8_t { kInvalid, kTooManyMeshes, kTooManyDevices };
Expected<std::vector<Mesh>> enumerate_meshes(const std::vector<std::string>& axis_order,
                                             const std::vector<AxisSize>& fixed,
                                             const std::vector<AxisSweep>& sweeps,
                                             MeshesProblem* problem = nullptr);

Expected<CapacityResult> plan_capacity(const CapacityRequest& request);

// 1 when no evaluated mesh is usable (a single mesh that does not divide or does not fit,
// or every mesh of a sweep), else 0.
int capacity_exit_code(const CapacityResult& result);

// The answer line, then one line per mesh (the usable ones with fits_only): mesh, devices,
// worst and best rank, a bar of the worst rank on a log scale (with '|' at the budget),
// the verdict, then a line saying what the bar shows. Ends with a newline.
std::string render_capacity_text(const CapacityResult& result);

// One compact JSON object and a newline: {"optimizer", "zero", "budget_bytes",
// "axis_order", "params", "full_bytes", "answer", "meshes": [{"mesh", "devices", ...}]}.
std::string render_capacity_json(const CapacityResult& result);

}  // namespace hpfreeze
