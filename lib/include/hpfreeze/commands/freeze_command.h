#pragma once
// `hpfreeze freeze`: a plan dump and a model tree dump into a codegen_meta.json
// (docs/cli.md).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/freeze/freeze_options.h"
#include "hpfreeze/inputs/load_stage.h"
#include "hpfreeze/io/file_system.h"

namespace hpfreeze {

struct FreezeRequest {
  std::string plan_path;                 // "-" for stdin
  std::string model_path;                // "-" for stdin
  std::optional<std::string> base_path;  // "-" for stdin
  std::string output_path = "-";         // "-" for stdout
  bool if_changed = false;
  // Also write a Make-syntax depfile "OUT: PLAN MODEL [BASE]" here, with the output: both
  // or neither; if_changed leaves an identical one alone too.
  std::optional<std::string> depfile_path;
  // --check: compare the meta with output_path (a file) instead of writing anything.
  bool check = false;
  FreezeOptions options;
  Concurrency concurrency;
  // The files it reads and writes: the real disk when null (the library's tests give an
  // in-memory one).
  FileSystem* files = nullptr;
};

// What each stage of one freeze did, for `-v` (docs/cli.md, "Verbose output"); a stage that
// did not run keeps its flag false. Times are wall-clock milliseconds on the thread that ran
// the stage, so they may add up to more than the whole run.
struct FreezeStages {
  using Input = LoadStage;    // the base meta's check counts as its decode
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

// Loads, freezes, encodes and writes the output (atomically, or to stdout), then the
// depfile; with request.check, compares instead and writes nothing. The request's usage
// errors (kIo, exit 2) come first, before any input is read: more than one input "-", a
// depfile without -o FILE or with a "-" input, --check with "-" or a depfile. Fills
// `stages` when given.
CommandResult run_freeze(const FreezeRequest& request, FreezeStages* stages = nullptr);

}  // namespace hpfreeze
