// CapacityModel::evaluate: the exact worst and best rank of one mesh (docs/capacity.md,
// "How it is computed").
//
// A rank is a vector of digits (rank_layout.h): the mesh's axes, or in the folded layout
// pp and the dense region cut where ep cuts it. Each step of a group chunks over a view: a
// number made of some digits (an axis, a ZeRO group, edp, ep). A rank's bytes are a
// constant plus a sum over groups of weight x (product of the group's local dim sizes),
// each local size a function of the views that shard the dim. Two facts of torch.chunk
// (chunk_geometry.h) make the search cheap:
//  - rank 0 of a view holds the most, and more for a larger input: the worst rank is the
//    one at digit 0 everywhere, whatever the composition;
//  - the last view sharding a dim holds less at a higher coordinate, and so does an earlier
//    one when every later view on that dim gives more for more input (checked per mesh on
//    the values that occur). A view for which that holds in every group is *monotone*; a
//    digit whose every view is monotone and takes it whole is too: the bytes never grow
//    along it, so the best rank sits at its last value, and the first best rank by rank
//    number is found by bisecting over its runs.
// Only the other digits (the earlier views of an uneven composition where it fails, and a
// digit several views slice) are enumerated, over the runs of equal sizes every group's
// steps cut them into, each group added into a table over its own such digits as boxes
// of a difference array. So a mesh costs about groups x (digits x log(runs)) unless
// compositions make digits non-monotone.
#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "capacity/capacity.h"
#include "capacity/chunk_geometry.h"
#include "capacity/rank_layout.h"

namespace hpfreeze {
namespace {

using capacity_detail::RankLayout;
using capacity_detail::Term;
using capacity_detail::View;
using capacity_detail::view_value;
using chunking::checked_mul;
using chunking::ChunkGeometry;

// Runs of ranks enumerated per mesh for the non-monotone digits; far above what uneven
// compositions of real models produce, low enough to answer in about a second.
constexpr std::uint64_t kMaxRankClasses = std::uint64_t{1} << 22;
// A digit several views slice (the folded layout, ep cutting across axes) is enumerated
// value by value, in every group that depends on it: its values times those groups stay
// below this, so that no input makes the search slow.
constexpr std::uint64_t kMaxSlicedWork = std::uint64_t{1} << 20;
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

// Calls add(digit, value) for the digit values at which `view` may cross `start`, a start
// of one of its runs: a whole term's digit at start's digit (and, but for the last term,
// one past it, so that a box of digit runs lies on one side of start); a sliced digit is
// cut at every value by the caller.
template <class Add>
void cut_digits(const View& view, std::uint64_t start, const std::vector<char>& sliced, Add add) {
  for (std::size_t p = view.terms.size(); p-- > 0;) {
    const Term& t = view.terms[p];
    const std::uint64_t at = start % t.mod;
    start /= t.mod;
    if (sliced[t.digit] != 0) continue;
    add(t.digit, at);
    if (p + 1 < view.terms.size() && at + 1 < t.mod) add(t.digit, at + 1);
  }
}

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
// digits are monotone.
class RankSearch {
 public:
  RankSearch(const std::vector<Group>& groups, const RankLayout& layout)
      : groups_(groups),
        layout_(layout),
        cuts_(layout.digits.size()),
        monotone_(layout.digits.size(), 1),
        view_cuts_(layout.views.size()),
        view_monotone_(layout.views.size(), 1) {}

  const std::vector<Group>& groups_;
  const RankLayout& layout_;
  std::vector<std::vector<std::uint64_t>> cuts_;       // per digit: starts of its runs
  std::vector<char> monotone_;                         // per digit
  std::vector<std::vector<std::uint64_t>> view_cuts_;  // per view: starts of its runs
  std::vector<char> view_monotone_;                    // per view
  std::vector<std::size_t> active_;                    // groups some view of the mesh shards
  std::vector<std::uint64_t> touches_;                 // per active group: a bit per digit
  std::uint64_t constant_ = 0;                         // the bytes of every other group
  std::vector<std::size_t> used_;                      // digits that cut ranks, in order

  [[nodiscard]] std::uint64_t size(std::uint32_t view) const { return layout_.views[view].size; }

