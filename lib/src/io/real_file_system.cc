// RealFileSystem: the writer's disk operations on Linux, every one relative to the
// descriptor of the directory that holds the output (io.h).
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "io/io.h"
#include "io/io_posix.h"

namespace hpfreeze {
namespace {

// Linux's own limit on links followed while resolving one path.
constexpr int kMaxSymlinkHops = 40;
// Keeps ".<base>.tmp.XXXXXX" within NAME_MAX (255) for long output names.
constexpr std::size_t kMaxTempBaseName = 200;
// Our descriptors by path: an unnamed temporary file is reached through one kept open for
// it, and an open directory's real path is read from its one.
constexpr std::string_view kProcFd = "/proc/self/fd/";

// The number text spells in canonical decimal ("0", "17"; not "01", "+1", " 1"), the only
// spelling under which the kernel lists descriptors and processes; else -1.
int canonical_number(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return -1;
  const char* const end = text.data() + text.size();
  int n = -1;
  const auto [stop, ec] = std::from_chars(text.data(), end, n);
  return ec == std::errc() && stop == end && n >= 0 ? n : -1;
}

// "dir/base" → {"dir", "base"}; a bare name lives in ".".
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// Files there are not ordinary files: written into, never replaced.
bool on_pseudo_file_system(int dir) {
  struct statfs fs {};
  if (::fstatfs(dir, &fs) != 0) return false;
  return fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC;
}

int read_link_at(int dir, const std::string& name, std::string* text) {
  std::string buf(256, '\0');
  for (;;) {
    const ssize_t n = ::readlinkat(dir, name.c_str(), buf.data(), buf.size());
    if (n < 0) return errno;
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      *text = std::move(buf);
      return 0;
    }
    buf.resize(buf.size() * 2);  // possibly truncated: retry with more room
  }
}

enum class DescriptorDir { kNone, kOurs, kForeign };

// The last component of path, taken off it ("/a/b" → "b", path "/a").
std::string_view take_last(std::string_view& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view last = path.substr(slash + 1);
  path = path.substr(0, slash);
  return last;
}

// Whose descriptors dir lists, by its real path: "PROC/PID/fd" or "PROC/PID/task/TID/fd"
// on a proc file system mounted at PROC are a process's (PID ours as that /proc counts
// it, or one of our threads); anything else is no one's.
DescriptorDir descriptor_dir(int dir) {
  struct statfs fs {};
  if (::fstatfs(dir, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) return DescriptorDir::kNone;
  std::string real;
  if (read_link_at(AT_FDCWD, std::string(kProcFd) + std::to_string(dir), &real) != 0) {
    return DescriptorDir::kNone;
  }
  std::string_view proc = real;
  if (take_last(proc) != "fd") return DescriptorDir::kNone;
  std::string_view pid = take_last(proc);
  if (proc.ends_with("/task") && canonical_number(pid) >= 0) {
    proc.remove_suffix(std::string_view("/task").size());
    pid = take_last(proc);
  }
  if (canonical_number(pid) < 0) return DescriptorDir::kNone;
  // Not getpid(): that /proc may count the pids of another namespace (a container).
  const std::string self = std::string(proc) + "/self";
  std::string own;
  if (read_link_at(AT_FDCWD, self, &own) != 0) own = std::to_string(::getpid());
  if (pid == own) return DescriptorDir::kOurs;
  const std::string thread = self + "/task/" + std::string(pid);
  return ::faccessat(AT_FDCWD, thread.c_str(), F_OK, 0) == 0 ? DescriptorDir::kOurs
                                                             : DescriptorDir::kForeign;
}

// ".<base>.<kind>.XXXXXX" with random letters.
std::string random_name(const std::string& base, std::string_view kind) {
  std::string name = ".";
  name += std::string_view(base).substr(0, kMaxTempBaseName);
  name += '.';
  name += kind;
  name += ".XXXXXX";
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
  return name;
}

// Gives `from` (a path, or an entry of dir) a new random name in dir by link(2).
template <class LinkOnce>
int link_under_random_name(const std::string& base, std::string_view kind, std::string* name,
                           LinkOnce link_once) {
  for (int attempt = 0;; ++attempt) {
    *name = random_name(base, kind);
    if (link_once(name->c_str()) == 0) return 0;
    if (errno != EEXIST || attempt == 100) {
      name->clear();
      return errno;
    }
  }
}

void fill_from_stat(const struct stat& st, OutputTarget* out) {
  out->identity = posix::identity_of(st);
  out->shareable = S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
  out->mode = static_cast<unsigned>(st.st_mode) & 07777u;
  out->uid = st.st_uid;
  out->gid = st.st_gid;
  out->size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  out->kind = S_ISREG(st.st_mode)   ? FileKind::kRegular
              : S_ISDIR(st.st_mode) ? FileKind::kDirectory
                                    : FileKind::kOther;
}

}  // namespace

RealFileSystem::RealFileSystem(TempFiles temp_files) : temp_files_(temp_files) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  new_file_mode_ = 0666u & ~static_cast<unsigned>(mask);
}

