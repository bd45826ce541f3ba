// The meshes of a run stage by stage (staged_model.h).
#include "capacity/staged_model.h"

#include <algorithm>
#include <utility>

#include "spec/findings.h"

namespace hpfreeze::capacity_detail {
namespace {

// The position of pp among the mesh's axes (its size when it has none) and its size.
std::pair<std::size_t, std::uint64_t> stage_axis(const Mesh& mesh) {
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    if (mesh.axes[i].axis == kStageAxis) return {i, mesh.axes[i].size};
  }
  return {mesh.axes.size(), 1};
}

// `coords` with the pp coordinate `stage` (pp at `at`, if the mesh has it).
std::vector<std::uint64_t> at_stage(std::vector<std::uint64_t> coords, std::size_t at,
                                    std::size_t stage) {
  if (at < coords.size()) coords[at] = stage;
  return coords;
}

// A mesh's figures before its ranks are counted, or of one with no rank to count: 0, and
// its coordinates 0.
MeshCapacity without_ranks(const Mesh& mesh, ZeroGroups zero, std::optional<Indivisible> why) {
  MeshCapacity out;
  out.mesh = mesh;
  out.zero = zero;
  out.max_rank.assign(mesh.axes.size(), 0);
  out.min_rank.assign(mesh.axes.size(), 0);
  out.indivisible = std::move(why);
  return out;
}

}  // namespace

std::optional<Diagnostics> StagedModel::read_positions() {
  if (positions_read_) return std::nullopt;
  positions_read_ = true;
  positions_.reserve(params_.count);
  Diagnostics errors;
  for (std::size_t i = 0; i < params_.count; ++i) {
    const CapacityParam p = params_.at(i);
    positions_.push_back(p.stage);
    for (const CapacityPlacement& pl : p.placements) {
      if (pl.axis != kStageAxis || !pl.placement.has_dim()) continue;
      // The meta's finding: report gives it the meta's file.
      errors.push_back(make_finding(finding_rule("HPF516"), {}, {},
                                    "parameter " + quote_for_diagnostic(p.fqn) + " has " +
                                        to_canonical(pl.placement) +
                                        " on axis 'pp', which splits the layer stack into "
                                        "pipeline stages and shards no parameter"));
    }
  }
  if (errors.empty()) return std::nullopt;
  return errors;
}

std::vector<std::vector<std::size_t>> StagedModel::members_of(const StageSplit& split) const {
  std::vector<std::vector<std::size_t>> out(split.stages());
  for (std::size_t i = 0; i < positions_.size(); ++i) {
    out[split.stage_of(positions_[i])].push_back(i);
  }
  // A tied tensor is held on every stage one of its names lands on: a stage that holds
  // none of the names the planner counts holds the first of them too.
  for (const TiedGroup& tied : request_.pipeline.tied) {
    if (tied.params.empty() || tied.params.front() >= positions_.size()) continue;
    std::vector<std::size_t> holding;
    for (std::size_t p : tied.params) {
      if (p < positions_.size()) holding.push_back(split.stage_of(positions_[p]));
    }
    for (const StagePosition& at : tied.elsewhere) {
      const std::size_t s = split.stage_of(at);
      if (std::find(holding.begin(), holding.end(), s) != holding.end()) continue;
      holding.push_back(s);
      std::vector<std::size_t>& members = out[s];
      members.insert(std::upper_bound(members.begin(), members.end(), tied.params.front()),
                     tied.params.front());
    }
  }
  return out;
}

Expected<const StagedModel::Split*> StagedModel::split_for(std::uint64_t pp) {
  if (auto it = splits_.find(pp); it != splits_.end()) return &it->second;
  if (std::optional<Diagnostics> errors = read_positions()) return std::move(*errors);
  const std::optional<LayerStack>& stack = request_.pipeline.stack;
  const std::vector<std::uint64_t>& given = request_.accounting.pipeline.layers;
  const bool use_given = given.size() == pp;
  Split split{
      StageSplit(stack ? stack->layers : 0, pp, use_given ? given : std::vector<std::uint64_t>{}),
      {},
      {},
      {},
      std::nullopt};
  if (!stack || (!use_given && pp > stack->layers)) {
    Indivisible x;
    x.size = stack ? stack->layers : 0;
    x.axis = std::string(kStageAxis);
    x.axis_size = pp;
    x.stack = stack ? stack->prefix : std::string();
    split.unsplittable = std::move(x);
  } else {
    split.members = members_of(split.split);
    for (const std::vector<std::size_t>& members : split.members) {
      const CapacityParamSource source{members.size(),
                                       [&](std::size_t i) { return params_.at(members[i]); }};
      Expected<CapacityModel> model = CapacityModel::build(source, order_, request_.accounting);
      if (!model) return model.errors();
      std::size_t twin = 0;
      while (twin < split.models.size() && !split.models[twin].same_groups(*model)) ++twin;
      split.twins.push_back(twin);
      split.models.push_back(std::move(*model));
    }
  }
  return &splits_.emplace(pp, std::move(split)).first->second;
}

