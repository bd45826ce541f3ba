#include "hpfreeze/encode.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <variant>
#include <vector>

namespace hpfreeze {
namespace {

// What append_python_string does with a byte: copy it (kCopy), write a two-character
// escape (the table holds the letter after '\'), write \u00XX (kHex), or decode a
// multi-byte UTF-8 sequence (kUtf8).
constexpr char kCopy = 0;
constexpr char kHex = 'u';
constexpr char kUtf8 = 'x';

constexpr std::array<char, 256> make_escape_table() {
  std::array<char, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[static_cast<std::size_t>(c)] = kHex;
  table['\b'] = 'b';
  table['\f'] = 'f';
  table['\n'] = 'n';
  table['\r'] = 'r';
  table['\t'] = 't';
  table['"'] = '"';
  table['\\'] = '\\';
  table[0x7F] = kHex;
  for (int c = 0x80; c < 0x100; ++c) table[static_cast<std::size_t>(c)] = kUtf8;
  return table;
}
constexpr std::array<char, 256> kEscape = make_escape_table();

void append_u_escape(std::string& out, std::uint32_t unit) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  const char escape[6] = {'\\',
                          'u',
                          kHexDigits[(unit >> 12) & 0xF],
                          kHexDigits[(unit >> 8) & 0xF],
                          kHexDigits[(unit >> 4) & 0xF],
                          kHexDigits[unit & 0xF]};
  out.append(escape, sizeof escape);
}

// Decodes one well-formed UTF-8 sequence starting at a byte >= 0x80 and returns its
// length, or 0 when the bytes are not well formed (bad lead or continuation byte,
// overlong form, surrogate, or beyond U+10FFFF).
std::size_t decode_utf8(const unsigned char* p, const unsigned char* end, std::uint32_t& cp) {
  const unsigned char lead = *p;
  std::size_t length;
  std::uint32_t min_cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    min_cp = 0x80;
    cp = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    min_cp = 0x800;
    cp = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    min_cp = 0x10000;
    cp = lead & 0x07u;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3Fu);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return length;
}

template <class Integer>
std::string_view format_integer(char (&buf)[24], Integer value) {
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  return {buf, static_cast<std::size_t>(result.ptr - buf)};
}

// RapidJSON output stream appending to a caller's string.
class StringSink {
 public:
  using Ch = char;
  explicit StringSink(std::string& out) : out_(&out) {}
  void Put(char c) { out_->push_back(c); }
  void Flush() {}

 private:
  std::string* out_;
};

using PrettyWriter = rapidjson::PrettyWriter<StringSink>;
using CompactWriter = rapidjson::Writer<StringSink>;

// Walks a Json tree into a RapidJSON writer. The writer supplies the layout (commas,
// colons, newlines, indentation, inline empty containers); keys, strings and numbers go
// through RawValue because RapidJSON's own escaping and double formatting differ from
// Python's (uppercase \u hex, raw DEL, 1e-7, non-shortest digits).
template <class Writer, bool kSortKeys>
class TreeEncoder {
 public:
  explicit TreeEncoder(std::string& out) : sink_(out), writer_(sink_) {
    if constexpr (std::is_same_v<Writer, PrettyWriter>) writer_.SetIndent(' ', 2);
  }

  void encode(const Json& value) { std::visit(*this, value.v); }

  void operator()(std::nullptr_t) { writer_.Null(); }
  void operator()(bool b) { writer_.Bool(b); }
  void operator()(std::int64_t i) { number(format_integer(digits_, i)); }
  void operator()(std::uint64_t u) { number(format_integer(digits_, u)); }
  void operator()(double d) {
    scratch_.clear();
    append_python_float(scratch_, d);
    number(scratch_);
  }
  void operator()(std::string_view s) { string(s); }

  void operator()(const JsonArray& array) {
    writer_.StartArray();
    for (const Json& element : array) encode(element);
    writer_.EndArray();
  }

  void operator()(const JsonObject& object) {
    writer_.StartObject();
    if (!kSortKeys || keys_in_order(object)) {
      for (const JsonMember& member : object) write_member(member);
    } else {
      // order_ is a stack shared by all nesting levels: this object's index occupies
      // [base, base + size) and is popped before returning, so no allocation per object.
      const std::size_t base = order_.size();
      for (const JsonMember& member : object) order_.push_back(&member);
      std::sort(order_.begin() + static_cast<std::ptrdiff_t>(base), order_.end(), key_less);
      for (std::size_t i = base; i < base + object.size(); ++i) write_member(*order_[i]);
      order_.resize(base);
    }
    writer_.EndObject();
  }

