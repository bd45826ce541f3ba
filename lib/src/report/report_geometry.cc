// Rank 0's piece of one planned parameter (report_geometry.h).
#include "report/report_geometry.h"

#include <algorithm>
#include <optional>

#include "hpfreeze/base/diagnostic.h"
#include "spec/findings.h"
#include "spec/placement.h"

namespace hpfreeze::report_detail {
namespace {

using chunking::checked_mul;  // chunk_geometry.h, through report_local.h

std::string size_phrase(std::uint64_t local, std::uint64_t full) {
  if (local == full) return "(size " + std::to_string(local) + ")";
  return "(local size " + std::to_string(local) + " of " + std::to_string(full) + ")";
}

}  // namespace

std::string pointer_of(const PlannedParam& p) {
  return pointer_join(pointer_join(pointer_join("/param_plan", p.boundary->fqn), "params"),
                      p.param->name);
}

bool ParamGeometry::apply(const PlannedParam& planned, std::span<const std::uint64_t> shape,
                          std::span<std::uint64_t> local, std::vector<ReportAxis>& applied,
                          bool& replicated, Diagnostics& findings) {
  // The axes in placement order (distinct axes: distinct ranks), by insertion: a param
  // has a few.
  order_.clear();
  for (const MetaAxisPlacement& a : planned.param->axes) {
    const AxisInfo* axis = mesh_.find(a.axis);
    std::size_t j = order_.size();
    order_.push_back({&a, axis});
    for (; j > 0 && order_[j - 1].second->rank > axis->rank; --j) order_[j] = order_[j - 1];
    order_[j] = {&a, axis};
  }
  bool valid = true;
  const bool empty = std::find(shape.begin(), shape.end(), std::uint64_t{0}) != shape.end();
  chunks_.start(shape);
  for (const auto& [a, axis] : order_) {
    applied.push_back(a);
    valid = apply_axis(planned, *a, axis->size, shape, local, empty, replicated, findings) && valid;
  }
  return valid;
}

// Applies one axis's placement, on an axis of size `n`, to `local` (rank 0's shape so far). A dim
// divides as the planner says (docs/capacity.md, "Divisibility"): every such size by the axis size
// (times the split factor), except for an uneven placement or a parameter with a zero-sized dim;
// the largest size that does not is the error. False when the dim is out of range. The messages are
// built only when one is given.
bool ParamGeometry::apply_axis(const PlannedParam& planned, const MetaAxisPlacement& a,
                               std::uint64_t n, std::span<const std::uint64_t> shape,
                               std::span<std::uint64_t> local, bool empty, bool& replicated,
                               Diagnostics& findings) {
  const Placement& p = a.placement;
  if (!p.has_dim()) return true;
  auto error = [&](const FindingRule& rule, std::string message) {
    findings.push_back(make_finding(rule, meta_file_, pointer_join(pointer_of(planned), a.axis),
                                    std::move(message)));
  };
  auto who = [&] { return "parameter " + quote_for_diagnostic(planned.param->fqn); };
  auto where = [&] { return std::string(a.text) + " on axis " + quote_for_diagnostic(a.axis); };
  const auto rank = static_cast<std::uint64_t>(shape.size());
  const auto dim = static_cast<std::uint64_t>(p.dim);  // parse_placement gives dim >= 0
  if (dim >= rank) {
    error(finding_rule("HPF304"), who() + " has " + plural(rank, "dim") + "; " + where() +
                                      " shards dim " + std::to_string(dim));
    return false;
  }
  if (n == 1) return true;
  replicated = false;
  const std::uint64_t f = p.chunk_factor();
  const std::optional<std::uint64_t> bad = chunks_.shard(dim, n, f);
  if (!empty && !p.uneven_shard && bad) {
    const std::string dim_text =
        who() + " dim " + std::to_string(dim) + " " + size_phrase(*bad, shape[dim]);
    const std::string on_axis = where() + " of size " + std::to_string(n);
    std::uint64_t nf = 0;
    const std::string by = f == 1                  ? std::to_string(n)
                           : *bad % f != 0         ? "the split factor " + std::to_string(f)
                           : checked_mul(n, f, nf) ? std::to_string(n) + " x " + std::to_string(f) +
                                                         " = " + std::to_string(nf)
                                                   : std::to_string(n) + " x " + std::to_string(f);
    error(finding_rule("HPF501"), dim_text + " is not divisible by " + by + ": " + on_axis);
  }
  local[dim] = chunks_.rank0(dim);
  return true;
}

}  // namespace hpfreeze::report_detail
