// Writing outputs: the order of operations that makes a write whole or nothing (io.h).
#include "io/io.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "base/huge_pages.h"
#include "io/io_posix.h"

namespace hpfreeze {
namespace {

using posix::io_error;

// GNU strerror_r returns the text, XSI strerror_r fills the buffer: accept both.
[[maybe_unused]] const char* strerror_text(int rc, const char* buf) {
  return rc == 0 ? buf : "unknown error";
}
[[maybe_unused]] const char* strerror_text(const char* text, const char* /*buf*/) { return text; }

Diagnostic stdout_error(int err) {
  return make_io_error("", "cannot write to stdout: " + describe_errno(err));
}

// What two outputs (or an output and an input) are compared by.
struct PathKey {
  int descriptor = -1;               // one of our descriptors, written to as it is
  std::optional<FileIdentity> file;  // an existing file, unless shareable (/dev/null)
  std::optional<FileIdentity> dir;   // with name: an entry not there yet
  std::string name;
  bool replaced = false;  // replaced atomically, so it may stand in for an input it reads
  [[nodiscard]] bool same_as(const PathKey& other) const {
    return (descriptor >= 0 && descriptor == other.descriptor) || (file && file == other.file) ||
           (dir && dir == other.dir && name == other.name);
  }
};

PathKey key_of(const OutputTarget& t) {
  PathKey key;
  if (t.route == OutputTarget::Route::kDescriptor) key.descriptor = t.descriptor;
  key.replaced = t.route == OutputTarget::Route::kReplace;
  if (t.kind == FileKind::kMissing) {
    if (key.replaced) key.dir = t.dir_identity, key.name = t.name;
  } else if (t.kind != FileKind::kDirectory && !t.shareable) {
    key.file = t.identity;
  }
  return key;
}

// Resolves an output; "-" is stdout.
int resolve(FileSystem& fs, const std::string& path, OutputTarget* target) {
  if (path == "-") return fs.resolve_descriptor(STDOUT_FILENO, target);
  if (path.empty()) return ENOENT;
  // A trailing slash names a directory even when nothing exists there yet (as open(2)).
  if (path.back() == '/') return EISDIR;
  return fs.resolve_output(path, target);
}

// Whether resolve asked fs to open something that fs.release must close.
bool resolved_by_fs(const std::string& path) { return !path.empty() && path.back() != '/'; }

// "-" is named as diagnostics name stdin ("<stdin>").
std::string display_name(const std::string& path) { return path == "-" ? "<stdout>" : path; }

Diagnostic resolve_error(const std::string& path, int err) {
  if (path == "-") return stdout_error(err);
  if (err == EISDIR) return make_io_error(path, "is a directory");
  if (err == EAGAIN) return make_io_error(path, "cannot write: a symbolic link changed meanwhile");
  if (err == EXDEV) return make_io_error(path, "cannot write: a descriptor of another process");
  return io_error(path, "cannot write", err);
}

Diagnostic same_file_error(const std::string& path, const std::string& flag,
                           const std::string& other_flag) {
  return make_io_error(display_name(path), (flag.empty() ? std::string("the output") : flag) +
                                               " and " + other_flag + " name the same file");
}

// One output on its way: where it goes and what has been done so far.
struct Slot {
  const OutputFile* out = nullptr;
  OutputTarget target;
  bool resolved = false;
  std::optional<TempFile> temp;       // written and closed, not yet renamed
  std::optional<std::string> backup;  // the replaced file's second name ("" : none existed)
  bool committed = false;
  WriteOutcome outcome = WriteOutcome::kWritten;
};

class Batch {
 public:
  Batch(FileSystem& fs, std::span<const OutputFile> outputs) : fs_(fs), slots_(outputs.size()) {
    for (std::size_t i = 0; i < outputs.size(); ++i) slots_[i].out = &outputs[i];
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  // Undoes whatever was not finished: renamed files get their old bytes back.
  ~Batch() {
    for (Slot& s : slots_) {
      if (s.committed && s.backup) fs_.restore_backup(s.target, *s.backup);
      if (!s.committed && s.backup) fs_.drop_backup(s.target, *s.backup);
      if (s.temp) fs_.discard_temp(*s.temp, s.target);
      if (s.resolved) fs_.release(s.target);
    }
  }

  Expected<std::vector<WriteOutcome>> run() {
    for (Slot& s : slots_) {
      if (std::optional<Diagnostic> d = resolve_slot(s)) return *d;
    }
    for (Slot& s : slots_) {
      if (s.target.route != OutputTarget::Route::kReplace) continue;
      if (std::optional<Diagnostic> d = stage(s)) return *d;
    }
    // Once a file is renamed into place, a later failure must put the old one back.
    const auto renames = std::count_if(slots_.begin(), slots_.end(),
                                       [](const Slot& s) { return s.temp.has_value(); });
    const auto others = std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) {
      return s.target.route != OutputTarget::Route::kReplace;
    });
    if (renames + others > 1) {
      for (Slot& s : slots_) {
        if (!s.temp) continue;
        std::string backup;
        if (const int err = fs_.keep_backup(s.target, &backup)) {
          return io_error(s.out->path, "cannot keep the old file until every output is written",
                          err);
        }
        s.backup = std::move(backup);
      }
    }
    for (Slot& s : slots_) {
      if (!s.temp) continue;
      if (const int err = fs_.commit_temp(*s.temp, s.target)) {
        return io_error(s.out->path, "cannot rename into place", err);
      }
      s.temp.reset();
      s.committed = true;
    }
    for (Slot& s : slots_) {
      if (s.target.route == OutputTarget::Route::kInPlace) {
        if (std::optional<Diagnostic> d = write_in_place(s)) return *d;
      }
    }
    for (Slot& s : slots_) {
      if (s.target.route != OutputTarget::Route::kDescriptor) continue;
      if (const int err = fs_.write_all(s.target.descriptor, s.out->bytes)) {
        if (s.out->path == "-") return stdout_error(err);
        return io_error(s.out->path, "cannot write", err);
      }
    }
    std::vector<WriteOutcome> outcomes;
    for (Slot& s : slots_) {
      if (s.backup) fs_.drop_backup(s.target, *s.backup);
      s.backup.reset();
      outcomes.push_back(s.outcome);
    }
    return outcomes;
  }

