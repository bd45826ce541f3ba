#pragma once
// Where a JSON text that simdjson rejected goes wrong (internal to lib/): the DOM parser
// says only what, this scans the text again to say where.

#include <cstddef>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// JSON's four whitespace bytes (RFC 8259 section 2).
constexpr bool is_json_whitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// An error at `offset` of `bytes`, with its line and column.
Diagnostic syntax_error(const std::string& name, std::string_view bytes, std::size_t offset,
                        std::string message);

// `bytes` is known to be invalid JSON (or nested too deep): the error at the first byte at
// which the text stops being the start of a valid document (the end offset for truncated
// input), except that a number out of range is reported at its first byte and a lone
// surrogate escape at its backslash. `fallback` is the message without a position for the
// case the scan finds no error (which would be a bug in it).
Diagnostic locate_syntax_error(const std::string& name, std::string_view bytes,
                               std::string fallback);

}  // namespace hpfreeze
