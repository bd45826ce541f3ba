// The report's side of pipeline stages (report_pipeline.h).
#include "report/report_pipeline.h"

#include <algorithm>
#include <utility>

#include "capacity/chunk_geometry.h"

namespace hpfreeze::report_detail {
namespace {

// Every module and parameter of the model, in its order, with their elements.
std::vector<TreeName> tree_names(const ModelTree& model) {
  std::vector<TreeName> out;
  out.reserve(model.modules.size() + model.parameters.size());
  for (const auto& [fqn, kind] : model.modules) out.push_back({fqn, 0});
  for (const auto& [fqn, p] : model.parameters) {
    std::uint64_t elements = 1;
    for (std::uint64_t d : p.shape) {
      if (!chunking::checked_mul(elements, d, elements)) elements = UINT64_MAX;
    }
    out.push_back({fqn, elements});
  }
  return out;
}

// The pp sizes of the run: the fixed one, or a sweep's.
std::vector<std::uint64_t> pp_sizes(const ReportPlanOptions& plan, const Report& report) {
  for (const AxisSweep& s : plan.sweeps) {
    if (s.axis == kStageAxis) return s.sizes;
  }
  for (const AxisSize& a : report.mesh) {
    if (a.axis == kStageAxis) return {a.size};
  }
  return {1};
}

}  // namespace

Expected<StagePlacer> StagePlacer::make(const ModelTree& model, const std::string& named) {
  StagePlacer out;
  out.model_ = &model;
  const std::vector<TreeName> names = tree_names(model);
  if (!named.empty()) {
    Expected<LayerStack> stack = named_layer_stack(names, named);
    if (!stack) return make_io_error({}, std::move(stack.errors().front().message));
    out.stack_ = std::move(*stack);
  } else {
    out.stack_ = find_layer_stack(names);
  }
  out.first_in_stack_ = model.parameters.size();
  for (std::size_t i = 0; out.stack_ && i < model.parameters.size(); ++i) {
    if (stack_layer(*out.stack_, model.parameters[i].first)) {
      out.first_in_stack_ = i;
      break;
    }
  }
  return out;
}

StagePosition StagePlacer::position(std::string_view fqn,
                                    std::optional<std::size_t> model_index) const {
  if (!stack_) return {};
  if (const std::optional<std::uint64_t> layer = stack_layer(*stack_, fqn)) {
    return {StagePosition::Side::kLayer, *layer};
  }
  if (model_->checkpoint || !model_index) return {checkpoint_side(fqn), 0};
  return {
      *model_index < first_in_stack_ ? StagePosition::Side::kBefore : StagePosition::Side::kAfter,
      0};
}

void StagePlacer::outside(ReportStack& out) const {
  out.stack = stack_;
  if (!stack_) return;
  for (std::size_t i = 0; i < model_->parameters.size(); ++i) {
    const std::string_view fqn = model_->parameters[i].first;
    const StagePosition at = position(fqn, i);
    if (at.side == StagePosition::Side::kBefore) out.first_stage.push_back(fqn);
    if (at.side == StagePosition::Side::kAfter) out.last_stage.push_back(fqn);
  }
}

std::vector<TiedGroup> tied_groups(
    const FrozenMeta& meta, const StagePlacer& placer,
    const std::function<std::optional<std::size_t>(std::string_view)>& planner_index) {
  std::vector<TiedGroup> out;
  if (!placer.stack()) return out;  // one stage holds every name
  for (const std::vector<std::string_view>& pair : meta.tied_pairs) {
    TiedGroup group;
    for (std::string_view name : pair) {
      if (const std::optional<std::size_t> i = planner_index(name)) {
        group.params.push_back(*i);
      } else {
        group.elsewhere.push_back(placer.position(name, std::nullopt));
      }
    }
    if (!group.params.empty() && !group.elsewhere.empty()) out.push_back(std::move(group));
  }
  return out;
}

Diagnostics pp_layers_errors(const ReportPlanOptions& plan, const Report& report,
                             const std::optional<LayerStack>& stack) {
  const std::vector<std::uint64_t>& given = plan.accounting.pipeline.layers;
  if (given.empty()) return {};
  auto fail = [](std::string message) {
    return Diagnostics{make_io_error({}, "--pp-layers: " + std::move(message))};
  };
  const std::vector<std::uint64_t> sizes = pp_sizes(plan, report);
  if (sizes.size() > 1) {
    return fail("--sweep pp has " + std::to_string(sizes.size()) +
                " sizes; one split is for one pp size");
  }
  if (given.size() != sizes.front()) {
    return fail(plural(given.size(), "number") + " for pp=" + std::to_string(sizes.front()) +
                "; give one per stage");
  }
  if (!stack) return fail("the model has no layer stack to split (--pp-stack names one)");
  std::uint64_t sum = 0;
  for (std::uint64_t n : given) chunking::saturating_add(sum, n);
  if (sum != stack->layers) {
    return fail("the numbers sum to " + std::to_string(sum) + "; the stack " + stack->prefix +
                " has " + plural(stack->layers, "layer"));
  }
  return {};
}

bool stages_in_play(const Report& report) {
  const PipelineSplit& split = report.capacity.accounting.pipeline;
  if (!split.stack.empty() || !split.layers.empty()) return true;
  return std::any_of(
      report.capacity.meshes.begin(), report.capacity.meshes.end(), [](const MeshCapacity& m) {
        return std::any_of(m.mesh.axes.begin(), m.mesh.axes.end(),
                           [](const AxisSize& a) { return a.axis == kStageAxis && a.size > 1; });
      });
}

}  // namespace hpfreeze::report_detail
