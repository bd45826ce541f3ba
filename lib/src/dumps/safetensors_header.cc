// The safetensors header decoder (safetensors_header.h): one header's JSON text into the
// tensors of a checkpoint, with every rule of docs/formats.md "Checkpoints" and errors that
// name the byte. The header length and the sharded index: checkpoint_decode.cc; reading
// the files: the loader (lib/src/inputs/model_input.cc).
#include "dumps/safetensors_header.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include "base/name_index.h"
#include "dumps/checkpoint.h"
#include "dumps/dom_decode.h"
#include "dumps/dump_kind.h"
#include "io/io.h"
#include "json/json_document.h"
#include "spec/dtypes.h"

namespace hpfreeze {

using namespace dom_decode;

namespace {

std::string byte_text(std::uint64_t offset) { return "byte " + std::to_string(offset); }

// The start of each top-level member of a valid JSON object text, in document order (the
// DOM's order): where each tensor's entry sits, for messages that name the byte.
std::vector<std::size_t> member_offsets(std::string_view text) {
  std::vector<std::size_t> out;
  std::size_t i = text.find('{');
  if (i == std::string_view::npos) return out;
  int depth = 0;
  bool expect_key = true;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      if (depth == 1 && expect_key) {
        out.push_back(i);
        expect_key = false;
      }
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    } else if (c == ',' && depth == 1) {
      expect_key = true;
    }
  }
  return out;
}

// Where each line of `text` starts, to turn a parse error's line and column back into a
// byte offset.
std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) {
    starts.push_back(i + 1);
  }
  return starts;
}

struct Extent {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::size_t tensor = 0;  // index in the model's parameters
};

}  // namespace

ModelTree empty_checkpoint(const std::string& file, std::string pointer) {
  ModelTree model;
  model.file = file;
  model.checkpoint = true;
  model.has_parameters = true;
  model.parameters_pointer = std::move(pointer);
  return model;
}

namespace {

// The first name of `names` that repeats an earlier one, and both positions.
std::optional<std::pair<std::size_t, std::size_t>> first_repeat(
    const std::vector<std::string_view>& names) {
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (auto [at, fresh] = seen.try_emplace(names[k], k); !fresh) return std::pair{at->second, k};
  }
  return std::nullopt;
}

}  // namespace

namespace {

// A parsed header into the tensors of `model`, each rule of docs/formats.md "Checkpoints" a
// step: the entries one by one (run), then the data they cover and the names they use. A
// broken rule throws DecodeError, naming the byte.
class HeaderDecode {
 public:
  HeaderDecode(ModelTree& model, const JsonDocument& doc, std::uint64_t data_start,
               std::uint64_t data_size)
      : model_(model),
        doc_(doc),
        data_start_(data_start),
        data_size_(data_size),
        first_(model.parameters.size()) {}

  void run() {
    if (!doc_.root().is_object()) {
      fail(root_, "the safetensors header at byte 8 is not an object of tensors");
    }
    simdjson::dom::object tensors = object_of(doc_.root());
    std::size_t member = 0;
    std::optional<std::size_t> metadata;
    for (auto it = tensors.begin(); it != tensors.end(); ++it, ++member) {
      const std::string_view key = it.key();
      if (key != "__metadata__") {
        add_tensor(key, it.value(), member);
        continue;
      }
      if (metadata) {
        fail(Path(root_, key), "'__metadata__' is named twice, at " + byte_of(*metadata) +
                                   " and at " + byte_of(member));
      }
      metadata = member;
      check_metadata(it.value(), member);
    }
    check_coverage();
    check_names();
  }

 private:
  // The byte of a top-level member; the offsets are made for the first message needing one.
  std::string byte_of(std::size_t member) {
    return byte_text(kSafetensorsLengthBytes + member_start(member));
  }
  std::size_t member_start(std::size_t member) {
    if (offsets_.empty()) offsets_ = member_offsets(doc_.bytes());
    return member < offsets_.size() ? offsets_[member] : 0;
  }

