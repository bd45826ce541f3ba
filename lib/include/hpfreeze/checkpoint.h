#pragma once
// Parameter shapes from a real checkpoint (docs/formats.md, "Checkpoints"): a safetensors
// file, or a sharded checkpoint's index (`*.safetensors.index.json`) and the shards its
// weight_map names. Only the headers are read, never the tensor data. The result is a
// ModelTree with parameters and no modules (`checkpoint` set), for `report` and `check`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

// torch's name of a safetensors dtype code ("BF16" -> "bfloat16"); nullopt for the
// sub-byte codes (F4, F6_E2M3, F6_E3M2) and any code not in the table.
std::optional<std::string_view> safetensors_dtype(std::string_view code);

// Decodes a safetensors header: `header` is the JSON text after the 8-byte length of a
// file of `file_size` bytes named `name`. Errors name the file and the byte offset in it.
Expected<ModelTree> decode_safetensors_header(const std::string& name, std::string header,
                                              std::uint64_t file_size);

// Reads the header of the safetensors file at `path` (a regular file; "-" is never one):
// nullopt when the file does not start like one (no NUL byte in its first 8 bytes: JSON
// text has none, and every header length below 2^56 has one), so the caller reads it as
// JSON. Read failures are I/O errors; a corrupt header is an error naming the byte.
std::optional<Expected<ModelTree>> read_safetensors(const std::string& path);

// The parameters of the sharded checkpoint `index` (parsed; `path` locates it, so that
// the shards are found relative to its directory), every shard's header read.
Expected<ModelTree> decode_checkpoint_index(const JsonDocument& index, const std::string& path);

// --model of `report` and `check`: a sharded checkpoint's index (recognised by its
// `weight_map`, see dump_kind.h), else a model tree dump.
Expected<ModelTree> decode_model_input(const JsonDocument& document, const std::string& path);

}  // namespace hpfreeze
