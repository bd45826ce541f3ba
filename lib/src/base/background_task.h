#pragma once
// Work that runs on a second thread while the caller goes on, and is joined where the
// caller needs its result (wait()). Used by freeze to overlap steps that hold no memory
// the other needs: a second core then shortens the run, and on one core the two simply
// take turns.

#include <future>
#include <system_error>
#include <utility>

#include "hpfreeze/base/concurrency.h"

namespace hpfreeze {

template <class Work>
class BackgroundTask {
 public:
  // Starts `work` on a new thread when `concurrency` has a second CPU for it. Otherwise,
  // or where no thread can be started, wait() runs it on the caller's thread instead.
  BackgroundTask(Concurrency concurrency, Work work) : work_(std::move(work)) {
    if (!concurrency.second_thread()) return;
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
