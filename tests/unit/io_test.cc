#include "hpfreeze/io.h"

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

#include "io_test_support.h"

namespace hpfreeze {
namespace {

using namespace io_testing;

// ---------------------------------------------------------------------------------------
// read_input

using ReadInputTest = TempDirTest;

TEST_F(ReadInputTest, RegularFileIsReadWholeWithPadding) {
  const std::string expected = pattern(100'003);
  spit(path("plan.json"), expected);
  auto input = read_input(path("plan.json"));
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->path, path("plan.json"));
  EXPECT_EQ(input->display_name, path("plan.json"));
  EXPECT_EQ(input->bytes, expected);
  EXPECT_GE(input->bytes.capacity(), input->bytes.size() + kInputPadding);
}

// A buffer handed in is only memory: its contents go, its capacity is used when it is
// enough, and a smaller one grows.
TEST_F(ReadInputTest, GivenBufferIsReusedAndItsContentsDiscarded) {
  const std::string expected = pattern(100'003);
  spit(path("plan.json"), expected);
  std::string large(300'000, 'x');
  const char* const memory = large.data();
  auto input = read_input(path("plan.json"), std::move(large));
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->bytes, expected);
  EXPECT_EQ(input->bytes.data(), memory);
  auto grown = read_input(path("plan.json"), std::string(10, 'y'));
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(grown->bytes, expected);
  EXPECT_GE(grown->bytes.capacity(), grown->bytes.size() + kInputPadding);
  EXPECT_EQ(regular_file_size(path("plan.json")), expected.size());
  EXPECT_EQ(regular_file_size(path("missing.json")), 0u);
  EXPECT_EQ(regular_file_size("-"), 0u);
  EXPECT_EQ(regular_file_size(dir_), 0u);
}

TEST_F(ReadInputTest, EmptyFileStillHasPadding) {
  spit(path("empty.json"), "");
  auto input = read_input(path("empty.json"));
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->bytes, "");
  EXPECT_GE(input->bytes.capacity(), kInputPadding);
}

TEST_F(ReadInputTest, SmallFileKeepsPaddingAfterMoves) {
  spit(path("small.json"), "{}");
  auto input = read_input(path("small.json"));
  ASSERT_TRUE(input.ok());
  const InputFile moved = std::move(*input);
  EXPECT_EQ(moved.bytes, "{}");
  EXPECT_GE(moved.bytes.capacity(), 2 + kInputPadding);
}

TEST_F(ReadInputTest, FifoIsReadUntilEof) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // Several pipe buffers' worth, written in uneven pieces, to exercise the growth path.
  const std::string expected = pattern(300'007);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    std::size_t done = 0;
    while (done < expected.size()) {
      const std::size_t piece = std::min<std::size_t>(1'000 + done % 4'093, expected.size() - done);
      const ssize_t n = ::write(fd, expected.data() + done, piece);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  auto input = read_input(fifo);
  writer.join();
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->bytes.size(), expected.size());
  EXPECT_TRUE(input->bytes == expected);
  EXPECT_GE(input->bytes.capacity(), input->bytes.size() + kInputPadding);
}

TEST_F(ReadInputTest, FileLongerThanItsStatSizeIsReadWhole) {
  // procfs reports size 0 for files with content: the same path as a file that grew.
  const std::string expected = slurp("/proc/self/mounts");
  if (expected.empty()) GTEST_SKIP() << "no /proc/self/mounts here";
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/mounts", &st), 0);
  ASSERT_LT(static_cast<std::size_t>(st.st_size), expected.size());
  auto input = read_input("/proc/self/mounts");
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->bytes, expected);
  EXPECT_GE(input->bytes.capacity(), input->bytes.size() + kInputPadding);
}

TEST_F(ReadInputTest, CharacterDeviceIsReadUntilEof) {
  auto input = read_input("/dev/null");
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->bytes, "");
  EXPECT_GE(input->bytes.capacity(), kInputPadding);
}

TEST_F(ReadInputTest, MissingFileIsAnIoError) {
  auto input = read_input(path("missing.json"));
  ASSERT_FALSE(input.ok());
  expect_one_io_error(input.errors(), path("missing.json"),
                      "cannot open: No such file or directory");
  EXPECT_EQ(input.errors()[0].location_and_message(),
            path("missing.json") + ": cannot open: No such file or directory");
}

TEST_F(ReadInputTest, DirectoryIsAnIoError) {
  auto input = read_input(dir_);
  ASSERT_FALSE(input.ok());
  expect_one_io_error(input.errors(), dir_, "is a directory");
}

