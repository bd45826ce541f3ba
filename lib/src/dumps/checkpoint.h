#pragma once
// Parameter shapes from a real checkpoint (docs/formats.md, "Checkpoints"): a safetensors
// file, or a sharded checkpoint's index (`*.safetensors.index.json`, dumps/checkpoint_index.h)
// and the shards its weight_map names. Only the headers are read, never the tensor data,
// and by the loader (lib/src/inputs/model_input.cc): these are the decoders. The result is
// a ModelTree with parameters and no modules (`checkpoint` set), for `report` and `check`.

#include <cstdint>
#include <string>
#include <string_view>

#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// Decodes a safetensors header: `header` is the JSON text after the 8-byte length of a
// file of `file_size` bytes named `name`. Errors name the file and the byte offset in it.
Expected<ModelTree> decode_safetensors_header(const std::string& name, std::string header,
                                              std::uint64_t file_size);

// The header length a safetensors file's first bytes give (`head`: its first 8 bytes, or
// the whole file when shorter), checked against the file's size: errors for a file of fewer
// than 8 bytes, a length past the end, and a header of 4 GiB or more (kIo: too large to
// read, as read_input says of an input). The reading of files is the loader's
// (lib/src/inputs/model_input.cc).
Expected<std::uint64_t> safetensors_header_length(const std::string& name, std::string_view head,
                                                  std::uint64_t file_size);

}  // namespace hpfreeze
