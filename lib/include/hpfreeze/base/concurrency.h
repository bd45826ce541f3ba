#pragma once
// How many CPUs a run may use: an input of every request whose pass can put work on a
// second thread (freeze, check, thaw, expand). The front end reads what this process may
// run on (Concurrency::of_this_process) and passes it in; no pass asks the system itself,
// and whether a second thread is worth starting is decided here alone.

#include <cstddef>

namespace hpfreeze {

struct Concurrency {
  std::size_t cpus = 1;  // at least 1; 1, the default, keeps every pass on one thread

  // Work is split across two threads only when there is a second CPU to run the second:
  // two threads on one CPU only take turns.
  [[nodiscard]] bool second_thread() const { return cpus > 1; }

  // The CPUs of this process's affinity mask (`taskset -c 3` makes it 1), at least 1.
  static Concurrency of_this_process();
};

}  // namespace hpfreeze
