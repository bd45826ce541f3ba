#include "capacity/capacity.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "capacity/chunk_geometry.h"
#include "capacity/usage_error.h"
#include "spec/dtypes.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kMaxMeshes = 65536;

using chunking::checked_mul;

using capacity_detail::usage_error;

std::string who(std::string_view fqn) { return "parameter " + quote_for_diagnostic(fqn); }

}  // namespace

namespace {

// Position of `axis` in `order`, or order.size(): meshes have a handful of axes, so a scan
// beats any map.
std::size_t position(const std::vector<std::string>& order, std::string_view axis) {
  std::size_t i = 0;
  while (i < order.size() && order[i] != axis) ++i;
  return i;
}

// The grouping key of a parameter: its sharded dims, their sizes and steps, flattened.
struct KeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& key) const {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::uint64_t v : key) h = (h ^ v) * 0x100000001b3ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

}  // namespace

Expected<CapacityModel> CapacityModel::build(const std::vector<CapacityParam>& params,
                                             std::vector<std::string> axis_order,
                                             const Accounting& accounting) {
  return build(CapacityParamSource{params.size(), [&params](std::size_t i) { return params[i]; }},
               std::move(axis_order), accounting);
}

Expected<CapacityModel> CapacityModel::build(const CapacityParamSource& params,
                                             std::vector<std::string> axis_order,
                                             const Accounting& accounting) {
  const ZeroSharding& zero = accounting.zero;
  const ExpertLayout layout = accounting.layout;
  CapacityModel model;
  model.layout_ = layout;
  for (std::string& a : axis_order) {
    if (position(model.axis_order_, a) == model.axis_order_.size()) {
      model.axis_order_.push_back(std::move(a));
    }
  }
  std::vector<std::string> extra;  // axes of placements and ZeRO the order lacks, by name
  auto add_extra = [&](std::string_view axis) {
    if (position(model.axis_order_, axis) == model.axis_order_.size() &&
        std::find(extra.begin(), extra.end(), axis) == extra.end()) {
      extra.emplace_back(axis);
    }
  };
  for (std::size_t i = 0; i < params.count; ++i) {
    for (const CapacityPlacement& pl : params.at(i).placements) add_extra(pl.axis);
  }
  if (zero.stage > 0) {
    for (const std::string& a : zero.axes) add_extra(a);
  }
  std::sort(extra.begin(), extra.end());
  for (std::string& a : extra) model.axis_order_.push_back(std::move(a));
  const auto naxes = static_cast<std::uint32_t>(model.axis_order_.size());
  // The listed ZeRO axes' positions, in the listed order (a name listed twice once).
  std::vector<std::uint32_t> zero_axes;
  if (zero.stage > 0) {
    for (const std::string& a : zero.axes) {
      const auto at = static_cast<std::uint32_t>(position(model.axis_order_, a));
      if (std::find(zero_axes.begin(), zero_axes.end(), at) == zero_axes.end()) {
        zero_axes.push_back(at);
      }
    }
  }
  const auto ep_axis = static_cast<std::uint32_t>(
      layout == ExpertLayout::kFolded ? position(model.axis_order_, kExpertAxis) : naxes);
  // The view of a ZeRO group, made the first time a parameter needs it.
  auto zero_view = [&model, naxes](ZeroView view) {
    for (std::size_t k = 0; k < model.zero_views_.size(); ++k) {
      const ZeroView& z = model.zero_views_[k];
      if (z.expert == view.expert && z.axes == view.axes) {
        return static_cast<std::uint32_t>(naxes + k);
      }
    }
    model.zero_views_.push_back(std::move(view));
    return static_cast<std::uint32_t>(naxes + model.zero_views_.size() - 1);
  };

  Diagnostics errors;
  std::unordered_map<std::vector<std::uint64_t>, std::size_t, KeyHash> group_of;
  // Scratch reused by every parameter: (dim, step) of each sharding placement, and the key.
  std::vector<std::pair<std::size_t, Step>> steps;
  std::vector<std::uint64_t> key;
  // Parameters of one model mostly share a dtype: remember the last lookup.
  std::string last_dtype;  // a copy: a source's views last one call
  std::optional<std::uint64_t> element;
  bool last_grad = false;
  ElementCost cost;  // of last_dtype with last_grad
  // One part of a parameter (all of it, or what ZeRO keeps or splits) with its sharding
  // steps, by dim: the constant when nothing shards it, else a member of its group.
  auto add_member = [&](const CapacityParam& p, std::size_t i, std::uint64_t unit,
                        const std::vector<std::pair<std::size_t, Step>>& member) {
    std::uint64_t weight = unit;        // <= the parameter's bytes: no overflow
    std::uint64_t gathered = *element;  // likewise
    if (member.empty()) {
      for (std::uint64_t s : p.shape) {
        weight *= s;
        gathered *= s;
      }
      model.constant_bytes_ += weight;
      if (gathered > model.constant_gathered_) {
        model.constant_gathered_ = gathered;
        model.constant_gathered_fqn_.assign(p.fqn);
      }
      return;
    }
    key.clear();
    std::size_t next = 0;
    for (std::size_t d = 0; d < p.shape.size(); ++d) {
      const std::uint64_t size = p.shape[d];
      std::size_t end = next;
      while (end < member.size() && member[end].first == d) ++end;
      if (end == next) {
        weight *= size;
        gathered *= size;
        continue;
      }
      key.insert(key.end(), {d, size, end - next});
      for (; next < end; ++next) {
        const Step& s = member[next].second;
        key.insert(key.end(), {s.view, s.split_factor, s.uneven});
      }
    }
    auto [it, fresh] = group_of.try_emplace(key, model.groups_.size());
    if (fresh) {
      Group& group = model.groups_.emplace_back(Group{{}, 0, i, 0, {}});
      for (std::size_t k = 0; k < member.size(); ++k) {
        const std::size_t d = member[k].first;
        if (k == 0 || member[k - 1].first != d) {
          group.dims.push_back(ShardedDim{d, p.shape[d], {}});
        }
        group.dims.back().steps.push_back(member[k].second);
      }
      model.first_fqns_.emplace_back(p.fqn);
    }
    Group& group = model.groups_[it->second];
    group.weight += weight;  // the sum stays <= full_bytes_
    if (gathered > group.gathered) {
      group.gathered = gathered;
      group.gathered_fqn.assign(p.fqn);
    }
  };
  for (std::size_t i = 0; i < params.count; ++i) {
    const CapacityParam p = params.at(i);
    if (!element || p.dtype != last_dtype) {
      last_dtype.assign(p.dtype);
      element = dtype_element_size(p.dtype);
      if (element) cost = element_cost(p.dtype, *element, last_grad, accounting);
    }
    if (!element) {
      errors.push_back(usage_error(
          who(p.fqn) + (p.dtype.empty() ? " has no dtype"
                                        : " has unknown dtype " + quote_for_diagnostic(p.dtype))));
      continue;
    }
    const std::size_t rank = p.shape.size();
    // A zero-sized dim: nothing on any rank whatever the other dims, and 0 divides by
    // everything.
    const bool empty = std::find(p.shape.begin(), p.shape.end(), std::uint64_t{0}) != p.shape.end();
    bool ok = true;
    bool expert = false;  // a Shard placement on ep, in the folded layout
    steps.clear();
    for (std::size_t k = 0; k < p.placements.size(); ++k) {
      // Named members, not a structured binding: clang 14 cannot capture a binding.
      const std::string_view axis = p.placements[k].axis;
      const Placement& placement = p.placements[k].placement;
      const bool repeated =
          std::any_of(p.placements.begin(), p.placements.begin() + static_cast<std::ptrdiff_t>(k),
                      [axis](const CapacityPlacement& e) { return e.axis == axis; });
      if (repeated) {
        errors.push_back(
            usage_error(who(p.fqn) + " has two placements on axis " + quote_for_diagnostic(axis)));
        ok = false;
        continue;
      }
      if (!placement.has_dim()) continue;  // Replicate and Partial keep the whole local shape
      // A negative real dim counts from the end, as in PyTorch.
      const std::int64_t dim =
          placement.dim < 0 ? placement.dim + static_cast<std::int64_t>(rank) : placement.dim;
      if (dim < 0 || static_cast<std::uint64_t>(dim) >= rank) {
        errors.push_back(usage_error(who(p.fqn) + " has " + std::to_string(rank) + " dim" +
                                     (rank == 1 ? "" : "s") + "; " + to_canonical(placement) +
                                     " on axis " + quote_for_diagnostic(axis) + " shards dim " +
                                     std::to_string(placement.dim)));
        ok = false;
        continue;
      }
      const std::uint64_t f = placement.chunk_factor();
      const auto a = static_cast<std::uint32_t>(position(model.axis_order_, axis));
      expert = expert || a == ep_axis;
      steps.emplace_back(static_cast<std::size_t>(dim), Step{a, f, placement.uneven_shard});
    }
    if (expert && ok) {
      // Upstream shards an expert on ep only: no second axis can be laid out.
      for (const CapacityPlacement& pl : p.placements) {
        if (pl.axis == kExpertAxis || pl.placement.kind == PlacementKind::kReplicate) continue;
        errors.push_back(
            usage_error(who(p.fqn) + " is an expert parameter (a Shard on axis 'ep') and has " +
                        to_canonical(pl.placement) + " on axis " + quote_for_diagnostic(pl.axis) +
                        "; the folded layout splits experts on ep only"));
        ok = false;
      }
    }
    if (!ok) continue;
    if (p.requires_grad != last_grad) {
      last_grad = p.requires_grad;
      cost = element_cost(p.dtype, *element, last_grad, accounting);
    }
    if (empty) continue;  // no bytes on any rank, and 0 divides by everything
    std::uint64_t bytes = cost.kept + cost.split;
    for (std::uint64_t s : p.shape) ok = ok && checked_mul(bytes, s, bytes);
    if (!ok) {
      errors.push_back(usage_error(who(p.fqn) + " needs more than 2^64-1 bytes"));
      continue;
    }
    if (__builtin_add_overflow(model.full_bytes_, bytes, &model.full_bytes_)) {
      errors.push_back(usage_error("the parameters need more than 2^64-1 bytes together; " +
                                   who(p.fqn) + " is the first beyond it"));
      break;
    }
    // By dim, then by axis: each dim's steps compose in axis order.
    std::sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : x.second.view < y.second.view;
    });
    // ZeRO splits dim 0 of the local piece once more, after the plan's placements, over
    // the parameter's group: edp for an expert, else the listed axes its placements do not
    // shard. Never a 0-dim parameter, nor one whose group is empty.
    // The group is recorded even when nothing of this parameter splits (the optimizer
    // `none` at stage 1), for the size of its group (zero_groups).
    std::uint64_t kept = cost.kept;
    std::optional<std::uint32_t> group;
    if (zero.stage > 0 && rank > 0) {
      ZeroView view{{}, expert};
      if (!expert) {
        for (std::uint32_t a : zero_axes) {
          if (std::none_of(steps.begin(), steps.end(),
                           [a](const auto& s) { return s.second.view == a; })) {
            view.axes.push_back(a);
          }
        }
      }
      if (expert || !view.axes.empty()) group = zero_view(std::move(view));
    }
    if (cost.split == 0) group.reset();
    if (!group) kept += cost.split;
    if (kept != 0) add_member(p, i, kept, steps);
    if (group) {
      std::size_t at = 0;
      while (at < steps.size() && steps[at].first == 0) ++at;
      steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(at),
                   {std::size_t{0}, Step{*group, 1, true}});
      add_member(p, i, cost.split, steps);
    }
  }
  if (!errors.empty()) return errors;
  return model;
}

