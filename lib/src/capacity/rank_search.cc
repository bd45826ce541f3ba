// The per-mesh search (rank_search.h): the exact worst and best rank of one mesh
// (docs/capacity.md, "How it is computed").
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
#include "capacity/rank_search.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze::capacity_detail {
namespace {

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
bool grows_with_input(const std::vector<std::uint64_t>& sizes, std::uint64_t n, std::uint64_t f) {
  if (sizes.size() < 2) return true;  // one input: nothing to compare (and no copy)
  std::vector<std::uint64_t> inputs(sizes);
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

}  // namespace

std::optional<std::string> RankSearch::scale(std::uint64_t full_bytes) {
  for (const Group& group : groups_) {
    if (!group.flat) continue;
    const std::uint64_t n = size(*group.flat);
    if (!checked_mul(scale_ / std::gcd(scale_, n), n, scale_)) scale_ = 0;
    if (scale_ == 0) break;
  }
  std::uint64_t most = 0;
  if (scale_ == 0 || !checked_mul(full_bytes, scale_, most)) {
    scale_ = 1;
    return "divide flat buffers over groups whose sizes need a unit too fine for 2^64-1 of "
           "their bytes";
  }
  if (scale_ == 1) return std::nullopt;
  unit_.resize(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    unit_[g] = groups_[g].flat ? scale_ / size(*groups_[g].flat) : scale_;
  }
  return std::nullopt;
}

std::optional<Indivisible> RankSearch::scan(const std::vector<std::string>& first_fqns,
                                            const std::vector<std::string>& axis_order,
                                            std::uint64_t constant) {
  constant_ = constant * scale_;  // checked by scale()
  const std::vector<std::uint64_t> origin(layout_.digits.size(), 0);
  std::optional<Indivisible> indivisible;
  // Per effective step of a dim, the sizes it chunks: the first `depth` entries, kept
  // across dims and groups so that no dim allocates them again.
  std::vector<std::vector<std::uint64_t>>& inputs = scratch_.inputs;
  std::vector<const Step*> effective;
  std::vector<std::uint64_t>& breaks = scratch_.breaks;
  constexpr std::uint32_t kNoView = std::numeric_limits<std::uint32_t>::max();
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& group = groups_[g];
    std::optional<Indivisible> first;  // the failing step of the lowest axis
    std::uint32_t first_view = kNoView;
    bool active = false;
    for (const ShardedDim& dim : group.dims) {
      effective.clear();
      if (inputs.empty()) inputs.emplace_back();
      inputs[0].assign(1, dim.size);
      std::size_t depth = 1;
      for (const Step& step : dim.steps) {
        const std::uint64_t n = size(step.view);
        if (n == 1) continue;
        effective.push_back(&step);
        if (inputs.size() == depth) inputs.emplace_back();
        if (step.padded) {  // the first chunk on every rank: no run of the view
          inputs[depth].clear();
          for (std::uint64_t v : inputs[depth - 1])
            inputs[depth].push_back(ChunkGeometry(v, n, step.split_factor).at(0, n));
          std::sort(inputs[depth].begin(), inputs[depth].end());
          inputs[depth].erase(std::unique(inputs[depth].begin(), inputs[depth].end()),
                              inputs[depth].end());
          ++depth;
          continue;
        }
        active = true;
        if (!indivisible && !step.uneven && step.view < first_view) {
          if (const std::optional<std::uint64_t> v =
                  chunking::first_indivisible(inputs[depth - 1], n, step.split_factor)) {
            first = Indivisible{first_fqns[g],     dim.dim, *v, axis_order[step.view], n,
                                step.split_factor, {},      {}, group.first_param};
            first_view = step.view;
          }
        }
        chunking::chunk_sizes(inputs[depth - 1], n, step.split_factor, inputs[depth], breaks,
                              &view_cuts_[step.view]);
        ++depth;
      }
      mark_monotone(effective, inputs);
    }
    if (first && !indivisible) indivisible = std::move(first);
    if (!active) {  // the same on every rank
      const std::uint64_t whole = bytes(g, origin);
      constant_ += whole;
      if (group.split) constant_split_ += whole;
      continue;
    }
    active_.push_back(g);
    std::uint64_t touches = 0;
    for (const ShardedDim& dim : group.dims) {
      for (const Step& step : dim.steps) {
        if (step.padded) continue;
        for (const Term& t : layout_.views[step.view].terms) touches |= std::uint64_t{1} << t.digit;
      }
    }
    touches_.push_back(touches);
  }
  return indivisible;
}

