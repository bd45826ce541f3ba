// diff's --ignore items: parsed into JSON Pointers, and refused when they name nothing the
// way diff addresses values (docs/cli.md, "hpfreeze diff").
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diff/diff.h"
#include "diff/pointer_order.h"

namespace hpfreeze {

Expected<std::vector<IgnoredPointer>> ignored_pointers(const DiffOptions& options) {
  std::vector<IgnoredPointer> pointers;
  Diagnostics errors;
  for (const std::string& given : options.ignored_fields) {
    for (std::size_t pos = 0;;) {
      const std::size_t comma = std::min(given.find(',', pos), given.size());
      const std::string_view item = std::string_view(given).substr(pos, comma - pos);
      const std::string named = "--ignore " + quote_for_diagnostic(item);
      bool bad_escape = false;
      for (std::size_t i = 0; i < item.size(); ++i) {
        if (item[i] != '~') continue;
        bad_escape =
            bad_escape || i + 1 == item.size() || (item[i + 1] != '0' && item[i + 1] != '1');
        ++i;
      }
      if (item.empty()) {
        errors.push_back(
            make_io_error({}, "--ignore " + quote_for_diagnostic(given) + ": empty field name"));
      } else if (item.front() != '/') {
        std::string pointer;
        append_pointer_token(pointer, item);
        pointers.push_back({std::string(item), std::move(pointer)});
      } else if (bad_escape) {
        errors.push_back(
            make_io_error({}, named + ": not a JSON Pointer ('~' must be followed by 0 or 1)"));
      } else {
        pointers.push_back({std::string(item), std::string(item)});
      }
      if (comma == given.size()) break;
      pos = comma + 1;
    }
  }
  if (!errors.empty()) return errors;
  return pointers;
}

namespace {

// Whether `tokens` names a value of `meta`, /injections/<match> naming an injection.
bool resolves(const FrozenMeta& meta, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return true;  // the whole meta
  const Json* at = nullptr;
  std::size_t k = 1;
  if (tokens.size() >= 2 && tokens[0] == "injections") {
    auto it = std::find_if(meta.injections.begin(), meta.injections.end(),
                           [&](const MetaInjection& i) { return i.match == tokens[1]; });
    if (it == meta.injections.end()) return false;
    at = it->entry;
    k = 2;
  } else {
    const JsonObject& top = meta.top_level();
    auto it = std::find_if(top.begin(), top.end(),
                           [&](const JsonMember& m) { return m.key == tokens[0]; });
    if (it == top.end()) return false;
    at = &it->value;
  }
  for (; k < tokens.size(); ++k) {
    const std::string& token = tokens[k];
    if (at->is_object()) {
      at = at->find(token);
      if (at == nullptr) return false;
    } else if (at->is_array()) {
      const bool index =
          !token.empty() && token.size() <= 18 &&
          std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
          (token.size() == 1 || token.front() != '0');
      if (!index || std::stoull(token) >= at->as_array().size()) return false;
      at = &at->as_array()[std::stoull(token)];
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

Diagnostics check_ignored(const std::vector<IgnoredPointer>& pointers, const FrozenMeta& old_meta,
                          const FrozenMeta& new_meta) {
  Diagnostics errors;
  for (const IgnoredPointer& p : pointers) {
    const std::vector<std::string> tokens = pointer_tokens(p.pointer);
    const std::string named = "--ignore " + quote_for_diagnostic(p.given);
    if (tokens.size() >= 2 && (tokens[0] == "frozen_sharded_params" || tokens[0] == "tied_pairs")) {
      errors.push_back(make_io_error({}, named + ": the members of /" + tokens[0] +
                                             " compare as a multiset; ignore the whole /" +
                                             tokens[0]));
    } else if (!resolves(old_meta, tokens) && !resolves(new_meta, tokens)) {
      errors.push_back(make_io_error({}, named + ": matches nothing in either input"));
    }
  }
  return errors;
}

}  // namespace hpfreeze
