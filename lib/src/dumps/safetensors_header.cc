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

std::optional<Diagnostic> append_safetensors_header(ModelTree& model, const std::string& name,
                                                    std::string header, std::uint64_t file_size) {
  if (std::optional<Diagnostic> d = header_past_end(name, header.size(), file_size)) return d;
  const std::uint64_t data_start = kSafetensorsLengthBytes + header.size();
  const std::uint64_t data_size = file_size - data_start;
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
  const JsonDocument& doc = *parsed;
  std::vector<std::size_t> offsets;  // of each member, made for the first message needing one
  auto byte_of = [&offsets, &doc](std::size_t m) {
    if (offsets.empty()) offsets = member_offsets(doc.bytes());
    return byte_text(kSafetensorsLengthBytes + (m < offsets.size() ? offsets[m] : 0));
  };
  const std::size_t first = model.parameters.size();
  std::vector<std::size_t> member_of_tensor;  // per appended tensor
  std::vector<Extent> extents;
  try {
    const Path root;
    if (!doc.root().is_object()) {
      fail(root, "the safetensors header at byte 8 is not an object of tensors");
    }
    simdjson::dom::object tensors = object_of(doc.root());
    std::size_t member = 0;
    std::optional<std::size_t> metadata;
    for (auto it = tensors.begin(); it != tensors.end(); ++it, ++member) {
      const std::string_view key = it.key();
      const Path pointer(root, key);
      if (key == "__metadata__") {
        if (metadata) {
          fail(pointer, "'__metadata__' is named twice, at " + byte_of(*metadata) + " and at " +
                            byte_of(member));
        }
        metadata = member;
        expect_object(it.value(), pointer);
        if (has_repeated_key(it.value())) {
          fail(pointer, "__metadata__ (at " + byte_of(member) + ") repeats a key");
        }
        // An object of strings, as the format and its reference loader have it.
        std::size_t entry = 0;
        for (auto m = object_of(it.value()).begin(); m != object_of(it.value()).end();
             ++m, ++entry) {
          if (m.value().is_string()) continue;
          // The byte of the entry: its key, found in the text of __metadata__'s value.
          if (offsets.empty()) offsets = member_offsets(doc.bytes());
          const std::size_t from = member < offsets.size() ? offsets[member] : 0;
          const std::vector<std::size_t> inner = member_offsets(doc.bytes().substr(from));
          const std::size_t at =
              kSafetensorsLengthBytes + from + (entry < inner.size() ? inner[entry] : 0);
          fail(Path(pointer, m.key()),
               "__metadata__ value " + quote_for_diagnostic(m.key()) + " (at " + byte_text(at) +
                   "): " + expected_got("a string", json_type_article(m.value())) +
                   " (__metadata__ holds strings only)");
        }
        continue;
      }
      auto who = [&] {
        return "tensor " + quote_for_diagnostic(key) + " (at " + byte_of(member) + ")";
      };
      if (!it.value().is_object()) fail_type(pointer, "an object", it.value());
      std::optional<element> dtype;
      std::optional<element> shape;
      std::optional<element> data_offsets;
      for (auto f = object_of(it.value()).begin(); f != object_of(it.value()).end(); ++f) {
        std::optional<element>* slot = f.key() == "dtype"          ? &dtype
                                       : f.key() == "shape"        ? &shape
                                       : f.key() == "data_offsets" ? &data_offsets
                                                                   : nullptr;
        if (slot != nullptr && slot->has_value()) {
          fail(Path(pointer, f.key()), who() + " has '" + std::string(f.key()) + "' twice");
        }
        if (slot != nullptr) {
          *slot = f.value();
        } else {
          fail(Path(pointer, f.key()),
               who() + " has an unknown field " + quote_for_diagnostic(f.key()));
        }
      }
      for (const auto& [field, value] : {std::pair{"dtype", dtype}, std::pair{"shape", shape},
                                         std::pair{"data_offsets", data_offsets}}) {
        if (!value) fail(pointer, who() + " has no '" + std::string(field) + "'");
      }
      const std::string_view code = expect_string(*dtype, Path(pointer, "dtype"));
      const Dtype* dt = safetensors_dtype(code);
      if (dt == nullptr) {
        const bool sub_byte = is_sub_byte_safetensors_dtype(code);
        fail(Path(pointer, "dtype"),
             who() + (sub_byte ? " has the sub-byte dtype " : " has unknown dtype ") +
                 quote_for_diagnostic(code) +
                 (sub_byte ? ", whose element size the planner cannot count" : ""));
      }
      const Path shape_pointer(pointer, "shape");
      simdjson::dom::array dims = expect_array(*shape, shape_pointer);
      const std::span<std::uint64_t> sizes = model.dims.allocate(dims.size());
      std::uint64_t bytes = dt->size;
      bool fits = true;
      std::size_t d = 0;
      for (element e : dims) {
        const Path dim_pointer(shape_pointer, d);
        if (e.type() != element_type::UINT64 &&
            (e.type() != element_type::INT64 || int64_of(e) < 0)) {
          fail(dim_pointer, who() + " has a shape entry that is not a non-negative integer");
        }
        sizes[d] = e.type() == element_type::UINT64 ? uint64_of(e)
                                                    : static_cast<std::uint64_t>(int64_of(e));
        fits = fits && !__builtin_mul_overflow(bytes, sizes[d], &bytes);
        ++d;
      }
      const Path offsets_pointer(pointer, "data_offsets");
      simdjson::dom::array range = expect_array(*data_offsets, offsets_pointer);
      std::array<std::uint64_t, 2> span{};
      std::size_t k = 0;
      for (element e : range) {
        if (k == 2 || (e.type() != element_type::UINT64 &&
                       (e.type() != element_type::INT64 || int64_of(e) < 0))) {
          fail(offsets_pointer, who() + ": data_offsets must be two non-negative integers");
        }
        span[k++] = e.type() == element_type::UINT64 ? uint64_of(e)
                                                     : static_cast<std::uint64_t>(int64_of(e));
      }
      if (k != 2) fail(offsets_pointer, who() + ": data_offsets must be two non-negative integers");
      if (span[0] > span[1]) {
        fail(offsets_pointer, who() + " ends (" + std::to_string(span[1]) + ") before it begins (" +
                                  std::to_string(span[0]) + ")");
      }
      if (span[1] > data_size) {
        fail(offsets_pointer, who() + " ends at byte " + std::to_string(span[1]) +
                                  " of the data, past its end: the data are " +
                                  plural(data_size, "byte") + " (from " + byte_text(data_start) +
                                  " of the file)");
      }
      if (!fits || span[1] - span[0] != bytes) {
        fail(offsets_pointer, who() + " holds " + plural(span[1] - span[0], "byte") +
                                  ", but its shape and dtype need " +
                                  (fits ? std::to_string(bytes) : "more than 2^64-1"));
      }
      extents.push_back({span[0], span[1], model.parameters.size()});
      member_of_tensor.push_back(member);
      auto& [fqn, parameter] = model.parameters.emplace_back();
      fqn = model.names.copy(key);
      parameter.shape = sizes;
      parameter.dtype = dt->name;
      parameter.requires_grad = dt->floating;
    }
    // The tensors cover the data exactly, as the reference loader requires: in the order of
    // their data_offsets, each begins where the one before ends (the first at 0, so an
    // empty one sits between others), and the last ends at the end of the file.
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
      return a.begin != b.begin ? a.begin < b.begin
             : a.end != b.end   ? a.end < b.end
                                : a.tensor < b.tensor;
    });
    const auto name_of_extent = [&model](const Extent* e) {
      return model.parameters[e->tensor].first;
    };
    const auto uncovered = [&](std::uint64_t from, std::uint64_t to, const Extent* before,
                               const std::string& until, const Path& pointer) {
      fail(pointer,
           plural(to - from, "byte") + " of data " + (to - from == 1 ? "belongs" : "belong") +
               " to no tensor: from " + byte_text(data_start + from) + " of the file, " +
               (before != nullptr ? "after tensor " + quote_for_diagnostic(name_of_extent(before))
                                  : std::string("where the data begin")) +
               ", to " + until + "; the tensors must cover the data exactly");
    };
    std::uint64_t covered = 0;  // the data the tensors so far hold: [0, covered)
    const Extent* previous = nullptr;
    for (const Extent& e : extents) {
      const std::string_view tensor = name_of_extent(&e);
      const Path entry(root, tensor);
      const Path pointer(entry, "data_offsets");
      if (e.begin < covered) {
        fail(pointer, "tensor " + quote_for_diagnostic(tensor) + " overlaps tensor " +
                          quote_for_diagnostic(name_of_extent(previous)) + ": it begins at " +
                          byte_text(data_start + e.begin) +
                          " of the file, before the other ends at " +
                          byte_text(data_start + covered));
      }
      if (e.begin > covered) {
        uncovered(covered, e.begin, previous,
                  byte_text(data_start + e.begin) + ", where tensor " +
                      quote_for_diagnostic(tensor) + " begins",
                  pointer);
      }
      covered = e.end;
      previous = &e;
    }
    if (covered < data_size) {
      const Path last(root, previous != nullptr ? name_of_extent(previous) : "");
      const Path last_offsets(last, "data_offsets");
      uncovered(covered, data_size, previous,
                "the end of the file at " + byte_text(data_start + data_size),
                previous != nullptr ? last_offsets : root);
    }
    // Names repeat rarely: one fast index over them, a slower search only on a repeat.
    NameIndex index;
    const auto name_of = [&model, first](std::size_t k) {
      return model.parameters[first + k].first;
    };
    if (!index.build(model.parameters.size() - first, name_of)) {
      std::vector<std::string_view> names;
      for (std::size_t k = first; k < model.parameters.size(); ++k) {
        names.push_back(model.parameters[k].first);
      }
      const auto [a, b] = *first_repeat(names);
      fail(Path(root, names[b]), quote_for_diagnostic(names[b]) + " is named twice, at " +
                                     byte_of(member_of_tensor[a]) + " and at " +
                                     byte_of(member_of_tensor[b]));
    }
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
