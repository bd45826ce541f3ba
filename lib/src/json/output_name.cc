// Names on the lines of a text output (output_name.h).
#include "json/output_name.h"

#include <array>

#include "base/utf8.h"
#include "json/encode.h"

namespace hpfreeze {
namespace {

// The white space .NET's String.TrimStart() removes (Char.IsWhiteSpace) that is no control
// and no line separator: the runner trims it before it looks for "::".
bool is_blank(char32_t c) {
  return c == U' ' || c == U'\u00a0' || c == U'\u1680' || (c >= U'\u2000' && c <= U'\u200a') ||
         c == U'\u202f' || c == U'\u205f' || c == U'\u3000';
}

}  // namespace

NameHazard name_hazard(std::string_view name) {
  bool separator = false;
  bool command = false;
  bool utf8 = true;
  bool leading = true;  // only blanks so far
  for (std::size_t i = 0; i < name.size();) {
    char32_t c = 0;
    const std::size_t n = decode_utf8_char(reinterpret_cast<const unsigned char*>(name.data()) + i,
                                           name.size() - i, &c);
    if (n == 0) {
      utf8 = false;
      leading = false;
      ++i;
      continue;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return NameHazard::kControl;
    separator = separator || c == U'\u2028' || c == U'\u2029';
    command = command || (leading && name.substr(i, 2) == "::");
    leading = leading && is_blank(c);
    i += n;
  }
  if (separator) return NameHazard::kLineSeparator;
  if (command) return NameHazard::kCommandStart;
  return utf8 ? NameHazard::kNone : NameHazard::kNotUtf8;
}

std::string_view describe(NameHazard hazard) {
  static constexpr std::array<std::string_view, 5> kWords{
      "", "holds a control character", "holds a line or paragraph separator (U+2028 or U+2029)",
      "starts with '::' as a workflow command does", "is not UTF-8"};  // enum order
  return kWords[static_cast<std::size_t>(hazard)];
}

void append_output_name(std::string& out, std::string_view name) {
  if (name_hazard(name) == NameHazard::kNone && !name.starts_with('"')) {
    out += name;
  } else {
    append_python_string(out, name);
  }
}

std::string output_name(std::string_view name) {
  std::string out;
  append_output_name(out, name);
  return out;
}

}  // namespace hpfreeze
