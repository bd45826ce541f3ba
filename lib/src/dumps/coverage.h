#pragma once
// Upstream's preflight coverage rule, one definition for every command that applies it:
// check --model (a finding per parameter), freeze (one warning) and report (the uncovered
// bytes). A model parameter is covered when its FQN is a planned key or lies under one
// (the key + "."), whether the keys come from a plan dump or from a meta's param_plan.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "dumps/plan.h"

namespace hpfreeze {

// A planned parameter's key: join_fqn(boundary, name), kept in its two parts so that no
// caller has to join them (a meta's already joined FQN is {fqn, ""}).
struct PlannedKey {
  std::string_view boundary;
  std::string_view name;
};

class CoverageIndex {
 public:
  explicit CoverageIndex(std::vector<PlannedKey> keys);
  // Linear in the length of `fqn`, however many dots it has.
  [[nodiscard]] bool covers(std::string_view fqn) const;

 private:
  [[nodiscard]] bool contains(std::uint64_t hash, std::string_view prefix) const;

  // Open addressing over the keys (linear probing, at most half full): a slot holds an
  // index into keys_ and hashes_ plus one, 0 when empty.
  std::vector<PlannedKey> keys_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint32_t> slots_;
  int shift_ = 64;  // slot = (hash * golden ratio) >> shift_
};

// The planned keys of a plan dump, in plan order.
std::vector<PlannedKey> planned_keys(const PlanDump& plan);

// The trainable parameters (requires_grad) of `model` that no planned key covers, as
// indexes into model.parameters in model order: what upstream's preflight refuses at run
// time. `planned`, when not empty, flags (non-zero) each model parameter the caller already
// found to be a planned key itself (freeze's checks match them one by one): those are
// covered as they are, and `coverage` is called for the index only when some other
// trainable parameter is left to look up, so a plan that names every parameter costs no
// hashing.
std::vector<std::size_t> uncovered_trainable_parameters(
    const ModelTree& model, const std::function<CoverageIndex()>& coverage,
    std::span<const std::uint8_t> planned = {});

}  // namespace hpfreeze
