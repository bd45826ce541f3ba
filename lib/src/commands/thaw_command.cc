#include "hpfreeze/commands/thaw_command.h"

#include <span>
#include <utility>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "inputs/inputs.h"
#include "io/io.h"
#include "thaw/thaw.h"

namespace hpfreeze {
namespace {

// The meta at `path` read, decoded and thawed into bytes; the document and the meta are
// gone when it returns, so that only the bytes are held while they are written.
Expected<ThawedBytes> read_and_thaw(const ThawRequest& request) {
  const InputSpec meta{"the input meta", request.meta_path, InputKind::kMeta};
  LoadOptions load;
  load.command = "thaw";
  load.check_paths = false;  // outputs against the input: checked when writing
  load.files = request.files;
  LoadedInputs loaded = load_inputs(std::span(&meta, 1), load);
  if (!loaded) return std::move(loaded.errors);
  ThawOptions options;
  options.model = request.model_path.has_value();
  options.concurrency = request.concurrency;
  return thaw_meta_to_bytes(loaded.inputs[0].meta(), options);
}

// The only place thaw writes: both outputs are rendered before either is written, then
// written both or neither (io.h), and never one file under two names.
void write_thawed(const ThawRequest& request, const ThawedBytes& thawed, CommandResult& result) {
  std::vector<OutputFile> outputs{{"-o", request.plan_path, thawed.plan, {}}};
  if (request.model_path && thawed.model) {
    outputs.push_back({"--model-out", *request.model_path, *thawed.model, {}});
  }
  // -o may replace the meta it was read from (an in-place update), --model-out may not.
  const InputPath meta_input{"the input meta", request.meta_path, "-o"};
  FileSystem& files = file_system_or_real(request.files);
  Diagnostics clashes = check_distinct_paths(files, outputs, std::span(&meta_input, 1));
  Expected<std::vector<WriteOutcome>> written = clashes.empty()
                                                    ? write_outputs(files, outputs)
                                                    : Expected<std::vector<WriteOutcome>>(clashes);
  if (!written) {
    result.diagnostics.insert(result.diagnostics.end(), written.errors().begin(),
                              written.errors().end());
  }
}

}  // namespace

CommandResult run_thaw(const ThawRequest& request) {
  CommandResult result;
  // The rules between the two outputs, before the meta is read: compared by what they lead
  // to (device and inode), so two names of one file are refused and /dev/null twice is not.
  if (request.model_path && *request.model_path == "-" && request.plan_path == "-") {
    result.diagnostics.push_back(
        make_io_error({}, "-o and --model-out cannot both be '-' (stdout)"));
    return result;
  }
  if (request.model_path) {
    const OutputFile both[] = {{"-o", request.plan_path, {}, {}},
                               {"--model-out", *request.model_path, {}, {}}};
    result.diagnostics = check_distinct_paths(file_system_or_real(request.files), both, {});
    if (!result.diagnostics.empty()) return result;
  }
  Expected<ThawedBytes> thawed = read_and_thaw(request);
  if (!thawed) {
    result.diagnostics = std::move(thawed.errors());
    return result;
  }
  result.diagnostics = std::move(thawed->warnings);
  write_thawed(request, *thawed, result);
  return result;
}

}  // namespace hpfreeze
