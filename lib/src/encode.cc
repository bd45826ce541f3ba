#include "hpfreeze/encode.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "huge_pages.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hpfreeze {
namespace {

// Appends into a std::string through a raw cursor: callers reserve room for a whole token,
// write it through the returned pointer and commit the end. While encoding, the string is
// resized ahead of the cursor (zero-filled, since std::string has no uninitialized growth
// before C++23); the destructor trims it to the bytes written. Also a RapidJSON output
// stream (Ch, Put, Flush).
class OutputBuffer {
 public:
  using Ch = char;

  explicit OutputBuffer(std::string& out) : out_(out), start_(out.size()), size_(out.size()) {}
  ~OutputBuffer() { out_.resize(size_); }
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  char* reserve(std::size_t n) {
    if (out_.size() - size_ < n) grow(n);
    return out_.data() + size_;
  }
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - out_.data()); }
  void put_reserved(char c) { out_[size_++] = c; }

  void Put(char c) {
    reserve(1);
    put_reserved(c);
  }
  void Flush() {}

 private:
  // Adds as much room again as this buffer has written so far, up to kMaxGrowth: amortized
  // O(1) per byte (std::string reallocates geometrically), and the zero-filled room not yet
  // written, which counts in the peak memory, stays small.
  // Never beyond the capacity reserved up front while the request fits in it: reallocating
  // would copy everything written so far and double the memory.
  void grow(std::size_t n) {
    std::size_t size = size_ + n + std::min(size_ - start_, kMaxGrowth);
    if (size > out_.capacity() && size_ + n <= out_.capacity()) size = out_.capacity();
    out_.resize(size);
  }

  static constexpr std::size_t kMaxGrowth = std::size_t{1} << 20;

  std::string& out_;
  std::size_t start_;
  std::size_t size_;
};

// RapidJSON's stream hooks (found by argument-dependent lookup), so that indentation and
// literals are written in bulk instead of one checked Put() per byte.
void PutReserve(OutputBuffer& out, std::size_t n) { out.reserve(n); }
void PutUnsafe(OutputBuffer& out, char c) { out.put_reserved(c); }
void PutN(OutputBuffer& out, char c, std::size_t n) {
  char* p = out.reserve(n);
  std::memset(p, c, n);
  out.commit(p + n);
}

// What the escaper does with a byte: copy it (kCopy), write a two-character escape (the
// table holds the letter after '\'), write \u00XX (kHex), or decode UTF-8 (kUtf8).
constexpr char kCopy = 0;
constexpr char kHex = 'u';
constexpr char kUtf8 = 'x';

constexpr std::array<char, 256> make_escape_table() {
  std::array<char, 256> table{};
  for (std::size_t c = 0; c < 0x20; ++c) table[c] = kHex;
  table['\b'] = 'b';
  table['\f'] = 'f';
  table['\n'] = 'n';
  table['\r'] = 'r';
  table['\t'] = 't';
  table['"'] = '"';
  table['\\'] = '\\';
  table[0x7F] = kHex;
  for (std::size_t c = 0x80; c < 0x100; ++c) table[c] = kUtf8;
  return table;
}
constexpr std::array<char, 256> kEscape = make_escape_table();

// Worst case output per input byte: a control byte or an invalid byte becomes \uXXXX.
constexpr std::size_t kMaxEscapedPerByte = 6;
// Long strings are escaped in pieces so that the reserved room stays small.
constexpr std::size_t kStringChunk = 4096;
// A UTF-8 sequence starting before a chunk's end may run 3 bytes past it.
constexpr std::size_t kChunkSlack = 3 * kMaxEscapedPerByte;

// Nonzero when one of the 8 bytes needs escaping (< 0x20, '"', '\\', >= 0x7F). Borrows and
// carries only ever flag bytes above a truly flagged one, so the lowest set bit marks the
// first such byte in memory order on a little-endian machine.
constexpr std::uint64_t special_bytes(std::uint64_t x) {
  constexpr std::uint64_t k01 = 0x0101010101010101u;
  constexpr std::uint64_t k80 = 0x8080808080808080u;
  const std::uint64_t quote = x ^ (k01 * '"');
  const std::uint64_t backslash = x ^ (k01 * '\\');
  return (((x - k01 * 0x20) & ~x) | ((x + k01) | x) | ((quote - k01) & ~quote) |
          ((backslash - k01) & ~backslash)) &
         k80;
}

