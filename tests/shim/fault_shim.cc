// An LD_PRELOAD library for the end-to-end tests (tests/e2e/test_limits.py): makes the
// calls named by the environment fail as the kernel would when a resource is gone.
//
//   HPFREEZE_SHIM_THREADS=N   pthread_create succeeds N times, then fails with EAGAIN (as
//                             under RLIMIT_NPROC); 0: every call fails
//   HPFREEZE_SHIM_MADVISE=E   madvise fails with errno E (EINVAL: no transparent huge
//                             pages; ENOMEM), without doing anything
//   HPFREEZE_SHIM_LOG=PATH    each refused call appends one line ("pthread_create" or
//                             "madvise") to PATH, so that a test knows the fault was hit;
//                             a pthread_create the system refused (RLIMIT_NPROC) appends
//                             "pthread_create-failed"
//
// Unset variables leave the calls alone.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

}  // extern "C"
