#pragma once
// Pipeline stages (docs/capacity.md, "Pipeline stages"): the layer stack of a model, where
// each parameter sits against it, and how `pp` splits the stack into stages. The report
// finds the stack in the model tree and places every parameter (CapacityParam::stage); the
// planner splits the parameters by stage for each pp size of its meshes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// Where a parameter sits: in a layer of the stack, or outside it, before the stack (on the
// first stage) or after it (on the last).
struct StagePosition {
  enum class Side : std::uint8_t { kBefore, kLayer, kAfter };
  Side side = Side::kBefore;
  std::uint64_t layer = 0;  // kLayer only

  friend bool operator==(const StagePosition&, const StagePosition&) = default;
};

// The stack: the sibling modules PREFIX.0 .. PREFIX.(layers-1).
struct LayerStack {
  std::string prefix;
  std::uint64_t layers = 0;
  bool named = false;  // --pp-stack named it; else found in the model tree
};

// A name of the model tree in the tree's order: a parameter with its element count, or a
// module (0 elements; a checkpoint has none).
struct TreeName {
  std::string_view name;
  std::uint64_t elements = 0;
};

// The stack of a model: among the runs of sibling modules PREFIX.0 .. PREFIX.(L-1) (every
// number from 0 to L-1, none other; PREFIX not empty) that lie inside no numbered module,
// the outermost (fewest dotted components in PREFIX), between equals the one holding the
// most parameter elements, then the first named; nullopt when the model has none.
std::optional<LayerStack> find_layer_stack(std::span<const TreeName> names);

// The stack `prefix` names (--pp-stack): a usage error (no file, no pointer) when the model
// has no PREFIX.0, or its numbered modules are not 0 .. L-1.
Expected<LayerStack> named_layer_stack(std::span<const TreeName> names, std::string_view prefix);

// The layer of `name` (PREFIX.N, or a name inside it); nullopt outside the stack.
std::optional<std::uint64_t> stack_layer(const LayerStack& stack, std::string_view name);

// A checkpoint lists no order, so a name outside the stack goes before it when it holds
// "embed", "wte", "wpe" or "word_embeddings" (an embedding), after it otherwise.
StagePosition::Side checkpoint_side(std::string_view name);

// Parameters that are one tensor under several names (a meta's tied_pairs): the indexes of
// those the planner counts, and where the other names sit. A stage that holds none of the
// counted ones but where another name sits holds the first of them too.
struct TiedGroup {
  std::vector<std::size_t> params;
  std::vector<StagePosition> elsewhere;
};

// What the planner needs to split the model by stage: the stack (none: pp > 1 cannot be
// laid out) and the tied groups; each parameter's position is its CapacityParam::stage.
struct StackPlan {
  std::optional<LayerStack> stack;
  std::vector<TiedGroup> tied;
};

// The layers of each stage: `given` (--pp-layers, checked by the caller to have pp entries
// summing to `layers`) when it is not empty, else as even as possible, the first
// layers mod pp stages one layer longer.
class StageSplit {
 public:
  StageSplit(std::uint64_t layers, std::uint64_t pp, const std::vector<std::uint64_t>& given);

  [[nodiscard]] std::size_t stages() const { return ends_.size(); }
  // The stage a position lands on.
  [[nodiscard]] std::size_t stage_of(const StagePosition& at) const;
  // The first and last layer of `stage`; nullopt when it has none.
  [[nodiscard]] std::optional<std::pair<std::uint64_t, std::uint64_t>> layers(
      std::size_t stage) const;

 private:
  std::vector<std::uint64_t> ends_;  // per stage: one past its last layer
};

}  // namespace hpfreeze