// Three-way comparison as unsigned bytes, which on UTF-8 is code point order (Python's
// sort_keys). Same result as string_view::compare, inlined: keys are short and the call
// to memcmp was a large share of encoding time.
int compare_bytes(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x;
      std::uint64_t y;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
  }
  for (; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

char* write_u_escape(char* q, std::uint32_t unit) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  q[0] = '\\';
  q[1] = 'u';
  q[2] = kHexDigits[(unit >> 12) & 0xF];
  q[3] = kHexDigits[(unit >> 8) & 0xF];
  q[4] = kHexDigits[(unit >> 4) & 0xF];
  q[5] = kHexDigits[unit & 0xF];
  return q + 6;
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

// The next min(n, 8) bytes at p as one little-endian word, padded with plain bytes ('a').
// Tails are gathered with whole loads, not with a variable-length memcpy into memory: the
// word read back from that copy waited on a failed store-to-load forwarding, which was
// most of the escaper's time on short keys.
std::uint64_t load_block(const unsigned char* p, std::size_t n) {
  std::uint64_t word;
  if (n >= 8) {
    std::memcpy(&word, p, 8);
    return word;
  }
  if (n >= 4) {
    std::uint32_t low;
    std::uint32_t high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + n - 4, 4);
    word = low | (std::uint64_t{high} << (8 * (n - 4)));  // overlapping bytes agree
  } else if (n > 0) {
    word = std::uint64_t{p[0]} | (std::uint64_t{p[n / 2]} << (8 * (n / 2))) |
           (std::uint64_t{p[n - 1]} << (8 * (n - 1)));
  } else {
    word = 0;
  }
  const std::uint64_t mask = (std::uint64_t{1} << (8 * n)) - 1;
  return (word & mask) | (0x6161'6161'6161'6161u & ~mask);
}

// Copies the plain bytes from p on to q, advancing both, and returns whether it stopped
// at a byte to escape (false: it reached `stop`). Storing whole blocks before knowing how
// many of their bytes are plain is safe: q has room for kMaxEscapedPerByte bytes per input
// byte plus kChunkSlack. Sixteen bytes at a time where SSE2 is there (every x86-64), then
// eight, then a tail padded with plain bytes.
bool skip_plain(const unsigned char*& p, const unsigned char* stop, char*& q) {
  std::uint64_t special = 0;
#if defined(__SSE2__)
  while (stop - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), v);
    // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also catches them.
    const __m128i flagged = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                                      _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F))),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(flagged));
    if (mask != 0) {
      const auto plain = static_cast<std::size_t>(std::countr_zero(mask));
      p += plain;
      q += plain;
      return true;
    }
    p += 16;
    q += 16;
  }
#endif
  while (stop - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    std::memcpy(q, &word, 8);
    special = special_bytes(word);
    if (special != 0) break;
    p += 8;
    q += 8;
  }
  if (special == 0) {
    if (p == stop) return false;
    const auto left = static_cast<std::size_t>(stop - p);
    const std::uint64_t block = load_block(p, left);
    std::memcpy(q, &block, 8);
    special = special_bytes(block);
    if (special == 0) {
      p += left;
      q += left;
      return false;
    }
  }
  // Bytes below the first special one in the word are plain (and already stored).
  const auto plain = static_cast<std::size_t>(std::countr_zero(special)) / 8;
  p += plain;
  q += plain;
  return true;
}

// Escapes the bytes from p up to `stop` into q (a sequence starting before `stop` may
// extend to `end`); q needs kMaxEscapedPerByte bytes of room per byte consumed. Advances
// p and q.
void escape_bytes(const unsigned char*& p, const unsigned char* stop, const unsigned char* end,
                  char*& q) {
  while (p < stop) {
    if constexpr (std::endian::native == std::endian::little) {
      if (!skip_plain(p, stop, q)) return;
    }
    const char action = kEscape[*p];
    if (action == kCopy) {
      *q++ = static_cast<char>(*p++);
    } else if (action == kHex) {
      q = write_u_escape(q, *p++);
    } else if (action != kUtf8) {
      *q++ = '\\';
      *q++ = action;
      ++p;
    } else {
      std::uint32_t cp = 0;
      const std::size_t length = decode_utf8(p, end, cp);
      if (length == 0) {
        q = write_u_escape(q, 0xFFFD);
        ++p;
      } else if (cp < 0x10000) {
        q = write_u_escape(q, cp);
        p += length;
      } else {
        cp -= 0x10000;
        q = write_u_escape(q, 0xD800 + (cp >> 10));
        q = write_u_escape(q, 0xDC00 + (cp & 0x3FF));
        p += length;
      }
    }
  }
}

