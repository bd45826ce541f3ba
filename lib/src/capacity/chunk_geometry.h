#pragma once
// torch.chunk geometry of one sharded dim on one mesh axis, shared by the capacity
// planner's model (capacity.cc), its per-mesh search (capacity_ranks.cc) and report's
// rank-0 shapes (report/report_local.h).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace hpfreeze::chunking {

inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// Adds v to sum, which stays at 2^64-1 when it would pass it; false then.
inline bool saturating_add(std::uint64_t& sum, std::uint64_t v) {
  if (!__builtin_add_overflow(sum, v, &sum)) return true;
  sum = UINT64_MAX;
  return false;
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// The chunk geometry of torch.chunk over `total` = n x f chunks (Shard is f = 1): chunks
// of ceil(v / total) elements, the last ones smaller or empty; rank i holds chunks
// i, i + n, ..., i + (f-1) n (StridedShard) and their sizes add up.
//
// Two properties the planner's search relies on (tests/unit/capacity_test.cc checks them
// against torch.chunk): at(i) never grows with i, and at(0) never shrinks when v grows.
struct ChunkGeometry {
  std::uint64_t chunk = 0;  // full chunk size
  std::uint64_t full = 0;   // number of full chunks
  std::uint64_t rem = 0;    // size of the one partial chunk (index `full`), 0 when none

  ChunkGeometry(std::uint64_t v, std::uint64_t n, std::uint64_t f) {
    if (v == 0) return;
    std::uint64_t total = 0;
    // More chunks than elements: every chunk holds at most one element.
    chunk = checked_mul(n, f, total) ? ceil_div(v, total) : 1;
    full = v / chunk;
    rem = v % chunk;
  }
  // Rank i of n holds chunks i + j n for j < f: those below `full` are full, and the
  // partial chunk is held by rank full mod n.
  [[nodiscard]] std::uint64_t at(std::uint64_t i, std::uint64_t n) const {
    if (chunk == 0) return 0;
    const std::uint64_t full_held = full / n + (i < full % n ? 1 : 0);
    return chunk * full_held + (rem != 0 && full % n == i ? rem : 0);
  }
  // Starts of the runs of equal sizes over ranks 0..n-1: at most 0, full mod n and the
  // rank after it.
  void breakpoints(std::uint64_t n, std::vector<std::uint64_t>& out) const {
    out.push_back(0);
    if (chunk == 0) return;
    const std::uint64_t r = full % n;
    if (r != 0) out.push_back(r);
    if (r + 1 < n) out.push_back(r + 1);
  }
};

// Whether `v` elements chunk evenly over n x f chunks.
inline bool divides(std::uint64_t v, std::uint64_t n, std::uint64_t f) {
  std::uint64_t nf = 0;
  return checked_mul(n, f, nf) ? v % nf == 0 : v == 0;
}

// The largest of `values` (distinct sizes, largest first) that does not chunk evenly over
// n x f; nullopt when every one does.
inline std::optional<std::uint64_t> first_indivisible(const std::vector<std::uint64_t>& values,
                                                      std::uint64_t n, std::uint64_t f) {
  for (std::uint64_t v : values) {
    if (!divides(v, n, f)) return v;
  }
  return std::nullopt;
}

// One more axis (n ranks, split factor f) chunking a dim: `values` are the distinct sizes
// some rank held of it before (largest first), `next` receives the distinct sizes some rank
// holds after (largest first: rank 0's), and `cuts`, when given, the starts of the runs of
// equal sizes over the axis's ranks (breakpoints, repeats included). `breaks` is scratch.
inline void chunk_sizes(const std::vector<std::uint64_t>& values, std::uint64_t n, std::uint64_t f,
                        std::vector<std::uint64_t>& next, std::vector<std::uint64_t>& breaks,
                        std::vector<std::uint64_t>* cuts = nullptr) {
  next.clear();
  for (std::uint64_t v : values) {
    const ChunkGeometry geo(v, n, f);
    breaks.clear();
    geo.breakpoints(n, breaks);
    for (std::uint64_t b : breaks) {
      if (cuts != nullptr) cuts->push_back(b);
      next.push_back(geo.at(b, n));
    }
  }
  std::sort(next.begin(), next.end(), std::greater<>());
  next.erase(std::unique(next.begin(), next.end()), next.end());
}

}  // namespace hpfreeze::chunking