ZeroGroups CapacityModel::zero_groups(const Mesh& mesh) const {
  ZeroGroups out;
  auto size_of = [&mesh](std::string_view axis) {
    for (const AxisSize& a : mesh.axes) {
      if (a.axis == axis) return a.size;
    }
    return std::uint64_t{1};
  };
  for (const ZeroView& z : zero_views_) {
    if (z.expert) {
      const std::uint64_t ep = size_of(kExpertAxis);
      // Only for a mesh that can be laid out; devices / pp is the dense region.
      const std::uint64_t region = mesh.devices / size_of(kStageAxis);
      if (region % ep == 0) out.expert = region / ep;
      continue;
    }
    std::uint64_t n = 1;
    for (std::uint32_t a : z.axes) n *= size_of(axis_order_[a]);  // <= the devices
    out.dense = std::max(out.dense, n);
  }
  return out;
}

Expected<std::vector<Mesh>> enumerate_meshes(const std::vector<std::string>& axis_order,
                                             const std::vector<AxisSize>& fixed,
                                             const std::vector<AxisSweep>& sweeps,
                                             MeshesProblem* problem, ExpertLayout layout) {
  MeshesProblem ignored{};
  MeshesProblem& kind = problem != nullptr ? *problem : ignored;
  kind = MeshesProblem::kInvalid;
  // One slot per axis, in placement order; a slot lists the sizes it takes.
  std::map<std::string, std::vector<std::uint64_t>, std::less<>> values;
  for (const AxisSize& a : fixed) {
    if (a.size == 0) return usage_error("axis " + quote_for_diagnostic(a.axis) + " has size 0");
    if (!values.emplace(a.axis, std::vector<std::uint64_t>{a.size}).second) {
      return usage_error("axis " + quote_for_diagnostic(a.axis) + " is given twice");
    }
  }
  for (const AxisSweep& s : sweeps) {
    if (s.sizes.empty()) {
      return usage_error("the sweep of axis " + quote_for_diagnostic(s.axis) + " has no size");
    }
    if (std::find(s.sizes.begin(), s.sizes.end(), 0) != s.sizes.end()) {
      return usage_error("the sweep of axis " + quote_for_diagnostic(s.axis) + " has size 0");
    }
    if (!values.emplace(s.axis, s.sizes).second) {
      return usage_error("axis " + quote_for_diagnostic(s.axis) +
                         " is swept and also given a fixed size or another sweep");
    }
  }
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> slots;
  for (const std::string& a : axis_order) {
    auto it = values.find(a);
    if (it != values.end()) {
      slots.emplace_back(a, std::move(it->second));
      values.erase(it);  // an axis listed twice in axis_order keeps its first place
    }
  }
  for (auto& [name, sizes] : values) slots.emplace_back(name, std::move(sizes));

  std::size_t count = 1;
  for (const auto& slot : slots) {
    count *= slot.second.size();
    if (count > kMaxMeshes) {
      kind = MeshesProblem::kTooManyMeshes;
      return usage_error("the sweeps make more than " + std::to_string(kMaxMeshes) + " meshes");
    }
  }
  std::vector<Mesh> meshes;
  meshes.reserve(count);
  std::vector<std::size_t> pick(slots.size(), 0);
  for (std::size_t m = 0; m < count; ++m) {
    Mesh mesh;
    bool fits = true;
    for (std::size_t s = 0; s < slots.size(); ++s) {
      const std::uint64_t size = slots[s].second[pick[s]];
      mesh.axes.push_back(AxisSize{slots[s].first, size});
      const bool counted = layout == ExpertLayout::kAxis || slots[s].first != kExpertAxis;
      fits = fits && (!counted || checked_mul(mesh.devices, size, mesh.devices));
    }
    if (!fits) {
      std::string label;
      for (const AxisSize& a : mesh.axes) label += " " + a.axis + "=" + std::to_string(a.size);
      kind = MeshesProblem::kTooManyDevices;
      return usage_error("mesh" + label + " has more than 2^64-1 devices");
    }
    meshes.push_back(std::move(mesh));
    for (std::size_t s = slots.size(); s-- > 0;) {  // odometer, last axis fastest
      if (++pick[s] < slots[s].second.size()) break;
      pick[s] = 0;
    }
  }
  std::stable_sort(meshes.begin(), meshes.end(), [](const Mesh& a, const Mesh& b) {
    if (a.devices != b.devices) return a.devices < b.devices;
    for (std::size_t i = 0; i < a.axes.size(); ++i) {
      if (a.axes[i].size != b.axes[i].size) return a.axes[i].size < b.axes[i].size;
    }
    return false;
  });
  return meshes;
}

