#pragma once
// `hpfreeze thaw`: a codegen_meta.json back into the dumps that freeze it (docs/cli.md).

#include <optional>
#include <string>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/io/file_system.h"

namespace hpfreeze {

struct ThawRequest {
  std::string meta_path;                  // "-" for stdin
  std::string plan_path = "-";            // "-" for stdout
  std::optional<std::string> model_path;  // "-" for stdout
  Concurrency concurrency;
  // The files it reads and writes: the real disk when null (the library's tests give an
  // in-memory one).
  FileSystem* files = nullptr;
};

// Reads the meta, thaws it, writes the plan dump and then the model dump (each atomically,
// encode_plain_json plus a final newline). Nothing is written when thawing fails.
CommandResult run_thaw(const ThawRequest& request);

}  // namespace hpfreeze