TEST_F(ReadInputTest, FileOver4GiBIsRejectedBeforeReading) {
  const std::string big = path("big.json");
  spit(big, "");
  // Sparse: takes no space, and the size check must come before any read.
  if (::truncate(big.c_str(), static_cast<off_t>(kMaxInputSize + 1)) != 0) {
    GTEST_SKIP() << "cannot make a sparse file here: " << std::strerror(errno);
  }
  auto input = read_input(big);
  ASSERT_FALSE(input.ok());
  expect_one_io_error(input.errors(), big, "input too large (4 GiB or more)");
}

TEST_F(ReadInputTest, DashReadsStdinPipe) {
  const std::string expected = pattern(200'000);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[1]);
    ::dup2(fds[0], STDIN_FILENO);
    auto input = read_input("-");
    const bool good = input.ok() && input->path == "-" && input->display_name == "<stdin>" &&
                      input->bytes == expected &&
                      input->bytes.capacity() >= input->bytes.size() + kInputPadding;
    ::_exit(good ? 0 : 1);
  }
  ::close(fds[0]);
  std::size_t done = 0;
  while (done < expected.size()) {
    const ssize_t n = ::write(fds[1], expected.data() + done, expected.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<std::size_t>(n);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(ReadInputTest, DashReadsRestOfStdinFileAfterItsOffset) {
  spit(path("in.json"), "skip:{\"a\": 1}");
  const std::string file = path("in.json");
  expect_child_succeeds([&]() -> std::string {
    const int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0 || ::lseek(fd, 5, SEEK_SET) != 5 || ::dup2(fd, STDIN_FILENO) < 0) return "setup";
    auto input = read_input("-");
    if (!input.ok()) return input.errors()[0].message;
    if (input->bytes != "{\"a\": 1}") return "bytes: " + input->bytes;
    if (input->bytes.capacity() < input->bytes.size() + kInputPadding) return "padding";
    return "";
  });
}

TEST_F(ReadInputTest, DashNamesStdinInErrors) {
  const std::string directory = dir_;
  expect_child_succeeds([&]() -> std::string {
    const int fd = ::open(directory.c_str(), O_RDONLY);
    if (fd < 0 || ::dup2(fd, STDIN_FILENO) < 0) return "setup";
    auto input = read_input("-");
    if (input.ok()) return "read a directory";
    const Diagnostic& d = input.errors()[0];
    if (d.file != "<stdin>" || d.message != "is a directory") return d.location_and_message();
    if (d.error_class != ErrorClass::kIo) return "not an io error";
    return "";
  });
}

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

// -- a closed stdin -----------------------------------------------------------------------

TEST(ClosedStdinTest, DashIsAClearErrorAndNoFileBecomesStdin) {
  expect_child_succeeds([]() -> std::string {
    ::close(STDIN_FILENO);
    // Whichever comes first, no file opened later may be read as "stdin".
    auto plan = read_input("/proc/self/mounts");
    if (!plan.ok()) return "could not read a file";
    for (int i = 0; i < 3; ++i) {
      auto input = read_input("-");
      if (input.ok()) return "read a closed stdin";
      const Diagnostic& d = input.errors()[0];
      if (d.location_and_message() != "<stdin>: cannot read: standard input is closed") {
        return d.location_and_message();
      }
    }
    auto chunk = read_stdin_chunk(16);
    if (chunk.ok()) return "read a chunk of a closed stdin";
    return "";
  });
}

// ---------------------------------------------------------------------------------------
// write_outputs against an in-memory file system that fails on demand

class FakeFileSystem final : public FileSystem {
 public:
  struct Node {
    FileKind kind = FileKind::kRegular;
    std::string bytes;
    std::string link;  // symlinks only
    bool symlink = false;
    unsigned mode = 0644;
    std::uint32_t uid = 0, gid = 0;
    int write_error = 0;  // what opening it for writing fails with
    std::uint64_t inode = 0;
    int version = 0;  // bumped on every change, so "untouched" is checkable
    bool read_once = false;  // a FIFO: what one reader takes, another never sees
  };

  // errno to fail each operation with; 0 lets it succeed. fail_commit_of names the
  // target (key) whose rename fails.
  int fail_create = 0;
  int fail_open = 0;
  int fail_write = 0;
  int fail_close = 0;
  int fail_attributes = 0;
  int fail_commit = 0;
  std::string fail_commit_of;
  int fail_backup = 0;
  int fail_stdout = 0;
  unsigned mode_for_new_files = 0640;

  std::map<std::string, Node> nodes;
  std::vector<std::string> log;
  // Descriptors open on a node (by its path), as `1<>plan.json` opens stdout.
  std::map<int, std::string> descriptor_files;

  Node& add(const std::string& p, Node node) {
    node.inode = ++inode_counter_;
    return nodes[key(p)] = std::move(node);
  }
  static Node make(FileKind kind, std::string bytes, unsigned mode) {
    Node node;
    node.kind = kind;
    node.bytes = std::move(bytes);
    node.mode = mode;
    return node;
  }
  Node& add_file(const std::string& p, std::string bytes) {
    return add(p, make(FileKind::kRegular, std::move(bytes), 0644));
  }
  void add_dir(const std::string& p) { add(p, make(FileKind::kDirectory, "", 0755)); }
  void add_symlink(const std::string& p, std::string target) {
    Node& node = add(p, make(FileKind::kOther, "", 0777));
    node.symlink = true;
    node.link = std::move(target);
  }
  void add_device(const std::string& p) { add(p, make(FileKind::kOther, "", 0666)); }
  void add_fifo(const std::string& p) {
    Node node = make(FileKind::kOther, "", 0644);
    node.read_once = true;
    add(p, std::move(node));
  }

  // Paths are compared after lexical normalization ("a/../b/x" is "b/x"), enough here.
  static std::string key(const std::string& p) {
    std::string k = fs::path(p).lexically_normal().string();
    return k.empty() ? "." : k;
  }

  std::vector<std::string> extra_files() const {
    std::vector<std::string> out;
    for (const auto& [p, node] : nodes) {
      if (p.find(".tmp.") != std::string::npos || p.find(".old.") != std::string::npos) {
        out.push_back(p);
      }
    }
    return out;
  }

  int resolve_output(const std::string& path, OutputTarget* out) override {
    log.push_back("resolve " + path);
    *out = OutputTarget{};
    std::string p = path;
    for (int hops = 0; hops < 40; ++hops) {
      const std::size_t slash = p.rfind('/');
      const std::string dir = slash == std::string::npos ? "." : p.substr(0, slash);
      const std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
      if (dir != "." && (!nodes.count(key(dir)) || nodes[key(dir)].kind != FileKind::kDirectory)) {
        return ENOENT;
      }
      out->dir = next_handle_++;
      dirs_[out->dir] = key(dir);
      out->name = base;
      out->dir_identity = {1, dir == "." ? 0 : nodes[key(dir)].inode};
      auto it = nodes.find(key(dir + "/" + base));
      if (it == nodes.end()) {
        out->kind = FileKind::kMissing;
        return 0;
      }
      const Node& node = it->second;
      if (node.symlink) {
        release(*out);
        p = node.link.front() == '/' ? node.link : dir + "/" + node.link;
        continue;
      }
      out->kind = node.kind;
      out->identity = {1, node.inode};
      out->size = node.bytes.size();
      out->mode = node.mode;
      out->uid = node.uid;
      out->gid = node.gid;
      out->write_error = node.write_error;
      out->shareable = node.kind == FileKind::kOther;  // the fake's devices are terminals
      if (node.kind == FileKind::kOther) out->route = OutputTarget::Route::kInPlace;
      return 0;
    }
    return ELOOP;
  }
  void release(OutputTarget& target) override {
    if (target.dir >= 0) {
      log.push_back("release " + dirs_.at(target.dir));
      dirs_.erase(target.dir);
    }
    target.dir = -1;
  }
  int resolve_descriptor(int fd, OutputTarget* out) override {
    *out = OutputTarget{};
    out->route = OutputTarget::Route::kDescriptor;
    out->descriptor = fd;
    out->kind = FileKind::kOther;
    out->shareable = true;  // a terminal, unless open on a node
    if (auto it = descriptor_files.find(fd); it != descriptor_files.end()) {
      const Node& node = nodes.at(key(it->second));
      out->kind = node.kind;
      out->identity = {1, node.inode};
      out->shareable = node.kind == FileKind::kOther;
    }
    return 0;
  }
  int identify_input(const std::string& path, FileIdentity* id, bool* shareable,
                     bool* read_once) override {
    auto it = nodes.find(key(path));
    if (it == nodes.end()) return ENOENT;
    *id = {1, it->second.inode};
    *shareable = it->second.kind == FileKind::kOther && !it->second.read_once;
    *read_once = it->second.read_once;
    return 0;
  }
  int read_target(const OutputTarget& target, std::string* bytes) override {
    log.push_back("read " + entry(target, target.name));
    *bytes = nodes.at(entry(target, target.name)).bytes;
    return 0;
  }
  int create_temp(const OutputTarget& target, TempFile* temp) override {
    log.push_back("create beside " + entry(target, target.name));
    if (fail_create != 0) return fail_create;
    temp->name = "." + target.name + ".tmp." + std::to_string(++temp_counter_);
    add(entry(target, temp->name), make(FileKind::kRegular, "", 0600));
    temp->handle = next_handle_++;
    handles_[temp->handle] = entry(target, temp->name);
    log.push_back("created " + entry(target, temp->name));
    return 0;
  }
  int write_all(int handle, std::string_view bytes) override {
    if (handle == 1) {
      log.push_back("write " + std::to_string(bytes.size()) + " to stdout");
      if (fail_stdout == 0) stdout_bytes.append(bytes);
      return fail_stdout;
    }
    log.push_back("write " + std::to_string(bytes.size()) + " to " + handles_.at(handle));
    Node& node = nodes.at(handles_.at(handle));
    ++node.version;
    if (fail_write != 0) {
      node.bytes.append(bytes.substr(0, bytes.size() / 2));  // a partial write, then failure
      return fail_write;
    }
    node.bytes.append(bytes);
    return 0;
  }
  int set_attributes(int handle, unsigned mode, bool chown, std::uint32_t uid,
                     std::uint32_t gid) override {
    log.push_back("attributes " + std::to_string(mode) +
                  (chown ? " owner " + std::to_string(uid) + ":" + std::to_string(gid) : ""));
    if (fail_attributes != 0) return fail_attributes;
    Node& node = nodes.at(handles_.at(handle));
    node.mode = mode;
    if (chown) node.uid = uid, node.gid = gid;
    return 0;
  }
  int close_file(int handle) override {
    log.push_back("close");
    handles_.erase(handle);
    return fail_close;
  }
  int commit_temp(TempFile& temp, const OutputTarget& target) override {
    const std::string to = entry(target, target.name);
    log.push_back("rename " + entry(target, temp.name) + " -> " + to);
    if (fail_commit != 0 && (fail_commit_of.empty() || fail_commit_of == to)) return fail_commit;
    move(entry(target, temp.name), to);
    temp.name.clear();
    return 0;
  }
  int discard_temp(TempFile& temp, const OutputTarget& target) override {
    if (temp.name.empty()) return 0;
    log.push_back("remove " + entry(target, temp.name));
    return nodes.erase(entry(target, temp.name)) ? 0 : ENOENT;
  }
  int keep_backup(const OutputTarget& target, std::string* backup) override {
    log.push_back("backup " + entry(target, target.name));
    if (fail_backup != 0) return fail_backup;
    backup->clear();
    if (target.kind == FileKind::kMissing) return 0;
    *backup = "." + target.name + ".old." + std::to_string(++temp_counter_);
    nodes[entry(target, *backup)] = nodes.at(entry(target, target.name));
    return 0;
  }
  int restore_backup(const OutputTarget& target, const std::string& backup) override {
    log.push_back("restore " + entry(target, target.name));
    if (backup.empty()) return nodes.erase(entry(target, target.name)) ? 0 : ENOENT;
    move(entry(target, backup), entry(target, target.name));
    return 0;
  }
  int drop_backup(const OutputTarget& target, const std::string& backup) override {
    if (backup.empty()) return 0;
    log.push_back("drop " + entry(target, backup));
    return nodes.erase(entry(target, backup)) ? 0 : ENOENT;
  }
  int open_in_place(const OutputTarget& target, int* handle) override {
    log.push_back("open " + entry(target, target.name));
    if (fail_open != 0) return fail_open;
    *handle = next_handle_++;
    handles_[*handle] = entry(target, target.name);
    return 0;
  }
  [[nodiscard]] unsigned new_file_mode() const override { return mode_for_new_files; }
  [[nodiscard]] bool keeps_owner(const OutputTarget& target) const override {
    return target.uid != 0 || target.gid != 0;
  }

  // "stdout" as the fake sees it: writes to descriptor 1 land here.
  std::string stdout_bytes;

 private:
  std::string entry(const OutputTarget& target, const std::string& name) const {
    const std::string& dir = dirs_.at(target.dir);
    return key(dir == "." ? name : dir + "/" + name);
  }
  void move(const std::string& from, const std::string& to) {
    Node moved = nodes.at(from);
    moved.version = nodes.count(to) ? nodes[to].version + 1 : moved.version;
    nodes.erase(from);
    nodes[to] = std::move(moved);
  }

  int temp_counter_ = 0;
  int next_handle_ = 100;
  std::uint64_t inode_counter_ = 0;
  std::map<int, std::string> handles_;
  std::map<int, std::string> dirs_;
};

std::vector<std::string> with_prefix(const std::vector<std::string>& log, std::string_view p) {
  std::vector<std::string> out;
  for (const std::string& e : log) {
    if (e.starts_with(p)) out.push_back(e);
  }
  return out;
}

TEST(FakeWriteTest, SuccessfulWriteFollowsTheSafeOrder) {
  FakeFileSystem fake;
  fake.add_dir("out");
  fake.add_file("out/meta.json", "old");
  auto result = write_output_file(fake, "out/meta.json", "new!", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  const std::vector<std::string> expected_log = {
      "resolve out/meta.json",
      "create beside out/meta.json",
      "created out/.meta.json.tmp.1",
      "write 4 to out/.meta.json.tmp.1",
      "attributes 420",  // the old file's 0644, not the 0640 of a new one
      "close",
      "rename out/.meta.json.tmp.1 -> out/meta.json",
      "release out",
  };
  EXPECT_EQ(fake.log, expected_log);
  EXPECT_EQ(fake.nodes.at("out/meta.json").bytes, "new!");
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeWriteTest, NewFileGetsTheNewFileMode) {
  FakeFileSystem fake;
  ASSERT_TRUE(write_output_file(fake, "meta.json", "x", {}).ok());
  EXPECT_EQ(fake.log[2], "created .meta.json.tmp.1");
  EXPECT_EQ(with_prefix(fake.log, "attributes"), std::vector<std::string>{"attributes 416"});
  EXPECT_EQ(fake.nodes.at("meta.json").mode, 0640u);
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeWriteTest, ReplacedFileKeepsModeOwnerAndGroup) {
  FakeFileSystem fake;
  FakeFileSystem::Node& old = fake.add_file("meta.json", "old");
  old.mode = 0600;
  old.uid = 1000;
  old.gid = 2000;
  ASSERT_TRUE(write_output_file(fake, "meta.json", "new", {}).ok());
  EXPECT_EQ(with_prefix(fake.log, "attributes"),
            std::vector<std::string>{"attributes 384 owner 1000:2000"});
  const FakeFileSystem::Node& now = fake.nodes.at("meta.json");
  EXPECT_EQ(now.bytes, "new");
  EXPECT_EQ((std::tuple{now.mode, now.uid, now.gid}), (std::tuple{0600u, 1000u, 2000u}));
}

TEST(FakeWriteTest, FileTheCallerCannotWriteIsRefused) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "old").write_error = EACCES;
  auto result = write_output_file(fake, "meta.json", "new", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "meta.json", "cannot write: Permission denied");
  EXPECT_EQ(fake.nodes.at("meta.json").bytes, "old");
  EXPECT_EQ(fake.nodes.at("meta.json").version, 0);
  EXPECT_TRUE(with_prefix(fake.log, "create").empty());
}

TEST(FakeWriteTest, IfChangedNeedsNoWriteAccessWhenTheBytesAreThere) {
  for (const int reason : {EACCES, EROFS}) {
    FakeFileSystem fake;
    fake.add_file("meta.json", "same").write_error = reason;
    auto same = write_output_file(fake, "meta.json", "same", {.if_changed = true});
    ASSERT_TRUE(same.ok()) << same.errors()[0].message;
    EXPECT_EQ(*same, WriteOutcome::kUnchanged);
    // Other bytes, or no --if-changed: refused for the real reason, before any temporary file.
    for (const bool if_changed : {true, false}) {
      auto refused = write_output_file(fake, "meta.json", if_changed ? "other" : "same",
                                       {.if_changed = if_changed});
      ASSERT_FALSE(refused.ok());
      expect_one_io_error(refused.errors(), "meta.json", "cannot write: " + describe_errno(reason));
    }
    EXPECT_EQ(fake.nodes.at("meta.json").version, 0);
    EXPECT_TRUE(with_prefix(fake.log, "create").empty());
  }
}

struct Fault {
  const char* name;
  int FakeFileSystem::*step;
  int err;
  const char* message;
};

class FakeFaultTest : public testing::TestWithParam<Fault> {};

TEST_P(FakeFaultTest, FailureLeavesOldFileAndNoTempFile) {
  const Fault& fault = GetParam();
  FakeFileSystem fake;
  fake.add_dir("out");
  fake.add_file("out/meta.json", "old contents");
  fake.*(fault.step) = fault.err;

  auto result = write_output_file(fake, "out/meta.json", "new contents, longer", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "out/meta.json", fault.message);
  const FakeFileSystem::Node& node = fake.nodes.at("out/meta.json");
  EXPECT_EQ(node.bytes, "old contents");
  EXPECT_EQ(node.version, 0);
  EXPECT_EQ(node.mode, 0644u);
  EXPECT_TRUE(fake.extra_files().empty());
  EXPECT_EQ(fake.nodes.size(), 2u);
  EXPECT_EQ(fake.log.back(), "release out");
}

INSTANTIATE_TEST_SUITE_P(EachStep, FakeFaultTest,
                         testing::Values(Fault{"CreateReadOnlyFs", &FakeFileSystem::fail_create,
                                               EROFS, "cannot write: Read-only file system"},
                                         Fault{"CreatePermission", &FakeFileSystem::fail_create,
                                               EACCES, "cannot write: Permission denied"},
                                         Fault{"WriteDiskFull", &FakeFileSystem::fail_write, ENOSPC,
                                               "cannot write: No space left on device"},
                                         Fault{"WriteQuota", &FakeFileSystem::fail_write, EDQUOT,
                                               "cannot write: Disk quota exceeded"},
                                         Fault{"Close", &FakeFileSystem::fail_close, EIO,
                                               "cannot write: Input/output error"},
                                         Fault{"Attributes", &FakeFileSystem::fail_attributes,
                                               EPERM, "cannot set mode: Operation not permitted"},
                                         Fault{
                                             "Rename", &FakeFileSystem::fail_commit, EBUSY,
                                             "cannot rename into place: Device or resource busy"}),
                         [](const testing::TestParamInfo<Fault>& param_info) {
                           return std::string(param_info.param.name);
                         });

TEST(FakeWriteTest, FailedWriteClosesBeforeRemoving) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "old");
  fake.fail_write = ENOSPC;
  ASSERT_FALSE(write_output_file(fake, "meta.json", "new", {}).ok());
  const std::vector<std::string> tail(fake.log.end() - 4, fake.log.end() - 1);
  EXPECT_EQ(tail, (std::vector<std::string>{"write 3 to .meta.json.tmp.1", "close",
                                            "remove .meta.json.tmp.1"}));
}

