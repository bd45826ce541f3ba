#pragma once
// The capacity model's errors about the request itself (a mesh, a sweep, a budget): no
// file and no pointer, since no input is at fault.

#include <string>
#include <utility>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze::capacity_detail {

inline Diagnostic usage_error(std::string message) {
  // No finding: report makes it a usage error, or its own finding (HPF509, HPF513).
  return make_error({}, {}, std::move(message));
}

}  // namespace hpfreeze::capacity_detail