 private:
  std::optional<Diagnostic> resolve_slot(Slot& s) {
    const std::string& path = s.out->path;
    const int err = resolve(fs_, path, &s.target);
    s.resolved = resolved_by_fs(path);
    if (err != 0) return resolve_error(path, err);
    if (s.target.kind == FileKind::kDirectory) return make_io_error(path, "is a directory");
    return std::nullopt;
  }

  std::optional<Diagnostic> stage(Slot& s) {
    const OutputFile& out = *s.out;
    const OutputTarget& t = s.target;
    const bool exists = t.kind == FileKind::kRegular;
    if (out.options.if_changed && exists && t.size == out.bytes.size()) {
      std::string existing;
      // An unreadable target is simply rewritten: the comparison only saves work.
      if (fs_.read_target(t, &existing) == 0 && existing == out.bytes) {
        s.outcome = WriteOutcome::kUnchanged;
        return std::nullopt;
      }
    }
    // Only now: a file that already holds the bytes needs no write access (--if-changed).
    if (exists && t.write_error != 0) return io_error(out.path, "cannot write", t.write_error);
    TempFile temp;
    if (const int err = fs_.create_temp(t, &temp)) return io_error(out.path, "cannot write", err);
    s.temp = temp;
    auto fail = [&](std::string_view what, int err) {
      fs_.close_file(temp.handle);
      return io_error(out.path, what, err);
    };
    if (const int err = fs_.write_all(temp.handle, out.bytes)) return fail("cannot write", err);
    // A replaced file keeps its permission bits, owner and group, as `>` would; a new one
    // gets what a plain create gives (not the temporary file's 0600).
    const unsigned mode = exists ? (t.mode & 0777u) : fs_.new_file_mode();
    if (const int err =
            fs_.set_attributes(temp.handle, mode, exists && fs_.keeps_owner(t), t.uid, t.gid)) {
      return fail("cannot set mode", err);
    }
    if (const int err = fs_.close_file(temp.handle)) return io_error(out.path, "cannot write", err);
    return std::nullopt;
  }

  // Devices and FIFOs are written into; renaming over them would destroy them.
  std::optional<Diagnostic> write_in_place(Slot& s) {
    const std::string& path = s.out->path;
    int handle = -1;
    if (const int err = fs_.open_in_place(s.target, &handle)) {
      return io_error(path, "cannot write", err);
    }
    if (const int err = fs_.write_all(handle, s.out->bytes)) {
      fs_.close_file(handle);
      return io_error(path, "cannot write", err);
    }
    if (const int err = fs_.close_file(handle)) return io_error(path, "cannot write", err);
    return std::nullopt;
  }

  FileSystem& fs_;
  std::vector<Slot> slots_;
};

}  // namespace

