// write_output_file and write_stdout on the real disk: modes, if-changed, symlinks, devices,
// what the kernel resolves, and several outputs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "io/io.h"
#include "io_test_support.h"

namespace hpfreeze {
namespace {

using namespace io_testing;

// ---------------------------------------------------------------------------------------
// write_output_file on the real disk

using WriteFileTest = TempDirTest;

TEST_F(WriteFileTest, WritesNewFile) {
  RealFileSystem real;
  auto result = write_output_file(real, path("meta.json"), "{\n  \"a\": 1\n}", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(slurp(path("meta.json")), "{\n  \"a\": 1\n}");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"meta.json"});
}

TEST_F(WriteFileTest, ReplacesExistingFile) {
  spit(path("meta.json"), pattern(5'000));
  RealFileSystem real;
  auto result = write_output_file(real, path("meta.json"), "new", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(slurp(path("meta.json")), "new");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"meta.json"});
}

TEST_F(WriteFileTest, WritesEmptyBytes) {
  spit(path("meta.json"), "old");
  RealFileSystem real;
  ASSERT_TRUE(write_output_file(real, path("meta.json"), "", {}).ok());
  EXPECT_EQ(slurp(path("meta.json")), "");
}

TEST_F(WriteFileTest, ModeIs0666MinusUmask022) {
  const ScopedUmask mask(022);
  RealFileSystem real;
  EXPECT_EQ(real.new_file_mode(), 0644u);
  spit(path("old.json"), "old");
  ASSERT_EQ(::chmod(path("old.json").c_str(), 0600), 0);
  ASSERT_TRUE(write_output_file(real, path("new.json"), "x", {}).ok());
  ASSERT_TRUE(write_output_file(real, path("old.json"), "x", {}).ok());
  EXPECT_EQ(lstat_of(path("new.json")).st_mode & 07777, 0644u);
  EXPECT_EQ(lstat_of(path("old.json")).st_mode & 07777, 0600u);  // a replaced file keeps it
}

TEST_F(WriteFileTest, ModeIs0666MinusUmask077) {
  const ScopedUmask mask(077);
  RealFileSystem real;
  EXPECT_EQ(real.new_file_mode(), 0600u);
  ASSERT_TRUE(write_output_file(real, path("new.json"), "x", {}).ok());
  EXPECT_EQ(lstat_of(path("new.json")).st_mode & 07777, 0600u);
}

TEST_F(WriteFileTest, ConstructorLeavesUmaskAsItWas) {
  const ScopedUmask mask(027);
  RealFileSystem real;
  const mode_t now = ::umask(027);
  EXPECT_EQ(now, 027u);
}

TEST_F(WriteFileTest, IfChangedWithSameBytesLeavesFileAndMtimeAlone) {
  const std::string out = path("meta.json");
  spit(out, "same bytes");
  const timespec old_times[2] = {{978'307'200, 123'456'789}, {978'307'200, 123'456'789}};
  ASSERT_EQ(::utimensat(AT_FDCWD, out.c_str(), old_times, 0), 0);
  const struct stat before = lstat_of(out);

  RealFileSystem real;
  auto result = write_output_file(real, out, "same bytes", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kUnchanged);

  const struct stat after = lstat_of(out);
  EXPECT_EQ(after.st_mtim.tv_sec, 978'307'200);
  EXPECT_EQ(after.st_mtim.tv_nsec, 123'456'789);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(slurp(out), "same bytes");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"meta.json"});
}

