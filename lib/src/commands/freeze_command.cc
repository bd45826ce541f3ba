// run_freeze and render_meta: the dumps loaded (inputs/inputs.h), frozen, encoded, written.
#include "hpfreeze/commands/freeze_command.h"

#include <optional>
#include <string_view>
#include <utility>

#include "base/stage_clock.h"
#include "commands/freeze_steps.h"
#include "freeze/freeze.h"
#include "inputs/inputs.h"
#include "io/depfile.h"
#include "io/io.h"
#include "json/encode.h"

namespace hpfreeze {
namespace {

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
  std::vector<DepfilePath> prerequisites;
  for (const auto& [flag, path] : inputs) {
    if (path != nullptr) prerequisites.push_back({flag, *path});
  }
  Expected<std::string> text = render_depfile({"-o", request.output_path}, prerequisites);
  if (!text) {
    for (Diagnostic& d : text.errors()) {
      d.file = *request.depfile_path;
      d.error_class = ErrorClass::kIo;
    }
  }
  return text;
}

// The part of the freeze that needs no model (PlanFreezer's constructor), beside the model's
// decode on the second CPU, once the model's parse has handed back its text and structural
// index (run before that parse, its 51 MiB at 100 MB would add to the parse's peak); the
// checks against the model on the loading thread, while the freezer may still be building.
struct FreezeBesideModel {
  std::optional<PlanFreezer> freezer;
  std::optional<ModelChecks> model_checks;
  double freeze_ms = 0;  // counted as part of the plan's decode

  BesideModelDecode hooks(const FreezeOptions& options) {
    return {[this, &options](const PlanDump& plan) {
              const StageClock::time_point start = StageClock::now();
              freezer.emplace(plan, options);
              freeze_ms = ms_since(start);
            },
            [this, &options](const PlanDump& plan, const ModelTree& model) {
              model_checks = check_against_model(plan, model, options);
            }};
  }
};

// The plan, the model dump and the base meta (the plan's own `meta`, replaced by --base's
// file when given), in that order (docs/reliability.md, "The order of errors").
std::vector<InputSpec> freeze_inputs(const FreezeRequest& request) {
  return {{"--plan", request.plan_path, InputKind::kPlanDump},
          {"--model", request.model_path, InputKind::kModelDump},
          {"--base", request.base_path.value_or(std::string()), InputKind::kBaseMeta}};
}

// The stages of the loading, for -v.
void note_loaded(FreezeStages& st, const FreezeRequest& request, LoadedInputs& loaded,
                 double freeze_ms) {
  st.inputs.resize(request.base_path ? 3 : 2);
  for (std::size_t i = 0; i < st.inputs.size(); ++i) st.inputs[i] = loaded.inputs[i].stage;
  st.inputs[0].decode_ms += freeze_ms;
  if (!loaded) return;
  const PlanDump& plan = loaded.inputs[0].plan();
  const ModelTree& model = loaded.inputs[1].model();
  st.decoded = true;
  st.modules = plan.modules.size();
  for (const ModuleSpec& spec : plan.modules) {
    if (spec.params) st.planned_params += spec.params->size();
  }
  st.model_modules = model.modules.size();
  st.model_parameters = model.parameters.size();
}

// The freeze pipeline up to the meta's bytes; `outputs` (none for --check) are checked
// against the inputs before anything is read.
Expected<RenderedMeta> freeze_to_bytes(const FreezeRequest& request,
                                       std::span<const OutputFile> outputs, FreezeStages& st) {
  st = FreezeStages{};
  FreezeBesideModel overlap;
  const BesideModelDecode beside = overlap.hooks(request.options);
  LoadOptions load;
  load.command = "freeze";
  load.concurrency = request.concurrency;
  load.check_paths = !outputs.empty();
  load.outputs = outputs;
  load.replaceable_by = "-o";  // an in-place update: the inputs are read whole first
  load.beside_model_decode = &beside;
  load.files = request.files;
  LoadedInputs loaded = load_inputs(freeze_inputs(request), load);
  note_loaded(st, request, loaded, overlap.freeze_ms);
  if (!loaded) return std::move(loaded.errors);
  const StageClock::time_point start = StageClock::now();
  Expected<FreezeResult> frozen =
      std::move(*overlap.freezer)
          .finish(loaded.inputs[1].model(), std::move(*overlap.model_checks));
  if (!frozen) return std::move(frozen.errors());
  // Memory goes back as soon as a stage is done with it: the frozen plan holds no view into
  // the model dump, and views the plan's document, not the decoded plan.
  loaded.inputs[1].release();
  st.sharded_params = frozen->frozen.frozen_sharded_params.size();
  LoadedInput& base = loaded.inputs[2];
  const JsonObject defaults_and_base =
      meta_defaults_and_base(base.has_value() ? &base.base() : nullptr);
  loaded.inputs[0].release_value();
  st.freeze_ms = ms_since(start);
  st.frozen = true;
  // The frozen fields are written from their tables, never built into a Json tree.
  const StageClock::time_point encode_start = StageClock::now();
  RenderedMeta rendered{encode_meta(frozen->frozen, defaults_and_base, request.concurrency),
                        std::move(frozen->warnings)};
  st.encode_ms = ms_since(encode_start);
  st.encoded = true;
  st.output_bytes = rendered.bytes.size();
  return rendered;
}

}  // namespace

Expected<RenderedMeta> render_meta(const FreezeRequest& request, FreezeStages* stages) {
  FreezeStages local;
  return freeze_to_bytes(request, {}, stages != nullptr ? *stages : local);
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
  if (request.depfile_path) depfile = render_freeze_depfile(request);
  if (depfile && !*depfile) {
    result.diagnostics = std::move(depfile->errors());
    return result;
  }
  // Left alone like the output when it holds the same bytes; ninja deletes a depfile once
  // it has read it, so there it is written again. -o may replace an input, the depfile not.
  const WriteOptions write_options{request.if_changed};
  std::vector<OutputFile> outputs{{"-o", request.output_path, {}, write_options}};
  if (depfile) outputs.push_back({"--depfile", *request.depfile_path, **depfile, write_options});
  FreezeStages local;
  FreezeStages& st = stages != nullptr ? *stages : local;
  Expected<RenderedMeta> rendered = freeze_to_bytes(request, outputs, st);
  if (!rendered) {
    result.diagnostics = std::move(rendered.errors());
    return result;
  }
  result.diagnostics = std::move(rendered->warnings);
  outputs.front().bytes = rendered->bytes;
  const StageClock::time_point start = StageClock::now();
  Expected<std::vector<WriteOutcome>> written =
      write_outputs(file_system_or_real(request.files), outputs);  // both or neither
  if (!written) {
    result.diagnostics.insert(result.diagnostics.end(), written.errors().begin(),
                              written.errors().end());
    return result;
  }
  st.write_ms = ms_since(start);
  st.written = true;
  st.output_unchanged = written->front() == WriteOutcome::kUnchanged;
  return result;
}

}  // namespace hpfreeze
