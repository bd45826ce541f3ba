#pragma once
// What loading one input did, for a command's `-v` stages (FreezeStages::Input).

#include <cstddef>
#include <string>

namespace hpfreeze {

// Times are wall-clock milliseconds on the thread that ran the step.
struct LoadStage {
  std::string name;  // display name
  std::size_t bytes = 0;
  double read_ms = 0;
  double parse_ms = 0;
  double decode_ms = 0;
  bool read = false;
  bool parsed = false;
};

}  // namespace hpfreeze
