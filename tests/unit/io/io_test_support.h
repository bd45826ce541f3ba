#pragma once
// Helpers of the I/O tests (io_*_test.cc): files in a fresh temporary
// directory, and bodies run in a forked child whose descriptors they may rewire.

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze::io_testing {

namespace fs = std::filesystem;

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void spit(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Bytes that differ at every position, so truncation or reordering shows.
inline std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

// A Unix socket bound at `path` (which must fit sockaddr_un): its descriptor, -1 on failure.
inline int bound_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof address.sun_path) return -1;
  std::copy(path.begin(), path.end(), address.sun_path);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline struct stat lstat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

class TempDirTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "hpfreeze_io_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir_, ec)) {
      if (e.is_directory(ec)) fs::permissions(e.path(), fs::perms::owner_all, ec);
    }
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

// Runs body in a forked child, whose fd table it may rewire freely, and expects a clean
// exit. body returns an empty string on success, else what went wrong.
template <class Body>
void expect_child_succeeds(Body body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    const std::string problem = body();
    if (!problem.empty()) {
      const std::string line = "child: " + problem + "\n";
      (void)!::write(2, line.data(), line.size());
    }
    ::_exit(problem.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died, status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Runs body as user nobody in a child (root only: the caller must skip otherwise).
template <class Body>
void as_nobody(Body body) {
  expect_child_succeeds([&]() -> std::string {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) {
      return "cannot become nobody";
    }
    return body();
  });
}

inline void expect_one_io_error(const Diagnostics& errors, const std::string& file,
                                const std::string& message) {
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].file, file);
  EXPECT_EQ(errors[0].message, message);
  EXPECT_EQ(errors[0].pointer, "");
  EXPECT_EQ(errors[0].line, 0u);
  EXPECT_EQ(errors[0].severity, Severity::kError);
  EXPECT_EQ(errors[0].error_class, ErrorClass::kIo);
}

}  // namespace hpfreeze::io_testing
