#pragma once
// The report's side of pipeline stages (docs/capacity.md, "Pipeline stages"): the layer
// stack of its model (capacity/pipeline.h finds it), where each parameter sits against it,
// the parameters outside it, the meta's tied parameters, and the rules between --pp-layers
// and the mesh.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capacity/pipeline.h"
#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/report/report_options.h"
#include "meta/meta.h"
#include "report/report.h"

namespace hpfreeze::report_detail {

class StagePlacer {
 public:
  // The stack --pp-stack names (`named`, a usage error when the model lacks it), else the
  // one the model tree holds, if any. `model` must outlive the placer.
  static Expected<StagePlacer> make(const ModelTree& model, const std::string& named);

  // Where parameter `fqn` sits: its layer, or outside the stack before or after it: by
  // the model's order (`model_index`, its place in the model's parameters), or, for a
  // checkpoint or a name the model lacks (nullopt), by checkpoint_side.
  [[nodiscard]] StagePosition position(std::string_view fqn,
                                       std::optional<std::size_t> model_index) const;

  [[nodiscard]] const std::optional<LayerStack>& stack() const { return stack_; }

  // The parameters outside the stack, in the model's order, on the first stage and on the
  // last; both empty without a stack.
  void outside(ReportStack& out) const;

 private:
  const ModelTree* model_ = nullptr;
  std::optional<LayerStack> stack_;
  std::size_t first_in_stack_ = 0;  // the model's first parameter in the stack, by index
};

// The meta's tied_pairs as the planner's tied groups: each pair's names that the planner
// counts (`planner_index`, nullopt for a name it does not count) and where the others sit.
// Pairs with no counted name, or with nowhere else to sit, are left out.
std::vector<TiedGroup> tied_groups(
    const FrozenMeta& meta, const StagePlacer& placer,
    const std::function<std::optional<std::size_t>(std::string_view)>& planner_index);

// --pp-layers against the run: one pp size only (a --sweep pp of one size, --mesh or the
// meta's pp; 1 without any), as many numbers as it, summing to the stack's layers. Usage
// errors naming the flag.
Diagnostics pp_layers_errors(const ReportPlanOptions& plan, const Report& report,
                             const std::optional<LayerStack>& stack);

// Whether the report speaks of stages: some mesh has pp > 1, or --pp-stack or --pp-layers
// was given.
bool stages_in_play(const Report& report);

}  // namespace hpfreeze::report_detail
