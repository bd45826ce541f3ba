#pragma once
// Reading inputs and writing outputs, with the rules of docs/reliability.md.
//
// Inputs are read whole into memory with spare bytes after the end for the JSON parser.
// A regular file above the size limit is refused from its size, before it is read; a
// stream (pipe, FIFO, device) is stopped at its own, lower limit, or earlier at the first
// byte that no JSON text may contain.
//
// Outputs are written whole or not at all. Which file an output path names is decided by
// the kernel: the directory holding the name is opened once, and every later step is
// relative to that descriptor (openat, renameat), so the kernel's protected_symlinks
// checks apply and no name is looked up twice. Then:
// - a regular file, or a name where nothing exists yet, is replaced atomically: bytes go
//   to a temporary file in the same directory, which is renamed over the name once
//   complete; a replaced file keeps its permission bits (and owner and group where the
//   caller may set them); a file the caller could not open for writing is refused;
// - a symlink is written THROUGH: the file it finally points to is replaced as above, in
//   that file's directory, and the link is kept;
// - a name of one of this process's own descriptors is written to that descriptor as it
//   is, keeping its position and O_APPEND: a path whose directory is, by its real path,
//   our /proc/PID/fd or /proc/PID/task/TID/fd (however spelled: /dev/fd, /proc/self,
//   links to them), and whose last component is a descriptor number in canonical decimal
//   ("1"; not "01" or "+1", which the kernel does not know either: ENOENT). Another
//   process's descriptor directory is refused (EXDEV);
// - anything else (a device, a FIFO, a socket, anything under /proc or /sys) is opened
//   and written in place, never renamed over.
// Every failure removes the temporary files and leaves existing targets byte-identical.
// A write beyond RLIMIT_FSIZE raises SIGXFSZ unless the program ignores that signal (the
// hpfreeze app does); ignored, it is one more failed write (EFBIG).
//
// The writer talks to the disk through FileSystem so that these rules can be proven in
// unit tests with an in-memory file system that fails on demand (ninja's
// VirtualFileSystem idea). Errors are Diagnostics with error_class kIo. What the front end
// calls itself (stdin in pieces, stdout) is hpfreeze/io/standard_streams.h.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/io/standard_streams.h"

