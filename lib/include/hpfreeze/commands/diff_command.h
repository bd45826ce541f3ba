#pragma once
// `hpfreeze diff`: the semantic difference of two codegen_meta.json files (docs/cli.md).

#include <string>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/diff/diff_options.h"
#include "hpfreeze/io/file_system.h"

namespace hpfreeze {

struct DiffRequest {
  std::string old_path;  // "-" for stdin (at most one of the two)
  std::string new_path;
  bool json = false;
  DiffOptions options;
  // No output, the outcome only (diff --quiet, as git diff --quiet); wins over the rest.
  bool quiet = false;
  // The differences folded: one line (object) per group of the same change at different
  // numbers (diff --group).
  bool group = false;
  // A summary instead of the differences, after the groups with `group` (diff --stat).
  bool stat = false;
  // When the metas differ, a note on NEW with --stat's last line (what --message-format
  // github shows as a ::notice on the pull request).
  bool summary_note = false;
  // The files it reads and writes: the real disk when null (the library's tests give an
  // in-memory one).
  FileSystem* files = nullptr;
};

// Reads, decodes (decode_meta) and compares both files. The output holds one line per
// difference (text or, with `json`, JSON Lines), or per group, and/or the summary;
// differences make the result negative.
// Errors: unreadable files (kIo), invalid JSON and an invalid meta or another kind of
// file (kRejected), an --ignore item that is malformed or matches nothing in either file
// (kIo: a usage error). Exit status 1 means "different", so every error is trouble
// (errors_are_trouble): the front end exits 2 on any of them.
CommandResult run_diff(const DiffRequest& request);

}  // namespace hpfreeze