void RankSearch::mark_monotone(const std::vector<const Step*>& effective,
                               const std::vector<std::vector<std::uint64_t>>& inputs) {
  bool later_grow = true;
  for (std::size_t t = effective.size(); t-- > 0;) {
    // A padded step is the same on every coordinate, and grows with its input.
    if (effective[t]->padded) continue;
    if (!later_grow) view_monotone_[effective[t]->view] = 0;
    if (t > 0 && later_grow) {
      later_grow =
          grows_with_input(inputs[t], size(effective[t]->view), effective[t]->split_factor);
    }
  }
}

std::optional<std::string> RankSearch::slice_digit(std::size_t digit) {
  const std::uint64_t bit = std::uint64_t{1} << digit;
  const auto groups = static_cast<std::uint64_t>(
      std::count_if(touches_.begin(), touches_.end(),
                    [bit](std::uint64_t touches) { return (touches & bit) != 0; }));
  std::uint64_t work = 0;
  if (!checked_mul(layout_.digits[digit], groups, work) || work > kMaxSlicedWork) {
    return "cut " + std::to_string(layout_.digits[digit]) +
           " ranks across axes into expert groups for " + plural(groups, "group") +
           " of parameters";
  }
  for (std::uint64_t x = 0; x < layout_.digits[digit]; ++x) cuts_[digit].push_back(x);
  return std::nullopt;
}

std::optional<std::string> RankSearch::cut_runs() {
  // A digit is monotone when every view that shards something with it is and takes it
  // whole; a sliced digit is cut at every value.
  for (std::size_t v = 0; v < layout_.views.size(); ++v) {
    std::vector<std::uint64_t>& c = view_cuts_[v];
    if (c.empty()) continue;
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    for (const Term& t : layout_.views[v].terms) {
      const bool sliced = layout_.sliced[t.digit] != 0;
      if (view_monotone_[v] == 0 || sliced) monotone_[t.digit] = 0;
      if (sliced && cuts_[t.digit].empty()) {
        if (std::optional<std::string> why = slice_digit(t.digit)) return why;
      }
    }
    for (std::uint64_t start : c) {
      cut_digits(layout_.views[v], start, layout_.sliced,
                 [&](std::size_t d, std::uint64_t at) { cuts_[d].push_back(at); });
    }
  }
  return std::nullopt;
}

std::optional<std::string> RankSearch::count_classes() {
  std::uint64_t classes = 1;
  for (std::size_t d = 0; d < layout_.digits.size(); ++d) {
    std::vector<std::uint64_t>& c = cuts_[d];
    if (c.empty()) continue;
    c.push_back(0);
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    used_.push_back(d);
    run_last_.push_back(c.size() - 1);
    searched_.push_back(monotone_[d] != 0 ? c.size() - 1 : kFree);
    if (monotone_[d] != 0) continue;
    if (!checked_mul(classes, c.size(), classes) || classes > kMaxRankClasses) {
      return "fall into more than " + std::to_string(kMaxRankClasses) +
             " classes of distinct sizes";
    }
  }
  return std::nullopt;
}

std::pair<std::uint64_t, std::uint64_t> RankSearch::worst() const {
  const std::vector<std::uint64_t> origin(layout_.digits.size(), 0);
  std::uint64_t out = constant_;
  std::uint64_t split = constant_split_;
  for (std::size_t g : active_) {
    const std::uint64_t b = bytes(g, origin);
    out += b;
    if (groups_[g].split) split += b;
  }
  // What is kept is whole bytes in the mesh's unit: only the flat shares round.
  return {in_bytes(out), in_bytes(out) - (out - split) / scale_};
}

