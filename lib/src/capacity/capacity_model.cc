// CapacityModel::build: the mesh-independent part of the planner (capacity.h). Each
// parameter becomes one or two members (what every rank of its ZeRO group keeps, what ZeRO
// splits), each a weight and the steps that shard its dims; members with the same sharded
// dims and steps share a group, and members no axis shards add up to one constant.
#include <algorithm>
#include <unordered_map>
#include <utility>

#include "capacity/axis_order.h"
#include "capacity/capacity.h"
#include "capacity/chunk_geometry.h"
#include "capacity/usage_error.h"
#include "spec/dtypes.h"

namespace hpfreeze {
namespace {

using capacity_detail::axis_position;

constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);

std::string parameter_named(std::string_view fqn) {
  return "parameter " + quote_for_diagnostic(fqn);
}

}  // namespace

namespace capacity_detail {

// The grouping key of a member: its sharded dims, their sizes and steps, flattened. Not in
// an anonymous namespace: CapacityModelBuilder, of external linkage, holds a map of it.
struct MemberKeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& key) const {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::uint64_t v : key) h = (h ^ v) * 0x100000001b3ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

}  // namespace capacity_detail

// Builds a model parameter by parameter: the axis order and the ZeRO axes first, then each
// parameter's element cost, its steps (every sharding placement, then ZeRO's split) and its
// members. A friend of CapacityModel.
class CapacityModelBuilder {
 public:
  using Step = CapacityModel::Step;
  using Steps = std::vector<std::pair<std::size_t, Step>>;  // (dim, step), by dim then view

  CapacityModelBuilder(CapacityModel& model, const Accounting& accounting)
      : model_(model), accounting_(accounting) {
    model_.layout_ = accounting.layout;
    model_.module_unit_ = gathered_module_bytes(accounting);
  }

  // The model's axis order: `given`, then every other axis a placement or the ZeRO list
  // names, by name; and the positions that build() needs of it.
  void order_axes(const CapacityParamSource& params, const std::vector<std::string>& given);

  // Adds one parameter (the i-th); false when the bytes of every parameter together
  // overflow, past which nothing more is added.
  bool add(const CapacityParam& p, std::size_t i);

  [[nodiscard]] Diagnostics& errors() { return errors_; }

 private:
  void error(std::string message) { errors_.push_back(capacity_detail::usage_error(message)); }
  // The element size of p's dtype (the last lookup kept: parameters mostly share one).
  [[nodiscard]] bool look_up_dtype(const CapacityParam& p);
  // p's placements as steps into steps_ (unsorted); `expert`: a Shard on ep when folded.
  [[nodiscard]] bool placement_steps(const CapacityParam& p, bool& expert);
  [[nodiscard]] bool expert_on_ep_only(const CapacityParam& p);
  // The view of p's ZeRO group: edp for an expert, else the listed axes its placements do
  // not shard; none for a 0-dim parameter or an empty group.
  [[nodiscard]] std::optional<std::uint32_t> zero_group(const CapacityParam& p, bool expert);
  std::uint32_t zero_view(CapacityModel::ZeroView view);
  // Adds p's members: what every rank of its ZeRO group keeps (`steps_`, the plan's), and
  // what ZeRO splits over `group`, in chunks on `dim` (padded or not) or as a flat share.
  void add_members(const CapacityParam& p, std::size_t i, const ElementCost& cost,
                   std::optional<std::uint32_t> group, std::size_t dim);
  // The group a member joins (npos: the constant), or is made for; `flat`: a member divided
  // evenly over that ZeRO view.
  std::size_t add_member(const CapacityParam& p, std::size_t i, std::uint64_t unit,
                         const Steps& member, std::optional<std::uint32_t> flat = std::nullopt);
  void add_constant(const CapacityParam& p, std::uint64_t unit);
  // With a recipe that counts what ZeRO-3 gathers by module: p's share of its module.
  void add_module_share(const CapacityParam& p, std::size_t group);

  CapacityModel& model_;
  const Accounting& accounting_;
  std::uint32_t naxes_ = 0;
  std::uint32_t ep_axis_ = 0;             // naxes_ unless folded with ep in the order
  std::vector<std::uint32_t> zero_axes_;  // the listed ZeRO axes' positions, each once
  Diagnostics errors_;
  std::unordered_map<std::vector<std::uint64_t>, std::size_t, capacity_detail::MemberKeyHash>
      group_of_;
  // Scratch reused by every parameter: its steps, those of a member ZeRO chunks, and a
  // member's key.
  Steps steps_;
  Steps split_steps_;
  std::vector<std::uint64_t> key_;
  // Parameters of one model mostly share a dtype: the last lookup and its cost are kept.
  std::string last_dtype_;  // a copy: a source's views last one call
  std::optional<std::uint64_t> element_;
  std::uint64_t element_size_ = 0;
  std::optional<ElementCost> cost_;  // of last_dtype_ with cost_grad_
  bool cost_grad_ = false;
  // The modules of add_module_share, by name, numbered in the order first seen, and the
  // most what ZeRO-3 gathers of them could come to (all of their elements).
  std::unordered_map<std::string, std::uint32_t> modules_;
  std::uint64_t gathered_ = 0;
};

