#pragma once
// `hpfreeze freeze`: read the dumps, freeze, encode, write (docs/cli.md).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/command_result.h"
#include "hpfreeze/concurrency.h"
#include "hpfreeze/diagnostic.h"
#include "hpfreeze/freeze.h"
#include "hpfreeze/io.h"

namespace hpfreeze {

struct FreezeRequest {
  std::string plan_path;                 // "-" for stdin
  std::string model_path;                // "-" for stdin
  std::optional<std::string> base_path;  // "-" for stdin
  std::string output_path = "-";         // "-" for stdout
  bool if_changed = false;
  // Also write a Make-syntax depfile "OUT: PLAN MODEL [BASE]" here (hpfreeze/depfile.h),
  // with the output, both or neither (io.h); if_changed leaves an identical one alone too.
  std::optional<std::string> depfile_path;
  // --check: compare the meta with output_path (a file) instead of writing anything.
  bool check = false;
  FreezeOptions options;
  // The model's read beside the plan's decode, the plan's two decoding lanes, the freeze
  // beside the model's decode and the meta's two halves go on a second thread only when
  // this has a second CPU.
  Concurrency concurrency;
};

// The files a freeze reads, in command-line order: plan, model, then base when given.
std::vector<std::string> freeze_input_paths(const FreezeRequest& request);

// What each stage of one freeze did, for `-v` (docs/cli.md, "Verbose output"). A stage
// that did not run (an earlier one failed) keeps ran = false. Times are wall-clock
// milliseconds on the thread that ran the stage: the model dump is read, parsed and
// decoded on a second thread, so the stage times may add up to more than the whole run.
struct FreezeStages {
  using Input = LoadStage;     // the base meta's check counts as its decode
  std::vector<Input> inputs;  // plan, model, then base when given
  bool decoded = false;       // both dumps decoded
  std::size_t modules = 0;    // plan modules (boundaries)
  std::size_t planned_params = 0;
  std::size_t model_modules = 0;
  std::size_t model_parameters = 0;
  bool frozen = false;
  double freeze_ms = 0;  // the freeze passes and the meta assembly
  std::size_t sharded_params = 0;
  bool encoded = false;
  double encode_ms = 0;
  std::size_t output_bytes = 0;
  bool written = false;
  double write_ms = 0;
  bool output_unchanged = false;  // --if-changed found the same bytes and left OUT alone
  bool checked = false;           // --check compared the meta with OUT
  bool check_matched = false;     // ... and OUT held the same bytes
  double check_ms = 0;            // reading OUT and comparing (the diff included)
};

// The freeze pipeline up to the meta bytes; nothing is written. Fills `stages` when given.
struct RenderedMeta {
  std::string bytes;
  Diagnostics warnings;
};
Expected<RenderedMeta> render_meta(const FreezeRequest& request, FreezeStages* stages = nullptr);

// render_meta, then the atomic write of the output (or stdout), then the depfile. First of
// all, a usage error (kIo) when more than one of plan, model and base is "-" (stdin). A
// depfile needs -o FILE and file inputs (no '-') whose paths make and ninja read back;
// these usage errors come first, before any input is read, with ErrorClass::kIo so that
// they map to exit status 2 like every other failure to write.
// With request.check, run_freeze_check instead.
CommandResult run_freeze(const FreezeRequest& request, FreezeStages* stages = nullptr);

// At most this many differences are listed under freeze --check's error.
inline constexpr std::size_t kMaxCheckDifferences = 10;

// freeze --check: render_meta, then compare with the file output_path names; writes
// nothing. Ok when the file holds exactly these bytes. An error (kRejected: exit 1) when
// it is missing or differs, the latter with the differences diff finds from the file to
// the new meta as its detail lines. Usage errors (kIo): output_path "-", a depfile_path.
// A path that cannot be looked at, a directory or anything but a regular file is kIo too.
CommandResult run_freeze_check(const FreezeRequest& request, FreezeStages* stages = nullptr);

}  // namespace hpfreeze