void write_string(OutputBuffer& out, std::string_view utf8) {
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const auto* const end = p + utf8.size();
  // Room for one chunk, its slack and both quotes.
  const auto room = [&] {
    return std::min(static_cast<std::size_t>(end - p), kStringChunk) * kMaxEscapedPerByte +
           kChunkSlack + 2;
  };
  char* q = out.reserve(room());
  *q++ = '"';
  for (;;) {
    const auto* const stop = p + std::min(static_cast<std::size_t>(end - p), kStringChunk);
    escape_bytes(p, stop, end, q);
    if (p >= end) break;
    out.commit(q);
    q = out.reserve(room());
  }
  *q++ = '"';
  out.commit(q);
}

// Longest repr: sign, 17 digits, point, 'e', exponent sign, 3 digits.
constexpr std::size_t kMaxFloatLength = 32;

char* write_float(char* out, double d) {
  if (std::isnan(d)) return std::copy_n("NaN", 3, out);
  if (std::isinf(d))
    return d > 0 ? std::copy_n("Infinity", 8, out) : std::copy_n("-Infinity", 9, out);

  // Shortest round-trip digits in scientific form: [-]D[.DDD]e(+|-)XX[X].
  char sci[kMaxFloatLength];
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

  // CPython's repr layout (format_float_short, mode 'r'): exponent form when the decimal
  // exponent is below -4 or at least 16, otherwise positional with at least one digit on
  // each side of the point.
  char* q = out;
  if (negative) *q++ = '-';
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
    return std::to_chars(q, q + 3, magnitude).ptr;
  }
  const int point = exponent + 1;  // digits before the decimal point
  if (point <= 0) {
    *q++ = '0';
    *q++ = '.';
    q = std::fill_n(q, -point, '0');
    return std::copy(digits, digits + digit_count, q);
  }
  if (point < digit_count) {
    q = std::copy(digits, digits + point, q);
    *q++ = '.';
    return std::copy(digits + point, digits + digit_count, q);
  }
  q = std::copy(digits, digits + digit_count, q);
  q = std::fill_n(q, point - digit_count, '0');
  *q++ = '.';
  *q++ = '0';
  return q;
}

using PrettyWriter = rapidjson::PrettyWriter<OutputBuffer>;
using CompactWriter = rapidjson::Writer<OutputBuffer>;

// RapidJSON writes the layout: separators, newlines, indentation, inline empty containers.
// It cannot spell keys, strings and doubles as Python does (uppercase \u hex, raw DEL,
// 1e-7, non-shortest digits), which is what RawValue() is for; RawValue would however
// copy each token byte by byte out of a scratch buffer, so this writes it in place
// instead, right after the same prefix RawValue emits (its only other work is a no-op
// Flush() at the root).
template <class Base>
class LayoutWriter : public Base {
 public:
  explicit LayoutWriter(OutputBuffer& out) : Base(out) {
    if constexpr (std::is_same_v<Base, PrettyWriter>) this->SetIndent(' ', 2);
  }

  // A string at a key position is taken as the key, as with RawValue(kStringType).
  void raw_prefix(rapidjson::Type type) {
    if constexpr (std::is_same_v<Base, PrettyWriter>) {
      this->PrettyPrefix(type);
    } else {
      this->Prefix(type);
    }
  }
};

template <class Writer, bool kSortKeys>
class TreeEncoder {
 public:
  explicit TreeEncoder(std::string& out) : out_(out), writer_(out_) {}

  void encode(const Json& value) { std::visit(*this, value.v); }