TEST(FakeWriteTest, IfChangedWithSameBytesTouchesNothing) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "same");
  auto result = write_output_file(fake, "meta.json", "same", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kUnchanged);
  EXPECT_EQ(fake.log,
            (std::vector<std::string>{"resolve meta.json", "read meta.json", "release ."}));
  EXPECT_EQ(fake.nodes.at("meta.json").version, 0);
}

TEST(FakeWriteTest, IfChangedWithOtherSizeSkipsTheRead) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "old");
  auto result = write_output_file(fake, "meta.json", "longer", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_TRUE(with_prefix(fake.log, "read ").empty());
  EXPECT_EQ(fake.nodes.at("meta.json").bytes, "longer");
}

TEST(FakeWriteTest, IfChangedWithSameSizeOtherBytesRewrites) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "abc");
  auto result = write_output_file(fake, "meta.json", "abd", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(fake.nodes.at("meta.json").bytes, "abd");
}

TEST(FakeWriteTest, SymlinkTempFileGoesNextToTheLinkedFile) {
  FakeFileSystem fake;
  fake.add_dir("a");
  fake.add_dir("b");
  fake.add_file("b/real.json", "old");
  fake.add_symlink("a/link.json", "../b/real.json");
  ASSERT_TRUE(write_output_file(fake, "a/link.json", "new", {}).ok());
  EXPECT_EQ(with_prefix(fake.log, "created"),
            std::vector<std::string>{"created b/.real.json.tmp.1"});
  EXPECT_EQ(fake.nodes.at("b/real.json").bytes, "new");
  EXPECT_TRUE(fake.nodes.at("a/link.json").symlink);
  EXPECT_EQ(fake.nodes.at("a/link.json").link, "../b/real.json");
}

