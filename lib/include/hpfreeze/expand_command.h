#pragma once
// `hpfreeze expand`: the expand pass alone over a plan dump, for shell pipelines.

#include <string>

#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

// Reads the plan dump at `plan_path` ("-" for stdin), decodes it (SPEC §2) and returns the
// sorted, de-duplicated FQNs of its sharded parameters, one per line, each ending in '\n'
// (empty when none). Errors: kIo for a failed read, kRejected for invalid content.
Expected<std::string> render_expand(const std::string& plan_path);

}  // namespace hpfreeze
