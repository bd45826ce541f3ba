// The one --model dispatch (model_input.h): safetensors file, sharded index, model tree dump.
#include "inputs/model_input.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <utility>

#include "dumps/checkpoint.h"
#include "dumps/checkpoint_index.h"
#include "dumps/safetensors_header.h"
#include "inputs/load_steps.h"

namespace hpfreeze {
namespace {

// What reading a header found: no safetensors file (only when it is not `required`), or
// one whose header decoded into the model (error empty) or did not.
struct HeaderRead {
  bool safetensors = true;
  std::optional<Diagnostic> error;
};

// Reads the header of the file at `path` into `model`. When `required` (a shard an index
// names), a file that cannot be opened or is no safetensors file is an error instead.
HeaderRead read_header(FileSystem& fs, const std::string& path, bool required, ModelTree& model) {
  Expected<std::unique_ptr<RegularFile>> file = fs.open_regular(path);
  if (!file) {
    if (!required) return {false, {}};  // the JSON reader says why
    return {true, std::move(file.errors().front())};
  }
  RegularFile& f = **file;
  const std::uint64_t file_size = f.size();
  std::string head;
  if (int err = f.read_at(0, std::min<std::uint64_t>(file_size, kSafetensorsLengthBytes), head);
      err != 0) {
    return {true, make_io_error(path, "read failed: " + describe_errno(err))};
  }
  if (!looks_like_safetensors(head)) {
    if (!required) return {false, {}};
    return {true, make_error(path, "", "is not a safetensors file")};
  }
  Expected<std::uint64_t> length = safetensors_header_length(path, head, file_size);
  if (!length) return {true, std::move(length.errors().front())};
  std::string header;
  if (int err = f.read_at(kSafetensorsLengthBytes, *length, header, kInputPadding); err != 0) {
    return {true, make_io_error(path, "read failed: " + describe_errno(err))};
  }
  return {true, append_safetensors_header(model, path, std::move(header), file_size)};
}

// A directory given as --model: the error says which file of it to pass, as a checkpoint
// directory holds its index or its one safetensors file.
Diagnostic checkpoint_directory_error(FileSystem& fs, const std::string& path) {
  const std::string dir = path.ends_with('/') ? path : path + "/";
  static constexpr std::pair<std::string_view, std::string_view> kFiles[] = {
      {"model.safetensors.index.json", "index"}, {"model.safetensors", "file"}};
  for (const auto& [name, what] : kFiles) {
    const std::string file = dir + std::string(name);
    if (fs.kind_of(file) == FileKind::kRegular) {
      return make_io_error(
          path, "is a directory; pass the checkpoint's " + std::string(what) + ": --model " + file);
    }
  }
  return make_io_error(path,
                       "is a directory; --model takes a file: a model tree dump, a checkpoint's "
                       "model.safetensors or a sharded one's model.safetensors.index.json");
}

// The index's shards read into its tree, each checked against the weight_map.
Expected<ModelTree> read_shards(FileSystem& fs, const JsonDocument& document,
                                const std::string& path) {
  Expected<CheckpointIndex> index = CheckpointIndex::decode(document, path);
  if (!index) return std::move(index.errors());
  for (std::size_t s = 0; s < index->shards(); ++s) {
    const std::size_t from = index->model().parameters.size();
    if (HeaderRead read = read_header(fs, index->shard_path(s), true, index->model()); read.error) {
      // Whatever is wrong with a shard, the index that names it is named too.
      read.error->message += " (a shard of " + document.name() + ")";
      return std::move(*read.error);
    }
    if (std::optional<Diagnostic> wrong = index->check_shard(s, from)) return std::move(*wrong);
  }
  return std::move(*index).finish();
}

}  // namespace

std::optional<Expected<ModelTree>> read_checkpoint_file(FileSystem& fs, const std::string& path) {
  if (path == "-") return std::nullopt;
  if (fs.kind_of(path) == FileKind::kDirectory) {
    return Expected<ModelTree>(checkpoint_directory_error(fs, path));
  }
  ModelTree model = empty_checkpoint(path, "");
  HeaderRead read = read_header(fs, path, false, model);
  if (!read.safetensors) return std::nullopt;
  if (read.error) return Expected<ModelTree>(std::move(*read.error));
  return Expected<ModelTree>(std::move(model));
}

Expected<ModelTree> decode_model_document(FileSystem& fs, const JsonDocument& document,
                                          const std::string& path) {
  if (guess_dump_kind(document) == DumpKind::kCheckpointIndex) {
    return read_shards(fs, document, path);
  }
  return decode_model_tree(document);
}

DumpKind model_kind_at(FileSystem& fs, const std::string& path) {
  if (read_checkpoint_file(fs, path)) return DumpKind::kSafetensors;
  ParseScratch scratch;
  scratch.close();  // one parse: nothing to hand on
  LoadStage stage;
  Expected<JsonDocument> document =
      parse_stage(read_stage(fs, path, stage, {}), stage, scratch, true);
  if (!document) return DumpKind::kUnknown;
  const DumpKind kind = guess_dump_kind(*document);
  return kind == DumpKind::kModel || kind == DumpKind::kCheckpointIndex ? kind : DumpKind::kUnknown;
}

}  // namespace hpfreeze
