// Names on the lines of a text output (output_name.h).
#include "json/output_name.h"

#include <array>

#include "json/encode.h"

namespace hpfreeze {
namespace {

// The length of the well-formed UTF-8 sequence at `s[i]` and its code point, or 0 for a
// byte that starts none (Unicode 15 table 3-7: no overlong forms, surrogates or code points
// above U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& code) {
  const auto lead = static_cast<unsigned char>(s[i]);
  if (lead < 0x80) {
    code = lead;
    return 1;
  }
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1fu;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0fu;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07u;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (s.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < low || b > high) return 0;
    low = 0x80;
    high = 0xbf;
    code = code << 6 | (b & 0x3fu);
  }
  return length;
}

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
    const std::size_t n = utf8_sequence(name, i, c);
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