namespace hpfreeze {

// Spare bytes kept after every input; simdjson needs SIMDJSON_PADDING (64 in 3.x)
// readable bytes past the end. Checked against simdjson where the parser is used.
inline constexpr std::size_t kInputPadding = 64;
// Inputs must be smaller than this (a regular file of exactly 4 GiB is refused).
inline constexpr std::uint64_t kMaxInputSize = std::uint64_t{4} << 30;
// A stream has no size to check up front, and all of it is held in memory: it may hold at
// most this many bytes.
inline constexpr std::uint64_t kMaxStreamInputSize = std::uint64_t{1} << 30;

struct InputFile {
  std::string path;          // as the user gave it ("-" for stdin)
  std::string display_name;  // path, or "<stdin>" for "-"
  std::string bytes;         // invariant: bytes.capacity() >= bytes.size() + kInputPadding
};

// Makes a closed standard descriptor (0, 1 or 2) unusable rather than free: a
// placeholder that cannot be read or written is parked on it, so that no file opened
// later becomes "stdin" or "stdout" by chance. Idempotent; read_input calls it once
// itself, but a program should call it first thing, before any open and any thread.
void guard_standard_descriptors();

// The error for "-" when stdin is closed (or holds the placeholder above); none when
// stdin can be read.
Expected<bool> check_stdin_open();

// The usage error (kIo, exit 2) of a command given "-" (stdin) for more than one of its
// inputs: stdin can be read only once. `paths` are the inputs (nullptr for one not given),
// `names` the way the message lists them: "at most one of META and --model may be '-'
// (stdin)". nullopt when at most one is "-". Made before anything is read.
std::optional<Diagnostic> stdin_twice_error(std::initializer_list<const std::string*> paths,
                                            std::string_view names);

// Reads a whole file, or stdin when path is "-". Works on regular files, pipes, FIFOs and
// character devices. A regular file is read for the size fstat gives once it is open, and
// no further: one that yields more (a pseudo-file such as /proc/self/pagemap, whose size is
// 0, or a file written meanwhile) or fewer bytes (truncated meanwhile) is an error naming
// it, at once ("is longer than its size of 0 bytes (...)", "ended after N of its M bytes
// (...)"). Rejects directories, regular files of kMaxInputSize bytes or more (before
// reading) and streams longer than kMaxStreamInputSize. A stream is read only up to the
// first control byte other than tab, LF and CR: no JSON text may hold one, so the bytes up
// to and including it already decide the parser's first error (a stream of zeros stops at
// once). `buffer` is memory to read into: a buffer an earlier step is done with (its
// contents are discarded), so that a large input lands in pages already there
// (ParseScratch).
Expected<InputFile> read_input(const std::string& path, std::string buffer = {});

// The size of the regular file at `path`; 0 for "-", a stream or a file that cannot be
// looked at. A hint for sizing memory ahead (ParseScratch::expect_input), never a promise.
std::size_t regular_file_size(const std::string& path);

// --- outputs ---------------------------------------------------------------------------

enum class FileKind { kMissing, kRegular, kDirectory, kOther };

// Device and inode: equal identities are the same file, whatever the names.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// Where an output path leads, as FileSystem::resolve_output found it.
struct OutputTarget {
  enum class Route {
    kReplace,     // regular file or nothing yet: temporary file in dir, then rename
    kInPlace,     // device, FIFO, /proc: opened and written as is
    kDescriptor,  // one of our own descriptors (/dev/stdout): written to it
  };
  Route route = Route::kReplace;
  FileKind kind = FileKind::kMissing;  // of the final file (kMissing: to be created)
  int dir = -1;                        // kReplace, kInPlace: the directory, open
  std::string name;                    // the entry in dir (no '/')
  FileIdentity dir_identity;           // of dir
  FileIdentity identity;               // of the final file, when it exists
  bool shareable = false;          // a character device or socket: any number of users is harmless
  std::uint64_t size = 0;          // kRegular only
  unsigned mode = 0;               // permission bits, when it exists
  std::uint32_t uid = 0, gid = 0;  // owner and group, when it exists
  int write_error = 0;  // kRegular: why the caller may not open it for writing (EACCES, EROFS)
  int descriptor = -1;  // kDescriptor only
};

// A regular file read at offsets, never whole (a checkpoint's headers):
// FileSystem::open_regular.
class RegularFile {
 public:
  RegularFile() = default;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  virtual ~RegularFile() = default;
  // The size when it was opened.
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  // Reads `n` bytes from `offset` into `out` (its size becomes n, with `spare` more bytes of
  // capacity): 0, or the errno of the failed read (EIO when the file ended before).
  virtual int read_at(std::uint64_t offset, std::uint64_t n, std::string& out,
                      std::size_t spare = 0) = 0;
};

// --- trees: check PATH... and --bundle ----------------------------------------------------

struct FileDigest;

// A file opened and not read yet (a meta the walk found): read through what was opened, so
// what was looked at is what is read.
class OpenedFile {
 public:
  OpenedFile() = default;
  OpenedFile(const OpenedFile&) = delete;
  OpenedFile& operator=(const OpenedFile&) = delete;
  virtual ~OpenedFile() = default;
  // Its size and identity when it was opened (a regular file).
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  [[nodiscard]] virtual FileIdentity identity() const = 0;
  // Reads it whole, as read_input reads a regular file (its size and no further), into
  // `buffer`; errors name `display_name`. Once.
  virtual Expected<InputFile> read(const std::string& display_name, std::string buffer) = 0;
};

// What a directory entry is, as listed (S_IFMT bits of its mode; 0 when the listing does not
// say): a link is listed as a link.
struct DirectoryEntry {
  std::string name;
  unsigned type = 0;
};

// A directory held open (a descriptor on the real disk): what is in it is opened from it,
// never by a path from the root again, so a directory replaced by a link while it is walked
// leads nowhere new. Shared: the walk holds it while it lists it, a meta found in it while
// its bundle is checked.
class Directory {
 public:
  Directory() = default;
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;
  virtual ~Directory() = default;
  [[nodiscard]] virtual FileIdentity identity() const = 0;
  // Its entries but "." and "..", in no particular order; 0 or an errno value.
  virtual int list(std::vector<DirectoryEntry>* entries) = 0;
  // The directory `name` in it, no link followed: ENOTDIR or ELOOP when that is no directory
  // (any more), ENOENT when it is gone.
  virtual int open_directory(const std::string& name, std::shared_ptr<Directory>* out) = 0;
  // Its parent (".."), for a walk that let go of it to hold fewer descriptors.
  virtual int open_parent(std::shared_ptr<Directory>* out) = 0;
  // Opens the entry `name` for reading without waiting (a FIFO or a device that took its
  // place holds nothing up; a final link is followed): a regular file, into `file`; anything
  // else, `type` (its S_IFMT bits) and no file; or the errno of an open that failed. A
  // socket, which cannot be opened, gives its type.
  struct Opened {
    int err = 0;
    unsigned type = 0;
    std::unique_ptr<OpenedFile> file;
  };
  virtual Opened open_file(const std::string& name) = 0;
  // digest_file of the entry `name` (a final link followed); `path` names it in errors.
  virtual Expected<FileDigest> digest(const std::string& name, const std::string& path,
                                      std::size_t chunk_size) = 0;
};

// A temporary file being written beside a target.
struct TempFile {
  int handle = -1;   // open for writing until closed
  std::string name;  // its entry in the target's dir; empty while unnamed
  int unnamed = -1;  // a descriptor kept for an unnamed (O_TMPFILE) file, else -1
};

// The disk operations the loader (reading) and the writer need. Every int result is 0 on
// success or an errno value. Handles and dir descriptors are owned by the file system until
// released.
class FileSystem {
 public:
  FileSystem() = default;
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  virtual ~FileSystem() = default;

