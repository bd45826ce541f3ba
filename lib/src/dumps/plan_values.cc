// The plan model's value helpers (plan.h): no decoding here; the plan dump's decoder is
// plan_decode.cc.
#include <string>
#include <utility>
#include <variant>

#include "dumps/plan.h"

namespace hpfreeze {

std::string join_fqn(std::string_view boundary, std::string_view name) {
  if (boundary.empty()) return std::string(name);
  if (name.empty()) return std::string(boundary);
  std::string out;
  out.reserve(boundary.size() + 1 + name.size());
  out += boundary;
  out += '.';
  out += name;
  return out;
}

Json spec_value_to_plain_json(const SpecValue& value) {
  if (const auto* j = std::get_if<Json>(&value.v)) return *j;
  if (const auto* a = std::get_if<SpecArray>(&value.v)) {
    JsonArray out;
    out.reserve(a->size());
    for (const SpecValue& item : *a) out.push_back(spec_value_to_plain_json(item));
    return Json(std::move(out));
  }
  if (const auto* o = std::get_if<SpecObject>(&value.v)) {
    JsonObject out;
    out.reserve(o->size());
    for (const SpecMember& m : *o) out.push_back({m.key, spec_value_to_plain_json(m.value)});
    return Json(std::move(out));
  }
  return Json();
}

}  // namespace hpfreeze
