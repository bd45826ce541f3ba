#pragma once
// `hpfreeze freeze`: read the dumps, freeze, encode, write (SPEC §8).

#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/command_result.h"
#include "hpfreeze/diagnostic.h"
#include "hpfreeze/freeze.h"

namespace hpfreeze {

struct FreezeRequest {
  std::string plan_path;                 // "-" for stdin
  std::string model_path;                // "-" for stdin
  std::optional<std::string> base_path;  // "-" for stdin
  std::string output_path = "-";         // "-" for stdout
  bool if_changed = false;
  // Also write a Make-syntax depfile "OUT: PLAN MODEL [BASE]" here (hpfreeze/depfile.h),
  // after the output and only when it succeeded, even when if_changed left OUT alone.
  std::optional<std::string> depfile_path;
  FreezeOptions options;
};

// The files a freeze reads, in command-line order: plan, model, then base when given.
std::vector<std::string> freeze_input_paths(const FreezeRequest& request);

// The freeze pipeline up to the meta bytes; nothing is written.
struct RenderedMeta {
  std::string bytes;
  Diagnostics warnings;
};
Expected<RenderedMeta> render_meta(const FreezeRequest& request);

// render_meta, then the atomic write of the output (or stdout), then the depfile. A
// depfile needs -o FILE and file inputs (no '-') whose paths make syntax can express;
// these usage errors come first, before any input is read, with ErrorClass::kIo so that
// they map to exit status 2 like every other failure to write.
CommandResult run_freeze(const FreezeRequest& request);

}  // namespace hpfreeze