  // --- reading: the loader's side (lib/src/inputs) ---
  // A whole input into memory, "-" being stdin, with read_input's rules and errors (below).
  virtual Expected<InputFile> read_input(const std::string& path, std::string buffer) = 0;
  // regular_file_size's answer (below): a hint, 0 for anything but a regular file.
  virtual std::size_t regular_file_size(const std::string& path) = 0;
  // What `path` leads to (links followed), found without opening it; kMissing also when it
  // cannot be looked at. "-" is kOther.
  virtual FileKind kind_of(const std::string& path) = 0;
  // Opens a regular file for reads at offsets. Anything else is refused without waiting (a
  // FIFO is never opened): "is not a regular file"; an open that fails: "cannot open: <OS
  // error>". Errors are kIo and name the path.
  virtual Expected<std::unique_ptr<RegularFile>> open_regular(const std::string& path) = 0;
  // The directory `path` names (a final link followed) held open: ENOTDIR when it is no
  // directory ("-" is none), or the open's errno.
  virtual int open_directory(const std::string& path, std::shared_ptr<Directory>* out) = 0;
  // The regular file at `path` hashed and its lines counted (file_digest.h), read in pieces of
  // `chunk_size` bytes and no further than its size.
  virtual Expected<FileDigest> digest(const std::string& path, std::size_t chunk_size) = 0;
  // Why no file can be hashed in this run (libcrypto cannot be loaded), else nullopt: asked
  // once before a run hashes, so that it is one error, not one per file.
  virtual std::optional<std::string> digest_unavailable() = 0;
  // Which of this process's descriptors `path` names (/dev/stdin, /dev/fd/3, a link to one:
  // the rule of the outputs, see the file comment), else -1. Opens nothing but directories.
  virtual int descriptor_named(const std::string& path) = 0;