TEST(FakeWriteTest, DeviceIsWrittenInPlace) {
  FakeFileSystem fake;
  fake.add_dir("/dev");
  fake.add_device("/dev/sink");
  auto result = write_output_file(fake, "/dev/sink", "data", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(fake.log, (std::vector<std::string>{"resolve /dev/sink", "open /dev/sink",
                                                "write 4 to /dev/sink", "close", "release /dev"}));
  EXPECT_EQ(fake.nodes.at("/dev/sink").kind, FileKind::kOther);
  EXPECT_EQ(fake.nodes.at("/dev/sink").bytes, "data");
}

TEST(FakeWriteTest, DeviceWriteFailureIsReported) {
  FakeFileSystem fake;
  fake.add_device("sink");
  fake.fail_write = ENOSPC;
  auto result = write_output_file(fake, "sink", "data", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "sink", "cannot write: No space left on device");
  EXPECT_EQ(fake.log[fake.log.size() - 2], "close");
}

TEST(FakeWriteTest, DeviceOpenFailureIsReported) {
  FakeFileSystem fake;
  fake.add_device("sink");
  fake.fail_open = EACCES;
  auto result = write_output_file(fake, "sink", "data", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "sink", "cannot write: Permission denied");
}

TEST(FakeWriteTest, MissingDirectoryIsReportedFromResolve) {
  FakeFileSystem fake;
  auto result = write_output_file(fake, "gone/meta.json", "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "gone/meta.json", "cannot write: No such file or directory");
  EXPECT_TRUE(fake.nodes.empty());
}

TEST(FakeWriteTest, LinkToADirectoryIsADirectoryError) {
  FakeFileSystem fake;
  fake.add_dir("out");
  fake.add_symlink("link", "out");
  auto result = write_output_file(fake, "link", "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "link", "is a directory");
}

// -- several outputs: all or none ---------------------------------------------------------

std::vector<OutputFile> two_outputs(std::string first, std::string second) {
  return {OutputFile{"-o", std::move(first), "plan bytes", {}},
          OutputFile{"--model-out", std::move(second), "model bytes", {}}};
}

TEST(FakeOutputsTest, BothAreWrittenAndNoBackupStays) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  fake.add_file("model.json", "old model");
  const auto outs = two_outputs("plan.json", "model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, (std::vector<WriteOutcome>{WriteOutcome::kWritten, WriteOutcome::kWritten}));
  EXPECT_EQ(fake.nodes.at("plan.json").bytes, "plan bytes");
  EXPECT_EQ(fake.nodes.at("model.json").bytes, "model bytes");
  EXPECT_TRUE(fake.extra_files().empty());
  // Both temporary files are complete before the first rename.
  const auto& log = fake.log;
  const auto first_rename = std::find_if(
      log.begin(), log.end(), [](const std::string& e) { return e.starts_with("rename"); });
  EXPECT_EQ(std::count_if(first_rename, log.end(),
                          [](const std::string& e) { return e.starts_with("write"); }),
            0);
}

TEST(FakeOutputsTest, SecondRenameFailingPutsTheFirstBack) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  fake.add_file("model.json", "old model");
  fake.fail_commit = EIO;
  fake.fail_commit_of = "model.json";
  const auto outs = two_outputs("plan.json", "model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "model.json",
                      "cannot rename into place: Input/output error");
  EXPECT_EQ(fake.nodes.at("plan.json").bytes, "old plan");
  EXPECT_EQ(fake.nodes.at("model.json").bytes, "old model");
  EXPECT_TRUE(fake.extra_files().empty());
  EXPECT_EQ(with_prefix(fake.log, "restore"), std::vector<std::string>{"restore plan.json"});
}

TEST(FakeOutputsTest, SecondRenameFailingRemovesAFirstThatDidNotExist) {
  FakeFileSystem fake;
  fake.fail_commit = EIO;
  fake.fail_commit_of = "model.json";
  const auto outs = two_outputs("plan.json", "model.json");
  ASSERT_FALSE(write_outputs(fake, outs).ok());
  EXPECT_TRUE(fake.nodes.empty());
}

TEST(FakeOutputsTest, SecondFailingBeforeAnyRenameChangesNothing) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  const auto outs = two_outputs("plan.json", "missing-dir/model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "missing-dir/model.json",
                      "cannot write: No such file or directory");
  EXPECT_EQ(fake.nodes.at("plan.json").version, 0);
  EXPECT_TRUE(with_prefix(fake.log, "create").empty());
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeOutputsTest, NoBackupPossibleMeansNothingIsRenamed) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  fake.fail_backup = EPERM;
  const auto outs = two_outputs("plan.json", "model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "plan.json",
                      "cannot keep the old file until every output is written: Operation not "
                      "permitted");
  EXPECT_EQ(fake.nodes.at("plan.json").bytes, "old plan");
  EXPECT_FALSE(fake.nodes.count("model.json"));
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeOutputsTest, StdoutAndDevicesComeAfterTheRenames) {
  FakeFileSystem fake;
  fake.add_device("sink");
  const std::vector<OutputFile> outs = {OutputFile{"-o", "-", "to stdout", {}},
                                        OutputFile{"--a", "sink", "to sink", {}},
                                        OutputFile{"--b", "file.json", "to file", {}}};
  ASSERT_TRUE(write_outputs(fake, outs).ok());
  EXPECT_EQ(fake.stdout_bytes, "to stdout");
  const std::vector<std::string> writes = with_prefix(fake.log, "write");
  EXPECT_EQ(writes, (std::vector<std::string>{"write 7 to .file.json.tmp.1", "write 7 to sink",
                                              "write 9 to stdout"}));
  EXPECT_EQ(fake.nodes.at("file.json").bytes, "to file");
}