TEST_F(WriteFileTest, IfChangedWithDifferentBytesRewrites) {
  const std::string out = path("meta.json");
  spit(out, "old bytes!");  // same length as the new bytes: content decides, not size
  const timespec old_times[2] = {{978'307'200, 0}, {978'307'200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, out.c_str(), old_times, 0), 0);

  RealFileSystem real;
  auto result = write_output_file(real, out, "new bytes!", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(slurp(out), "new bytes!");
  EXPECT_NE(lstat_of(out).st_mtim.tv_sec, 978'307'200);
}

TEST_F(WriteFileTest, IfChangedWithMissingFileWrites) {
  RealFileSystem real;
  auto result = write_output_file(real, path("meta.json"), "x", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(slurp(path("meta.json")), "x");
}

TEST_F(WriteFileTest, WithoutIfChangedSameBytesAreRewritten) {
  const std::string out = path("meta.json");
  spit(out, "same");
  const ino_t before = lstat_of(out).st_ino;
  RealFileSystem real;
  auto result = write_output_file(real, out, "same", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_NE(lstat_of(out).st_ino, before);  // a fresh file was renamed in
}

TEST_F(WriteFileTest, MissingOutputDirectoryIsAnIoError) {
  RealFileSystem real;
  const std::string out = path("no/such/dir/meta.json");
  auto result = write_output_file(real, out, "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), out, "cannot write: No such file or directory");
  EXPECT_TRUE(entries(dir_).empty());
}

TEST_F(WriteFileTest, OutputPathThatIsADirectoryIsAnIoError) {
  ASSERT_EQ(::mkdir(path("out").c_str(), 0755), 0);
  RealFileSystem real;
  auto result = write_output_file(real, path("out"), "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), path("out"), "is a directory");
  EXPECT_TRUE(fs::is_directory(path("out")));
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"out"});
}

TEST_F(WriteFileTest, TrailingSlashOnMissingPathIsADirectoryError) {
  RealFileSystem real;
  auto result = write_output_file(real, path("out/"), "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), path("out/"), "is a directory");
  EXPECT_TRUE(entries(dir_).empty());
}

TEST_F(WriteFileTest, PathBelowARegularFileIsAnIoError) {
  spit(path("file"), "keep");
  RealFileSystem real;
  auto result = write_output_file(real, path("file/meta.json"), "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), path("file/meta.json"), "cannot write: Not a directory");
  EXPECT_EQ(slurp(path("file")), "keep");
}

TEST_F(WriteFileTest, EmptyPathIsAnIoError) {
  RealFileSystem real;
  auto result = write_output_file(real, "", "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "", "cannot write: No such file or directory");
}

TEST_F(WriteFileTest, ReadOnlyDirectoryLeavesOldFile) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root bypasses permission bits; FakeWriteTest covers EACCES";
  }
  spit(path("meta.json"), "old");
  ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
  RealFileSystem real;
  auto result = write_output_file(real, path("meta.json"), "new", {});
  ::chmod(dir_.c_str(), 0700);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), path("meta.json"), "cannot write: Permission denied");
  EXPECT_EQ(slurp(path("meta.json")), "old");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"meta.json"});
}

TEST_F(WriteFileTest, PathWithoutDirectoryGoesToCurrentDirectory) {
  const int cwd = ::open(".", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(cwd, 0);
  ASSERT_EQ(::chdir(dir_.c_str()), 0);
  RealFileSystem real;
  auto result = write_output_file(real, "meta.json", "here", {});
  ASSERT_EQ(::fchdir(cwd), 0);
  ::close(cwd);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(slurp(path("meta.json")), "here");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"meta.json"});
}

TEST_F(WriteFileTest, LongFileNameStillGetsATempFile) {
  const std::string name(250, 'm');
  RealFileSystem real;
  auto result = write_output_file(real, path(name), "long", {});
  ASSERT_TRUE(result.ok()) << result.errors()[0].message;
  EXPECT_EQ(slurp(path(name)), "long");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{name});
}

TEST_F(WriteFileTest, SymlinkIsWrittenThroughAndKept) {
  spit(path("real.json"), "old");
  ASSERT_EQ(::symlink("real.json", path("link.json").c_str()), 0);
  RealFileSystem real;
  auto result = write_output_file(real, path("link.json"), "new", {});
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(S_ISLNK(lstat_of(path("link.json")).st_mode));
  EXPECT_EQ(fs::read_symlink(path("link.json")).string(), "real.json");
  EXPECT_TRUE(S_ISREG(lstat_of(path("real.json")).st_mode));
  EXPECT_EQ(slurp(path("real.json")), "new");
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"link.json", "real.json"}));
}

