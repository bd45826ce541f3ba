#pragma once
// The plain JSON value model shared by decoding, the freeze passes and the encoders.
//
// Strings and keys are views: they point into the parsed input document (which must
// outlive the value) or into a StringArena held next to the value. Objects keep their
// members in insertion order; encoders sort where the output format requires it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/huge_block.h"

namespace hpfreeze {

struct Json;
struct JsonMember;
using JsonArray = std::vector<Json>;
using JsonObject = std::vector<JsonMember>;

struct Json {
  // int64 for integers that fit, uint64 for 2^63..2^64-1, double for any number written
  // with a fraction or exponent (Python's int/float split).
  using Value = std::variant<std::nullptr_t, bool, std::int64_t, std::uint64_t, double,
                             std::string_view, JsonArray, JsonObject>;
  Value v;

  // Defined below JsonMember: constructing the variant needs JsonMember complete (clang).
  Json();
  Json(std::nullptr_t);      // NOLINT
  Json(bool b);              // NOLINT
  Json(std::int64_t i);      // NOLINT
  Json(std::uint64_t u);     // NOLINT
  Json(double d);            // NOLINT
  Json(std::string_view s);  // NOLINT
  Json(const char* s);       // NOLINT
  Json(JsonArray a);         // NOLINT
  Json(JsonObject o);        // NOLINT

  [[nodiscard]] bool is_null() const { return std::holds_alternative<std::nullptr_t>(v); }
  [[nodiscard]] bool is_bool() const { return std::holds_alternative<bool>(v); }
  [[nodiscard]] bool is_string() const { return std::holds_alternative<std::string_view>(v); }
  [[nodiscard]] bool is_array() const { return std::holds_alternative<JsonArray>(v); }
  [[nodiscard]] bool is_object() const { return std::holds_alternative<JsonObject>(v); }
  [[nodiscard]] bool is_number() const {
    return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<std::uint64_t>(v) ||
           std::holds_alternative<double>(v);
  }
  [[nodiscard]] std::string_view as_string() const { return std::get<std::string_view>(v); }
  [[nodiscard]] const JsonArray& as_array() const { return std::get<JsonArray>(v); }
  [[nodiscard]] JsonArray& as_array() { return std::get<JsonArray>(v); }
  [[nodiscard]] const JsonObject& as_object() const { return std::get<JsonObject>(v); }
  [[nodiscard]] JsonObject& as_object() { return std::get<JsonObject>(v); }

  // Python truthiness: null, false, 0, 0.0, "", [] and {} are falsy.
  [[nodiscard]] bool truthy() const;

  // Member lookup by key (linear; objects here are small or looked up once).
  [[nodiscard]] const Json* find(std::string_view key) const;
  Json* find(std::string_view key);

  friend bool operator==(const Json& a, const Json& b);
};

struct JsonMember {
  std::string_view key;
  Json value;
  friend bool operator==(const JsonMember& a, const JsonMember& b) = default;
};

inline Json::Json() : v(nullptr) {}
inline Json::Json(std::nullptr_t) : v(nullptr) {}
inline Json::Json(bool b) : v(b) {}
inline Json::Json(std::int64_t i) : v(i) {}
inline Json::Json(std::uint64_t u) : v(u) {}
inline Json::Json(double d) : v(d) {}
inline Json::Json(std::string_view s) : v(s) {}
inline Json::Json(const char* s) : v(std::string_view(s)) {}
inline Json::Json(JsonArray a) : v(std::move(a)) {}
inline Json::Json(JsonObject o) : v(std::move(o)) {}

// Owns strings created while building values (canonical placement strings, joined FQNs).
// Views handed out stay valid for the arena's lifetime, moves included; equal strings are
// not shared.
class StringArena {
 public:
  std::string_view store(std::string s) { return strings_.emplace_back(std::move(s)); }
  // Copies `s` into large blocks shared by all copies: no allocation per string.
  std::string_view copy(std::string_view s);
  // Room for n bytes in those blocks, for the caller to fill (and then view).
  char* allocate(std::size_t n);

 private:
  std::deque<std::string> strings_;
  std::vector<HugeBlock> blocks_;
  std::size_t block_used_ = 0;
  std::size_t block_size_ = 0;
};

// Semantic equality of two values as Python would write them: object member order is
// irrelevant, 1 and 1.0 differ, 0.0 and -0.0 differ. Linear in the sizes (large objects
// are compared through a hash index).
// `same_strings`, when given, decides string leaves (diff compares placements by their
// canonical form).
bool same_json(const Json& a, const Json& b,
               bool (*same_strings)(std::string_view, std::string_view) = nullptr);

// "null", "a boolean", "an integer", "a float", "a string", "an array", "an object": the
// one spelling of "got ..." in every diagnostic about a value of the wrong type.
std::string_view json_type_article(const Json& value);

// "expected EXPECTED, got GOT", GOT a json_type_article: the one wording of a value of the
// wrong type, in the plan, model and meta decoders alike.
std::string expected_got(std::string_view expected, std::string_view got);
// The same for `value`: expected_got(expected, json_type_article(value)).
std::string expected_got(std::string_view expected, const Json& value);

}  // namespace hpfreeze
