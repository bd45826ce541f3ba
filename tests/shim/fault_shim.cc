// An LD_PRELOAD library for the end-to-end tests (tests/e2e/test_limits.py,
// test_check_races.py): makes the calls named by the environment fail as the kernel would when
// a resource is gone, or changes the disk at the moment a file is opened.
//
//   HPFREEZE_SHIM_THREADS=N   pthread_create succeeds N times, then fails with EAGAIN (as
//                             under RLIMIT_NPROC); 0: every call fails
//   HPFREEZE_SHIM_MADVISE=E   madvise fails with errno E (EINVAL: no transparent huge
//                             pages; ENOMEM), without doing anything
//   HPFREEZE_SHIM_BEFORE_OPEN=SUFFIX and HPFREEZE_SHIM_RUN=COMMAND
//                             the first open (openat) of a path whose full name ends with
//                             SUFFIX (a relative name joined to the directory it is opened
//                             from) first runs COMMAND with /bin/sh, then opens: a writer that
//                             replaces the file, or a directory above it, at that very moment
//   HPFREEZE_SHIM_LOG=PATH    each refused call appends one line ("pthread_create" or
//                             "madvise") to PATH, so that a test knows the fault was hit;
//                             a pthread_create the system refused (RLIMIT_NPROC) appends
//                             "pthread_create-failed"
//
// Unset variables leave the calls alone.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <string>

namespace {

long setting(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  return std::strtol(text, nullptr, 10);
}

void log_refusal(const char* what) {
  const char* path = std::getenv("HPFREEZE_SHIM_LOG");
  if (path == nullptr || *path == '\0') return;
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string line = std::string(what) + "\n";
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using Madvise = int (*)(void*, size_t, int);

std::atomic<long> threads_started{0};
std::atomic<bool> ran_before_open{false};

// The directory `dir` names (AT_FDCWD: the working directory), for a relative path.
std::string directory_of(int dir) {
  char buf[PATH_MAX] = {};
  if (dir == AT_FDCWD) return getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : "";
  const std::string link = "/proc/self/fd/" + std::to_string(dir);
  const ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// HPFREEZE_SHIM_BEFORE_OPEN: runs the command once, before the open that matches.
void before_open(int dir, const char* path) {
  const char* suffix = std::getenv("HPFREEZE_SHIM_BEFORE_OPEN");
  const char* command = std::getenv("HPFREEZE_SHIM_RUN");
  if (suffix == nullptr || command == nullptr || path == nullptr || ran_before_open) return;
  const std::string full = path[0] == '/' ? path : directory_of(dir) + "/" + path;
  const std::string end = suffix;
  if (full.size() < end.size() || full.compare(full.size() - end.size(), end.size(), end) != 0) {
    return;
  }
  if (ran_before_open.exchange(true)) return;
  const std::string run = command;
  unsetenv("HPFREEZE_SHIM_BEFORE_OPEN");  // the command's own opens are its own
  if (std::system(run.c_str()) != 0) log_refusal("before-open-command-failed");
  log_refusal("before-open");
}

using Openat = int (*)(int, const char*, int, ...);

int open_at(const char* symbol, int dir, const char* path, int flags, va_list args) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) mode = va_arg(args, mode_t);
  before_open(dir, path);
  const auto real = reinterpret_cast<Openat>(dlsym(RTLD_NEXT, symbol));
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real(dir, path, flags, mode);
}

}  // namespace

extern "C" {

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                   void* arg) noexcept {
  const long allowed = setting("HPFREEZE_SHIM_THREADS");
  if (allowed >= 0 && threads_started.fetch_add(1) >= allowed) {
    log_refusal("pthread_create");
    return EAGAIN;
  }
  const auto real = reinterpret_cast<PthreadCreate>(dlsym(RTLD_NEXT, "pthread_create"));
  if (real == nullptr) return EAGAIN;
  const int err = real(thread, attr, start, arg);
  if (err != 0) log_refusal("pthread_create-failed");
  return err;
}

int madvise(void* addr, size_t length, int advice) noexcept {
  const long err = setting("HPFREEZE_SHIM_MADVISE");
  if (err > 0) {
    log_refusal("madvise");
    errno = static_cast<int>(err);
    return -1;
  }
  const auto real = reinterpret_cast<Madvise>(dlsym(RTLD_NEXT, "madvise"));
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real(addr, length, advice);
}

int openat(int dir, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const int fd = open_at("openat", dir, path, flags, args);
  va_end(args);
  return fd;
}

int openat64(int dir, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const int fd = open_at("openat64", dir, path, flags, args);
  va_end(args);
  return fd;
}

}  // extern "C"