void CapacityModelBuilder::order_axes(const CapacityParamSource& params,
                                      const std::vector<std::string>& given) {
  const ZeroSharding& zero = accounting_.zero;
  capacity_detail::AxisOrder order(given);
  for (std::size_t i = 0; i < params.count; ++i) {
    for (const CapacityPlacement& pl : params.at(i).placements) order.name(pl.axis);
  }
  if (zero.stage > 0) {
    for (const std::string& a : zero.axes) order.name(a);
  }
  order.append();
  model_.axis_order_ = std::move(order.order());
  naxes_ = static_cast<std::uint32_t>(model_.axis_order_.size());
  if (zero.stage > 0) {
    for (const std::string& a : zero.axes) {  // a name listed twice counts once
      const auto at = static_cast<std::uint32_t>(axis_position(model_.axis_order_, a));
      if (std::find(zero_axes_.begin(), zero_axes_.end(), at) == zero_axes_.end()) {
        zero_axes_.push_back(at);
      }
    }
  }
  ep_axis_ = accounting_.layout == ExpertLayout::kFolded
                 ? static_cast<std::uint32_t>(axis_position(model_.axis_order_, kExpertAxis))
                 : naxes_;
}

bool CapacityModelBuilder::look_up_dtype(const CapacityParam& p) {
  if (!element_ || p.dtype != last_dtype_) {
    last_dtype_.assign(p.dtype);
    element_ = dtype_element_size(p.dtype);
    cost_.reset();
  }
  if (element_) {
    element_size_ = *element_;
    return true;
  }
  error(parameter_named(p.fqn) + (p.dtype.empty()
                                      ? " has no dtype"
                                      : " has unknown dtype " + quote_for_diagnostic(p.dtype)));
  return false;
}

bool CapacityModelBuilder::placement_steps(const CapacityParam& p, bool& expert) {
  const std::size_t rank = p.shape.size();
  bool ok = true;
  steps_.clear();
  for (std::size_t k = 0; k < p.placements.size(); ++k) {
    // Named members, not a structured binding: clang 14 cannot capture a binding.
    const std::string_view axis = p.placements[k].axis;
    const Placement& placement = p.placements[k].placement;
    const bool repeated =
        std::any_of(p.placements.begin(), p.placements.begin() + static_cast<std::ptrdiff_t>(k),
                    [axis](const CapacityPlacement& e) { return e.axis == axis; });
    if (repeated) {
      error(parameter_named(p.fqn) + " has two placements on axis " + quote_for_diagnostic(axis));
      ok = false;
      continue;
    }
    if (!placement.has_dim()) continue;  // Replicate and Partial keep the whole local shape
    // A negative real dim counts from the end, as in PyTorch.
    const std::int64_t dim =
        placement.dim < 0 ? placement.dim + static_cast<std::int64_t>(rank) : placement.dim;
    if (dim < 0 || static_cast<std::uint64_t>(dim) >= rank) {
      error(parameter_named(p.fqn) + " has " + std::to_string(rank) + " dim" +
            (rank == 1 ? "" : "s") + "; " + to_canonical(placement) + " on axis " +
            quote_for_diagnostic(axis) + " shards dim " + std::to_string(placement.dim));
      ok = false;
      continue;
    }
    const auto a = static_cast<std::uint32_t>(axis_position(model_.axis_order_, axis));
    expert = expert || a == ep_axis_;
    model_.shards_zero_axes_ =
        model_.shards_zero_axes_ ||
        std::find(zero_axes_.begin(), zero_axes_.end(), a) != zero_axes_.end();
    steps_.emplace_back(static_cast<std::size_t>(dim),
                        Step{a, placement.chunk_factor(), placement.uneven_shard});
  }
  return ok;
}

bool CapacityModelBuilder::expert_on_ep_only(const CapacityParam& p) {
  // Upstream shards an expert on ep only: no second axis can be laid out.
  bool ok = true;
  for (const CapacityPlacement& pl : p.placements) {
    if (pl.axis == kExpertAxis || pl.placement.kind == PlacementKind::kReplicate) continue;
    error(parameter_named(p.fqn) + " is an expert parameter (a Shard on axis 'ep') and has " +
          to_canonical(pl.placement) + " on axis " + quote_for_diagnostic(pl.axis) +
          "; the folded layout splits experts on ep only");
    ok = false;
  }
  return ok;
}

