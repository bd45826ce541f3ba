#pragma once
// `hpfreeze freeze`: read the dumps, freeze, encode, write (SPEC §8).

#include <optional>
#include <string>

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/freeze.h"

namespace hpfreeze {

struct FreezeRequest {
  std::string plan_path;                 // "-" for stdin
  std::string model_path;                // "-" for stdin
  std::optional<std::string> base_path;  // "-" for stdin
  std::string output_path = "-";         // "-" for stdout
  bool if_changed = false;
  FreezeOptions options;
};

struct CommandResult {
  Diagnostics diagnostics;  // warnings and errors, in the order they arose
  [[nodiscard]] bool failed() const;
  [[nodiscard]] bool io_failed() const;
};

// The freeze pipeline up to the meta bytes; nothing is written.
struct RenderedMeta {
  std::string bytes;
  Diagnostics warnings;
};
Expected<RenderedMeta> render_meta(const FreezeRequest& request);

// render_meta, then the atomic write of the output (or stdout).
CommandResult run_freeze(const FreezeRequest& request);

}  // namespace hpfreeze
