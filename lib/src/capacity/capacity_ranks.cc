// CapacityModel::evaluate: the exact worst and best rank of one mesh (docs/capacity.md,
// "How it is computed").
//
// A rank's bytes are a constant plus a sum over groups of weight x (product of the group's
// local dim sizes), each local size a function of the coordinates of the axes that shard
// the dim. Two facts of torch.chunk (chunk_geometry.h) make the search cheap:
//  - rank 0 of an axis holds the most, and more for a larger input: the worst rank is the
//    one at coordinate 0 of every axis, whatever the composition;
//  - the last axis sharding a dim holds less at a higher coordinate, and so does an earlier
//    one when every later axis on that dim gives more for more input (checked per mesh on
//    the values that occur). An axis for which that holds in every group is *monotone*:
//    the bytes never grow along it, so the best rank sits at its last coordinate, and the
//    first best rank in row-major order is found by bisecting over its runs.
// Only the other axes (the earlier axes of an uneven composition where it fails) are
// enumerated, over the runs of equal sizes every group's steps cut them into, each group
// added into a table over its own such axes as boxes of a difference array. So a mesh
// costs about groups x (axes x log(runs)) unless compositions make axes non-monotone.
#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "capacity/chunk_geometry.h"
#include "hpfreeze/capacity.h"

namespace hpfreeze {
namespace {

using chunking::checked_mul;
using chunking::ChunkGeometry;

// Runs of ranks enumerated per mesh for the non-monotone axes; far above what uneven
// compositions of real models produce, low enough to answer in about a second.
constexpr std::uint64_t kMaxRankClasses = std::uint64_t{1} << 22;
constexpr std::size_t kFree = std::numeric_limits<std::size_t>::max();

// Odometer over `limits` (row-major, last fastest); false once every index wrapped.
bool advance(std::vector<std::size_t>& index, const std::vector<std::size_t>& limits) {
  for (std::size_t i = index.size(); i-- > 0;) {
    if (++index[i] < limits[i]) return true;
    index[i] = 0;
  }
  return false;
}

// Whether chunking a larger input on `n` x `f` never gives any rank less, over the input
// sizes `inputs` (any order): compared where either geometry changes.
bool grows_with_input(std::vector<std::uint64_t> inputs, std::uint64_t n, std::uint64_t f) {
  std::sort(inputs.begin(), inputs.end());
  std::vector<std::uint64_t> points;
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const ChunkGeometry lo(inputs[k - 1], n, f);
    const ChunkGeometry hi(inputs[k], n, f);
    points.clear();
    lo.breakpoints(n, points);
    hi.breakpoints(n, points);
    for (std::uint64_t i : points) {
      if (lo.at(i, n) > hi.at(i, n)) return false;
    }
  }
  return true;
}

// A sum over runs for the groups whose non-monotone axes are exactly `scope` (positions
// in the list of free axes), row-major over those axes' runs.
struct RunTable {
  std::vector<std::size_t> scope;
  std::vector<std::size_t> stride;  // per scope entry
  std::vector<std::uint64_t> cells;
};

using Group = CapacityModel::Group;
using ShardedDim = CapacityModel::ShardedDim;
using Step = CapacityModel::Step;

// The per-mesh search state: the mesh's axis sizes, every axis's runs, and which axes
// are monotone.
class RankSearch {
 public:
  RankSearch(const std::vector<Group>& groups, std::vector<std::uint64_t> n)
      : groups_(groups), n_(std::move(n)), cuts_(n_.size()), monotone_(n_.size(), 1) {}

  const std::vector<Group>& groups_;
  std::vector<std::uint64_t> n_;                  // per model axis
  std::vector<std::vector<std::uint64_t>> cuts_;  // per model axis: starts of its runs
  std::vector<char> monotone_;                    // per model axis
  std::vector<std::size_t> active_;               // groups some axis of the mesh shards
  std::uint64_t constant_ = 0;                    // the bytes of every other group
  std::vector<std::size_t> used_;                 // model axes that cut ranks, in order

  // One group's bytes on the rank at `coord` (per model axis).
  [[nodiscard]] std::uint64_t bytes(const Group& group,
                                    const std::vector<std::uint64_t>& coord) const {
    std::uint64_t total = group.weight;
    for (const ShardedDim& dim : group.dims) {
      std::uint64_t local = dim.size;
      for (const Step& step : dim.steps) {
        const std::uint64_t size = n_[step.axis];
        if (size != 1) {
          local = ChunkGeometry(local, size, step.split_factor).at(coord[step.axis], size);
        }
      }
      total *= local;  // local <= dim.size: stays <= full_bytes_
    }
    return total;
  }