  // __metadata__: an object of strings, as the format and its reference loader have it.
  void check_metadata(element value, std::size_t member) {
    const Path pointer(root_, "__metadata__");
    expect_object(value, pointer);
    if (has_repeated_key(value)) {
      fail(pointer, "__metadata__ (at " + byte_of(member) + ") repeats a key");
    }
    std::size_t entry = 0;
    for (auto m = object_of(value).begin(); m != object_of(value).end(); ++m, ++entry) {
      if (m.value().is_string()) continue;
      // The byte of the entry: its key, found in the text of __metadata__'s value.
      const std::size_t from = member_start(member);
      const std::vector<std::size_t> inner = member_offsets(doc_.bytes().substr(from));
      const std::size_t at =
          kSafetensorsLengthBytes + from + (entry < inner.size() ? inner[entry] : 0);
      fail(Path(pointer, m.key()),
           "__metadata__ value " + quote_for_diagnostic(m.key()) + " (at " + byte_text(at) +
               "): " + expected_got("a string", json_type_article(m.value())) +
               " (__metadata__ holds strings only)");
    }
  }

  // The tensor add_tensor decodes, for its messages (the byte found only for one).
  std::string who() {
    return "tensor " + quote_for_diagnostic(key_) + " (at " + byte_of(member_) + ")";
  }

  // A tensor's entry: its three fields, each once and no other.
  struct Fields {
    std::optional<element> dtype;
    std::optional<element> shape;
    std::optional<element> data_offsets;
  };
  Fields fields_of(element value, const Path& pointer) {
    if (!value.is_object()) fail_type(pointer, "an object", value);
    Fields out;
    for (auto f = object_of(value).begin(); f != object_of(value).end(); ++f) {
      std::optional<element>* slot = f.key() == "dtype"          ? &out.dtype
                                     : f.key() == "shape"        ? &out.shape
                                     : f.key() == "data_offsets" ? &out.data_offsets
                                                                 : nullptr;
      if (slot == nullptr) {
        fail(Path(pointer, f.key()),
             who() + " has an unknown field " + quote_for_diagnostic(f.key()));
      }
      if (slot->has_value()) {
        fail(Path(pointer, f.key()), who() + " has '" + std::string(f.key()) + "' twice");
      }
      *slot = f.value();
    }
    for (const auto& [field, given] : {std::pair{"dtype", out.dtype}, std::pair{"shape", out.shape},
                                       std::pair{"data_offsets", out.data_offsets}}) {
      if (!given) fail(pointer, who() + " has no '" + std::string(field) + "'");
    }
    return out;
  }

  const Dtype& dtype_of(element value, const Path& pointer) {
    const std::string_view code = expect_string(value, pointer);
    const Dtype* dt = safetensors_dtype(code);
    if (dt == nullptr) {
      const bool sub_byte = is_sub_byte_safetensors_dtype(code);
      fail(pointer, who() + (sub_byte ? " has the sub-byte dtype " : " has unknown dtype ") +
                        quote_for_diagnostic(code) +
                        (sub_byte ? ", whose element size the planner cannot count" : ""));
    }
    return *dt;
  }

  // A JSON integer >= 0, else nullopt.
  static std::optional<std::uint64_t> unsigned_of(element e) {
    if (e.type() == element_type::UINT64) return uint64_of(e);
    if (e.type() == element_type::INT64 && int64_of(e) >= 0) {
      return static_cast<std::uint64_t>(int64_of(e));
    }
    return std::nullopt;
  }

