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

// The error for a header of `length` bytes that does not fit in a file of `file_size` bytes
// after its 8-byte length; nullopt when it fits.
std::optional<Diagnostic> header_past_end(const std::string& name, std::uint64_t length,
                                          std::uint64_t file_size);

// A ModelTree of no parameters yet, for the checkpoint `file`, whose parameters are at
// `pointer` (a header's root, an index's "/weight_map").
ModelTree empty_checkpoint(const std::string& file, std::string pointer);

// Decodes one header (the JSON text after the length, of a file of `file_size` bytes named
// `name`) and appends its tensors to `model`, names copied into model.names; the first
// error, naming the file and the byte, if any. A header that does not fit in `file_size` is
// the length check's error (header_past_end), never a data section of 0 bytes.
std::optional<Diagnostic> append_safetensors_header(ModelTree& model, const std::string& name,
                                                    std::string header, std::uint64_t file_size);

}  // namespace hpfreeze
