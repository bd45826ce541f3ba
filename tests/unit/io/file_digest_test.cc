// A file's SHA-256 and line count: FIPS 180-2's vectors, and generated files against
// Python's hashlib and text mode (upstream's sha256_file and file_line_count), at read
// sizes that split every CRLF and UTF-8 character; what is not a regular file is refused
// at once.
#include "io/file_digest.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "io/io_test_support.h"
#include "io/libcrypto.h"
#include "python_reference.h"

namespace hpfreeze {
namespace {

using io_testing::expect_one_io_error;
using io_testing::spit;
using io_testing::TempDirTest;
using namespace std::string_literals;

class DigestFile : public TempDirTest {};

// Whether a shared object whose file name starts with `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("/" + name) != std::string::npos;
}

// libcrypto is loaded when a file is first hashed, not at start (ctest runs each test in a
// process of its own), and then once for the life of the process.
TEST_F(DigestFile, LibcryptoIsLoadedWhenAFileIsFirstHashed) {
  EXPECT_EQ(libcrypto_soname(), "libcrypto.so.3");
  EXPECT_FALSE(mapped("libcrypto.so"));
  spit(path("v"), "abc");
  ASSERT_TRUE(digest_file(path("v")).ok());
  EXPECT_TRUE(mapped("libcrypto.so.3"));
  const Libcrypto* first = libcrypto();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(libcrypto(), first);
}

TEST_F(DigestFile, Fips180Vectors) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const auto& [bytes, sha256] : vectors) {
    spit(path("v"), bytes);
    for (const std::size_t chunk :
         {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, kDigestChunkSize}) {
      if (chunk == 1 && bytes.size() > 100000) continue;
      const Expected<FileDigest> digest = digest_file(path("v"), chunk);
      ASSERT_TRUE(digest.ok()) << digest.errors()[0].message;
      EXPECT_EQ(digest->sha256, sha256) << bytes.size() << " bytes, chunk " << chunk;
      EXPECT_EQ(digest->size, bytes.size());
    }
  }
  EXPECT_EQ(digest_file(path("v"))->lines, 1u);
}

std::string describe(const FileDigest& digest) {
  return digest.sha256 + " " + std::to_string(digest.size) + " " +
         (digest.lines ? std::to_string(*digest.lines) : "-");
}

// Random text with every kind of line end, ASCII and 2-, 3- and 4-byte characters; with
// `broken`, one byte somewhere is replaced by one no UTF-8 text has there.
std::string random_text(std::mt19937& random, std::size_t size, bool broken) {
  static const std::vector<std::string> pieces = {
      "\n",   "\r",       "\r\n",         "def f(x):",        "    return x", " ",
      "#",    "\xc3\xa4", "\xe2\x82\xac", "\xf0\x9f\xa4\x96", "\xef\xbb\xbf", "\t",
      "\r\r", "\n\n"};
  std::string text;
  while (text.size() < size) text += pieces[random() % pieces.size()];
  if (broken && !text.empty()) {
    static const std::string bad = "\x80\xbf\xc0\xc1\xf5\xff";
    text[random() % text.size()] = bad[random() % bad.size()];
  }
  return text;
}

TEST_F(DigestFile, AsPythonAtEveryReadSize) {
  std::vector<std::pair<std::string, std::string>> files = {
      {"empty", ""},
      {"lf", "a\nb\nc\n"},
      {"crlf", "a\r\nb\r\nc\r\n"},
      {"cr", "a\rb\rc\r"},
      {"mixed", "a\r\nb\nc\rd\r\r\n\n"},
      {"no_final_newline", "a\nb\r\nlast"},
      {"only_cr", "\r"},
      {"crlf_lone", "\r\n"},
      {"lf_cr", "\n\r"},
      {"multibyte", "\xc3\xa4\n\xe2\x82\xac\r\xf0\x9f\xa4\x96\r\n\xf4\x8f\xbf\xbf"},
      {"bom", "\xef\xbb\xbfx = 1\n"},
      {"nul", "a\0b\n"s},
      {"latin1", "caf\xe9\n"},
      {"overlong", "\xc0\xaf\n"},
      {"surrogate", "\xed\xa0\x80\n"},
      {"above_max", "\xf4\x90\x80\x80\n"},
      {"cut_off", "ok\n\xe2\x82"},
      {"lone_continuation", "\x80"},
  };
  std::mt19937 random(36);
  for (std::size_t i = 0; i < 12; ++i) {
    files.emplace_back("random" + std::to_string(i),
                       random_text(random, 20000 + i * 977, i % 3 == 2));
  }
  files.emplace_back("large", random_text(random, 3 << 20, false));
  std::vector<std::string> paths;
  for (const auto& [name, bytes] : files) {
    paths.push_back(path(name));
    spit(paths.back(), bytes);
  }
  const std::vector<std::string> expected = testing_python::split_lines(
      testing_python::run_python(testing_python::kFileDigestsScript, paths));
  ASSERT_EQ(expected.size(), paths.size());
  EXPECT_EQ(expected[0], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 0 0");
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const bool large = files[i].second.size() > 100000;
    for (const std::size_t chunk :
         {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{16},
          std::size_t{17}, std::size_t{4096}, std::size_t{65536} + 1, kDigestChunkSize}) {
      if (large && chunk < 16) continue;
      const Expected<FileDigest> digest = digest_file(paths[i], chunk);
      ASSERT_TRUE(digest.ok()) << digest.errors()[0].message;
      EXPECT_EQ(describe(*digest), expected[i]) << files[i].first << ", chunk " << chunk;
    }
  }
}

