// The bytes one element of a parameter costs under an optimizer, and what ZeRO splits of
// them (docs/capacity.md, "Accounting"); the element sizes are spec/dtypes.h's.
#include <algorithm>
#include <string_view>

#include "capacity/capacity.h"
#include "spec/dtypes.h"

namespace hpfreeze {

std::uint64_t bytes_per_element(std::string_view dtype, std::uint64_t element_size,
                                bool requires_grad, Optimizer optimizer) {
  const Dtype* d = find_dtype(dtype);
  if (optimizer == Optimizer::kNone || !requires_grad || d == nullptr || !d->floating) {
    return element_size;
  }
  const std::uint64_t master = element_size < 4 ? 4 : 0;
  const std::uint64_t moment = std::max<std::uint64_t>(4, element_size);
  const std::uint64_t moments = optimizer == Optimizer::kSgd        ? 0
                                : optimizer == Optimizer::kMomentum ? 1
                                                                    : 2;
  return 2 * element_size + master + moments * moment;
}

ElementCost element_cost(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                         Optimizer optimizer, int zero_stage) {
  const std::uint64_t all = bytes_per_element(dtype, element_size, requires_grad, optimizer);
  if (zero_stage >= 3) return {0, all};
  // Without gradients and state (all == the weight) stages 1 and 2 split nothing.
  const std::uint64_t weight = element_size;
  const std::uint64_t grad = all == weight ? 0 : element_size;
  const std::uint64_t state = all - weight - grad;  // master copy and moments
  switch (zero_stage) {
    case 1:
      return {weight + grad, state};
    case 2:
      return {weight, grad + state};
    default:
      return {all, 0};
  }
}

}  // namespace hpfreeze