std::string describe_errno(int err) {
  char buf[256] = {};
  return strerror_text(::strerror_r(err, buf, sizeof buf), buf);
}

Diagnostics check_distinct_paths(FileSystem& fs, std::span<const OutputFile> outputs,
                                 std::span<const InputPath> inputs,
                                 std::span<const OpenedInputPath> opened) {
  Diagnostics errors;
  std::vector<PathKey> keys;
  for (const OutputFile& out : outputs) {
    OutputTarget target;
    // A path that cannot be resolved is reported when it is written.
    const int err = resolve(fs, out.path, &target);
    if (resolved_by_fs(out.path)) fs.release(target);
    keys.push_back(err == 0 ? key_of(target) : PathKey{});
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (keys[j].same_as(keys[i])) {
        errors.push_back(same_file_error(outputs[i].path, outputs[j].flag, outputs[i].flag));
        break;
      }
    }
  }
  // An input against the outputs: one that is an output's file too.
  const auto against_outputs = [&](const std::string& flag, const std::string& may_be_replaced_by,
                                   const FileIdentity& id) {
    PathKey input;
    input.file = id;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (!keys[i].same_as(input)) continue;
      // Inputs are read whole first, so a new file may take an input's name; a write in
      // place would change the input's own bytes.
      if (keys[i].replaced && !may_be_replaced_by.empty() &&
          may_be_replaced_by == outputs[i].flag) {
        continue;
      }
      errors.push_back(same_file_error(outputs[i].path, outputs[i].flag, flag));
    }
  };
  // A pipe read by one input is empty for the other (or both get parts of it, or the
  // second open of a FIFO waits for a writer that is gone).
  std::vector<std::pair<FileIdentity, const InputPath*>> streams;
  for (const InputPath& in : inputs) {
    bool shareable = false;
    bool read_once = false;
    FileIdentity id;
    if (fs.identify_input(in.path, &id, &shareable, &read_once) != 0) continue;
    if (read_once) {
      const auto seen = std::find_if(streams.begin(), streams.end(),
                                     [&id](const auto& s) { return s.first == id; });
      if (seen != streams.end()) {
        errors.push_back(
            make_io_error(in.path == "-" ? "<stdin>" : in.path,
                          seen->second->flag + " and " + in.flag +
                              " name the same pipe or socket, which can be read only once"));
      } else {
        streams.emplace_back(id, &in);
      }
    }
    if (!shareable) against_outputs(in.flag, in.may_be_replaced_by, id);
  }
  // Files open already are regular files: compared by what was opened.
  for (const OpenedInputPath& in : opened) against_outputs(in.flag, {}, in.identity);
  return errors;
}

Diagnostics check_stdout_apart(FileSystem& fs, std::span<const InputPath> inputs,
                               std::span<const OpenedInputPath> opened) {
  const OutputFile stdout_output{"", "-", {}, {}};
  return check_distinct_paths(fs, std::span(&stdout_output, 1), inputs, opened);
}

Diagnostics check_stdout_apart(std::span<const InputPath> inputs) {
  return check_stdout_apart(real_file_system(), inputs);
}

Expected<std::vector<WriteOutcome>> write_outputs(FileSystem& fs,
                                                  std::span<const OutputFile> outputs) {
  if (outputs.size() > 1) {
    if (Diagnostics errors = check_distinct_paths(fs, outputs, {}); !errors.empty()) {
      return errors;
    }
  }
  return Batch(fs, outputs).run();
}

Expected<std::vector<WriteOutcome>> write_outputs(std::span<const OutputFile> outputs) {
  return write_outputs(real_file_system(), outputs);
}

Expected<WriteOutcome> write_output_file(FileSystem& fs, const std::string& path,
                                         std::string_view bytes, const WriteOptions& options) {
  const OutputFile out{"", path, bytes, options};
  Expected<std::vector<WriteOutcome>> written = write_outputs(fs, std::span(&out, 1));
  if (!written) return std::move(written.errors());
  return written->front();
}

Expected<WriteOutcome> write_stdout(std::string_view bytes) {
  if (const int err = posix::write_fd_all(STDOUT_FILENO, bytes)) return stdout_error(err);
  return WriteOutcome::kWritten;
}

Expected<WriteOutcome> write_output(const std::string& path, std::string_view bytes,
                                    const WriteOptions& options) {
  if (path == "-") return write_stdout(bytes);
  return write_output_file(real_file_system(), path, bytes, options);
}

}  // namespace hpfreeze
