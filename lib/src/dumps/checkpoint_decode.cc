// Checkpoints as --model (checkpoint.h, docs/formats.md "Checkpoints"): safetensors files,
// their headers read by offset (the decoder: safetensors_header.cc), and the sharded
// checkpoint's index.
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
#include "dumps/safetensors_header.h"
#include "hpfreeze/checkpoint.h"
#include "hpfreeze/dump_kind.h"
#include "hpfreeze/io.h"
#include "io/io_posix.h"

namespace hpfreeze {

using namespace dom_decode;

namespace {

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

// What read_header found: not a safetensors file (only when not `required`), or one whose
// header decoded into the model (error empty) or did not.
struct HeaderRead {
  bool safetensors = true;
  std::optional<Diagnostic> error;
};

// Reads the header of the file at `path` into `model`. When `required` (a shard an index
// names), a file that cannot be opened or is no safetensors file is an error instead.
HeaderRead read_header(const std::string& path, bool required, ModelTree& model) {
  // Sniffing must not open a FIFO or a device: opening one waits for a writer, and closing
  // it again throws away what the writer sent, so the JSON reader that reads the input
  // afterwards would wait forever. stat() opens nothing; O_NONBLOCK keeps a FIFO that
  // replaced the file in between from blocking the open.
  if (struct stat named {}; ::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) {
    if (!required) return {false, {}};
    return {true, make_io_error(path, "is not a regular file")};
  }
  const int fd = posix::openat_retrying(AT_FDCWD, path.c_str(),
                                        O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (!required) return {false, {}};  // the JSON reader reports it
    return {true, make_io_error(path, "cannot open: " + describe_errno(errno))};
  }
  const posix::FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (!required) return {false, {}};
    return {true, make_io_error(path, "is not a regular file")};
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
  std::array<char, kSafetensorsLengthBytes> head{};
  const std::uint64_t have = std::min<std::uint64_t>(file_size, kSafetensorsLengthBytes);
  if (int err = read_at(head.data(), have, 0); err != 0) {
    return {true, posix::io_error(path, "read failed", err)};
  }
  if (!looks_like_safetensors(std::string_view(head.data(), have))) {
    if (!required) return {false, {}};
    return {true, make_error(path, "", "is not a safetensors file")};
  }
  if (have < kSafetensorsLengthBytes) {
    return {true, make_error(path, "",
                             "a safetensors file starts with an 8-byte header length, but the "
                             "file has " +
                                 std::to_string(have) + " byte" + (have == 1 ? "" : "s"))};
  }
  std::uint64_t length = 0;
  for (std::size_t i = kSafetensorsLengthBytes; i-- > 0;) {
    length = length << 8 | static_cast<unsigned char>(head[i]);
  }
  if (length > file_size - kSafetensorsLengthBytes) {
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
  if (int err = read_at(header.data(), length, kSafetensorsLengthBytes); err != 0) {
    return {true, posix::io_error(path, "read failed", err)};
  }
  return {true, append_safetensors_header(model, path, std::move(header), file_size)};
}

// A directory given as --model: the error says which file of it to pass, as a checkpoint
// directory holds its index or its one safetensors file; nullopt for anything else.
std::optional<Diagnostic> checkpoint_directory_error(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  const std::string dir = path.ends_with('/') ? path : path + "/";
  static constexpr std::pair<std::string_view, std::string_view> kFiles[] = {
      {"model.safetensors.index.json", "index"}, {"model.safetensors", "file"}};
  for (const auto& [name, what] : kFiles) {
    const std::string file = dir + std::string(name);
    if (struct stat found{}; ::stat(file.c_str(), &found) == 0 && S_ISREG(found.st_mode)) {
      return make_io_error(
          path, "is a directory; pass the checkpoint's " + std::string(what) + ": --model " + file);
    }
  }
  return make_io_error(path,
                       "is a directory; --model takes a file: a model tree dump, a checkpoint's "
                       "model.safetensors or a sharded one's model.safetensors.index.json");
}

}  // namespace

std::optional<Expected<ModelTree>> read_safetensors(const std::string& path) {
  if (path == "-") return std::nullopt;
  if (std::optional<Diagnostic> directory = checkpoint_directory_error(path)) {
    return Expected<ModelTree>(std::move(*directory));
  }
  ModelTree model = empty_checkpoint(path, "");
  HeaderRead read = read_header(path, false, model);
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
    if (HeaderRead read = read_header(shard_path, true, model); read.error) {
      // Whatever is wrong with a shard, the index that names it is named too.
      read.error->message += " (a shard of " + file + ")";
      return std::move(*read.error);
    }
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
