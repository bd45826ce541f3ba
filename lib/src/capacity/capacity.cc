// The planner's runs (capacity.h): the meshes of a request, plan_capacity and the answer
// among its meshes. The model is capacity_model.cc, a mesh's ranks capacity_ranks.cc.
#include "capacity/capacity.h"

#include <algorithm>
#include <map>
#include <utility>

#include "capacity/axis_order.h"
#include "capacity/chunk_geometry.h"
#include "capacity/staged_model.h"
#include "capacity/usage_error.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kMaxMeshes = 65536;

using chunking::checked_mul;

using capacity_detail::usage_error;

}  // namespace

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

// Why every ZeRO group has size 1: what the groups of the model's parameters are made of.
std::string why_no_group(const CapacityModel& model, const std::vector<std::string>& axes) {
  std::string names;
  for (const std::string& a : axes) names += (names.empty() ? "" : ", ") + a;
  if (model.dense_zero()) {
    return "the data-parallel axes " + names + " are absent or of size 1" +
           (model.expert_zero() ? ", and so is edp" : "");
  }
  if (model.expert_zero()) {
    return "the expert parameters' group edp has size 1: ep takes the whole dense region, and "
           "no other parameter has a group";
  }
  return "every parameter is 0-dim, holds nothing or is sharded on every data-parallel axis " +
         names;
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
  // Without a byte to split (no parameter holds anything) there is nothing to claim; a
  // parameter that holds nothing has no group, and so never counts here.
  if (zero.stage == 0 || model.full_bytes() == 0) return std::nullopt;
  const bool splits = std::any_of(meshes.begin(), meshes.end(), [&model](const Mesh& m) {
    const ZeroGroups g = model.zero_groups(m);
    return g.dense > 1 || g.expert > 1;
  });
  if (splits) return std::nullopt;
  const std::string stage = std::to_string(zero.stage);
  return make_io_error({}, "--zero " + stage + " splits nothing: every ZeRO group has size 1 on " +
                               "every mesh (" + why_no_group(model, zero.axes) +
                               "); add dp=N to --mesh, or name the data-parallel axis with "
                               "--zero-axis");
}

// The least any laid-out mesh keeps whole whatever its data-parallel size, at ZeRO stage 1
// or 2 when no placement shards a ZeRO axis (which would shrink it as that axis grows).
std::optional<std::uint64_t> unsplit_floor(const CapacityResult& result,
                                           const CapacityModel& model) {
  const int stage = result.accounting.zero.stage;
  if (stage < 1 || stage >= kMaxZeroStage || model.shards_zero_axes()) return std::nullopt;
  std::optional<std::uint64_t> least;
  for (const MeshCapacity& m : result.meshes) {
    if (m.laid_out()) least = std::min(least.value_or(m.unsplit_bytes), m.unsplit_bytes);
  }
  return least;
}

}  // namespace

Expected<CapacityResult> plan_capacity(const CapacityRequest& request) {
  // The one order of axes (docs/capacity.md, "Meshes and their order"): the request's,
  // then the other axes a placement names, by name, then the axes only a mesh has, by name.
  const CapacityParamSource vector_source{request.params.size(),
                                          [&request](std::size_t i) { return request.params[i]; }};
  const CapacityParamSource& params = request.source.at ? request.source : vector_source;
  capacity_detail::AxisOrder axes(request.axis_order);
  for (std::size_t i = 0; i < params.count; ++i) {
    for (const CapacityPlacement& pl : params.at(i).placements) axes.name(pl.axis);
  }
  axes.append();
  for (const AxisSize& a : request.fixed) axes.name(a.axis);
  for (const AxisSweep& s : request.sweeps) axes.name(s.axis);
  axes.append();
  std::vector<std::string>& order = axes.order();

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
  result.params = params.count;
  result.full_bytes = model->full_bytes();
  result.dense_zero = model->dense_zero();
  capacity_detail::StagedModel staged(request, params, order, *model);
  for (const Mesh& mesh : *meshes) {
    Expected<MeshCapacity> one = staged.evaluate(mesh);
    if (!one) return one.errors();
    judge(*one, request.filter);
    result.meshes.push_back(std::move(*one));
  }
  result.unsplit_floor = unsplit_floor(result, *model);
  result.axis_order = std::move(order);
  return result;
}

void judge(MeshCapacity& mesh, const MeshFilter& filter) {
  const std::optional<std::uint64_t> budget = filter.states_budget();
  if (!budget) return;
  mesh.fits = mesh.laid_out() && mesh.divisible() && mesh.max_rank_bytes <= *budget;
  mesh.over_by = mesh.max_rank_bytes > *budget ? mesh.max_rank_bytes - *budget : 0;
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
    if (m.laid_out() && m.divisible() && (best == nullptr || m.over_by < best->over_by)) {
      best = &m;
    }
  }
  return best;
}

std::size_t MeshCapacity::worst_stage() const {
  for (std::size_t s = 0; s < stages.size(); ++s) {
    if (stages[s].max_rank_bytes == max_rank_bytes) return s;
  }
  return 0;
}

int capacity_exit_code(const CapacityResult& result) {
  const bool any = std::any_of(result.meshes.begin(), result.meshes.end(),
                               [](const MeshCapacity& m) { return m.usable(); });
  return any ? 0 : 1;
}

}  // namespace hpfreeze
