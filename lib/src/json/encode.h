#pragma once
// JSON encoders for the Json model: the byte-exact Python layout of codegen_meta.json,
// a one-line compact form for JSON Lines, and an unsorted pretty form for plan dumps.
//
// Shared contract of every function here:
// - strings are expected to be valid UTF-8 (the reader guarantees it); a byte that does
//   not start a well-formed sequence (overlong forms and encoded surrogates included) is
//   written as \ufffd, one per such byte, and encoding goes on;
// - doubles are expected to be finite (the reader rejects NaN and Infinity); should one
//   slip through it is written as Python spells it (NaN, Infinity, -Infinity), which is
//   not valid JSON;
// - objects are expected to hold unique keys; duplicates are all written, and where keys
//   are sorted, equal keys keep their insertion order;
// - recursion follows the nesting, so depth is bounded by the reader's limit (1024).

#include <string>
#include <string_view>

#include "json/json.h"

namespace hpfreeze {

// The bytes of Python's json.dump(value, f, indent=2, sort_keys=True): keys sorted by code
// point at every level, 2-space indent, ensure_ascii escaping, floats as repr(float), no
// trailing newline.
std::string encode_python_json(const Json& value);

// Same bytes as encode_python_json, appended to `out`.
void append_python_json(const Json& value, std::string& out);

// One line without spaces ({"a":1,"b":[1,2]}), members in insertion order, same string and
// number spelling as encode_python_json. No trailing newline.
std::string encode_compact_json(const Json& value);

// The layout of encode_python_json (Python's indent=2) with members in insertion order.
std::string encode_plain_json(const Json& value);

// Appends `utf8` as a quoted JSON string the way Python's json module writes it with
// ensure_ascii: \" \\ \n \r \t \b \f, every other byte outside 0x20-0x7E as lowercase
// \uXXXX, code points above U+FFFF as surrogate pairs, '/' left alone.
void append_python_string(std::string& out, std::string_view utf8);

// Appends Python's repr(d): shortest round-trip digits, exponent form when the decimal
// exponent is below -4 or at least 16 (1e-05, 1e+16), ".0" on integral values in fixed form.
void append_python_float(std::string& out, double d);

}  // namespace hpfreeze
