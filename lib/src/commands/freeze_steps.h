#pragma once
// The two halves of run_freeze (hpfreeze/commands/freeze_command.h): the meta's bytes
// (freeze_command.cc) and freeze --check (freeze_check.cc), which compares them with OUT.

#include <cstddef>
#include <string>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/commands/freeze_command.h"

namespace hpfreeze {

// The freeze pipeline up to the meta bytes; nothing is written. Fills `stages` when given.
struct RenderedMeta {
  std::string bytes;
  Diagnostics warnings;
};
Expected<RenderedMeta> render_meta(const FreezeRequest& request, FreezeStages* stages = nullptr);

// At most this many differences are listed under freeze --check's error.
inline constexpr std::size_t kMaxCheckDifferences = 10;

// freeze --check: render_meta, then compare with the file output_path names; writes
// nothing. Ok when the file holds exactly these bytes. An error (kRejected: exit 1) when
// it is missing or differs, the latter with the differences diff finds from the file to
// the new meta as its detail lines; the last detail line of either names the command that
// writes the file ("run without --check to rewrite it: " and freeze_command_line). Usage
// errors (kIo): output_path "-", a depfile_path. A path that cannot be looked at, a
// directory or anything but a regular file is kIo too.
CommandResult run_freeze_check(const FreezeRequest& request, FreezeStages* stages = nullptr);

// The freeze that writes request.output_path as --check compares it, as one shell line:
// the inputs and OUT as given (each quoted for a POSIX shell where it needs it; a control
// byte as $'\xNN'), and the flags that decide whether it succeeds (--no-verify, --strict,
// --allow-empty); --check, --if-changed and --depfile change no byte of OUT and are left out.
std::string freeze_command_line(const FreezeRequest& request);

}  // namespace hpfreeze
