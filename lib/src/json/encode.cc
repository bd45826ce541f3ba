#include "json/encode.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "base/huge_pages.h"
#include "json/json_stream.h"
#include "json/python_writer.h"

namespace hpfreeze {
namespace {

using pyjson::OutputBuffer;
using pyjson::write_key;
using pyjson::write_newline;
using pyjson::write_raw;
using pyjson::write_string;

// The alternatives by position, for a switch instead of std::visit (whose dispatch through
// a table of function pointers was a large share of the encoders' time).
template <std::size_t I, class T>
constexpr bool kAlternativeIs = std::is_same_v<std::variant_alternative_t<I, Json::Value>, T>;
static_assert(kAlternativeIs<0, std::nullptr_t> && kAlternativeIs<1, bool> &&
              kAlternativeIs<2, std::int64_t> && kAlternativeIs<3, std::uint64_t> &&
              kAlternativeIs<4, double> && kAlternativeIs<5, std::string_view> &&
              kAlternativeIs<6, JsonArray> && kAlternativeIs<7, JsonObject>);

// Writes a tree in Python's indent=2 layout (separators "," and ": " at line ends, empty
// containers inline), keys sorted by code point or in insertion order.
template <bool kSortKeys>
class TreeEncoder {
 public:
  explicit TreeEncoder(OutputBuffer& out) : out_(out) {}

  void encode(const Json& value, std::size_t depth) {
    const Json::Value& v = value.v;
    switch (v.index()) {
      case 0:
        write_raw(out_, "null");
        return;
      case 1:
        write_raw(out_, *std::get_if<bool>(&v) ? "true" : "false");
        return;
      case 2:
        integer(*std::get_if<std::int64_t>(&v));
        return;
      case 3:
        integer(*std::get_if<std::uint64_t>(&v));
        return;
      case 4:
        out_.commit(
            pyjson::write_float(out_.reserve(pyjson::kMaxFloatLength), *std::get_if<double>(&v)));
        return;
      case 5:
        write_string(out_, *std::get_if<std::string_view>(&v));
        return;
      case 6:
        array(*std::get_if<JsonArray>(&v), depth);
        return;
      default:
        object(*std::get_if<JsonObject>(&v), depth);
        return;
    }
  }

 private:
  static constexpr std::size_t kSmallObject = 8;

  void array(const JsonArray& array, std::size_t depth) {
    if (array.empty()) {
      write_raw(out_, "[]");
      return;
    }
    write_raw(out_, "[");
    for (std::size_t i = 0; i < array.size(); ++i) {
      separator(depth + 1, i > 0);
      encode(array[i], depth + 1);
    }
    close(']', depth);
  }

  void object(const JsonObject& object, std::size_t depth) {
    if (object.empty()) {
      write_raw(out_, "{}");
      return;
    }
    write_raw(out_, "{");
    const std::size_t inner = depth + 1;
    if (!kSortKeys || keys_in_order(object)) {
      for (std::size_t i = 0; i < object.size(); ++i) member(object[i], inner, i > 0);
    } else if (object.size() == 2) {
      // Two members the wrong way round (axes such as {"tp", "ep"}): common, and cheap.
      member(object[1], inner, false);
      member(object[0], inner, true);
    } else if (object.size() <= kSmallObject) {
      // A few members (axes such as {"cp", "tp", "ep"}, one per param): insertion sort on
      // the stack, stable like the general path.
      std::array<const JsonMember*, kSmallObject> order;
      for (std::size_t i = 0; i < object.size(); ++i) {
        std::size_t j = i;
        for (; j > 0 && key_less(&object[i], order[j - 1]); --j) order[j] = order[j - 1];
        order[j] = &object[i];
      }
      for (std::size_t i = 0; i < object.size(); ++i) member(*order[i], inner, i > 0);
    } else {
      // order_ is a stack shared by all nesting levels: this object's index occupies
      // [base, base + size) and is popped before returning, so no allocation per object.
      const std::size_t base = order_.size();
      for (const JsonMember& m : object) order_.push_back(&m);
      std::sort(order_.begin() + static_cast<std::ptrdiff_t>(base), order_.end(), key_less);
      for (std::size_t i = base; i < base + object.size(); ++i) {
        member(*order_[i], inner, i > base);
      }
      order_.resize(base);
    }
    close('}', depth);
  }