Expected<MeshCapacity> StagedModel::evaluate(const Mesh& mesh) {
  const auto [at, pp] = stage_axis(mesh);
  if (pp == 1) {
    MeshCapacity out = whole_.evaluate(mesh);
    const std::optional<LayerStack>& stack = request_.pipeline.stack;
    if (!out.stages.empty() && stack && stack->layers > 0) {
      out.stages.front().layers = std::pair<std::uint64_t, std::uint64_t>{0, stack->layers - 1};
    }
    return out;
  }
  Expected<const Split*> found = split_for(pp);
  if (!found) return found.errors();
  const Split& split = **found;
  if (split.unsplittable) return without_ranks(mesh, whole_.zero_groups(mesh), *split.unsplittable);
  Mesh stage_mesh = mesh;  // one stage's ranks: the other axes
  stage_mesh.axes[at].size = 1;
  stage_mesh.devices /= pp;
  std::vector<MeshCapacity> parts;
  parts.reserve(split.models.size());
  for (std::size_t s = 0; s < split.models.size(); ++s) {
    const std::size_t twin = split.twins[s];
    if (twin == s) {
      parts.push_back(split.models[s].evaluate(stage_mesh));
      continue;
    }
    parts.push_back(parts[twin]);  // the same groups: the same figures, other names
    split.models[s].rename(parts.back(), split.models[twin]);
  }
  return combine(mesh, parts, split);
}

MeshCapacity StagedModel::combine(const Mesh& mesh, std::vector<MeshCapacity>& parts,
                                  const Split& split) const {
  const std::size_t at = stage_axis(mesh).first;
  ZeroGroups zero;
  for (const MeshCapacity& p : parts) {
    zero.dense = std::max(zero.dense, p.zero.dense);
    zero.expert = std::max(zero.expert, p.zero.expert);
  }
  // ep not dividing the dense region fails every stage alike; so does no stage's ranks.
  if (!parts.front().laid_out() && !parts.front().refused) {
    return without_ranks(mesh, zero, *parts.front().indivisible);
  }
  MeshCapacity out = without_ranks(mesh, zero, std::nullopt);
  std::size_t worst = 0;
  std::size_t best = 0;
  for (std::size_t s = 0; s < parts.size(); ++s) {
    MeshCapacity& p = parts[s];
    if (p.refused) {
      out.refused = std::move(p.refused);
      return out;
    }
    if (p.indivisible) {  // the first offender in the whole list of parameters
      p.indivisible->param = split.members[s][p.indivisible->param];
      if (!out.indivisible || p.indivisible->param < out.indivisible->param) {
        out.indivisible = p.indivisible;
      }
    }
    out.unsplit_bytes = std::max(out.unsplit_bytes, p.unsplit_bytes);
    if (p.max_rank_bytes > parts[worst].max_rank_bytes) worst = s;
    // The first best rank by rank number: pp first in the folded layout, row-major in
    // the mesh's order of axes in the axis layout.
    const bool earlier = whole_.layout() == ExpertLayout::kAxis &&
                         at_stage(p.min_rank, at, s) < at_stage(parts[best].min_rank, at, best);
    if (p.min_rank_bytes < parts[best].min_rank_bytes ||
        (p.min_rank_bytes == parts[best].min_rank_bytes && earlier)) {
      best = s;
    }
    out.stages.push_back(StageCapacity{split.split.layers(s), p.max_rank_bytes, p.min_rank_bytes,
                                       at_stage(p.max_rank, at, s), at_stage(p.min_rank, at, s)});
  }
  const MeshCapacity& w = parts[worst];
  out.max_rank_bytes = w.max_rank_bytes;
  out.max_rank = at_stage(w.max_rank, at, worst);
  out.largest_gathered = w.largest_gathered;
  out.largest_gathered_fqn = w.largest_gathered_fqn;
  out.expert = w.expert;
  out.min_rank_bytes = parts[best].min_rank_bytes;
  out.min_rank = at_stage(parts[best].min_rank, at, best);
  if (out.expert && parts[best].expert) {
    std::copy_n(parts[best].expert->min_rank, 2, out.expert->min_rank);
  }
  return out;
}

}  // namespace hpfreeze::capacity_detail