  // The least bytes of a rank whose used axes are at the runs `run` (per used axis; kFree
  // for an axis to search), and the first such rank's runs of the free axes, row-major.
  std::pair<std::uint64_t, std::vector<std::size_t>> minimum(const std::vector<std::size_t>& run);

 private:
  void add_group(const Group& group, std::vector<std::uint64_t>& coord,
                 const std::vector<std::size_t>& free_pos, const std::vector<std::size_t>& segments,
                 std::map<std::vector<std::size_t>, RunTable>& tables);
};

void RankSearch::add_group(const Group& group, std::vector<std::uint64_t>& coord,
                           const std::vector<std::size_t>& free_pos,
                           const std::vector<std::size_t>& segments,
                           std::map<std::vector<std::size_t>, RunTable>& tables) {
  // The group's own run starts on each of its free axes, from the sizes that reach them.
  std::vector<std::size_t> axes;  // model axes, free, in scope order (by free position)
  std::vector<std::vector<std::uint64_t>> own;
  std::vector<std::uint64_t> values;
  std::vector<std::uint64_t> next;
  for (const ShardedDim& dim : group.dims) {
    values.assign(1, dim.size);
    for (const Step& step : dim.steps) {
      const std::uint64_t size = n_[step.axis];
      if (size == 1) continue;
      next.clear();
      const bool is_free = free_pos[step.axis] != kFree;
      if (is_free) {
        axes.push_back(step.axis);
        own.emplace_back();
      }
      for (std::uint64_t v : values) {
        const ChunkGeometry geo(v, size, step.split_factor);
        if (!is_free) {
          next.push_back(geo.at(coord[step.axis], size));
          continue;
        }
        const std::size_t from = own.back().size();
        geo.breakpoints(size, own.back());
        for (std::size_t k = from; k < own.back().size(); ++k) {
          next.push_back(geo.at(own.back()[k], size));
        }
      }
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      values.swap(next);
    }
  }
  // In free-axis order, so that equal scopes share a table.
  std::vector<std::size_t> order(axes.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return free_pos[axes[x]] < free_pos[axes[y]]; });
  std::vector<std::size_t> scope;
  std::vector<std::size_t> sorted_axes;
  std::vector<std::vector<std::uint64_t>> sorted_own;
  for (std::size_t k : order) {
    std::vector<std::uint64_t>& o = own[k];
    std::sort(o.begin(), o.end());
    o.erase(std::unique(o.begin(), o.end()), o.end());
    scope.push_back(free_pos[axes[k]]);
    sorted_axes.push_back(axes[k]);
    sorted_own.push_back(std::move(o));
  }
  RunTable& table = tables[scope];
  if (table.cells.empty()) {
    table.scope = scope;
    table.stride.assign(scope.size(), 1);
    std::size_t cells = 1;
    for (std::size_t k = scope.size(); k-- > 0;) {
      table.stride[k] = cells;
      cells *= segments[scope[k]];  // <= the classes of every free axis: checked
    }
    table.cells.assign(cells, 0);
  }
  // Each combination of own run starts is a box of equal bytes up to the next own start:
  // added at its corners, the table's prefix sums (in minimum) spread it.
  std::vector<std::size_t> limits;
  for (const auto& o : sorted_own) limits.push_back(o.size());
  std::vector<std::size_t> index(scope.size(), 0);
  std::vector<std::size_t> lo(scope.size());
  std::vector<std::size_t> hi(scope.size());
  do {
    for (std::size_t k = 0; k < scope.size(); ++k) {
      const std::vector<std::uint64_t>& c = cuts_[sorted_axes[k]];
      const std::vector<std::uint64_t>& o = sorted_own[k];
      coord[sorted_axes[k]] = o[index[k]];
      lo[k] =
          static_cast<std::size_t>(std::lower_bound(c.begin(), c.end(), o[index[k]]) - c.begin());
      hi[k] = index[k] + 1 < o.size()
                  ? static_cast<std::size_t>(std::lower_bound(c.begin(), c.end(), o[index[k] + 1]) -
                                             c.begin())
                  : c.size();
    }
    const std::uint64_t value = bytes(group, coord);
    // Inclusion-exclusion over the 2^d corners; modular arithmetic, exact once summed.
    for (std::size_t corner = 0; corner < (std::size_t{1} << scope.size()); ++corner) {
      std::size_t cell = 0;
      bool inside = true;
      bool negative = false;
      for (std::size_t k = 0; k < scope.size(); ++k) {
        const bool upper = (corner >> k & 1U) != 0;
        const std::size_t at = upper ? hi[k] : lo[k];
        if (at == segments[scope[k]]) inside = false;
        negative ^= upper;
        cell += at * table.stride[k];
      }
      if (!inside) continue;
      if (negative) {
        table.cells[cell] -= value;
      } else {
        table.cells[cell] += value;
      }
    }
  } while (advance(index, limits));
}

