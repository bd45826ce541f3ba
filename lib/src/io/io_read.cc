// Reading inputs: read_input, the stdin guards and rule, chunked stdin, files read in
// pieces, and the read side of RealFileSystem (io.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <utility>

#include "base/huge_pages.h"
#include "io/file_kind_text.h"
#include "io/io.h"
#include "io/io_posix.h"

namespace hpfreeze {
namespace posix {

namespace {

// JSON allows tab, LF and CR as the only raw control bytes (in strings too).
bool is_forbidden_control(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

}  // namespace

// With size_hint right (regular files) buf is allocated once and one extra read sees EOF
// inside the padding; if the file grew, buf grows geometrically, never beyond limit.
ReadResult read_to_end(int fd, std::uint64_t size_hint, std::uint64_t limit, bool stop_at_control,
                       std::string& buf) {
  const std::size_t expected = static_cast<std::size_t>(std::min(size_hint, limit - 1));
  // A buffer handed on by an earlier parse keeps its old bytes until the read overwrites
  // them: only room beyond them is zero-filled by resize(). Too small, it is emptied
  // first, so that growing it copies nothing.
  if (buf.capacity() < expected + kInputPadding) {
    buf.clear();
    buf.reserve(expected + kInputPadding);
  }
  advise_huge_pages(buf);
  buf.resize(expected + 1);
  std::size_t used = 0;
  for (;;) {
    if (used == buf.size()) {
      if (used >= limit) return {0, true};
      const std::size_t grown = static_cast<std::size_t>(
          std::min<std::uint64_t>(std::max(buf.size() * 2, kReadChunk), limit));
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
    const auto fresh = buf.begin() + static_cast<std::ptrdiff_t>(used);
    used += static_cast<std::size_t>(n);
    if (stop_at_control) {
      const auto bad = std::find_if(fresh, buf.begin() + static_cast<std::ptrdiff_t>(used),
                                    is_forbidden_control);
      if (bad != buf.begin() + static_cast<std::ptrdiff_t>(used)) {
        used = static_cast<std::size_t>(bad - buf.begin()) + 1;
        break;
      }
    }
  }
  if (used >= limit) return {0, true};
  buf.resize(used);
  if (buf.capacity() < used + kInputPadding) buf.reserve(used + kInputPadding);
  return {};
}

ReadResult read_exact(int fd, char* dst, std::size_t n) {
  ReadResult result;
  while (result.got < n) {
    const ssize_t got = ::read(fd, dst + result.got, n - static_cast<std::size_t>(result.got));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      result.err = errno;
      return result;
    }
    if (got == 0) {
      result.shorter = true;
      return result;
    }
    result.got += static_cast<std::uint64_t>(got);
  }
  return result;
}

ReadResult expect_end(int fd) {
  char probe[64];
  ReadResult result;
  for (;;) {
    const ssize_t n = ::read(fd, probe, sizeof probe);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) result.err = errno;
    result.longer = n > 0;
    return result;
  }
}

ReadResult read_regular(int fd, std::uint64_t size, std::string& buf) {
  const auto expected = static_cast<std::size_t>(size);
  if (buf.capacity() < expected + kInputPadding) {
    buf.clear();
    buf.reserve(expected + kInputPadding);
  }
  advise_huge_pages(buf);
  buf.resize(expected);
  ReadResult result = read_exact(fd, buf.data(), expected);
  if (result.ok()) result = expect_end(fd);
  if (!result.ok()) buf.clear();
  return result;
}

Diagnostic size_changed_error(const std::string& file, std::uint64_t size, const ReadResult& read) {
  if (read.longer) {
    return make_io_error(file, "is longer than its size of " + plural(size, "byte") +
                                   " (a pseudo-file, or a file written while read)");
  }
  if (read.shorter) {
    return make_io_error(file, "ended after " + std::to_string(read.got) + " of its " +
                                   plural(size, "byte") + " (truncated while read)");
  }
  return io_error(file, "read failed", read.err);
}

Diagnostic open_error(int dir, const std::string& name, const std::string& path, int err) {
  struct stat st {};
  if (err != ENOENT && ::fstatat(dir, name.c_str(), &st, 0) == 0 && !S_ISREG(st.st_mode)) {
    return make_io_error(path, not_regular_file_message(st.st_mode));
  }
  return io_error(path, "cannot open", err);
}

}  // namespace posix

using posix::io_error;

void guard_standard_descriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // O_PATH: the placeholder can be neither read nor written (EBADF), as a closed one.
    const int placeholder = ::open("/", O_PATH | O_DIRECTORY);
    if (placeholder >= 0 && placeholder != fd) {
      ::dup2(placeholder, fd);
      ::close(placeholder);
    }
  }
}

Expected<bool> check_stdin_open() {
  const int flags = ::fcntl(STDIN_FILENO, F_GETFL);
  if (flags == -1 || (flags & O_PATH) != 0) {
    return make_io_error("<stdin>", "cannot read: standard input is closed");
  }
  return true;
}

