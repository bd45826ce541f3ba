#pragma once
// POSIX helpers shared by the reader (io_read.cc), the writer (io.cc) and the real file
// system (real_file_system.cc). Internal to the library.

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
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

inline FileIdentity identity_of(const struct stat& st) {
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
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

// Reads fd from its current offset to EOF into buf (see io_read.cc): a stream (pipe, FIFO,
// device). limit is the most bytes accepted; stop_at_control ends the read after the first
// byte no JSON text holds.
struct ReadResult {
  int err = 0;
  bool too_large = false;
  // A regular file read for the size fstat gave: it held more (a pseudo-file such as
  // /proc/self/pagemap, or a file written while read), or ended after `got` bytes.
  bool longer = false;
  bool shorter = false;
  std::uint64_t got = 0;
  [[nodiscard]] bool ok() const { return err == 0 && !too_large && !longer && !shorter; }
};
ReadResult read_to_end(int fd, std::uint64_t size_hint, std::uint64_t limit, bool stop_at_control,
                       std::string& buf);

// Reads exactly n bytes of fd into dst, in as many reads as it takes: ok, or the failed
// read's errno, or `shorter` when the file ended first (`got` bytes read).
ReadResult read_exact(int fd, char* dst, std::size_t n);

// Whether fd, a regular file read up to the size fstat gave, ends there: ok, `longer` when it
// yields more, or the read's errno. The probe reads 64 bytes, as a pseudo-file may refuse a
// read of one (/proc/self/pagemap reads whole 8-byte entries).
ReadResult expect_end(int fd);

// Reads the regular file fd from its current offset for exactly `size` bytes (what fstat
// gave once it was open, less the offset) into buf, with kInputPadding bytes of spare
// capacity, and no further (read_exact, then expect_end): a file that yields more or fewer
// bytes is refused at once, however much more it would give.
ReadResult read_regular(int fd, std::uint64_t size, std::string& buf);

// The error of a regular file that was not the size fstat gave (read_regular's result).
Diagnostic size_changed_error(const std::string& file, std::uint64_t size, const ReadResult& read);

// The refusal of `path` opened (at `dir`) as a regular file that turned out to be none, or
// could not be opened: a socket cannot be opened at all (ENXIO), so what the name is is asked
// again without opening it, for the message "is a socket, not a regular file".
Diagnostic open_error(int dir, const std::string& name, const std::string& path, int err);

}  // namespace hpfreeze::posix
