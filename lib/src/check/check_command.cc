// run_check: loads META and --model (io/inputs.h), runs the meta checker
// (meta_checker.h) and returns its findings; and the findings' JSON Lines.
#include "hpfreeze/check_command.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "check/meta_checker.h"
#include "hpfreeze/background_task.h"
#include "hpfreeze/checkpoint.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json.h"
#include "io/inputs.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/placement.h"
#include "json/json_stream.h"

namespace hpfreeze {
namespace {

// Read failures first: when some file could not be read, they are all that is reported.
void add_load_errors(Diagnostics&& from, Diagnostics& io_errors, Diagnostics& findings) {
  for (Diagnostic& d : from) {
    (d.error_class == ErrorClass::kIo ? io_errors : findings).push_back(std::move(d));
  }
}

}  // namespace

CommandResult run_check(const CheckRequest& request) {
  CommandResult result;
  if (std::optional<Diagnostic> twice = stdin_twice_error(
          {&request.meta_path, request.model_path ? &*request.model_path : nullptr},
          "META and --model")) {
    result.diagnostics.push_back(std::move(*twice));
    return result;
  }
  std::vector<InputPath> inputs{{"META", request.meta_path, {}}};
  if (request.model_path) inputs.push_back({"--model", *request.model_path, {}});
  result.diagnostics = check_stdout_apart(inputs);
  if (!result.diagnostics.empty()) return result;
  // Both files are read and parsed before anything is checked, so every unreadable or
  // malformed input is reported in one run. Only the reading happens up front: the model
  // is parsed and decoded, and its structure freed, before the meta is parsed, so the two
  // parsed documents are never held whole together.
  // The meta is read on a second thread (where there is a second CPU) while the model is
  // read, parsed and decoded: both texts are held at once either way.
  LoadStage meta_stage;  // check shows no stages; the meta's is written by the second thread
  LoadStage model_stage;
  std::optional<Expected<InputFile>> meta_input;
  BackgroundTask meta_read(request.concurrency, [&meta_input, &meta_stage, &request] {
    meta_input = read_stage(request.meta_path, meta_stage, {});
  });
  // A safetensors checkpoint is read header only; anything else as JSON.
  std::optional<Expected<ModelTree>> model;
  if (request.model_path) model = read_safetensors(*request.model_path);
  std::optional<Expected<InputFile>> model_input;
  if (request.model_path && !model) model_input = read_stage(*request.model_path, model_stage, {});

  // The model's parser and tape go on to the meta's parse (ParseScratch); its text goes
  // back to the system, the meta being read already.
  ParseScratch scratch;
  scratch.expect_input(std::max(regular_file_size(request.meta_path),
                                model_input ? regular_file_size(*request.model_path) : 0));
  std::optional<Expected<JsonDocument>> model_doc;
  if (model_input) {
    // The model's parse checks its keys itself, unlike freeze's and report's
    // (decoder_checks_keys, inputs.h): the decoder's check builds the model's lookup index
    // at once, which would then be held through the meta's parse and raise check's peak;
    // checked by the parse, it is built by the checker, after that parse.
    model_doc = parse_stage(std::move(*model_input), model_stage, scratch, false, {},
                            TextAfterParse::kToSystem);
    // A decoded tree is only used when the meta could be read (its parse errors aside):
    // decoded beside the meta's read, it is dropped if that read failed.
    if (*model_doc) {
      model = decode_model_input(**model_doc, *request.model_path);
      if (*model) (**model_doc).release_tree(scratch);  // the tree views only the strings
    }
  }
  meta_read.wait();
  if (model && !*meta_input) model.reset();
  Expected<JsonDocument> meta = parse_stage(std::move(*meta_input), meta_stage, scratch, true);

  // The meta's load errors before the model's; read failures are all that is reported.
  Diagnostics io_errors;
  if (!meta) add_load_errors(std::move(meta.errors()), io_errors, result.diagnostics);
  if (model_doc && !*model_doc) {
    add_load_errors(std::move(model_doc->errors()), io_errors, result.diagnostics);
  }
  if (model && !*model && model->errors().front().error_class == ErrorClass::kIo) {
    add_load_errors(std::move(model->errors()), io_errors, result.diagnostics);
    model.reset();
  }
  if (!io_errors.empty()) {
    result.diagnostics = std::move(io_errors);
    return result;
  }
  if (!result.diagnostics.empty()) return result;
  if (model && !*model) {
    result.diagnostics = std::move(model->errors());
    return result;
  }
  result.diagnostics =
      check_document(*meta, &*meta, model ? &**model : nullptr, request.allow_uncovered);
  return result;
}

std::string_view severity_name(Severity severity) {
  constexpr std::array<std::string_view, 3> kNames{"error", "warning", "note"};  // enum order
  return kNames[static_cast<std::size_t>(severity)];
}

void append_finding_json_line(std::string& out, const Diagnostic& d, std::string_view severity) {
  std::string message = d.message;
  for (const std::string& line : d.detail) {
    message += '\n';
    message += line;
  }
  JsonStream w(out, JsonLayout::kOneLine);
  w.start_object();
  w.key("severity").string(severity);
  w.key("file").string(d.file);
  w.key("pointer").string(d.pointer);
  w.key("message").string(message);
  if (d.line != 0) {
    w.key("line").number(d.line);
    if (d.column != 0) w.key("column").number(d.column);
  }
  w.end_object();
  w.end_line();
}

std::string render_findings_json_lines(const Diagnostics& findings) {
  std::string out;
  for (const Diagnostic& d : findings) append_finding_json_line(out, d, severity_name(d.severity));
  return out;
}

}  // namespace hpfreeze
