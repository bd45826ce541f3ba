#include "io/file_digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "io/file_kind_text.h"
#include "io/io_posix.h"
#include "io/libcrypto.h"
#include "io/text_lines.h"

namespace hpfreeze {

namespace {

struct DigestContextFree {
  const Libcrypto* crypto;
  void operator()(EVP_MD_CTX* context) const { crypto->md_ctx_free(context); }
};
using DigestContext = std::unique_ptr<EVP_MD_CTX, DigestContextFree>;

Diagnostic openssl_error(const Libcrypto& crypto, const std::string& path) {
  char text[256] = "unknown error";
  if (const unsigned long code = crypto.err_get_error(); code != 0) {
    crypto.err_error_string_n(code, text, sizeof text);
  }
  crypto.err_clear_error();
  return make_io_error(path, std::string("sha256 failed: ") + text);
}

std::string lowercase_hex(const unsigned char* bytes, unsigned size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(std::size_t{size} * 2, '\0');
  for (unsigned i = 0; i < size; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0x0F];
  }
  return hex;
}

}  // namespace

Expected<FileDigest> digest_file(const std::string& path, std::size_t chunk_size) {
  chunk_size = std::max<std::size_t>(chunk_size, 1);
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses it next);
  // O_NOCTTY: a terminal named here must not become ours.
  const int fd =
      posix::openat_retrying(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return posix::io_error(path, "cannot open", errno);
  const posix::FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return posix::io_error(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) return make_io_error(path, not_regular_file_message(st.st_mode));
  // A regular file is read as any other: blocking, and from front to back.
  if (const int flags = ::fcntl(fd, F_GETFL); flags != -1) {
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

  std::string why;
  const Libcrypto* crypto = libcrypto(&why);
  if (crypto == nullptr) return make_io_error(path, "sha256 failed: " + why);
  DigestContext context(crypto->md_ctx_new(), DigestContextFree{crypto});
  if (!context || crypto->digest_init_ex(context.get(), crypto->sha256(), nullptr) != 1) {
    return openssl_error(*crypto, path);
  }
  const auto buffer = std::make_unique_for_overwrite<char[]>(chunk_size);
  FileDigest digest;
  TextLineCounter lines;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.get(), chunk_size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return posix::io_error(path, "read failed", errno);
    }
    if (n == 0) break;
    const std::string_view chunk(buffer.get(), static_cast<std::size_t>(n));
    if (crypto->digest_update(context.get(), chunk.data(), chunk.size()) != 1) {
      return openssl_error(*crypto, path);
    }
    lines.feed(chunk);
    digest.size += chunk.size();
  }
  unsigned char sha256[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  if (crypto->digest_final_ex(context.get(), sha256, &size) != 1) {
    return openssl_error(*crypto, path);
  }
  digest.sha256 = lowercase_hex(sha256, size);
  digest.lines = lines.lines();
  return digest;
}

}  // namespace hpfreeze
