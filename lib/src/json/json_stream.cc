// The --json stream writer (json_stream.h): RapidJSON's writers appending to a string, fed
// Python's spelling of keys, strings and floats as raw values.
#include "json/json_stream.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/writer.h>

#include <type_traits>
#include <variant>

#include "json/python_writer.h"

namespace hpfreeze {
namespace {

// RapidJSON's output stream: appends to a std::string, which so holds exactly the bytes
// written at any time.
class Sink {
 public:
  using Ch = char;
  explicit Sink(std::string& out) : out_(out) {}

  void Put(char c) { out_.push_back(c); }
  void Flush() {}
  void write(const char* bytes, std::size_t n) { out_.append(bytes, n); }
  void fill(char c, std::size_t n) { out_.append(n, c); }

 private:
  std::string& out_;
};

}  // namespace
}  // namespace hpfreeze

// Block writes into the Sink, as RapidJSON's own StringBuffer has them: the generic
// versions put a raw value (every string here) and the indentation one byte at a time.
namespace rapidjson {
template <>
inline void PutN<hpfreeze::Sink, char>(hpfreeze::Sink& stream, char c, size_t n) {
  stream.fill(c, n);
}
template <>
inline bool Writer<hpfreeze::Sink>::WriteRawValue(const char* json, size_t length) {
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
    scratch.clear();
    {
      pyjson::OutputBuffer out(scratch);
      pyjson::write_string(out, utf8);
    }
    with([&](auto& w) { w.RawValue(scratch.data(), scratch.size(), rapidjson::kStringType); });
  }

  Sink sink;
  rapidjson::Writer<Sink> one_line;
  rapidjson::PrettyWriter<Sink> indented;
  bool is_indented;
  std::string scratch;  // the escaped string of raw_string, reused
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

void JsonStream::optional_string(std::optional<std::string_view> utf8) {
  if (utf8) {
    string(*utf8);
  } else {
    null();
  }
}

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
  writers_->with([this](auto& w) { w.Reset(writers_->sink); });
}

}  // namespace hpfreeze
