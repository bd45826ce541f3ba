#pragma once
// POSIX helpers shared by the reader (io_read.cc), the writer (io.cc) and the real file
// system (real_file_system.cc). Internal to the library.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "io/io.h"

namespace hpfreeze::posix {

// Growth step for inputs of unknown size (pipes); also one pipe buffer on Linux.
inline constexpr std::size_t kReadChunk = 64 * 1024;

inline Diagnostic io_error(const std::string& file, std::string_view what, int err) {
  std::string message(what);
  message += ": ";
  message += describe_errno(err);
  return make_io_error(file, std::move(message));
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_;
};

inline int openat_retrying(int dir, const char* path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::openat(dir, path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Writes all bytes to fd; waits for a non-blocking descriptor to drain.
inline int write_fd_all(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd pfd{fd, POLLOUT, 0};
        if (::poll(&pfd, 1, -1) < 0 && errno != EINTR) return errno;
        continue;
      }
      return errno;
    }
    if (n == 0) return EIO;  // no progress and no reason: do not spin
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

// Reads fd from its current offset to EOF into buf (see io_read.cc). limit is the most
// bytes accepted; stop_at_control ends the read after the first byte no JSON text holds.
struct ReadResult {
  int err = 0;
  bool too_large = false;
};
ReadResult read_to_end(int fd, std::uint64_t size_hint, std::uint64_t limit, bool stop_at_control,
                       std::string& buf);

}  // namespace hpfreeze::posix
