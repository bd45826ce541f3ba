// The planner's settings as the text header and the JSON show them (settings_render.h).
#include "capacity/settings_render.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "json/output_name.h"

namespace hpfreeze {
namespace {

// "4 ranks", "1 to 16 ranks": the sizes of one kind of ZeRO group over the meshes shown.
std::string group_sizes(const CapacityResult& result, std::uint64_t ZeroGroups::*kind) {
  std::uint64_t least = UINT64_MAX;
  std::uint64_t most = 0;
  for (const MeshCapacity& m : result.meshes) {
    if (!capacity_shown(result, m) || !m.laid_out()) continue;
    least = std::min(least, m.zero.*kind);
    most = std::max(most, m.zero.*kind);
  }
  if (most == 0) return "no rank";
  return least == most ? plural(most, "rank")
                       : std::to_string(least) + " to " + plural(most, "rank");
}

// ", on dim 1": where ZeRO chunks the experts, when --expert-zero-dim moves it.
std::string expert_dim_words(const ZeroSharding& zero) {
  return zero.expert_dim == 0 ? "" : ", on dim " + std::to_string(zero.expert_dim);
}

// "ZeRO stage 3 (the weights, gradients and optimizer state split over dp x cp, 4 ranks;
// expert parameters over edp, 2 ranks)": the groups some parameter is split over.
std::string zero_words(const CapacityResult& result) {
  static constexpr std::string_view kSplit[] = {"", "the optimizer state",
                                                "the gradients and optimizer state",
                                                "the weights, gradients and optimizer state"};
  const ZeroSharding& zero = result.accounting.zero;
  std::string axes;
  for (const std::string& a : zero.axes) {
    const bool present =
        std::any_of(result.meshes.begin(), result.meshes.end(), [&](const auto& m) {
          return std::any_of(m.mesh.axes.begin(), m.mesh.axes.end(),
                             [&](const AxisSize& x) { return x.axis == a; });
        });
    if (present) axes += (axes.empty() ? "" : " x ") + output_name(a);
  }
  const bool experts = std::any_of(result.meshes.begin(), result.meshes.end(),
                                   [](const MeshCapacity& m) { return m.zero.expert > 1; });
  const std::string what(kSplit[static_cast<std::size_t>(zero.stage)]);
  const std::string head = "ZeRO stage " + std::to_string(zero.stage) + " (";
  const std::string edp =
      "edp, " + group_sizes(result, &ZeroGroups::expert) + expert_dim_words(zero);
  if (!result.dense_zero && experts) {  // a plan of experts only: edp is its one group
    return head + what + " of the expert parameters split over " + edp + ")";
  }
  std::string over;
  if (!axes.empty() && result.dense_zero) {
    over = axes + ", " + group_sizes(result, &ZeroGroups::dense);
  }
  if (experts) over += (over.empty() ? "" : "; ") + std::string("expert parameters over ") + edp;
  return head + what + " split over " + (over.empty() ? "no axis of the meshes" : over) + ")";
}

// The header line on `ep`, when some mesh or placement names it.
std::string expert_line(const CapacityResult& result) {
  if (std::find(result.axis_order.begin(), result.axis_order.end(), kExpertAxis) ==
      result.axis_order.end()) {
    return "";
  }
  const std::string from =
      result.accounting.layout_source == LayoutSource::kFlag
          ? "--expert-parallel"
          : (result.accounting.layout == ExpertLayout::kFolded ? "mesh_dim_names does not name ep"
                                                               : "mesh_dim_names names ep");
  if (result.accounting.layout == ExpertLayout::kAxis) {
    return "expert parallel: axis (" + from + "): ep is a mesh axis and multiplies the devices\n";
  }
  return "expert parallel: folded (" + from +
         "): experts split over ep inside the dense region, "
         "edp their data-parallel group; ep does not multiply the devices\n";
}

// "budget 80.0 GiB", "budget 80.0 GiB less a 8.0 GiB reserve", "no budget".
std::string budget_words(const MeshFilter& filter) {
  if (!filter.budget) return "no budget";
  std::string out = "budget " + format_byte_size(*filter.budget);
  if (filter.reserve > 0) out += " less a " + format_byte_size(filter.reserve) + " reserve";
  return out;
}

// {"stage", "axes", "expert_axis"}: the defaults when the planner did not run.
void write_zero(JsonStream& w, const CapacityResult& result) {
  const ZeroSharding defaults;
  const ZeroSharding& zero = result.planned() ? result.accounting.zero : defaults;
  w.start_object();
  w.key("stage").integer(zero.stage);
  w.key("axes").start_array();
  for (const std::string& a : zero.axes) w.string(a);
  w.end_array();
  w.key("expert_axis");
  if (result.planned() && expert_view(result)) {
    w.string(kExpertDataAxis);
  } else {
    w.null();
  }
  // Only when given: without it the object is as before --expert-zero-dim.
  if (zero.expert_dim != 0) w.key("expert_dim").number(zero.expert_dim);
  w.end_object();
}

}  // namespace

std::string settings_text(const CapacityResult& result) {
  const Accounting& accounting = result.accounting;
  return ", optimizer " + std::string(optimizer_name(accounting.optimizer)) +
         (accounting.recipe != Recipe::kDtensor
              ? ", recipe " + std::string(recipe_name(accounting.recipe))
              : std::string()) +
         (accounting.zero.stage > 0 ? ", " + zero_words(result) : std::string()) + ", " +
         budget_words(result.filter) + "\n" + expert_line(result);
}

void write_settings_json(JsonStream& w, const CapacityResult& result) {
  const bool planned = result.planned();
  const Accounting& accounting = result.accounting;
  w.key("optimizer")
      .optional_string(planned ? std::optional(optimizer_name(accounting.optimizer))
                               : std::nullopt);
  // Only another recipe than dtensor's: without --recipe the document is as before it.
  if (accounting.recipe != Recipe::kDtensor) w.key("recipe").string(recipe_name(accounting.recipe));
  w.key("budget_bytes").optional_number(planned ? result.filter.budget : std::nullopt);
  w.key("reserve_bytes")
      .optional_number(planned && result.filter.budget ? std::optional(result.filter.reserve)
                                                       : std::nullopt);
  w.key("zero");
  write_zero(w, result);
  w.key("expert_parallel").start_object();
  w.key("layout").string(expert_layout_name(accounting.layout));
  w.key("from").string(accounting.layout_source == LayoutSource::kFlag ? "flag" : "meta");
  w.end_object();
}

bool expert_view(const CapacityResult& result) {
  return result.accounting.layout == ExpertLayout::kFolded &&
         std::find(result.axis_order.begin(), result.axis_order.end(), kExpertAxis) !=
             result.axis_order.end();
}

}  // namespace hpfreeze
