// The --json stream writer (json_stream.h): RapidJSON's writers over pyjson::OutputBuffer,
// fed Python's spelling of keys, strings and floats as raw values.
#include "json/json_stream.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>
#include <variant>

#include "json/python_writer.h"

// Named rather than anonymous: JsonStream::Writers, of external linkage, holds a Sink.
namespace hpfreeze::json_stream_detail {

// RapidJSON's output stream: a cursor into pyjson::OutputBuffer's room (whose growth keeps
// the room written ahead of the bytes small, which counts in peak memory). The buffer lives
// from the first byte to the next trim(), so a trimmed string is left alone.
class Sink {
 public:
  using Ch = char;
  explicit Sink(std::string& out) : out_(out) {}
  ~Sink() {
    if (buffer_) buffer_->commit(cursor_);
  }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  void Put(char c) {
    reserve(1);
    *cursor_++ = c;
  }
  void Flush() {}

  // PutReserve and PutUnsafe: room for n bytes, then up to n puts without a check.
  void reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - cursor_) < n) more(n);
  }
  void put_reserved(char c) { *cursor_++ = c; }

  void write(const char* bytes, std::size_t n) {
    reserve(n);
    std::memcpy(cursor_, bytes, n);
    cursor_ += n;
  }
  // Indentation: a fixed-size copy is two stores, whatever the depth.
  void fill(char c, std::size_t n) {
    static constexpr char kSpaces[] =
        "                                                                ";
    constexpr std::size_t kCopied = sizeof kSpaces - 1;
    reserve(std::max(n, kCopied));
    if (c == ' ' && n <= kCopied) {
      std::memcpy(cursor_, kSpaces, kCopied);
    } else {
      std::memset(cursor_, c, n);
    }
    cursor_ += n;
  }
  // Leaves the string with exactly the bytes written.
  void trim() {
    if (!buffer_) return;
    buffer_->commit(cursor_);
    buffer_.reset();
    cursor_ = end_ = nullptr;
  }

 private:
  void more(std::size_t n) {
    if (buffer_) {
      buffer_->commit(cursor_);
    } else {
      buffer_.emplace(out_);
    }
    cursor_ = buffer_->reserve(n);
    end_ = cursor_ + buffer_->room();
  }

  std::string& out_;
  std::optional<pyjson::OutputBuffer> buffer_;
  char* cursor_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace hpfreeze::json_stream_detail

// Block writes into the Sink, as RapidJSON's own StringBuffer has them: the generic
// versions put a raw value (every string here) and the indentation one byte at a time.
namespace rapidjson {
template <>
inline void PutReserve<hpfreeze::json_stream_detail::Sink>(
    hpfreeze::json_stream_detail::Sink& stream, size_t count) {
  stream.reserve(count);
}
template <>
inline void PutUnsafe<hpfreeze::json_stream_detail::Sink>(
    hpfreeze::json_stream_detail::Sink& stream, char c) {
  stream.put_reserved(c);
}
template <>
inline void PutN<hpfreeze::json_stream_detail::Sink, char>(
    hpfreeze::json_stream_detail::Sink& stream, char c, size_t n) {
  stream.fill(c, n);
}
template <>
inline bool Writer<hpfreeze::json_stream_detail::Sink>::WriteRawValue(const char* json,
                                                                      size_t length) {
  os_->write(json, length);
  return true;
}
}  // namespace rapidjson

namespace hpfreeze {

// Both writers over one sink; the layout picks the one used (a writer allocates nothing
// until its first container).
struct JsonStream::Writers {
  Writers(std::string& out, JsonLayout layout)
      : sink(out), one_line(sink), indented(sink), is_indented(layout == JsonLayout::kIndented) {
    indented.SetIndent(' ', 2);
  }

  // `write(writer)` with the layout's writer.
  template <class Write>
  void with(Write write) {
    if (is_indented) {
      write(indented);
    } else {
      write(one_line);
    }
  }

