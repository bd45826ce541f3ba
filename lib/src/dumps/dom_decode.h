#pragma once
// What the plan and model decoders add to the DOM decoding kit (json/dom_decode.h): the
// `format` tag, the `modules` object both dumps require, and decode_dump, which turns the
// first DecodeError into a diagnostic.

#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "json/dom_decode.h"
#include "json/json_document.h"

namespace hpfreeze::dom_decode {

// The root's `format` value: null, or exactly `expected`.
inline void check_format(element e, std::string_view expected) {
  if (e.is_null()) return;
  const Path root;
  const Path pointer(root, "format");
  const std::string_view format = expect_string(e, pointer);
  if (format != expected) {
    fail(pointer, "unsupported format " + quote_for_diagnostic(format) + " (expected '" +
                      std::string(expected) + "')");
  }
}

// The `modules` object both dumps require; `found` is its value when the root has the key,
// `pointer` the path "/modules".
inline simdjson::dom::object required_modules(const std::optional<element>& found,
                                              const Path& pointer) {
  if (!found) fail(Path(), "missing required key 'modules'");
  return expect_object(*found, pointer);
}

// A dump decoded by decode(model, root object, root path), which throws DecodeError on the
// first defect. This is the decoder's half of the duplicate-key shortcut (ParseOptions::
// check_duplicate_keys in json_document.h): when the parse left the keys unchecked, the
// decoder checks the keys it walks, and on any failure a repeated key anywhere in the
// document is reported first, with the second key's pointer, as the parse would have.
template <typename Model, typename Decode>
Expected<Model> decode_dump(const JsonDocument& document, Decode&& decode) {
  Model model;
  model.file = document.name();
  try {
    const Path root_path;
    decode(model, expect_object(document.root(), root_path), root_path);
  } catch (const DecodeError& error) {
    if (!document.keys_checked()) {
      if (std::optional<Diagnostic> repeated = find_duplicate_key(document)) return *repeated;
    }
    return to_diagnostic(error, document.name());
  }
  return model;
}

}  // namespace hpfreeze::dom_decode
