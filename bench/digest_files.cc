// bench/digest's driver: the SHA-256 and line count of each FILE, read as `check --bundle`
// reads a bundle's files (io/file_digest.h), one line each: "SHA256 LINES FILE" (LINES "-"
// for a file that is not UTF-8). With --part, only one part of that work, to see where
// the time goes: `read` (the reads alone), `sha256` (reads and SHA-256), `lines` (reads and
// the line counter); it prints what that part computes.
//
//   hpfreeze_digest_files [--chunk-size BYTES] [--part read|sha256|lines] FILE...
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "io/file_digest.h"
#include "io/text_lines.h"

namespace {

// One part of digest_file's work over the file at `path`, as text; empty on an error.
std::string run_part(const char* path, std::size_t chunk_size, std::string_view part) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  const auto buffer = std::make_unique_for_overwrite<char[]>(chunk_size);
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(context, EVP_sha256(), nullptr);
  hpfreeze::TextLineCounter lines;
  std::size_t size = 0;
  ssize_t n;
  while ((n = ::read(fd, buffer.get(), chunk_size)) > 0) {
    size += static_cast<std::size_t>(n);
    if (part == "sha256") EVP_DigestUpdate(context, buffer.get(), static_cast<std::size_t>(n));
    if (part == "lines") lines.feed({buffer.get(), static_cast<std::size_t>(n)});
  }
  ::close(fd);
  unsigned char sha256[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EVP_DigestFinal_ex(context, sha256, &length);
  EVP_MD_CTX_free(context);
  if (n < 0) return {};
  if (part == "sha256") {
    std::string hex;
    char digits[3];
    for (unsigned i = 0; i < length; ++i) {
      std::snprintf(digits, sizeof digits, "%02x", sha256[i]);
      hex += digits;
    }
    return hex;
  }
  if (part == "lines") return lines.lines() ? std::to_string(*lines.lines()) : "-";
  return std::to_string(size);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t chunk_size = hpfreeze::kDigestChunkSize;
  std::string_view part;
  int first = 1;
  for (; first + 1 < argc; first += 2) {
    const std::string_view flag = argv[first];
    if (flag == "--chunk-size") {
      chunk_size = std::strtoull(argv[first + 1], nullptr, 10);
    } else if (flag == "--part") {
      part = argv[first + 1];
    } else {
      break;
    }
  }
  if (first >= argc || chunk_size == 0 ||
      !(part.empty() || part == "read" || part == "sha256" || part == "lines")) {
    std::fprintf(stderr,
                 "usage: hpfreeze_digest_files [--chunk-size BYTES] [--part read|sha256|lines] "
                 "FILE...\n");
    return 2;
  }
  int status = 0;
  for (int i = first; i < argc; ++i) {
    if (!part.empty()) {
      const std::string result = run_part(argv[i], chunk_size, part);
      if (result.empty()) {
        std::fprintf(stderr, "%s: cannot read\n", argv[i]);
        status = 1;
      }
      std::printf("%s %s\n", result.c_str(), argv[i]);
      continue;
    }
    const hpfreeze::Expected<hpfreeze::FileDigest> digest =
        hpfreeze::digest_file(argv[i], chunk_size);
    if (!digest) {
      std::fprintf(stderr, "%s: %s\n", argv[i], digest.errors()[0].message.c_str());
      status = 1;
      continue;
    }
    const std::string lines = digest->lines ? std::to_string(*digest->lines) : "-";
    std::printf("%s %s %s\n", digest->sha256.c_str(), lines.c_str(), argv[i]);
  }
  return status;
}