TEST(FakeOutputsTest, FailedStdoutPutsTheRenamedFileBack) {
  FakeFileSystem fake;
  fake.add_file("file.json", "old");
  fake.fail_stdout = EPIPE;
  const std::vector<OutputFile> outs = {OutputFile{"-o", "file.json", "new", {}},
                                        OutputFile{"--model-out", "-", "x", {}}};
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "", "cannot write to stdout: Broken pipe");
  EXPECT_EQ(fake.nodes.at("file.json").bytes, "old");
  EXPECT_TRUE(fake.extra_files().empty());
}

// -- same file ------------------------------------------------------------------------------

TEST(FakeDistinctPathsTest, SameFileByAnotherNameIsRefused) {
  FakeFileSystem fake;
  fake.add_dir("d");
  fake.add_file("d/p.json", "old");
  fake.add_symlink("link.json", "d/p.json");
  for (const std::string& other : {std::string("d/p.json"), std::string("./d/p.json"),
                                   std::string("d/../d/p.json"), std::string("link.json")}) {
    const auto outs = two_outputs("d/p.json", other);
    auto result = write_outputs(fake, outs);
    ASSERT_FALSE(result.ok()) << other;
    expect_one_io_error(result.errors(), other, "-o and --model-out name the same file");
    EXPECT_EQ(fake.nodes.at("d/p.json").bytes, "old");
  }
}

