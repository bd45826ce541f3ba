// torch's dtypes: the element size of each name, and the bytes one element of a parameter
// costs under an optimizer (docs/capacity.md, "Accounting" and "Element sizes").
#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "capacity/capacity.h"

namespace hpfreeze {
namespace {

struct DtypeInfo {
  std::string_view name;
  std::uint64_t size;
  bool floating;  // real or complex floating point: can require grad
};

// torch's dtype names and aliases with their itemsize. Sub-byte types (uint1..uint7,
// int1..int7, quint4x2, quint2x4) are left out: their itemsize does not say what a shape
// of them stores.
constexpr std::array<DtypeInfo, 40> kDtypes{{
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

const DtypeInfo* find_dtype(std::string_view dtype) {
  if (dtype.starts_with("torch.")) dtype.remove_prefix(6);
  for (const DtypeInfo& d : kDtypes) {
    if (d.name == dtype) return &d;
  }
  return nullptr;
}

}  // namespace

std::optional<std::uint64_t> dtype_element_size(std::string_view dtype) {
  const DtypeInfo* d = find_dtype(dtype);
  if (d == nullptr) return std::nullopt;
  return d->size;
}

std::uint64_t bytes_per_element(std::string_view dtype, std::uint64_t element_size,
                                bool requires_grad, Optimizer optimizer) {
  const DtypeInfo* d = find_dtype(dtype);
  if (optimizer == Optimizer::kNone || !requires_grad || d == nullptr || !d->floating) {
    return element_size;
  }
  const std::uint64_t master = element_size < 4 ? 4 : 0;
  const std::uint64_t moment = std::max<std::uint64_t>(4, element_size);
  const std::uint64_t moments = optimizer == Optimizer::kSgd        ? 0
                                : optimizer == Optimizer::kMomentum ? 1
                                                                    : 2;
  return 2 * element_size + master + moments * moment;
}

ElementCost element_cost(std::string_view dtype, std::uint64_t element_size, bool requires_grad,
                         Optimizer optimizer, int zero_stage) {
  const std::uint64_t all = bytes_per_element(dtype, element_size, requires_grad, optimizer);
  if (zero_stage >= 3) return {0, all};
  // Without gradients and state (all == the weight) stages 1 and 2 split nothing.
  const std::uint64_t weight = element_size;
  const std::uint64_t grad = all == weight ? 0 : element_size;
  const std::uint64_t state = all - weight - grad;  // master copy and moments
  switch (zero_stage) {
    case 1:
      return {weight + grad, state};
    case 2:
      return {weight, grad + state};
    default:
      return {all, 0};
  }
}

}  // namespace hpfreeze
