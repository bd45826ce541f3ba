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

namespace hpfreeze {

namespace {

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

struct DigestBuilder::State {
  State(std::string p, const Libcrypto* c) : path(std::move(p)), crypto(c) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (context != nullptr) crypto->md_ctx_free(context);
  }
  std::string path;
  const Libcrypto* crypto;
  EVP_MD_CTX* context = crypto->md_ctx_new();  // owned
  TextLineCounter lines;
  std::uint64_t size = 0;
};

DigestBuilder::DigestBuilder(std::unique_ptr<State> state) : state_(std::move(state)) {}
DigestBuilder::DigestBuilder(DigestBuilder&&) noexcept = default;
DigestBuilder& DigestBuilder::operator=(DigestBuilder&&) noexcept = default;
DigestBuilder::~DigestBuilder() = default;

Expected<DigestBuilder> DigestBuilder::start(std::string path) {
  std::string why;
  const Libcrypto* crypto = libcrypto(&why);
  if (crypto == nullptr) return make_io_error(path, "sha256 failed: " + why);
  auto state = std::make_unique<State>(std::move(path), crypto);
  if (state->context == nullptr ||
      crypto->digest_init_ex(state->context, crypto->sha256(), nullptr) != 1) {
    return openssl_error(*crypto, state->path);
  }
  return DigestBuilder(std::move(state));
}

Expected<bool> DigestBuilder::feed(std::string_view piece) {
  if (state_->crypto->digest_update(state_->context, piece.data(), piece.size()) != 1) {
    return openssl_error(*state_->crypto, state_->path);
  }
  state_->lines.feed(piece);
  state_->size += piece.size();
  return true;
}

Expected<FileDigest> DigestBuilder::finish() {
  unsigned char sha256[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  if (state_->crypto->digest_final_ex(state_->context, sha256, &size) != 1) {
    return openssl_error(*state_->crypto, state_->path);
  }
  return FileDigest{lowercase_hex(sha256, size), state_->size, state_->lines.lines()};
}

std::optional<std::string> digest_unavailable() {
  std::string why;
  if (libcrypto(&why) != nullptr) return std::nullopt;
  return why;
}

Expected<FileDigest> digest_file_at(int dir, const std::string& name, const std::string& path,
                                    std::size_t chunk_size) {
  chunk_size = std::max<std::size_t>(chunk_size, 1);
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses it next);
  // O_NOCTTY: a terminal named here must not become ours.
  const int fd =
      posix::openat_retrying(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return posix::open_error(dir, name, path, errno);
  const posix::FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return posix::io_error(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) return make_io_error(path, not_regular_file_message(st.st_mode));
  // A regular file is read as any other: blocking, and from front to back.
  if (const int flags = ::fcntl(fd, F_GETFL); flags != -1) {
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

  Expected<DigestBuilder> digest = DigestBuilder::start(path);
  if (!digest) return std::move(digest.errors());
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto buffer = std::make_unique_for_overwrite<char[]>(chunk_size);
  // For its size and no further: a pseudo-file (/proc/self/pagemap) may hold 256 GiB.
  std::uint64_t done = 0;
  while (done < size) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_size, size - done));
    posix::ReadResult read = posix::read_exact(fd, buffer.get(), n);
    if (!read.ok()) {
      read.got += done;
      return posix::size_changed_error(path, size, read);
    }
    if (Expected<bool> fed = digest->feed(std::string_view(buffer.get(), n)); !fed) {
      return std::move(fed.errors());
    }
    done += n;
  }
  if (const posix::ReadResult end = posix::expect_end(fd); !end.ok()) {
    return posix::size_changed_error(path, size, end);
  }
  return digest->finish();
}

Expected<FileDigest> digest_file(const std::string& path, std::size_t chunk_size) {
  return digest_file_at(AT_FDCWD, path, path, chunk_size);
}

}  // namespace hpfreeze
