// Upstream's preflight coverage rule (coverage.h).
#include "dumps/coverage.h"

#include <optional>
#include <utility>

namespace hpfreeze {
namespace {

// FNV-1a, fed one byte at a time so that every prefix's hash comes out of one pass.
constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

std::uint64_t fnv(std::uint64_t h, char c) {
  return (h ^ static_cast<unsigned char>(c)) * kFnvPrime;
}

std::uint64_t fnv(std::uint64_t h, std::string_view s) {
  for (char c : s) h = fnv(h, c);
  return h;
}

// The hash of join_fqn(key.boundary, key.name), without joining.
std::uint64_t fnv(const PlannedKey& key) {
  std::uint64_t h = fnv(kFnvOffset, key.boundary);
  if (!key.boundary.empty() && !key.name.empty()) h = fnv(h, '.');
  return fnv(h, key.name);
}

// Fibonacci hashing spreads FNV's weak low bits over the table.
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

}  // namespace

CoverageIndex::CoverageIndex(std::vector<PlannedKey> keys) : keys_(std::move(keys)) {
  hashes_.reserve(keys_.size());
  for (const PlannedKey& key : keys_) hashes_.push_back(fnv(key));
  std::size_t capacity = 16;
  shift_ = 60;
  while (capacity < 2 * keys_.size()) {
    capacity *= 2;
    --shift_;
  }
  slots_.assign(capacity, 0);
  const std::size_t mask = capacity - 1;
  for (std::size_t k = 0; k < keys_.size(); ++k) {
    std::size_t i = static_cast<std::size_t>((hashes_[k] * kGolden) >> shift_);
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = static_cast<std::uint32_t>(k + 1);
  }
}

bool CoverageIndex::contains(std::uint64_t hash, std::string_view prefix) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = static_cast<std::size_t>((hash * kGolden) >> shift_); slots_[i] != 0;
       i = (i + 1) & mask) {
    const std::size_t k = slots_[i] - 1;
    if (hashes_[k] == hash && is_joined_fqn(prefix, keys_[k].boundary, keys_[k].name)) {
      return true;
    }
  }
  return false;
}

bool CoverageIndex::covers(std::string_view fqn) const {
  std::uint64_t h = kFnvOffset;
  for (std::size_t i = 0; i < fqn.size(); ++i) {
    if (fqn[i] == '.' && contains(h, fqn.substr(0, i))) return true;
    h = fnv(h, fqn[i]);
  }
  return contains(h, fqn);
}

std::vector<PlannedKey> planned_keys(const PlanDump& plan) {
  std::size_t n = 0;
  for (const ModuleSpec& spec : plan.modules) n += spec.params ? spec.params->size() : 0;
  std::vector<PlannedKey> keys;
  keys.reserve(n);
  for (const ModuleSpec& spec : plan.modules) {
    if (!spec.params) continue;
    for (const ParamPlacements& param : *spec.params) keys.push_back({spec.fqn, param.name});
  }
  return keys;
}

std::vector<std::size_t> uncovered_trainable_parameters(
    const ModelTree& model, const std::function<CoverageIndex()>& coverage,
    std::span<const std::uint8_t> planned) {
  std::vector<std::size_t> uncovered;
  std::optional<CoverageIndex> index;
  for (std::size_t i = 0; i < model.parameters.size(); ++i) {
    const auto& [fqn, info] = model.parameters[i];
    if (!info.requires_grad || (!planned.empty() && planned[i] != 0)) continue;
    if (!index) index.emplace(coverage());
    if (!index->covers(fqn)) uncovered.push_back(i);
  }
  return uncovered;
}

}  // namespace hpfreeze