std::uint32_t CapacityModelBuilder::zero_view(CapacityModel::ZeroView view) {
  std::vector<CapacityModel::ZeroView>& views = model_.zero_views_;
  for (std::size_t k = 0; k < views.size(); ++k) {
    if (views[k].expert == view.expert && views[k].axes == view.axes) {
      return static_cast<std::uint32_t>(naxes_ + k);
    }
  }
  views.push_back(std::move(view));
  return static_cast<std::uint32_t>(naxes_ + views.size() - 1);
}

std::optional<std::uint32_t> CapacityModelBuilder::zero_group(const CapacityParam& p, bool expert) {
  if (accounting_.zero.stage == 0 || p.shape.empty()) return std::nullopt;
  CapacityModel::ZeroView view{{}, expert};
  if (!expert) {
    for (std::uint32_t a : zero_axes_) {
      if (std::none_of(steps_.begin(), steps_.end(),
                       [a](const auto& s) { return s.second.view == a; })) {
        view.axes.push_back(a);
      }
    }
    if (view.axes.empty()) return std::nullopt;
  }
  return zero_view(std::move(view));
}

bool CapacityModelBuilder::add(const CapacityParam& p, std::size_t i) {
  if (!look_up_dtype(p)) return true;
  bool expert = false;
  bool ok = placement_steps(p, expert);
  if (expert && ok) ok = expert_on_ep_only(p);
  if (!ok) return true;
  // A zero-sized dim: nothing on any rank whatever the other dims, and 0 divides by
  // everything.
  if (std::find(p.shape.begin(), p.shape.end(), std::uint64_t{0}) != p.shape.end()) return true;
  if (!cost_ || cost_grad_ != p.requires_grad) {
    cost_ = element_cost(p.dtype, element_size_, p.requires_grad, accounting_);
    cost_grad_ = p.requires_grad;
  }
  const ElementCost cost = *cost_;
  std::uint64_t bytes = cost.total();
  for (std::uint64_t s : p.shape) ok = ok && chunking::checked_mul(bytes, s, bytes);
  if (!ok) {
    error(parameter_named(p.fqn) + " needs more than 2^64-1 bytes");
    return true;
  }
  // What ZeRO-3 gathers of the parameter's module, at most its elements, counts too.
  std::uint64_t gather = 0;
  if (model_.module_unit_ != 0) {
    gather = model_.module_unit_;
    for (std::uint64_t s : p.shape) ok = ok && chunking::checked_mul(gather, s, gather);
  }
  if (!ok || __builtin_add_overflow(model_.full_bytes_, bytes, &model_.full_bytes_) ||
      __builtin_add_overflow(gathered_, gather, &gathered_) ||
      model_.full_bytes_ + gathered_ < gathered_) {
    error("the parameters need more than 2^64-1 bytes together; " + parameter_named(p.fqn) +
          " is the first beyond it");
    return false;
  }
  // By dim, then by axis: each dim's steps compose in axis order.
  std::sort(steps_.begin(), steps_.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second.view < y.second.view;
  });
  // The group is recorded even when nothing of this parameter splits (the optimizer none
  // at stage 1), for the size of its group (zero_groups).
  add_members(p, i, cost, zero_group(p, expert),
              zero_split_dim(accounting_.zero, expert, p.shape.size()));
  return true;
}

void CapacityModelBuilder::add_members(const CapacityParam& p, std::size_t i,
                                       const ElementCost& cost, std::optional<std::uint32_t> group,
                                       std::size_t dim) {
  if (cost.split() == 0) group.reset();
  const std::uint64_t kept = cost.kept + (group ? 0 : cost.split());
  std::size_t plan_group = kept != 0 ? add_member(p, i, kept, steps_) : kNoGroup;
  if (group && cost.flat != 0) plan_group = add_member(p, i, cost.flat, steps_, *group);
  if (model_.module_unit_ != 0) add_module_share(p, plan_group);
  if (!group) return;
  // ZeRO chunks `dim` of the local piece once more, after the plan's placements, over the
  // parameter's group: its step comes last among that dim's.
  std::size_t at = 0;
  while (at < steps_.size() && steps_[at].first <= dim) ++at;
  for (const auto& [unit, padded] :
       {std::pair{cost.chunked, false}, std::pair{cost.padded, true}}) {
    if (unit == 0) continue;
    split_steps_.assign(steps_.begin(), steps_.end());  // a scratch: no allocation per call
    split_steps_.insert(split_steps_.begin() + static_cast<std::ptrdiff_t>(at),
                        {dim, Step{*group, 1, true, padded}});
    add_member(p, i, unit, split_steps_);
  }
}