TEST_F(WriteFileTest, SymlinkChainIntoAnotherDirectory) {
  ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(path("b").c_str(), 0755), 0);
  spit(path("b/real.json"), "old");
  ASSERT_EQ(::symlink("../b/real.json", path("a/hop.json").c_str()), 0);
  ASSERT_EQ(::symlink(path("a/hop.json").c_str(), path("link.json").c_str()), 0);
  RealFileSystem real;
  auto result = write_output_file(real, path("link.json"), "new", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(slurp(path("b/real.json")), "new");
  EXPECT_TRUE(S_ISLNK(lstat_of(path("link.json")).st_mode));
  EXPECT_TRUE(S_ISLNK(lstat_of(path("a/hop.json")).st_mode));
  EXPECT_EQ(entries(path("a")), std::vector<std::string>{"hop.json"});
  EXPECT_EQ(entries(path("b")), std::vector<std::string>{"real.json"});
}

TEST_F(WriteFileTest, IfChangedComparesTheLinkedFile) {
  spit(path("real.json"), "same");
  ASSERT_EQ(::symlink("real.json", path("link.json").c_str()), 0);
  const ino_t before = lstat_of(path("real.json")).st_ino;
  RealFileSystem real;
  auto result = write_output_file(real, path("link.json"), "same", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kUnchanged);
  EXPECT_EQ(lstat_of(path("real.json")).st_ino, before);
}

TEST_F(WriteFileTest, DanglingSymlinkCreatesItsTarget) {
  ASSERT_EQ(::symlink("real.json", path("link.json").c_str()), 0);
  RealFileSystem real;
  ASSERT_TRUE(write_output_file(real, path("link.json"), "new", {}).ok());
  EXPECT_TRUE(S_ISLNK(lstat_of(path("link.json")).st_mode));
  EXPECT_EQ(slurp(path("real.json")), "new");
}

TEST_F(WriteFileTest, SymlinkLoopIsAnIoError) {
  ASSERT_EQ(::symlink("b", path("a").c_str()), 0);
  ASSERT_EQ(::symlink("a", path("b").c_str()), 0);
  RealFileSystem real;
  auto result = write_output_file(real, path("a"), "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), path("a"),
                      "cannot write: Too many levels of symbolic links");
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"a", "b"}));
}

TEST_F(WriteFileTest, FifoIsWrittenInPlaceNotReplaced) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    if (fd < 0) return;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) received.append(buf, static_cast<size_t>(n));
    ::close(fd);
  });
  RealFileSystem real;
  auto result = write_output_file(real, fifo, "through the fifo", {.if_changed = true});
  reader.join();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(received, "through the fifo");
  EXPECT_TRUE(S_ISFIFO(lstat_of(fifo).st_mode));
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"fifo"});
}

TEST_F(WriteFileTest, WriteOutputUsesTheRealDisk) {
  auto result = write_output(path("meta.json"), "via write_output", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(slurp(path("meta.json")), "via write_output");
}

// -- what the kernel resolves -------------------------------------------------------------

TEST_F(WriteFileTest, DevStdoutIsWrittenToTheDescriptorNotRenamedOver) {
  // `hpfreeze ... -o /dev/stdout >> build.log`: the log must grow, never be replaced.
  const std::string log = path("build.log");
  spit(log, "earlier lines\n");
  const ino_t inode = lstat_of(log).st_ino;
  expect_child_succeeds([&]() -> std::string {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "setup";
    const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/1";
    for (const std::string& name : {std::string("/dev/stdout"), std::string("/proc/self/fd/1"),
                                    std::string("/dev/fd/1"), own}) {
      auto result = write_output(name, name + "\n", {.if_changed = true});
      if (!result.ok()) return name + ": " + result.errors()[0].message;
    }
    return "";
  });
  const std::string text = slurp(log);
  EXPECT_TRUE(text.starts_with("earlier lines\n/dev/stdout\n/proc/self/fd/1\n/dev/fd/1\n/proc/"))
      << text;
  EXPECT_TRUE(text.ends_with("/fd/1\n")) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
  EXPECT_EQ(lstat_of(log).st_ino, inode);
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"build.log"});
}

