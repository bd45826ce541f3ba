#pragma once
// The one order of axes (docs/capacity.md, "Meshes and their order"): a given order, then
// the axes named later that it lacks, by name. The planner's request and its model make
// theirs with it.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpfreeze::capacity_detail {

// Position of `axis` in `order`, or order.size(): meshes have a handful of axes, so a scan
// beats any map.
inline std::size_t axis_position(const std::vector<std::string>& order, std::string_view axis) {
  std::size_t i = 0;
  while (i < order.size() && order[i] != axis) ++i;
  return i;
}

class AxisOrder {
 public:
  // `given`, each axis at its first place.
  explicit AxisOrder(const std::vector<std::string>& given) {
    for (const std::string& a : given) {
      if (axis_position(order_, a) == order_.size()) order_.push_back(a);
    }
  }

  // An axis to append at the next append() unless the order has it.
  void name(std::string_view axis) {
    if (axis_position(order_, axis) == order_.size() &&
        std::find(named_.begin(), named_.end(), axis) == named_.end()) {
      named_.emplace_back(axis);
    }
  }

  // The axes named since the last append, by name, after the others.
  void append() {
    std::sort(named_.begin(), named_.end());
    for (std::string& a : named_) order_.push_back(std::move(a));
    named_.clear();
  }

  [[nodiscard]] std::vector<std::string>& order() { return order_; }

 private:
  std::vector<std::string> order_;
  std::vector<std::string> named_;
};

}  // namespace hpfreeze::capacity_detail
