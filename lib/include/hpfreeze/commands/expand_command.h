#pragma once
// `hpfreeze expand`: the expand pass alone over a plan dump, for shell pipelines.

#include <string>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/io/file_system.h"

namespace hpfreeze {

// Reads the plan dump at `plan_path` ("-" for stdin), decodes it (docs/formats.md, "Plan
// dump") and outputs the sorted, de-duplicated FQNs of its sharded parameters, one per
// line, each ending in '\n' (nothing when none). Errors: kIo for a failed read, kRejected
// for invalid content; the output is then empty.
// `concurrency` as in decode_plan_dump; `files`: the real disk when null.
CommandResult run_expand(const std::string& plan_path, Concurrency concurrency,
                         FileSystem* files = nullptr);

}  // namespace hpfreeze