int RealFileSystem::resolve_descriptor(int fd, OutputTarget* out) {
  *out = OutputTarget{};
  const int flags = ::fcntl(fd, F_GETFL);
  // Closed, our placeholder (O_PATH), or read-only: found now, before any output is written.
  if (flags == -1 || (flags & O_PATH) != 0 || (flags & O_ACCMODE) == O_RDONLY) return EBADF;
  out->route = OutputTarget::Route::kDescriptor;
  out->descriptor = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno;
  fill_from_stat(st, out);
  return 0;
}

int RealFileSystem::resolve_output(const std::string& path, OutputTarget* out) {
  return resolve(path, out, nullptr);
}

int RealFileSystem::descriptor_named(const std::string& path) {
  if (path.empty() || path == "-" || path.back() == '/') return -1;
  OutputTarget target;
  int descriptor = -1;
  resolve(path, &target, &descriptor);
  release(target);
  return descriptor;
}

int RealFileSystem::resolve(const std::string& path, OutputTarget* out, int* named_descriptor) {
  *out = OutputTarget{};
  std::string current = path;
  // What `current` is relative to: the current directory, or, after a link with a relative
  // target, the directory holding that link (held open: its path may be longer than
  // PATH_MAX, or be renamed meanwhile; the link's text is short).
  int from = AT_FDCWD;
  struct FromCloser {
    int& fd;
    ~FromCloser() {
      if (fd >= 0) ::close(fd);
    }
  } from_closer{from};
  bool kernel_resolved = false;
  FileIdentity kernel_identity;
  for (int hops = 0; hops <= kMaxSymlinkHops; ++hops) {
    auto [dir_path, base] = split_path(current);
    if (base.empty() || base == "." || base == "..") return EISDIR;
    // The kernel walks the directory part, with its own symlink rules.
    const int dir =
        posix::openat_retrying(from, dir_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return errno;
    struct stat st {};
    if (::fstat(dir, &st) != 0) {
      const int err = errno;
      ::close(dir);
      return err;
    }
    out->dir = dir;
    out->name = base;
    out->dir_identity = posix::identity_of(st);
    if (const DescriptorDir owner = descriptor_dir(dir); owner != DescriptorDir::kNone) {
      release(*out);
      if (owner == DescriptorDir::kForeign) return EXDEV;
      const int fd = canonical_number(base);
      if (named_descriptor != nullptr) *named_descriptor = fd;
      return fd < 0 ? ENOENT : resolve_descriptor(fd, out);  // the kernel lists only "N"
    }
    if (::fstatat(dir, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return errno;
      out->kind = FileKind::kMissing;
      return 0;  // created by the rename
    }
    if (S_ISLNK(st.st_mode)) {
      // The kernel follows the link first, so that protected_symlinks decides whether it
      // may be followed at all; a dangling link passes that check and then says ENOENT.
      const int followed = posix::openat_retrying(dir, base.c_str(), O_PATH | O_CLOEXEC);
      if (followed < 0 && errno != ENOENT) return errno;
      struct stat fst {};
      if (followed >= 0) {
        const int rc = ::fstat(followed, &fst);
        ::close(followed);
        if (rc == 0 && !kernel_resolved) kernel_identity = posix::identity_of(fst);
        kernel_resolved = kernel_resolved || rc == 0;
      }
      if (on_pseudo_file_system(dir)) {  // a /proc magic link is no path to follow
        if (followed < 0) return ENOENT;
        fill_from_stat(fst, out);
        out->route = OutputTarget::Route::kInPlace;
        if (out->kind != FileKind::kDirectory) out->kind = FileKind::kOther;
        return 0;
      }
      std::string text;
      if (const int err = read_link_at(dir, base, &text)) return err;
      if (text.empty()) return ENOENT;
      if (from >= 0) ::close(from);
      from = AT_FDCWD;
      if (text.front() == '/') {
        release(*out);
      } else {
        from = std::exchange(out->dir, -1);  // a relative target starts in the link's dir
      }
      current = std::move(text);
      continue;
    }
    fill_from_stat(st, out);
    // The file the kernel reached must be the one this walk reached: else a link changed.
    if (kernel_resolved && out->identity != kernel_identity) return EAGAIN;
    if (out->kind == FileKind::kOther || on_pseudo_file_system(dir)) {
      out->route = OutputTarget::Route::kInPlace;
    } else if (out->kind == FileKind::kRegular) {
      // As for `>`: root may replace a read-only file, anyone else may not; on a read-only
      // file system no one may (EROFS).
      if (::faccessat(dir, base.c_str(), W_OK, AT_EACCESS) != 0) out->write_error = errno;
    }
    return 0;
  }
  release(*out);
  return ELOOP;
}

void RealFileSystem::release(OutputTarget& target) {
  if (target.dir >= 0) ::close(target.dir);
  target.dir = -1;
}

int RealFileSystem::identify_input(const std::string& path, FileIdentity* id, bool* shareable,
                                   bool* read_once) {
  struct stat st {};
  const int rc = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  if (rc != 0) return errno;
  *id = posix::identity_of(st);
  *shareable = S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode);
  *read_once = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
  return 0;
}

int RealFileSystem::read_target(const OutputTarget& target, std::string* bytes) {
  const int fd = posix::openat_retrying(target.dir, target.name.c_str(),
                                        O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno;
  const posix::FdCloser closer(fd);
  const posix::ReadResult result =
      posix::read_to_end(fd, target.size, kMaxInputSize, /*stop_at_control=*/false, *bytes);
  if (result.too_large) return EFBIG;
  return result.err;
}

int RealFileSystem::create_temp(const OutputTarget& target, TempFile* temp) {
  *temp = TempFile{};
  // Unnamed (O_TMPFILE) where the file system allows it, so that a process killed while
  // writing leaves nothing behind; it is given a name just before the rename. Without
  // O_TMPFILE or /proc, a named file from the start.
  const int fd = temp_files_ == TempFiles::kNamed
                     ? -1
                     : ::openat(target.dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    const int kept = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (kept >= 0 && ::access((std::string(kProcFd) + std::to_string(kept)).c_str(), F_OK) == 0) {
      temp->handle = fd;
      temp->unnamed = kept;
      return 0;
    }
    if (kept >= 0) ::close(kept);
    ::close(fd);
  }
  for (int attempt = 0;; ++attempt) {
    std::string name = random_name(target.name, "tmp");
    const int named = posix::openat_retrying(target.dir, name.c_str(),
                                             O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (named >= 0) {
      temp->handle = named;
      temp->name = std::move(name);
      return 0;
    }
    if (errno != EEXIST || attempt == 100) return errno;
  }
}

int RealFileSystem::write_all(int handle, std::string_view bytes) {
  return posix::write_fd_all(handle, bytes);
}

int RealFileSystem::set_attributes(int handle, unsigned mode, bool chown, std::uint32_t uid,
                                   std::uint32_t gid) {
  // Owner first: a change of owner may clear mode bits. Not permitted: keep ours, but
  // still try the group (allowed for a group the caller belongs to).
  if (chown && ::fchown(handle, uid, gid) != 0) {
    if (errno != EPERM) return errno;
    if (::fchown(handle, static_cast<uid_t>(-1), gid) != 0 && errno != EPERM) return errno;
  }
  return ::fchmod(handle, static_cast<mode_t>(mode)) != 0 ? errno : 0;
}

int RealFileSystem::close_file(int handle) {
  // Linux releases the descriptor even when close fails; EINTR is not a lost write.
  if (::close(handle) != 0 && errno != EINTR) return errno;
  return 0;
}

namespace {

// Puts the file `temp` in place of the existing regular file `name` (both in `dir`) by
// swapping the two names (RENAME_EXCHANGE) and removing the old file under the temporary
// name: the same end state as a rename over it, and as atomic for readers of `name`. ext4
// makes a rename over an existing file first write the new file's data out (its
// auto_da_alloc heuristic): 7 ms of a 60 ms freeze of DeepSeek-V3's 7 MB meta, where the swap
// and the removal take 0.4 ms. Durability across a power cut was never promised
// (docs/reliability.md). False, with nothing changed, when the names cannot be swapped
// (file system or kernel without it, `name` gone meanwhile): the caller renames as before.
bool replace_by_exchange(int dir, const std::string& temp, const std::string& name) {
#ifdef RENAME_EXCHANGE
  if (::renameat2(dir, temp.c_str(), dir, name.c_str(), RENAME_EXCHANGE) != 0) return false;
  if (::unlinkat(dir, temp.c_str(), 0) == 0) return true;
  // What the swap took out of `name` cannot be removed (a directory put there meanwhile, a
  // file that a sticky directory keeps): swap back, and let the rename say what it finds.
  return ::renameat2(dir, temp.c_str(), dir, name.c_str(), RENAME_EXCHANGE) != 0;
#else
  (void)dir;
  (void)temp;
  (void)name;
  return false;
#endif
}

}  // namespace

int RealFileSystem::commit_temp(TempFile& temp, const OutputTarget& target) {
  if (temp.unnamed >= 0) {
    // Only a kill between this link and the rename can leave a (complete) temporary file.
    const std::string from = std::string(kProcFd) + std::to_string(temp.unnamed);
    if (const int err = link_under_random_name(target.name, "tmp", &temp.name, [&](const char* n) {
          return ::linkat(AT_FDCWD, from.c_str(), target.dir, n, AT_SYMLINK_FOLLOW);
        })) {
      return err;
    }
  }
  const bool swapped =
      target.kind == FileKind::kRegular && replace_by_exchange(target.dir, temp.name, target.name);
  if (!swapped && ::renameat(target.dir, temp.name.c_str(), target.dir, target.name.c_str()) != 0) {
    return errno;
  }
  temp.name.clear();
  if (temp.unnamed >= 0) ::close(temp.unnamed);
  temp.unnamed = -1;
  return 0;
}

int RealFileSystem::discard_temp(TempFile& temp, const OutputTarget& target) {
  int err = 0;
  // An unnamed file vanishes with its last descriptor.
  if (temp.unnamed >= 0 && ::close(temp.unnamed) != 0) err = errno;
  temp.unnamed = -1;
  if (!temp.name.empty() && ::unlinkat(target.dir, temp.name.c_str(), 0) != 0) err = errno;
  temp.name.clear();
  return err;
}

int RealFileSystem::keep_backup(const OutputTarget& target, std::string* backup) {
  backup->clear();
  if (target.kind == FileKind::kMissing) return 0;
  return link_under_random_name(target.name, "old", backup, [&](const char* n) {
    return ::linkat(target.dir, target.name.c_str(), target.dir, n, 0);
  });
}

int RealFileSystem::restore_backup(const OutputTarget& target, const std::string& backup) {
  const int rc = backup.empty()
                     ? ::unlinkat(target.dir, target.name.c_str(), 0)
                     : ::renameat(target.dir, backup.c_str(), target.dir, target.name.c_str());
  return rc != 0 ? errno : 0;
}

int RealFileSystem::drop_backup(const OutputTarget& target, const std::string& backup) {
  if (backup.empty()) return 0;
  return ::unlinkat(target.dir, backup.c_str(), 0) != 0 ? errno : 0;
}

int RealFileSystem::open_in_place(const OutputTarget& target, int* handle) {
  const int fd = posix::openat_retrying(target.dir, target.name.c_str(),
                                        O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno;
  *handle = fd;
  return 0;
}

bool RealFileSystem::keeps_owner(const OutputTarget& target) const {
  return target.kind == FileKind::kRegular &&
         (target.uid != ::geteuid() || target.gid != ::getegid());
}

FileSystem& real_file_system() {
  static RealFileSystem fs;
  return fs;
}

}  // namespace hpfreeze
