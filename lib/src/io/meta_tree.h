#pragma once
// Finding the metas of `check PATH...`: a directory is walked for the files named
// codegen_meta.json, depth first, each directory's entries in byte order of their names.
// The walk goes through FileSystem (io.h) by directory: each directory is opened from its
// parent's descriptor without following a link (no symlinked directory is entered, at any
// level, whatever it is replaced by meanwhile), and each meta is opened at its turn from its
// directory's descriptor, without waiting, and handed on open: the loader reads it from
// there, and its bundle is opened from that directory, so what the walk found is what is
// read and no path is resolved twice. It skips the directories that hold no bundle of a
// project's own (is_skipped_directory below). Only the directories being walked and the
// metas handed on and not yet released are held open: a tree of any size or depth holds a
// few dozen descriptors.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"
#include "io/io.h"

namespace hpfreeze {

inline constexpr std::string_view kMetaFileName = "codegen_meta.json";

// True for a directory name the walk does not enter: .git, venv, .venv, __pycache__, and
// upstream's staging directories .codegen_tmp_* and .codegen_old_*.
bool is_skipped_directory(std::string_view name);

// One place of a run: a meta to check, or an error found where metas were looked for.
struct MetaSource {
  std::string path;                 // the meta, or the file or directory the error is about
  std::optional<Diagnostic> error;  // set: nothing to check here, report this (class kIo)
  // A meta the walk found: open, to be read from here (never by `path`), and the directory
  // that holds it, where its bundle is; both null for a path given as a meta (read by name).
  std::unique_ptr<OpenedFile> file;
  std::shared_ptr<Directory> directory;
};

// The metas of `paths`, in their order, one at a time: "-" (stdin) and a path that is not a
// directory (a file, or nothing there: its loader reports that) are each one meta as given; a
// directory is walked. Paths found are the directory as given joined with '/' to the names
// below it ("gen/codegen_meta.json" for "."; the directory itself is followed if it is a
// link). A path named twice is checked twice.
//
// In a walk, an entry named codegen_meta.json that is a regular file, or a link to one, is a
// meta; a link to a directory is passed over, as is a directory that vanishes or stops being
// one between being listed and being opened (a bundle being replaced). Errors (class kIo,
// and the walk goes on): a directory that cannot be listed ("cannot open directory: <OS
// error>"); an entry named codegen_meta.json that cannot be read as a file: "cannot open:
// <OS error>" (a broken link), "is a FIFO, not a regular file" and the like; a directory the
// walk let go of and found elsewhere on its way back ("moved while it was walked: ..."); and
// "no codegen_meta.json in this directory or below" for a directory whose walk found nothing.
class MetaFinder {
 public:
  MetaFinder(FileSystem& fs, std::vector<std::string> paths);
  // The next meta or error in output order, nullopt after the last. Not for two threads at
  // once.
  std::optional<MetaSource> next();

 private:
  struct Level {
    std::shared_ptr<Directory> dir;  // null once let go of (kept: the deepest ones)
    FileIdentity identity;
    std::string path;
    std::vector<DirectoryEntry> entries;  // sorted by name
    std::size_t next = 0;
  };
  std::optional<MetaSource> start(const std::string& path);
  std::optional<MetaSource> enter(const std::string& path, std::shared_ptr<Directory> dir);
  std::optional<MetaSource> leave();
  std::optional<MetaSource> visit(const DirectoryEntry& entry);

  FileSystem& fs_;
  std::vector<std::string> paths_;
  std::size_t next_path_ = 0;
  std::vector<Level> levels_;
  std::string root_;        // the directory being walked
  bool found_any_ = false;  // in this walk, a meta or an error
};

}  // namespace hpfreeze
