#include "hpfreeze/io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

#include "huge_pages.h"

namespace hpfreeze {
namespace {

// Growth step for inputs of unknown size (pipes); also one pipe buffer on Linux.
constexpr std::size_t kReadChunk = 64 * 1024;
// Linux's own limit on links followed while resolving one path.
constexpr int kMaxSymlinkHops = 40;
// Keeps ".<base>.tmp.XXXXXX" within NAME_MAX (255) for long output names.
constexpr std::size_t kMaxTempBaseName = 200;

// GNU strerror_r returns the text, XSI strerror_r fills the buffer: accept both.
[[maybe_unused]] const char* strerror_text(int rc, const char* buf) {
  return rc == 0 ? buf : "unknown error";
}
[[maybe_unused]] const char* strerror_text(const char* text, const char* /*buf*/) { return text; }

Diagnostic io_error(const std::string& file, std::string_view what, int err) {
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

int open_retrying(const char* path, int flags) {
  int fd;
  do {
    fd = ::open(path, flags);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

struct ReadResult {
  int err = 0;
  bool too_large = false;
};

// Reads fd from its current offset to EOF into buf. size_hint is the expected byte
// count: with it right (regular files) buf is allocated once and one extra read sees
// EOF inside the padding; if the file grew, buf grows geometrically.
ReadResult read_to_end(int fd, std::uint64_t size_hint, std::string& buf) {
  const std::size_t expected = static_cast<std::size_t>(std::min(size_hint, kMaxInputSize));
  buf.clear();
  buf.reserve(expected + kInputPadding);
  advise_huge_pages(buf);
  buf.resize(expected + 1);
  std::size_t used = 0;
  for (;;) {
    if (used == buf.size()) {
      if (used > kMaxInputSize) return {0, true};
      // Never beyond limit + 1: one byte past the limit is enough to reject.
      const std::size_t grown = static_cast<std::size_t>(
          std::min<std::uint64_t>(std::max(buf.size() * 2, kReadChunk), kMaxInputSize + 1));
      buf.reserve(grown + kInputPadding);
      advise_huge_pages(buf);
      buf.resize(grown);
    }
    const ssize_t n = ::read(fd, buf.data() + used, buf.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      buf.clear();
      return {err, false};
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  if (used > kMaxInputSize) return {0, true};
  buf.resize(used);
  if (buf.capacity() < used + kInputPadding) buf.reserve(used + kInputPadding);
  return {};
}

// Writes all bytes to fd; waits for a non-blocking descriptor to drain.
int write_fd_all(int fd, std::string_view bytes) {
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

FileKind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return FileKind::kRegular;
  if (S_ISDIR(mode)) return FileKind::kDirectory;
  if (S_ISLNK(mode)) return FileKind::kSymlink;
  return FileKind::kOther;
}

// A relative link target is relative to the directory holding the link.
std::string join_link_target(const std::string& link_path, const std::string& link_text) {
  if (!link_text.empty() && link_text.front() == '/') return link_text;
  const std::size_t slash = link_path.rfind('/');
  if (slash == std::string::npos) return link_text;
  return link_path.substr(0, slash + 1) + link_text;
}

// Temporary files are created unnamed (O_TMPFILE) where the file system allows it, so
// that a process killed while writing leaves nothing behind. Until the rename such a file
// is known by the path "/proc/self/fd/N" of a second descriptor kept open for it (the
// handle itself is closed before the rename); rename_file links it under a temporary name
// beside the target just before renaming, remove_file drops the descriptor.
constexpr std::string_view kUnnamedPrefix = "/proc/self/fd/";

// The kept descriptor of an unnamed temporary file, or -1 for any other path.
int unnamed_temp_fd(const std::string& path) {
  if (!path.starts_with(kUnnamedPrefix)) return -1;
  const char* const end = path.data() + path.size();
  int fd = -1;
  const auto [stop, ec] = std::from_chars(path.data() + kUnnamedPrefix.size(), end, fd);
  struct stat st {};
  if (ec != std::errc() || stop != end || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return -1;
  }
  return fd;
}

// ".<base>.tmp.XXXXXX" in the directory of target_path; X random, or left for mkostemp.
std::string temp_name(const std::string& target_path, bool randomize) {
  const std::size_t slash = target_path.rfind('/');
  const std::size_t base_start = slash == std::string::npos ? 0 : slash + 1;
  std::string name = target_path.substr(0, base_start);
  name += '.';
  name += std::string_view(target_path).substr(base_start, kMaxTempBaseName);
  name += ".tmp.XXXXXX";
  if (randomize) {
    constexpr std::string_view kLetters =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[6] = {};
    if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
      const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
      std::memcpy(bytes, &now, sizeof bytes);
    }
    for (std::size_t i = 0; i < sizeof bytes; ++i) {
      name[name.size() - 6 + i] = kLetters[bytes[i] % kLetters.size()];
    }
  }
  return name;
}

// Devices and FIFOs are written into; renaming over them would destroy them.
Expected<WriteOutcome> write_in_place(FileSystem& fs, const std::string& path,
                                      std::string_view bytes) {
  int handle = -1;
  if (const int err = fs.open_for_writing(path, &handle))
    return io_error(path, "cannot write", err);
  if (const int err = fs.write_all(handle, bytes)) {
    fs.close_file(handle);
    return io_error(path, "cannot write", err);
  }
  if (const int err = fs.close_file(handle)) return io_error(path, "cannot write", err);
  return WriteOutcome::kWritten;
}

}  // namespace

std::string describe_errno(int err) {
  char buf[256] = {};
  return strerror_text(::strerror_r(err, buf, sizeof buf), buf);
}

Expected<InputFile> read_input(const std::string& path) {
  InputFile input;
  input.path = path;
  input.display_name = path == "-" ? "<stdin>" : path;
  const std::string& name = input.display_name;

  int fd = STDIN_FILENO;
  if (path != "-") {
    fd = open_retrying(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return io_error(name, "cannot open", errno);
  }
  const FdCloser closer(path != "-" ? fd : -1);

  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error(name, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) return make_io_error(name, "is a directory");
  std::uint64_t size_hint = kReadChunk;
  if (S_ISREG(st.st_mode)) {
    // Stdin may be a file the caller already read part of: only the rest is ours.
    const off_t offset = ::lseek(fd, 0, SEEK_CUR);
    size_hint = static_cast<std::uint64_t>(st.st_size);
    if (offset > 0 && offset <= st.st_size) size_hint -= static_cast<std::uint64_t>(offset);
    if (size_hint > kMaxInputSize) return make_io_error(name, "input larger than 4 GiB");
  }
  const ReadResult result = read_to_end(fd, size_hint, input.bytes);
  if (result.too_large) return make_io_error(name, "input larger than 4 GiB");
  if (result.err != 0) return io_error(name, "read failed", result.err);
  return input;
}

RealFileSystem::RealFileSystem() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  new_file_mode_ = 0666u & ~static_cast<unsigned>(mask);
}

int RealFileSystem::status(const std::string& path, bool follow_symlinks, FileStatus* out) {
  struct stat st {};
  const int rc = follow_symlinks ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  if (rc != 0) {
    if (errno != ENOENT) return errno;
    *out = FileStatus{};
    return 0;
  }
  out->kind = kind_of(st.st_mode);
  out->size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  return 0;
}

int RealFileSystem::read_link(const std::string& path, std::string* target) {
  std::string buf(256, '\0');
  for (;;) {
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return errno;
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      *target = std::move(buf);
      return 0;
    }
    buf.resize(buf.size() * 2);  // possibly truncated: retry with more room
  }
}

int RealFileSystem::read_file(const std::string& path, std::string* bytes) {
  const int fd = open_retrying(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno;
  const FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  const ReadResult result = read_to_end(
      fd, S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : kReadChunk, *bytes);
  if (result.too_large) return EFBIG;
  return result.err;
}

int RealFileSystem::create_temp_file(const std::string& target_path, std::string* temp_path,
                                     int* handle) {
  const std::size_t slash = target_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target_path.substr(0, slash + 1);
  // Any failure here (no O_TMPFILE support, no /proc) falls back to a named file, and
  // mkostemp reports the errors both would meet (missing or read-only directory).
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd >= 0) {
    const int kept = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (kept >= 0) {
      std::string name = std::string(kUnnamedPrefix) + std::to_string(kept);
      if (::access(name.c_str(), F_OK) == 0) {
        *temp_path = std::move(name);
        *handle = fd;
        return 0;
      }
      ::close(kept);
    }
    ::close(fd);
  }
  std::string name = temp_name(target_path, /*randomize=*/false);
  const int named = ::mkostemp(name.data(), O_CLOEXEC);
  if (named < 0) return errno;
  *temp_path = std::move(name);
  *handle = named;
  return 0;
}

int RealFileSystem::open_for_writing(const std::string& path, int* handle) {
  const int fd = open_retrying(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno;
  *handle = fd;
  return 0;
}

int RealFileSystem::write_all(int handle, std::string_view bytes) {
  return write_fd_all(handle, bytes);
}

int RealFileSystem::close_file(int handle) {
  // Linux releases the descriptor even when close fails; EINTR is not a lost write.
  if (::close(handle) != 0 && errno != EINTR) return errno;
  return 0;
}

int RealFileSystem::set_mode(const std::string& path, unsigned mode) {
  return ::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0 ? errno : 0;
}

int RealFileSystem::rename_file(const std::string& from, const std::string& to) {
  const int fd = unnamed_temp_fd(from);
  if (fd < 0) return ::rename(from.c_str(), to.c_str()) != 0 ? errno : 0;
  // Only a kill between these two calls can leave a (complete) temporary file behind.
  std::string name;
  for (int attempt = 0;; ++attempt) {
    name = temp_name(to, /*randomize=*/true);
    if (::linkat(AT_FDCWD, from.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) break;
    if (errno != EEXIST || attempt == 100) return errno;
  }
  if (::rename(name.c_str(), to.c_str()) != 0) {
    const int err = errno;
    ::unlink(name.c_str());
    return err;
  }
  ::close(fd);
  return 0;
}

int RealFileSystem::remove_file(const std::string& path) {
  // An unnamed file vanishes with its last descriptor.
  if (const int fd = unnamed_temp_fd(path); fd >= 0) return ::close(fd) != 0 ? errno : 0;
  return ::unlink(path.c_str()) != 0 ? errno : 0;
}

FileSystem& real_file_system() {
  static RealFileSystem fs;
  return fs;
}

Expected<WriteOutcome> write_output_file(FileSystem& fs, const std::string& path,
                                         std::string_view bytes, const WriteOptions& options) {
  if (path.empty()) return io_error(path, "cannot write", ENOENT);
  FileStatus followed;
  if (const int err = fs.status(path, /*follow_symlinks=*/true, &followed)) {
    return io_error(path, "cannot write", err);
  }
  // A trailing slash names a directory even when nothing exists there yet (open(2) agrees).
  if (followed.kind == FileKind::kDirectory || path.back() == '/') {
    return make_io_error(path, "is a directory");
  }
  if (followed.kind == FileKind::kOther) return write_in_place(fs, path, bytes);

  // Follow links one at a time: the replacement must happen next to the real file.
  std::string target = path;
  FileStatus st;
  for (int hops = 0;; ++hops) {
    if (const int err = fs.status(target, /*follow_symlinks=*/false, &st)) {
      return io_error(path, "cannot write", err);
    }
    if (st.kind != FileKind::kSymlink) break;
    if (hops == kMaxSymlinkHops) return io_error(path, "cannot write", ELOOP);
    std::string link_text;
    if (const int err = fs.read_link(target, &link_text)) {
      return io_error(path, "cannot write", err);
    }
    target = join_link_target(target, link_text);
  }
  if (st.kind == FileKind::kDirectory) return make_io_error(path, "is a directory");

  if (options.if_changed && st.kind == FileKind::kRegular && st.size == bytes.size()) {
    std::string existing;
    // An unreadable target is simply rewritten: the comparison only saves work.
    if (fs.read_file(target, &existing) == 0 && existing == bytes) return WriteOutcome::kUnchanged;
  }

  std::string temp;
  int handle = -1;
  if (const int err = fs.create_temp_file(target, &temp, &handle)) {
    return io_error(path, "cannot write", err);
  }
  auto abandon = [&](std::string_view what, int err) -> Expected<WriteOutcome> {
    fs.remove_file(temp);
    return io_error(path, what, err);
  };
  if (const int err = fs.write_all(handle, bytes)) {
    fs.close_file(handle);
    return abandon("cannot write", err);
  }
  if (const int err = fs.close_file(handle)) return abandon("cannot write", err);
  // mkstemp creates 0600; an output file gets what a plain create would give it.
  if (const int err = fs.set_mode(temp, fs.new_file_mode())) {
    return abandon("cannot set mode", err);
  }
  if (const int err = fs.rename_file(temp, target)) return abandon("cannot rename into place", err);
  return WriteOutcome::kWritten;
}

Expected<WriteOutcome> write_stdout(std::string_view bytes) {
  if (const int err = write_fd_all(STDOUT_FILENO, bytes)) {
    return make_io_error("", "cannot write to stdout: " + describe_errno(err));
  }
  return WriteOutcome::kWritten;
}

Expected<WriteOutcome> write_output(const std::string& path, std::string_view bytes,
                                    const WriteOptions& options) {
  if (path == "-") return write_stdout(bytes);
  return write_output_file(real_file_system(), path, bytes, options);
}

}  // namespace hpfreeze
