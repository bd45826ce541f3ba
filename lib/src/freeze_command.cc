#include "hpfreeze/freeze_command.h"

#include <algorithm>
#include <functional>
#include <future>
#include <optional>
#include <system_error>
#include <utility>

#include "hpfreeze/depfile.h"
#include "hpfreeze/encode.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {
namespace {

// The document without its input text, which nothing after the parse needs.
Expected<JsonDocument> load_document(const std::string& path) {
  Expected<InputFile> input = read_input(path);
  if (!input) return std::move(input.errors());
  Expected<JsonDocument> document =
      parse_json_document(input->display_name, std::move(input->bytes));
  if (document) document->release_bytes();
  return document;
}

// The model dump on its own: read and parsed, then decoded when that worked.
struct LoadedModel {
  std::optional<Expected<JsonDocument>> document;
  std::optional<Expected<ModelTree>> tree;
};

LoadedModel load_model(const std::string& path) {
  LoadedModel model;
  model.document = load_document(path);
  if (*model.document) model.tree = decode_model_tree(**model.document);
  return model;
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
  Expected<std::string> text = render_depfile(request.output_path, freeze_input_paths(request));
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

Expected<RenderedMeta> render_meta(const FreezeRequest& request) {
  // The model dump is read, parsed and decoded on a second thread while this one does the
  // plan: the two are independent until the freeze. The results are then examined in the
  // sequential order (every read and parse error first, so that each unreadable or
  // malformed file is reported in one run; then the decode errors), so the diagnostics
  // never depend on timing.
  std::future<LoadedModel> model_future;
  try {
    model_future = std::async(std::launch::async, load_model, std::cref(request.model_path));
  } catch (const std::system_error&) {
    // No thread to be had: load the model below, on this one.
  }
  Expected<JsonDocument> plan_doc = load_document(request.plan_path);
  std::optional<Expected<PlanDump>> plan;
  if (plan_doc) plan = decode_plan_dump(*plan_doc);
  // The part of the freeze that needs no model, meanwhile.
  std::optional<PlanFreezer> freezer;
  if (plan && *plan) freezer.emplace(**plan, request.options);
  std::optional<Expected<JsonDocument>> base_doc;
  if (request.base_path) base_doc = load_document(*request.base_path);
  LoadedModel model = model_future.valid() ? model_future.get() : load_model(request.model_path);

  Diagnostics errors;
  for (const Expected<JsonDocument>* doc :
       {&plan_doc, &*model.document, base_doc ? &*base_doc : nullptr}) {
    if (doc != nullptr && !*doc)
      errors.insert(errors.end(), doc->errors().begin(), doc->errors().end());
  }
  if (!errors.empty()) return errors;
  if (!*plan) return std::move((*plan).errors());
  if (!*model.tree) return std::move((*model.tree).errors());

  // The plan's own meta is checked even when --base replaces it (docs/decisions.md).
  std::optional<Json> base;
  if ((**plan).meta) {
    Expected<Json> checked = check_base_meta(*(**plan).meta, (**plan).file, "/meta");
    if (!checked) return std::move(checked.errors());
    base = std::move(*checked);
  }
  if (base_doc) {
    Expected<Json> checked =
        check_base_meta(json_from_dom((**base_doc).root()), (**base_doc).name(), "");
    if (!checked) return std::move(checked.errors());
    base = std::move(*checked);
  }

  Expected<FreezeResult> frozen = std::move(*freezer).finish(**model.tree);
  if (!frozen) return std::move(frozen.errors());
  // Memory goes back as soon as a stage is done with it (the input text went after
  // parsing): the peak is what the budget of docs/performance.md limits. The frozen plan
  // holds no view into the model dump, the meta none into the decoded plan.
  model.tree.reset();
  model.document.reset();
  Json meta = assemble_meta(frozen->frozen, base ? &*base : nullptr);
  plan.reset();
  return RenderedMeta{encode_python_json(meta), std::move(frozen->warnings)};
}

CommandResult run_freeze(const FreezeRequest& request) {
  CommandResult result;
  std::optional<Expected<std::string>> depfile;
  if (request.depfile_path) {
    depfile = render_freeze_depfile(request);
    if (!*depfile) {
      result.diagnostics = std::move(depfile->errors());
      return result;
    }
  }
  Expected<RenderedMeta> rendered = render_meta(request);
  if (!rendered) {
    result.diagnostics = std::move(rendered.errors());
    return result;
  }
  result.diagnostics = std::move(rendered->warnings);
  WriteOptions write_options;
  write_options.if_changed = request.if_changed;
  Expected<WriteOutcome> written =
      write_output(request.output_path, rendered->bytes, write_options);
  if (!written) {
    result.diagnostics.insert(result.diagnostics.end(), written.errors().begin(),
                              written.errors().end());
    return result;
  }
  if (depfile) {
    // Rewritten every time: ninja deletes a depfile once it has read it.
    Expected<WriteOutcome> dep_written = write_output(*request.depfile_path, **depfile, {});
    if (!dep_written) {
      result.diagnostics.insert(result.diagnostics.end(), dep_written.errors().begin(),
                                dep_written.errors().end());
    }
  }
  return result;
}

}  // namespace hpfreeze
