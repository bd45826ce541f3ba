// The strict JSON recogniser behind the line:column of every syntax error.
#include "json/json_syntax_locator.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <system_error>
#include <vector>

#include "json/json_document.h"

namespace hpfreeze {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
unsigned hex_value(char c) {
  if (is_digit(c)) return static_cast<unsigned>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
  return static_cast<unsigned>(c - 'A' + 10);
}

std::string hex_byte(char c) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  const auto b = static_cast<unsigned char>(c);
  return {'0', 'x', kDigits[b >> 4], kDigits[b & 0xf]};
}

struct SyntaxError {
  std::size_t offset;
  std::string message;
};

// Strict JSON recogniser run only after simdjson rejected the input, to say where and why.
// It reports the first byte at which the text stops being the start of any valid document
// (the end offset for truncated input), except that a number out of range is reported at
// its first byte and a lone surrogate escape at its backslash. Iterative, so deep nesting
// cannot overflow the stack.
class SyntaxScanner {
 public:
  explicit SyntaxScanner(std::string_view text) : s_(text) {}

  std::optional<SyntaxError> find_first_error() {
    enum class State { kValue, kObjectKey, kAfterValue };
    std::vector<char> open;  // '{' or '[' per enclosing container
    State state = State::kValue;
    for (;;) {
      switch (state) {
        case State::kValue: {
          skip_whitespace();
          if (at_end()) return fail_at_end();
          const char c = s_[pos_];
          if (c == '{' || c == '[') {
            if (open.size() == kMaxJsonDepth) {
              return fail(pos_, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
            }
            open.push_back(c);
            ++pos_;
            skip_whitespace();
            if (at_end()) return fail_at_end();
            const char closer = c == '{' ? '}' : ']';
            if (s_[pos_] == closer) {
              open.pop_back();
              ++pos_;
              state = State::kAfterValue;
            } else if (c == '{') {
              if (s_[pos_] != '"') return fail(pos_, "expected a string key or '}'");
              state = State::kObjectKey;
            }
          } else if (c == '"') {
            if (!scan_string()) return error_;
            state = State::kAfterValue;
          } else if (c == '-' || is_digit(c)) {
            if (!scan_number()) return error_;
            state = State::kAfterValue;
          } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            if (!scan_literal()) return error_;
            state = State::kAfterValue;
          } else {
            return fail(pos_, "expected a value");
          }
          break;
        }
        case State::kObjectKey: {
          if (!scan_string()) return error_;
          skip_whitespace();
          if (at_end()) return fail_at_end();
          if (s_[pos_] != ':') return fail(pos_, "expected ':' after object key");
          ++pos_;
          state = State::kValue;
          break;
        }
        case State::kAfterValue: {
          skip_whitespace();
          if (open.empty()) {
            if (at_end()) return std::nullopt;
            return fail(pos_, "trailing content after the JSON document");
          }
          if (at_end()) return fail_at_end();
          const char c = s_[pos_];
          if (open.back() == '[') {
            if (c == ',') {
              state = State::kValue;
            } else if (c == ']') {
              open.pop_back();
            } else {
              return fail(pos_, "expected ',' or ']' after array element");
            }
            ++pos_;
          } else if (c == ',') {
            ++pos_;
            skip_whitespace();
            if (at_end()) return fail_at_end();
            if (s_[pos_] != '"') return fail(pos_, "expected a string key");
            state = State::kObjectKey;
          } else if (c == '}') {
            open.pop_back();
            ++pos_;
          } else {
            return fail(pos_, "expected ',' or '}' after object member");
          }
          break;
        }
      }
    }
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  void skip_whitespace() {
    while (!at_end() && is_json_whitespace(s_[pos_])) ++pos_;
  }
  std::optional<SyntaxError> fail(std::size_t offset, std::string message) {
    error_ = SyntaxError{offset, std::move(message)};
    return error_;
  }
  std::optional<SyntaxError> fail_at_end() { return fail(s_.size(), "unexpected end of input"); }
  // Variants for the scan_* helpers, which report failure as false.
  bool reject(std::size_t offset, std::string message) {
    fail(offset, std::move(message));
    return false;
  }
  bool reject_at_end() {
    fail_at_end();
    return false;
  }

  // true, false or null; any other word (NaN, Infinity, True) fails at its first byte.
  bool scan_literal() {
    const char c = s_[pos_];
    const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
    for (std::size_t i = 0; i < word.size(); ++i, ++pos_) {
      if (at_end()) return reject_at_end();
      if (s_[pos_] != word[i]) return reject(pos_, "invalid literal");
    }
    return true;
  }

  // One or more digits.
  bool scan_digits() {
    if (at_end()) return reject_at_end();
    if (!is_digit(s_[pos_])) return reject(pos_, "invalid number");
    while (!at_end() && is_digit(s_[pos_])) ++pos_;
    return true;
  }

  bool scan_number() {
    const std::size_t start = pos_;
    const bool negative = s_[pos_] == '-';
    if (negative) ++pos_;
    const std::size_t int_begin = pos_;
    if (!at_end() && s_[pos_] == '0') {
      ++pos_;
      if (!at_end() && is_digit(s_[pos_])) return reject(pos_, "invalid number");
    } else if (!scan_digits()) {
      return false;
    }
    const std::size_t int_end = pos_;
    bool is_float = false;
    if (!at_end() && s_[pos_] == '.') {
      is_float = true;
      ++pos_;
      if (!scan_digits()) return false;
    }
    const std::size_t frac_end = pos_;
    std::int64_t exponent = 0;
    if (!at_end() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      bool negative_exponent = false;
      if (!at_end() && (s_[pos_] == '+' || s_[pos_] == '-')) {
        negative_exponent = s_[pos_] == '-';
        ++pos_;
      }
      const std::size_t exp_begin = pos_;
      if (!scan_digits()) return false;
      for (std::size_t i = exp_begin; i < pos_; ++i) {
        // Saturate: any exponent beyond a billion over- or underflows whatever the digits.
        exponent = std::min<std::int64_t>(exponent * 10 + (s_[i] - '0'), 1'000'000'000);
      }
      if (negative_exponent) exponent = -exponent;
    }
    if (!is_float) {
      if (!integer_in_range(negative, s_.substr(int_begin, int_end - int_begin))) {
        return reject(start, "integer out of range [-2^63, 2^64-1]");
      }
    } else if (float_overflows(start, int_begin, int_end, frac_end, exponent)) {
      return reject(start, "number out of range");
    }
    return true;
  }

  static bool integer_in_range(bool negative, std::string_view digits) {
    // No leading zeros here, so equal lengths compare like the numbers they spell.
    const std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
    return digits.size() < limit.size() || (digits.size() == limit.size() && digits <= limit);
  }

  // True when the number rounds to infinity (simdjson rejects it); underflow to zero is
  // accepted, as simdjson and Python do.
  bool float_overflows(std::size_t start, std::size_t int_begin, std::size_t int_end,
                       std::size_t frac_end, std::int64_t exponent) const {
    double value = 0;
    const auto result = std::from_chars(s_.data() + start, s_.data() + pos_, value);
    if (result.ec != std::errc::result_out_of_range) return false;
    // Out of range either way: the decimal exponent of the leading significant digit tells
    // overflow from underflow.
    for (std::size_t i = int_begin; i < int_end; ++i) {
      if (s_[i] != '0') return static_cast<std::int64_t>(int_end - i) - 1 + exponent > 0;
    }
    for (std::size_t i = int_end + 1; i < frac_end; ++i) {
      if (s_[i] != '0') return -static_cast<std::int64_t>(i - int_end) + exponent > 0;
    }
    return false;
  }

  bool scan_string() {
    ++pos_;  // opening quote
    for (;;) {
      if (at_end()) return reject_at_end();
      const char c = s_[pos_];
      const auto b = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (!scan_escape()) return false;
      } else if (b < 0x20) {
        return reject(pos_, "unescaped control character " + hex_byte(c) + " in string");
      } else if (b < 0x80) {
        ++pos_;
      } else if (!scan_utf8_sequence()) {
        return false;
      }
    }
  }

  bool scan_escape() {
    const std::size_t backslash = pos_;
    ++pos_;
    if (at_end()) return reject_at_end();
    const char c = s_[pos_];
    if (c != 'u') {
      if (std::string_view("\"\\/bfnrt").find(c) == std::string_view::npos) {
        return reject(pos_, "invalid escape");
      }
      ++pos_;
      return true;
    }
    ++pos_;
    unsigned code = 0;
    if (!scan_hex4(code)) return false;
    if (code >= 0xdc00 && code <= 0xdfff) return reject_lone_surrogate(backslash);
    if (code < 0xd800 || code > 0xdbff) return true;
    // A high surrogate must be followed at once by a low surrogate escape: \uDC00..\uDFFF.
    constexpr std::string_view kLowSurrogateStart = "\\u";
    for (const char expected : kLowSurrogateStart) {
      if (at_end()) return reject_at_end();
      if (s_[pos_] != expected) return reject_lone_surrogate(backslash);
      ++pos_;
    }
    if (at_end()) return reject_at_end();
    if (s_[pos_] != 'd' && s_[pos_] != 'D') return reject_lone_surrogate(backslash);
    ++pos_;
    if (at_end()) return reject_at_end();
    const char third = s_[pos_];
    if (!is_hex_digit(third) || hex_value(third) < 0xc) return reject_lone_surrogate(backslash);
    ++pos_;
    for (int i = 0; i < 2; ++i, ++pos_) {
      if (at_end()) return reject_at_end();
      if (!is_hex_digit(s_[pos_])) return reject(pos_, "invalid escape");
    }
    return true;
  }

  bool scan_hex4(unsigned& code) {
    for (int i = 0; i < 4; ++i, ++pos_) {
      if (at_end()) return reject_at_end();
      if (!is_hex_digit(s_[pos_])) return reject(pos_, "invalid escape");
      code = code * 16 + hex_value(s_[pos_]);
    }
    return true;
  }

  bool reject_lone_surrogate(std::size_t backslash) {
    return reject(backslash, "lone surrogate escape " + std::string(s_.substr(backslash, 6)));
  }

  // One multi-byte UTF-8 character (Unicode 15 table 3-7: no overlongs, surrogates or
  // code points above U+10FFFF).
  bool scan_utf8_sequence() {
    const auto lead = static_cast<unsigned char>(s_[pos_]);
    int continuation = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) {
      continuation = 1;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      continuation = 2;
      if (lead == 0xe0) low = 0xa0;
      if (lead == 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      continuation = 3;
      if (lead == 0xf0) low = 0x90;
      if (lead == 0xf4) high = 0x8f;
    } else {
      return reject(pos_, "invalid UTF-8 byte " + hex_byte(s_[pos_]));
    }
    ++pos_;
    for (int i = 0; i < continuation; ++i, ++pos_) {
      if (at_end()) return reject_at_end();
      const auto b = static_cast<unsigned char>(s_[pos_]);
      if (b < 0x80 || b > 0xbf) {
        // Not a continuation byte at all (often the closing quote): the sequence stops short.
        return reject(pos_, "invalid UTF-8 byte " + hex_byte(s_[pos_]) +
                                ": the multi-byte sequence started by " +
                                hex_byte(static_cast<char>(lead)) + " is cut short");
      }
      if (b < low || b > high) return reject(pos_, "invalid UTF-8 byte " + hex_byte(s_[pos_]));
      low = 0x80;
      high = 0xbf;
    }
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::optional<SyntaxError> error_;
};

}  // namespace

Diagnostic syntax_error(const std::string& name, std::string_view bytes, std::size_t offset,
                        std::string message) {
  Diagnostic d = make_error(name, {}, std::move(message));
  const auto [line, column] = line_column(bytes, offset);
  d.line = line;
  d.column = column;
  return d;
}

// The input is known to be invalid: say where. `fallback` is the message for the case the
// scanner disagrees (which would be a bug in it), reported without a position.
Diagnostic locate_syntax_error(const std::string& name, std::string_view bytes,
                               std::string fallback) {
  if (auto syntax = SyntaxScanner(bytes).find_first_error()) {
    return syntax_error(name, bytes, syntax->offset, std::move(syntax->message));
  }
  return make_error(name, {}, std::move(fallback));
}

}  // namespace hpfreeze