namespace {

// "dp x cp" of the listed ZeRO axes some mesh has, or "".
std::string listed_in_meshes(const std::vector<std::string>& axes,
                             const std::vector<Mesh>& meshes) {
  std::string out;
  for (const std::string& a : axes) {
    const bool present = std::any_of(meshes.begin(), meshes.end(), [&a](const Mesh& m) {
      return std::any_of(m.axes.begin(), m.axes.end(),
                         [&a](const AxisSize& x) { return x.axis == a; });
    });
    if (present) out += (out.empty() ? "" : " x ") + a;
  }
  return out;
}

// The ZeRO request's own errors: an axis named with --zero-axis that no mesh has, then a
// stage >= 1 whose every group has size 1 on every mesh.
std::optional<Diagnostic> zero_error(const CapacityRequest& request, const CapacityModel& model,
                                     const std::vector<Mesh>& meshes) {
  const ZeroSharding& zero = request.accounting.zero;
  if (request.accounting.zero_axes_named) {
    for (const std::string& a : zero.axes) {
      if (listed_in_meshes({a}, meshes).empty()) {
        return make_io_error(
            {}, "--zero-axis: no mesh has axis " + quote_for_diagnostic(a) +
                    "; add it to --mesh or --sweep, or name the axis the data-parallel "
                    "ranks are on");
      }
    }
  }
  // Without a byte to split (no parameter holds anything) there is nothing to claim.
  if (zero.stage == 0 || model.full_bytes() == 0) return std::nullopt;
  const bool splits = std::any_of(meshes.begin(), meshes.end(), [&model](const Mesh& m) {
    const ZeroGroups g = model.zero_groups(m);
    return g.dense > 1 || g.expert > 1;
  });
  if (splits) return std::nullopt;
  std::string axes;
  for (const std::string& a : zero.axes) axes += (axes.empty() ? "" : ", ") + a;
  const std::string stage = std::to_string(zero.stage);
  return make_io_error(
      {}, "--zero " + stage + " splits nothing: every ZeRO group has size 1 on every " +
              "mesh (the data-parallel axes " + axes + " are absent or of size 1" +
              (request.accounting.layout == ExpertLayout::kFolded ? ", and so is edp" : "") +
              "); add dp=N to --mesh, or name the data-parallel axis with --zero-axis");
}

}  // namespace

