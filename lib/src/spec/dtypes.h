#pragma once
// torch's dtypes (docs/capacity.md, "Element sizes"): each name's element size and whether it
// is floating point, and the safetensors codes (docs/formats.md, "Checkpoints") with the
// torch name each stands for. One table for every reader: the checkpoint decoder sizes
// tensors with it, the planner and the report count bytes with it.

#include <cstdint>
#include <optional>
#include <string_view>

namespace hpfreeze {

struct Dtype {
  std::string_view name;  // torch's spelling, without "torch."
  std::uint64_t size;     // torch's itemsize
  bool floating;          // real or complex floating point: can require grad
};

// The dtype a torch name stands for, "torch." prefix and the short aliases (half, float,
// double, long, int, short, cfloat, ...) accepted; nullptr for a name not in the table,
// sub-byte types included (their itemsize does not say what a shape of them stores).
const Dtype* find_dtype(std::string_view name);

// Bytes per element of a torch dtype name (torch's dtype.itemsize); nullopt as find_dtype.
std::optional<std::uint64_t> dtype_element_size(std::string_view name);

// The torch dtype of a safetensors dtype code ("BF16" -> bfloat16); nullptr for the sub-byte
// codes (F4, F6_E2M3, F6_E3M2) and any code not in the table.
const Dtype* safetensors_dtype(std::string_view code);

// Whether `code` is a sub-byte safetensors code, whose element size cannot be counted.
bool is_sub_byte_safetensors_dtype(std::string_view code);

}  // namespace hpfreeze
