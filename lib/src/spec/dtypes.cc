// torch's dtypes and the safetensors codes (dtypes.h).
#include "spec/dtypes.h"

#include <array>

namespace hpfreeze {
namespace {

// torch's dtype names and aliases with their itemsize. Sub-byte types (uint1..uint7,
// int1..int7, quint4x2, quint2x4) are left out: their itemsize does not say what a shape
// of them stores.
constexpr std::array<Dtype, 40> kDtypes{{
    {"float32", 4, true},        {"float", 4, true},
    {"float64", 8, true},        {"double", 8, true},
    {"float16", 2, true},        {"half", 2, true},
    {"bfloat16", 2, true},       {"bf16", 2, true},
    {"complex32", 4, true},      {"chalf", 4, true},
    {"complex64", 8, true},      {"cfloat", 8, true},
    {"complex128", 16, true},    {"cdouble", 16, true},
    {"float8_e4m3fn", 1, true},  {"float8_e4m3fnuz", 1, true},
    {"float8_e5m2", 1, true},    {"float8_e5m2fnuz", 1, true},
    {"float8_e8m0fnu", 1, true}, {"float4_e2m1fn_x2", 1, true},
    {"uint8", 1, false},         {"uint16", 2, false},
    {"uint32", 4, false},        {"uint64", 8, false},
    {"int8", 1, false},          {"int16", 2, false},
    {"short", 2, false},         {"int32", 4, false},
    {"int", 4, false},           {"int64", 8, false},
    {"long", 8, false},          {"bool", 1, false},
    {"quint8", 1, false},        {"qint8", 1, false},
    {"qint32", 4, false},        {"bits8", 1, false},
    {"bits16", 2, false},        {"bits1x8", 1, false},
    {"bits2x4", 1, false},       {"bits4x2", 1, false},
}};

struct SafetensorsCode {
  std::string_view code;
  std::string_view torch;
};

// The safetensors codes torch can hold, with torch's names.
constexpr std::array<SafetensorsCode, 17> kSafetensorsCodes{{
    {"BOOL", "bool"},
    {"U8", "uint8"},
    {"I8", "int8"},
    {"I16", "int16"},
    {"U16", "uint16"},
    {"I32", "int32"},
    {"U32", "uint32"},
    {"I64", "int64"},
    {"U64", "uint64"},
    {"F16", "float16"},
    {"BF16", "bfloat16"},
    {"F32", "float32"},
    {"F64", "float64"},
    {"C64", "complex64"},
    {"F8_E4M3", "float8_e4m3fn"},
    {"F8_E5M2", "float8_e5m2"},
    {"F8_E8M0", "float8_e8m0fnu"},
}};

}  // namespace

const Dtype* find_dtype(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (const Dtype& d : kDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::optional<std::uint64_t> dtype_element_size(std::string_view name) {
  const Dtype* d = find_dtype(name);
  if (d == nullptr) return std::nullopt;
  return d->size;
}

const Dtype* safetensors_dtype(std::string_view code) {
  for (const SafetensorsCode& c : kSafetensorsCodes) {
    if (c.code == code) return find_dtype(c.torch);
  }
  return nullptr;
}

bool is_sub_byte_safetensors_dtype(std::string_view code) {
  return code == "F4" || code == "F6_E2M3" || code == "F6_E3M2";
}

}  // namespace hpfreeze
