#pragma once
// The module-spec field table (docs/formats.md, "Module specs"): the single source of truth walked
// by decoding, freeze and thaw. Adding a field is adding one row.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace hpfreeze {

enum class FieldSection { kParamPlan, kInjections };

enum class FieldKind {
  kPlacementMap,     // param -> axis -> placement
  kNamedPlacements,  // name -> value_to_dict; falsy gives {}
  kNameList,         // array of plain values, written when truthy
  kAttrList,         // array of plain values, written when not null
  kScalar,           // plain value, written when not null
  kValueToDict,      // placements, targets, callables at any depth
  kPlain,            // plain value, written when not null
  kDictCopy,         // plain object, written when truthy
  kIntTruthy,        // plain value, written when truthy
};

struct SpecField {
  std::string_view attribute;  // key in the plan dump (upstream attribute name)
  std::string_view meta_key;   // key in codegen_meta.json
  FieldSection section;
  FieldKind kind;
};

inline constexpr std::array<SpecField, 16> kSpecFields{{
    {"params", "params", FieldSection::kParamPlan, FieldKind::kPlacementMap},
    {"in_src", "in_src", FieldSection::kParamPlan, FieldKind::kNamedPlacements},
    {"in_dst", "in_dst", FieldSection::kParamPlan, FieldKind::kNamedPlacements},
    {"out_src", "out_src", FieldSection::kParamPlan, FieldKind::kNamedPlacements},
    {"out_dst", "out_dst", FieldSection::kParamPlan, FieldKind::kNamedPlacements},
    {"out_names", "out_names", FieldSection::kParamPlan, FieldKind::kNameList},
    {"tp_divide_attrs", "tp_divide_attrs", FieldSection::kParamPlan, FieldKind::kAttrList},
    {"is_boundary", "is_boundary", FieldSection::kParamPlan, FieldKind::kScalar},
    {"region_dispatch", "region_dispatch", FieldSection::kParamPlan, FieldKind::kScalar},
    {"_deferred_bias_params", "deferred_bias_params", FieldSection::kParamPlan,
     FieldKind::kNameList},
    {"inner_wrapper", "inner_wrapper", FieldSection::kInjections, FieldKind::kValueToDict},
    {"inner_target", "inner_target", FieldSection::kInjections, FieldKind::kPlain},
    {"inner_out_src", "inner_out_src", FieldSection::kInjections, FieldKind::kValueToDict},
    {"local_compute_fn", "local_compute_fn", FieldSection::kInjections, FieldKind::kValueToDict},
    {"_ep_stack", "ep_stack", FieldSection::kInjections, FieldKind::kDictCopy},
    {"_ep_size", "ep_size", FieldSection::kInjections, FieldKind::kIntTruthy},
}};

inline constexpr std::size_t kParamsField = 0;  // kSpecFields[0] is `params`

// Upstream-internal attributes: accepted in a dump and ignored whatever they hold.
inline constexpr std::array<std::string_view, 6> kExemptSpecAttributes{
    "_tp_local_attr_plan",     "_is_terminal",           "_needs_cp_attn",
    "_resolved_inner_wrapper", "_resolved_inner_target", "_head_count_owner"};

// Index into kSpecFields by dump attribute / by meta key.
std::optional<std::size_t> find_spec_field_by_attribute(std::string_view attribute);
std::optional<std::size_t> find_spec_field_by_meta_key(std::string_view meta_key);
bool is_exempt_spec_attribute(std::string_view attribute);

// Whether the kind writes a falsy (but not null) value; null is never written.
constexpr bool writes_falsy(FieldKind kind) {
  return kind != FieldKind::kNameList && kind != FieldKind::kDictCopy &&
         kind != FieldKind::kIntTruthy;
}

}  // namespace hpfreeze
