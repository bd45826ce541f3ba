#pragma once
// A file's SHA-256 and line count from one streamed read, for checking the generated files
// a meta's `outputs` records (upstream's sha256_file and file_line_count): the file is
// read in chunks of a fixed size, never whole, and each chunk goes to OpenSSL's EVP
// SHA-256 and to the line counter (text_lines.h) in turn. FileSystem::digest and
// Directory::digest (io.h) are how the library asks for one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "io/text_lines.h"

namespace hpfreeze {

struct FileDigest {
  std::string sha256;                  // 64 lowercase hex digits
  std::uint64_t size = 0;              // bytes read
  std::optional<std::uint64_t> lines;  // as Python's text mode counts them; none: not UTF-8
};

// The read size: the fastest of 64 KiB to 1 MiB on a 1 GiB file (bench/digest,
// docs/performance.md). A read this size stays in the cache while SHA-256 and the line
// counter each go over it.
inline constexpr std::size_t kDigestChunkSize = std::size_t{64} << 10;

// The digest of bytes fed in pieces of any size. Errors name `path`, class kIo:
// "sha256 failed: <OpenSSL error>".
class DigestBuilder {
 public:
  // Starts one; libcrypto is loaded on first use (io/libcrypto.h): when it cannot be,
  // "sha256 failed: cannot load libcrypto.so.3: <dlerror>".
  static Expected<DigestBuilder> start(std::string path);
  DigestBuilder(DigestBuilder&&) noexcept;
  DigestBuilder& operator=(DigestBuilder&&) noexcept;
  ~DigestBuilder();

  Expected<bool> feed(std::string_view piece);
  Expected<FileDigest> finish();

 private:
  struct State;
  explicit DigestBuilder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Why nothing can be hashed ("cannot load libcrypto.so.3: <dlerror>"), else nullopt.
std::optional<std::string> digest_unavailable();

// Reads the regular file `name` in the directory descriptor `dir` (AT_FDCWD: `name` is a
// path; a final link followed) from start to end, for exactly the size fstat gives once it is
// open. Only a regular file is read: it is opened non-blocking and without becoming a
// controlling terminal, so a FIFO or a device is refused at once, never waited on. `chunk_size`
// (at least 1) is the size of each read; tests make it small to split a CRLF or a UTF-8
// character. Errors are one Diagnostic of class kIo whose file is `path`, messages as
// read_input's: "cannot open: <OS error>", "cannot stat: <OS error>", "is a directory",
// "is a FIFO, not a regular file" (a character device, a block device, a socket: a socket
// is named so too, though it cannot be opened), "read failed: <OS error>", "is longer than
// its size of N bytes (...)" (a pseudo-file such as /proc/self/pagemap), "ended after N of its
// M bytes (...)", and DigestBuilder's.
Expected<FileDigest> digest_file_at(int dir, const std::string& name, const std::string& path,
                                    std::size_t chunk_size = kDigestChunkSize);

// digest_file_at of the path, on the real disk.
Expected<FileDigest> digest_file(const std::string& path,
                                 std::size_t chunk_size = kDigestChunkSize);

}  // namespace hpfreeze
