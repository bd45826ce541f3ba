#include "hpfreeze/freeze_command.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "hpfreeze/depfile.h"
#include "hpfreeze/encode.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {
namespace {

Expected<JsonDocument> load_document(const std::string& path) {
  Expected<InputFile> input = read_input(path);
  if (!input) return std::move(input.errors());
  return parse_json_document(input->display_name, std::move(input->bytes));
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

bool CommandResult::failed() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

bool CommandResult::io_failed() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
    return d.severity == Severity::kError && d.error_class == ErrorClass::kIo;
  });
}

Expected<RenderedMeta> render_meta(const FreezeRequest& request) {
  // Each input is read and parsed before any is decoded, so every unreadable or
  // malformed file is reported in one run.
  Diagnostics errors;
  Expected<JsonDocument> plan_doc = load_document(request.plan_path);
  if (!plan_doc) errors.insert(errors.end(), plan_doc.errors().begin(), plan_doc.errors().end());
  Expected<JsonDocument> model_doc = load_document(request.model_path);
  if (!model_doc) {
    errors.insert(errors.end(), model_doc.errors().begin(), model_doc.errors().end());
  }
  std::optional<Expected<JsonDocument>> base_doc;
  if (request.base_path) {
    base_doc = load_document(*request.base_path);
    if (!*base_doc) errors.insert(errors.end(), (*base_doc).errors().begin(), (*base_doc).errors().end());
  }
  if (!errors.empty()) return errors;

  Expected<PlanDump> plan = decode_plan_dump(*plan_doc);
  if (!plan) return std::move(plan.errors());
  Expected<ModelTree> model = decode_model_tree(*model_doc);
  if (!model) return std::move(model.errors());

  std::optional<Json> base;
  if (base_doc) {
    Expected<Json> checked =
        check_base_meta(json_from_dom((**base_doc).root()), (**base_doc).name(), "");
    if (!checked) return std::move(checked.errors());
    base = std::move(*checked);
  } else if (plan->meta) {
    Expected<Json> checked = check_base_meta(*plan->meta, plan->file, "/meta");
    if (!checked) return std::move(checked.errors());
    base = std::move(*checked);
  }

  Expected<FreezeResult> frozen = freeze_plan(*plan, *model, request.options);
  if (!frozen) return std::move(frozen.errors());
  const Json meta = assemble_meta(frozen->frozen, base ? &*base : nullptr);
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
  Expected<WriteOutcome> written = write_output(request.output_path, rendered->bytes, write_options);
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
