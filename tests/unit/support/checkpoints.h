#pragma once
// Safetensors headers made in memory for the checkpoint tests, and a decoded model's first
// error as one line. Header only.

#include <string>
#include <string_view>

#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze::test_support {

// A header of one tensor "w": {"w":{"dtype":...,"shape":...,"data_offsets":...}}, each part
// given as its JSON text.
inline std::string one_tensor(std::string_view dtype, std::string_view shape,
                              std::string_view offsets) {
  return R"({"w":{"dtype":")" + std::string(dtype) + R"(","shape":)" + std::string(shape) +
         R"(,"data_offsets":)" + std::string(offsets) + "}}";
}

// "<ok>", or the first error as "FILE: POINTER: MESSAGE".
inline std::string error_of(const Expected<ModelTree>& m) {
  if (m) return "<ok>";
  const Diagnostic& d = m.errors().front();
  return d.file + ": " + d.pointer + ": " + d.message;
}

}  // namespace hpfreeze::test_support
