// lay_out (rank_layout.h): the digits of a mesh's ranks and the views made of them.
#include "capacity/rank_layout.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace hpfreeze::capacity_detail {
namespace {

constexpr std::array<std::string_view, 3> kDenseOrder{"dp", "cp", "tp"};

struct Builder {
  RankLayout out;

  View whole(std::uint64_t size) {
    if (size == 1) return {};
    const auto digit = static_cast<std::uint32_t>(out.digits.size());
    out.digits.push_back(size);
    out.sliced.push_back(0);
    return View{{Term{digit, 1, size}}, size};
  }
  static void append(View& to, const View& from) {
    to.terms.insert(to.terms.end(), from.terms.begin(), from.terms.end());
    to.size *= from.size;  // a product of mesh sizes: no overflow past the devices
  }
};

// The folded layout: pp, then the dense region (every other axis but ep, the extra axes
// in mesh order, then dp, cp, tp), re-sliced as [edp, ep].
void lay_out_folded(const Mesh& mesh, Builder& b) {
  const std::size_t naxes = mesh.axes.size();
  b.out.mesh_views.assign(naxes, View{});
  std::uint64_t ep = 1;
  std::size_t ep_at = naxes;
  std::vector<std::size_t> dense;  // mesh axis indexes, in flattening order
  for (std::size_t i = 0; i < naxes; ++i) {
    const std::string& name = mesh.axes[i].axis;
    if (name == kExpertAxis) {
      ep = mesh.axes[i].size;
      ep_at = i;
    } else if (name != kStageAxis &&
               std::find(kDenseOrder.begin(), kDenseOrder.end(), name) == kDenseOrder.end()) {
      dense.push_back(i);
    }
  }
  for (std::string_view name : kDenseOrder) {
    for (std::size_t i = 0; i < naxes; ++i) {
      if (mesh.axes[i].axis == name) dense.push_back(i);
    }
  }
  std::uint64_t region = 1;
  for (std::size_t i : dense) region *= mesh.axes[i].size;  // <= the devices
  if (region % ep != 0) {
    Indivisible x;
    x.size = region;
    x.axis = std::string(kExpertAxis);
    x.axis_size = ep;
    for (std::size_t i : dense) x.dense_axes.push_back(mesh.axes[i].axis);
    if (x.dense_axes.empty()) x.dense_axes.emplace_back("(none)");
    b.out.indivisible = std::move(x);
    return;
  }
  for (std::size_t i = 0; i < naxes; ++i) {
    if (mesh.axes[i].axis == kStageAxis) b.out.mesh_views[i] = b.whole(mesh.axes[i].size);
  }
  // The dense axes that count, their suffix products, and where ep cuts them: the last
  // suffix ep divides (first) and the first suffix that divides ep (last).
  std::vector<std::size_t> axes;
  for (std::size_t i : dense) {
    if (mesh.axes[i].size > 1) axes.push_back(i);
  }
  const std::size_t m = axes.size();
  std::vector<std::uint64_t> suffix(m + 1, 1);
  for (std::size_t j = m; j-- > 0;) suffix[j] = suffix[j + 1] * mesh.axes[axes[j]].size;
  std::size_t first = 0;
  while (first < m && suffix[first + 1] % ep == 0) ++first;
  std::size_t last = 0;
  while (ep % suffix[last] != 0) ++last;
  View edp;
  View epc;
  for (std::size_t j = 0; j < first; ++j) {
    b.out.mesh_views[axes[j]] = b.whole(mesh.axes[axes[j]].size);
    Builder::append(edp, b.out.mesh_views[axes[j]]);
  }
  if (last == first + 1) {
    // ep cuts one axis: its edp part and its ep part are two digits.
    const std::uint64_t n = mesh.axes[axes[first]].size;
    const std::uint64_t k = ep / suffix[last];
    View hi = b.whole(n / k);
    View lo = b.whole(k);
    View& own = b.out.mesh_views[axes[first]];
    Builder::append(own, hi);
    Builder::append(own, lo);
    Builder::append(edp, hi);
    Builder::append(epc, lo);
  } else if (last > first + 1) {
    // ep cuts across several axes: one digit for them all, each a slice of it.
    const std::uint64_t q = suffix[first] / suffix[last];
    const std::uint64_t k = ep / suffix[last];
    const auto x = static_cast<std::uint32_t>(b.out.digits.size());
    b.out.digits.push_back(q);
    b.out.sliced.push_back(1);
    for (std::size_t j = first; j < last; ++j) {
      const std::uint64_t n = mesh.axes[axes[j]].size;
      b.out.mesh_views[axes[j]] = View{{Term{x, suffix[j + 1] / suffix[last], n}}, n};
    }
    Builder::append(edp, View{{Term{x, k, q / k}}, q / k});
    Builder::append(epc, View{{Term{x, 1, k}}, k});
  }
  for (std::size_t j = std::max(first, last); j < m; ++j) {
    b.out.mesh_views[axes[j]] = b.whole(mesh.axes[axes[j]].size);
    Builder::append(epc, b.out.mesh_views[axes[j]]);
  }
  if (ep_at != naxes) b.out.mesh_views[ep_at] = epc;
  b.out.edp = std::move(edp);
  b.out.ep = std::move(epc);
}

}  // namespace

RankLayout lay_out(const Mesh& mesh, const std::vector<std::string>& model_axes,
                   const std::vector<CapacityModel::ZeroView>& zero_views, ExpertLayout layout) {
  Builder b;
  if (layout == ExpertLayout::kFolded) {
    lay_out_folded(mesh, b);
    if (b.out.indivisible) return std::move(b.out);
  } else {
    for (const AxisSize& a : mesh.axes) b.out.mesh_views.push_back(b.whole(a.size));
  }
  auto view_of = [&](std::string_view axis) -> View {
    for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
      if (mesh.axes[i].axis == axis) return b.out.mesh_views[i];
    }
    return {};
  };
  for (const std::string& a : model_axes) b.out.views.push_back(view_of(a));
  for (const CapacityModel::ZeroView& z : zero_views) {
    View v;
    if (z.expert) {
      if (b.out.edp) v = *b.out.edp;
    } else {
      for (std::uint32_t a : z.axes) Builder::append(v, b.out.views[a]);
    }
    b.out.views.push_back(std::move(v));
  }
  return std::move(b.out);
}

}  // namespace hpfreeze::capacity_detail