  // [begin, end) of the tensor in the data, which must be inside them.
  std::array<std::uint64_t, 2> span_of(element value, const Path& pointer) {
    simdjson::dom::array range = expect_array(value, pointer);
    std::array<std::uint64_t, 2> span{};
    std::size_t k = 0;
    for (element e : range) {
      const std::optional<std::uint64_t> n = unsigned_of(e);
      if (k == 2 || !n) fail(pointer, who() + ": data_offsets must be two non-negative integers");
      span[k++] = *n;
    }
    if (k != 2) fail(pointer, who() + ": data_offsets must be two non-negative integers");
    if (span[0] > span[1]) {
      fail(pointer, who() + " ends (" + std::to_string(span[1]) + ") before it begins (" +
                        std::to_string(span[0]) + ")");
    }
    if (span[1] > data_size_) {
      fail(pointer, who() + " ends at byte " + std::to_string(span[1]) +
                        " of the data, past its end: the data are " + plural(data_size_, "byte") +
                        " (from " + byte_text(data_start_) + " of the file)");
    }
    return span;
  }

  void add_tensor(std::string_view key, element value, std::size_t member) {
    key_ = key;
    member_ = member;
    const Path pointer(root_, key);
    const Fields fields = fields_of(value, pointer);
    const Dtype& dt = dtype_of(*fields.dtype, Path(pointer, "dtype"));
    const Path shape_pointer(pointer, "shape");
    simdjson::dom::array dims = expect_array(*fields.shape, shape_pointer);
    const std::span<std::uint64_t> sizes = model_.dims.allocate(dims.size());
    std::uint64_t bytes = dt.size;
    bool fits = true;
    std::size_t d = 0;
    for (element e : dims) {
      const std::optional<std::uint64_t> n = unsigned_of(e);
      if (!n) {
        fail(Path(shape_pointer, d),
             who() + " has a shape entry that is not a non-negative integer");
      }
      sizes[d++] = *n;
      fits = fits && !__builtin_mul_overflow(bytes, *n, &bytes);
    }
    const Path offsets_pointer(pointer, "data_offsets");
    const std::array<std::uint64_t, 2> span = span_of(*fields.data_offsets, offsets_pointer);
    if (!fits || span[1] - span[0] != bytes) {
      fail(offsets_pointer, who() + " holds " + plural(span[1] - span[0], "byte") +
                                ", but its shape and dtype need " +
                                (fits ? std::to_string(bytes) : "more than 2^64-1"));
    }
    extents_.push_back({span[0], span[1], model_.parameters.size()});
    member_of_tensor_.push_back(member);
    auto& [fqn, parameter] = model_.parameters.emplace_back();
    fqn = model_.names.copy(key);
    parameter.shape = sizes;
    parameter.dtype = dt.name;
    parameter.requires_grad = dt.floating;
  }

  // The tensors cover the data exactly, as the reference loader requires: in the order of
  // their data_offsets, each begins where the one before ends (the first at 0, so an empty
  // one sits between others), and the last ends at the end of the file.
  void check_coverage() {
    std::sort(extents_.begin(), extents_.end(), [](const Extent& a, const Extent& b) {
      return a.begin != b.begin ? a.begin < b.begin
             : a.end != b.end   ? a.end < b.end
                                : a.tensor < b.tensor;
    });
    std::uint64_t covered = 0;  // the data the tensors so far hold: [0, covered)
    const Extent* previous = nullptr;
    for (const Extent& e : extents_) {
      const std::string_view tensor = name_of(&e);
      const Path entry(root_, tensor);
      const Path pointer(entry, "data_offsets");
      if (e.begin < covered) {
        fail(pointer, "tensor " + quote_for_diagnostic(tensor) + " overlaps tensor " +
                          quote_for_diagnostic(name_of(previous)) + ": it begins at " +
                          byte_text(data_start_ + e.begin) +
                          " of the file, before the other ends at " +
                          byte_text(data_start_ + covered));
      }
      if (e.begin > covered) {
        uncovered(covered, e.begin, previous,
                  byte_text(data_start_ + e.begin) + ", where tensor " +
                      quote_for_diagnostic(tensor) + " begins",
                  pointer);
      }
      covered = e.end;
      previous = &e;
    }
    if (covered < data_size_) {
      const Path last(root_, previous != nullptr ? name_of(previous) : "");
      uncovered(covered, data_size_, previous,
                "the end of the file at " + byte_text(data_start_ + data_size_),
                previous != nullptr ? Path(last, "data_offsets") : root_);
    }
  }
  std::string_view name_of(const Extent* e) const { return model_.parameters[e->tensor].first; }
  [[noreturn]] void uncovered(std::uint64_t from, std::uint64_t to, const Extent* before,
                              const std::string& until, const Path& pointer) const {
    fail(pointer, plural(to - from, "byte") + " of data " +
                      (to - from == 1 ? "belongs" : "belong") + " to no tensor: from " +
                      byte_text(data_start_ + from) + " of the file, " +
                      (before != nullptr ? "after tensor " + quote_for_diagnostic(name_of(before))
                                         : std::string("where the data begin")) +
                      ", to " + until + "; the tensors must cover the data exactly");
  }

