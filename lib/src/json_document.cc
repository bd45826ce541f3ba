#include "hpfreeze/json_document.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <system_error>
#include <vector>

#include "hpfreeze/huge_pages.h"
#include "hpfreeze/name_index.h"

namespace hpfreeze {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

bool is_json_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
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

Diagnostic syntax_error(const std::string& name, std::string_view bytes, std::size_t offset,
                        std::string message) {
  Diagnostic d = make_error(name, {}, std::move(message));
  const auto [line, column] = line_column(bytes, offset);
  d.line = line;
  d.column = column;
  return d;
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

// Inputs from this size on get huge pages for their DOM.
constexpr std::size_t kLargeDocument = std::size_t{4} << 20;

// A problem simdjson lets through.
struct DomProblem {
  enum class Kind { kDuplicateKey, kTooDeep };
  Kind kind;
  std::string pointer;   // duplicate key: of the repeated key's value
  std::string_view key;  // duplicate key
};

// Finds the first problem, in document order, that the DOM parse accepts: a key repeating an
// earlier key of the same object, or a container at nesting level kMaxJsonDepth + 1 (simdjson
// gets one more level than we allow because it counts a scalar in the innermost container as
// a level; only an empty container can get that deep). One iterative pass over the DOM:
// small objects compare keys pairwise, large ones use an open-addressing table, so a
// million-key object costs a million hash probes.
class DomChecker {
 public:
  std::optional<DomProblem> find(element root) {
    enter(root);
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.is_object) {
        if (frame.object_it == frame.object_end) {
          leave_object(frame);
          continue;
        }
        // The key travels in registers: reading it back from `frame` right after storing
        // it stalled on store-to-load forwarding.
        const std::string_view key = frame.object_it.key();
        frame.key = key;
        if (is_repeated(frame, key)) {
          return DomProblem{DomProblem::Kind::kDuplicateKey, current_pointer(), key};
        }
        keys_.push_back(key);
        const element value = frame.object_it.value();
        ++frame.object_it;
        // May reallocate stack_: `frame` is not used after this.
        if (!enter(value)) return DomProblem{DomProblem::Kind::kTooDeep, {}, {}};
      } else {
        if (frame.array_it == frame.array_end) {
          stack_.pop_back();
          continue;
        }
        const element value = *frame.array_it;
        ++frame.array_it;
        ++frame.index;
        if (!enter(value)) return DomProblem{DomProblem::Kind::kTooDeep, {}, {}};
      }
    }
    return std::nullopt;
  }

 private:
  static constexpr std::size_t kPairwiseLimit = 16;
  static constexpr std::size_t kNoTable = static_cast<std::size_t>(-1);
  // Keys hashed ahead of their insertion so that their slots are already being fetched: a
  // large table does not fit in cache and each probe would otherwise wait for memory.
  static constexpr std::size_t kLookahead = 16;

  struct Frame {
    simdjson::dom::object::iterator object_it;
    simdjson::dom::object::iterator object_end;
    simdjson::dom::array::iterator array_it;
    simdjson::dom::array::iterator array_end;
    std::string_view key;          // objects: key of the member being visited
    std::size_t index = 0;         // arrays: 1 + index of the element being visited
    std::size_t first_key = 0;     // objects: their keys so far are keys_[first_key..]
    std::size_t table = kNoTable;  // large objects: their table in tables_
    bool is_object = false;
  };

  // Slots hold (32 hash bits << 32) | (key number within the object + 1); 0 is empty.
  struct KeyTable {
    std::vector<std::uint64_t> slots;
    std::size_t used = 0;
    simdjson::dom::object::iterator ahead;  // next key to hash
    simdjson::dom::object::iterator end;
    std::array<std::uint64_t, kLookahead> hashes{};  // of key number n at [n % kLookahead]
    std::size_t hashed = 0;
  };

  // Pushes a frame for a non-empty container; false if `e` is a container nested too deep.
  bool enter(element e) {
    const element_type type = e.type();
    if (type != element_type::OBJECT && type != element_type::ARRAY) return true;
    if (stack_.size() == kMaxJsonDepth) return false;
    if (type == element_type::OBJECT) {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      Frame frame;
      frame.object_it = object.begin();
      frame.object_end = object.end();
      if (frame.object_it == frame.object_end) return true;
      frame.is_object = true;
      frame.first_key = keys_.size();
      // size() saturates at 2^24 - 1; the table grows past that if needed.
      if (object.size() > kPairwiseLimit) {
        frame.table = open_table(object);
        keys_.reserve(keys_.size() + object.size());
      }
      stack_.push_back(frame);
    } else {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      Frame frame;
      frame.array_it = array.begin();
      frame.array_end = array.end();
      // Leading scalars need no visit (shapes, name lists): skip them here, and the frame
      // altogether when nothing but scalars follows.
      for (; frame.array_it != frame.array_end; ++frame.array_it, ++frame.index) {
        const element_type item = (*frame.array_it).type();
        if (item == element_type::OBJECT || item == element_type::ARRAY) break;
      }
      if (frame.array_it == frame.array_end) return true;
      stack_.push_back(frame);
    }
    return true;
  }

