// Checkpoints as --model (checkpoint.h, docs/formats.md "Checkpoints"), the decoders only:
// a safetensors file's header length, and the sharded checkpoint's index
// (dumps/checkpoint_index.h). One header is decoded in safetensors_header.cc; the files are
// read by the loader (lib/src/inputs/model_input.cc).
#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include "dumps/checkpoint.h"
#include "dumps/checkpoint_index.h"
#include "dumps/dom_decode.h"
#include "dumps/safetensors_header.h"
#include "io/io.h"

namespace hpfreeze {

using namespace dom_decode;

namespace {

// A shard is a file inside the index's directory (docs/formats.md, "Checkpoints"): its name
// is relative and has no ".." component, and no NUL, which would end the name open() sees.
void check_shard_name(std::string_view shard, const Path& pointer) {
  const std::string why = shard.empty()                                ? "is empty"
                          : shard.starts_with('/')                     ? "is an absolute path"
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

constexpr std::size_t kNowhere = std::numeric_limits<std::size_t>::max();

}  // namespace

std::optional<Diagnostic> header_past_end(const std::string& name, std::uint64_t length,
                                          std::uint64_t file_size) {
  if (file_size >= kSafetensorsLengthBytes && length <= file_size - kSafetensorsLengthBytes) {
    return std::nullopt;
  }
  return make_error(name, "",
                    "the safetensors header length at byte 0 (" + plural(length, "byte") +
                        ") runs past the end of the file (" + plural(file_size, "byte") + ")");
}

Expected<std::uint64_t> safetensors_header_length(const std::string& name, std::string_view head,
                                                  std::uint64_t file_size) {
  const std::size_t have = head.size();
  if (have < kSafetensorsLengthBytes) {
    return make_error(name, "",
                      "a safetensors file starts with an 8-byte header length, but the file has " +
                          std::to_string(have) + " byte" + (have == 1 ? "" : "s"));
  }
  std::uint64_t length = 0;
  for (std::size_t i = kSafetensorsLengthBytes; i-- > 0;) {
    length = length << 8 | static_cast<unsigned char>(head[i]);
  }
  if (std::optional<Diagnostic> d = header_past_end(name, length, file_size)) return *d;
  if (length >= kMaxInputSize) {
    return make_io_error(name, "input too large: the safetensors header is 4 GiB or more (" +
                                   plural(length, "byte") + ", from byte 8)");
  }
  return length;
}

Expected<CheckpointIndex> CheckpointIndex::decode(const JsonDocument& index,
                                                  const std::string& path) {
  const std::string& file = index.name();
  CheckpointIndex out;
  out.model_ = empty_checkpoint(file, "/weight_map");
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
    out.listed_.reserve(entries.size());
    std::unordered_map<std::string_view, std::size_t> shard_of_name;
    std::string_view last;  // consecutive entries mostly name the same shard
    std::size_t last_shard = 0;
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      const std::string_view shard = expect_string(it.value(), Path(map_pointer, it.key()));
      if (out.shards_.empty() || shard != last) {
        auto [s, fresh] = shard_of_name.try_emplace(shard, out.shards_.size());
        if (fresh) {
          check_shard_name(shard, Path(map_pointer, it.key()));
          out.shards_.push_back(shard);
        }
        last = shard;
        last_shard = s->second;
      }
      out.listed_.emplace_back(it.key(), last_shard);
    }
  } catch (const DecodeError& error) {
    return to_diagnostic(error, file);
  }
  // Keys are unique: checked above.
  out.by_name_.build(out.listed_.size(),
                     [&listed = out.listed_](std::size_t k) { return listed[k].first; });
  out.found_.assign(out.listed_.size(), kNowhere);
  // Shards are named relative to the index's directory (the current one for stdin).
  const std::size_t slash = path == "-" ? std::string::npos : path.rfind('/');
  out.dir_ = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return out;
}

std::string CheckpointIndex::shard_path(std::size_t s) const {
  return dir_ + std::string(shards_[s]);  // relative: checked by decode
}

std::optional<Diagnostic> CheckpointIndex::check_shard(std::size_t s, std::size_t from) {
  const std::string& file = model_.file;
  for (std::size_t k = from; k < model_.parameters.size(); ++k) {
    const std::string_view name = model_.parameters[k].first;
    const std::optional<std::size_t> entry =
        by_name_.find(name, [this](std::size_t i) { return listed_[i].first; });
    if (!entry) {
      return make_error(file, "/weight_map",
                        "tensor " + quote_for_diagnostic(name) + " of shard " +
                            quote_for_diagnostic(shards_[s]) + " is not in the weight_map");
    }
    if (found_[*entry] != kNowhere) {
      return make_error(file, pointer_join("/weight_map", name),
                        "tensor " + quote_for_diagnostic(name) + " is in two shards, " +
                            quote_for_diagnostic(shards_[found_[*entry]]) + " and " +
                            quote_for_diagnostic(shards_[s]));
    }
    found_[*entry] = s;
    if (listed_[*entry].second != s) {
      return make_error(file, pointer_join("/weight_map", name),
                        "tensor " + quote_for_diagnostic(name) + " is in shard " +
                            quote_for_diagnostic(shards_[s]) + ", not in " +
                            quote_for_diagnostic(shards_[listed_[*entry].second]) +
                            " as the weight_map says");
    }
  }
  return std::nullopt;
}

Expected<ModelTree> CheckpointIndex::finish() && {
  for (std::size_t k = 0; k < listed_.size(); ++k) {
    if (found_[k] != kNowhere) continue;
    return make_error(model_.file, pointer_join("/weight_map", listed_[k].first),
                      "tensor " + quote_for_diagnostic(listed_[k].first) + " is not in shard " +
                          quote_for_diagnostic(shards_[listed_[k].second]));
  }
  return std::move(model_);
}

}  // namespace hpfreeze
