#pragma once
// The clock of the stage times that -v shows (LoadStage, FreezeStages): wall-clock
// milliseconds on a monotonic clock, measured the same way in every stage.

#include <chrono>

namespace hpfreeze {

using StageClock = std::chrono::steady_clock;

// Milliseconds from `start` to now.
inline double ms_since(StageClock::time_point start) {
  return std::chrono::duration<double, std::milli>(StageClock::now() - start).count();
}

}  // namespace hpfreeze
