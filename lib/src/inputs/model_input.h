#pragma once
// --model of report and check (InputKind::kModel, inputs.h): one flag, three formats, told
// apart here alone, by content, in the way bloaty's GetObjectFile tries each format in
// turn. A safetensors file is read header only, before anything is parsed; anything else
// is read as JSON, and a parsed document is a sharded checkpoint's index (its shards'
// headers read) or a model tree dump. A new --model format is a decoder in dumps/, a
// DumpKind, and one branch here. Private to lib/src/inputs.

#include <optional>
#include <string>

#include "dumps/dump_kind.h"
#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "io/io.h"
#include "json/json_document.h"

namespace hpfreeze {

// The first step: the checkpoint `path` holds, read header only, or nullopt when it is to
// be read as JSON (no NUL in its first 8 bytes, or a file the JSON reader will name the
// trouble of: missing, a FIFO, a device; "-" is always read as JSON). A directory is an
// error naming the file of it to pass. Read failures are I/O errors; a corrupt header is an
// error naming the byte.
std::optional<Expected<ModelTree>> read_checkpoint_file(FileSystem& fs, const std::string& path);

// The second step, for a --model read as JSON: a sharded checkpoint's index (recognised by
// its `weight_map`, dump_kind.h), its shards read from beside `path`; else a model tree dump.
Expected<ModelTree> decode_model_document(FileSystem& fs, const JsonDocument& document,
                                          const std::string& path);

// What the file at `path` is when it is a model in one of those formats (kSafetensors,
// kModel, kCheckpointIndex), else kUnknown: for a model given where a meta goes.
DumpKind model_kind_at(FileSystem& fs, const std::string& path);

}  // namespace hpfreeze
