// The skipped plan_overrides entries of a meta, as warnings.
#include "check/skipped_overrides.h"

#include <string>
#include <string_view>

#include "json/encode.h"
#include "json/json.h"
#include "json/output_name.h"
#include "spec/findings.h"

namespace hpfreeze {
namespace {

// A value with no better spelling: compact JSON (printable ASCII), shortened.
std::string compact_value(const Json& value) {
  return shorten_for_diagnostic(encode_compact_json(value));
}

bool all_strings(const JsonArray& items) {
  for (const Json& item : items) {
    if (!item.is_string()) return false;
  }
  return true;
}

// The patterns: upstream records a list of them, an older meta may hold one string.
std::string match_text(const Json& match) {
  if (match.is_string()) return quote_for_diagnostic(match.as_string());
  if (!match.is_array() || !all_strings(match.as_array())) return compact_value(match);
  std::string list = "[";
  for (const Json& pattern : match.as_array()) {
    if (list.size() > 1) list += ", ";
    list += quote_for_diagnostic(pattern.as_string());
  }
  return shorten_for_diagnostic(list + "]");
}

std::string reason_text(const Json* reason) {
  if (reason == nullptr) return "no reason recorded";
  if (!reason->is_string()) return compact_value(*reason);
  return output_name(shorten_for_diagnostic(reason->as_string()));
}

}  // namespace

Diagnostics skipped_override_warnings(const FrozenMeta& meta) {
  Diagnostics warnings;
  const Json* value = meta.skipped_overrides.value;
  if (value == nullptr || value->is_null()) return warnings;
  if (!value->is_array()) {
    warnings.push_back(make_finding(finding_rule("HPF208"), meta.file, "/skipped_overrides",
                                    expected_got("an array", *value)));
    return warnings;
  }
  for (const MetaSkippedOverride& skipped : meta.skipped_overrides.entries) {
    std::string message = "plan_overrides entry skipped: ";
    if (!skipped.entry->is_object()) {
      message += compact_value(*skipped.entry);
    } else {
      if (skipped.match != nullptr) message += "match " + match_text(*skipped.match) + ": ";
      message += reason_text(skipped.reason);
    }
    warnings.push_back(make_finding(finding_rule("HPF208"), meta.file,
                                    index_pointer("/skipped_overrides", skipped.index),
                                    std::move(message)));
  }
  return warnings;
}

}  // namespace hpfreeze
