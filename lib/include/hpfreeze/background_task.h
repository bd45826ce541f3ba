#pragma once
// Work that runs on a second thread while the caller goes on, and is joined where the
// caller needs its result (wait()). Used by freeze to overlap steps that hold no memory
// the other needs: a second core then shortens the run, and on one core the two simply
// take turns.

#include <sched.h>

#include <cstddef>
#include <future>
#include <system_error>
#include <utility>

namespace hpfreeze {

// The CPUs this process may run on (its affinity mask: `taskset -c 3` makes it 1), at
// least 1. Work is split across threads only when there is a second CPU to run them.
inline std::size_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int count = CPU_COUNT(&set);
  return count > 1 ? static_cast<std::size_t>(count) : 1;
}

template <class Work>
class BackgroundTask {
 public:
  // Starts `work` on a new thread. With one usable CPU, or where no thread can be
  // started, wait() runs it instead: two threads on one CPU only take turns.
  explicit BackgroundTask(Work work) : work_(std::move(work)) {
    if (usable_cpus() < 2) return;
    try {
      done_ = std::async(std::launch::async, [this] { work_(); });
      started_ = true;
    } catch (const std::system_error&) {
      // No thread: wait() runs the work on the caller's thread.
    }
  }
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;
  // Waits for work that was started and not waited for (the caller is leaving early,
  // e.g. by an exception): its result, exception included, is dropped.
  ~BackgroundTask() {
    if (done_.valid()) done_.wait();
  }

  // Returns once the work has run, rethrowing what it threw. Later calls do nothing.
  void wait() {
    if (done_.valid()) {
      done_.get();
    } else if (!started_) {
      started_ = true;
      work_();
    }
  }

 private:
  Work work_;
  bool started_ = false;
  std::future<void> done_;
};

}  // namespace hpfreeze
