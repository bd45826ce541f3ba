// The tester itself: a run leaves the process as it found it, so that the in-process tests
// of the command line are independent of each other and of their order.
#include "cli/cli_tester.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hpfreeze::cli::testing {
namespace {

std::set<std::string> open_descriptors() {
  std::set<std::string> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const std::string own = std::to_string(::dirfd(dir));
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != ".." && name != own) fds.insert(name);
  }
  ::closedir(dir);
  return fds;
}

std::pair<dev_t, ino_t> identity(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

// Runs that change what the process holds: a descriptor read, outputs written, -vv, a
// format from the environment, SIGXFSZ ignored by run_cli.
void busy_runs(CliTester& tester) {
  tester.set_stdin(read_file(testdata("example/plan.json")), Stdin::kPipe);
  tester.set_env("HPFREEZE_MESSAGE_FORMAT", "json");
  tester.run({"-vv", "freeze", "--plan", "-", "--model", testdata("example/model.json"), "-o",
              tester.dir() + "/out.json"});
  tester.close_stdin();
  tester.run({"parse"});
  tester.run({"-qq", "frezee"});
}

TEST(CliTester, ARunLeavesTheStandardDescriptorsAndOpensNoOther) {
  const std::set<std::string> before = open_descriptors();
  std::vector<std::pair<dev_t, ino_t>> standard;
  for (int fd = 0; fd < 3; ++fd) standard.push_back(identity(fd));
  {
    CliTester tester;
    busy_runs(tester);
  }
  for (int fd = 0; fd < 3; ++fd) EXPECT_EQ(identity(fd), standard[static_cast<std::size_t>(fd)]);
  EXPECT_EQ(open_descriptors(), before);
}

TEST(CliTester, ARunLeavesTheEnvironmentUmaskAndSignals) {
  ::setenv("HPFREEZE_CLI_TESTER_MARK", "kept", 1);
  ::unsetenv("HPFREEZE_MESSAGE_FORMAT");
  const mode_t mask = ::umask(027);
  struct sigaction before {};
  ::sigaction(SIGXFSZ, nullptr, &before);
  ASSERT_EQ(before.sa_handler, SIG_DFL);
  {
    CliTester tester;
    busy_runs(tester);
  }
  EXPECT_STREQ(std::getenv("HPFREEZE_CLI_TESTER_MARK"), "kept");
  EXPECT_EQ(std::getenv("HPFREEZE_MESSAGE_FORMAT"), nullptr);
  EXPECT_EQ(::umask(mask), 027);
  struct sigaction after {};
  ::sigaction(SIGXFSZ, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
  ::unsetenv("HPFREEZE_CLI_TESTER_MARK");
}

TEST(CliTester, ARunLeavesSpdlogsDefaultLogger) {
  const std::shared_ptr<spdlog::logger> logger = spdlog::default_logger();
  const spdlog::level::level_enum level = spdlog::get_level();
  {
    CliTester tester;
    busy_runs(tester);
  }
  EXPECT_EQ(spdlog::default_logger(), logger);
  EXPECT_EQ(spdlog::get_level(), level);
}

// What one run's -qq or -vv set is not the next run's level.
TEST(CliTester, OneRunsLevelIsNotTheNexts) {
  CliTester tester;
  CliRun r = tester.run({"-qq", "parse", "S(x)"});
  EXPECT_EQ((std::pair{r.exit_code, r.err}), (std::pair{1, std::string()}));
  r = tester.run({"parse", "S(x)"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "hpfreeze: error: argument 1: invalid placement 'S(x)': dim 'x' is not an "
            "integer\n");
  r = tester.run({"-vv", "parse", "R"});
  EXPECT_EQ(r.exit_code, 0);
  r = tester.run({"freeze", "--plan", testdata("example/plan.json"), "--model",
                  testdata("example/model.json"), "-o", tester.dir() + "/out.json"});
  EXPECT_EQ((std::pair{r.exit_code, r.err}), (std::pair{0, std::string()}));
}

// The tester's own files are its directory's, and the directory goes with it.
TEST(CliTester, FilesAndTheirDirectory) {
  std::string dir;
  {
    CliTester tester;
    dir = tester.dir();
    const std::string path = tester.write_file("a.txt", "bytes");
    EXPECT_EQ(read_file(path), "bytes");
  }
  struct stat st {};
  EXPECT_NE(::stat(dir.c_str(), &st), 0);
}

}  // namespace
}  // namespace hpfreeze::cli::testing
