// What one element of a parameter costs, and the optimizer table (accounting.h; the element
// sizes are spec/dtypes.h's).
#include "capacity/accounting.h"

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "capacity/chunk_geometry.h"
#include "spec/dtypes.h"

namespace hpfreeze {
namespace {

struct OptimizerRow {
  std::string_view name;
  int moments;  // state tensors per parameter; -1: no gradient and no state at all
};

// In the order of the enum (capacity_args.h): --optimizer's names and what each keeps.
constexpr std::array<OptimizerRow, kOptimizers> kOptimizerTable{{
    {"none", -1},
    {"sgd", 0},
    {"momentum", 1},
    {"adam", 2},
    {"adamw", 2},
}};

// The ZeRO stage from which each class of ElementBytes is split: the optimizer state from 1,
// the gradient from 2, the weight at 3.
constexpr int kWeightSplitFrom = 3;
constexpr int kGradSplitFrom = 2;
constexpr int kStateSplitFrom = 1;

// What a gradient element costs: at the parameter's dtype; an fp32 gradient (max(4, dtype
// size)) in its place; or the dtype's and, for a dtype narrower than fp32, an fp32 copy
// beside it.
enum class Grad : std::uint8_t { kDtype, kFp32, kDtypeAndFp32 };

// How ZeRO splits a class over the parameter's group (ElementCost's parts).
enum class Split : std::uint8_t { kChunks, kPadded, kFlat };

struct RecipeRow {
  std::string_view name;
  Grad grad[kMaxZeroStage + 1];  // per ZeRO stage
  int max_stage;
  std::string_view stages;  // what its stages are, when it has not all of them
  Split weight_and_grad;    // how stage 2 splits the gradient and stage 3 the weight
  Split state;              // how stages 1-3 split the master copy and the moments
  std::uint64_t gathered;   // ZeRO-3: bytes per element of the largest module, or 0
};

// In the order of the enum (capacity_args.h); docs/capacity.md, "Recipes", has the same
// rows with their sources.
constexpr std::array<RecipeRow, kRecipes> kRecipeTable{{
    // DTensor's own chunks: each parameter's piece chunked on dim 0 like torch.chunk.
    {"dtensor",
     {Grad::kDtype, Grad::kDtype, Grad::kDtype, Grad::kDtype},
     3,
     "",
     Split::kChunks,
     Split::kChunks,
     0},
    // FSDP2's fully_shard: the same chunks, but FSDPParam._init_sharded_param allocates the
    // weight at chunk 0's size on every rank and foreach_reduce's gradient views keep the
    // padded reduce-scatter output; the optimizer sees the real rows only.
    {"fsdp2",
     {Grad::kDtype, Grad::kDtype, Grad::kDtype, Grad::kDtype},
     3,
     "",
     Split::kPadded,
     Split::kChunks,
     0},
    // Megatron-LM: an fp32 main gradient buffer, never sharded (param_and_grad_buffer.py);
    // --zero 1 is the distributed optimizer: fp32 master and moments on 1/N of one flat
    // buffer (distrib_optimizer.py; theoretical_memory_usage.py L297: 6 + 12/d).
    {"megatron",
     {Grad::kFp32, Grad::kFp32, Grad::kFp32, Grad::kFp32},
     1,
     "0 without its distributed optimizer and 1 with it (the optimizer state split)",
     Split::kFlat,
     Split::kFlat,
     0},
    // DeepSpeed: the ZeRO paper's 16P and 4P + 12P/N at stages 0 and 1 (it has no estimator
    // for them); estimate_zero2_model_states_mem_needs's 2P + 18P/N (18 = a 16-bit and an
    // fp32 gradient, fp32 master, moments) and estimate_zero3_...'s 18P/N + 4 x the largest
    // layer, flat partitions of the group.
    {"deepspeed",
     {Grad::kDtype, Grad::kDtype, Grad::kDtypeAndFp32, Grad::kFp32},
     3,
     "",
     Split::kFlat,
     Split::kFlat,
     4},
}};

const RecipeRow& row_of(Recipe recipe) { return kRecipeTable[static_cast<std::size_t>(recipe)]; }

// What a gradient element costs under `grad`, for a parameter with a gradient.
std::uint64_t grad_bytes(Grad grad, std::uint64_t element_size) {
  const std::uint64_t fp32 = std::max<std::uint64_t>(4, element_size);
  switch (grad) {
    case Grad::kFp32:
      return fp32;
    case Grad::kDtypeAndFp32:
      return element_size + (element_size < 4 ? 4 : 0);
    case Grad::kDtype:
      break;
  }
  return element_size;
}

// Adds `bytes` to the part of `out` that `how` names.
void add_split(ElementCost& out, Split how, std::uint64_t bytes) {
  switch (how) {
    case Split::kPadded:
      out.padded += bytes;
      return;
    case Split::kFlat:
      out.flat += bytes;
      return;
    case Split::kChunks:
      break;
  }
  out.chunked += bytes;
}

// `unit` times the elements of `shape`: 0 when a dim is 0, or on an overflow the callers
// have ruled out.
std::uint64_t volume(std::span<const std::uint64_t> shape, std::uint64_t unit) {
  if (std::find(shape.begin(), shape.end(), std::uint64_t{0}) != shape.end()) return 0;
  std::uint64_t out = unit;
  for (std::uint64_t d : shape) {
    if (!chunking::checked_mul(out, d, out)) return 0;
  }
  return out;
}

}  // namespace

std::string_view optimizer_name(Optimizer optimizer) {
  return kOptimizerTable[static_cast<std::size_t>(optimizer)].name;
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> out;
  for (const OptimizerRow& row : kOptimizerTable) out.emplace_back(row.name);
  return out;
}

std::string_view recipe_name(Recipe recipe) { return row_of(recipe).name; }

std::vector<std::string> recipe_names() {
  std::vector<std::string> out;
  for (const RecipeRow& row : kRecipeTable) out.emplace_back(row.name);
  return out;
}

std::optional<Recipe> parse_recipe(std::string_view name) {
  for (std::size_t i = 0; i < kRecipes; ++i) {
    if (kRecipeTable[i].name == name) return static_cast<Recipe>(i);
  }
  return std::nullopt;
}

std::optional<std::string> accounting_error(const Accounting& accounting) {
  const RecipeRow& row = row_of(accounting.recipe);
  if (accounting.zero.stage <= row.max_stage) return std::nullopt;
  return "--zero " + std::to_string(accounting.zero.stage) + ": --recipe " + std::string(row.name) +
         " has ZeRO stages " + std::string(row.stages);
}

std::uint64_t gathered_module_bytes(const Accounting& accounting) {
  return accounting.zero.stage == kMaxZeroStage ? row_of(accounting.recipe).gathered : 0;
}

bool state_in_chunks(const Accounting& accounting) {
  return accounting.zero.stage >= kStateSplitFrom &&
         row_of(accounting.recipe).state == Split::kChunks;
}

std::size_t zero_split_dim(const ZeroSharding& zero, bool expert, std::size_t rank) {
  return expert && zero.expert_dim < rank ? static_cast<std::size_t>(zero.expert_dim) : 0;
}

ElementBytes element_bytes(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                           Optimizer optimizer) {
  ElementBytes out;
  out.weight = element_size;
  const Dtype* d = find_dtype(dtype);
  const int moments = kOptimizerTable[static_cast<std::size_t>(optimizer)].moments;
  if (moments < 0 || !requires_grad || d == nullptr || !d->floating) return out;
  out.grad = element_size;
  out.master = element_size < 4 ? 4 : 0;
  out.moments = static_cast<std::uint64_t>(moments) * std::max<std::uint64_t>(4, element_size);
  return out;
}

std::uint64_t bytes_per_element(std::string_view dtype, std::uint64_t element_size,
                                bool requires_grad, Optimizer optimizer) {
  return element_bytes(dtype, element_size, requires_grad, optimizer).total();
}

ElementCost element_cost(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                         const Accounting& accounting) {
  const RecipeRow& row = row_of(accounting.recipe);
  const int stage = std::min(accounting.zero.stage, row.max_stage);
  ElementBytes bytes = element_bytes(dtype, element_size, requires_grad, accounting.optimizer);
  if (bytes.grad != 0) bytes.grad = grad_bytes(row.grad[stage], element_size);
  ElementCost out;
  for (const auto& [part, from, how] :
       {std::tuple{bytes.weight, kWeightSplitFrom, row.weight_and_grad},
        std::tuple{bytes.grad, kGradSplitFrom, row.weight_and_grad},
        std::tuple{bytes.master + bytes.moments, kStateSplitFrom, row.state}}) {
    if (stage >= from) {
      add_split(out, how, part);
    } else {
      out.kept += part;
    }
  }
  return out;
}

std::uint64_t zero_rank0_bytes(std::span<const std::uint64_t> local, ElementCost cost,
                               std::uint64_t group, std::size_t dim) {
  if (local.empty() || group <= 1) cost = {cost.total(), 0, 0, 0};
  std::uint64_t out = volume(local, cost.kept);
  // The flat share of this piece: its bytes over the group, rounded down (docs/capacity.md,
  // "Recipes": a rank's flat shares are summed before rounding, this piece's alone here).
  out += volume(local, cost.flat) / group;
  const std::uint64_t chunks = cost.chunked + cost.padded;
  if (chunks == 0) return out;
  std::vector<std::uint64_t> piece(local.begin(), local.end());
  piece[dim] = chunking::ceil_div(piece[dim], group);
  return out + volume(piece, chunks);
}

}  // namespace hpfreeze
