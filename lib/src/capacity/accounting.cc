// What one element of a parameter costs, and the optimizer table (accounting.h; the element
// sizes are spec/dtypes.h's).
#include "capacity/accounting.h"

#include <algorithm>
#include <array>
#include <string>

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
  const ElementBytes bytes =
      element_bytes(dtype, element_size, requires_grad, accounting.optimizer);
  const int stage = accounting.zero.stage;
  ElementCost out;
  for (const auto& [part, from] :
       {std::pair{bytes.weight, kWeightSplitFrom}, std::pair{bytes.grad, kGradSplitFrom},
        std::pair{bytes.master + bytes.moments, kStateSplitFrom}}) {
    (stage >= from ? out.split : out.kept) += part;
  }
  return out;
}

std::uint64_t zero_rank0_bytes(std::span<const std::uint64_t> local, ElementCost cost,
                               std::uint64_t group) {
  if (local.empty() || group <= 1) cost = {cost.kept + cost.split, 0};
  const std::uint64_t kept = volume(local, cost.kept);
  if (cost.split == 0) return kept;
  return kept + volume(local.subspan(1), cost.split * chunking::ceil_div(local[0], group));
}

}  // namespace hpfreeze