TEST(FakeDistinctPathsTest, SameNewFileIsRefused) {
  FakeFileSystem fake;
  const auto outs = two_outputs("new.json", "./new.json");
  const Diagnostics errors = check_distinct_paths(fake, outs, {});
  expect_one_io_error(errors, "./new.json", "-o and --model-out name the same file");
  EXPECT_TRUE(check_distinct_paths(fake, two_outputs("a.json", "b.json"), {}).empty());
}

TEST(FakeDistinctPathsTest, TwoStdoutsAreTheSame) {
  FakeFileSystem fake;
  const Diagnostics errors = check_distinct_paths(fake, two_outputs("-", "-"), {});
  expect_one_io_error(errors, "<stdout>", "-o and --model-out name the same file");
}

TEST(FakeDistinctPathsTest, DevicesMayBeNamedTwice) {
  FakeFileSystem fake;
  fake.add_device("null");
  EXPECT_TRUE(check_distinct_paths(fake, two_outputs("null", "./null"), {}).empty());
}

TEST(FakeDistinctPathsTest, TwoInputsOnOneFifoAreRefusedOneRegularFileTwiceIsNot) {
  FakeFileSystem fake;
  fake.add_fifo("p.fifo");
  fake.add_file("model.json", "{}");
  const std::vector<InputPath> twice = {InputPath{"--plan", "p.fifo", {}},
                                        InputPath{"--model", "model.json", {}},
                                        InputPath{"--base", "./p.fifo", {}}};
  expect_one_io_error(check_distinct_paths(fake, {}, twice), "./p.fifo",
                      "--plan and --base name the same pipe or socket, which can be read "
                      "only once");
  const std::vector<InputPath> once = {InputPath{"--plan", "p.fifo", {}},
                                       InputPath{"--model", "model.json", {}},
                                       InputPath{"--base", "./model.json", {}}};
  EXPECT_TRUE(check_distinct_paths(fake, {}, once).empty());
}