  // No name twice. Names repeat rarely: one fast index over them, a slower search only on a
  // repeat.
  void check_names() {
    NameIndex index;
    const auto name_at = [this](std::size_t k) { return model_.parameters[first_ + k].first; };
    if (index.build(model_.parameters.size() - first_, name_at)) return;
    std::vector<std::string_view> names;
    for (std::size_t k = first_; k < model_.parameters.size(); ++k) {
      names.push_back(model_.parameters[k].first);
    }
    const auto [a, b] = *first_repeat(names);
    fail(Path(root_, names[b]), quote_for_diagnostic(names[b]) + " is named twice, at " +
                                    byte_of(member_of_tensor_[a]) + " and at " +
                                    byte_of(member_of_tensor_[b]));
  }

  ModelTree& model_;
  const JsonDocument& doc_;
  const std::uint64_t data_start_;
  const std::uint64_t data_size_;
  const std::size_t first_;  // the model's first parameter from this header
  const Path root_;
  std::vector<std::size_t> offsets_;           // of each member, see member_start
  std::vector<std::size_t> member_of_tensor_;  // per appended tensor
  std::vector<Extent> extents_;
  std::string_view key_;  // the tensor add_tensor decodes, and its member
  std::size_t member_ = 0;
};

}  // namespace

std::optional<Diagnostic> append_safetensors_header(ModelTree& model, const std::string& name,
                                                    std::string header, std::uint64_t file_size) {
  if (std::optional<Diagnostic> d = header_past_end(name, header.size(), file_size)) return d;
  const std::uint64_t data_start = kSafetensorsLengthBytes + header.size();
  const std::vector<std::size_t> lines = line_starts(header);
  if (header.capacity() < header.size() + kInputPadding)
    header.reserve(header.size() + kInputPadding);
  // Repeated keys are found below, where the byte of each entry is known.
  ParseOptions options;
  options.check_duplicate_keys = false;
  options.not_json = not_json_kind;
  Expected<JsonDocument> parsed = parse_json_document(name, std::move(header), options);
  if (!parsed) {
    Diagnostic d = parsed.errors().front();
    const std::size_t line = std::clamp<std::size_t>(d.line, 1, lines.size());
    const std::size_t at =
        kSafetensorsLengthBytes + lines[line - 1] + (d.column > 0 ? d.column - 1 : 0);
    d.line = 0;
    d.column = 0;
    d.message = "the safetensors header (bytes 8 to " + std::to_string(data_start) +
                "): " + d.message + " at " + byte_text(at);
    return d;
  }
  try {
    HeaderDecode(model, *parsed, data_start, file_size - data_start).run();
  } catch (const DecodeError& error) {
    return to_diagnostic(error, name);
  }
  return std::nullopt;
}

Expected<ModelTree> decode_safetensors_header(const std::string& name, std::string header,
                                              std::uint64_t file_size) {
  ModelTree model = empty_checkpoint(name, "");
  if (std::optional<Diagnostic> d =
          append_safetensors_header(model, name, std::move(header), file_size)) {
    return *d;
  }
  return model;
}

}  // namespace hpfreeze