Expected<InputFile> read_input(const std::string& path, std::string buffer) {
  // Before any open of ours: a closed stdin must never be refilled by one of our files.
  static const bool guarded [[maybe_unused]] = (guard_standard_descriptors(), true);
  InputFile input;
  input.bytes = std::move(buffer);
  input.path = path;
  input.display_name = path == "-" ? "<stdin>" : path;
  const std::string& name = input.display_name;

  int fd = STDIN_FILENO;
  if (path == "-") {
    if (Expected<bool> open = check_stdin_open(); !open) return std::move(open.errors());
  } else {
    fd = posix::openat_retrying(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return io_error(name, "cannot open", errno);
  }
  const posix::FdCloser closer(path != "-" ? fd : -1);

  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error(name, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) return make_io_error(name, "is a directory");
  const bool stream = !S_ISREG(st.st_mode);
  std::uint64_t size_hint = posix::kReadChunk;
  if (!stream) {
    // Stdin may be a file the caller already read part of: only the rest is ours.
    const off_t offset = ::lseek(fd, 0, SEEK_CUR);
    size_hint = static_cast<std::uint64_t>(st.st_size);
    if (offset > 0) size_hint -= static_cast<std::uint64_t>(std::min(offset, st.st_size));
  }
  constexpr std::string_view kFileTooLarge = "input too large (4 GiB or more)";
  constexpr std::string_view kStreamTooLarge =
      "input too large (1 GiB or more from a pipe or device)";
  if (size_hint >= kMaxInputSize) return make_io_error(name, std::string(kFileTooLarge));
  if (!stream) {
    // At most the size fstat gave: a pseudo-file (/proc/self/pagemap) may never end.
    const posix::ReadResult result = posix::read_regular(fd, size_hint, input.bytes);
    if (!result.ok()) {
      return posix::size_changed_error(name, size_hint, result);
    }
    return input;
  }
  const posix::ReadResult result =
      posix::read_to_end(fd, size_hint, kMaxStreamInputSize, true, input.bytes);
  if (result.too_large) return make_io_error(name, std::string(kStreamTooLarge));
  if (result.err != 0) return io_error(name, "read failed", result.err);
  return input;
}

std::optional<Diagnostic> stdin_twice_error(std::initializer_list<const std::string*> paths,
                                            std::string_view names) {
  const auto on_stdin = std::count_if(paths.begin(), paths.end(),
                                      [](const std::string* path) { return path && *path == "-"; });
  if (on_stdin <= 1) return std::nullopt;
  return make_io_error({}, "at most one of " + std::string(names) + " may be '-' (stdin)");
}

std::size_t regular_file_size(const std::string& path) {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<std::size_t>(st.st_size);
}

namespace {

class PosixRegularFile final : public RegularFile {
 public:
  explicit PosixRegularFile(int fd) : fd_(fd) {}
  PosixRegularFile(const PosixRegularFile&) = delete;
  PosixRegularFile& operator=(const PosixRegularFile&) = delete;
  ~PosixRegularFile() override { ::close(fd_); }

  [[nodiscard]] std::uint64_t size() const override { return size_; }
  void set_size(std::uint64_t size) { size_ = size; }

  int read_at(std::uint64_t offset, std::uint64_t n, std::string& out, std::size_t spare) override {
    out.clear();
    out.reserve(static_cast<std::size_t>(n) + spare);
    out.resize(static_cast<std::size_t>(n));
    std::uint64_t done = 0;
    while (done < n) {
      const ssize_t got =
          ::pread(fd_, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return errno;
      if (got == 0) return EIO;  // shrank under us
      done += static_cast<std::uint64_t>(got);
    }
    return 0;
  }

 private:
  int fd_;
  std::uint64_t size_ = 0;
};

}  // namespace

Expected<InputFile> RealFileSystem::read_input(const std::string& path, std::string buffer) {
  return hpfreeze::read_input(path, std::move(buffer));
}

std::size_t RealFileSystem::regular_file_size(const std::string& path) {
  return hpfreeze::regular_file_size(path);
}

FileKind RealFileSystem::kind_of(const std::string& path) {
  struct stat st {};
  if (path == "-") return FileKind::kOther;
  if (::stat(path.c_str(), &st) != 0) return FileKind::kMissing;
  if (S_ISREG(st.st_mode)) return FileKind::kRegular;
  return S_ISDIR(st.st_mode) ? FileKind::kDirectory : FileKind::kOther;
}

Expected<std::unique_ptr<RegularFile>> RealFileSystem::open_regular(const std::string& path) {
  // Opening a FIFO or a device waits for a writer, and closing it again throws away what
  // the writer sent: stat() opens nothing, and O_NONBLOCK keeps a FIFO that replaced the
  // file in between from blocking the open.
  if (struct stat named{}; ::stat(path.c_str(), &named) == 0 && !S_ISREG(named.st_mode)) {
    return make_io_error(path, "is not a regular file");
  }
  const int fd =
      posix::openat_retrying(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return make_io_error(path, "cannot open: " + describe_errno(errno));
  auto file = std::make_unique<PosixRegularFile>(fd);  // closes fd from here on
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return make_io_error(path, "is not a regular file");
  }
  file->set_size(static_cast<std::uint64_t>(st.st_size));
  return std::unique_ptr<RegularFile>(std::move(file));
}

Expected<std::string> read_stdin_chunk(std::size_t max_bytes) {
  if (Expected<bool> open = check_stdin_open(); !open) return std::move(open.errors());
  std::string chunk(max_bytes, '\0');
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, chunk.data(), chunk.size());
    if (n >= 0) {
      chunk.resize(static_cast<std::size_t>(n));
      return chunk;
    }
    if (errno != EINTR) return io_error("<stdin>", "read failed", errno);
  }
}

}  // namespace hpfreeze