std::pair<std::uint64_t, std::vector<std::size_t>> RankSearch::minimum(
    const std::vector<std::size_t>& run) {
  const std::size_t naxes = n_.size();
  std::vector<std::uint64_t> coord(naxes, 0);
  std::vector<std::size_t> free_pos(naxes, kFree);
  std::vector<std::size_t> segments;  // per free axis
  for (std::size_t u = 0; u < used_.size(); ++u) {
    const std::size_t a = used_[u];
    if (run[u] == kFree) {
      free_pos[a] = segments.size();
      segments.push_back(cuts_[a].size());
    } else {
      coord[a] = cuts_[a][run[u]];
    }
  }
  std::uint64_t base = constant_;
  std::map<std::vector<std::size_t>, RunTable> tables;
  for (std::size_t g : active_) {
    const Group& group = groups_[g];
    const bool varies = std::any_of(group.dims.begin(), group.dims.end(), [&](const auto& d) {
      return std::any_of(d.steps.begin(), d.steps.end(), [&](const Step& s) {
        return n_[s.axis] != 1 && free_pos[s.axis] != kFree;
      });
    });
    if (varies) {
      add_group(group, coord, free_pos, segments, tables);
    } else {
      base += bytes(group, coord);  // the sum stays <= full_bytes_
    }
  }
  // The boxes' corners become sums: a prefix sum along each axis of each table.
  for (auto& [scope, table] : tables) {
    for (std::size_t k = 0; k < scope.size(); ++k) {
      const std::size_t stride = table.stride[k];
      const std::size_t extent = segments[scope[k]];
      for (std::size_t cell = 0; cell < table.cells.size(); ++cell) {
        if ((cell / stride) % extent != 0) table.cells[cell] += table.cells[cell - stride];
      }
    }
  }
  // Every combination of runs of the free axes, row-major; the first least wins ties.
  std::vector<std::size_t> index(segments.size(), 0);
  std::vector<std::size_t> best(segments.size(), 0);
  std::uint64_t least = std::numeric_limits<std::uint64_t>::max();
  do {
    std::uint64_t total = base;
    for (const auto& [scope, table] : tables) {
      std::size_t cell = 0;
      for (std::size_t k = 0; k < scope.size(); ++k) cell += index[scope[k]] * table.stride[k];
      total += table.cells[cell];  // a rank's bytes never exceed full_bytes_
    }
    if (total < least) {
      least = total;
      best = index;
    }
  } while (advance(index, segments));
  return {least, best};
}

}  // namespace

