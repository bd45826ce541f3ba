// Checkpoints as --model (checkpoint.h, docs/formats.md "Checkpoints"): safetensors
// headers, read by offset, and the sharded checkpoint's index.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>
#include <unordered_map>
#include <utility>

#include "base/name_index.h"
#include "dumps/dom_decode.h"
#include "hpfreeze/capacity.h"
#include "hpfreeze/checkpoint.h"
#include "hpfreeze/dump_kind.h"
#include "hpfreeze/io.h"
#include "io/io_posix.h"

namespace hpfreeze {

using namespace dom_decode;

namespace {

struct DtypeCode {
  std::string_view code;
  std::string_view torch;
  bool floating;  // counts as trainable
};

// The safetensors codes torch can hold, with torch's names.
constexpr std::array<DtypeCode, 17> kCodes{{
    {"BOOL", "bool", false},
    {"U8", "uint8", false},
    {"I8", "int8", false},
    {"I16", "int16", false},
    {"U16", "uint16", false},
    {"I32", "int32", false},
    {"U32", "uint32", false},
    {"I64", "int64", false},
    {"U64", "uint64", false},
    {"F16", "float16", true},
    {"BF16", "bfloat16", true},
    {"F32", "float32", true},
    {"F64", "float64", true},
    {"C64", "complex64", true},
    {"F8_E4M3", "float8_e4m3fn", true},
    {"F8_E5M2", "float8_e5m2", true},
    {"F8_E8M0", "float8_e8m0fnu", true},
}};

const DtypeCode* find_code(std::string_view code) {
  for (const DtypeCode& c : kCodes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

bool is_sub_byte(std::string_view code) {
  return code == "F4" || code == "F6_E2M3" || code == "F6_E3M2";
}

constexpr std::uint64_t kLengthBytes = 8;

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

// A shard is a file inside the index's directory (docs/formats.md, "Checkpoints"): its name
// is relative and has no ".." component, and no NUL, which would end the name open() sees.
void check_shard_name(std::string_view shard, const Path& pointer) {
  const std::string why = shard.empty()               ? "is empty"
                          : shard.starts_with('/')    ? "is an absolute path"
                          : shard.find('\0') != std::string_view::npos ? "holds a NUL byte"
                                                                        : "";
  std::string_view rest = shard;
  bool dot_dot = false;
  while (why.empty() && !dot_dot && !rest.empty()) {
    const std::size_t slash = rest.find('/');
    dot_dot = rest.substr(0, slash) == "..";
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  if (why.empty() && !dot_dot) return;
  fail(pointer, "shard " + quote_for_diagnostic(shard) + " " +
                    (dot_dot ? std::string("has a '..' component") : why) +
                    ": an index names files inside its own directory only");
}

struct Extent {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::size_t tensor = 0;  // index in the model's parameters
};

}  // namespace

std::optional<std::string_view> safetensors_dtype(std::string_view code) {
  const DtypeCode* c = find_code(code);
  if (c == nullptr) return std::nullopt;
  return c->torch;
}

namespace {

ModelTree empty_checkpoint(const std::string& file, std::string pointer) {
  ModelTree model;
  model.file = file;
  model.checkpoint = true;
  model.has_parameters = true;
  model.parameters_pointer = std::move(pointer);
  return model;
}

// The first name of `names` that repeats an earlier one, and both positions.
std::optional<std::pair<std::size_t, std::size_t>> first_repeat(
    const std::vector<std::string_view>& names) {
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (auto [at, fresh] = seen.try_emplace(names[k], k); !fresh) return std::pair{at->second, k};
  }
  return std::nullopt;
}

// Decodes one header and appends its tensors to `model` (names copied into model.names).
std::optional<Diagnostic> append_header(ModelTree& model, const std::string& name,
                                        std::string header, std::uint64_t file_size) {
  const std::uint64_t data_start = kLengthBytes + header.size();
  const std::uint64_t data_size = file_size >= data_start ? file_size - data_start : 0;
  const std::vector<std::size_t> lines = line_starts(header);
  if (header.capacity() < header.size() + kInputPadding)
    header.reserve(header.size() + kInputPadding);
  // Repeated keys are found below, where the byte of each entry is known.
  ParseOptions options;
  options.check_duplicate_keys = false;
  Expected<JsonDocument> parsed = parse_json_document(name, std::move(header), options);
  if (!parsed) {
    Diagnostic d = parsed.errors().front();
    const std::size_t line = std::clamp<std::size_t>(d.line, 1, lines.size());
    const std::size_t at = kLengthBytes + lines[line - 1] + (d.column > 0 ? d.column - 1 : 0);
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
    return byte_text(kLengthBytes + (m < offsets.size() ? offsets[m] : 0));
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
      const DtypeCode* dt = find_code(code);
      if (dt == nullptr) {
        fail(Path(pointer, "dtype"),
             who() + (is_sub_byte(code) ? " has the sub-byte dtype " : " has unknown dtype ") +
                 quote_for_diagnostic(code) +
                 (is_sub_byte(code) ? ", whose element size the planner cannot count" : ""));
      }
      const Path shape_pointer(pointer, "shape");
      simdjson::dom::array dims = expect_array(*shape, shape_pointer);
      const std::span<std::uint64_t> sizes = model.dims.allocate(dims.size());
      std::uint64_t bytes = *dtype_element_size(dt->torch);
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
                                  std::to_string(data_size) + " bytes (from " +
                                  byte_text(data_start) + " of the file)");
      }
      if (!fits || span[1] - span[0] != bytes) {
        fail(offsets_pointer, who() + " holds " + std::to_string(span[1] - span[0]) +
                                  " bytes, but its shape and dtype need " +
                                  (fits ? std::to_string(bytes) : "more than 2^64-1"));
      }
      extents.push_back({span[0], span[1], model.parameters.size()});
      member_of_tensor.push_back(member);
      auto& [fqn, parameter] = model.parameters.emplace_back();
      fqn = model.names.copy(key);
      parameter.shape = sizes;
      parameter.dtype = dt->torch;
      parameter.requires_grad = dt->floating;
    }
    // Empty tensors take no bytes and may share an offset; any two others must not overlap.
    extents.erase(std::remove_if(extents.begin(), extents.end(),
                                 [](const Extent& e) { return e.begin == e.end; }),
                  extents.end());
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.tensor < b.tensor;
    });
    for (std::size_t i = 1; i < extents.size(); ++i) {
      if (extents[i].begin < extents[i - 1].end) {
        const std::string_view a = model.parameters[extents[i - 1].tensor].first;
        const std::string_view b = model.parameters[extents[i].tensor].first;
        fail(Path(Path(root, b), "data_offsets"),
             "tensor " + quote_for_diagnostic(b) + " overlaps tensor " + quote_for_diagnostic(a) +
                 ": it begins at " + byte_text(data_start + extents[i].begin) +
                 " of the file, before the other ends at " +
                 byte_text(data_start + extents[i - 1].end));
      }
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

}  // namespace

Expected<ModelTree> decode_safetensors_header(const std::string& name, std::string header,
                                              std::uint64_t file_size) {
  ModelTree model = empty_checkpoint(name, "");
  if (std::optional<Diagnostic> d = append_header(model, name, std::move(header), file_size)) {
    return *d;
  }
  return model;
}

namespace {

// What read_header found: not a safetensors file (only without `who`), or one whose
// header decoded into the model (error empty) or did not.
struct HeaderRead {
  bool safetensors = true;
  std::optional<Diagnostic> error;
};

// Reads the header of the file at `path` into `model`. With `who` (the index naming it as
// a shard), a file that cannot be opened or is no safetensors file is an error instead.
HeaderRead read_header(const std::string& path, const std::string& who, ModelTree& model) {
  const bool required = !who.empty();
  const std::string of = required ? " (a shard of " + who + ")" : "";
  // Sniffing must not open a FIFO or a device: opening one waits for a writer, and closing
  // it again throws away what the writer sent, so the JSON reader that reads the input
  // afterwards would wait forever. stat() opens nothing; O_NONBLOCK keeps a FIFO that
  // replaced the file in between from blocking the open.
  if (struct stat named {}; ::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) {
    if (!required) return {false, {}};
    return {true, make_io_error(path, "is not a regular file" + of)};
  }
  const int fd = posix::openat_retrying(AT_FDCWD, path.c_str(),
                                        O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (!required) return {false, {}};  // the JSON reader reports it
    return {true, make_io_error(path, "cannot open: " + describe_errno(errno) + of)};
  }
  const posix::FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (!required) return {false, {}};
    return {true, make_io_error(path, "is not a regular file" + of)};
  }
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  auto read_at = [fd](char* out, std::uint64_t n, std::uint64_t offset) -> int {
    std::uint64_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return errno;
      if (got == 0) return EIO;  // shrank under us
      done += static_cast<std::uint64_t>(got);
    }
    return 0;
  };
  std::array<char, kLengthBytes> head{};
  const std::uint64_t have = std::min<std::uint64_t>(file_size, kLengthBytes);
  if (int err = read_at(head.data(), have, 0); err != 0) {
    return {true, posix::io_error(path, "read failed", err)};
  }
  if (!looks_like_safetensors(std::string_view(head.data(), have))) {
    if (!required) return {false, {}};
    return {true, make_error(path, "", "is not a safetensors file" + of)};
  }
  if (have < kLengthBytes) {
    return {true, make_error(path, "",
                             "a safetensors file starts with an 8-byte header length, but the "
                             "file has " +
                                 std::to_string(have) + " byte" + (have == 1 ? "" : "s"))};
  }
  std::uint64_t length = 0;
  for (std::size_t i = kLengthBytes; i-- > 0;) {
    length = length << 8 | static_cast<unsigned char>(head[i]);
  }
  if (length > file_size - kLengthBytes) {
    return {true, make_error(path, "",
                             "the safetensors header length at byte 0 (" + std::to_string(length) +
                                 " bytes) runs past the end of the file (" +
                                 std::to_string(file_size) + " bytes)")};
  }
  if (length >= kMaxInputSize) {
    return {true, make_io_error(path, "input too large: the safetensors header is 4 GiB or more (" +
                                          std::to_string(length) + " bytes, from byte 8)")};
  }
  std::string header;
  header.reserve(static_cast<std::size_t>(length) + kInputPadding);
  header.resize(static_cast<std::size_t>(length));
  if (int err = read_at(header.data(), length, kLengthBytes); err != 0) {
    return {true, posix::io_error(path, "read failed", err)};
  }
  return {true, append_header(model, path, std::move(header), file_size)};
}

}  // namespace

