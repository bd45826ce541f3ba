#pragma once
// Reading inputs and writing outputs, with the rules of SPEC.md §6 and §8.
//
// Inputs are read whole into memory with spare bytes after the end for the JSON
// parser. Outputs are written whole or not at all: bytes go to a temporary file in the
// target's directory that is renamed over the target only once complete; every failure
// removes the temporary file and leaves an existing target byte-identical.
//
// The writer talks to the disk through FileSystem so that these rules can be proven in
// unit tests with an in-memory file system that fails on demand (ninja's
// VirtualFileSystem idea). Errors are Diagnostics with error_class kIo.
//
// Symbolic links: an output path that is a symlink is written THROUGH. The file the
// link finally points to is replaced atomically (temporary file in that file's
// directory) and the link itself is kept, as `cmd > link` would do. Replacing the link
// by a regular file would silently detach whatever the user linked it to.
//
// Existing outputs that are neither regular files nor directories (/dev/null, a FIFO,
// a terminal) cannot be replaced by rename without destroying them: they are opened and
// written in place instead.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

// Spare bytes kept after every input; simdjson needs SIMDJSON_PADDING (64 in 3.x)
// readable bytes past the end. Checked against simdjson where the parser is used.
inline constexpr std::size_t kInputPadding = 64;
inline constexpr std::uint64_t kMaxInputSize = std::uint64_t{4} << 30;

struct InputFile {
  std::string path;          // as the user gave it ("-" for stdin)
  std::string display_name;  // path, or "<stdin>" for "-"
  std::string bytes;         // invariant: bytes.capacity() >= bytes.size() + kInputPadding
};

// Reads a whole file, or stdin when path is "-". Works on regular files (even ones
// that grow or shrink meanwhile), pipes, FIFOs and character devices. Rejects
// directories and inputs above kMaxInputSize bytes.
Expected<InputFile> read_input(const std::string& path);

enum class FileKind { kMissing, kRegular, kDirectory, kSymlink, kOther };

struct FileStatus {
  FileKind kind = FileKind::kMissing;
  std::uint64_t size = 0;  // meaningful for kRegular only
};

// The disk operations the writer needs. Every int result is 0 on success or an errno
// value. Handles are opaque numbers owned by the file system until close_file.
class FileSystem {
 public:
  FileSystem() = default;
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  virtual ~FileSystem() = default;

  // Kind and size of path. A missing path (ENOENT) is not an error: kind is kMissing.
  // With follow_symlinks false a symlink reports kSymlink, like lstat.
  virtual int status(const std::string& path, bool follow_symlinks, FileStatus* out) = 0;
  // The text stored in the symlink path (relative targets stay relative).
  virtual int read_link(const std::string& path, std::string* target) = 0;
  // The whole contents of an existing file; ENOENT when there is none.
  virtual int read_file(const std::string& path, std::string* bytes) = 0;
  // Creates a new, uniquely named, empty file in the directory of target_path (the
  // current directory when it has none) and opens it for writing.
  virtual int create_temp_file(const std::string& target_path, std::string* temp_path,
                               int* handle) = 0;
  // Opens an existing file for writing without creating or renaming anything.
  virtual int open_for_writing(const std::string& path, int* handle) = 0;
  // Writes all of bytes, across partial writes and interruptions.
  virtual int write_all(int handle, std::string_view bytes) = 0;
  // Releases the handle whatever the result; an error means the data may be lost.
  virtual int close_file(int handle) = 0;
  virtual int set_mode(const std::string& path, unsigned mode) = 0;
  // Atomically replaces to (which may exist) by from.
  virtual int rename_file(const std::string& from, const std::string& to) = 0;
  virtual int remove_file(const std::string& path) = 0;
  // The permission bits a new output file gets.
  [[nodiscard]] virtual unsigned new_file_mode() const = 0;
};

// POSIX implementation. new_file_mode() is 0666 & ~umask, the umask being read once
// when the object is constructed (reading it means briefly changing it).
class RealFileSystem final : public FileSystem {
 public:
  RealFileSystem();
  int status(const std::string& path, bool follow_symlinks, FileStatus* out) override;
  int read_link(const std::string& path, std::string* target) override;
  int read_file(const std::string& path, std::string* bytes) override;
  int create_temp_file(const std::string& target_path, std::string* temp_path,
                       int* handle) override;
  int open_for_writing(const std::string& path, int* handle) override;
  int write_all(int handle, std::string_view bytes) override;
  int close_file(int handle) override;
  int set_mode(const std::string& path, unsigned mode) override;
  int rename_file(const std::string& from, const std::string& to) override;
  int remove_file(const std::string& path) override;
  [[nodiscard]] unsigned new_file_mode() const override { return new_file_mode_; }

 private:
  unsigned new_file_mode_;
};

// The process-wide RealFileSystem, created on first use.
FileSystem& real_file_system();

struct WriteOptions {
  // Leave a target that already holds exactly these bytes alone (mtime included).
  bool if_changed = false;
};

enum class WriteOutcome { kWritten, kUnchanged };

// Writes bytes to path atomically (see the file comment). A regular target gets mode
// new_file_mode(), not the mode it had. Errors name path as given.
Expected<WriteOutcome> write_output_file(FileSystem& fs, const std::string& path,
                                         std::string_view bytes, const WriteOptions& options);

// Writes bytes to file descriptor 1. SIGPIPE is left alone: on a closed pipe the
// process dies quietly by default.
Expected<WriteOutcome> write_stdout(std::string_view bytes);

// "-" goes to write_stdout, anything else to write_output_file on the real disk.
Expected<WriteOutcome> write_output(const std::string& path, std::string_view bytes,
                                    const WriteOptions& options);

// strerror text for an errno value ("No such file or directory").
std::string describe_errno(int err);

}  // namespace hpfreeze