TEST_F(WriteFileTest, LinkToDevStdoutIsWrittenToTheDescriptor) {
  const std::string log = path("build.log");
  spit(log, "a\n");
  ASSERT_EQ(::symlink("/dev/stdout", path("out.json").c_str()), 0);
  const std::string out = path("out.json");
  expect_child_succeeds([&]() -> std::string {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "setup";
    auto result = write_output(out, "b\n", {});
    return result.ok() ? "" : result.errors()[0].message;
  });
  EXPECT_EQ(slurp(log), "a\nb\n");
  EXPECT_TRUE(S_ISLNK(lstat_of(out).st_mode));
}

TEST_F(WriteFileTest, ClosedStdoutNameIsAnError) {
  expect_child_succeeds([&]() -> std::string {
    ::close(STDOUT_FILENO);
    guard_standard_descriptors();
    auto result = write_output("/dev/stdout", "x", {});
    if (result.ok()) return "wrote to a closed stdout";
    return result.errors()[0].message == "cannot write: Bad file descriptor"
               ? ""
               : result.errors()[0].message;
  });
}

TEST_F(WriteFileTest, ReplacedFileKeepsItsModeAndOwner) {
  const std::string out = path("meta.json");
  for (const unsigned mode : {0600u, 0640u, 0755u, 0444u}) {
    spit(out, "old");
    ASSERT_EQ(::chmod(out.c_str(), mode), 0);
    const bool root = ::geteuid() == 0;
    if (root) {
      ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
    }
    RealFileSystem real;
    auto result = write_output_file(real, out, "new", {});
    if (!root && mode == 0444u) {
      ASSERT_FALSE(result.ok());
      continue;
    }
    ASSERT_TRUE(result.ok()) << result.errors()[0].message;
    const struct stat st = lstat_of(out);
    EXPECT_EQ(st.st_mode & 07777, mode);
    if (root) {
      EXPECT_EQ((std::tuple{st.st_uid, st.st_gid}), (std::tuple{65534u, 65534u}));
    }
    EXPECT_EQ(slurp(out), "new");
  }
}

TEST_F(WriteFileTest, ReadOnlyFileIsRefusedToItsNonRootOwner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  const std::string out = path("meta.json");
  spit(out, "old");
  ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
  as_nobody([&]() -> std::string {
    RealFileSystem real;
    auto result = write_output_file(real, out, "new", {});
    if (result.ok()) return "replaced a 0444 file";
    return result.errors()[0].message == "cannot write: Permission denied"
               ? ""
               : result.errors()[0].message;
  });
  EXPECT_EQ(slurp(out), "old");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"meta.json"});
  // Root may, as with `>`.
  RealFileSystem real;
  ASSERT_TRUE(write_output_file(real, out, "new", {}).ok());
  EXPECT_EQ(slurp(out), "new");
}

TEST_F(WriteFileTest, HardLinkIsBrokenByTheReplace) {
  spit(path("meta.json"), "old");
  ASSERT_EQ(::link(path("meta.json").c_str(), path("other.json").c_str()), 0);
  RealFileSystem real;
  ASSERT_TRUE(write_output_file(real, path("meta.json"), "new", {}).ok());
  EXPECT_EQ(slurp(path("meta.json")), "new");
  EXPECT_EQ(slurp(path("other.json")), "old");
  EXPECT_NE(lstat_of(path("meta.json")).st_ino, lstat_of(path("other.json")).st_ino);
  // The old file, swapped out under the temporary name, is gone from the directory.
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"meta.json", "other.json"}));
}