  void leave_object(const Frame& frame) {
    keys_.resize(frame.first_key);
    if (frame.table != kNoTable) --open_tables_;
    stack_.pop_back();
  }

  std::size_t open_table(const simdjson::dom::object& object) {
    if (open_tables_ == tables_.size()) tables_.emplace_back();
    KeyTable& table = tables_[open_tables_];
    table.slots.assign(std::bit_ceil(object.size() * 2), 0);
    table.used = 0;
    table.ahead = object.begin();
    table.end = object.end();
    table.hashed = 0;
    while (table.hashed < kLookahead && table.ahead != table.end) hash_ahead(table);
    return open_tables_++;
  }

  static void hash_ahead(KeyTable& table) {
    const std::uint64_t hash = hash_name(table.ahead.key());
    table.hashes[table.hashed % kLookahead] = hash;
    __builtin_prefetch(&table.slots[static_cast<std::size_t>(hash) & (table.slots.size() - 1)]);
    ++table.hashed;
    ++table.ahead;
  }

  bool is_repeated(const Frame& frame, std::string_view key) {
    if (frame.table == kNoTable) {
      return std::find(keys_.begin() + static_cast<std::ptrdiff_t>(frame.first_key), keys_.end(),
                       key) != keys_.end();
    }
    KeyTable& table = tables_[frame.table];
    if ((table.used + 1) * 2 > table.slots.size()) grow(table, frame.first_key);
    const std::size_t number = keys_.size() - frame.first_key;
    const std::uint64_t hash = table.hashes[number % kLookahead];
    if (table.ahead != table.end) hash_ahead(table);  // overwrites the entry just read
    const std::uint64_t tag = hash & 0xffff'ffff'0000'0000u;
    const std::size_t mask = table.slots.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(hash) & mask;; i = (i + 1) & mask) {
      const std::uint64_t slot = table.slots[i];
      if (slot == 0) {
        table.slots[i] = tag | (number + 1);
        ++table.used;
        return false;
      }
      if ((slot & 0xffff'ffff'0000'0000u) == tag &&
          keys_[frame.first_key + (slot & 0xffff'ffffu) - 1] == key) {
        return true;
      }
    }
  }

  void grow(KeyTable& table, std::size_t first_key) {
    std::vector<std::uint64_t> old = std::move(table.slots);
    table.slots.assign(old.size() * 2, 0);
    const std::size_t mask = table.slots.size() - 1;
    for (const std::uint64_t slot : old) {
      if (slot == 0) continue;
      const std::string_view key = keys_[first_key + (slot & 0xffff'ffffu) - 1];
      std::size_t i = static_cast<std::size_t>(hash_name(key)) & mask;
      while (table.slots[i] != 0) i = (i + 1) & mask;
      table.slots[i] = slot;
    }
  }

  std::string current_pointer() const {
    std::string pointer;
    for (const Frame& frame : stack_) {
      if (frame.is_object) {
        append_pointer_token(pointer, frame.key);
      } else {
        append_pointer_token(pointer, std::to_string(frame.index - 1));
      }
    }
    return pointer;
  }

  std::vector<Frame> stack_;
  std::vector<std::string_view> keys_;  // keys seen so far in each open object, outermost first
  std::vector<KeyTable> tables_;        // reused; tables_[0..open_tables_) are in use
  std::size_t open_tables_ = 0;
};

// The input is known to be invalid: say where. `fallback` is the message for the case the
// scanner disagrees (which would be a bug in it), reported without a position.
Diagnostic locate_syntax_error(const std::string& name, std::string_view bytes,
                               std::string fallback) {
  if (auto syntax = SyntaxScanner(bytes).find_first_error()) {
    return syntax_error(name, bytes, syntax->offset, std::move(syntax->message));
  }
  return make_error(name, {}, std::move(fallback));
}

}  // namespace

std::pair<std::size_t, std::size_t> line_column(std::string_view bytes, std::size_t offset) {
  offset = std::min(offset, bytes.size());
  const std::string_view before = bytes.substr(0, offset);
  const auto line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const std::size_t last_newline = before.rfind('\n');
  const std::size_t line_start = last_newline == std::string_view::npos ? 0 : last_newline + 1;
  return {line, offset - line_start + 1};
}

Expected<JsonDocument> parse_json_document(std::string display_name, std::string bytes) {
  const std::size_t size = bytes.size();
  if (size > simdjson::SIMDJSON_MAXSIZE_BYTES) {
    return make_error(std::move(display_name), {}, "input larger than 4 GiB");
  }
  if (std::string_view(bytes).starts_with("\xEF\xBB\xBF")) {
    return syntax_error(display_name, bytes, 0, "byte-order mark is not allowed");
  }
  if (std::all_of(bytes.begin(), bytes.end(), is_json_whitespace)) {
    return syntax_error(display_name, bytes, size, "empty input");
  }

  // simdjson reads up to SIMDJSON_PADDING bytes past the end; reserve exactly (resize alone
  // may double a large buffer) and zero the padding so those reads see initialised memory.
  if (bytes.capacity() < size + simdjson::SIMDJSON_PADDING) {
    bytes.reserve(size + simdjson::SIMDJSON_PADDING);
  }
  bytes.resize(size + simdjson::SIMDJSON_PADDING);
  bytes.resize(size);

  auto parser = std::make_unique<simdjson::dom::parser>();
  // One level more than we allow: simdjson counts scalars as a level (see DomChecker).
  if (const auto error = parser->allocate(size, kMaxJsonDepth + 1); error) {
    return make_error(std::move(display_name), {}, simdjson::error_message(error));
  }
  // The parse fills the DOM's tape and string buffer at once: for large inputs they get
  // huge pages too (huge_pages.h), so the document is allocated here, before the parse
  // would. For `size` input bytes simdjson must hold at least size + 1 tape words and
  // 5 * size / 3 string bytes (its document::allocate says why): these ranges lie inside
  // its allocations.
  if (size >= kLargeDocument) {
    if (const auto error = parser->doc.allocate(size); error) {
      return make_error(std::move(display_name), {}, simdjson::error_message(error));
    }
    advise_huge_pages(parser->doc.tape.get(), (size + 1) * sizeof(std::uint64_t));
    advise_huge_pages(parser->doc.string_buf.get(), 5 * size / 3);
  }
  element root;
  if (const auto error = parser->parse(bytes.data(), size, false).get(root); error) {
    return locate_syntax_error(display_name, bytes, simdjson::error_message(error));
  }
  if (auto problem = DomChecker().find(root)) {
    if (problem->kind == DomProblem::Kind::kDuplicateKey) {
      return make_error(std::move(display_name), std::move(problem->pointer),
                        "duplicate key " + quote_for_diagnostic(problem->key));
    }
    return locate_syntax_error(display_name, bytes, "nesting too deep");
  }
  // Elements hold the address of the document they came from: none taken so far survives
  // this move (the JsonDocument takes its root from the moved document).
  auto document = std::make_unique<simdjson::dom::document>(std::move(parser->doc));
  return JsonDocument(std::move(display_name), std::move(bytes), std::move(document));
}

Json json_from_dom(element e) {
  switch (e.type()) {
    case element_type::ARRAY: {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      JsonArray out;
      out.reserve(array.size());
      for (const element item : array) out.push_back(json_from_dom(item));
      return Json(std::move(out));
    }
    case element_type::OBJECT: {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      JsonObject out;
      out.reserve(object.size());
      for (auto it = object.begin(); it != object.end(); ++it) {
        out.push_back(JsonMember{it.key(), json_from_dom(it.value())});
      }
      return Json(std::move(out));
    }
    case element_type::STRING:
      return Json(e.get_string().value_unsafe());
    case element_type::INT64:
      return Json(e.get_int64().value_unsafe());
    case element_type::UINT64:
      return Json(e.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return Json(e.get_double().value_unsafe());
    case element_type::BOOL:
      return Json(e.get_bool().value_unsafe());
    case element_type::NULL_VALUE:
      break;
  }
  return Json(nullptr);
}

std::string json_type_name(element e) {
  switch (e.type()) {
    case element_type::ARRAY:
      return "array";
    case element_type::OBJECT:
      return "object";
    case element_type::STRING:
      return "string";
    case element_type::INT64:
    case element_type::UINT64:
      return "integer";
    case element_type::DOUBLE:
      return "float";
    case element_type::BOOL:
      return "boolean";
    case element_type::NULL_VALUE:
      break;
  }
  return "null";
}

}  // namespace hpfreeze