std::optional<Expected<ModelTree>> read_safetensors(const std::string& path) {
  if (path == "-") return std::nullopt;
  ModelTree model = empty_checkpoint(path, "");
  HeaderRead read = read_header(path, "", model);
  if (!read.safetensors) return std::nullopt;
  if (read.error) return Expected<ModelTree>(std::move(*read.error));
  return Expected<ModelTree>(std::move(model));
}

Expected<ModelTree> decode_checkpoint_index(const JsonDocument& index, const std::string& path) {
  const std::string& file = index.name();
  ModelTree model = empty_checkpoint(file, "/weight_map");
  // The weight_map's entries (tensor, shard) in the index's order; the shards in the
  // order first named.
  std::vector<std::pair<std::string_view, std::size_t>> listed;
  std::vector<std::string_view> shards;
  if (!index.keys_checked()) {
    if (std::optional<Diagnostic> repeated = find_duplicate_key(index)) return *repeated;
  }
  try {
    const Path root;
    simdjson::dom::object top = expect_object(index.root(), root);
    std::optional<element> map;
    for (auto it = top.begin(); it != top.end(); ++it) {
      if (it.key() == "weight_map") map = it.value();
    }
    const Path map_pointer(root, "weight_map");
    if (!map) fail(root, "a sharded checkpoint's index needs a 'weight_map'");
    simdjson::dom::object entries = expect_object(*map, map_pointer);
    listed.reserve(entries.size());
    std::unordered_map<std::string_view, std::size_t> shard_of_name;
    std::string_view last;  // consecutive entries mostly name the same shard
    std::size_t last_shard = 0;
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      const std::string_view shard = expect_string(it.value(), Path(map_pointer, it.key()));
      if (shards.empty() || shard != last) {
        auto [s, fresh] = shard_of_name.try_emplace(shard, shards.size());
        if (fresh) {
          check_shard_name(shard, Path(map_pointer, it.key()));
          shards.push_back(shard);
        }
        last = shard;
        last_shard = s->second;
      }
      listed.emplace_back(it.key(), last_shard);
    }
  } catch (const DecodeError& error) {
    return to_diagnostic(error, file);
  }
  NameIndex by_name;  // keys are unique: checked above
  by_name.build(listed.size(), [&listed](std::size_t k) { return listed[k].first; });
  constexpr std::size_t kNowhere = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> found(listed.size(), kNowhere);  // the shard each entry is in
  // Shards are named relative to the index's directory (the current one for stdin).
  const std::size_t slash = path == "-" ? std::string::npos : path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  auto at_entry = [&file](std::string_view tensor, std::string message) {
    return make_error(file, pointer_join("/weight_map", tensor), std::move(message));
  };
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::string shard_path = dir + std::string(shards[s]);  // relative: checked above
    const std::size_t from = model.parameters.size();
    if (HeaderRead read = read_header(shard_path, file, model); read.error) return *read.error;
    for (std::size_t k = from; k < model.parameters.size(); ++k) {
      const std::string_view name = model.parameters[k].first;
      const std::optional<std::size_t> entry =
          by_name.find(name, [&listed](std::size_t i) { return listed[i].first; });
      if (!entry) {
        return make_error(file, "/weight_map",
                          "tensor " + quote_for_diagnostic(name) + " of shard " +
                              quote_for_diagnostic(shards[s]) + " is not in the weight_map");
      }
      if (found[*entry] != kNowhere) {
        return at_entry(name, "tensor " + quote_for_diagnostic(name) + " is in two shards, " +
                                  quote_for_diagnostic(shards[found[*entry]]) + " and " +
                                  quote_for_diagnostic(shards[s]));
      }
      found[*entry] = s;
      if (listed[*entry].second != s) {
        return at_entry(name, "tensor " + quote_for_diagnostic(name) + " is in shard " +
                                  quote_for_diagnostic(shards[s]) + ", not in " +
                                  quote_for_diagnostic(shards[listed[*entry].second]) +
                                  " as the weight_map says");
      }
    }
  }
  for (std::size_t k = 0; k < listed.size(); ++k) {
    if (found[k] != kNowhere) continue;
    return at_entry(listed[k].first, "tensor " + quote_for_diagnostic(listed[k].first) +
                                         " is not in shard " +
                                         quote_for_diagnostic(shards[listed[k].second]));
  }
  return model;
}

Expected<ModelTree> decode_model_input(const JsonDocument& document, const std::string& path) {
  if (guess_dump_kind(document) == DumpKind::kCheckpointIndex) {
    return decode_checkpoint_index(document, path);
  }
  return decode_model_tree(document);
}

}  // namespace hpfreeze
