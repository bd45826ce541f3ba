#pragma once
// `hpfreeze check`: findings about a codegen_meta.json, alone or against its model
// (docs/cli.md).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/io/file_system.h"

namespace hpfreeze {

struct CheckRequest {
  // The metas: a file is a meta as given, a directory is walked for its codegen_meta.json
  // files (io/meta_tree.h, MetaFinder: by directory descriptor, each meta read from what the
  // walk opened), "-" is stdin (and then the only path). Each meta is checked as if it were
  // alone; the findings follow the order of the walk.
  std::vector<std::string> paths;
  std::optional<std::string> model_path;  // "-" for stdin (not both); one meta only
  // A trainable model parameter no param_plan entry covers: a warning instead of an error
  // (the same flag and rule as report --allow-uncovered).
  bool allow_uncovered = false;
  // One meta is read on a second thread beside the model only when this has a second CPU;
  // several metas are checked on up to this many threads, each meta on one.
  Concurrency concurrency;
  // The findings as JSON Lines on stdout, one compact object per finding:
  // {"severity":...,"code":...,"file":...,"pointer":...,"message":...} ("code" for a finding
  // of a rule), plus "line" and "column" when the finding has a text position (syntax
  // errors). Read errors stay diagnostics.
  bool json = false;
  // Also verify each meta's generated bundle (check/bundle_check.h): its findings join the
  // meta's before they are sorted. A meta on stdin has no bundle: "-" (or /dev/stdin, any
  // name of a descriptor) is a usage error then; so is a libcrypto that cannot be loaded, one
  // I/O error for the run. In a run of several, a meta the walk found without a bundle is
  // counted in the closing note instead of noted.
  bool bundle = false;
  // Finding codes (hpfreeze/spec/finding_codes.h) whose findings are left out, as if their
  // rules had not run: not in the output, the counts, the closing note or the exit status.
  // A code the findings table lacks is a usage error.
  std::vector<std::string> silenced = {};
  // The files it reads and writes: the real disk when null (the library's tests give an
  // in-memory one).
  FileSystem* files = nullptr;
};

// What a run of check found, for the front end's -v line.
struct CheckTally {
  SeverityCounts counts;    // the findings of every meta, by severity
  std::size_t metas = 0;    // the metas checked (not the walk's errors)
  bool summarized = false;  // a closing note counts them (more than one meta or error)
};

// Reads, parses and checks the files of `request`. For each meta, in walk order: the
// findings about the content of META and MODEL (syntax and decode errors included), in the
// order check_meta gives (with `json`, as JSON Lines in the output instead); or, when a file
// could not be read (ErrorClass::kIo), only those read errors: nothing of it was checked.
// With more than one meta, a last note counts the metas and the findings, and with --bundle
// the bundles verified and the metas without one (docs/cli.md, "Several metas"). A usage error of
// the request is the only diagnostic. `tally`, when given, receives how many findings of each
// severity there are and how many metas.
CommandResult run_check(const CheckRequest& request, CheckTally* tally = nullptr);

}  // namespace hpfreeze
