#pragma once
// The planner's accounting for a test in one call: the optimizer, ZeRO and the layout, the
// rest as by default (capacity_args.h).

#include <utility>

#include "hpfreeze/capacity/capacity_args.h"

namespace hpfreeze::test_support {

inline Accounting counting(Optimizer optimizer, ZeroSharding zero = {},
                           ExpertLayout layout = ExpertLayout::kAxis) {
  Accounting out;
  out.optimizer = optimizer;
  out.zero = std::move(zero);
  out.layout = layout;
  return out;
}

}  // namespace hpfreeze::test_support
