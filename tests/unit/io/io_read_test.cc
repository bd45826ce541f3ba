// read_input and read_stdin_chunk: regular files, pipes, devices and stdin, on the real disk.
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

using FilePiecesTest = TempDirTest;

TEST_F(FilePiecesTest, AFileComesInPiecesOfTheGivenSize) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += std::to_string(i) + ",";
  spit(path("f"), bytes);
  Expected<FilePieces> pieces = FilePieces::open(path("f"), 7);
  ASSERT_TRUE(pieces.ok()) << pieces.errors().front().message;
  EXPECT_EQ(pieces->size(), bytes.size());
  std::string seen;
  for (;;) {
    Expected<std::string_view> piece = pieces->next();
    ASSERT_TRUE(piece.ok());
    if (piece->empty()) break;
    EXPECT_LE(piece->size(), 7U);
    seen += *piece;
  }
  EXPECT_EQ(seen, bytes);
  // Moved, it goes on where it was.
  spit(path("g"), "abcdef");
  Expected<FilePieces> g = FilePieces::open(path("g"), 4);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g->next(), "abcd");
  FilePieces moved = std::move(*g);
  EXPECT_EQ(*moved.next(), "ef");
  EXPECT_EQ(*moved.next(), "");
}

TEST_F(FilePiecesTest, OnlyARegularFileIsRead) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);  // no writer: an open would wait
  ASSERT_EQ(::mkdir(path("dir").c_str(), 0755), 0);
  for (const auto& [name, message] : std::vector<std::pair<std::string, std::string>>{
           {"fifo", "is not a regular file"},
           {"dir", "is a directory"},
           {"missing", "cannot open: No such file or directory"}}) {
    Expected<FilePieces> pieces = FilePieces::open(path(name));
    ASSERT_FALSE(pieces.ok()) << name;
    EXPECT_EQ(pieces.errors().front().location_and_message(), path(name) + ": " + message);
    EXPECT_EQ(pieces.errors().front().error_class, ErrorClass::kIo);
  }
}

}  // namespace
}  // namespace hpfreeze
