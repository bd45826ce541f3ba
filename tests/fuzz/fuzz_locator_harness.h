#pragma once
// The pointer locator (lib/src/json/json_pointer_locator.h, the lines of --message-format
// github) checked on every JSON document the encode target reads: every value's pointer is
// found, in pieces of 3 bytes, at a byte that starts a value of its kind.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"
#include "json/json_pointer_locator.h"

namespace hpfreeze::fuzz {

// Up to `limit` values of `value`, depth first: their pointers and the byte each starts with.
inline void collect_pointers(const Json& value, const std::string& pointer, std::size_t limit,
                             std::vector<std::string>& pointers, std::string& first_bytes) {
  if (pointers.size() >= limit) return;
  pointers.push_back(pointer);
  if (value.is_object()) {
    first_bytes += '{';
    for (const JsonMember& m : value.as_object()) {
      collect_pointers(m.value, pointer_join(pointer, m.key), limit, pointers, first_bytes);
    }
  } else if (value.is_array()) {
    first_bytes += '[';
    for (std::size_t i = 0; i < value.as_array().size(); ++i) {
      collect_pointers(value.as_array()[i], index_pointer(pointer, i), limit, pointers,
                       first_bytes);
    }
  } else if (value.is_string()) {
    first_bytes += '"';
  } else if (value.is_null()) {
    first_bytes += 'n';
  } else if (value.is_bool()) {
    first_bytes += value.truthy() ? 't' : 'f';
  } else {
    first_bytes += '0';  // a number: '-' or a digit
  }
}

inline std::string check_pointer_positions(std::string_view text, const Json& value) {
  std::vector<std::string> pointers;
  std::string first_bytes;
  collect_pointers(value, "", 256, pointers, first_bytes);
  std::size_t at = 0;
  const TextPieces pieces = [&]() -> std::string_view {
    const std::string_view piece = text.substr(std::min(at, text.size()), 3);
    at += piece.size();
    return piece;
  };
  const std::vector<std::optional<TextPosition>> found = locate_pointers(pieces, pointers);
  std::vector<std::size_t> line_starts{0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts.push_back(i + 1);
  }
  for (std::size_t k = 0; k < pointers.size(); ++k) {
    if (!found[k]) return "the locator misses " + quote_for_diagnostic(pointers[k]);
    const TextPosition p = *found[k];
    if (p.line == 0 || p.line > line_starts.size() || p.column == 0) {
      return "the locator gives no line and column for " + quote_for_diagnostic(pointers[k]);
    }
    const std::size_t offset = line_starts[p.line - 1] + p.column - 1;
    const char c = offset < text.size() ? text[offset] : '\0';
    const char want = first_bytes[k];
    const bool number = want == '0' && (c == '-' || (c >= '0' && c <= '9'));
    if (c != want && !number) {
      return "the locator puts " + quote_for_diagnostic(pointers[k]) + " at a byte that " +
             "starts no such value";
    }
  }
  return {};
}

}  // namespace hpfreeze::fuzz
