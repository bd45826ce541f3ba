#include "hpfreeze/freeze_command.h"

#include <algorithm>

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

}  // namespace

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
  }
  return result;
}

}  // namespace hpfreeze
