// CapacityModel::evaluate: the exact worst and best rank of one mesh (docs/capacity.md,
// "How it is computed"), through the per-mesh search of rank_search.h.
#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "capacity/capacity.h"
#include "capacity/chunk_geometry.h"
#include "capacity/rank_layout.h"
#include "capacity/rank_search.h"

namespace hpfreeze {
namespace {

using capacity_detail::Group;
using capacity_detail::RankLayout;
using capacity_detail::RankSearch;
using capacity_detail::ShardedDim;
using capacity_detail::Step;
using capacity_detail::View;
using capacity_detail::view_value;
using chunking::ChunkGeometry;

// The coordinates a MeshCapacity reports of the rank at `coord`.
void report_rank(const RankLayout& layout, const std::vector<std::uint64_t>& coord,
                 std::vector<std::uint64_t>& per_axis, std::uint64_t (&expert)[2]) {
  per_axis.clear();
  for (const View& v : layout.mesh_views) per_axis.push_back(view_value(v, coord));
  if (layout.edp) expert[0] = view_value(*layout.edp, coord);
  if (layout.ep) expert[1] = view_value(*layout.ep, coord);
}

// The product of a group's sharded dims as the plan leaves them on the worst rank (digit 0
// everywhere): every step but ZeRO's, whose views come after the `naxes` axes.
std::uint64_t plan_piece(const Group& group, const RankSearch& search, std::uint32_t naxes) {
  std::uint64_t out = 1;
  for (const ShardedDim& dim : group.dims) {
    std::uint64_t local = dim.size;
    for (const Step& step : dim.steps) {
      const std::uint64_t n = search.size(step.view);
      if (step.view < naxes && n != 1) local = ChunkGeometry(local, n, step.split_factor).at(0, n);
    }
    out *= local;  // <= the product of the dims
  }
  return out;
}

// The largest weight ZeRO-3 gathers, on the worst rank: a member's weight alone times its
// piece under the plan; `out` holds the constant's on entry.
void add_largest_gathered(const std::vector<Group>& groups, const RankSearch& search,
                          std::uint32_t naxes, MeshCapacity& out) {
  for (const Group& group : groups) {
    const std::uint64_t gathered = group.gathered * plan_piece(group, search, naxes);
    if (gathered > out.largest_gathered) {
      out.largest_gathered = gathered;
      out.largest_gathered_fqn = group.gathered_fqn;
      out.gathered_group = static_cast<std::size_t>(&group - groups.data());
    }
  }
}

// What ZeRO-3 gathers as the recipe counts it (gathered_module_bytes): `unit` bytes per
// element of the module owning the most elements directly, its pieces as the plan leaves
// them on the worst rank; every rank of the mesh is charged it.
std::uint64_t module_gathered(const std::vector<Group>& groups,
                              const std::vector<CapacityModel::ModuleShare>& shares,
                              std::uint64_t unit, const RankSearch& search, std::uint32_t naxes) {
  std::vector<std::uint64_t> piece(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) piece[g] = plan_piece(groups[g], search, naxes);
  std::vector<std::uint64_t> owned;
  std::uint64_t most = 0;
  for (const CapacityModel::ModuleShare& s : shares) {
    if (owned.size() <= s.module) owned.resize(s.module + 1, 0);
    // <= the module's elements, which the model checked fit with `unit` each.
    owned[s.module] += s.elements * (s.group < piece.size() ? piece[s.group] : 1);
    most = std::max(most, owned[s.module]);
  }
  return most * unit;
}

}  // namespace

bool CapacityModel::same_groups(const CapacityModel& other) const {
  const bool same = layout_ == other.layout_ && constant_bytes_ == other.constant_bytes_ &&
                    full_bytes_ == other.full_bytes_ &&
                    constant_gathered_ == other.constant_gathered_ &&
                    zero_views_ == other.zero_views_ && axis_order_ == other.axis_order_ &&
                    groups_.size() == other.groups_.size() && module_unit_ == other.module_unit_ &&
                    module_shares_ == other.module_shares_;
  if (!same) return false;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const Group& a = groups_[g];
    const Group& b = other.groups_[g];
    if (a.weight != b.weight || a.gathered != b.gathered || a.dims != b.dims || a.flat != b.flat)
      return false;
  }
  return true;
}

void CapacityModel::rename(MeshCapacity& m, const CapacityModel& from) const {
  if (m.indivisible && !m.indivisible->no_ranks()) {
    // The group scan named: the first whose first parameter it is.
    for (std::size_t g = 0; g < from.groups_.size(); ++g) {
      if (from.groups_[g].first_param != m.indivisible->param) continue;
      m.indivisible->fqn = first_fqns_[g];
      m.indivisible->param = groups_[g].first_param;
      break;
    }
  }
  m.largest_gathered_fqn = m.gathered_group < groups_.size()
                               ? groups_[m.gathered_group].gathered_fqn
                               : constant_gathered_fqn_;
}

MeshCapacity CapacityModel::evaluate(const Mesh& mesh) const {
  MeshCapacity out;
  out.mesh = mesh;
  out.zero = zero_groups(mesh);
  out.max_rank.assign(mesh.axes.size(), 0);
  out.min_rank.assign(mesh.axes.size(), 0);
  const RankLayout layout = capacity_detail::lay_out(mesh, axis_order_, zero_views_, layout_);
  if (layout.indivisible) {  // no rank to count
    out.indivisible = layout.indivisible;
    return out;
  }
  if (layout_ == ExpertLayout::kFolded) {
    out.expert = ExpertMesh{layout.edp ? layout.edp->size : 1, layout.ep ? layout.ep->size : 1};
  }
  RankSearch search(groups_, layout);
  out.refused = search.scale(full_bytes_);
  if (out.refused) return out;
  out.indivisible = search.scan(first_fqns_, axis_order_, constant_bytes_);
  out.refused = search.cut_runs();
  if (!out.refused) out.refused = search.count_classes();
  if (out.refused) return out;
  const auto naxes = static_cast<std::uint32_t>(axis_order_.size());
  // Charged to every rank alike; the model checked that it fits beside the bytes.
  const std::uint64_t gathered =
      module_unit_ == 0 ? 0 : module_gathered(groups_, module_shares_, module_unit_, search, naxes);
  const auto [worst, split] = search.worst();
  out.max_rank_bytes = worst + gathered;
  out.unsplit_bytes = worst - split;
  out.largest_gathered = constant_gathered_;
  out.largest_gathered_fqn = constant_gathered_fqn_;
  add_largest_gathered(groups_, search, naxes, out);
  const auto [least, best] = search.best();
  out.min_rank_bytes = least + gathered;
  std::uint64_t ignored[2] = {0, 0};
  report_rank(layout, std::vector<std::uint64_t>(layout.digits.size(), 0), out.max_rank,
              out.expert ? out.expert->max_rank : ignored);
  report_rank(layout, best, out.min_rank, out.expert ? out.expert->min_rank : ignored);
  out.stages.push_back(StageCapacity{std::nullopt, out.max_rank_bytes, out.min_rank_bytes,
                                     out.max_rank, out.min_rank});
  return out;
}

}  // namespace hpfreeze
