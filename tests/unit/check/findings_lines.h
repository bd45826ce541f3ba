#pragma once
// Findings as the lines the tests compare: "SEVERITY: FILE: POINTER: MESSAGE".

#include <string>
#include <vector>

#include "hpfreeze/base/diagnostic.h"
#include "json/diagnostic_json.h"  // severity_name

namespace hpfreeze::check_test {

using Lines = std::vector<std::string>;

inline std::string render(const Diagnostic& d) {
  return std::string(severity_name(d.severity)) + ": " + d.location_and_message();
}

inline Lines render_all(const Diagnostics& ds) {
  Lines out;
  for (const Diagnostic& d : ds) out.push_back(render(d));
  return out;
}

}  // namespace hpfreeze::check_test
