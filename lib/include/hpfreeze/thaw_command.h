#pragma once
// `hpfreeze thaw`: reads a codegen_meta.json, runs the thaw pass (thaw.h) and writes the
// plan dump and, on request, the model tree dump.

#include <optional>
#include <string>

#include "hpfreeze/command_result.h"
#include "hpfreeze/concurrency.h"
#include "hpfreeze/thaw.h"

namespace hpfreeze {

struct ThawRequest {
  std::string meta_path;                  // "-" for stdin
  std::string plan_path = "-";            // "-" for stdout
  std::optional<std::string> model_path;  // "-" for stdout
  Concurrency concurrency;                // ThawOptions::concurrency
};

// Reads the meta, thaws it, writes the plan dump and then the model dump (each atomically,
// encode_plain_json plus a final newline). Nothing is written when thawing fails.
CommandResult run_thaw(const ThawRequest& request);

}  // namespace hpfreeze
