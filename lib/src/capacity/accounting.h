#pragma once
// What one element of a parameter costs (docs/capacity.md, "Accounting" and "ZeRO"): its
// bytes by class under the optimizer, and which of them ZeRO's stage splits. The planner's
// members (CapacityModel::build) and the report's rank-0 table count with these alone, so a
// new way of counting (a framework's recipe) is a change here and in the settings value
// (Accounting, capacity_args.h).

#include <cstdint>
#include <span>
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

// element_bytes(...).total(): what one element costs in all.
std::uint64_t bytes_per_element(std::string_view dtype, std::uint64_t element_size,
                                bool requires_grad, Optimizer optimizer);

// bytes_per_element in two parts: what every rank of the ZeRO group keeps of its local
// piece, and what ZeRO's stage splits over that group (stage 1 the master copy and the
// moments, 2 the gradient too, 3 the weight too). kept + split is bytes_per_element.
struct ElementCost {
  std::uint64_t kept = 0;
  std::uint64_t split = 0;
};
ElementCost element_cost(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                         const Accounting& accounting);

// What the first rank of a ZeRO group of `group` ranks holds of a parameter whose piece
// under the plan is `local`, each element costing `cost`: the kept part whole, the split
// part's dim 0 chunked over the group (torch.chunk's first chunk, the largest); the whole
// piece when it has no dim or the group is one rank. At most the parameter's bytes, which
// the caller has checked fit. (The planner's members split the same dim: capacity_model.cc.)
std::uint64_t zero_rank0_bytes(std::span<const std::uint64_t> local, ElementCost cost,
                               std::uint64_t group);

}  // namespace hpfreeze
