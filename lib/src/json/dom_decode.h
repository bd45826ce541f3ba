#pragma once
// What the decoders of a DOM share (the dumps', a placement's dump form): a lazily built JSON
// Pointer for the value being decoded, type-checked DOM accessors, and the error they throw.
// Internal to lib/: the decoders catch DecodeError and return it as a Diagnostic
// (dumps/dom_decode.h, decode_dump).

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/name_index.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"
#include "json/json_document.h"

namespace hpfreeze::dom_decode {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Thrown inside the decoder only; decode_* turn it into a diagnostic.
struct DecodeError {
  std::string pointer;
  std::string message;
};

// key == literal, with the literal's length known at compile time so that the comparison
// is inlined: these run for every key of every placement, and string_view's == called
// memcmp through the PLT each time.
template <std::size_t N>
inline bool is(std::string_view key, const char (&literal)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), literal, N - 1) == 0;
}

// Where a value sits, as a chain of reference tokens on the decoder's stack. The JSON
// Pointer text is only built when a diagnostic needs it: building it for every value on
// the way down was a large share of decoding time.
class Path {
 public:
  Path() = default;  // the document root
  Path(const Path& parent, std::string_view key) : parent_(&parent), key_(key) {}
  Path(const Path& parent, std::size_t index) : parent_(&parent), index_(index), is_index_(true) {}

  [[nodiscard]] std::string str() const {
    std::string pointer;
    append_to(pointer);
    return pointer;
  }

 private:
  void append_to(std::string& pointer) const {
    if (parent_ == nullptr) return;
    parent_->append_to(pointer);
    if (is_index_) {
      pointer += '/';
      pointer += std::to_string(index_);
    } else {
      append_pointer_token(pointer, key_);
    }
  }

  const Path* parent_ = nullptr;
  std::string_view key_;
  std::size_t index_ = 0;
  bool is_index_ = false;
};

// Accessors for values whose type has been checked (simdjson's value_unsafe() on a
// temporary result trips GCC 12's dangling-pointer analysis).
inline simdjson::dom::object object_of(element e) {
  simdjson::dom::object o;
  [[maybe_unused]] const auto error = e.get_object().get(o);
  return o;
}
inline simdjson::dom::array array_of(element e) {
  simdjson::dom::array a;
  [[maybe_unused]] const auto error = e.get_array().get(a);
  return a;
}
inline std::string_view string_of(element e) {
  std::string_view s;
  [[maybe_unused]] const auto error = e.get_string().get(s);
  return s;
}
inline std::int64_t int64_of(element e) {
  std::int64_t i = 0;
  [[maybe_unused]] const auto error = e.get_int64().get(i);
  return i;
}
inline std::uint64_t uint64_of(element e) {
  std::uint64_t u = 0;
  [[maybe_unused]] const auto error = e.get_uint64().get(u);
  return u;
}
inline double double_of(element e) {
  double d = 0;
  [[maybe_unused]] const auto error = e.get_double().get(d);
  return d;
}
inline bool bool_of(element e) {
  bool b = false;
  [[maybe_unused]] const auto error = e.get_bool().get(b);
  return b;
}
inline element member_of(simdjson::dom::object o, std::string_view key) {
  element e;
  [[maybe_unused]] const auto error = o.at_key(key).get(e);
  return e;
}

[[noreturn]] inline void fail(const Path& path, std::string message) {
  throw DecodeError{path.str(), std::move(message)};
}

[[noreturn]] inline void fail_type(const Path& path, std::string_view expected, element e) {
  fail(path, expected_got(expected, json_type_article(e)));
}

inline simdjson::dom::object expect_object(element e, const Path& pointer) {
  if (!e.is_object()) fail_type(pointer, "an object", e);
  return object_of(e);
}
inline simdjson::dom::array expect_array(element e, const Path& pointer) {
  if (!e.is_array()) fail_type(pointer, "an array", e);
  return array_of(e);
}
inline std::string_view expect_string(element e, const Path& pointer) {
  if (!e.is_string()) fail_type(pointer, "a string", e);
  return string_of(e);
}

inline std::int64_t expect_int64(element e, const Path& pointer, std::string_view what) {
  if (e.type() == element_type::INT64) return int64_of(e);
  if (e.type() == element_type::UINT64) {
    fail(pointer, std::string(what) + " does not fit in a signed 64-bit integer");
  }
  fail_type(pointer, "an integer", e);
}

// A repeated key in a document parsed without the duplicate-key check (ParseOptions). The
// text does not matter: the decoder then reports what find_duplicate_key() says, which
// names the first repeat in document order.
[[noreturn]] inline void fail_repeated_key() { throw DecodeError{{}, "duplicate key"}; }

// Marks `bit` in `seen`; a key seen before is a repeated key. For objects whose keys are
// a known set (the dump's own fields).
inline void see(unsigned& seen, unsigned bit) {
  if ((seen & bit) != 0) fail_repeated_key();
  seen |= bit;
}

// Whether some of `count` names (`name_of(i)`) repeat: pairwise for the small objects a
// dump is mostly made of, a reused hash index for large ones (the parameters of a module).
class RepeatCheck {
 public:
  template <class NameOf>
  bool any(std::size_t count, NameOf name_of) {
    if (count <= kPairwiseLimit) {
      for (std::size_t i = 1; i < count; ++i) {
        const std::string_view name = name_of(i);
        for (std::size_t j = 0; j < i; ++j) {
          if (name_of(j) == name) return true;
        }
      }
      return false;
    }
    return !index_.build(count, name_of);
  }

  // The keys of `o`.
  bool any(simdjson::dom::object o) {
    keys_.clear();
    for (auto it = o.begin(); it != o.end(); ++it) keys_.push_back(it.key());
    return any(keys_.size(), [this](std::size_t i) { return keys_[i]; });
  }

 private:
  static constexpr std::size_t kPairwiseLimit = 16;
  NameIndex index_;
  std::vector<std::string_view> keys_;
};

inline Diagnostic to_diagnostic(const DecodeError& error, const std::string& file) {
  return make_error(file, error.pointer, error.message);
}

// Calls visit(key, value, pointer) for each member of `o`, in document order; `path`
// locates `o`.
template <typename Visit>
inline void for_each_member(simdjson::dom::object o, const Path& path, Visit&& visit) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string_view key = it.key();
    visit(key, it.value(), Path(path, key));
  }
}

}  // namespace hpfreeze::dom_decode
