#pragma once
// A file's SHA-256 and line count from one streamed read, for checking the generated files
// a meta's `outputs` records (upstream's sha256_file and file_line_count): the file is
// read in chunks of a fixed size, never whole, and each chunk goes to OpenSSL's EVP
// SHA-256 and to the line counter (text_lines.h) in turn.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "hpfreeze/base/diagnostic.h"

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

// Reads the regular file at `path` (links followed) from start to end. Only a regular file
// is read: it is opened non-blocking and without becoming a controlling terminal, so a
// FIFO or a device is refused at once, never waited on. `chunk_size` (at least 1) is the
// size of each read; tests make it small to split a CRLF or a UTF-8 character. Errors are
// one Diagnostic of class kIo whose file is `path`, messages as read_input's:
// "cannot open: <OS error>", "cannot stat: <OS error>", "is a directory",
// "is a FIFO, not a regular file" (a character device, a block device, a socket),
// "read failed: <OS error>", and "sha256 failed: <OpenSSL error>" (or "sha256 failed: cannot
// load libcrypto.so.3: <dlerror>": libcrypto is loaded on first use, io/libcrypto.h).
Expected<FileDigest> digest_file(const std::string& path,
                                 std::size_t chunk_size = kDigestChunkSize);

}  // namespace hpfreeze