  // --- writing ---
  // Finds what path leads to (see the file comment); a missing final entry is not an
  // error. EISDIR: the name can only be a directory ("x/", "."); EAGAIN: a link changed
  // between the kernel's resolution and ours; EXDEV: a descriptor of another process.
  virtual int resolve_output(const std::string& path, OutputTarget* out) = 0;
  // Our descriptor fd as a kDescriptor target, with what it is open on; EBADF when it is
  // closed or not open for writing. "-" is resolve_descriptor(STDOUT_FILENO).
  virtual int resolve_descriptor(int fd, OutputTarget* out) = 0;
  // Closes what resolve_output opened; called after every resolve_output, failed or not.
  virtual void release(OutputTarget& target) = 0;
  // The identity of an input path (following links), whether it is shareable (a
  // character device or socket, as OutputTarget::shareable), and whether it can be read
  // only once (a pipe, FIFO or socket: what one reader takes, another never sees); "-" is
  // stdin. ENOENT when there is nothing. Never opens the path (a FIFO would block).
  virtual int identify_input(const std::string& path, FileIdentity* id, bool* shareable,
                             bool* read_once) = 0;
  // The whole contents of the existing target (for --if-changed).
  virtual int read_target(const OutputTarget& target, std::string* bytes) = 0;
  // A new empty temporary file in the target's directory, open for writing.
  virtual int create_temp(const OutputTarget& target, TempFile* temp) = 0;
  // Writes all of bytes, across partial writes and interruptions.
  virtual int write_all(int handle, std::string_view bytes) = 0;
  // Gives the open temporary file these permission bits, and this owner and group when
  // chown is set (a refusal to change them, EPERM, is not an error).
  virtual int set_attributes(int handle, unsigned mode, bool chown, std::uint32_t uid,
                             std::uint32_t gid) = 0;
  // Releases the handle whatever the result; an error means the data may be lost.
  virtual int close_file(int handle) = 0;
  // Atomically replaces the target's entry by the (closed) temporary file.
  virtual int commit_temp(TempFile& temp, const OutputTarget& target) = 0;
  // Removes a temporary file that will not be committed.
  virtual int discard_temp(TempFile& temp, const OutputTarget& target) = 0;
  // A second name for the existing target, in its directory, to restore it from.
  virtual int keep_backup(const OutputTarget& target, std::string* backup) = 0;
  // Puts the backup back under the target's name (empty backup: removes the entry).
  virtual int restore_backup(const OutputTarget& target, const std::string& backup) = 0;
  virtual int drop_backup(const OutputTarget& target, const std::string& backup) = 0;
  // Opens a kInPlace target for writing (truncating, as `>` does).
  virtual int open_in_place(const OutputTarget& target, int* handle) = 0;
  // The permission bits a new output file gets.
  [[nodiscard]] virtual unsigned new_file_mode() const = 0;
  // Whether set_attributes should try to give a replacement the old owner and group.
  [[nodiscard]] virtual bool keeps_owner(const OutputTarget& target) const = 0;
};

// POSIX implementation. new_file_mode() is 0666 & ~umask, the umask being read once
// when the object is constructed (reading it means briefly changing it).
class RealFileSystem final : public FileSystem {
 public:
  // kNamed gives every temporary file a name from the start, as on a file system without
  // O_TMPFILE: for tests of that path on any disk.
  enum class TempFiles { kUnnamedWherePossible, kNamed };
  explicit RealFileSystem(TempFiles temp_files = TempFiles::kUnnamedWherePossible);
  Expected<InputFile> read_input(const std::string& path, std::string buffer) override;
  std::size_t regular_file_size(const std::string& path) override;
  FileKind kind_of(const std::string& path) override;
  Expected<std::unique_ptr<RegularFile>> open_regular(const std::string& path) override;
  int open_directory(const std::string& path, std::shared_ptr<Directory>* out) override;
  Expected<FileDigest> digest(const std::string& path, std::size_t chunk_size) override;
  std::optional<std::string> digest_unavailable() override;
  int descriptor_named(const std::string& path) override;
  int resolve_output(const std::string& path, OutputTarget* out) override;
  int resolve_descriptor(int fd, OutputTarget* out) override;
  void release(OutputTarget& target) override;
  int identify_input(const std::string& path, FileIdentity* id, bool* shareable,
                     bool* read_once) override;
  int read_target(const OutputTarget& target, std::string* bytes) override;
  int create_temp(const OutputTarget& target, TempFile* temp) override;
  int write_all(int handle, std::string_view bytes) override;
  int set_attributes(int handle, unsigned mode, bool chown, std::uint32_t uid,
                     std::uint32_t gid) override;
  int close_file(int handle) override;
  int commit_temp(TempFile& temp, const OutputTarget& target) override;
  int discard_temp(TempFile& temp, const OutputTarget& target) override;
  int keep_backup(const OutputTarget& target, std::string* backup) override;
  int restore_backup(const OutputTarget& target, const std::string& backup) override;
  int drop_backup(const OutputTarget& target, const std::string& backup) override;
  int open_in_place(const OutputTarget& target, int* handle) override;
  [[nodiscard]] unsigned new_file_mode() const override { return new_file_mode_; }
  [[nodiscard]] bool keeps_owner(const OutputTarget& target) const override;