// (A recipe that counts the gathered module splits the weight flat at ZeRO-3, so every
// parameter has a member of the plan's steps alone: `group` is its group.)
void CapacityModelBuilder::add_module_share(const CapacityParam& p, std::size_t group) {
  const std::size_t dot = p.fqn.rfind('.');
  const std::string module(dot == std::string_view::npos ? std::string_view()
                                                         : p.fqn.substr(0, dot));
  const auto [it, fresh] =
      modules_.try_emplace(module, static_cast<std::uint32_t>(modules_.size()));
  std::uint64_t elements = 1;  // <= the parameter's bytes: no overflow
  if (group == kNoGroup) {
    for (std::uint64_t s : p.shape) elements *= s;
  } else {
    for (std::size_t d = 0; d < p.shape.size(); ++d) {
      const bool sharded =
          std::any_of(steps_.begin(), steps_.end(), [d](const auto& s) { return s.first == d; });
      if (!sharded) elements *= p.shape[d];
    }
  }
  model_.module_shares_.push_back({it->second, group, elements});
}

void CapacityModelBuilder::add_constant(const CapacityParam& p, std::uint64_t unit) {
  std::uint64_t weight = unit;             // <= the parameter's bytes: no overflow
  std::uint64_t gathered = element_size_;  // likewise
  for (std::uint64_t s : p.shape) {
    weight *= s;
    gathered *= s;
  }
  model_.constant_bytes_ += weight;
  if (gathered > model_.constant_gathered_) {
    model_.constant_gathered_ = gathered;
    model_.constant_gathered_fqn_.assign(p.fqn);
  }
}

std::size_t CapacityModelBuilder::add_member(const CapacityParam& p, std::size_t i,
                                             std::uint64_t unit, const Steps& member,
                                             std::optional<std::uint32_t> flat) {
  if (member.empty() && !flat) {
    add_constant(p, unit);
    return kNoGroup;
  }
  std::uint64_t weight = unit;             // <= the parameter's bytes: no overflow
  std::uint64_t gathered = element_size_;  // likewise
  key_.assign(1, flat ? std::uint64_t{*flat} + 1 : 0);
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
    key_.insert(key_.end(), {d, size, end - next});
    for (; next < end; ++next) {
      const Step& s = member[next].second;
      key_.insert(key_.end(),
                  {s.view, s.split_factor, std::uint64_t{s.uneven} | (s.padded ? 2U : 0U)});
    }
  }
  auto [it, fresh] = group_of_.try_emplace(key_, model_.groups_.size());
  if (fresh) {
    CapacityModel::Group& group =
        model_.groups_.emplace_back(CapacityModel::Group{{}, 0, i, 0, {}, flat.has_value(), flat});
    for (std::size_t k = 0; k < member.size(); ++k) {
      const std::size_t d = member[k].first;
      if (k == 0 || member[k - 1].first != d) {
        group.dims.push_back(CapacityModel::ShardedDim{d, p.shape[d], {}});
      }
      group.dims.back().steps.push_back(member[k].second);
      group.split = group.split || member[k].second.view >= naxes_;
    }
    model_.first_fqns_.emplace_back(p.fqn);
  }
  CapacityModel::Group& group = model_.groups_[it->second];
  group.weight += weight;  // the sum stays <= full_bytes_
  if (gathered > group.gathered) {
    group.gathered = gathered;
    group.gathered_fqn.assign(p.fqn);
  }
  return it->second;
}

Expected<CapacityModel> CapacityModel::build(const std::vector<CapacityParam>& params,
                                             std::vector<std::string> axis_order,
                                             const Accounting& accounting) {
  return build(CapacityParamSource{params.size(), [&params](std::size_t i) { return params[i]; }},
               std::move(axis_order), accounting);
}

Expected<CapacityModel> CapacityModel::build(const CapacityParamSource& params,
                                             std::vector<std::string> axis_order,
                                             const Accounting& accounting) {
  CapacityModel model;
  CapacityModelBuilder builder(model, accounting);
  builder.order_axes(params, axis_order);
  for (std::size_t i = 0; i < params.count; ++i) {
    if (!builder.add(params.at(i), i)) break;
  }
  if (!builder.errors().empty()) return std::move(builder.errors());
  return model;
}

bool CapacityModel::dense_zero() const {
  return std::any_of(zero_views_.begin(), zero_views_.end(),
                     [](const ZeroView& z) { return !z.expert; });
}

bool CapacityModel::expert_zero() const {
  return std::any_of(zero_views_.begin(), zero_views_.end(),
                     [](const ZeroView& z) { return z.expert; });
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

}  // namespace hpfreeze