Expected<CapacityResult> plan_capacity(const CapacityRequest& request) {
  // The one order of axes (docs/capacity.md, "Meshes and their order"): the request's,
  // then the other axes a placement names, by name, then the axes only a mesh has, by name.
  std::vector<std::string> order;
  for (const std::string& a : request.axis_order) {
    if (position(order, a) == order.size()) order.push_back(a);
  }
  const CapacityParamSource vector_source{request.params.size(),
                                          [&request](std::size_t i) { return request.params[i]; }};
  const CapacityParamSource& params = request.source.at ? request.source : vector_source;
  std::vector<std::string> rest;
  auto add = [&](std::string_view a) {
    if (position(order, a) == order.size() &&
        std::find(rest.begin(), rest.end(), a) == rest.end()) {
      rest.emplace_back(a);
    }
  };
  auto append_rest = [&] {
    std::sort(rest.begin(), rest.end());
    for (std::string& a : rest) order.push_back(std::move(a));
    rest.clear();
  };
  for (std::size_t i = 0; i < params.count; ++i) {
    for (const CapacityPlacement& pl : params.at(i).placements) add(pl.axis);
  }
  append_rest();
  for (const AxisSize& a : request.fixed) add(a.axis);
  for (const AxisSweep& s : request.sweeps) add(s.axis);
  append_rest();

  Expected<std::vector<Mesh>> meshes =
      enumerate_meshes(order, request.fixed, request.sweeps, nullptr, request.accounting.layout);
  if (!meshes) return meshes.errors();
  Expected<CapacityModel> model = CapacityModel::build(params, order, request.accounting);
  if (!model) return model.errors();
  if (std::optional<Diagnostic> error = zero_error(request, *model, *meshes)) return *error;

  CapacityResult result;
  result.accounting = request.accounting;
  result.filter = request.filter;
  result.swept = !request.sweeps.empty();
  result.axis_order = std::move(order);
  result.params = params.count;
  result.full_bytes = model->full_bytes();
  for (const Mesh& mesh : *meshes) {
    Expected<MeshCapacity> one = model->evaluate(mesh);
    if (!one) return one.errors();
    judge(*one, request.filter);
    result.meshes.push_back(std::move(*one));
  }
  return result;
}