TEST_F(DigestFile, ACrlfAcrossTwoReadsIsOneLineEnd) {
  spit(path("f"), "a\r\nb");
  // Reads of 2 bytes: "a\r", "\nb".
  EXPECT_EQ(digest_file(path("f"), 2)->lines, 2u);
  spit(path("g"), "a\r\r\n");
  EXPECT_EQ(digest_file(path("g"), 3)->lines, 2u);  // "a\r\r", "\n"
}

TEST_F(DigestFile, ALinkIsFollowed) {
  spit(path("target"), "abc");
  ASSERT_EQ(::symlink("target", path("link").c_str()), 0);
  EXPECT_EQ(digest_file(path("link"))->sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(DigestFile, AMissingFileIsAnError) {
  expect_one_io_error(digest_file(path("missing")).errors(), path("missing"),
                      "cannot open: No such file or directory");
}

TEST_F(DigestFile, ADirectoryIsRefused) {
  expect_one_io_error(digest_file(dir_).errors(), dir_, "is a directory");
}

// A FIFO with no writer, alone or behind a link, and devices are refused at once: the test
// runs in a child that an alarm kills if the open or the read waits.
TEST_F(DigestFile, AFifoOrADeviceIsRefusedWithoutWaiting) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("fifo", path("to_fifo").c_str()), 0);
  io_testing::expect_child_succeeds([&]() -> std::string {
    ::alarm(20);
    const std::vector<std::pair<std::string, std::string>> refused = {
        {path("fifo"), "is a FIFO, not a regular file"},
        {path("to_fifo"), "is a FIFO, not a regular file"},
        {"/dev/null", "is a character device, not a regular file"},
        {"/dev/zero", "is a character device, not a regular file"},
    };
    for (const auto& [file, message] : refused) {
      const Expected<FileDigest> digest = digest_file(file);
      if (digest.ok()) return file + " was read";
      if (digest.errors()[0].message != message) return file + ": " + digest.errors()[0].message;
      if (digest.errors()[0].error_class != ErrorClass::kIo) return file + ": not kIo";
    }
    return {};
  });
}

// A socket cannot be opened (ENXIO): it is named for what it is, as a FIFO is.
TEST_F(DigestFile, ASocketIsNamedForWhatItIs) {
  const std::string socket_path = path("s");
  const int fd = io_testing::bound_socket(socket_path);
  ASSERT_GE(fd, 0);
  expect_one_io_error(digest_file(socket_path).errors(), socket_path,
                      "is a socket, not a regular file");
  ASSERT_EQ(::symlink(socket_path.c_str(), path("link").c_str()), 0);
  expect_one_io_error(digest_file(path("link")).errors(), path("link"),
                      "is a socket, not a regular file");
  ::close(fd);
}

// A file is read for the size fstat gave and no further: /proc/self/pagemap (size 0, 256 GiB
// on x86-64) is refused after one read, as every pseudo-file that holds more than it says.
TEST_F(DigestFile, APseudoFileIsRefusedAtOnce) {
  struct stat st {};
  if (::stat("/proc/self/pagemap", &st) != 0) GTEST_SKIP() << "no /proc/self/pagemap here";
  ASSERT_EQ(::symlink("/proc/self/pagemap", path("pagemap.py").c_str()), 0);
  for (const std::size_t chunk : {std::size_t{1}, kDigestChunkSize}) {
    const auto start = std::chrono::steady_clock::now();
    expect_one_io_error(
        digest_file(path("pagemap.py"), chunk).errors(), path("pagemap.py"),
        "is longer than its size of 0 bytes (a pseudo-file, or a file written while read)");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
}

// Read from a directory's descriptor: the same digest and the same errors, named by `path`.
TEST_F(DigestFile, FromADirectoryDescriptor) {
  spit(path("f.py"), "abc\n");
  const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  const Expected<FileDigest> at = digest_file_at(dir, "f.py", "shown/f.py");
  const Expected<FileDigest> by_path = digest_file(path("f.py"));
  ASSERT_TRUE(at.ok() && by_path.ok());
  EXPECT_EQ(at->sha256, by_path->sha256);
  EXPECT_EQ(at->lines, std::optional<std::uint64_t>(1));
  expect_one_io_error(digest_file_at(dir, "none.py", "shown/none.py").errors(), "shown/none.py",
                      "cannot open: No such file or directory");
  ::close(dir);
}

TEST_F(DigestFile, AReadErrorNamesTheOsError) {
  // /proc/self/mem is a regular file whose first page is never mapped: reading it fails.
  expect_one_io_error(digest_file("/proc/self/mem").errors(), "/proc/self/mem",
                      "read failed: Input/output error");
}

TEST_F(DigestFile, AFileTheUserMayNotReadIsAnError) {
  spit(path("secret"), "x");
  ASSERT_EQ(::chmod(path("secret").c_str(), 0), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const auto body = [&]() -> std::string {
    const Expected<FileDigest> digest = digest_file(path("secret"));
    if (digest.ok()) return "read";
    return digest.errors()[0].message == "cannot open: Permission denied"
               ? std::string()
               : digest.errors()[0].message;
  };
  if (::geteuid() == 0) {
    io_testing::as_nobody(body);
  } else {
    io_testing::expect_child_succeeds(body);
  }
}

}  // namespace
}  // namespace hpfreeze
