#pragma once
// The writer of every --json output (report, capacity, check, diff, parse): RapidJSON's
// Writer (one line, for JSON Lines) or PrettyWriter (Python's indent=2 layout), whose state
// machine keeps the nesting well formed and puts the separators and indentation. Keys,
// strings and floats reach it as RawValue in Python's spelling (python_writer.h): RapidJSON
// alone writes 1e-7, 10000000000000000.0, an upper-case \u00E9 and a raw DEL.
//
// The stream writes values in the order called; a key must precede each member's value, and
// each container must be closed (RapidJSON asserts both in builds without NDEBUG).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "json/json.h"

namespace hpfreeze {

enum class JsonLayout {
  kOneLine,   // {"a":1,"b":[1,2]}: no spaces, no newline
  kIndented,  // Python's json.dumps(indent=2): "a": 1 and one element a line; [] and {} inline
};

class JsonStream {
 public:
  // Appends to `out`, which holds exactly the bytes written after each end_line() and once
  // the stream is gone (in between, room not yet written may follow them). After
  // end_line() the stream leaves `out` alone until it writes again.
  JsonStream(std::string& out, JsonLayout layout);
  ~JsonStream();
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  // Each returns the stream, for the member's value or the first element:
  // w.key("fqn").string(fqn), w.key("mesh").start_object().
  JsonStream& key(std::string_view name);
  JsonStream& start_object();
  JsonStream& start_array();
  void end_object();
  void end_array();

  void string(std::string_view utf8);
  void number(std::uint64_t value);
  void integer(std::int64_t value);
  void real(double value);
  void boolean(bool value);
  void null();
  // The value, or null when empty.
  void optional_string(std::optional<std::string_view> utf8);
  void optional_number(std::optional<std::uint64_t> value);
  void optional_boolean(std::optional<bool> value);
  // An array of numbers (a shape).
  void numbers(std::span<const std::uint64_t> values);
  // A whole value, object members in insertion order.
  void value(const Json& value);

  // Whether one complete JSON text has been written (every container closed).
  [[nodiscard]] bool complete() const;
  // A newline after a complete text; the stream then takes the next one (JSON Lines).
  void end_line();

 private:
  struct Writers;
  std::unique_ptr<Writers> writers_;
};

}  // namespace hpfreeze
