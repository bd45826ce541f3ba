#include "inputs/load_steps.h"

#include <utility>

#include "base/stage_clock.h"
#include "dumps/dump_kind.h"

namespace hpfreeze {

Expected<InputFile> read_stage(FileSystem& fs, const std::string& path, LoadStage& stage,
                               std::string buffer, OpenedFile* opened) {
  const StageClock::time_point start = StageClock::now();
  Expected<InputFile> input = opened != nullptr ? opened->read(path, std::move(buffer))
                                                : fs.read_input(path, std::move(buffer));
  stage.read_ms = ms_since(start);
  if (!input) {
    stage.name = path == "-" ? "<stdin>" : path;
    return input;
  }
  stage.name = input->display_name;
  stage.bytes = input->bytes.size();
  stage.read = true;
  return input;
}

Expected<JsonDocument> parse_stage(Expected<InputFile> input, LoadStage& stage,
                                   ParseScratch& scratch, bool last, ParseOptions options,
                                   TextAfterParse text) {
  if (!input) return std::move(input.errors());
  const StageClock::time_point start = StageClock::now();
  options.scratch = &scratch;
  if (options.not_json == nullptr) options.not_json = not_json_kind;
  Expected<JsonDocument> document =
      parse_json_document(input->display_name, std::move(input->bytes), options);
  if (last) scratch.close();
  stage.parse_ms = ms_since(start);
  stage.parsed = static_cast<bool>(document);
  if (document && text == TextAfterParse::kToSystem) {
    document->release_bytes();
  } else if (document) {
    document->release_bytes(scratch);
  }
  return document;
}

ParseOptions decoder_checks_keys() {
  ParseOptions options;
  options.check_duplicate_keys = false;
  return options;
}

std::optional<Diagnostic> repeated_key(const JsonDocument& document) {
  if (document.keys_checked()) return std::nullopt;
  return find_duplicate_key(document);
}

}  // namespace hpfreeze
