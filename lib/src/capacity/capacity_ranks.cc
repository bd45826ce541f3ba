// CapacityModel::evaluate: the exact worst and best rank of one mesh (docs/capacity.md,
// "How it is computed"), through the per-mesh search of rank_search.h.
#include <string_view>
#include <utility>

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

std::string refused(const Mesh& mesh, std::string_view why) {
  const std::string label = mesh.axes.empty() ? std::string() : " " + format_mesh(mesh);
  return "the ranks of mesh" + label + " " + std::string(why) + "; too many to compare exactly";
}

// The largest weight ZeRO-3 gathers, on the worst rank (digit 0 everywhere): a member's
// weight alone times its piece under the plan (every step but ZeRO's, whose views come
// after the `naxes` axes); `out` holds the constant's on entry.
void add_largest_gathered(const std::vector<Group>& groups, const RankSearch& search,
                          std::uint32_t naxes, MeshCapacity& out) {
  for (const Group& group : groups) {
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
}

}  // namespace

Expected<MeshCapacity> CapacityModel::evaluate(const Mesh& mesh) const {
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
  out.indivisible = search.scan(first_fqns_, axis_order_, constant_bytes_);
  std::optional<std::string> refusal = search.cut_runs();
  if (!refusal) refusal = search.count_classes();
  if (refusal) return make_error({}, {}, refused(mesh, *refusal));
  out.max_rank_bytes = search.worst();
  out.largest_gathered = constant_gathered_;
  out.largest_gathered_fqn = constant_gathered_fqn_;
  add_largest_gathered(groups_, search, static_cast<std::uint32_t>(axis_order_.size()), out);
  const auto [least, best] = search.best();
  out.min_rank_bytes = least;
  std::uint64_t ignored[2] = {0, 0};
  report_rank(layout, std::vector<std::uint64_t>(layout.digits.size(), 0), out.max_rank,
              out.expert ? out.expert->max_rank : ignored);
  report_rank(layout, best, out.min_rank, out.expert ? out.expert->min_rank : ignored);
  return out;
}

}  // namespace hpfreeze