void judge(MeshCapacity& mesh, const MeshFilter& filter) {
  if (!filter.budget) return;
  const std::uint64_t budget = *filter.budget;
  mesh.fits = mesh.divisible() && mesh.max_rank_bytes <= budget;
  mesh.over_by = mesh.max_rank_bytes > budget ? mesh.max_rank_bytes - budget : 0;
}

bool capacity_shown(const CapacityResult& result, const MeshCapacity& mesh) {
  return !result.filter.fits_only || mesh.usable();
}

const MeshCapacity* capacity_answer(const CapacityResult& result) {
  if (result.no_answer) return nullptr;
  for (const MeshCapacity& m : result.meshes) {
    if (m.usable()) return &m;
  }
  return nullptr;
}

std::size_t capacity_ties(const CapacityResult& result) {
  const MeshCapacity* answer = capacity_answer(result);
  if (answer == nullptr) return 0;
  return static_cast<std::size_t>(
      std::count_if(result.meshes.begin(), result.meshes.end(), [answer](const MeshCapacity& m) {
        return &m != answer && m.usable() && m.mesh.devices == answer->mesh.devices;
      }));
}

const MeshCapacity* closest_mesh(const CapacityResult& result) {
  if (result.no_answer) return nullptr;
  if (capacity_answer(result) != nullptr) return nullptr;
  const MeshCapacity* best = nullptr;
  for (const MeshCapacity& m : result.meshes) {
    if (m.divisible() && (best == nullptr || m.over_by < best->over_by)) best = &m;
  }
  return best;
}

int capacity_exit_code(const CapacityResult& result) {
  const bool any = std::any_of(result.meshes.begin(), result.meshes.end(),
                               [](const MeshCapacity& m) { return m.usable(); });
  return any ? 0 : 1;
}

}  // namespace hpfreeze
