#pragma once
// What one element of a parameter costs (docs/capacity.md, "Accounting", "ZeRO" and
// "Recipes"): its bytes by class under the optimizer and the recipe, and which of them
// ZeRO's stage splits, and how. The planner's members (CapacityModel::build) and the
// report's rank-0 table count with these alone; a framework's accounting is a row of the
// recipe table in accounting.cc, not a branch elsewhere.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hpfreeze/capacity/capacity_args.h"

namespace hpfreeze {

// The bytes one element costs, by class: the weight at its dtype and, for a floating-point
// parameter that requires grad under an optimizer other than none, its gradient (the same
// dtype), an fp32 master copy when the dtype is narrower than 4 bytes, and 0/1/2 moments
// (sgd/momentum/adam(w)) of max(4, element size) bytes each.
struct ElementBytes {
  std::uint64_t weight = 0;
  std::uint64_t grad = 0;
  std::uint64_t master = 0;
  std::uint64_t moments = 0;

  [[nodiscard]] std::uint64_t total() const { return weight + grad + master + moments; }
};
ElementBytes element_bytes(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                           Optimizer optimizer);

// element_bytes(...).total(): what one element costs in all (the dtensor recipe's).
std::uint64_t bytes_per_element(std::string_view dtype, std::uint64_t element_size,
                                bool requires_grad, Optimizer optimizer);

// What one element costs under an Accounting, in the parts ZeRO treats alike over the
// parameter's group: kept whole on every rank; split per tensor in chunks of the split dim
// (torch.chunk), each rank its real rows; split so, every rank allocating the largest
// chunk (FSDP2's padding); divided evenly as one flat buffer of the group's tensors
// (Megatron's distributed optimizer, DeepSpeed's partitions). The recipe's row says which
// class goes where (stage 1 the master copy and the moments, 2 the gradient too, 3 the
// weight too) and what the gradient costs.
struct ElementCost {
  std::uint64_t kept = 0;
  std::uint64_t chunked = 0;
  std::uint64_t padded = 0;
  std::uint64_t flat = 0;

  [[nodiscard]] std::uint64_t split() const { return chunked + padded + flat; }
  [[nodiscard]] std::uint64_t total() const { return kept + split(); }
};
ElementCost element_cost(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                         const Accounting& accounting);

// The usage error of accounting settings that do not go together, for report and diff
// --model alike (a new rule between settings goes here): today a --zero stage the recipe
// does not have (Megatron-LM's stop at 1, its distributed optimizer), naming the recipe;
// nullopt when the settings go together.
std::optional<std::string> accounting_error(const Accounting& accounting);

// Whether ZeRO splits the optimizer state (the master copy and the moments) per tensor in
// chunks under `accounting`, so that a rank may hold none of a tensor's.
bool state_in_chunks(const Accounting& accounting);

// What ZeRO-3 gathers, as the recipe counts it: bytes per element of the module that owns
// the most elements directly (DeepSpeed's estimator: 4); 0 when it is not counted.
std::uint64_t gathered_module_bytes(const Accounting& accounting);

// The dim ZeRO chunks a piece of `rank` dims on: --expert-zero-dim for a folded expert
// whose piece has more dims than that, else 0.
std::size_t zero_split_dim(const ZeroSharding& zero, bool expert, std::size_t rank);

// What the first rank of a ZeRO group of `group` ranks holds of a parameter whose piece
// under the plan is `local`, each element costing `cost`: the kept part whole, the chunked
// and padded parts with dim `dim` chunked over the group (torch.chunk's first chunk, the
// largest), the flat part's even share (rounded down); the whole piece when it has no dim
// or the group is one rank. At most the parameter's bytes, which the caller has checked
// fit. (The planner's members split the same way: capacity_model.cc.)
std::uint64_t zero_rank0_bytes(std::span<const std::uint64_t> local, ElementCost cost,
                               std::uint64_t group, std::size_t dim = 0);

}  // namespace hpfreeze
