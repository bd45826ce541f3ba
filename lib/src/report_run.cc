// run_report: reading and decoding the two inputs, then the report, rendered, and its
// findings for stderr. The arithmetic is in report_command.cc, the rendering in
// report_render.cc.
#include <optional>
#include <string>
#include <utility>

#include "hpfreeze/command_result.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/report_command.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kDefaultTextTop = 10;

}  // namespace

ReportOutput run_report(const ReportRequest& request) {
  ReportOutput result;
  auto load = [&result](const std::string& path,
                        ParseOptions options) -> std::optional<JsonDocument> {
    Expected<InputFile> input = read_input(path);
    if (!input) {
      result.diagnostics.insert(result.diagnostics.end(), input.errors().begin(),
                                input.errors().end());
      return std::nullopt;
    }
    Expected<JsonDocument> doc =
        parse_json_document(input->display_name, std::move(input->bytes), options);
    if (!doc) {
      result.diagnostics.insert(result.diagnostics.end(), doc.errors().begin(), doc.errors().end());
      return std::nullopt;
    }
    // The DOM holds its own strings; the text is not needed again.
    doc->release_bytes();
    return std::move(*doc);
  };
  // One input at a time, each decoded and its tree released before the next is read, so
  // that two parses are never held at once. Both are read before either is judged (every
  // unreadable file shows up at once), and the model's errors come before the meta's.
  std::optional<JsonDocument> meta_doc = load(request.meta_path, {});
  std::optional<Expected<FrozenMeta>> meta;
  if (meta_doc) {
    meta = decode_meta(*meta_doc, "report");
    // The decoded meta views only the document's strings.
    if (*meta) meta_doc->release_tree();
  }
  // The model decoder checks the keys of every object it walks (model_decode.cc), as in
  // freeze: its parse skips the separate duplicate-key walk. A repeat is then reported by
  // the decoder, or here with the other unreadable file, as the parse would have.
  ParseOptions model_options;
  model_options.check_duplicate_keys = false;
  std::optional<JsonDocument> model_doc = load(request.model_path, model_options);
  if (!result.diagnostics.empty()) {
    if (model_doc) {
      if (std::optional<Diagnostic> repeated = find_duplicate_key(*model_doc)) {
        result.diagnostics.push_back(std::move(*repeated));
      }
    }
    result.failed = true;
    return result;
  }

  Expected<ModelTree> model = decode_model_tree(*model_doc);
  if (!model) {
    result.diagnostics = std::move(model.errors());
    result.failed = true;
    return result;
  }
  model_doc->release_tree();
  if (!model->has_parameters) {
    result.diagnostics.push_back(make_error(
        model->file, "", "the model tree has no 'parameters'; a report needs their shapes"));
    result.failed = true;
    return result;
  }
  if (!*meta) {
    result.diagnostics = std::move(meta->errors());
    result.failed = true;
    return result;
  }
  // The text shows the top `top` params, --json all of them unless --top is given.
  const std::optional<std::size_t> shown =
      request.json ? request.top : request.top.value_or(kDefaultTextTop);
  Report report = build_report(**meta, *model, request.mesh, request.plan, shown);
  result.output = request.json ? render_report_json(report, request.top)
                               : render_report_text(report, request.top.value_or(kDefaultTextTop));
  result.failed =
      report.has_errors() || (report.capacity && capacity_exit_code(*report.capacity) != 0);
  // The summary after the per-parameter findings (the full list is in --json).
  std::size_t counts[3] = {0, 0, 0};
  for (const Diagnostic& d : report.findings) ++counts[static_cast<int>(d.severity)];
  const bool summarize = !report.findings.empty();
  if (report.findings.size() > kMaxReportedErrors) {
    const std::size_t rest = report.findings.size() - kMaxReportedErrors;
    Diagnostic more = report.findings[kMaxReportedErrors];
    more.file.clear();
    more.pointer.clear();
    more.message = std::to_string(rest) + " more finding" + (rest == 1 ? "" : "s") +
                   " not shown (--json lists them all)";
    report.findings.resize(kMaxReportedErrors);
    report.findings.push_back(std::move(more));
  }
  if (summarize) {
    Diagnostic& summary = report.findings.emplace_back(
        make_warning({}, {},
                     "report: " + plural(counts[0], "error") + ", " + plural(counts[1], "warning") +
                         ", " + plural(counts[2], "note")));
    summary.severity = Severity::kNote;
  }
  result.diagnostics = std::move(report.findings);
  return result;
}

}  // namespace hpfreeze
