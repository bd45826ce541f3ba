#pragma once
// Test support: runs the calling thread on one CPU for the lifetime of an object, as
// `taskset -c N` runs a process, so that code that splits work across threads when a
// second CPU is there can be checked both ways.

#include <sched.h>

namespace hpfreeze::testing {

class OneCpu {
 public:
  OneCpu() {
    ok_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
    if (!ok_) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &saved_)) {
        CPU_SET(cpu, &one);
        break;
      }
    }
    ok_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;
  ~OneCpu() {
    if (ok_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  cpu_set_t saved_{};
  bool ok_ = false;
};

}  // namespace hpfreeze::testing