 private:
  // resolve_output; `named_descriptor`, when given, receives the descriptor the path names.
  int resolve(const std::string& path, OutputTarget* out, int* named_descriptor);
  unsigned new_file_mode_;
  TempFiles temp_files_;
};

// The process-wide RealFileSystem, created on first use.
FileSystem& real_file_system();

// The file system a request carries (`files`), or the real one when it carries none: what
// every command reads and writes through.
inline FileSystem& file_system_or_real(FileSystem* files) {
  return files != nullptr ? *files : real_file_system();
}

struct WriteOptions {
  // Leave a target that already holds exactly these bytes alone (mtime included).
  bool if_changed = false;
};

// One output of a command: the flag that named it (for messages), its path ("-" is
// stdout), its bytes.
struct OutputFile {
  std::string flag;
  std::string path;
  std::string_view bytes;
  WriteOptions options;
};

// Usage errors (kIo, exit 2) when two outputs lead to the same file, or an output to an
// input it may not replace. Paths are compared by what they resolve to (device and
// inode; for a file not yet there, its directory's identity and the name), so
// "p.json", "./p.json", a link to it and a descriptor open on it (stdout, /dev/fd/3) are
// the same file. Character devices and sockets are exempt: two writes to /dev/null are
// harmless. Two outputs to one descriptor are always the same ("-" twice). Only an
// output that replaces its file atomically may replace an input (may_be_replaced_by); one
// written in place (stdout, a descriptor, a FIFO) never may. Two inputs may be one file,
// except one that can be read only once (a pipe, FIFO or socket: "--plan - --model
// /dev/stdin"): that is a usage error too, "PATH: A and B name the same pipe or socket, which can
// be read only once". Call it before reading any input.
// `opened` are inputs open already (OpenedFile: a meta the walk found), compared by the
// file they are open on.
struct OpenedInputPath {
  std::string flag;
  std::string path;
  FileIdentity identity;
};
Diagnostics check_distinct_paths(FileSystem& fs, std::span<const OutputFile> outputs,
                                 std::span<const InputPath> inputs,
                                 std::span<const OpenedInputPath> opened = {});

// check_distinct_paths for a command whose only output is stdout (check, diff, expand,
// parse, report): its inputs may not be the file stdout writes into.
Diagnostics check_stdout_apart(FileSystem& fs, std::span<const InputPath> inputs,
                               std::span<const OpenedInputPath> opened = {});

// Writes every output or none: all temporary files are written first; then they are
// renamed into place, each replaced file kept under a second name until the last rename
// worked, and put back if one fails. Device and stdout outputs come last: they cannot be
// taken back. Runs check_distinct_paths on the outputs first. Errors name the path as
// given.
Expected<std::vector<WriteOutcome>> write_outputs(FileSystem& fs,
                                                  std::span<const OutputFile> outputs);

// Writes bytes to path atomically: write_outputs with one output.
Expected<WriteOutcome> write_output_file(FileSystem& fs, const std::string& path,
                                         std::string_view bytes, const WriteOptions& options);

// "-" goes to write_stdout, anything else to write_output_file on the real disk.
Expected<WriteOutcome> write_output(const std::string& path, std::string_view bytes,
                                    const WriteOptions& options);

// write_outputs on the real disk ("-" is stdout there too).
Expected<std::vector<WriteOutcome>> write_outputs(std::span<const OutputFile> outputs);

// strerror text for an errno value ("No such file or directory").
std::string describe_errno(int err);

}  // namespace hpfreeze