TEST(FakeDistinctPathsTest, AnOutputMayReplaceOnlyTheInputsItIsAllowedTo) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "{}");
  fake.add_file("meta.json", "{}");
  const std::vector<OutputFile> outs = {OutputFile{"-o", "./meta.json", "", {}},
                                        OutputFile{"--depfile", "plan.json", "", {}}};
  const std::vector<InputPath> ins = {InputPath{"--plan", "plan.json", "-o"},
                                      InputPath{"--base", "meta.json", "-o"}};
  const Diagnostics errors = check_distinct_paths(fake, outs, ins);
  expect_one_io_error(errors, "plan.json", "--depfile and --plan name the same file");
}

TEST(FakeDistinctPathsTest, StdoutOnAnInputIsRefusedEvenToTheOutputThatMayReplaceIt) {
  // `freeze --plan p.json -o - 1<>p.json`: the meta would be written into the plan itself.
  FakeFileSystem fake;
  fake.add_file("p.json", "{}");
  fake.descriptor_files[1] = "p.json";
  const std::vector<OutputFile> outs = {OutputFile{"-o", "-", "", {}}};
  const std::vector<InputPath> ins = {InputPath{"--plan", "./p.json", "-o"}};
  expect_one_io_error(check_distinct_paths(fake, outs, ins), "<stdout>",
                      "-o and --plan name the same file");
  // The same input replaced by a new file under its name is the in-place update it was.
  const std::vector<OutputFile> replaced = {OutputFile{"-o", "p.json", "", {}}};
  EXPECT_TRUE(check_distinct_paths(fake, replaced, ins).empty());
}

TEST(FakeDistinctPathsTest, StdoutOnAnotherOutputIsRefusedAndNothingIsWritten) {
  // `thaw META -o - --model-out m.json > m.json`.
  FakeFileSystem fake;
  fake.add_file("m.json", "old");
  fake.descriptor_files[1] = "m.json";
  auto result = write_outputs(fake, two_outputs("-", "m.json"));
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "m.json", "-o and --model-out name the same file");
  EXPECT_EQ(fake.nodes.at("m.json").version, 0);
  EXPECT_EQ(fake.stdout_bytes, "");
  // Stdout on a device is shared harmlessly.
  fake.add_device("tty");
  fake.descriptor_files[1] = "tty";
  EXPECT_TRUE(check_distinct_paths(fake, two_outputs("-", "tty"), {}).empty());
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
