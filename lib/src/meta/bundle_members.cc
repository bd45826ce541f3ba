// The members that describe a meta's generated bundle, and the skipped plan_overrides.
#include "meta/bundle_members.h"

#include <algorithm>
#include <cstdint>
#include <variant>

#include "bundle/output_names.h"
#include "meta/identity.h"

namespace hpfreeze {
namespace {

MetaOutput decode_output(const JsonMember& m) {
  MetaOutput out;
  out.key = m.key;
  out.recorded = &m.value;
  if (!m.value.is_object()) return out;
  if (const Json* sha256 = m.value.find("sha256");
      sha256 != nullptr && sha256->is_string() && is_sha256_hex(sha256->as_string())) {
    out.sha256 = sha256->as_string();
  }
  if (const Json* lines = m.value.find("lines")) {
    if (const auto* i = std::get_if<std::int64_t>(&lines->v); i != nullptr && *i >= 0) {
      out.lines = static_cast<std::uint64_t>(*i);
    } else if (const auto* u = std::get_if<std::uint64_t>(&lines->v)) {
      out.lines = *u;  // a JSON integer is a uint64 only from 2^63 up
    }
  }
  return out;
}

void decode_outputs(const Json& value, MetaBundle& bundle) {
  bundle.outputs_state = state_of(value);
  if (!value.is_object()) return;
  bundle.outputs.reserve(value.as_object().size());
  for (const JsonMember& m : value.as_object()) bundle.outputs.push_back(decode_output(m));
}

void decode_skipped_overrides(const Json& value, MetaSkippedOverrides& skipped) {
  skipped.value = &value;
  if (!value.is_array()) return;
  const JsonArray& items = value.as_array();
  skipped.entries.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    MetaSkippedOverride& entry = skipped.entries.emplace_back();
    entry.index = i;
    entry.entry = &items[i];
    if (!items[i].is_object()) continue;
    entry.match = items[i].find("match");
    entry.reason = items[i].find("reason");
  }
}

}  // namespace

std::optional<std::string_view> MetaBundle::modeling_name() const {
  if (model_name == nullptr || model_name->is_null()) return std::string_view();
  if (model_name->is_string()) return model_name->as_string();
  return std::nullopt;
}

const MetaOutput* MetaBundle::find_output(std::string_view key) const {
  auto it = std::find_if(outputs.begin(), outputs.end(),
                         [key](const MetaOutput& o) { return o.key == key; });
  return it == outputs.end() ? nullptr : &*it;
}

void decode_bundle_member(const JsonMember& m, MetaBundle& bundle, MetaSkippedOverrides& skipped) {
  if (m.key == "model_name") {
    bundle.model_name = &m.value;
  } else if (m.key == "outputs") {
    decode_outputs(m.value, bundle);
  } else if (m.key == "remote_siblings") {
    if (!m.value.is_array()) return;
    const JsonArray& items = m.value.as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].is_string()) bundle.remote_siblings.emplace_back(i, items[i].as_string());
    }
  } else if (m.key == "skipped_overrides") {
    decode_skipped_overrides(m.value, skipped);
  }
}

}  // namespace hpfreeze
