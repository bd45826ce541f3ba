#pragma once
// The per-mesh search of CapacityModel::evaluate (capacity_ranks.cc): over a mesh's digits
// and views (rank_layout.h), the runs of equal sizes each group's steps cut them into,
// which digits are monotone, and the worst and the best rank (rank_search.cc says how).

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capacity/capacity.h"
#include "capacity/chunk_geometry.h"
#include "capacity/rank_layout.h"

namespace hpfreeze::capacity_detail {

// A sum over runs for the groups whose non-monotone digits are exactly `scope` (positions
// in the list of free digits), row-major over those digits' runs.
struct RunTable {
  std::vector<std::size_t> scope;
  std::vector<std::size_t> stride;  // per scope entry
  std::vector<std::uint64_t> cells;
};

using Group = CapacityModel::Group;
using ShardedDim = CapacityModel::ShardedDim;
using Step = CapacityModel::Step;

// The per-mesh search state: the mesh's digits and views, every digit's runs, and which
// digits are monotone. CapacityModel::evaluate runs its passes in order: scale, scan,
// cut_runs, count_classes, then worst and best.
//
// A flat member's share (Group::flat) is a fraction of a byte until a rank's shares are
// summed: on a mesh with such groups every group's bytes are counted in units of 1/scale_
// byte, scale_ the least common multiple of the sizes of the views they are divided over,
// and a rank's bytes are its sum over scale_, rounded down once (docs/capacity.md,
// "Recipes"). Rounding down keeps the order of ranks, so the search is the same.
class RankSearch {
 public:
  RankSearch(const std::vector<Group>& groups, const RankLayout& layout)
      : groups_(groups),
        layout_(layout),
        cuts_(layout.digits.size()),
        monotone_(layout.digits.size(), 1),
        view_cuts_(layout.views.size()),
        view_monotone_(layout.views.size(), 1) {}

  // Pass 0: the unit flat shares are counted in on this mesh; why the mesh is refused when
  // `full_bytes` (the most a rank can hold) in that unit pass 2^64-1.
  std::optional<std::string> scale(std::uint64_t full_bytes);
  // Pass 1: divisibility (the first offender, named by the group's first FQN and the axis),
  // the runs of every view, which views are monotone, and the groups this mesh leaves whole
  // (added to `constant`, the bytes of the parameters no axis shards).
  std::optional<Indivisible> scan(const std::vector<std::string>& first_fqns,
                                  const std::vector<std::string>& axis_order,
                                  std::uint64_t constant);
  // The digits' runs, from the views' runs; why the mesh is refused, if it is.
  std::optional<std::string> cut_runs();
  // Pass 2: the runs of every digit that cuts something; the non-monotone ones are
  // enumerated, so their runs must stay countable: why not, if they do not.
  std::optional<std::string> count_classes();

  // The worst rank's bytes (digit 0 everywhere), and of them what the members ZeRO may
  // split hold (Group::split), split on this mesh or not.
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> worst() const;
  // The best rank's bytes, and the digits of the first rank that holds them.
  std::pair<std::uint64_t, std::vector<std::uint64_t>> best();

  [[nodiscard]] std::uint64_t size(std::uint32_t view) const { return layout_.views[view].size; }

 private:
  // One group's bytes on the rank whose digits are `coord`, in the mesh's unit; a padded
  // step gives every coordinate its first chunk.
  [[nodiscard]] std::uint64_t bytes(std::size_t g, const std::vector<std::uint64_t>& coord) const {
    const Group& group = groups_[g];
    std::uint64_t total = group.weight * (unit_.empty() ? 1 : unit_[g]);  // checked by scale()
    for (const ShardedDim& dim : group.dims) {
      std::uint64_t local = dim.size;
      for (const Step& step : dim.steps) {
        const std::uint64_t n = size(step.view);
        if (n != 1) {
          local = chunking::ChunkGeometry(local, n, step.split_factor)
                      .at(step.padded ? 0 : view_value(layout_.views[step.view], coord), n);
        }
      }
      total *= local;  // local <= dim.size: stays <= full_bytes_ in the mesh's unit
    }
    return total;
  }
  // A sum of bytes in the mesh's unit, in bytes: rounded down.
  [[nodiscard]] std::uint64_t in_bytes(std::uint64_t scaled) const { return scaled / scale_; }

  // A view is monotone on a dim when every later step of it gives more for more input.
  void mark_monotone(const std::vector<const Step*>& effective,
                     const std::vector<std::vector<std::uint64_t>>& inputs);
  // Every value of a sliced digit is a run of its own: why not, when that is too much work.
  std::optional<std::string> slice_digit(std::size_t digit);

  // The least bytes of a rank whose used digits are at the runs `run` (per used digit;
  // kFree for a digit to search), and the first such rank's runs of the free digits.
  std::pair<std::uint64_t, std::vector<std::size_t>> minimum(const std::vector<std::size_t>& run);

  // add_group's steps: the group's own run starts on its free digits, their scope (free
  // digit positions, in order), the table of that scope, and its boxes added to it.
  void add_group(std::size_t g, std::vector<std::uint64_t>& coord,
                 const std::vector<std::size_t>& free_pos, const std::vector<std::size_t>& segments,
                 std::map<std::vector<std::size_t>, RunTable>& tables);
  std::vector<std::uint64_t>& own_of(std::size_t digit);
  void own_runs(const Group& group, const std::vector<std::uint64_t>& coord,
                const std::vector<std::size_t>& free_pos);
  std::vector<std::size_t> own_scope(const std::vector<std::size_t>& free_pos);
  static RunTable& table_for(const std::vector<std::size_t>& scope,
                             const std::vector<std::size_t>& segments,
                             std::map<std::vector<std::size_t>, RunTable>& tables);
  void add_boxes(std::size_t g, std::vector<std::uint64_t>& coord,
                 const std::vector<std::size_t>& scope, const std::vector<std::size_t>& segments,
                 RunTable& table);

  const std::vector<Group>& groups_;
  const RankLayout& layout_;
  std::uint64_t scale_ = 1;           // bytes are counted in units of 1/scale_ byte
  std::vector<std::uint64_t> unit_;   // per group, its weight's unit; empty when scale_ is 1
  std::uint64_t constant_split_ = 0;  // of `constant_`, what ZeRO's split members hold
  std::vector<std::vector<std::uint64_t>> cuts_;       // per digit: starts of its runs
  std::vector<char> monotone_;                         // per digit
  std::vector<std::vector<std::uint64_t>> view_cuts_;  // per view: starts of its runs
  std::vector<char> view_monotone_;                    // per view
  std::vector<std::size_t> active_;                    // groups some view of the mesh shards
  std::vector<std::uint64_t> touches_;                 // per active group: a bit per digit
  std::uint64_t constant_ = 0;                         // the bytes of every other group
  std::vector<std::size_t> used_;                      // digits that cut ranks, in order
  std::vector<std::size_t> run_last_;                  // per used digit: its last run
  std::vector<std::size_t> searched_;                  // per used digit: the last run, or kFree

  struct Scratch {
    std::vector<std::vector<std::uint64_t>> inputs;  // scan's sizes per step of a dim
    std::vector<std::size_t> digits;                 // free digits the group touches
    std::vector<std::vector<std::uint64_t>> own;  // their own run starts (the first digits.size())
    std::vector<std::uint64_t> values, next, breaks;
    std::vector<std::size_t> order, limits, index, lo, hi;
  };
  Scratch scratch_;
};

}  // namespace hpfreeze::capacity_detail
