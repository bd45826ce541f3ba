#include "hpfreeze/freeze_command.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "base/stage_clock.h"
#include "hpfreeze/background_task.h"
#include "hpfreeze/depfile.h"
#include "hpfreeze/dump_kind.h"
#include "hpfreeze/encode.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/plan.h"
#include "io/inputs.h"

namespace hpfreeze {
namespace {

// One line naming the mix-up when the rejected --plan (`plan_rejected`) or --model is
// a file of another kind; nullopt when it looks like a damaged file of the right kind.
// Only a rejected file is looked at, so a valid run never pays for it.
std::optional<Diagnostic> input_mixup_error(const JsonDocument& plan, const JsonDocument& model,
                                            bool plan_rejected) {
  const JsonDocument& rejected = plan_rejected ? plan : model;
  const DumpKind kind = guess_dump_kind(rejected);
  const DumpKind wanted = plan_rejected ? DumpKind::kPlan : DumpKind::kModel;
  const std::string_view flag = plan_rejected ? "--plan" : "--model";
  // The other file may have been decoded and its tree released: then it is the kind its
  // flag asks for, which is not `wanted`.
  const JsonDocument& other = plan_rejected ? model : plan;
  if (kind != DumpKind::kMeta && kind != DumpKind::kUnknown && kind != wanted &&
      !other.tree_released() && guess_dump_kind(other) == wanted) {
    return make_error(rejected.name(), {},
                      "--plan and --model look swapped: --plan " + plan.name() +
                          " is a model tree dump and --model " + model.name() + " is a plan dump");
  }
  return wrong_kind_error(rejected, kind, wanted, flag);
}

Diagnostic depfile_usage_error(const FreezeRequest& request, std::string message) {
  return make_io_error(*request.depfile_path, std::move(message));
}

// The depfile text, or the usage errors that prevent one.
Expected<std::string> render_freeze_depfile(const FreezeRequest& request) {
  Diagnostics errors;
  if (request.output_path == "-") {
    errors.push_back(
        depfile_usage_error(request, "--depfile needs an output file, but -o is '-' (stdout)"));
  }
  const std::pair<const char*, const std::string*> inputs[] = {
      {"--plan", &request.plan_path},
      {"--model", &request.model_path},
      {"--base", request.base_path ? &*request.base_path : nullptr}};
  for (const auto& [flag, path] : inputs) {
    if (path != nullptr && *path == "-") {
      errors.push_back(depfile_usage_error(
          request, std::string("--depfile needs input files, but ") + flag + " is '-' (stdin)"));
    }
  }
  if (!errors.empty()) return errors;
  const std::vector<std::string> paths = freeze_input_paths(request);
  constexpr std::string_view kFlags[] = {"--plan", "--model", "--base"};
  std::vector<DepfilePath> prerequisites;
  for (std::size_t i = 0; i < paths.size(); ++i) prerequisites.push_back({kFlags[i], paths[i]});
  Expected<std::string> text = render_depfile({"-o", request.output_path}, prerequisites);
  if (!text) {
    for (Diagnostic& d : text.errors()) {
      d.file = *request.depfile_path;
      d.error_class = ErrorClass::kIo;
    }
  }
  return text;
}

}  // namespace

std::vector<std::string> freeze_input_paths(const FreezeRequest& request) {
  std::vector<std::string> paths{request.plan_path, request.model_path};
  if (request.base_path) paths.push_back(*request.base_path);
  return paths;
}

Expected<RenderedMeta> render_meta(const FreezeRequest& request, FreezeStages* stages) {
  FreezeStages local_stages;
  FreezeStages& st = stages != nullptr ? *stages : local_stages;
  st = FreezeStages{};
  st.inputs.resize(request.base_path ? 3 : 2);
  // One dump after the other, each parsed, decoded and released down to its strings
  // before the next is parsed: peak memory is one parse (its input text, structural index
  // and tape) plus what earlier stages kept, the budget of docs/performance.md. Parsing
  // the model on a second thread beside the plan raised the peak by the plan's parse and
  // was slower even on two cores of a busy machine: it doubled the fresh pages (faults)
  // that dominate this work (docs/performance.md, "Where the time goes"). What does run on a second
  // thread (BackgroundTask) holds no memory the other step needs: the model's read beside
  // the plan's decode, and the model-free part of the freeze beside the model's decode.
  // Errors are then examined in the order a user reads them: every read and parse error
  // first, so that each unreadable or malformed file is reported in one run; then the
  // decode errors.
  // Each step hands the memory it is done with to the next (ParseScratch): the plan's
  // text, parser and tape to the model's read and parse.
  ParseScratch scratch;
  scratch.expect_input(
      std::max(regular_file_size(request.plan_path), regular_file_size(request.model_path)));
  const bool has_base = request.base_path.has_value();
  Expected<JsonDocument> plan_doc =
      load_document(request.plan_path, st.inputs[0], scratch, false, decoder_checks_keys());
  std::optional<Expected<PlanDump>> plan;
  std::optional<Expected<JsonDocument>> model_doc;
  {
    // The model's text goes into the buffer the plan's parse handed back, while the plan
    // is decoded: one dump's text is held at a time either way.
    std::optional<Expected<InputFile>> model_input;
    BackgroundTask model_read(
        request.concurrency, [&model_input, &request, &st, buffer = scratch.take_text()]() mutable {
          model_input = read_stage(request.model_path, st.inputs[1], std::move(buffer));
        });
    const StageClock::time_point start = StageClock::now();
    if (plan_doc) plan = decode_plan_dump(*plan_doc, request.concurrency);
    if (plan && *plan) plan_doc->release_tree(scratch);
    st.inputs[0].decode_ms = ms_since(start);
    model_read.wait();
    model_doc = parse_stage(std::move(*model_input), st.inputs[1], scratch, !has_base,
                            decoder_checks_keys());
  }
  // The part of the freeze that needs no model, beside the model's decode, once the
  // model's parse has handed back its input text and structural index: run before that
  // parse, its 51 MiB (at 100 MB) would add to the parse's peak. Timed as part of the
  // plan's decode.
  std::optional<PlanFreezer> freezer;
  std::optional<Expected<ModelTree>> model_tree;
  std::optional<ModelChecks> model_checks;
  {
    double freeze_ms = 0;
    BackgroundTask plan_freeze(request.concurrency, [&freezer, &freeze_ms, &plan, &request] {
      if (!plan || !*plan) return;
      const StageClock::time_point start = StageClock::now();
      freezer.emplace(**plan, request.options);
      freeze_ms = ms_since(start);
    });
    if (*model_doc) {
      const StageClock::time_point start = StageClock::now();
      model_tree = decode_model_tree(**model_doc);
      st.inputs[1].decode_ms = ms_since(start);
      // The decoded tree views only the document's strings.
      if (*model_tree) (**model_doc).release_tree(scratch);
      // finish()'s checks against the model, while the freezer may still be building.
      if (*model_tree && plan && *plan) {
        model_checks = check_against_model(**plan, **model_tree, request.options);
      }
    }
    plan_freeze.wait();
    st.inputs[0].decode_ms += freeze_ms;
  }
  std::optional<Expected<JsonDocument>> base_doc;
  if (has_base) base_doc = load_document(*request.base_path, st.inputs[2], scratch, true);

  // A repeated key in a dump whose parse left it to the decoder (inputs.h): looked for only
  // when something failed, and reported where the parse would have reported it.
  Diagnostics errors;
  const bool parse_failed = !plan_doc || !*model_doc || (base_doc && !*base_doc);
  for (const Expected<JsonDocument>* doc :
       {&plan_doc, &*model_doc, base_doc ? &*base_doc : nullptr}) {
    if (doc != nullptr && !*doc) {
      errors.insert(errors.end(), doc->errors().begin(), doc->errors().end());
    } else if (doc != nullptr && parse_failed) {
      if (std::optional<Diagnostic> repeated = repeated_key(*doc)) errors.push_back(*repeated);
    }
  }
  if (!errors.empty()) return errors;
  if (!*plan || !*model_tree) {
    // Parse errors first, in file order, as a checked parse would have given them.
    if (std::optional<Diagnostic> repeated = repeated_key(plan_doc)) return *repeated;
    if (std::optional<Diagnostic> repeated = repeated_key(*model_doc)) return *repeated;
    if (auto mixup = input_mixup_error(*plan_doc, **model_doc, !*plan)) return *mixup;
    return std::move(!*plan ? (*plan).errors() : (*model_tree).errors());
  }

  // The plan's own meta is checked even when --base replaces it (docs/decisions.md).
  std::optional<Json> base;
  if ((**plan).meta) {
    Expected<Json> checked = decode_base_meta(*(**plan).meta, (**plan).file, "/meta");
    if (!checked) return std::move(checked.errors());
    base = std::move(*checked);
  }
  StageClock::time_point start;
  if (base_doc) {
    start = StageClock::now();
    Expected<Json> checked = decode_base_meta(**base_doc);
    st.inputs[2].decode_ms = ms_since(start);
    if (!checked) return std::move(checked.errors());
    base = std::move(*checked);
  }
  st.decoded = true;
  st.modules = (**plan).modules.size();
  for (const ModuleSpec& spec : (**plan).modules) {
    if (spec.params) st.planned_params += spec.params->size();
  }
  st.model_modules = (**model_tree).modules.size();
  st.model_parameters = (**model_tree).parameters.size();

  start = StageClock::now();
  Expected<FreezeResult> frozen =
      std::move(*freezer).finish(**model_tree, std::move(*model_checks));
  if (!frozen) return std::move(frozen.errors());
  // Memory goes back as soon as a stage is done with it (the input text went after
  // parsing): the peak is what the budget of docs/performance.md limits. The frozen plan
  // holds no view into the model dump, the meta none into the decoded plan.
  model_tree.reset();
  model_doc.reset();
  st.sharded_params = frozen->frozen.frozen_sharded_params.size();
  const JsonObject defaults_and_base = meta_defaults_and_base(base ? &*base : nullptr);
  // The frozen plan views the plan's document (kept), not the decoded plan.
  plan.reset();
  st.freeze_ms = ms_since(start);
  st.frozen = true;
  // The frozen fields are written from their tables, never built into a Json tree.
  start = StageClock::now();
  RenderedMeta rendered{encode_meta(frozen->frozen, defaults_and_base, request.concurrency),
                        std::move(frozen->warnings)};
  st.encode_ms = ms_since(start);
  st.encoded = true;
  st.output_bytes = rendered.bytes.size();
  return rendered;
}

CommandResult run_freeze(const FreezeRequest& request, FreezeStages* stages) {
  CommandResult result;
  if (std::optional<Diagnostic> twice =
          stdin_twice_error({&request.plan_path, &request.model_path,
                             request.base_path ? &*request.base_path : nullptr},
                            "--plan, --model and --base")) {
    result.diagnostics.push_back(std::move(*twice));
    return result;
  }
  if (request.check) return run_freeze_check(request, stages);
  std::optional<Expected<std::string>> depfile;
  if (request.depfile_path) {
    depfile = render_freeze_depfile(request);
    if (!*depfile) {
      result.diagnostics = std::move(depfile->errors());
      return result;
    }
  }
  WriteOptions write_options;
  write_options.if_changed = request.if_changed;
  std::vector<OutputFile> outputs{{"-o", request.output_path, {}, write_options}};
  // Left alone like the output when it holds the same bytes; ninja deletes a depfile once
  // it has read it, so there it is written again.
  if (depfile) outputs.push_back({"--depfile", *request.depfile_path, **depfile, write_options});
  // -o may replace an input (an in-place update: inputs are read whole first); the
  // depfile may not.
  std::vector<InputPath> inputs{{"--plan", request.plan_path, "-o"},
                                {"--model", request.model_path, "-o"}};
  if (request.base_path) inputs.push_back({"--base", *request.base_path, "-o"});
  result.diagnostics = check_distinct_paths(real_file_system(), outputs, inputs);
  if (!result.diagnostics.empty()) return result;
  Expected<RenderedMeta> rendered = render_meta(request, stages);
  if (!rendered) {
    result.diagnostics = std::move(rendered.errors());
    return result;
  }
  result.diagnostics = std::move(rendered->warnings);
  outputs.front().bytes = rendered->bytes;
  // Both files or neither.
  const StageClock::time_point start = StageClock::now();
  Expected<std::vector<WriteOutcome>> written = write_outputs(outputs);
  if (!written) {
    result.diagnostics.insert(result.diagnostics.end(), written.errors().begin(),
                              written.errors().end());
    return result;
  }
  if (stages != nullptr) {
    stages->write_ms = ms_since(start);
    stages->written = true;
    stages->output_unchanged = written->front() == WriteOutcome::kUnchanged;
  }
  return result;
}

}  // namespace hpfreeze
