// Python's string escaping and float repr (python_writer.h).
#include "json/python_writer.h"

#include <array>
#include <charconv>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hpfreeze::pyjson {
namespace {

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

}  // namespace

// Strings shorter than this are first tried as plain bytes, one table lookup per byte:
// most of the meta's strings are short (axis names, placements, many keys), and for them
// the block scan's setup cost more than the scan.
constexpr std::size_t kShortString = 16;

void write_string(OutputBuffer& out, std::string_view utf8) {
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const auto* const end = p + utf8.size();
  if (utf8.size() < kShortString) {
    char* q = out.reserve(kShortString + 2);
    char special = 0;
    for (std::size_t i = 0; i < utf8.size(); ++i) {
      special |= kEscape[p[i]];
      q[i + 1] = static_cast<char>(p[i]);
    }
    if (special == kCopy) {
      q[0] = '"';
      q[utf8.size() + 1] = '"';
      out.commit(q + utf8.size() + 2);
      return;
    }
  }
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

}  // namespace hpfreeze::pyjson