  // Ties fall back to position so that duplicate keys keep insertion order.
  static bool key_less(const JsonMember* a, const JsonMember* b) {
    const int c = compare_names(a->key, b->key);
    return c < 0 || (c == 0 && std::less<>()(a, b));
  }

  static bool keys_in_order(const JsonObject& object) {
    for (std::size_t i = 1; i < object.size(); ++i) {
      if (compare_names(object[i].key, object[i - 1].key) < 0) return false;
    }
    return true;
  }

  void separator(std::size_t depth, bool comma) { write_newline(out_, depth, comma); }

  void close(char bracket, std::size_t depth) {
    write_newline(out_, depth, false);
    char* q = out_.reserve(1);
    *q = bracket;
    out_.commit(q + 1);
  }

  void member(const JsonMember& m, std::size_t depth, bool comma) {
    separator(depth, comma);
    write_key(out_, m.key);
    encode(m.value, depth);
  }

  template <class Integer>
  void integer(Integer value) {
    char* p = out_.reserve(24);
    out_.commit(std::to_chars(p, p + 24, value).ptr);
  }

  OutputBuffer& out_;
  std::vector<const JsonMember*> order_;
};

// Close to the encoded size (exact for ASCII text without escapes, numbers counted at
// their widest), so that the output is allocated once instead of growing by copies.
struct SizeEstimate {
  std::size_t depth = 0;

  // Separator, newline and indentation before each element of a non-empty container.
  [[nodiscard]] std::size_t per_element() const { return 2 + 2 * (depth + 1); }
  [[nodiscard]] std::size_t closing() const { return 1 + 2 * depth; }

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
    std::size_t size = 2 + closing() + object.size() * (per_element() + 4);
    ++depth;
    for (const JsonMember& member : object) {
      size += member.key.size() + std::visit(*this, member.value.v);
    }
    --depth;
    return size;
  }
};

template <bool kSortKeys>
void append_json(const Json& value, std::string& out) {
  SizeEstimate estimate;
  // Plus the room the last token reserves beyond its own bytes (worst-case escaping).
  out.reserve(out.size() + std::visit(estimate, value.v) + pyjson::kReserveSlack);
  advise_huge_pages(out);
  OutputBuffer buffer(out);
  TreeEncoder<kSortKeys>(buffer).encode(value, 0);
}

}  // namespace

namespace pyjson {

void write_python_json(OutputBuffer& out, const Json& value, std::size_t depth) {
  TreeEncoder<true>(out).encode(value, depth);
}

void write_plain_json(OutputBuffer& out, const Json& value, std::size_t depth) {
  TreeEncoder<false>(out).encode(value, depth);
}

std::size_t python_json_size(const Json& value, std::size_t depth) {
  SizeEstimate estimate{depth};
  return std::visit(estimate, value.v);
}

}  // namespace pyjson

void append_python_string(std::string& out, std::string_view utf8) {
  OutputBuffer buffer(out);
  write_string(buffer, utf8);
}

void append_python_float(std::string& out, double d) {
  char text[pyjson::kMaxFloatLength];
  out.append(text, pyjson::write_float(text, d));
}

void append_python_json(const Json& value, std::string& out) { append_json<true>(value, out); }

std::string encode_python_json(const Json& value) {
  std::string out;
  append_python_json(value, out);
  return out;
}

// The one line of a --json output (json_stream.h).
std::string encode_compact_json(const Json& value) {
  std::string out;
  JsonStream(out, JsonLayout::kOneLine).value(value);
  return out;
}

std::string encode_plain_json(const Json& value) {
  std::string out;
  append_json<false>(value, out);
  return out;
}

}  // namespace hpfreeze
