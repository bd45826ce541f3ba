// The identity members readers need decoded, and the base meta freeze copies them from.
#include "meta/identity.h"

#include <optional>
#include <string>
#include <variant>

#include "dumps/dump_kind.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/json_document.h"

namespace hpfreeze {
MetaMemberState state_of(const Json& value) {
  if (value.is_null()) return MetaMemberState::kNull;
  return value.is_object() ? MetaMemberState::kObject : MetaMemberState::kOther;
}

MetaCovered decode_covered(const Json& value) {
  MetaCovered out;
  out.state = state_of(value);
  out.type = json_type_article(value);
  if (value.is_object()) out.object = &value.as_object();
  return out;
}

MetaParallelDims decode_parallel_dims(const Json& value) {
  MetaParallelDims out;
  out.state = state_of(value);
  if (!value.is_object()) return out;
  constexpr std::string_view kSuffix = "_size";
  for (const JsonMember& m : value.as_object()) {
    if (m.key.size() <= kSuffix.size() || !m.key.ends_with(kSuffix)) continue;
    MetaAxisSize& axis = out.axes.emplace_back();
    axis.key = m.key;
    axis.axis = m.key.substr(0, m.key.size() - kSuffix.size());
    if (const auto* i = std::get_if<std::int64_t>(&m.value.v); i != nullptr && *i >= 1) {
      axis.size = static_cast<std::uint64_t>(*i);
    } else if (const auto* u = std::get_if<std::uint64_t>(&m.value.v)) {
      axis.above_max = *u;  // a JSON integer is a uint64 only from 2^63 up
    }
  }
  return out;
}

Expected<Json> decode_base_meta(const Json& base, const std::string& file,
                                const std::string& pointer) {
  // No finding, here and below: a plan's base meta freeze cannot use is refused.
  if (!base.is_object()) return make_error(file, pointer, "a base meta must be a JSON object");
  if (const Json* covered = base.find("covered");
      covered != nullptr && !decode_covered(*covered).valid()) {
    // No finding: as above.
    return make_error(file, pointer_join(pointer, "covered"),
                      "'covered' must be an object in a base meta");
  }
  return base;
}

Expected<Json> decode_base_meta(const JsonDocument& base) {
  if (std::optional<Diagnostic> wrong =
          wrong_kind_error(base, base_meta_lookalike_kind(base), DumpKind::kMeta, "--base")) {
    return *wrong;
  }
  return decode_base_meta(json_from_dom(base.root()), base.name(), "");
}

}  // namespace hpfreeze
