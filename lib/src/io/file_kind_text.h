#pragma once
// How a refusal names a file that is not a regular file (file_digest.cc, meta_tree.cc):
// "is a FIFO, not a regular file". Internal to the library.

#include <sys/stat.h>

#include <string>

namespace hpfreeze {

// The refusal for a file of mode `mode` that is not a regular file.
inline std::string not_regular_file_message(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  const char* what = S_ISFIFO(mode)   ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                     : S_ISLNK(mode)  ? "a symbolic link"
                                      : nullptr;
  if (what == nullptr) return "is not a regular file";
  return std::string("is ") + what + ", not a regular file";
}

}  // namespace hpfreeze
