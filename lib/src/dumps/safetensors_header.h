#pragma once
// The safetensors header decoder (internal to lib/): safetensors_header.cc decodes one
// header, checkpoint_decode.cc its length and the sharded index; the loader
// (lib/src/inputs/model_input.cc) reads the files.

#include <cstdint>
#include <optional>
#include <string>

#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// A safetensors file starts with its header's length, 8 bytes little-endian.
inline constexpr std::uint64_t kSafetensorsLengthBytes = 8;

// A ModelTree of no parameters yet, for the checkpoint `file`, whose parameters are at
// `pointer` (a header's root, an index's "/weight_map").
ModelTree empty_checkpoint(const std::string& file, std::string pointer);

// Decodes one header (the JSON text after the length, of a file of `file_size` bytes named
// `name`) and appends its tensors to `model`, names copied into model.names; the first
// error, naming the file and the byte, if any.
std::optional<Diagnostic> append_safetensors_header(ModelTree& model, const std::string& name,
                                                    std::string header, std::uint64_t file_size);

}  // namespace hpfreeze