  // Python's spelling of `utf8`, quoted, as a raw string (a key or a value).
  void raw_string(std::string_view utf8) {
    scratch_buffer.rewind();
    pyjson::write_string(scratch_buffer, utf8);
    const std::string_view quoted = scratch_buffer.written();
    with([&](auto& w) { w.RawValue(quoted.data(), quoted.size(), rapidjson::kStringType); });
  }

  json_stream_detail::Sink sink;
  rapidjson::Writer<json_stream_detail::Sink> one_line;
  rapidjson::PrettyWriter<json_stream_detail::Sink> indented;
  bool is_indented;
  // The escaped string of raw_string, its room kept from one string to the next.
  std::string scratch;
  pyjson::OutputBuffer scratch_buffer{scratch};
};

JsonStream::JsonStream(std::string& out, JsonLayout layout)
    : writers_(std::make_unique<Writers>(out, layout)) {}

JsonStream::~JsonStream() = default;

JsonStream& JsonStream::key(std::string_view name) {
  writers_->raw_string(name);
  return *this;
}

JsonStream& JsonStream::start_object() {
  writers_->with([](auto& w) { w.StartObject(); });
  return *this;
}

JsonStream& JsonStream::start_array() {
  writers_->with([](auto& w) { w.StartArray(); });
  return *this;
}

void JsonStream::end_object() {
  writers_->with([](auto& w) { w.EndObject(); });
}

void JsonStream::end_array() {
  writers_->with([](auto& w) { w.EndArray(); });
}

void JsonStream::string(std::string_view utf8) { writers_->raw_string(utf8); }

void JsonStream::number(std::uint64_t value) {
  writers_->with([value](auto& w) { w.Uint64(value); });
}

void JsonStream::integer(std::int64_t value) {
  writers_->with([value](auto& w) { w.Int64(value); });
}

void JsonStream::real(double value) {
  char text[pyjson::kMaxFloatLength];
  const char* end = pyjson::write_float(text, value);
  const auto length = static_cast<std::size_t>(end - text);
  writers_->with([&](auto& w) { w.RawValue(text, length, rapidjson::kNumberType); });
}

void JsonStream::boolean(bool value) {
  writers_->with([value](auto& w) { w.Bool(value); });
}

void JsonStream::null() {
  writers_->with([](auto& w) { w.Null(); });
}

void JsonStream::optional_string(std::optional<std::string_view> utf8) {
  if (utf8) {
    string(*utf8);
  } else {
    null();
  }
}

void JsonStream::optional_number(std::optional<std::uint64_t> value) {
  if (value) {
    number(*value);
  } else {
    null();
  }
}

void JsonStream::optional_boolean(std::optional<bool> value) {
  if (value) {
    boolean(*value);
  } else {
    null();
  }
}

void JsonStream::numbers(std::span<const std::uint64_t> values) {
  writers_->with([values](auto& w) {
    w.StartArray();
    for (std::uint64_t v : values) w.Uint64(v);
    w.EndArray();
  });
}

void JsonStream::value(const Json& value) {
  std::visit(
      [this](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          null();
        } else if constexpr (std::is_same_v<T, bool>) {
          boolean(v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          integer(v);
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          number(v);
        } else if constexpr (std::is_same_v<T, double>) {
          real(v);
        } else if constexpr (std::is_same_v<T, std::string_view>) {
          string(v);
        } else if constexpr (std::is_same_v<T, JsonArray>) {
          start_array();
          for (const Json& element : v) this->value(element);
          end_array();
        } else {
          start_object();
          for (const JsonMember& m : v) {
            key(m.key);
            this->value(m.value);
          }
          end_object();
        }
      },
      value.v);
}

bool JsonStream::complete() const {
  return writers_->is_indented ? writers_->indented.IsComplete() : writers_->one_line.IsComplete();
}

void JsonStream::end_line() {
  writers_->sink.Put('\n');
  writers_->sink.trim();
  writers_->with([this](auto& w) { w.Reset(writers_->sink); });
}

}  // namespace hpfreeze
