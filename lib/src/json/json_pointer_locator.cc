// Where the values of JSON Pointers start in a streamed JSON text (json_pointer_locator.h).
#include "json/json_pointer_locator.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>

namespace hpfreeze {
namespace {

// The reference tokens of an RFC 6901 pointer, "~1" and "~0" undone; nullopt for a text
// that is no pointer (it must start with '/' unless empty). A token views the pointer itself
// unless it had an escape: then it views its decoded copy, kept in `decoded`.
std::optional<std::vector<std::string_view>> pointer_tokens(std::string_view pointer,
                                                            std::deque<std::string>& decoded) {
  std::vector<std::string_view> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return std::nullopt;
  for (std::size_t at = 1;;) {
    const std::size_t slash = std::min(pointer.find('/', at), pointer.size());
    std::string_view token = pointer.substr(at, slash - at);
    if (token.find('~') != std::string_view::npos) {
      std::string& plain = decoded.emplace_back();
      for (std::size_t i = 0; i < token.size(); ++i) {
        if (token[i] == '~' && i + 1 < token.size() &&
            (token[i + 1] == '0' || token[i + 1] == '1')) {
          plain += token[++i] == '0' ? '~' : '/';
        } else {
          plain += token[i];
        }
      }
      token = plain;
    }
    tokens.push_back(token);
    if (slash == pointer.size()) return tokens;
    at = slash + 1;
  }
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | code >> 6);
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | code >> 12);
    out += static_cast<char>(0x80 | (code >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | code >> 18);
    out += static_cast<char>(0x80 | (code >> 12 & 0x3f));
    out += static_cast<char>(0x80 | (code >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

int hex_digit(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A recursive descent along the pointers' paths only: every other value is skipped by a
// loop that counts brackets, so the recursion is no deeper than the longest pointer. The
// targets are sorted by their tokens, so the ones still looked for inside a container are
// one run of them, and the run a member leads into is found by a binary search on the
// member's name: one pass over the text, each member costing a search of the pointers
// inside its container (never a comparison with each). Every function returns false to
// stop the scan: at the end of the text, where it stops being JSON, or once every pointer
// is found.
class PointerScanner {
 public:
  // `targets` sorted and without repeats.
  PointerScanner(const TextPieces& pieces, std::vector<std::vector<std::string_view>> targets)
      : pieces_(pieces),
        targets_(std::move(targets)),
        found_(targets_.size()),
        missing_(targets_.size()) {}

  std::vector<std::optional<TextPosition>> run() && {
    if (!targets_.empty()) value(0, targets_.size(), 0);
    return std::move(found_);
  }

 private:
  int peek() {
    if (at_ == piece_.size()) {
      if (ended_) return -1;
      piece_ = pieces_();
      at_ = 0;
      if (piece_.empty()) {
        ended_ = true;
        return -1;
      }
    }
    return static_cast<unsigned char>(piece_[at_]);
  }
  // After a peek() that found a byte.
  void advance() {
    if (piece_[at_++] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
  }
  void skip_whitespace() {
    for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek()) advance();
  }
  bool take(char c) {
    if (peek() != c) return false;
    advance();
    return true;
  }

  // The value the targets [lo, hi) go through, all of them alike in their first `depth`
  // tokens; the one with no more tokens, if any, sorts first and names this value.
  bool value(std::size_t lo, std::size_t hi, std::size_t depth) {
    skip_whitespace();
    if (peek() < 0) return false;
    if (lo < hi && targets_[lo].size() == depth) {
      if (!found_[lo]) {  // a key named twice counts where it is named first
        found_[lo] = TextPosition{line_, column_};
        if (--missing_ == 0) return false;
      }
      ++lo;
    }
    if (lo == hi) return skip_value();
    if (peek() == '{') return object(lo, hi, depth);
    if (peek() == '[') return array(lo, hi, depth);
    return skip_value();  // a scalar holds no member: the deeper pointers name nothing
  }

  bool object(std::size_t lo, std::size_t hi, std::size_t depth) {
    advance();
    skip_whitespace();
    if (take('}')) return true;
    std::string key;
    for (;;) {
      skip_whitespace();
      if (peek() != '"' || !string(&key)) return false;
      skip_whitespace();
      if (!take(':')) return false;
      if (!member(lo, hi, depth, key)) return false;
      skip_whitespace();
      if (take(',')) continue;
      return take('}');
    }
  }

  bool array(std::size_t lo, std::size_t hi, std::size_t depth) {
    advance();
    skip_whitespace();
    if (take(']')) return true;
    for (std::size_t index = 0;; ++index) {
      if (!member(lo, hi, depth, std::to_string(index))) return false;
      skip_whitespace();
      if (take(',')) continue;
      return take(']');
    }
  }

  // The value of `token` in the container at `depth`: followed when targets go through it.
  bool member(std::size_t lo, std::size_t hi, std::size_t depth, const std::string& token) {
    const auto first = targets_.begin() + static_cast<std::ptrdiff_t>(lo);
    const auto last = targets_.begin() + static_cast<std::ptrdiff_t>(hi);
    const auto [from, to] = std::equal_range(first, last, token, TokenAt{depth});
    if (from == to) return skip_value();
    return value(static_cast<std::size_t>(from - targets_.begin()),
                 static_cast<std::size_t>(to - targets_.begin()), depth + 1);
  }

  // Orders targets (all longer than `depth`) by their token at `depth`, against a name.
  struct TokenAt {
    std::size_t depth;
    bool operator()(const std::vector<std::string_view>& target, std::string_view token) const {
      return target[depth] < token;
    }
    bool operator()(std::string_view token, const std::vector<std::string_view>& target) const {
      return token < target[depth];
    }
  };

  bool skip_value() {
    skip_whitespace();
    const int first = peek();
    if (first == '"') return string(nullptr);
    if (first != '{' && first != '[') {  // a number or a literal
      bool any = false;
      for (int c = peek(); (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' ||
                           c == '+' || c == '.' || c == 'E';
           c = peek()) {
        advance();
        any = true;
      }
      return any;
    }
    std::size_t open = 0;
    for (int c = peek(); c >= 0; c = peek()) {
      if (c == '"') {
        if (!string(nullptr)) return false;
        continue;
      }
      advance();
      if (c == '{' || c == '[') {
        ++open;
      } else if ((c == '}' || c == ']') && --open == 0) {
        return true;
      }
    }
    return false;
  }

  // A string from its opening quote; its decoded text into `out` when given.
  bool string(std::string* out) {
    advance();
    if (out != nullptr) out->clear();
    for (;;) {
      const int c = peek();
      if (c < 0x20) return false;  // the end, or a control byte no JSON string holds
      advance();
      if (c == '"') return true;
      if (c != '\\') {
        if (out != nullptr) *out += static_cast<char>(c);
        continue;
      }
      const int e = peek();
      if (e < 0) return false;
      advance();
      if (out == nullptr) continue;  // skipped: the escape's other bytes are plain
      if (e != 'u') {
        static constexpr std::string_view kFrom = "\"\\/bfnrt";
        static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
        const std::size_t k = kFrom.find(static_cast<char>(e));
        if (k == std::string_view::npos) return false;
        *out += kTo[k];
        continue;
      }
      std::uint32_t code = 0;
      if (!hex4(code)) return false;
      if (code >= 0xd800 && code < 0xdc00) {
        std::uint32_t low = 0;
        if (!take('\\') || !take('u') || !hex4(low) || low < 0xdc00 || low > 0xdfff) return false;
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
      }
      append_utf8(*out, code);
    }
  }

  bool hex4(std::uint32_t& code) {
    for (int i = 0; i < 4; ++i) {
      const int digit = hex_digit(peek());
      if (digit < 0) return false;
      advance();
      code = code << 4 | static_cast<std::uint32_t>(digit);
    }
    return true;
  }

  const TextPieces& pieces_;
  std::string_view piece_;
  std::size_t at_ = 0;
  bool ended_ = false;
  std::size_t line_ = 1;
  std::size_t column_ = 1;
  std::vector<std::vector<std::string_view>> targets_;
  std::vector<std::optional<TextPosition>> found_;
  std::size_t missing_;
};

}  // namespace

std::vector<std::optional<TextPosition>> locate_pointers(
    const TextPieces& pieces, std::span<const std::string_view> pointers) {
  // Each distinct path is looked for once: the pointers' tokens, sorted, without repeats
  // ("/~" and "/~0" name one path), each pointer knowing its own.
  std::deque<std::string> decoded;
  std::vector<std::pair<std::vector<std::string_view>, std::size_t>> tokens;
  tokens.reserve(pointers.size());
  for (std::size_t i = 0; i < pointers.size(); ++i) {
    if (std::optional<std::vector<std::string_view>> t = pointer_tokens(pointers[i], decoded)) {
      tokens.emplace_back(std::move(*t), i);
    }
  }
  std::sort(tokens.begin(), tokens.end());
  std::vector<std::vector<std::string_view>> targets;
  std::vector<std::size_t> target_of(pointers.size(), SIZE_MAX);
  for (auto& [path, pointer] : tokens) {
    if (targets.empty() || targets.back() != path) targets.push_back(std::move(path));
    target_of[pointer] = targets.size() - 1;
  }
  const std::vector<std::optional<TextPosition>> found =
      PointerScanner(pieces, std::move(targets)).run();
  std::vector<std::optional<TextPosition>> out;
  out.reserve(pointers.size());
  for (const std::size_t target : target_of) {
    out.push_back(target == SIZE_MAX ? std::nullopt : found[target]);
  }
  return out;
}

std::vector<std::optional<TextPosition>> locate_pointers(const TextPieces& pieces,
                                                         std::span<const std::string> pointers) {
  const std::vector<std::string_view> views(pointers.begin(), pointers.end());
  return locate_pointers(pieces, std::span<const std::string_view>(views));
}

}  // namespace hpfreeze
