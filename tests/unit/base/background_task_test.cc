// BackgroundTask: work on a second thread, joined by wait(); with one CPU, run by wait().
// Concurrency: the CPUs the process may run on, as the front end passes them.
#include "base/background_task.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "base/one_cpu.h"
#include "hpfreeze/base/concurrency.h"

namespace hpfreeze {
namespace {

constexpr Concurrency kOneCpu{1};
constexpr Concurrency kTwoCpus{2};

TEST(Concurrency, ASecondThreadOnlyWithASecondCpu) {
  EXPECT_FALSE(Concurrency{}.second_thread());  // the default: one thread
  EXPECT_FALSE(kOneCpu.second_thread());
  EXPECT_TRUE(kTwoCpus.second_thread());
  EXPECT_TRUE(Concurrency{64}.second_thread());
}

TEST(Concurrency, OfThisProcessIsItsAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(Concurrency::of_this_process().cpus, static_cast<std::size_t>(CPU_COUNT(&set)));
  testing::OneCpu one_cpu;  // as `taskset -c N`
  ASSERT_TRUE(one_cpu.ok());
  EXPECT_EQ(Concurrency::of_this_process().cpus, 1u);
}

TEST(BackgroundTask, RunsTheWorkOnceAndWaitRethrowsWhatItThrew) {
  for (const Concurrency concurrency : {kOneCpu, kTwoCpus}) {
    int runs = 0;
    {
      BackgroundTask task(concurrency, [&runs] { ++runs; });
      task.wait();
      task.wait();
    }
    EXPECT_EQ(runs, 1);
    BackgroundTask failing(concurrency, [] { throw std::runtime_error("no"); });
    EXPECT_THROW(failing.wait(), std::runtime_error);
    EXPECT_NO_THROW(failing.wait());
  }
}

TEST(BackgroundTask, WithTwoCpusTheWorkRunsBesideTheCaller) {
  std::thread::id ran_on;
  // The work can only finish once the caller has gone on past the constructor.
  std::atomic<bool> caller_went_on{false};
  BackgroundTask task(kTwoCpus, [&] {
    while (!caller_went_on.load()) std::this_thread::yield();
    ran_on = std::this_thread::get_id();
  });
  caller_went_on = true;
  task.wait();
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(BackgroundTask, WithOneCpuTheWorkRunsInWait) {
  bool ran = false;
  std::thread::id ran_on;
  BackgroundTask task(kOneCpu, [&] {
    ran = true;
    ran_on = std::this_thread::get_id();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(ran);
  task.wait();
  EXPECT_TRUE(ran);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(BackgroundTask, LeavingWithoutWaitWaitsForStartedWorkAndDropsItsFailure) {
  std::atomic<bool> finished{false};
  {
    BackgroundTask task(kTwoCpus, [&finished] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      finished = true;
      throw std::runtime_error("dropped");
    });
  }
  EXPECT_TRUE(finished.load());
}

TEST(BackgroundTask, WorkNeverStartedIsNotRunWhenLeavingWithoutWait) {
  bool ran = false;
  {
    BackgroundTask task(kOneCpu, [&ran] { ran = true; });
  }
  EXPECT_FALSE(ran);
}

// What a process that may start no thread found, as its exit status.
enum NoThreadOutcome : int {
  kRanOnTheCaller = 0,
  kCouldNotLimit = 10,
  kAThreadStarted,  // the limit did not hold: nothing was tested
  kRanTooEarly,     // the work ran before wait(), so a thread did start
  kNotRunByWait,
  kRanOnAnotherThread,
  kSecondWaitRanAgain,
  kThrew,
};

// In a child process allowed no second thread (RLIMIT_NPROC of 1, as nobody when run as
// root, whom the limit does not bind): a BackgroundTask whose thread cannot start.
int run_without_threads() {
  const rlimit one{1, 1};
  if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0)) {
    return kCouldNotLimit;
  }
  if (::setrlimit(RLIMIT_NPROC, &one) != 0) return kCouldNotLimit;
  if (::geteuid() == 0 && ::setuid(65534) != 0) return kCouldNotLimit;
  try {
    std::thread probe([] {});
    probe.join();
    return kAThreadStarted;
  } catch (const std::system_error&) {
    // What BackgroundTask meets too.
  }
  try {
    int runs = 0;
    std::thread::id ran_on;
    BackgroundTask task(kTwoCpus, [&] {
      ++runs;
      ran_on = std::this_thread::get_id();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (runs != 0) return kRanTooEarly;
    task.wait();
    if (runs != 1) return kNotRunByWait;
    if (ran_on != std::this_thread::get_id()) return kRanOnAnotherThread;
    task.wait();
    if (runs != 1) return kSecondWaitRanAgain;
    // Its exception reaches wait() as from a thread.
    BackgroundTask failing(kTwoCpus, [] { throw std::runtime_error("no"); });
    try {
      failing.wait();
      return kThrew;
    } catch (const std::runtime_error&) {
    }
  } catch (...) {
    return kThrew;
  }
  return kRanOnTheCaller;
}

TEST(BackgroundTask, WhereNoThreadCanStartTheWorkRunsInWaitOnTheCaller) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(run_without_threads());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  if (WEXITSTATUS(status) == kCouldNotLimit) GTEST_SKIP() << "cannot set RLIMIT_NPROC here";
  if (WEXITSTATUS(status) == kAThreadStarted) {
    GTEST_SKIP() << "RLIMIT_NPROC does not stop threads here (CAP_SYS_RESOURCE?)";
  }
  EXPECT_EQ(WEXITSTATUS(status), kRanOnTheCaller);
}

}  // namespace
}  // namespace hpfreeze