TEST_F(WriteFileTest, ForeignLinkInAStickyDirectoryIsNotFollowedByRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  if (slurp("/proc/sys/fs/protected_symlinks") != "1\n") {
    GTEST_SKIP() << "fs.protected_symlinks is off here";
  }
  // /tmp-like: world-writable and sticky; nobody plants a link to a file root owns.
  ASSERT_EQ(::mkdir(path("sticky").c_str(), 01777), 0);
  ASSERT_EQ(::chmod(path("sticky").c_str(), 01777), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  spit(path("precious"), "root's");
  const std::string link = path("sticky/out.json");
  const std::string target = path("precious");
  as_nobody([&]() -> std::string {
    return ::symlink(target.c_str(), link.c_str()) == 0 ? "" : "symlink failed";
  });
  RealFileSystem real;
  auto result = write_output_file(real, link, "attacker's choice", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), link, "cannot write: Permission denied");
  EXPECT_EQ(slurp(target), "root's");
  EXPECT_TRUE(S_ISLNK(lstat_of(link).st_mode));
}

TEST_F(WriteFileTest, SameFileUnderTwoNamesIsRefused) {
  spit(path("p.json"), "old");
  ASSERT_EQ(::symlink("p.json", path("link.json").c_str()), 0);
  for (const std::string& other : {path("p.json"), dir_ + "/./p.json", path("link.json")}) {
    const std::vector<OutputFile> outs = {OutputFile{"-o", path("p.json"), "a", {}},
                                          OutputFile{"--model-out", other, "b", {}}};
    auto result = write_outputs(outs);
    ASSERT_FALSE(result.ok()) << other;
    expect_one_io_error(result.errors(), other, "-o and --model-out name the same file");
  }
  // Not there yet: the same directory and name.
  const std::vector<OutputFile> fresh = {OutputFile{"-o", path("new.json"), "a", {}},
                                         OutputFile{"--model-out", dir_ + "//new.json", "b", {}}};
  EXPECT_FALSE(write_outputs(fresh).ok());
  EXPECT_EQ(slurp(path("p.json")), "old");
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"link.json", "p.json"}));
}

TEST_F(WriteFileTest, TwoOutputsAreBothWritten) {
  spit(path("a.json"), "old a");
  const std::vector<OutputFile> outs = {OutputFile{"-o", path("a.json"), "new a", {}},
                                        OutputFile{"--model-out", path("b.json"), "new b", {}}};
  auto result = write_outputs(outs);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(slurp(path("a.json")), "new a");
  EXPECT_EQ(slurp(path("b.json")), "new b");
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"a.json", "b.json"}));
}

// ---------------------------------------------------------------------------------------
// stdout

TEST(WriteStdoutTest, FullDiskIsAnIoError) {
  expect_child_succeeds([]() -> std::string {
    const int fd = ::open("/dev/full", O_WRONLY);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "setup";
    auto result = write_stdout("{\n}");
    if (result.ok()) return "write to /dev/full succeeded";
    const Diagnostic& d = result.errors()[0];
    if (result.errors().size() != 1 || d.error_class != ErrorClass::kIo || !d.file.empty() ||
        d.message != "cannot write to stdout: No space left on device") {
      return d.location_and_message();
    }
    return "";
  });
}

TEST(WriteStdoutTest, WriteOutputDashGoesToStdout) {
  expect_child_succeeds([]() -> std::string {
    const int fd = ::open("/dev/full", O_WRONLY);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "setup";
    auto result = write_output("-", "x", {.if_changed = true});
    if (result.ok()) return "write to /dev/full succeeded";
    if (result.errors()[0].message != "cannot write to stdout: No space left on device") {
      return result.errors()[0].message;
    }
    return "";
  });
}

TEST(WriteStdoutTest, LargeOutputReachesAPipeWhole) {
  const std::string expected = pattern(1'000'003);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[1]);
    auto result = write_stdout(expected);
    ::_exit(result.ok() && *result == WriteOutcome::kWritten ? 0 : 1);
  }
  ::close(fds[1]);
  std::string received;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) received.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(received.size(), expected.size());
  EXPECT_TRUE(received == expected);
}

TEST(DescribeErrnoTest, GivesTheSystemText) {
  EXPECT_EQ(describe_errno(ENOENT), "No such file or directory");
  EXPECT_EQ(describe_errno(ENOSPC), "No space left on device");
}

}  // namespace
}  // namespace hpfreeze
