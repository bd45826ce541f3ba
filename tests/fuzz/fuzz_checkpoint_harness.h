#pragma once
// The safetensors header reader's fuzz target (checkpoint), shared with the regression test
// like fuzz_harness.h. The input is a header's JSON text; a first line `#data N` gives the
// size of the data after it (default 0), so that the fuzzer reaches headers whose tensors
// cover the data exactly as well as those with gaps and trailing bytes. A size N that makes
// the file's size wrap past 2^64 gives a file shorter than its header, which must be rejected
// (testdata/fuzz/regressions/checkpoint/).
//
// What is accepted is checked against a reading of the format made here, not by the
// decoder (docs/formats.md, "Checkpoints"): every member but __metadata__ is a tensor with a
// known dtype, a shape and offsets holding shape x element size bytes; __metadata__ is an
// object of strings; in the order of their offsets the tensors cover the data exactly.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "dumps/checkpoint.h"
#include "fuzz_harness.h"

namespace hpfreeze::fuzz {

// The element size of a safetensors dtype code the reader accepts (0: none).
inline std::uint64_t reference_element_size(std::string_view code) {
  static constexpr std::pair<std::string_view, std::uint64_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},      {"I16", 2},     {"U16", 2},    {"I32", 4},
      {"U32", 4},  {"I64", 8}, {"U64", 8},     {"F16", 2},     {"BF16", 2},   {"F32", 4},
      {"F64", 8},  {"C64", 8}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};
  for (const auto& [name, size] : kSizes) {
    if (name == code) return size;
  }
  return 0;
}

// A JSON integer that is not negative, as the header's shapes and offsets need.
inline std::optional<std::uint64_t> reference_count(const Json& j) {
  if (const auto* u = std::get_if<std::uint64_t>(&j.v)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&j.v); i != nullptr && *i >= 0) {
    return static_cast<std::uint64_t>(*i);
  }
  return std::nullopt;
}

inline std::string check_checkpoint(std::string_view input) {
  std::uint64_t data = 0;
  if (input.starts_with("#data ")) {
    const std::size_t eol = input.find('\n');
    const std::string_view number = input.substr(6, eol == std::string_view::npos ? 0 : eol - 6);
    std::from_chars(number.data(), number.data() + number.size(), data);
    input.remove_prefix(eol == std::string_view::npos ? input.size() : eol + 1);
  }
  const std::string file = "ck.safetensors";
  const Expected<ModelTree> model =
      decode_safetensors_header(file, std::string(input), 8 + input.size() + data);
  if (!model) {
    if (model.errors().size() != 1) return "a rejected header has other than one diagnostic";
    const Diagnostic& d = model.errors().front();
    if (d.file != file || d.message.empty()) return "a diagnostic without file or message";
    const std::string line = d.location_and_message();
    if (std::any_of(line.begin(), line.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      return "a diagnostic does not print as one line";
    }
    return {};
  }
  Expected<JsonDocument> doc = parse_json_document(file, std::string(input));
  if (!doc) return "the reader accepted a header that does not parse";
  const Json header = json_from_dom(doc->root());
  if (!header.is_object()) return "the reader accepted a header that is no object";
  std::vector<std::tuple<std::uint64_t, std::uint64_t>> extents;
  std::size_t tensors = 0;
  for (const JsonMember& m : header.as_object()) {
    if (m.key == "__metadata__") {
      if (!m.value.is_object()) return "accepted a __metadata__ that is no object";
      for (const JsonMember& entry : m.value.as_object()) {
        if (!entry.value.is_string()) return "accepted a __metadata__ value that is no string";
      }
      continue;
    }
    const ModelParameter* p = model->find_parameter(m.key);
    if (p == nullptr || !m.value.is_object()) return "a tensor is missing or no object";
    const Json* dtype = m.value.find("dtype");
    const Json* shape = m.value.find("shape");
    const Json* offsets = m.value.find("data_offsets");
    if (dtype == nullptr || shape == nullptr || offsets == nullptr || !dtype->is_string() ||
        !shape->is_array() || !offsets->is_array() || offsets->as_array().size() != 2) {
      return "accepted a tensor without dtype, shape or two offsets";
    }
    std::uint64_t bytes = reference_element_size(dtype->as_string());
    if (bytes == 0) return "accepted an unknown dtype";
    if (shape->as_array().size() != p->shape.size()) return "the shape's rank differs";
    for (std::size_t d = 0; d < p->shape.size(); ++d) {
      const std::optional<std::uint64_t> dim = reference_count(shape->as_array()[d]);
      if (!dim || *dim != p->shape[d]) return "a shape differs from the header's";
      if (__builtin_mul_overflow(bytes, *dim, &bytes)) return "accepted a size beyond 2^64-1";
    }
    std::uint64_t range[2] = {};
    for (std::size_t k = 0; k < 2; ++k) {
      const std::optional<std::uint64_t> o = reference_count(offsets->as_array()[k]);
      if (!o) return "accepted an offset that is no count";
      range[k] = *o;
    }
    if (range[1] < range[0] || range[1] - range[0] != bytes) return "accepted a wrong byte count";
    extents.emplace_back(range[0], range[1]);
    ++tensors;
  }
  if (tensors != model->parameters.size()) return "other than one parameter per tensor";
  std::sort(extents.begin(), extents.end());
  std::uint64_t covered = 0;
  for (const auto& [begin, end] : extents) {
    if (begin != covered) return "accepted tensors that do not cover the data exactly";
    covered = end;
  }
  if (covered != data) return "accepted data that the tensors do not cover to its end";
  return {};
}

}  // namespace hpfreeze::fuzz
