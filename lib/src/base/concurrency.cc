#include "hpfreeze/base/concurrency.h"

#include <sched.h>

namespace hpfreeze {

Concurrency Concurrency::of_this_process() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  const int count = CPU_COUNT(&set);
  return {count > 1 ? static_cast<std::size_t>(count) : 1};
}

}  // namespace hpfreeze
