#pragma once
// The command-line values of capacity planning, each parsed here alone: --mesh, --sweep,
// --budget, --reserve, --optimizer, --recipe, --zero, --zero-axis, --expert-zero-dim,
// --expert-parallel, --pp-stack, --pp-layers and --replica-axis's axis name (docs/capacity.md).
// Each parser checks one value's syntax and fails with a usage error quoting the offending text;
// the rules between values are run_report's. And the two values the planner's settings make,
// Accounting and MeshFilter: a new planner option is a field of one of them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

struct AxisSize {
  std::string axis;
  std::uint64_t size = 1;
  friend bool operator==(const AxisSize& a, const AxisSize& b) = default;
};

struct AxisSweep {
  std::string axis;
  std::vector<std::uint64_t> sizes;  // in the order given
};

enum class Optimizer : std::uint8_t { kNone, kSgd, kMomentum, kAdam, kAdamW };
inline constexpr std::size_t kOptimizers = 5;  // the enum's values, 0 .. kOptimizers-1

// "none", "sgd", "momentum", "adam", "adamw": --optimizer's names, from the planner's one
// table (which also says what each keeps); all of them in the order of the enum.
std::string_view optimizer_name(Optimizer optimizer);
std::vector<std::string> optimizer_names();

// Whose accounting counts the bytes (docs/capacity.md, "Recipes"): what each byte class of
// an element costs, what ZeRO's stage splits and how (per tensor in chunks, per tensor
// padded to the largest chunk, or one flat buffer split evenly); the planner's one table
// (capacity/accounting.cc) holds a row per recipe, in the order of the enum.
enum class Recipe : std::uint8_t { kDtensor, kFsdp2, kMegatron, kDeepspeed };
inline constexpr std::size_t kRecipes = 4;
std::string_view recipe_name(Recipe recipe);  // "dtensor", "fsdp2", "megatron", "deepspeed"
std::vector<std::string> recipe_names();
// --recipe: one of recipe_names(); nullopt for anything else.
std::optional<Recipe> parse_recipe(std::string_view name);

// How the expert-parallel axis `ep` is laid out: an axis of its own, or folded into the
// dense region (docs/capacity.md, "Expert parallelism").
enum class ExpertLayout : std::uint8_t { kAxis, kFolded };
std::string_view expert_layout_name(ExpertLayout layout);  // "axis", "folded"

// ZeRO / FSDP over the data-parallel axes (docs/capacity.md, "ZeRO"): stage 1 splits the
// optimizer state, 2 the gradients too, 3 the weights too.
inline constexpr int kMaxZeroStage = 3;
struct ZeroSharding {
  int stage = 0;  // 0 (none) .. kMaxZeroStage
  std::vector<std::string> axes{"dp", "cp"};
  // --expert-zero-dim: the dim a folded expert's piece is chunked on (FSDP2's
  // shard_placement_fn, Shard(1)); dim 0 for a parameter of no more dims than that.
  std::uint64_t expert_dim = 0;
};

// Where the expert layout of a run came from: the meta's mesh_dim_names, or the flag.
enum class LayoutSource : std::uint8_t { kMeta, kFlag };

// How pp splits the layer stack (docs/capacity.md, "Pipeline stages").
struct PipelineSplit {
  std::string stack;                  // --pp-stack: the stack's prefix; empty: the model's own
  std::vector<std::uint64_t> layers;  // --pp-layers: layers per stage; empty: as even as can be
};

// How every byte of a run is counted (docs/capacity.md, "Accounting", "ZeRO" and "Expert
// parallelism"): set by report's flags, its layout resolved by the report pass (from the
// meta's mesh_dim_names unless the flag gave it), then copied whole into the planner's
// request and result, which every renderer reads.
struct Accounting {
  Optimizer optimizer = Optimizer::kNone;  // --optimizer
  Recipe recipe = Recipe::kDtensor;        // --recipe
  ZeroSharding zero;                       // --zero, --zero-axis, --expert-zero-dim
  // --zero-axis was given: a listed axis no mesh has is then an error, not size 1.
  bool zero_axes_named = false;
  ExpertLayout layout = ExpertLayout::kAxis;  // --expert-parallel, or the meta's
  LayoutSource layout_source = LayoutSource::kMeta;
  PipelineSplit pipeline;  // --pp-stack, --pp-layers
};

// Which meshes are usable and which are shown (docs/capacity.md, "Budget").
struct MeshFilter {
  std::optional<std::uint64_t> budget;  // --budget: the bytes a rank may hold
  std::string budget_text;              // --budget as given, for the notes on its unit
  std::uint64_t reserve = 0;            // --reserve: kept from the budget (less than it)
  bool fits_only = false;               // --fits-only: show the usable meshes only

  // What the model states of a rank may use: the budget less the reserve.
  [[nodiscard]] std::optional<std::uint64_t> states_budget() const {
    return budget ? std::optional(*budget - std::min(reserve, *budget)) : std::nullopt;
  }
};

// Whether `name` is an axis name: [A-Za-z_][A-Za-z0-9_]*.
bool is_axis_name(std::string_view name);

// --mesh: `AXIS=N[,AXIS=N...]`, each axis at most once, sizes decimal integers >= 1 that fit
// in 63 bits.
Expected<std::vector<AxisSize>> parse_mesh_arg(std::string_view text);

// --sweep: `AXIS=N1,N2,...`, sizes decimal integers >= 1 below 2^63, none listed twice.
Expected<AxisSweep> parse_sweep_arg(std::string_view text);

// --budget: a decimal number (fraction allowed, rounded down to bytes) and an optional unit:
// B, K/KB/k/kB ... E/EB (powers of 1000) or Ki/KiB ... Ei/EiB (powers of 1024).
Expected<std::uint64_t> parse_byte_size(std::string_view text);

// --optimizer: "none", "sgd", "momentum", "adam", "adamw"; nullopt for anything else.
std::optional<Optimizer> parse_optimizer(std::string_view name);

// --expert-zero-dim: a decimal integer >= 0 below 2^63.
Expected<std::uint64_t> parse_expert_zero_dim(std::string_view text);

// --zero: "0" to "3" (kMaxZeroStage); nullopt for anything else.
std::optional<int> parse_zero_stage(std::string_view text);

// --zero-axis: axis names separated by commas, each at most once ("dp,cp").
Expected<std::vector<std::string>> parse_zero_axes(std::string_view text);

// --expert-parallel: "folded" or "axis"; nullopt for anything else.
std::optional<ExpertLayout> parse_expert_layout(std::string_view name);

// --pp-layers: `N,N,...`, decimal integers >= 0 below 2^63, one per pipeline stage.
Expected<std::vector<std::uint64_t>> parse_pp_layers(std::string_view text);

// --pp-stack: a module path, names separated by dots ("model.layers").
Expected<std::string> parse_pp_stack(std::string_view text);

}  // namespace hpfreeze