std::pair<std::uint64_t, std::vector<std::uint64_t>> RankSearch::best() {
  // Its bytes with every monotone digit at its last run, then digit by digit in rank order
  // the first run that can still reach them.
  const std::uint64_t least = minimum(searched_).first;
  std::vector<std::size_t> chosen(used_.size(), kFree);
  for (std::size_t u = 0; u < used_.size(); ++u) {
    std::vector<std::size_t> run = searched_;
    std::copy(chosen.begin(), chosen.begin() + static_cast<std::ptrdiff_t>(u), run.begin());
    if (monotone_[used_[u]] == 0) {
      chosen[u] = minimum(run).second.front();  // u is the first free digit
      continue;
    }
    // Bytes never grow along a monotone digit: bisect for the first run reaching `least`.
    std::size_t lo = 0;
    std::size_t hi = run_last_[u];
    while (lo < hi) {
      run[u] = lo + (hi - lo) / 2;
      if (minimum(run).first == least) {
        hi = run[u];
      } else {
        lo = run[u] + 1;
      }
    }
    chosen[u] = lo;
  }
  std::vector<std::uint64_t> digits(layout_.digits.size(), 0);
  for (std::size_t u = 0; u < used_.size(); ++u) digits[used_[u]] = cuts_[used_[u]][chosen[u]];
  return {least, digits};
}

void RankSearch::add_group(std::size_t g, std::vector<std::uint64_t>& coord,
                           const std::vector<std::size_t>& free_pos,
                           const std::vector<std::size_t>& segments,
                           std::map<std::vector<std::size_t>, RunTable>& tables) {
  own_runs(groups_[g], coord, free_pos);
  const std::vector<std::size_t> scope = own_scope(free_pos);
  add_boxes(g, coord, scope, segments, table_for(scope, segments, tables));
}

std::vector<std::uint64_t>& RankSearch::own_of(std::size_t digit) {
  Scratch& x = scratch_;
  for (std::size_t k = 0; k < x.digits.size(); ++k) {
    if (x.digits[k] == digit) return x.own[k];
  }
  x.digits.push_back(digit);
  if (x.own.size() < x.digits.size()) x.own.emplace_back();
  std::vector<std::uint64_t>& o = x.own[x.digits.size() - 1];
  o.clear();
  if (layout_.sliced[digit] != 0) o = cuts_[digit];  // every value
  return o;
}

void RankSearch::own_runs(const Group& group, const std::vector<std::uint64_t>& coord,
                          const std::vector<std::size_t>& free_pos) {
  // The group's own run starts on each of its free digits, from the sizes that reach them;
  // in scratch buffers kept across calls (a sweep calls this for every group often).
  Scratch& x = scratch_;
  x.digits.clear();
  for (const ShardedDim& dim : group.dims) {
    x.values.assign(1, dim.size);
    for (const Step& step : dim.steps) {
      const std::uint64_t n = size(step.view);
      if (n == 1) continue;
      const View& view = layout_.views[step.view];
      x.next.clear();
      bool is_free = false;
      for (const Term& t : view.terms) {
        if (free_pos[t.digit] == kFree || step.padded) continue;
        own_of(t.digit);
        is_free = true;
      }
      for (std::uint64_t v : x.values) {
        const ChunkGeometry geo(v, n, step.split_factor);
        if (!is_free) {
          x.next.push_back(geo.at(step.padded ? 0 : view_value(view, coord), n));
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
}

std::vector<std::size_t> RankSearch::own_scope(const std::vector<std::size_t>& free_pos) {
  // In free-digit order, so that equal scopes share a table.
  Scratch& x = scratch_;
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
  return scope;
}

RunTable& RankSearch::table_for(const std::vector<std::size_t>& scope,
                                const std::vector<std::size_t>& segments,
                                std::map<std::vector<std::size_t>, RunTable>& tables) {
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
  return table;
}

void RankSearch::add_boxes(std::size_t g, std::vector<std::uint64_t>& coord,
                           const std::vector<std::size_t>& scope,
                           const std::vector<std::size_t>& segments, RunTable& table) {
  // Each combination of own run starts is a box of equal bytes up to the next own start:
  // added at its corners, the table's prefix sums (in minimum) spread it.
  Scratch& x = scratch_;
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
    const std::uint64_t value = bytes(g, coord);
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
    if ((touches_[a] & free_mask) != 0) {
      add_group(active_[a], coord, free_pos, segments, tables);
    } else {
      base += bytes(active_[a], coord);  // the sum stays <= full_bytes_ in the mesh's unit
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
    if (in_bytes(total) < least) {  // in bytes: the first rank of the least rounded value
      least = in_bytes(total);
      best = index;
    }
  } while (advance(index, segments));
  return {least, best};
}

}  // namespace hpfreeze::capacity_detail