  void operator()(std::nullptr_t) { writer_.Null(); }
  void operator()(bool b) { writer_.Bool(b); }
  void operator()(std::int64_t i) { integer(i); }
  void operator()(std::uint64_t u) { integer(u); }
  void operator()(double d) {
    writer_.raw_prefix(rapidjson::kNumberType);
    out_.commit(write_float(out_.reserve(kMaxFloatLength), d));
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
    } else if (object.size() == 2) {
      // Two members the wrong way round (axes such as {"tp", "ep"}): common, and cheap.
      write_member(object[1]);
      write_member(object[0]);
    } else if (object.size() <= kSmallObject) {
      // A few members (axes such as {"cp", "tp", "ep"}, one per param): insertion sort on
      // the stack, stable like the general path.
      std::array<const JsonMember*, kSmallObject> order;
      for (std::size_t i = 0; i < object.size(); ++i) {
        std::size_t j = i;
        for (; j > 0 && key_less(&object[i], order[j - 1]); --j) order[j] = order[j - 1];
        order[j] = &object[i];
      }
      for (std::size_t i = 0; i < object.size(); ++i) write_member(*order[i]);
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
  static constexpr std::size_t kSmallObject = 8;

  // Ties fall back to position so that duplicate keys keep insertion order.
  static bool key_less(const JsonMember* a, const JsonMember* b) {
    const int c = compare_bytes(a->key, b->key);
    return c < 0 || (c == 0 && std::less<>()(a, b));
  }

  static bool keys_in_order(const JsonObject& object) {
    for (std::size_t i = 1; i < object.size(); ++i) {
      if (compare_bytes(object[i].key, object[i - 1].key) < 0) return false;
    }
    return true;
  }

  void write_member(const JsonMember& member) {
    string(member.key);
    encode(member.value);
  }

  void string(std::string_view s) {
    writer_.raw_prefix(rapidjson::kStringType);
    write_string(out_, s);
  }

  template <class Integer>
  void integer(Integer value) {
    writer_.raw_prefix(rapidjson::kNumberType);
    char* p = out_.reserve(24);
    out_.commit(std::to_chars(p, p + 24, value).ptr);
  }

  OutputBuffer out_;
  LayoutWriter<Writer> writer_;
  std::vector<const JsonMember*> order_;
};

// Close to the encoded size (exact for ASCII text without escapes, numbers counted at
// their widest), so that the output is allocated once instead of growing by copies.
template <bool kPretty>
struct SizeEstimate {
  std::size_t depth = 0;

  // Separator, newline and indentation before each element of a non-empty container.
  [[nodiscard]] std::size_t per_element() const { return kPretty ? 2 + 2 * (depth + 1) : 1; }
  [[nodiscard]] std::size_t closing() const { return kPretty ? 1 + 2 * depth : 0; }

  std::size_t operator()(std::nullptr_t) const { return 4; }
  std::size_t operator()(bool) const { return 5; }
  std::size_t operator()(std::int64_t) const { return 20; }
  std::size_t operator()(std::uint64_t) const { return 20; }
  std::size_t operator()(double) const { return 24; }
  std::size_t operator()(std::string_view s) const { return s.size() + 2; }
  std::size_t operator()(const JsonArray& array) {
    std::size_t size = 2 + closing() + array.size() * per_element();
    ++depth;
    for (const Json& element : array) size += std::visit(*this, element.v);
    --depth;
    return size;
  }
  std::size_t operator()(const JsonObject& object) {
    std::size_t size = 2 + closing() + object.size() * (per_element() + (kPretty ? 4 : 3));
    ++depth;
    for (const JsonMember& member : object) {
      size += member.key.size() + std::visit(*this, member.value.v);
    }
    --depth;
    return size;
  }
};

template <class Writer, bool kSortKeys>
void append_json(const Json& value, std::string& out) {
  SizeEstimate<std::is_same_v<Writer, PrettyWriter>> estimate;
  // Plus the room the last token reserves beyond its own bytes (worst-case escaping).
  out.reserve(out.size() + std::visit(estimate, value.v) + kStringChunk * kMaxEscapedPerByte +
              kChunkSlack + kMaxFloatLength + 64);
  advise_huge_pages(out);
  TreeEncoder<Writer, kSortKeys> encoder(out);
  encoder.encode(value);
}

}  // namespace

void append_python_string(std::string& out, std::string_view utf8) {
  OutputBuffer buffer(out);
  write_string(buffer, utf8);
}

void append_python_float(std::string& out, double d) {
  char text[kMaxFloatLength];
  out.append(text, write_float(text, d));
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
