// BackgroundTask: work on a second thread, joined by wait(); on one CPU, run by wait().
#include "hpfreeze/background_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "one_cpu.h"

namespace hpfreeze {
namespace {

TEST(BackgroundTask, RunsTheWorkOnceAndWaitRethrowsWhatItThrew) {
  int runs = 0;
  {
    BackgroundTask task([&runs] { ++runs; });
    task.wait();
    task.wait();
  }
  EXPECT_EQ(runs, 1);
  BackgroundTask failing([] { throw std::runtime_error("no"); });
  EXPECT_THROW(failing.wait(), std::runtime_error);
  EXPECT_NO_THROW(failing.wait());
}

TEST(BackgroundTask, WithTwoCpusTheWorkRunsBesideTheCaller) {
  if (usable_cpus() < 2) GTEST_SKIP() << "one usable CPU";
  std::thread::id ran_on;
  // The work can only finish once the caller has gone on past the constructor.
  std::atomic<bool> caller_went_on{false};
  BackgroundTask task([&] {
    while (!caller_went_on.load()) std::this_thread::yield();
    ran_on = std::this_thread::get_id();
  });
  caller_went_on = true;
  task.wait();
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(BackgroundTask, WithOneCpuTheWorkRunsInWait) {
  testing::OneCpu one_cpu;
  ASSERT_TRUE(one_cpu.ok());
  EXPECT_EQ(usable_cpus(), 1u);
  bool ran = false;
  std::thread::id ran_on;
  BackgroundTask task([&] {
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
  if (usable_cpus() < 2) GTEST_SKIP() << "one usable CPU";
  std::atomic<bool> finished{false};
  {
    BackgroundTask task([&finished] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      finished = true;
      throw std::runtime_error("dropped");
    });
  }
  EXPECT_TRUE(finished.load());
}

TEST(BackgroundTask, WorkNeverStartedIsNotRunWhenLeavingWithoutWait) {
  testing::OneCpu one_cpu;
  ASSERT_TRUE(one_cpu.ok());
  bool ran = false;
  {
    BackgroundTask task([&ran] { ran = true; });
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace hpfreeze
