#pragma once
// The sizes the ranks hold of each dim of one parameter as its placements apply, with
// torch.chunk's geometry (chunk_geometry.h, the capacity planner's): `report`'s rank-0
// shape and its divisibility findings come from the same arithmetic as the planner's.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "capacity/chunk_geometry.h"

namespace hpfreeze::report_detail {

class LocalChunks {
 public:
  // A new parameter of this shape: every rank holds every dim whole.
  void start(std::span<const std::uint64_t> shape) {
    shape_ = shape;
    if (values_.size() < shape.size()) values_.resize(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) values_[d].assign(1, shape[d]);
  }

  // Chunks `dim` over `n` x `f` (a Shard is f = 1): the largest size some rank held of it
  // that does not divide by n x f, or nullopt when every one does.
  std::optional<std::uint64_t> shard(std::size_t dim, std::uint64_t n, std::uint64_t f) {
    std::vector<std::uint64_t>& values = values_[dim];
    const std::optional<std::uint64_t> bad = chunking::first_indivisible(values, n, f);
    chunking::chunk_sizes(values, n, f, next_, breaks_);
    values.swap(next_);
    return bad;
  }

  // What rank 0 (coordinate 0 of every axis) holds of `dim`: the most.
  [[nodiscard]] std::uint64_t rank0(std::size_t dim) const { return values_[dim].front(); }

 private:
  std::span<const std::uint64_t> shape_;
  std::vector<std::vector<std::uint64_t>> values_;  // per dim: distinct sizes, largest first
  std::vector<std::uint64_t> next_;
  std::vector<std::uint64_t> breaks_;
};

}  // namespace hpfreeze::report_detail
