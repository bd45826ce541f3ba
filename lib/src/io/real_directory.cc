// The tree side of RealFileSystem (io.h): directories held by descriptor, every entry opened
// from its directory's descriptor with openat, and the digests of check --bundle.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/file_digest.h"
#include "io/io.h"
#include "io/io_posix.h"

namespace hpfreeze {
namespace {

// A regular file opened by a walk, read through its descriptor.
class PosixOpenedFile final : public OpenedFile {
 public:
  PosixOpenedFile(int fd, const struct stat& st)
      : fd_(fd), size_(static_cast<std::uint64_t>(st.st_size)), identity_(posix::identity_of(st)) {}
  ~PosixOpenedFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] std::uint64_t size() const override { return size_; }
  [[nodiscard]] FileIdentity identity() const override { return identity_; }

  Expected<InputFile> read(const std::string& display_name, std::string buffer) override {
    InputFile input{display_name, display_name, std::move(buffer)};
    if (size_ >= kMaxInputSize)
      return make_io_error(display_name, "input too large (4 GiB or more)");
    // Opened without waiting (a FIFO could have been there); a regular file is read blocking.
    if (const int flags = ::fcntl(fd_, F_GETFL); flags != -1)
      ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
    const posix::ReadResult result = posix::read_regular(fd_, size_, input.bytes);
    ::close(std::exchange(fd_, -1));  // read once: the descriptor goes as soon as it is done
    if (!result.ok()) return posix::size_changed_error(display_name, size_, result);
    return input;
  }

 private:
  int fd_;
  std::uint64_t size_;
  FileIdentity identity_;
};

class PosixDirectory final : public Directory {
 public:
  PosixDirectory(int fd, const struct stat& st) : fd_(fd), identity_(posix::identity_of(st)) {}
  ~PosixDirectory() override { ::close(fd_); }

  // Opens `name` at `dir` (a descriptor or AT_FDCWD) as a directory.
  static int open(int dir, const char* name, bool follow, std::shared_ptr<Directory>* out) {
    const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
    const int fd = posix::openat_retrying(dir, name, flags);
    if (fd < 0) return errno;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return err;
    }
    *out = std::make_shared<PosixDirectory>(fd, st);
    return 0;
  }

  [[nodiscard]] FileIdentity identity() const override { return identity_; }

  int list(std::vector<DirectoryEntry>* entries) override {
    // A descriptor of its own for the listing: closedir closes it, and leaves ours open.
    const int listing = posix::openat_retrying(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listing < 0) return errno;
    DIR* dir = ::fdopendir(listing);
    if (dir == nullptr) {
      const int err = errno;
      ::close(listing);
      return err;
    }
    int err = 0;
    for (;;) {
      errno = 0;
      const dirent* entry = ::readdir(dir);
      if (entry == nullptr) {
        err = errno;
        break;
      }
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      unsigned type = DTTOIF(entry->d_type);
      if (entry->d_type == DT_UNKNOWN) {  // file systems that do not fill in d_type
        struct stat st {};
        type = ::fstatat(fd_, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                   ? static_cast<unsigned>(st.st_mode & S_IFMT)
                   : 0;
      }
      entries->push_back({std::string(name), type});
    }
    ::closedir(dir);
    return err;
  }

  int open_directory(const std::string& name, std::shared_ptr<Directory>* out) override {
    return open(fd_, name.c_str(), false, out);
  }

  int open_parent(std::shared_ptr<Directory>* out) override { return open(fd_, "..", false, out); }

  Opened open_file(const std::string& name) override {
    Opened opened;
    const int fd =
        posix::openat_retrying(fd_, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st {};
    if (fd < 0) {
      opened.err = errno;
      // A socket cannot be opened (ENXIO): what it is comes from its entry.
      if (opened.err != ENOENT && ::fstatat(fd_, name.c_str(), &st, 0) == 0 &&
          !S_ISREG(st.st_mode)) {
        opened.err = 0;
        opened.type = static_cast<unsigned>(st.st_mode & S_IFMT);
      }
      return opened;
    }
    if (::fstat(fd, &st) != 0) {
      opened.err = errno;
      ::close(fd);
      return opened;
    }
    opened.type = static_cast<unsigned>(st.st_mode & S_IFMT);
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return opened;
    }
    opened.file = std::make_unique<PosixOpenedFile>(fd, st);
    return opened;
  }

  Expected<FileDigest> digest(const std::string& name, const std::string& path,
                              std::size_t chunk_size) override {
    return digest_file_at(fd_, name, path, chunk_size);
  }

 private:
  int fd_;
  FileIdentity identity_;
};

}  // namespace

int RealFileSystem::open_directory(const std::string& path, std::shared_ptr<Directory>* out) {
  if (path == "-" || path.empty()) return ENOTDIR;
  return PosixDirectory::open(AT_FDCWD, path.c_str(), true, out);
}

Expected<FileDigest> RealFileSystem::digest(const std::string& path, std::size_t chunk_size) {
  return digest_file(path, chunk_size);
}

std::optional<std::string> RealFileSystem::digest_unavailable() {
  return hpfreeze::digest_unavailable();
}

}  // namespace hpfreeze