 private:
  // Byte order of UTF-8 is code point order (string_view compares as unsigned bytes).
  // Ties fall back to position so that duplicate keys keep insertion order.
  static bool key_less(const JsonMember* a, const JsonMember* b) {
    const int c = a->key.compare(b->key);
    return c < 0 || (c == 0 && std::less<>()(a, b));
  }

  static bool keys_in_order(const JsonObject& object) {
    for (std::size_t i = 1; i < object.size(); ++i) {
      if (object[i].key < object[i - 1].key) return false;
    }
    return true;
  }

  void write_member(const JsonMember& member) {
    string(member.key);  // a kStringType RawValue at a key position is taken as the key
    encode(member.value);
  }

  void string(std::string_view s) {
    scratch_.clear();
    append_python_string(scratch_, s);
    writer_.RawValue(scratch_.data(), scratch_.size(), rapidjson::kStringType);
  }

  void number(std::string_view text) {
    writer_.RawValue(text.data(), text.size(), rapidjson::kNumberType);
  }

  StringSink sink_;
  Writer writer_;
  std::string scratch_;  // one escaped key, string or number at a time; reused
  std::vector<const JsonMember*> order_;
  char digits_[24];
};

template <class Writer, bool kSortKeys>
void append_json(const Json& value, std::string& out) {
  TreeEncoder<Writer, kSortKeys> encoder(out);
  encoder.encode(value);
}

}  // namespace

void append_python_string(std::string& out, std::string_view utf8) {
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const auto* const end = p + utf8.size();
  out.push_back('"');
  while (p < end) {
    const auto* const run = p;
    while (p < end && kEscape[*p] == kCopy) ++p;
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    if (p == end) break;
    const char action = kEscape[*p];
    if (action == kHex) {
      append_u_escape(out, *p);
      ++p;
    } else if (action != kUtf8) {
      const char escape[2] = {'\\', action};
      out.append(escape, 2);
      ++p;
    } else {
      std::uint32_t cp = 0;
      const std::size_t length = decode_utf8(p, end, cp);
      if (length == 0) {
        append_u_escape(out, 0xFFFD);
        ++p;
      } else if (cp < 0x10000) {
        append_u_escape(out, cp);
        p += length;
      } else {
        cp -= 0x10000;
        append_u_escape(out, 0xD800 + (cp >> 10));
        append_u_escape(out, 0xDC00 + (cp & 0x3FF));
        p += length;
      }
    }
  }
  out.push_back('"');
}

void append_python_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "Infinity" : "-Infinity";
    return;
  }
  // Shortest round-trip digits in scientific form: [-]D[.DDD]e(+|-)XX[X].
  char sci[32];
  const char* const sci_end =
      std::to_chars(sci, sci + sizeof sci, d, std::chars_format::scientific).ptr;
  const char* p = sci;
  const bool negative = *p == '-';
  if (negative) ++p;
  char digits[20];
  int digit_count = 0;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits[digit_count++] = *p;
  }
  ++p;  // 'e'
  int exponent = 0;
  std::from_chars(*p == '+' ? p + 1 : p, sci_end, exponent);

  // CPython's repr layout (format_float_short with 'r'): the point goes after `point`
  // digits; exponent form when that is below -3 or above 16.
  char text[40];
  char* q = text;
  if (negative) *q++ = '-';
  const int point = exponent + 1;
  if (exponent < -4 || exponent >= 16) {
    *q++ = digits[0];
    if (digit_count > 1) {
      *q++ = '.';
      q = std::copy(digits + 1, digits + digit_count, q);
    }
    *q++ = 'e';
    *q++ = exponent < 0 ? '-' : '+';
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) *q++ = '0';
    q = std::to_chars(q, text + sizeof text, magnitude).ptr;
  } else if (point <= 0) {
    *q++ = '0';
    *q++ = '.';
    q = std::fill_n(q, -point, '0');
    q = std::copy(digits, digits + digit_count, q);
  } else if (point < digit_count) {
    q = std::copy(digits, digits + point, q);
    *q++ = '.';
    q = std::copy(digits + point, digits + digit_count, q);
  } else {
    q = std::copy(digits, digits + digit_count, q);
    q = std::fill_n(q, point - digit_count, '0');
    *q++ = '.';
    *q++ = '0';
  }
  out.append(text, static_cast<std::size_t>(q - text));
}

void append_python_json(const Json& value, std::string& out) {
  append_json<PrettyWriter, true>(value, out);
}

std::string encode_python_json(const Json& value) {
  std::string out;
  append_python_json(value, out);
  return out;
}

std::string encode_compact_json(const Json& value) {
  std::string out;
  append_json<CompactWriter, false>(value, out);
  return out;
}

std::string encode_plain_json(const Json& value) {
  std::string out;
  append_json<PrettyWriter, false>(value, out);
  return out;
}

}  // namespace hpfreeze
