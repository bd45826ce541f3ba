#pragma once
// Finding the metas of `check PATH...`: a directory is walked for the files named
// codegen_meta.json, depth first, each directory's entries in byte order of their names.
// The walk enters no symlinked directory and none of the directories that hold no bundle
// of a project's own (is_skipped_directory below), and opens no file: it only lists
// directories and looks at what a link leads to.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

inline constexpr std::string_view kMetaFileName = "codegen_meta.json";

// True for a directory name the walk does not enter: .git, venv, .venv, __pycache__, and
// upstream's staging directories .codegen_tmp_* and .codegen_old_*.
bool is_skipped_directory(std::string_view name);

// One place of a run: a meta to check, or an error found where metas were looked for.
struct MetaSource {
  std::string path;                 // the meta, or the file or directory the error is about
  std::optional<Diagnostic> error;  // set: nothing to check here, report this (class kIo)
};

// What walking the directory `dir` finds, in walk order. Paths are `dir` joined with '/'
// to the names below it ("gen/codegen_meta.json" for dir "."; `dir` itself is followed
// if it is a link). A regular file named codegen_meta.json, or a link to one, is a meta;
// an error is a directory that cannot be listed ("cannot open directory: <OS error>"),
// or an entry named codegen_meta.json that cannot be read as a file: "cannot open:
// <OS error>" (a broken link), "is a FIFO, not a regular file" and the like. The walk goes
// on after an error. A directory that vanishes between being listed and being walked is
// passed over (a bundle being replaced), as is an entry named codegen_meta.json that is a
// directory (walked as any other) or a link to one (not followed).
std::vector<MetaSource> walk_for_metas(const std::string& dir);

// The metas of `paths`, in their order: "-" (stdin) and a path that is not a directory
// (a file, or nothing there: its loader reports that) are each one meta as given; a
// directory is walk_for_metas(). A directory whose walk found neither a meta nor an error
// gives the error "no codegen_meta.json in this directory or below" with the directory as
// its file. A path named twice is checked twice.
std::vector<MetaSource> find_metas(std::span<const std::string> paths);

}  // namespace hpfreeze
