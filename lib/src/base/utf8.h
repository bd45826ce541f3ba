#pragma once
// Well-formed UTF-8, as the Unicode standard's table 3-7 defines it and Python's strict
// utf-8 codec accepts it: no overlong forms, no surrogates, nothing above U+10FFFF. One
// rule for every reader of UTF-8 bytes (the bundle's file names, the line counter).

#include <cstddef>

namespace hpfreeze {

// What a first byte says: the length of its sequence (0: it starts none; 1: ASCII) and the
// range of the byte after it; the bytes after that are all 80..BF.
struct Utf8Lead {
  unsigned char length = 0;
  unsigned char second_low = 0x80;
  unsigned char second_high = 0xBF;
};

constexpr Utf8Lead utf8_lead(unsigned char byte) {
  if (byte < 0x80) return {1, 0x80, 0xBF};
  if (byte >= 0xC2 && byte <= 0xDF) return {2, 0x80, 0xBF};
  if (byte == 0xE0) return {3, 0xA0, 0xBF};  // no overlong form
  if (byte == 0xED) return {3, 0x80, 0x9F};  // no surrogate
  if (byte >= 0xE1 && byte <= 0xEF) return {3, 0x80, 0xBF};
  if (byte == 0xF0) return {4, 0x90, 0xBF};  // no overlong form
  if (byte == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  if (byte >= 0xF1 && byte <= 0xF3) return {4, 0x80, 0xBF};
  return {};
}

// Decodes the character at the start of `bytes` (size > 0): its length in bytes, or 0 when
// the first byte starts no well-formed sequence there. `*code_point` gets the character.
inline std::size_t decode_utf8_char(const unsigned char* bytes, std::size_t size,
                                    char32_t* code_point) {
  const Utf8Lead lead = utf8_lead(bytes[0]);
  if (lead.length == 0 || size < lead.length) return 0;
  constexpr unsigned char kLeadBits[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t value = bytes[0] & kLeadBits[lead.length];
  for (std::size_t i = 1; i < lead.length; ++i) {
    const unsigned char low = i == 1 ? lead.second_low : 0x80;
    const unsigned char high = i == 1 ? lead.second_high : 0xBF;
    if (bytes[i] < low || bytes[i] > high) return 0;
    value = (value << 6) | (bytes[i] & 0x3Fu);
  }
  *code_point = value;
  return lead.length;
}

}  // namespace hpfreeze