  // One group's bytes on the rank whose digits are `coord`.
  [[nodiscard]] std::uint64_t bytes(const Group& group,
                                    const std::vector<std::uint64_t>& coord) const {
    std::uint64_t total = group.weight;
    for (const ShardedDim& dim : group.dims) {
      std::uint64_t local = dim.size;
      for (const Step& step : dim.steps) {
        const std::uint64_t n = size(step.view);
        if (n != 1) {
          local = ChunkGeometry(local, n, step.split_factor)
                      .at(view_value(layout_.views[step.view], coord), n);
        }
      }
      total *= local;  // local <= dim.size: stays <= full_bytes_
    }
    return total;
  }

  // The least bytes of a rank whose used digits are at the runs `run` (per used digit;
  // kFree for a digit to search), and the first such rank's runs of the free digits.
  std::pair<std::uint64_t, std::vector<std::size_t>> minimum(const std::vector<std::size_t>& run);

 private:
  struct Scratch {
    std::vector<std::size_t> digits;              // free digits the group touches
    std::vector<std::vector<std::uint64_t>> own;  // their own run starts (the first digits.size())
    std::vector<std::uint64_t> values, next, breaks;
    std::vector<std::size_t> order, limits, index, lo, hi;
  };
  Scratch scratch_;

  void add_group(const Group& group, std::vector<std::uint64_t>& coord,
                 const std::vector<std::size_t>& free_pos, const std::vector<std::size_t>& segments,
                 std::map<std::vector<std::size_t>, RunTable>& tables);
};

void RankSearch::add_group(const Group& group, std::vector<std::uint64_t>& coord,
                           const std::vector<std::size_t>& free_pos,
                           const std::vector<std::size_t>& segments,
                           std::map<std::vector<std::size_t>, RunTable>& tables) {
  // The group's own run starts on each of its free digits, from the sizes that reach them;
  // in scratch buffers kept across calls (a sweep calls this for every group often).
  Scratch& x = scratch_;
  x.digits.clear();
  auto own_of = [&](std::size_t d) -> std::vector<std::uint64_t>& {
    for (std::size_t k = 0; k < x.digits.size(); ++k) {
      if (x.digits[k] == d) return x.own[k];
    }
    x.digits.push_back(d);
    if (x.own.size() < x.digits.size()) x.own.emplace_back();
    std::vector<std::uint64_t>& o = x.own[x.digits.size() - 1];
    o.clear();
    if (layout_.sliced[d] != 0) o = cuts_[d];  // every value
    return o;
  };
  for (const ShardedDim& dim : group.dims) {
    x.values.assign(1, dim.size);
    for (const Step& step : dim.steps) {
      const std::uint64_t n = size(step.view);
      if (n == 1) continue;
      const View& view = layout_.views[step.view];
      x.next.clear();
      bool is_free = false;
      for (const Term& t : view.terms) {
        if (free_pos[t.digit] == kFree) continue;
        own_of(t.digit);
        is_free = true;
      }
      for (std::uint64_t v : x.values) {
        const ChunkGeometry geo(v, n, step.split_factor);
        if (!is_free) {
          x.next.push_back(geo.at(view_value(view, coord), n));
          continue;
        }
        // Every size the view's runs give (a superset of what the fixed digits allow).
        x.breaks.clear();
        geo.breakpoints(n, x.breaks);
        for (std::uint64_t b : x.breaks) {
          x.next.push_back(geo.at(b, n));
          cut_digits(view, b, layout_.sliced, [&](std::size_t d, std::uint64_t at) {
            if (free_pos[d] != kFree) own_of(d).push_back(at);
          });
        }
      }
      std::sort(x.next.begin(), x.next.end());
      x.next.erase(std::unique(x.next.begin(), x.next.end()), x.next.end());
      x.values.swap(x.next);
    }
  }
  // In free-digit order, so that equal scopes share a table.
  x.order.resize(x.digits.size());
  for (std::size_t k = 0; k < x.order.size(); ++k) x.order[k] = k;
  std::sort(x.order.begin(), x.order.end(), [&](std::size_t p, std::size_t q) {
    return free_pos[x.digits[p]] < free_pos[x.digits[q]];
  });
  std::vector<std::size_t> scope;
  for (std::size_t k : x.order) {
    std::vector<std::uint64_t>& o = x.own[k];
    o.push_back(0);
    std::sort(o.begin(), o.end());
    o.erase(std::unique(o.begin(), o.end()), o.end());
    scope.push_back(free_pos[x.digits[k]]);
  }
  RunTable& table = tables[scope];
  if (table.cells.empty()) {
    table.scope = scope;
    table.stride.assign(scope.size(), 1);
    std::size_t cells = 1;
    for (std::size_t k = scope.size(); k-- > 0;) {
      table.stride[k] = cells;
      cells *= segments[scope[k]];  // <= the classes of every free digit: checked
    }
    table.cells.assign(cells, 0);
  }
  // Each combination of own run starts is a box of equal bytes up to the next own start:
  // added at its corners, the table's prefix sums (in minimum) spread it.
  x.limits.clear();
  for (std::size_t k : x.order) x.limits.push_back(x.own[k].size());
  x.index.assign(scope.size(), 0);
  x.lo.resize(scope.size());
  x.hi.resize(scope.size());
  std::vector<std::size_t>& index = x.index;
  std::vector<std::size_t>& lo = x.lo;
  std::vector<std::size_t>& hi = x.hi;
  do {
    for (std::size_t k = 0; k < scope.size(); ++k) {
      const std::size_t d = x.digits[x.order[k]];
      const std::vector<std::uint64_t>& c = cuts_[d];
      const std::vector<std::uint64_t>& o = x.own[x.order[k]];
      coord[d] = o[index[k]];
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
  } while (advance(index, x.limits));
}

std::pair<std::uint64_t, std::vector<std::size_t>> RankSearch::minimum(
    const std::vector<std::size_t>& run) {
  const std::size_t ndigits = layout_.digits.size();
  std::vector<std::uint64_t> coord(ndigits, 0);
  std::vector<std::size_t> free_pos(ndigits, kFree);
  std::vector<std::size_t> segments;  // per free digit
  for (std::size_t u = 0; u < used_.size(); ++u) {
    const std::size_t d = used_[u];
    if (run[u] == kFree) {
      free_pos[d] = segments.size();
      segments.push_back(cuts_[d].size());
    } else {
      coord[d] = cuts_[d][run[u]];
    }
  }
  std::uint64_t base = constant_;
  std::map<std::vector<std::size_t>, RunTable> tables;
  std::uint64_t free_mask = 0;  // a digit is one of at most 64: each has 2 values or more
  for (std::size_t d = 0; d < ndigits; ++d) {
    if (free_pos[d] != kFree) free_mask |= std::uint64_t{1} << d;
  }
  for (std::size_t a = 0; a < active_.size(); ++a) {
    const Group& group = groups_[active_[a]];
    if ((touches_[a] & free_mask) != 0) {
      add_group(group, coord, free_pos, segments, tables);
    } else {
      base += bytes(group, coord);  // the sum stays <= full_bytes_
    }
  }
  // The boxes' corners become sums: a prefix sum along each digit of each table.
  for (auto& [scope, table] : tables) {
    for (std::size_t k = 0; k < scope.size(); ++k) {
      const std::size_t stride = table.stride[k];
      const std::size_t extent = segments[scope[k]];
      for (std::size_t cell = 0; cell < table.cells.size(); ++cell) {
        if ((cell / stride) % extent != 0) table.cells[cell] += table.cells[cell - stride];
      }
    }
  }
  // Every combination of runs of the free digits, row-major; the first least wins ties.
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

// The coordinates a MeshCapacity reports of the rank at `coord`.
void report_rank(const RankLayout& layout, const std::vector<std::uint64_t>& coord,
                 std::vector<std::uint64_t>& per_axis, std::uint64_t (&expert)[2]) {
  per_axis.clear();
  for (const View& v : layout.mesh_views) per_axis.push_back(view_value(v, coord));
  if (layout.edp) expert[0] = view_value(*layout.edp, coord);
  if (layout.ep) expert[1] = view_value(*layout.ep, coord);
}

std::string refused(const Mesh& mesh, std::string_view why) {
  const std::string label = mesh.axes.empty() ? std::string() : " " + format_mesh(mesh);
  return "the ranks of mesh" + label + " " + std::string(why) + "; too many to compare exactly";
}

}  // namespace

Expected<MeshCapacity> CapacityModel::evaluate(const Mesh& mesh,
                                               std::optional<std::uint64_t> budget) const {
  MeshCapacity out;
  out.mesh = mesh;
  out.zero = zero_groups(mesh);
  out.max_rank.assign(mesh.axes.size(), 0);
  out.min_rank.assign(mesh.axes.size(), 0);
  const RankLayout layout = capacity_detail::lay_out(mesh, axis_order_, zero_views_, layout_);
  if (layout.indivisible) {  // no rank to count
    out.indivisible = layout.indivisible;
    if (budget) out.fits = false;
    return out;
  }
  if (layout_ == ExpertLayout::kFolded) {
    out.expert = ExpertMesh{layout.edp ? layout.edp->size : 1, layout.ep ? layout.ep->size : 1};
  }
  RankSearch search(groups_, layout);

  // Pass 1: divisibility, the runs of every view, which views are monotone, and the groups
  // this mesh leaves whole.
  search.constant_ = constant_bytes_;
  std::vector<std::vector<std::uint64_t>> inputs;  // per effective step of a dim
  std::vector<const Step*> effective;
  std::vector<std::uint64_t> next;
  std::vector<std::uint64_t> breaks;
  constexpr std::uint32_t kNoView = std::numeric_limits<std::uint32_t>::max();
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    std::optional<Indivisible> first;  // the failing step of the lowest axis
    std::uint32_t first_view = kNoView;
    std::uint64_t whole = group.weight;
    bool active = false;
    for (const ShardedDim& dim : group.dims) {
      whole *= dim.size;  // <= full_bytes_
      effective.clear();
      inputs.assign(1, {dim.size});
      for (const Step& step : dim.steps) {
        const std::uint64_t n = search.size(step.view);
        if (n == 1) continue;
        active = true;
        effective.push_back(&step);
        if (!out.indivisible && !step.uneven && step.view < first_view) {
          if (const std::optional<std::uint64_t> v =
                  chunking::first_indivisible(inputs.back(), n, step.split_factor)) {
            first = Indivisible{first_fqns_[g],    dim.dim, *v, axis_order_[step.view], n,
                                step.split_factor, {}};
            first_view = step.view;
          }
        }
        chunking::chunk_sizes(inputs.back(), n, step.split_factor, next, breaks,
                              &search.view_cuts_[step.view]);
        inputs.push_back(next);
      }
      // A view is monotone on this dim when every later step gives more for more input.
      bool later_grow = true;
      for (std::size_t t = effective.size(); t-- > 0;) {
        if (!later_grow) search.view_monotone_[effective[t]->view] = 0;
        if (t > 0 && later_grow) {
          later_grow = grows_with_input(inputs[t], search.size(effective[t]->view),
                                        effective[t]->split_factor);
        }
      }
    }
    if (first && !out.indivisible) out.indivisible = std::move(first);
    if (active) {
      search.active_.push_back(g);
      std::uint64_t touches = 0;
      for (const ShardedDim& dim : group.dims) {
        for (const Step& step : dim.steps) {
          for (const Term& t : layout.views[step.view].terms)
            touches |= std::uint64_t{1} << t.digit;
        }
      }
      search.touches_.push_back(touches);
    } else {
      search.constant_ += whole;
    }
  }

  // The digits' runs, from the views' runs: a digit is monotone when every view that
  // shards something with it is and takes it whole; a sliced digit is cut at every value.
  const std::size_t ndigits = layout.digits.size();
  for (std::size_t v = 0; v < layout.views.size(); ++v) {
    std::vector<std::uint64_t>& c = search.view_cuts_[v];
    if (c.empty()) continue;
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    for (const Term& t : layout.views[v].terms) {
      if (search.view_monotone_[v] == 0 || layout.sliced[t.digit] != 0) {
        search.monotone_[t.digit] = 0;
      }
      if (layout.sliced[t.digit] != 0 && search.cuts_[t.digit].empty()) {
        const std::uint64_t bit = std::uint64_t{1} << t.digit;
        const auto groups = static_cast<std::uint64_t>(
            std::count_if(search.touches_.begin(), search.touches_.end(),
                          [bit](std::uint64_t touches) { return (touches & bit) != 0; }));
        std::uint64_t work = 0;
        if (!checked_mul(layout.digits[t.digit], groups, work) || work > kMaxSlicedWork) {
          return make_error({}, {},
                            refused(mesh, "cut " + std::to_string(layout.digits[t.digit]) +
                                              " ranks across axes into expert groups for " +
                                              plural(groups, "group") + " of parameters"));
        }
        for (std::uint64_t x = 0; x < layout.digits[t.digit]; ++x) {
          search.cuts_[t.digit].push_back(x);
        }
      }
    }
    for (std::uint64_t start : c) {
      cut_digits(layout.views[v], start, layout.sliced,
                 [&](std::size_t d, std::uint64_t at) { search.cuts_[d].push_back(at); });
    }
  }

  // Pass 2: the runs of every digit that cuts something here; the non-monotone ones are
  // enumerated, so their runs must stay countable.
  std::vector<std::size_t> run_last;  // per used digit: its last run
  std::vector<std::size_t> searched;  // per used digit: the last run, or kFree
  std::uint64_t classes = 1;
  for (std::size_t d = 0; d < ndigits; ++d) {
    std::vector<std::uint64_t>& c = search.cuts_[d];
    if (c.empty()) continue;
    c.push_back(0);
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    search.used_.push_back(d);
    run_last.push_back(c.size() - 1);
    searched.push_back(search.monotone_[d] != 0 ? c.size() - 1 : kFree);
    if (search.monotone_[d] != 0) continue;
    if (!checked_mul(classes, c.size(), classes) || classes > kMaxRankClasses) {
      return make_error({}, {},
                        refused(mesh, "fall into more than " + std::to_string(kMaxRankClasses) +
                                          " classes of distinct sizes"));
    }
  }
  const std::vector<std::size_t>& used = search.used_;

  // The worst rank: digit 0 everywhere. There too, the largest weight ZeRO-3 gathers: a
  // member's weight alone times its piece under the plan (every step but ZeRO's).
  const std::vector<std::uint64_t> origin(ndigits, 0);
  out.max_rank_bytes = search.constant_;
  out.largest_gathered = constant_gathered_;
  out.largest_gathered_fqn = constant_gathered_fqn_;
  const auto naxes = static_cast<std::uint32_t>(axis_order_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    std::uint64_t gathered = group.gathered;
    for (const ShardedDim& dim : group.dims) {
      std::uint64_t local = dim.size;
      for (const Step& step : dim.steps) {
        const std::uint64_t n = search.size(step.view);
        if (step.view < naxes && n != 1)
          local = ChunkGeometry(local, n, step.split_factor).at(0, n);
      }
      gathered *= local;  // <= the member's weight: no overflow
    }
    if (gathered > out.largest_gathered) {
      out.largest_gathered = gathered;
      out.largest_gathered_fqn = group.gathered_fqn;
    }
  }
  for (std::size_t g : search.active_) out.max_rank_bytes += search.bytes(groups_[g], origin);

  // The best rank: its bytes with every monotone digit at its last run, then digit by
  // digit in rank order the first run that can still reach them.
  const std::uint64_t least = search.minimum(searched).first;
  std::vector<std::size_t> chosen(used.size(), kFree);
  for (std::size_t u = 0; u < used.size(); ++u) {
    std::vector<std::size_t> run = searched;
    std::copy(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(u), run.begin());
    if (search.monotone_[used[u]] == 0) {
      chosen[u] = search.minimum(run).second.front();  // u is the first free digit
      continue;
    }
    // Bytes never grow along a monotone digit: bisect for the first run reaching `least`.
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
  std::vector<std::uint64_t> best(ndigits, 0);
  for (std::size_t u = 0; u < used.size(); ++u) best[used[u]] = search.cuts_[used[u]][chosen[u]];
  std::uint64_t ignored[2] = {0, 0};
  report_rank(layout, origin, out.max_rank, out.expert ? out.expert->max_rank : ignored);
  report_rank(layout, best, out.min_rank, out.expert ? out.expert->min_rank : ignored);
  if (budget) {
    out.fits = out.divisible() && out.max_rank_bytes <= *budget;
    out.over_by = out.max_rank_bytes > *budget ? out.max_rank_bytes - *budget : 0;
  }
  return out;
}

}  // namespace hpfreeze
