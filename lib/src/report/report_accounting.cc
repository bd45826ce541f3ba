// The report's accounting (report_accounting.h).
#include "report/report_accounting.h"

#include <algorithm>
#include <vector>

#include "capacity/chunk_geometry.h"
#include "json/json.h"
#include "spec/findings.h"

namespace hpfreeze::report_detail {
namespace {

std::uint64_t size_of(const AxisSizes& sizes, std::string_view axis) {
  auto it = sizes.find(axis);
  return it == sizes.end() ? 1 : it->second;
}

// The listed ZeRO axes, each once, in the listed order.
std::vector<std::string_view> listed_once(const ZeroSharding& zero) {
  std::vector<std::string_view> out;
  for (const std::string& a : zero.axes) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.emplace_back(a);
  }
  return out;
}

}  // namespace

bool checked_volume(std::span<const std::uint64_t> shape, std::uint64_t unit, std::uint64_t& out) {
  if (std::find(shape.begin(), shape.end(), std::uint64_t{0}) != shape.end()) {
    out = 0;
    return true;
  }
  std::uint64_t acc = unit;
  for (std::uint64_t d : shape) {
    if (!chunking::checked_mul(acc, d, acc)) return false;
  }
  out = acc;
  return true;
}

ZeroGroups rank0_zero_groups(const Accounting& accounting, const AxisSizes& sizes) {
  ZeroGroups out;
  bool overflow = false;  // the mesh's own error, which the planner reports
  for (std::string_view a : listed_once(accounting.zero)) {
    overflow = __builtin_mul_overflow(out.dense, size_of(sizes, a), &out.dense) || overflow;
  }
  if (overflow) out.dense = 1;
  if (accounting.layout != ExpertLayout::kFolded) return out;
  std::uint64_t region = 1;
  overflow = false;
  for (const auto& [axis, size] : sizes) {
    if (axis == kExpertAxis || axis == kStageAxis) continue;
    overflow = __builtin_mul_overflow(region, size, &region) || overflow;
  }
  const std::uint64_t ep = size_of(sizes, kExpertAxis);
  out.expert = !overflow && region % ep == 0 ? region / ep : 1;
  return out;
}

std::uint64_t zero_group_of(const ZeroSharding& zero, const AxisSizes& sizes,
                            const MetaParam* param, bool expert, const ZeroGroups& groups) {
  if (zero.stage == 0) return 1;
  if (expert) return groups.expert;
  std::uint64_t n = 1;
  for (std::string_view a : listed_once(zero)) {
    const bool sharded =
        param != nullptr &&
        std::any_of(param->axes.begin(), param->axes.end(), [a](const MetaAxisPlacement& x) {
          return x.axis == a && x.placement.has_dim();
        });
    if (!sharded) n *= size_of(sizes, a);  // <= groups.dense, which did not overflow
  }
  return n;
}

bool is_expert(ExpertLayout layout, const MetaParam& param) {
  if (layout != ExpertLayout::kFolded) return false;
  return std::any_of(param.axes.begin(), param.axes.end(), [](const MetaAxisPlacement& a) {
    return a.axis == kExpertAxis && a.placement.has_dim();
  });
}

Diagnostics expert_placement_errors(const MetaParam& param, const std::string& meta_file,
                                    const std::string& pointer) {
  Diagnostics out;
  for (const MetaAxisPlacement& a : param.axes) {
    if (a.axis == kExpertAxis || a.placement.kind == PlacementKind::kReplicate) continue;
    out.push_back(make_finding(
        finding_rule("HPF502"), meta_file, pointer_join(pointer, a.axis),
        "parameter " + quote_for_diagnostic(param.fqn) +
            " is an expert (a Shard on axis 'ep'); the folded layout cannot also put " +
            std::string(a.text) + " on axis " + quote_for_diagnostic(a.axis) +
            ": it splits experts on ep only (--expert-parallel axis makes ep a mesh axis)"));
  }
  return out;
}

}  // namespace hpfreeze::report_detail