Expected<MeshCapacity> CapacityModel::evaluate(const Mesh& mesh,
                                               std::optional<std::uint64_t> budget) const {
  MeshCapacity out;
  out.mesh = mesh;
  const std::size_t naxes = axis_order_.size();
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::uint64_t> n(naxes, 1);
  std::vector<std::size_t> mesh_pos(naxes, kNone);
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    auto it = std::find(axis_order_.begin(), axis_order_.end(), mesh.axes[i].axis);
    if (it == axis_order_.end()) continue;  // shards nothing
    const auto a = static_cast<std::size_t>(it - axis_order_.begin());
    n[a] = mesh.axes[i].size;
    mesh_pos[a] = i;
  }
  RankSearch search(groups_, std::move(n));
  const std::vector<std::uint64_t>& size_of = search.n_;

  // Pass 1: divisibility, the runs of every axis, which axes are monotone, and the groups
  // this mesh leaves whole.
  search.constant_ = constant_bytes_;
  std::vector<std::vector<std::uint64_t>> inputs;  // per effective step of a dim
  std::vector<const Step*> effective;
  std::vector<std::uint64_t> next;
  std::vector<std::uint64_t> breaks;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    std::optional<Indivisible> first;  // the failing step of the lowest axis
    std::size_t first_axis = kNone;
    std::uint64_t whole = group.weight;
    bool active = false;
    for (const ShardedDim& dim : group.dims) {
      whole *= dim.size;  // <= full_bytes_
      effective.clear();
      inputs.assign(1, {dim.size});
      for (const Step& step : dim.steps) {
        const std::uint64_t size = size_of[step.axis];
        if (size == 1) continue;
        active = true;
        effective.push_back(&step);
        if (!out.indivisible && !step.uneven && step.axis < first_axis) {
          if (const std::optional<std::uint64_t> v =
                  chunking::first_indivisible(inputs.back(), size, step.split_factor)) {
            first = Indivisible{first_fqns_[g],         dim.dim, *v,
                                axis_order_[step.axis], size,    step.split_factor};
            first_axis = step.axis;
          }
        }
        chunking::chunk_sizes(inputs.back(), size, step.split_factor, next, breaks,
                              &search.cuts_[step.axis]);
        inputs.push_back(next);
      }
      // An axis is monotone on this dim when every later step gives more for more input.
      bool later_grow = true;
      for (std::size_t t = effective.size(); t-- > 0;) {
        if (!later_grow) search.monotone_[effective[t]->axis] = 0;
        if (t > 0 && later_grow) {
          later_grow =
              grows_with_input(inputs[t], size_of[effective[t]->axis], effective[t]->split_factor);
        }
      }
    }
    if (first && !out.indivisible) out.indivisible = std::move(first);
    if (active) {
      search.active_.push_back(g);
    } else {
      search.constant_ += whole;
    }
  }

  // Pass 2: the runs of every axis that shards something here; the non-monotone ones are
  // enumerated, so their runs must stay countable.
  std::vector<std::size_t> run_last;  // per used axis: its last run
  std::vector<std::size_t> searched;  // per used axis: the last run, or kFree
  std::uint64_t classes = 1;
  for (std::size_t a = 0; a < naxes; ++a) {
    std::vector<std::uint64_t>& c = search.cuts_[a];
    if (c.empty()) continue;
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    search.used_.push_back(a);
    run_last.push_back(c.size() - 1);
    searched.push_back(search.monotone_[a] != 0 ? c.size() - 1 : kFree);
    if (search.monotone_[a] != 0) continue;
    if (!checked_mul(classes, c.size(), classes) || classes > kMaxRankClasses) {
      const std::string label = mesh.axes.empty() ? std::string() : " " + format_mesh(mesh);
      return make_error({}, {},
                        "the ranks of mesh" + label + " fall into more than " +
                            std::to_string(kMaxRankClasses) +
                            " classes of distinct sizes; too many to compare exactly");
    }
  }
  const std::vector<std::size_t>& used = search.used_;

  // The worst rank: coordinate 0 of every axis.
  const std::vector<std::uint64_t> origin(naxes, 0);
  out.max_rank_bytes = search.constant_;
  for (std::size_t g : search.active_) out.max_rank_bytes += search.bytes(groups_[g], origin);
  out.max_rank.assign(mesh.axes.size(), 0);

  // The best rank: its bytes with every monotone axis at its last run, then axis by axis
  // in row-major order the first run that can still reach them.
  const std::uint64_t least = search.minimum(searched).first;
  std::vector<std::size_t> chosen(used.size(), kFree);
  for (std::size_t u = 0; u < used.size(); ++u) {
    std::vector<std::size_t> run = searched;
    std::copy(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(u), run.begin());
    if (search.monotone_[used[u]] == 0) {
      chosen[u] = search.minimum(run).second.front();  // u is the first free axis
      continue;
    }
    // Bytes never grow along a monotone axis: bisect for the first run reaching `least`.
    std::size_t lo = 0;
    std::size_t hi = run_last[u];
    while (lo < hi) {
      run[u] = lo + (hi - lo) / 2;
      if (search.minimum(run).first == least) {
        hi = run[u];
      } else {
        lo = run[u] + 1;
      }
    }
    chosen[u] = lo;
  }
  out.min_rank_bytes = least;
  out.min_rank.assign(mesh.axes.size(), 0);
  for (std::size_t u = 0; u < used.size(); ++u) {
    out.min_rank[mesh_pos[used[u]]] = search.cuts_[used[u]][chosen[u]];
  }
  if (budget) {
    out.fits = out.divisible() && out.max_rank_bytes <= *budget;
    out.over_by = out.max_rank_bytes > *budget ? out.max_rank_bytes - *budget : 0;
  }
  return out;
}

}  // namespace hpfreeze
