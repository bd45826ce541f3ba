#pragma once
// The meta checker, the pass of `hpfreeze check`: every finding about a decoded meta and
// a model (docs/cli.md, "hpfreeze check"). check_meta (hpfreeze/check.h) is its public
// face; run_check (check_command.cc) loads the files and calls check_document.

#include "hpfreeze/check.h"
#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

// check_meta, which frees the structure of `releasable` (the document `meta`, when the
// caller owns it) once the meta is decoded: the decoded meta views only its strings.
Diagnostics check_document(const JsonDocument& meta, JsonDocument* releasable,
                           const ModelTree* model, bool allow_uncovered);

}  // namespace hpfreeze
